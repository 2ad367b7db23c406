"""module_utils/network/counters_eval.py: the HCA port counters stage - two readings of the real mlx5 / ConnectX-7
counter files (tests/unit/fixtures/fabric/README.md: prometheus/procfs, leptonai/gpud PR 943) judged per DGX and HCA:
each judged counter failing, the start read missing (skipped, never a pass), a saturated counter, a failed read."""
from __future__ import annotations

import copy
import os
import re

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import counters_eval as ce
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hca_counters import COUNTERS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, Subject

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")
RATE = "100 Gb/sec (4X EDR)"


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def procfs_counters():
    """prometheus/procfs's mlx5_0 port 1 as dgx_hca_counters returns it: {"<dir>/<name>": text as read}."""
    return {line.split(": ")[0]: line.split(": ", 1)[1] + "\n"
            for line in fx("sysfs_counters__procfs_fixtures_mlx5_0.txt").splitlines()}


def gpud_counters():
    """leptonai/gpud PR 943's ConnectX-7 port (link_downed 255, port_xmit_discards 65535: saturated)."""
    return {"counters/" + k: v for k, v in re.findall(r"=== \./(\S+) ===\n([^\n]*\n)",
                                                       fx("sysfs_counters__gpud_pr943_cx7_saturated.txt"))}


def read(t, ports):
    """One dgx_hca_counters read as pod_read_record keeps it."""
    return {"hca_counters": {"time": t, "elapsed": 0.01, "sysfs_root": "/", "ports": ports, "notes": []},
            "error": None, "unreachable": False}


def port(counters, hca="mlx5_0", netdev="enp5s0", rate=RATE):
    return {"hca": hca, "port": 1, "netdev": netdev, "rate": rate, "state": "4: ACTIVE", "link_layer": "Ethernet",
            "counters": counters, "errors": []}


def bumped(counters, **rises):
    out = dict(counters)
    for name, rise in rises.items():
        key = next(k for k in out if k.endswith("/" + name))
        out[key] = "%d\n" % (int(out[key]) + rise)
    return out


def record(end_counters, start_counters=None, seconds=600.0, host="dgx1"):
    start_counters = procfs_counters() if start_counters is None else start_counters
    return {"hosts": {host: {"start": read(1000.0, {"mlx5_0/1": port(start_counters)}),
                             "end": read(1000.0 + seconds, {"mlx5_0/1": port(end_counters)})}}}


def by_check(results):
    return {r.check: r for r in results}


def test_a_healthy_window_passes_every_judged_counter_with_its_subject():
    results = ce.evaluate(record(procfs_counters()), {})
    checks = by_check(results)
    judged = [n for n, s in COUNTERS.items() if not s.get("report")]
    assert {"hca_" + n for n in judged} <= set(checks)
    assert all(checks["hca_" + n].status == "pass" for n in judged)
    r = checks["hca_symbol_error"]
    assert r.subject == Subject(node="dgx1", hca="mlx5_0", nic="enp5s0") and r.category == NODE_STATE
    assert r.host == "dgx1 mlx5_0 (enp5s0)" and r.expected == 60  # 100 Gb/s x 600 s x 1e-12
    assert r.details["window_s"] == 600.0 and r.details["rate"] == RATE
    # the congestion counters the fixture has not (np_cnp_sent, ...) are left out, rnr_nak_retry_err reported
    assert checks["hca_rnr_nak_retry_err"].details["report_only"] and "hca_np_cnp_sent" not in checks


@pytest.mark.parametrize("name", [n for n, s in COUNTERS.items() if not s.get("report") and n != "symbol_error"])
def test_each_judged_counter_rising_fails_naming_the_hca_and_what_it_means(name):
    base = procfs_counters()
    if not any(k.endswith("/" + name) for k in base):
        pytest.skip("%s is not in the procfs fixture" % name)
    checks = by_check(ce.evaluate(record(bumped(base, **{name: 3})), {}))
    r = checks["hca_" + name]
    assert r.status == "fail" and r.measured == 3 and r.expected == 0
    assert r.cause.startswith("dgx1 mlx5_0 (enp5s0): %s rose by 3 in 10.0 min" % name)
    assert COUNTERS[name]["means"] in r.cause
    assert [c for c, x in checks.items() if x.status == "fail"] == ["hca_" + name]


def test_every_judged_counter_of_the_catalogue_is_in_a_real_mlx5_port():
    # the procfs fixture carries every judged counter but the IB-only ones the stand-in shares: the parametrized
    # test above skips none of them
    names = {k.split("/")[1] for k in procfs_counters()}
    assert {n for n, s in COUNTERS.items() if not s.get("report")} <= names


def test_link_downed_rising_is_a_flapping_link():
    r = by_check(ce.evaluate(record(bumped(procfs_counters(), link_downed=2)), {}))["hca_link_downed"]
    assert r.status == "fail" and "flapping link" in r.cause and r.subject.hca == "mlx5_0"


