"""The iperf3 and fio stages (perf/iperf_eval.py, storage/fio_eval.py) and the results document (report/results.py):
expectations relative to the model, slow-NIC attribution, simulated rules, RA sizing, subject and category."""
from __future__ import annotations

import copy
import os

import pytest
import yaml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (LINK_PERF, NODE_PERF, POD_PERF,
    SIMULATED_REASON, CheckResult, apply_simulated_policy)

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf import iperf_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_eval import evaluate_iperf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import fio_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_eval import evaluate_fio, node_capacity, sizing

EXP = profile()["expectations"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "inventories", "sim", "group_vars", "all", "pod.yml")) as _fh:
    SIM_OVERRIDES = yaml.safe_load(_fh)["pod"]["validation"]["expectations"]
SIM_EXP = deep_merge(EXP, SIM_OVERRIDES)  # what the pod-in-a-box evaluates against


def simulated(checks):
    return [r.to_dict() for r in apply_simulated_policy([CheckResult.from_dict(c) for c in checks], True)]


def by(checks, name):
    return [c for c in checks if c["check"] == name]


def test_real_pod_one_slow_nic_fails_exactly_its_pairs_and_is_named():
    perf = sample_perf(gbps=95.0, storage_gbps=38.0)
    checks = evaluate_iperf(perf["iperf"]["tests"], EXP)
    failed = [c for c in checks if c["status"] == "fail"]
    assert {c["check"] for c in failed} == {"iperf", "iperf_relative"}
    pairs = {frozenset(c["hosts"]) for c in failed}
    assert all("sim-dgx3" in p for p in pairs) and len(pairs) == 3
    assert all(c["fabric"] == "data-12" for c in failed)
    for c in failed:
        assert "sim-dgx3 enp12s0" in c["cause"] and "cable" in c["cause"]
    ok = by(checks, "iperf")[0]
    assert ok["status"] == "pass" and ok["expected"] == pytest.approx(90.0) and ok["unit"] == "Gb/s"
    assert "0.9 x port rate" in ok["source"]
    storage = [c for c in by(checks, "iperf") if c["kind"] == "dgx-storage"]
    assert storage and all(c["expected"] == pytest.approx(36.0) and c["status"] == "pass" for c in storage)


def test_simulated_pod_skips_absolute_checks_but_catches_the_slow_nic():
    perf = sample_perf(gbps=17.0, storage_gbps=12.0)
    checks = simulated(evaluate_iperf(perf["iperf"]["tests"], SIM_EXP))
    assert all(c["status"] == "skipped" and c["reason"] == SIMULATED_REASON and c.get("expected") is None
               for c in by(checks, "iperf"))
    failed = [c for c in checks if c["status"] == "fail"]
    assert len(failed) == 3 and all(c["check"] == "iperf_relative" and "sim-dgx3" in c["hosts"] for c in failed)


def test_all_links_equal_all_pass_and_errors_are_errors():
    perf = sample_perf(slow=None, gbps=95.0, storage_gbps=38.0)
    tests = perf["iperf"]["tests"]
    tests[0] = dict(tests[0], status="error", reason="unable to connect to server: Connection refused", result={})
    checks = evaluate_iperf(tests, EXP)
    errors = [c for c in checks if c["status"] == "error"]
    assert len(errors) == 2 and "Connection refused" in errors[0]["reason"]
    assert tests[0]["client_nic"] in errors[0]["reason"]
    assert all(c["status"] == "pass" for c in checks if c["status"] != "error")


def test_a_pair_alone_is_blamed_on_the_path_not_a_nic():
    perf = sample_perf(slow=None, gbps=95.0, storage_gbps=38.0)
    tests = perf["iperf"]["tests"]
    i = next(i for i, t in enumerate(tests) if t["fabric"] == "data-5" and t["kind"] == "dgx-dgx")
    tests[i] = dict(tests[i], result=dict(tests[i]["result"], received_bps=30e9))
    failed = [c for c in evaluate_iperf(tests, EXP) if c["status"] == "fail"]
    assert {c["test"] for c in failed} == {tests[i]["id"]}
    assert "only this pair is slow" in failed[0]["cause"]


def test_threshold_below_fails_at_or_above_passes():
    perf = sample_perf(slow=None, gbps=90.0, storage_gbps=36.0)
    assert all(c["status"] == "pass" for c in by(evaluate_iperf(perf["iperf"]["tests"], EXP), "iperf"))
    perf = sample_perf(slow=None, gbps=89.9, storage_gbps=36.0)
    assert {c["status"] for c in by(evaluate_iperf(perf["iperf"]["tests"], EXP), "iperf")
            if c["kind"] == "dgx-dgx"} == {"fail"}


