"""The one check result (module_utils/result/check.py) and the stage registry (module_utils/report/stages.py)."""
from __future__ import annotations

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (SIMULATED_REASON, CheckResult,
    apply_simulated_policy, at_least, compare, contradiction, counts)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_html, render_markdown
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import Stage, evaluate_stages


def test_check_result_dict_has_fixed_fields_first_and_drops_empty_ones():
    r = CheckResult("nccl_busbw", "sim-dgx1", "fail", expected=100.0, measured=40.5, unit="GB/s", source="RA",
                    cause="slow", details={"size": 1 << 30, "status": "pass"})
    d = r.to_dict()
    assert list(d)[:3] == ["check", "host", "status"]
    assert d["status"] == "fail"  # a detail never replaces a fixed field
    assert d["size"] == 1 << 30 and "reason" not in d and "absolute" not in d


@pytest.mark.parametrize("status", ["ok", "passed", "", "FAIL"])
def test_check_result_refuses_unknown_status(status):
    with pytest.raises(ValueError, match="status"):
        CheckResult("x", "h", status)


def test_check_result_needs_a_name_and_a_host():
    with pytest.raises(ValueError, match="check name and a host"):
        CheckResult("x", "", "pass")


def test_at_least_decides_pass_fail_error_skipped():
    assert at_least("c", "h", 10.0, 9.0, "GB/s", "s", "low").status == "pass"
    low = at_least("c", "h", 8.0, 9.0, "GB/s", "s", "low")
    assert (low.status, low.cause) == ("fail", "low")
    assert at_least("c", "h", 9.0, 9.0, "GB/s", "s", "low").status == "pass"
    err = at_least("c", "h", None, 9.0, "GB/s", "s", "no run")
    assert (err.status, err.reason) == ("error", "no run")
    assert at_least("c", "h", 1.0, None, "GB/s", "s", "low").status == "skipped"


def test_simulated_policy_skips_absolute_checks_only_on_simulated_pods():
    checks = [CheckResult("a", "h", "fail", measured=1, expected=2, absolute=True),
              CheckResult("b", "h", "fail", measured=1, expected=2),
              CheckResult("c", "h", "error", reason="crash", absolute=True)]
    real = apply_simulated_policy(checks, simulated=False)
    assert [c.status for c in real] == ["fail", "fail", "error"]
    sim = apply_simulated_policy(checks, simulated=True)
    assert [c.status for c in sim] == ["skipped", "fail", "error"]
    assert sim[0].reason == SIMULATED_REASON and sim[0].measured == 1 and sim[0].expected is None
    assert sim[0].cause is None and sim[0].to_dict()["absolute"] is True
    assert counts(sim) == {"pass": 0, "fail": 1, "skipped": 1, "error": 1}
    no_exp = apply_simulated_policy([CheckResult("d", "h", "skipped", reason="no port speed", absolute=True)], True)
    assert no_exp[0].reason == SIMULATED_REASON + " - no port speed"


def test_simulated_policy_on_a_result_read_back_from_results_json():
    d = CheckResult("iperf", "a<->b", "fail", expected=90.0, measured=17.0, unit="Gb/s", cause="slow",
                    absolute=True, details={"fabric": "data-5"}).to_dict()
    assert CheckResult.from_dict(d).to_dict() == d
    assert [r.to_dict() for r in apply_simulated_policy([CheckResult.from_dict(d)], False)] == [d]
    (sim,) = [r.to_dict() for r in apply_simulated_policy([CheckResult.from_dict(d)], True)]
    assert (sim["status"], sim.get("expected"), sim["reason"], sim["fabric"]) == ("skipped", None, SIMULATED_REASON,
                                                                                 "data-5")
    assert "cause" not in sim and d["status"] == "fail"  # the input is not changed
    rel = dict(d, absolute=False)
    assert [r.to_dict() for r in apply_simulated_policy([CheckResult.from_dict(rel)], True)] == [
        {k: v for k, v in rel.items() if k != "absolute"}]


def _stage(evaluate, markdown=None, html=None):
    return Stage("demo", "demo", "demo stage", evaluate, markdown, html)


