"""The second look before a lone iperf3 pair is called slow (module_utils/perf/iperf_confirm.py)."""
from __future__ import annotations

import copy
import os

import yaml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import apply_simulated_policy
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_confirm import confirm_plan, merge, to_confirm
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_launch import check_plan
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import iperf_plan
from perf_sample import profile, sample_perf, sim_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_eval import evaluate_iperf, iperf_checks

EXP = profile()["expectations"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "inventories", "sim", "group_vars", "all", "pod.yml")) as _fh:
    SIM_EXP = deep_merge(EXP, yaml.safe_load(_fh)["pod"]["validation"]["expectations"])

DIP = ("sim-dgx1", "sim-isilon2", "data-5")  # the pair CI saw dip once on a healthy path


def _plan():
    pod, hosts, groups = sim_model()
    return iperf_plan(hosts, groups["dgx"], groups["storage"], pod["fabrics"])


def _scale(tests, pred, factor):
    out = copy.deepcopy(tests)
    for t in out:
        if pred(t):
            t["result"] = dict(t["result"], received_bps=t["result"]["received_bps"] * factor)
    return out


def _is_dip(t):
    return (t["client"], t["server"], t["fabric"]) == DIP


def _through_slow_nic(t):  # sim-dgx2's data-12 NIC shaped (the half-rate NIC test)
    return "sim-dgx2" in (t["client"], t["server"]) and t["fabric"] == "data-12"


def _failed(tests, exp=SIM_EXP, sim=True):
    checks = [c.to_dict() for c in apply_simulated_policy(iperf_checks(tests, exp), sim)]
    return sorted((c["host"], c["fabric"]) for c in checks if c["status"] == "fail")


def _slow_and_dip(dip=0.4):
    tests = sample_perf(slow=None, gbps=2.4, storage_gbps=2.0)["iperf"]["tests"]
    tests = _scale(tests, _through_slow_nic, 0.15)
    return _scale(tests, _is_dip, dip)


def _rerun(first_records, rounds, factor_for):
    """What the confirm pass returns: the re-run rounds' tests, each measured at its healthy rate x factor_for(t)."""
    healthy = {t["id"]: t for t in sample_perf(slow=None, gbps=2.4, storage_gbps=2.0)["iperf"]["tests"]}
    out = []
    for r in rounds:
        for t in r["tests"]:
            h = healthy[t["id"]]
            out.append(dict(t, status="ok", reason=None,
                            result=dict(h["result"], received_bps=h["result"]["received_bps"] * factor_for(t))))
    return out


def test_only_the_lone_pair_is_confirmed_and_its_round_runs_again_whole():
    tests = _slow_and_dip()
    assert ("sim-dgx1<->sim-isilon2", "data-5") in _failed(tests)  # the false alarm, before the second look
    ids = to_confirm(tests, SIM_EXP, simulated=True)
    dip = [t["id"] for t in tests if _is_dip(t)]
    assert ids == dip  # the slow NIC's pairs are explained by the NIC: not run again
    plan = _plan()
    again = confirm_plan(plan, ids)
    first_round = next(r for r in plan if any(t["id"] in dip for t in r["tests"]))
    assert [r["round"] for r in again["rounds"]] == [1] and again["left"] == [] and again["tests"] == dip
    assert [t["id"] for t in again["rounds"][0]["tests"]] == [t["id"] for t in first_round["tests"]]
    assert {t["first_round"] for t in again["rounds"][0]["tests"]} == {first_round["round"]}
    assert check_plan(again["rounds"]) == []  # launchable as it is


def test_a_dip_that_does_not_repeat_passes_and_says_it_ran_again():
    tests = _slow_and_dip()
    ids = to_confirm(tests, SIM_EXP, simulated=True)
    again = confirm_plan(_plan(), ids)
    merged = merge(tests, _rerun(tests, again["rounds"], lambda t: 0.15 if _through_slow_nic(t) else 1.0), ids)
    failed = _failed(merged)
    assert ("sim-dgx1<->sim-isilon2", "data-5") not in failed
    assert failed == sorted(("%s<->%s" % (t["client"], t["server"]), "data-12")
                            for t in tests if _through_slow_nic(t) and t["kind"] == "dgx-dgx")
    rel = [c for c in evaluate_iperf(merged, SIM_EXP) if c["check"] == "iperf_relative" and c["test"] in ids]
    assert len(rel) == 1 and rel[0]["status"] == "pass" and rel[0]["confirm"] == "suspect"
    assert [a["run"] for a in rel[0]["attempts"]] == [1, 2] and "re-run to confirm" in rel[0]["note"]
    assert len(merged) == len(tests) and [t["id"] for t in merged] == [t["id"] for t in tests]