def test_override_changes_the_threshold():
    exp = deep_merge(EXP, {"network": {"tcp_fraction_of_port_rate": {"value": 0.5}}})
    assert exp["storage"] == EXP["storage"]
    perf = sample_perf(gbps=60.0, storage_gbps=30.0, slow=None)
    checks = by(evaluate_iperf(perf["iperf"]["tests"], exp), "iperf")
    assert all(c["status"] == "pass" and c["source"].startswith("pod override") for c in checks)
    bare = deep_merge(EXP, {"network": {"tcp_fraction_of_port_rate": 0.5}})
    assert by(evaluate_iperf(perf["iperf"]["tests"], bare), "iperf")[0]["expected"] == 50.0


def test_storage_expectation_scales_the_ra_figure_to_the_pods_links():
    # 001 §3.4: 4,959 MB/s per 40 Gb/s; one DGX with 2 x 100 GbE to storage behind 4 x 40 GbE storage ports:
    # the storage front end (160 Gb/s) is the bottleneck -> 0.9 x 4,959 x 160/40; capped by storage nodes
    cap = node_capacity({"storage_link_gbps": 200, "mounts": 16}, 1, {"nodes": 8, "link_gbps": 640}, EXP)
    assert cap["expected"] == pytest.approx(0.9 * 4959 * 200 / 40)
    cap = node_capacity({"storage_link_gbps": 200, "mounts": 16}, 4, {"nodes": 8, "link_gbps": 640}, EXP)
    assert cap["expected"] == pytest.approx(0.9 * 3312 * 8 / 4) and "storage node" in cap["limit"]
    cap = node_capacity({"storage_link_gbps": 200, "mounts": 2}, 1, {"nodes": 8, "link_gbps": 640}, EXP)
    assert cap["expected"] == pytest.approx(0.9 * 2 * 2500) and "NFS mount" in cap["limit"]


def test_fio_real_and_simulated():
    perf = sample_perf(node_mbps=1200.0)
    steps = perf["fio"]["steps"]
    real = evaluate_fio(steps, perf["nodes"], perf["storage"], EXP)
    reads = [c for c in by(real, "fio_read") if c["status"] != "error"]
    assert reads and all(c["status"] == "fail" and "expected" in c["cause"] for c in reads)
    errors = [c for c in real if c["status"] == "error"]
    assert {c["check"] for c in errors} == {"fio_read", "fio_relative", "fio_scaling"}
    assert all("sim-dgx4" in c["reason"] or "sim-dgx4" in c.get("reason", "") for c in errors)
    sim = simulated(evaluate_fio(steps, perf["nodes"], perf["storage"], SIM_EXP))
    assert all(c["status"] == "skipped" for c in by(sim, "fio_read") if c.get("measured") is not None)
    assert {c["status"] for c in by(sim, "fio_relative") if c["step"] in (2, 3)} == {"pass"}
    slow = copy.deepcopy(steps)
    slow[2]["results"]["sim-dgx2"]["result"]["aggregate"]["read"]["bw_bytes"] /= 3
    failed = [c for c in simulated(evaluate_fio(slow, perf["nodes"], perf["storage"], SIM_EXP))
              if c["status"] == "fail"]
    assert [(c["check"], c["host"], c["step"]) for c in failed] == [("fio_relative", "sim-dgx2", 3)]
    assert "median node" in failed[0]["cause"]


def test_sizing_matches_the_ra_worked_examples():
    s = sizing(72, 9, 8, EXP, "training-large-images", dataset_tb=22, caches_tb={"isilon": 2.0})
    assert s["required_mbps"] == 72 * 300 and s["storage_nodes_needed"] == 8  # 004: 21,600 MB/s -> 8 F800 nodes
    assert s["cache_hit"] == {"isilon": pytest.approx(2 / 22, abs=1e-4)}
    s = sizing(72, 9, 8, EXP, "training-small-images")
    assert s["required_mbps"] == 72 * 90 and s["storage_nodes_needed"] == 3  # 72 / 27 GPUs per F800 node
    a100 = sizing(32, 4, 4, profile("powerscale-f800-dgxa100")["expectations"])
    assert a100["storage_nodes_needed"] == 4 and a100["required_mbps"] is None  # 001 §4: 8 A100 per F800 node