def test_a_stage_with_measurements_is_evaluated_and_kept():
    def ev(m, exp, ctx):
        return [at_least("demo_bw", h, v, exp["demo"]["min"], "GB/s", "test", "slow", absolute=True)
                for h, v in sorted(m["bw"].items())]
    checks, meas = evaluate_stages({"demo": {"bw": {"n1": 5.0, "n2": 1.0}}}, {"demo": {"min": 2.0}},
                                   {"simulated": False}, stages=[_stage(ev)])
    assert [(c["host"], c["status"]) for c in checks] == [("n1", "pass"), ("n2", "fail")]
    assert meas == {"demo": {"bw": {"n1": 5.0, "n2": 1.0}}}
    sim, _ = evaluate_stages({"demo": {"bw": {"n1": 5.0}}}, {"demo": {"min": 2.0}}, {"simulated": True},
                             stages=[_stage(ev)])
    assert sim[0]["status"] == "skipped"


def test_a_stage_without_measurements_is_error_when_selected_and_skipped_when_not():
    stage = _stage(lambda m, e, c: [])
    err, _ = evaluate_stages({}, {}, {}, run_tags=["all"], stages=[stage])
    assert err[0]["status"] == "error" and "recorded no measurements" in err[0]["reason"]
    sel, _ = evaluate_stages({}, {}, {}, run_tags=["demo"], stages=[stage])
    assert sel[0]["status"] == "error"
    left, _ = evaluate_stages({}, {}, {}, run_tags=["network"], stages=[stage])
    assert left[0]["status"] == "skipped"
    skipped, _ = evaluate_stages({}, {}, {}, run_tags=["all"], skip_tags=["demo"], stages=[stage])
    assert skipped[0]["status"] == "skipped"


def test_an_evaluator_that_raises_is_an_error_never_a_pass():
    def boom(m, e, c):
        raise KeyError("busbw")
    checks, _ = evaluate_stages({"demo": {}}, {}, {}, stages=[_stage(boom)])
    assert checks[0]["status"] == "error" and "KeyError" in checks[0]["reason"]


def test_build_results_and_reports_carry_registered_stages(monkeypatch):
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import stages as stages_mod

    def ev(m, e, c):
        return [CheckResult("demo_ok", "pod", "pass" if m["ok"] else "fail", cause=None if m["ok"] else "broken")]
    stage = _stage(ev, markdown=lambda doc: ["", "## Demo section", ""],
                   html=lambda doc: ["<h2>Demo section</h2>"])
    monkeypatch.setattr(stages_mod, "registry", lambda: [stage])
    base = {"pod": "p", "ra_profile": "r", "simulated": False, "finished": "t"}
    doc = build_results(base, {}, {}, {"demo": {"ok": False}})
    assert doc["summary"]["fail"] == 1 and doc["measurements"]["demo"] == {"ok": False}
    assert "## Demo section" in render_markdown(doc) and "<h2>Demo section</h2>" in render_html(doc)
    none = build_results(base, {}, {}, {}, run_tags=["network"])
    assert none["summary"]["skipped"] == 1 and "Demo section" not in render_markdown(none)


def test_a_stage_selected_by_any_of_its_tags_and_left_out_by_any():
    stage = Stage("demo", ("network", "iperf"), "demo stage", lambda m, e, c: [])
    status = {}
    for run, skip in ((["network"], []), (["iperf"], []), (["gpu"], []), (["all"], ["iperf"]), (["all"], [])):
        (c,), _ = evaluate_stages({}, {}, {}, run_tags=run, skip_tags=skip, stages=[stage])
        status[(tuple(run), tuple(skip))] = c["status"]
    assert status == {(("network",), ()): "error", (("iperf",), ()): "error", (("gpu",), ()): "skipped",
                      (("all",), ("iperf",)): "skipped", (("all",), ()): "error"}


def test_compare_names_the_three_ways_and_refuses_others():
    assert compare(">=") == {"compare": ">= "} and compare("<=") == {"compare": "<= "} and compare("=") == {
        "compare": "= "}
    with pytest.raises(ValueError, match="not one of"):
        compare("<")


