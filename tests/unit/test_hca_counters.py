"""module_utils/network/hca_counters.py: sysfs and perfquery readings (real outputs, tests/unit/fixtures/fabric/
README.md), deltas over a window, and the per-counter checks."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refusal import assert_refused
from test_parser_contract import FAST, outcome

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hca_counters import (COUNTERS, counter_checks,
    counter_deltas, parse_perfquery, parse_sysfs_counters, saturated)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, contradiction

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def procfs_files():
    """The procfs fixture as the {name: text} mapping a reader of the sysfs files builds."""
    return {line.split(": ")[0]: line.split(": ", 1)[1] + "\n"
            for line in fx("sysfs_counters__procfs_fixtures_mlx5_0.txt").splitlines()}


def gpud_files():
    return dict(re.findall(r"=== \./(\S+) ===\n([^\n]*\n)", fx("sysfs_counters__gpud_pr943_cx7_saturated.txt")))


def test_fixtures_are_in_the_readme():
    readme = fx("README.md")
    for f in os.listdir(FIX):
        if f.startswith(("sysfs_counters", "perfquery")):
            assert f in readme, f


def test_sysfs_counters_and_hw_counters():
    v = parse_sysfs_counters(procfs_files())
    assert v["port_rcv_data"] == 18126345378 and v["symbol_error"] == 0
    assert v["local_ack_timeout_err"] == 131 and v["out_of_sequence"] == 1 and v["roce_slow_restart_cnps"] == 131
    assert len(v) == 46


def test_no_pma_is_none():
    lines = fx("sysfs_counters__node_exporter_issue966_i40iw_no_pma.txt").splitlines()
    files = {ln.rsplit(":", 1)[0].split("/counters/")[1]: ln.rsplit(":", 1)[1] for ln in lines}
    v = parse_sysfs_counters(files)
    assert v["link_downed"] is None and set(v.values()) == {None}


def test_sysfs_refuses_what_is_not_one_integer():
    assert_refused(parse_sysfs_counters, {"symbol_error": "12abc\n"}, "sysfs counters", "one integer")
    assert_refused(parse_sysfs_counters, {"symbol_error": ""}, "sysfs counters", "one integer")
    assert_refused(parse_sysfs_counters, {"symbol_error": "1\n2\n"}, "sysfs counters", "one integer")
    assert_refused(parse_sysfs_counters, {"counters/x": "1\n", "hw_counters/x": "2\n"}, "sysfs counters", "twice")
    assert parse_sysfs_counters({"hw_counters/out_of_sequence": "7\n", "link_downed": None}) == {
        "out_of_sequence": 7, "link_downed": None}


def test_perfquery_extended():
    (b,) = parse_perfquery(fx("perfquery_x__infiniband_diags_issue16.txt"))
    assert (b["lid"], b["port"], b["extended"], b["capmask"]) == (10, 1, True, "0x5300")
    assert b["counters"]["symbol_error"] == 0 and b["counters"]["qp1_dropped"] == 0
    assert b["counters"]["unicast_xmit_packets"] == 0 and b["other"]["CounterSelect2"] == "0x00000000"
    assert len(b["counters"]) == 22


def test_perfquery_without_header():
    (b,) = parse_perfquery(fx("perfquery__ibsim_pr1_no_header_head.txt"))
    assert b["lid"] is None and b["counters"]["link_downed"] == 0 and b["other"]["PortSelect"] == "1"


def test_perfquery_refusals():
    text = fx("perfquery_x__infiniband_diags_issue16.txt")
    assert_refused(parse_perfquery, text.replace("LinkDownedCounter:...............0",
                                                 "LinkDownedCounter:...............x"), "perfquery", "not a number")
    assert_refused(parse_perfquery, text + "SymbolErrorCounter:..............3\n", "perfquery", "twice")
    assert_refused(parse_perfquery, text.splitlines()[0] + "\n", "perfquery", "without counters")
    assert_refused(parse_perfquery, "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 10)\n", "perfquery",
                   "expected")
    assert_refused(parse_perfquery, text.rstrip("\n"), "perfquery", "no newline")
    assert_refused(parse_perfquery, "", "perfquery", "no counters")


@FAST
@given(st.one_of(st.binary(max_size=300).map(lambda b: b.decode("latin-1")), st.text(max_size=300)))
def test_noise_is_a_value_or_value_error(data):
    outcome(parse_perfquery, data)
    outcome(lambda t: parse_sysfs_counters({"symbol_error": t}), data)


def test_the_same_counter_from_sysfs_and_perfquery_has_the_same_name():
    (b,) = parse_perfquery(fx("perfquery_x__infiniband_diags_issue16.txt"))
    sysfs = parse_sysfs_counters(procfs_files())
    shared = set(b["counters"]) & set(sysfs)
    assert {"symbol_error", "link_downed", "port_xmit_discards", "port_rcv_errors", "VL15_dropped"} <= shared


def test_saturated_counters_of_a_real_cx7():
    v = parse_sysfs_counters(gpud_files())
    assert saturated("link_downed", v["link_downed"]) and saturated("port_xmit_discards", v["port_xmit_discards"])
    assert saturated("excessive_buffer_overrun_errors", v["excessive_buffer_overrun_errors"])
    assert not saturated("symbol_error", v["symbol_error"]) and not saturated("port_xmit_data", v["port_xmit_data"])
    d = counter_deltas(v, v, 600)
    assert d["link_downed"]["state"] == "saturated" and d["symbol_error"] == {
        "before": 0, "after": 0, "delta": 0, "per_hour": 0.0, "state": "ok"}
    checks = {c.check: c for c in counter_checks("dgx1", "mlx5_0", "ibp12s0", d, seconds=600, rate_gbps=400)}
    assert checks["hca_link_downed"].status == "error" and "255" in checks["hca_link_downed"].reason
    assert "8-bit" in checks["hca_link_downed"].reason
    assert checks["hca_symbol_error"].status == "pass"


def test_deltas_states():
    d = counter_deltas({"symbol_error": 10, "link_downed": 3, "x": None, "gone": 1},
                       {"symbol_error": 25, "link_downed": 1, "x": 4}, 1800)
    assert d["symbol_error"] == {"before": 10, "after": 25, "delta": 15, "per_hour": 30.0, "state": "ok"}
    assert d["link_downed"]["state"] == "reset" and d["x"]["state"] == "missing" and d["gone"]["state"] == "missing"
    with pytest.raises(ValueError):
        counter_deltas({}, {}, 0)


def _by_check(results):
    return {c.check: c for c in results}


def test_healthy_roce_hca_passes_and_every_result_is_well_formed():
    before = parse_sysfs_counters(procfs_files())
    after = dict(before, port_rcv_data=before["port_rcv_data"] + 10 ** 9, np_cnp_sent=5)
    before = dict(before, np_cnp_sent=0)
    res = counter_checks("dgx1", "mlx5_0", "enp12s0", counter_deltas(before, after, 600), seconds=600,
                         rate_gbps=100)
    by = _by_check(res)
    assert all(c.subject.node == "dgx1" and c.subject.hca == "mlx5_0" and c.subject.nic == "enp12s0" for c in res)
    assert all(c.category == NODE_STATE for c in res) and not [c for c in res if contradiction(c)]
    assert {c.status for c in res} == {"pass"}
    assert by["hca_np_cnp_sent"].measured == 5 and by["hca_np_cnp_sent"].details["report_only"]
    # rp_cnp_handled, np_ecn_marked_roce_packets are not in this reading: a report-only counter that is absent is
    # left out (rnr_nak_retry_err and np_cnp_sent are there)
    assert "hca_np_ecn_marked_roce_packets" not in by and "hca_rp_cnp_handled" not in by
    assert len(res) == len([k for k, s in COUNTERS.items() if not s.get("report")]) + 2


def test_link_downed_rising_is_a_flapping_link():
    base = parse_sysfs_counters(procfs_files())
    res = _by_check(counter_checks("dgx2", "mlx5_3", "ibp75s0",
                                   counter_deltas(base, dict(base, link_downed=2), 900), seconds=900))
    c = res["hca_link_downed"]
    assert c.status == "fail" and c.measured == 2 and c.expected == 0
    assert "dgx2 mlx5_3 (ibp75s0)" in c.cause and "flapping" in c.cause and "15.0 min" in c.cause
    assert not contradiction(c)


def test_symbol_errors_against_the_ber_at_the_port_rate():
    base = {"symbol_error": 0}
    # 200 Gb/s x 600 s x 1e-12 = 120 symbol errors allowed
    ok = _by_check(counter_checks("n", "mlx5_0", None, counter_deltas(base, {"symbol_error": 120}, 600),
                                  seconds=600, rate_gbps=200))["hca_symbol_error"]
    bad = _by_check(counter_checks("n", "mlx5_0", None, counter_deltas(base, {"symbol_error": 121}, 600),
                                   seconds=600, rate_gbps=200))["hca_symbol_error"]
    assert ok.status == "pass" and ok.expected == 120
    assert bad.status == "fail" and "BER" in bad.cause and "above the 120" in bad.cause
    # without the port rate: any rise fails (the BER cannot be turned into a count)
    none = _by_check(counter_checks("n", "mlx5_0", None, counter_deltas(base, {"symbol_error": 1}, 600)))
    assert none["hca_symbol_error"].status == "fail" and none["hca_symbol_error"].expected == 0


def test_thresholds_override_and_missing_counters_skip():
    d = counter_deltas({"out_of_sequence": 0}, {"out_of_sequence": 3}, 60)
    res = _by_check(counter_checks("n", "mlx5_1", None, d,
                                   thresholds={"out_of_sequence": {"max": 5, "source": "pod override"}}))
    assert res["hca_out_of_sequence"].status == "pass" and res["hca_out_of_sequence"].source == "pod override"
    assert res["hca_symbol_error"].status == "skipped" and "not read" in res["hca_symbol_error"].reason
    strict = _by_check(counter_checks("n", "mlx5_1", None, d))["hca_out_of_sequence"]
    assert strict.status == "fail" and "lost" in strict.cause


def test_every_counter_says_what_it_means_and_where_its_threshold_comes_from():
    for name, spec in COUNTERS.items():
        assert spec["means"] and spec["source"], name
        assert spec.get("report") or "max" in spec or "ber" in spec, name