def test_build_results_evaluates_every_stage_by_the_registry(monkeypatch):
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import stages
    only = [s for s in stages.registry() if s.name in ("identity", "network", "iperf", "fio")]
    monkeypatch.setattr(stages, "registry", lambda: only)
    perf = sample_perf()
    doc = build_results(base_results(), sample_context(perf), EXP, sample_stages(perf))
    assert doc["schema_version"] == 3 and doc["simulated"] is True and doc["notice"].startswith("SIMULATED")
    assert [c["check"] for c in doc["checks"][:2]] == ["identity", "network"]
    assert sum(doc["summary"].values()) == len(doc["checks"])
    assert doc["sizing"]["gpus"] == 32 and "iperf" in doc["measurements"] and "fio" in doc["measurements"]
    assert doc["run"] == perf["run"] and all(c["stage"] for c in doc["checks"])
    sz = [c for c in doc["checks"] if c["check"] == "storage_sizing"]
    assert len(sz) == 1 and sz[0]["status"] == "error"  # one node errored in the all-node step
    assert "measured_mbps" in doc["sizing"]
    # a run of the state checks only: the performance stages are left out by its tags -> one skipped row each
    plain = build_results(base_results(simulated=False), {}, EXP, sample_stages(), run_tags=["identity"])
    assert [(c["check"], c["host"], c["status"]) for c in plain["checks"]] == [
        ("identity", "sim-dgx1", "pass"), ("network", "sim-dgx1", "pass"), ("iperf", "pod", "skipped"),
        ("fio", "pod", "skipped")]
    assert "sizing" not in plain and "run" not in plain


def test_registered_stages_left_out_by_the_tags_are_skipped_rows():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import stages
    names = [s.name for s in stages.registry()]
    assert {"identity", "network", "nfs_mounts", "containers", "iperf", "fio", "gpu", "nccl", "switches"} <= set(names)
    plain = build_results(base_results(simulated=False), {}, EXP, sample_stages(), run_tags=["identity", "network"])
    # a stage the tags select (iperf and the HCA counters run under `network` too) that recorded nothing is an
    # error; one they leave out is one skipped row
    selected = {s.name for s in stages.registry()
                if {"identity", "network"} & ({s.tag} if isinstance(s.tag, str) else set(s.tag))}
    assert {"iperf", "hca_counters"} <= selected
    assert [(c["check"], c["status"]) for c in plain["checks"][2:]] == [
        (n, "error" if n in selected else "skipped") for n in names if n not in ("identity", "network")]
    no_nccl = build_results(base_results(simulated=False), {}, EXP, skip_tags=["nccl"])
    assert [c["status"] for c in no_nccl["checks"] if c["check"] == "nccl"] == ["skipped"]


def test_iperf_and_fio_results_say_what_they_are_about():
    perf = sample_perf(slow=None, fio_error_host=None)
    checks = iperf_eval.evaluate({"tests": perf["iperf"]["tests"]}, EXP, {})
    t = perf["iperf"]["tests"][0]
    assert {(c.category, c.subject) for c in checks[:2]} == {(LINK_PERF, iperf_eval.Subject(
        node=t["client"], nic=t["client_nic"], peer=t["server"], peer_nic=t["server_nic"], fabric=t["fabric"]))}
    fio = fio_eval.evaluate({"steps": perf["fio"]["steps"]}, EXP, sample_context(perf))
    read = next(c for c in fio if c.check == "fio_read" and c.details["step"] == 2)
    assert read.category == NODE_PERF and read.subject.to_dict() == {"node": read.host, "step": 2, "storage": True}
    scaling = [c for c in fio if c.check in ("fio_scaling", "storage_sizing")]
    assert {c.category for c in scaling} == {POD_PERF} and all(c.subject.storage for c in scaling)
    assert [len(c.subject.nodes) for c in scaling] == [1, 2, 3, 4, 4]


def test_an_unreachable_host_in_an_iperf_or_fio_record_is_an_unreachable_error():
    perf = sample_perf(slow=None)
    tests = perf["iperf"]["tests"]
    tests[0] = dict(tests[0], status="error", reason="server host sim-dgx2 unreachable", result={}, unreachable=True)
    errors = [c for c in iperf_eval.iperf_checks(tests, EXP) if c.status == "error"]
    assert len(errors) == 2 and all(c.unreachable and c.category == LINK_PERF for c in errors)
    steps = copy.deepcopy(perf["fio"]["steps"])
    steps[0]["results"]["sim-dgx1"] = {"status": "error", "reason": "sim-dgx1 unreachable: x", "result": {},
                                      "unreachable": True}
    errors = [c for c in fio_eval.fio_checks(steps, perf["nodes"], perf["storage"], EXP)
              if c.status == "error" and c.host == "sim-dgx1"]
    assert errors and all(c.unreachable for c in errors)