def test_symbol_errors_are_judged_against_the_ber_at_the_port_rate():
    ok = by_check(ce.evaluate(record(bumped(procfs_counters(), symbol_error=60)), {}))["hca_symbol_error"]
    bad = by_check(ce.evaluate(record(bumped(procfs_counters(), symbol_error=61)), {}))["hca_symbol_error"]
    assert ok.status == "pass" and bad.status == "fail" and bad.expected == 60
    assert "symbol errors" in bad.cause and "BER of 1e-12 allows at 100 Gb/s" in bad.cause
    # a rate the kernel's format does not give: no BER allowance, the first symbol error fails
    rec = record(bumped(procfs_counters(), symbol_error=1))
    for which in ("start", "end"):
        rec["hosts"]["dgx1"][which]["hca_counters"]["ports"]["mlx5_0/1"]["rate"] = "fast"
    assert by_check(ce.evaluate(rec, {}))["hca_symbol_error"].status == "fail"


def test_expectations_override_a_threshold_with_their_source():
    exp = {"hca_counters": {"port_rcv_errors": {"value": 5, "source": "site policy"},
                            "symbol_error": {"value": 1e-10, "source": "a looser BER"}}}
    checks = by_check(ce.evaluate(record(bumped(procfs_counters(), port_rcv_errors=5, symbol_error=6000)), exp))
    assert checks["hca_port_rcv_errors"].status == "pass" and checks["hca_port_rcv_errors"].source == "site policy"
    assert checks["hca_symbol_error"].status == "pass" and checks["hca_symbol_error"].expected == 6000
    assert ce.thresholds({"hca_counters": {"np_cnp_sent": {"value": 0, "source": "x"}}}) == {}  # report-only stays


def test_without_the_start_reading_every_hca_is_skipped_with_the_reason_never_passed():
    rec = record(procfs_counters())
    rec["hosts"]["dgx1"]["start"] = None
    results = ce.evaluate(rec, {})
    assert [(r.check, r.status, r.subject.hca) for r in results] == [("hca_counters", "skipped", "mlx5_0")]
    assert "read only at the end" in results[0].reason


def test_a_saturated_counter_is_an_error_saying_it_stopped_counting():
    gpud = gpud_counters()
    checks = by_check(ce.evaluate(record(gpud, start_counters=gpud), {}))
    for name in ("link_downed", "port_xmit_discards", "excessive_buffer_overrun_errors"):
        assert checks["hca_" + name].status == "error" and "no longer counts" in checks["hca_" + name].reason
    assert checks["hca_symbol_error"].status == "pass"
    # an IB-mode ConnectX-7 port without RoCE hw_counters: those are skipped (not provided), not passed
    assert checks["hca_out_of_sequence"].status == "skipped"


def test_a_reset_counter_is_an_error():
    start = bumped(procfs_counters(), link_error_recovery=7)
    r = by_check(ce.evaluate(record(procfs_counters(), start_counters=start), {}))["hca_link_error_recovery"]
    assert r.status == "error" and "went down from 7 to 0" in r.reason


def test_a_dgx_without_a_reading_or_with_a_failed_read_is_an_error_naming_it():
    rec = record(procfs_counters())
    rec["hosts"]["dgx2"] = None
    rec["hosts"]["dgx3"] = {"start": None, "end": {"hca_counters": None, "error": "sysfs_root /x is not a directory",
                                                   "unreachable": False}}
    rec["hosts"]["dgx4"] = {"start": None, "end": {"hca_counters": None, "error": "unreachable", "unreachable": True}}
    rec["hosts"]["dgx5"] = {"start": {"hca_counters": None, "error": "boom", "unreachable": False},
                            "end": read(5.0, {"mlx5_0/1": port(procfs_counters())})}
    out = {r.host: r for r in ce.evaluate(rec, {}) if r.check == "hca_counters"}
    assert out["dgx2"].status == "error" and out["dgx2"].unreachable
    assert out["dgx3"].status == "error" and "sysfs_root /x is not a directory" in out["dgx3"].reason
    assert out["dgx4"].unreachable
    assert out["dgx5"].status == "error" and "the start read of the HCA counters failed: boom" in out["dgx5"].reason


def test_ports_that_cannot_be_compared_are_errors():
    rec = record(procfs_counters())
    ends = rec["hosts"]["dgx1"]["end"]["hca_counters"]["ports"]
    ends["mlx5_1/1"] = port(procfs_counters(), "mlx5_1", "enp12s0")  # appeared
    starts = rec["hosts"]["dgx1"]["start"]["hca_counters"]["ports"]
    starts["mlx5_2/1"] = port(procfs_counters(), "mlx5_2", "enp132s0")  # vanished
    garbled = dict(procfs_counters(), **{"counters/symbol_error": "12\n34\n"})
    ends["mlx5_0/1"] = port(garbled)
    errors = {r.subject.hca: r.reason for r in ce.evaluate(rec, {}) if r.status == "error"}
    assert "in the end reading only" in errors["mlx5_1"] and "gone at the end" in errors["mlx5_2"]
    assert "could not be read" in errors["mlx5_0"] and "symbol_error" in errors["mlx5_0"]
    back = record(procfs_counters(), seconds=-3)
    assert "clock went back" in ce.evaluate(back, {})[0].reason
    empty = record({}, start_counters={})
    assert ce.evaluate(empty, {})[0].status == "error"
    nothing = record(procfs_counters())
    nothing["hosts"]["dgx1"]["end"]["hca_counters"]["ports"] = {}
    assert "no HCA port" in ce.evaluate(nothing, {})[0].reason