def test_a_slow_path_stays_slow_and_says_low_in_both_runs():
    tests = _slow_and_dip(dip=0.3)
    ids = to_confirm(tests, SIM_EXP, simulated=True)
    again = confirm_plan(_plan(), ids)
    merged = merge(tests, _rerun(tests, again["rounds"],
                                 lambda t: 0.15 if _through_slow_nic(t) else 0.35 if _is_dip(t) else 1.0), ids)
    rel = [c for c in evaluate_iperf(merged, SIM_EXP) if c["check"] == "iperf_relative" and c["test"] in ids]
    assert rel[0]["status"] == "fail" and "low in 2 of 2 runs" in rel[0]["cause"]
    assert "only this pair is slow" in rel[0]["cause"]
    assert rel[0]["measured"] == max(a["gbps"] for a in rel[0]["attempts"])  # the better run is the one judged


def test_a_healthy_run_confirms_nothing_and_a_slow_nic_alone_costs_no_extra_round():
    healthy = sample_perf(slow=None, gbps=2.4, storage_gbps=2.0)["iperf"]["tests"]
    assert to_confirm(healthy, SIM_EXP, simulated=True) == []
    assert confirm_plan(_plan(), [])["rounds"] == []
    assert to_confirm(_scale(healthy, _through_slow_nic, 0.15), SIM_EXP, simulated=True) == []


def test_a_real_pod_confirms_a_pair_under_the_port_rate_the_simulator_does_not():
    tests = sample_perf(slow=None, gbps=95.0, storage_gbps=95.0)["iperf"]["tests"]
    for t in tests:
        t["link_gbps"] = 100
    low = _scale(tests, _is_dip, 0.85)  # 80.75 Gb/s: under 90 % of the port, 85 % of its peers
    assert to_confirm(low, EXP, simulated=False) == [t["id"] for t in tests if _is_dip(t)]
    assert to_confirm(low, SIM_EXP, simulated=True) == []  # the port rate is not judged on the simulator
    everything_low = _scale(tests, lambda t: True, 0.5)  # every link at half its port: pod-wide, no dip
    assert to_confirm(everything_low, EXP, simulated=False) == []


def test_the_round_limit_keeps_the_rounds_with_most_lone_pairs_and_names_the_rest():
    plan = _plan()
    one_each = [r["tests"][0]["id"] for r in plan[:3]]
    two = [t["id"] for t in plan[4]["tests"][:2]]
    got = confirm_plan(plan, one_each + two, max_rounds=2)
    assert [t["first_round"] for t in (r["tests"][0] for r in got["rounds"])] == [plan[0]["round"], plan[4]["round"]]
    assert [r["round"] for r in got["rounds"]] == [1, 2]
    assert set(got["left"]) == set(one_each[1:]) and set(got["tests"]) == {one_each[0]} | set(two)
    none = confirm_plan(plan, one_each, max_rounds=0)
    assert none["rounds"] == [] and none["left"] == one_each


def test_a_run_without_a_result_never_wins_and_errors_are_not_confirmed():
    tests = _slow_and_dip()
    ids = to_confirm(tests, SIM_EXP, simulated=True)
    broken = [dict(t, status="error", result={}, reason="client host sim-dgx1 unreachable")
              for t in _rerun(tests, confirm_plan(_plan(), ids)["rounds"], lambda t: 1.0)]
    merged = merge(tests, broken, ids)
    kept = next(t for t in merged if t["id"] == ids[0])
    assert kept["status"] == "ok" and [a["status"] for a in kept["attempts"]] == ["ok", "error"]
    errs = [dict(t, status="error", result={}, reason="server: did not start") if _is_dip(t) else t
            for t in tests]
    assert to_confirm(errs, SIM_EXP, simulated=True) == []
    assert merge(tests, None) == tests and merge(tests, []) == tests


def test_the_report_shows_that_a_pair_ran_again():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details
    tests = _slow_and_dip()
    ids = to_confirm(tests, SIM_EXP, simulated=True)
    merged = merge(tests, _rerun(tests, confirm_plan(_plan(), ids)["rounds"], lambda t: 1.0), ids)
    rel = next(c for c in evaluate_iperf(merged, SIM_EXP) if c["check"] == "iperf_relative" and c["test"] in ids)
    assert "low in its first run, normal when its round ran again (re-run to confirm: " in details(rel)