@pytest.mark.contradiction_ok
def test_contradiction_finds_a_pass_against_its_stated_comparison_and_an_unexplained_fail():
    ok = CheckResult("nccl_correctness", "all", "pass", expected=0, measured=0, details=compare("="))
    assert contradiction(ok) is None and contradiction(ok.to_dict()) is None
    # the old nccl_correctness line: a pass that prints 'measured 3 (expected >= 0)' would be fine, but
    # 'expected = 0' with 3 measured is not a pass
    assert "passes with measured 3, but says expected = 0" in contradiction(
        CheckResult("nccl_correctness", "all", "pass", expected=0, measured=3, details=compare("=")))
    # a loss that must fall: the default '>=' would contradict a pass below the limit
    assert contradiction(CheckResult("train_converges", "pod", "pass", expected=2.76, measured=1.9)) is not None
    assert contradiction(CheckResult("train_converges", "pod", "pass", expected=2.76, measured=1.9,
                                     details=compare("<="))) is None
    # a fail that meets its expectation needs a cause (iperf's 'slow in all its pairs' has one)
    assert "gives no cause" in contradiction(CheckResult("iperf_relative", "a<->b", "fail", expected=0.1,
                                                         measured=0.2))
    assert contradiction(CheckResult("iperf_relative", "a<->b", "fail", expected=0.1, measured=0.2,
                                     cause="b is slow in all its pairs")) is None
    # not numbers: nothing to say
    assert contradiction(CheckResult("gpu_ecc", "n", "pass", expected=0, measured="all 8 GPUs")) is None
    assert "compare" in contradiction({"check": "x", "host": "h", "status": "pass", "compare": "<", "expected": 1,
                                       "measured": 2})


def test_rows_of_one_host_say_what_each_is_about():
    """Several rows of one check for one host (4 HCAs, 2 NICs to the same peer, fio steps, training passes) name
    their adapter, link, step or pass before the measurement; before, they read the same. The report reads the
    row's subject for it, never the check's name."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details, row_subject
    link = {"check": "iperf", "host": "a<->b", "status": "pass", "measured": 95.0, "expected": 90.0, "unit": "Gb/s",
            "client": "a", "client_nic": "enp5s0", "server": "b", "server_nic": "enp12s0", "fabric": "data-5",
            "subject": {"node": "a", "nic": "enp5s0", "peer": "b", "peer_nic": "enp12s0", "fabric": "data-5"}}
    assert details(link) == "a enp5s0 -> b enp12s0 on data-5: measured 95.0 Gb/s (expected >= 90.0)"
    assert row_subject(dict(link, reverse=True)) == "a enp5s0 <- b enp12s0 on data-5"
    assert row_subject({"check": "hca_pcie_link", "subject": {"node": "n", "hca": "mlx5_1", "nic": "ib0"}}) == "mlx5_1"
    assert row_subject({"check": "gpu_ecc", "subject": {"node": "n", "gpu": 3}}) == "GPU 3"
    assert row_subject({"check": "gpu_ecc", "subject": {"node": "n", "gpu": 0}}) == "GPU 0"
    assert row_subject({"check": "train_throughput", "gpu": "V100", "pass": "warm",
                        "subject": {"node": "n", "phase": "warm"}}) == "warm pass"
    assert row_subject({"check": "fio_relative", "step": 3, "subject": {"node": "n", "step": 3, "storage": True}}) \
        == "step of 3 node(s)"
    # a step of many nodes is its host already ('3 node(s)'); an NCCL step is a word, its host says the nodes
    assert row_subject({"check": "fio_scaling", "step": 3, "subject": {"nodes": ["a", "b", "c"], "step": 3}}) is None
    assert row_subject({"check": "nccl_busbw", "subject": {"node": "a", "peer": "b", "step": "pair"}}) is None
    assert row_subject({"check": "switch_port_mtu", "subject": {"switch": "sw", "port": "Ethernet1/1", "node": "a",
                                                                "nic": "enp5s0"}}) is None
    assert row_subject({"check": "nfs_mounts", "host": "a", "subject": {"node": "a"}}) is None
    # no subject (a results.json before v5): nothing to name, whatever the check is called
    assert row_subject({"check": "gpu_ecc", "gpu": 3}) is None