@pytest.mark.parametrize("text,gbps", [("100 Gb/sec (4X EDR)\n", 100.0), ("2.5 Gb/sec (1X SDR)", 2.5),
                                       ("200 Gb/sec (2X NDR)", 200.0), ("56 Gb/sec (4X FDR)", 56.0),
                                       ("40 Gb/sec (4X)", 40.0), ("", None), (None, None), ("100 Gb/s", None)])
def test_port_rate_in_the_kernels_format(text, gbps):
    assert ce.parse_port_rate(text) == gbps


def test_a_second_port_is_named_with_its_number():
    rec = record(procfs_counters())
    for which in ("start", "end"):
        p = rec["hosts"]["dgx1"][which]["hca_counters"]["ports"].pop("mlx5_0/1")
        rec["hosts"]["dgx1"][which]["hca_counters"]["ports"]["mlx5_0/2"] = dict(copy.deepcopy(p), port=2)
    assert {r.subject.hca for r in ce.evaluate(rec, {})} == {"mlx5_0/2"}


def test_the_literal_check_names_are_what_counter_checks_emits():
    assert ce.CHECKS == tuple("hca_" + n for n in COUNTERS)


def test_the_stage_is_registered_with_the_counters_and_network_tags():
    stage = next(s for s in stages.registry() if s.name == "hca_counters")
    assert stage.evaluate is ce.evaluate and "counters" in stage.tag and "network" in stage.tag
    # left out by --tags storage: skipped; selected but nothing recorded: an error
    checks, _ = stages.evaluate_stages({}, {}, {}, run_tags=["storage"], stages=[stage])
    assert checks[0]["status"] == "skipped"
    checks, _ = stages.evaluate_stages({}, {}, {}, run_tags=["network"], skip_tags=["iperf", "fio"], stages=[stage])
    assert checks[0]["status"] == "error"


# --------------------------------------------------------------------------- expectations: profiles and preflight

def profile_blocks():
    import glob

    import yaml
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "profiles", "*.yml"))):
        with open(path) as f:
            out[os.path.basename(path)] = yaml.safe_load(f)["profile"]["expectations"]
    return out


def test_every_profile_sets_the_judged_counters_with_their_sources_and_preflight_accepts_them():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import (
        HCA_COUNTER_KEYS, check_hca_counter_expectations)
    judged = {n for n, s in COUNTERS.items() if not s.get("report")}
    assert set(HCA_COUNTER_KEYS) == judged
    for name, exp in profile_blocks().items():
        block = exp["hca_counters"]
        assert set(block) == judged, name
        assert check_hca_counter_expectations(block) == [], name
        limits = ce.thresholds(exp)
        assert limits["symbol_error"] == {"ber": 1e-12, "source": block["symbol_error"]["source"]}
        assert "ibdiagnet" in limits["symbol_error"]["source"] and limits["link_downed"]["max"] == 0
        # the profile's limits are the evaluator's own defaults: a healthy window passes alike
        assert [r.status for r in ce.evaluate(record(procfs_counters()), exp) if r.status != "pass"] == []


def test_preflight_names_a_wrong_counter_limit_before_anything_runs():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import check_validation
    pod = {"validation": {"expectations": {"hca_counters": {
        "symbol_errors": 0, "np_cnp_sent": 0, "symbol_error": 10, "link_downed": -1, "port_rcv_errors": 0.5,
        "out_of_sequence": {"value": 2, "source": "site", "unit": "x"}, "packet_seq_err": {"source": "no value"},
        "roce_adp_retrans": "0"}}}}
    found = {f.path: f for f in check_validation(pod, None, [])}
    base = "pod.validation.expectations.hca_counters."
    assert set(found) == {base + k for k in ("symbol_errors", "np_cnp_sent", "symbol_error",
                                             "link_downed", "port_rcv_errors", "out_of_sequence.unit",
                                             "packet_seq_err", "roce_adp_retrans")}
    assert found[base + "symbol_errors"].fix == "did you mean 'symbol_error'?"
    assert "only reported" in found[base + "np_cnp_sent"].message
    assert "not a bit error rate" in found[base + "symbol_error"].message
    assert "whole number" in found[base + "link_downed"].message and "whole number" in found[
        base + "port_rcv_errors"].message
    assert "not a number" in found[base + "roce_adp_retrans"].message
    ok = {"validation": {"expectations": {"hca_counters": {"symbol_error": {"value": 1e-10, "source": "site"},
                                                           "link_downed": 2}}}}
    assert check_validation(ok, None, []) == []
    close = check_validation({"validation": {"expectations": {"hca_counter": {"link_downed": 0}}}}, None, [])
    assert close and close[0].fix == "did you mean 'hca_counters'?"