def test_the_simulator_inventory_loosens_the_relative_threshold_but_still_catches_half_rate():
    perf = sample_perf(slow=None, gbps=20.0, storage_gbps=15.0)
    tests = perf["iperf"]["tests"]
    for i, t in enumerate(tests):
        if "sim-dgx2" in (t["client"], t["server"]) and t["fabric"] == "data-5":
            tests[i] = dict(t, result=dict(t["result"], received_bps=15e9))  # 75% of its peers
    real = [c for c in evaluate_iperf(tests, EXP) if c["check"] == "iperf_relative" and c["status"] == "fail"]
    sim = [c for c in simulated(evaluate_iperf(tests, SIM_EXP))
           if c["check"] == "iperf_relative" and c["status"] == "fail"]
    assert len(real) == 3 and sim == []
    assert SIM_EXP["network"]["relative_fraction_of_peers"]["value"] == 0.55
    assert "pod-in-a-box override" in SIM_EXP["network"]["relative_fraction_of_peers"]["source"]
    half = copy.deepcopy(tests)
    for i, t in enumerate(half):
        if "sim-dgx2" in (t["client"], t["server"]) and t["fabric"] == "data-5":
            half[i] = dict(t, result=dict(t["result"], received_bps=10e9))  # 50% of its peers
    assert len([c for c in evaluate_iperf(half, SIM_EXP)
                if c["check"] == "iperf_relative" and c["status"] == "fail"]) == 3


def test_a_pair_through_a_slow_nic_fails_even_when_its_only_peer_was_slowed_too():
    # seen on the simulator: sim-dgx2 enp12s0 shaped to 1 Gbit/s; its pair with sim-dgx4 measured 0.98 while
    # the one link sharing no host with it (sim-dgx1<->sim-dgx3) was itself slowed by load to 1.63
    perf = sample_perf(slow=("sim-dgx2", "data-12"), gbps=2.4, storage_gbps=4.0)
    tests = perf["iperf"]["tests"]
    for i, t in enumerate(tests):
        if t["fabric"] == "data-12" and {t["client"], t["server"]} == {"sim-dgx1", "sim-dgx3"}:
            tests[i] = dict(t, result=dict(t["result"], received_bps=1.63e9))
    failed = [c for c in simulated(evaluate_iperf(tests, SIM_EXP)) if c["status"] == "fail"]
    assert sorted(tuple(sorted(c["hosts"])) for c in failed) == [
        ("sim-dgx1", "sim-dgx2"), ("sim-dgx2", "sim-dgx3"), ("sim-dgx2", "sim-dgx4")]
    assert all("sim-dgx2 enp12s0" in c["cause"] and "slow in all its pairs" in c["cause"] for c in failed)


def test_deep_merge_copies_tagged_values_as_plain_ones_and_leaves_its_inputs_alone():
    """Ansible 2.19 hands filters subclasses of str/dict/list carrying tags; deep_merge (plain_copy) returns plain
    values, equal to them, and never the caller's objects."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import plain_copy

    class Tagged(str):
        def __deepcopy__(self, memo):  # the slow path plain_copy must not take
            raise AssertionError("deepcopy of a tagged str")

    class TDict(dict):
        pass

    base = TDict(iperf={"relative": {"value": 0.8, "source": Tagged("toolkit rule")}}, flag=True, n=3, f=(1, 2.5))
    over = {"iperf": {"relative": 0.5}, "extra": [Tagged("x"), None]}
    before = copy.deepcopy(dict(base, iperf={"relative": {"value": 0.8, "source": "toolkit rule"}}))
    out = deep_merge(base, over)
    assert out["iperf"]["relative"]["value"] == 0.5 and out["iperf"]["relative"]["source"].startswith("pod override")
    assert type(out) is dict and type(out["extra"][0]) is str and out["extra"] == ["x", None]
    assert out["flag"] is True and out["n"] == 3 and out["f"] == (1, 2.5)
    assert dict(base, iperf={"relative": {"value": 0.8, "source": "toolkit rule"}}) == before  # inputs unchanged
    copied = plain_copy(base)
    assert copied == base and copied is not base and copied["iperf"] is not base["iperf"]
