"""The NCCL stage: plan (module_utils/nccl/plan.py), evaluation and report (module_utils/nccl/eval.py),
the module's command line (library/pod_nccl.py) and the stage's registration."""
from __future__ import annotations

import copy
import os

import pytest
import yaml

from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import eval as ne
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import plan as npl
from filter_plugins import nccl as nccl_filters
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_PERF, JOB_STATE, NODE_STATE,
                                                                                  Subject, apply_simulated_policy)
from inventory_util import ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_html, render_markdown

EXP = yaml.safe_load(open(os.path.join(ROOT, "profiles", "isilon-f800-dgx1.yml")))["profile"]["expectations"]
NODES = ["sim-dgx1", "sim-dgx2", "sim-dgx3", "sim-dgx4"]


def rows(bw, sizes=(1 << 20, 2 << 20, 4 << 20, 8 << 20), wrong=0):
    """nccl-tests rows whose bus bandwidth rises to ``bw`` at the large sizes."""
    out = []
    for i, s in enumerate(sizes):
        b = bw * (0.5 + 0.5 * i / (len(sizes) - 1))
        out.append({"size": s, "count": s // 4, "type": "float", "redop": "sum", "root": -1,
                    "out_of_place": {"time_us": 1.0, "algbw": b, "busbw": b, "wrong": wrong, "error": None},
                    "in_place": {"time_us": 1.0, "algbw": b * 0.98, "busbw": b * 0.98, "wrong": 0, "error": None}})
    return out


def run(nodes, bw, backend="cpu", transport=None, **kw):
    r = {"nodes": list(nodes), "ok": True, "rows": rows(bw), "footer": {"out_of_bounds": 0, "out_of_bounds_ok": True,
                                                                        "avg_busbw": bw / 2}, "backend": backend,
         "transport": transport if transport is not None else {"backend": backend, "summary": {},
                                                                "backend_transports": ["MPI TCP"]},
         "seconds": 3.0, "failed_hosts": {}, "failed_ranks": {}}
    r.update(kw)
    return r


def topo(fabric="rdma", gdr=True):
    return {"model": "dgx1", "gpus_per_node": 8, "fabric": fabric, "gdr_expected": gdr,
            "nodes": {n: {"gpus": 8, "nics": 4, "nic_gbps": 400.0,
                          "hcas": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]} for n in NODES}}


def measurements(slow=None, slow_factor=0.1, pairs=True, simulated=True):
    def bw(nodes, base):
        return base * (slow_factor if slow in nodes else 1.0)
    m = {"collective": "all_reduce", "profile": "quick", "params": {}, "simulated": simulated, "plateau_sizes": 3,
         "topology": topo(), "single": [run([n], 1.0) for n in NODES], "all": run(NODES, bw(NODES, 0.1)),
         "pairs": [], "localisation": {"run": pairs, "why": "localise: always profile: pairs always run"}}
    if pairs:
        for r in npl.pair_rounds(NODES):
            for p in r["pairs"]:
                m["pairs"].append(dict(run(p, bw(p, 0.12)), round=r["round"]))
    return m


def by(checks, name):
    return [c for c in checks if c.check == name]


# --------------------------------------------------------------------------- plan

def test_pair_rounds_cover_every_pair_once_no_node_twice_in_a_round():
    rounds = npl.pair_rounds(NODES)
    assert len(rounds) == 3 and all(len(r["pairs"]) == 2 for r in rounds)
    seen = [tuple(sorted(p)) for r in rounds for p in r["pairs"]]
    assert len(seen) == len(set(seen)) == 6
    for r in rounds:
        nodes = [n for p in r["pairs"] for n in p]
        assert len(nodes) == len(set(nodes))
        assert set(npl.round_launchers(r)) == {p[0] for p in r["pairs"]}
    assert len(npl.pair_rounds(NODES[:3])) == 3 and npl.pair_rounds(NODES[:1]) == []


def test_plateau_is_the_median_of_the_largest_sizes_not_the_average():
    r = rows(10.0)
    assert npl.plateau_busbw(r, 3) == pytest.approx(10.0 * (0.5 + 0.5 * 2 / 3), rel=1e-3)
    assert npl.plateau_busbw(r, 1) == 10.0
    assert npl.plateau_busbw(r, 3, min_bytes=8 << 20) == 10.0
    assert npl.plateau_busbw([], 3) is None


def test_topology_of_the_sim_inventory():
    hv = hostvars(os.path.join(ROOT, "inventories", "sim"))
    dgx = sorted(h for h, v in hv.items() if "dgx" in v.get("group_names", []))
    t = npl.topology(Pod.from_hostvars({h: hv[h] for h in dgx}), dgx)
    first = t["nodes"][dgx[0]]
    assert t["model"] == "dgx1" and t["gpus_per_node"] == 8 and t["fabric"] == "rdma" and t["gdr_expected"]
    assert first["hcas"] and first["nic_gbps"] == 100.0 * first["nics"]
    assert npl.multi_node_expectation(t, 0.8) == pytest.approx(first["nic_gbps"] / 8 * 0.8)
    assert hv[dgx[0]]["pod_nccl_tests_dir"] == "/opt/podsim/nccl-tests-standin"
    # the filter builds the same typed pod from hostvars and the pod variable
    assert nccl_filters.pod_nccl_topology(hv[dgx[0]]["pod"], hv, dgx) == t


def test_topology_counts_only_compute_fabric_nics():
    storage = {"name": "stor", "kind": "ethernet", "subnet": "10.9.0.0/24", "mtu": 9000, "carries": ["storage"]}
    comp = {"name": "comp", "kind": "infiniband", "subnet": "10.8.0.0/24", "mtu": 4092, "carries": ["compute"]}
    hv = {"a": {"group_names": ["dgx"], "dgx_model": "dgxa100", "nics": [
        {"name": "ib0", "fabric": "comp", "address": "10.8.0.1", "speed": 200, "rdma_device": "mlx5_0"},
        {"name": "ib1", "fabric": "comp", "address": "10.8.0.2", "speed": 200, "rdma_device": "mlx5_1"},
        {"name": "eth0", "fabric": "stor", "address": "10.9.0.1", "speed": 100, "rdma_device": "mlx5_9"}]},
        "b": {"group_names": ["dgx"], "dgx_model": "dgxa100", "gpus": 4, "nics": []}}
    pod = Pod.from_hostvars(hv, pod={"name": "p", "ra_profile": "x", "fabrics": [storage, comp]})
    t = npl.topology(pod, ["a", "b"])
    assert t["nodes"]["a"] == {"gpus": 8, "nics": 2, "nic_gbps": 400.0, "hcas": ["mlx5_0", "mlx5_1"]}
    assert t["nodes"]["b"] == {"gpus": 4, "nics": 0, "nic_gbps": None, "hcas": []}
    assert t["model"] == "dgxa100" and t["gpus_per_node"] is None and t["fabric"] == "rdma" and t["gdr_expected"]


def test_needs_localisation():
    ok = run(NODES, 50.0)
    assert npl.needs_localisation(ok, 40.0, "quick")["run"] is False
    assert npl.needs_localisation(ok, 60.0, "quick")["run"] is True
    assert npl.needs_localisation(ok, 60.0, "quick", simulated=True)["run"] is False  # no hardware figure there
    assert npl.needs_localisation(ok, None, "full")["run"] is True
    assert npl.needs_localisation(ok, None, "quick", always=True)["run"] is True
    bad = dict(ok, ok=False, error="timeout")
    assert "timeout" in npl.needs_localisation(bad, None, "quick")["why"]
    wrong = dict(ok, rows=rows(50.0, wrong=3))
    assert npl.needs_localisation(wrong, None, "quick")["why"] == "the all-node run had wrong results"
    assert npl.needs_localisation(None, None, "quick")["run"] is True


def test_run_record_keeps_the_result_and_names_nodes_when_there_is_none():
    res = dict(run(["a", "b"], 1.0), changed=False, invocation={"x": 1}, cmd=["mpirun"])
    rec = npl.run_record(res, ["a", "b"])
    assert "invocation" not in rec and "cmd" not in rec and rec["ok"] and rec["nodes"] == ["a", "b"]
    failed = npl.run_record({"failed": True, "msg": "boom"}, ["a", "b"])
    assert failed["ok"] is False and failed["failed_hosts"] == {"a": "boom"}
    skipped = npl.run_record({"skipped": True, "skip_reason": "Conditional result was False"}, ["a"])
    assert skipped["ok"] is False and "not run" in skipped["error"]
    coll = npl.collect(["a", "b"], {"a": {"k": {"ok": True, "nodes": ["a"]}}, "b": {}}, "k")
    assert coll[1]["ok"] is False and "b recorded no result" in coll[1]["error"]
    pairs = npl.collect_pairs(["a", "c"], {"a": {"p": [{"round": 2, "nodes": ["a", "b"]}]},
                                           "c": {"p": [{"round": 1, "nodes": ["c", "d"]}]}}, "p")
    assert [p["round"] for p in pairs] == [1, 2]


# --------------------------------------------------------------------------- evaluation

def test_healthy_simulated_pod_passes_and_absolute_checks_are_skipped():
    m = measurements()
    res = apply_simulated_policy(ne.evaluate(m, EXP, {"simulated": True}), True)
    assert {c.status for c in res} <= {"pass", "skipped"}, [c.to_dict() for c in res if c.status not in
                                                            ("pass", "skipped")]
    assert all(c.status == "skipped" for c in by(res, "nccl_busbw") + by(res, "nccl_transport"))
    assert "backend: cpu" in by(res, "nccl_transport")[0].reason
    rel = by(res, "nccl_relative")
    assert len(rel) == 4 + 6 + 1 and all(c.status == "pass" for c in rel)
    assert by(res, "nccl_localisation")[0].status == "pass" and by(res, "nccl_localisation")[0].host == "pod"


def test_a_slow_node_fails_the_all_node_step_and_is_named():
    m = measurements(slow="sim-dgx3")
    res = ne.evaluate(m, EXP, {"simulated": True})
    loc = by(res, "nccl_localisation")
    assert [c.host for c in loc] == ["sim-dgx3"] and loc[0].status == "fail"
    assert loc[0].cause == "sim-dgx3 is the slow node (its pairs at 10% of the others)"
    allrel = [c for c in by(res, "nccl_relative") if c.details.get("step") == "all"]
    assert allrel[0].status == "fail" and "nccl_localisation" in allrel[0].cause
    failing_pairs = sorted(c.host for c in by(res, "nccl_relative") if c.details.get("step") == "pair"
                           and c.status == "fail")
    assert failing_pairs and all("sim-dgx3" in p for p in failing_pairs)
    assert m["localisation"]["slow"][0]["node"] == "sim-dgx3"


def test_every_check_says_what_it_is_about():
    """Issue 38: the subject and category as data - a node alone, a pair (node and peer), every node of the
    all-node run, with the step; the job's speed (job_perf), its outcome (job_state), the transport (node_state)."""
    m = measurements(slow="sim-dgx3")
    res = ne.evaluate(m, EXP, {"simulated": True})
    about = {(c.check, c.host): (c.category, c.subject) for c in res}
    every = Subject(nodes=tuple(NODES), step="all")
    assert about[("nccl_busbw", "sim-dgx1")] == (JOB_PERF, Subject(node="sim-dgx1", step="single"))
    assert about[("nccl_correctness", "sim-dgx1")] == (JOB_STATE, Subject(node="sim-dgx1", step="single"))
    assert about[("nccl_relative", "sim-dgx2")] == (JOB_PERF, Subject(node="sim-dgx2", step="single"))
    assert about[("nccl_busbw", "all (4 DGX)")] == (JOB_PERF, every)
    assert about[("nccl_relative", "all (4 DGX)")] == (JOB_PERF, every)
    assert about[("nccl_transport", "all (4 DGX)")] == (NODE_STATE, every)
    assert about[("nccl_localisation", "sim-dgx3")] == (JOB_PERF, Subject(node="sim-dgx3", step="pair"))
    pairs = [c for c in res if c.details.get("step") == "pair"]
    assert pairs and all(c.subject.step == "pair" for c in pairs)
    for c in pairs:
        a, b = c.host.split("<->")
        want = Subject(nodes=(a, b), step="pair") if c.check == "nccl_transport" else Subject(node=a, peer=b,
                                                                                               step="pair")
        assert c.subject == want, c
    m = measurements(pairs=False)
    m["all"] = {"nodes": NODES, "ok": False, "error": "no result within 150s", "rows": [],
                "failed_hosts": {"sim-dgx3": "exited"}, "failed_ranks": {}}
    (err,) = by(ne.evaluate(m, EXP, {"simulated": True}), "nccl_run")
    assert (err.category, err.subject) == (JOB_STATE, every)


def test_a_slow_node_alone_fails_nccl_relative():
    m = measurements()
    m["single"][1] = run(["sim-dgx2"], 0.3)
    res = ne.evaluate(m, EXP, {"simulated": False})
    bad = [c for c in by(res, "nccl_relative") if c.status == "fail"]
    assert [c.host for c in bad] == ["sim-dgx2"] and "sim-dgx2" in bad[0].cause


def test_a_hung_run_is_an_error_naming_hosts_and_ranks():
    m = measurements(pairs=False)
    m["all"] = {"nodes": NODES, "ok": False, "error": "no result within 150s (outer timeout)",
                "failed_hosts": {"sim-dgx3": "ssh: Connection refused"},
                "failed_ranks": {"4": {"host": "sim-dgx3", "reason": "exited on Killed"}}, "rows": []}
    res = ne.evaluate(m, EXP, {"simulated": True})
    err = by(res, "nccl_run")
    assert len(err) == 1 and err[0].status == "error" and err[0].host == "all (4 DGX)"
    assert "sim-dgx3 (ssh: Connection refused)" in err[0].reason and "rank 4 on sim-dgx3" in err[0].reason


def test_wrong_results_fail_correctness():
    m = measurements(pairs=False)
    m["single"][0] = dict(run(["sim-dgx1"], 1.0), rows=rows(1.0, wrong=7))
    m["all"]["footer"] = {"out_of_bounds": 2, "out_of_bounds_ok": False, "avg_busbw": 0.05}
    res = ne.evaluate(m, EXP, {"simulated": True})
    bad = {c.host: c for c in by(res, "nccl_correctness") if c.status == "fail"}
    assert set(bad) == {"sim-dgx1", "all (4 DGX)"} and "28 wrong element(s)" in bad["sim-dgx1"].cause


def test_busbw_against_the_model_figures_on_a_real_pod():
    m = measurements(pairs=False, simulated=False)
    for r in m["single"]:
        r["rows"] = rows(120.0)
    m["single"][3]["rows"] = rows(60.0)
    gdr = {"summary": {"NET/IB/GDRDMA": 16}, "networks": ["IB"], "ib_devices": ["mlx5_0", "mlx5_1"],
           "socket_fallback": False, "gdr_everywhere": True, "net_connections": 16, "backend": None}
    m["all"] = run(NODES, 45.0, backend=None, transport=gdr)
    res = ne.evaluate(m, EXP, {"simulated": False})
    single = {c.host: c for c in by(res, "nccl_busbw") if c.details.get("step") == "single"}
    # 8x V100 (DGX-1): 110 GB/s, Azure NDv2 threshold; the plateau of rows(120) is 100 -> below
    assert single["sim-dgx1"].expected == 110 and single["sim-dgx1"].status == "fail"
    allbw = [c for c in by(res, "nccl_busbw") if c.details.get("step") == "all"][0]
    assert allbw.expected == pytest.approx(400 / 8 * 0.8) and allbw.status == "fail" and allbw.absolute
    m["all"]["rows"] = rows(45.0)   # one large size above the line does not make the plateau pass
    m["all"]["rows"][-1]["out_of_place"]["busbw"] = 55.0
    res = ne.evaluate(m, EXP, {"simulated": False})
    assert [c for c in by(res, "nccl_busbw") if c.details.get("step") == "all"][0].status == "fail"
    m["all"]["rows"] = [dict(r, out_of_place=dict(r["out_of_place"], busbw=60.0)) for r in rows(50.0)]
    res = ne.evaluate(m, EXP, {"simulated": False})
    assert [c for c in by(res, "nccl_busbw") if c.details.get("step") == "all"][0].status == "pass"


@pytest.mark.parametrize("transport,status,words", [
    ({"summary": {"NET/IB/GDRDMA": 8}, "networks": ["IB"], "ib_devices": ["mlx5_0"], "socket_fallback": False,
      "gdr_everywhere": True, "net_connections": 8, "backend": None}, "pass", None),
    ({"summary": {"NET/Socket": 8}, "networks": ["Socket"], "ib_devices": [], "socket_fallback": True,
      "gdr_everywhere": False, "net_connections": 8, "backend": None}, "fail", "NCCL_IB_HCA"),
    ({"summary": {"NET/IB": 8}, "networks": ["IB"], "ib_devices": ["mlx5_0"], "socket_fallback": False,
      "gdr_everywhere": False, "net_connections": 8, "backend": None}, "fail", "nvidia-peermem"),
    ({"summary": {"NET/IB/GDRDMA": 8}, "networks": ["IB"], "ib_devices": ["mlx5_9"], "socket_fallback": False,
      "gdr_everywhere": True, "net_connections": 8, "backend": None}, "fail", "set NCCL_IB_HCA to mlx5_0"),
    ({"summary": {}, "networks": ["IB"], "ib_devices": [], "socket_fallback": False,
      "gdr_everywhere": False, "net_connections": 0, "backend": None}, "error", None),
])
def test_transport(transport, status, words):
    m = measurements(pairs=False, simulated=False)
    m["all"] = run(NODES, 40.0, backend=None, transport=transport)
    c = by(ne.evaluate(m, EXP, {"simulated": False}), "nccl_transport")[0]
    assert c.status == status and c.absolute
    if words:
        assert words in c.cause
    m["all"]["transport"] = None
    assert by(ne.evaluate(m, EXP, {"simulated": False}), "nccl_transport")[0].status == "error"


def test_localise_needs_the_node_common_to_the_slow_pairs():
    pairs = {("a", "b"): 10.0, ("c", "d"): 10.0, ("a", "c"): 10.0, ("b", "d"): 10.0, ("a", "d"): 10.0,
             ("b", "c"): 10.0}
    assert ne.localise(pairs, 0.5)["slow"] == []
    pairs.update({("a", "c"): 2.0, ("b", "c"): 2.0, ("c", "d"): 2.0})
    loc = ne.localise(pairs, 0.5)
    assert [s["node"] for s in loc["slow"]] == ["c"] and loc["slow"][0]["ratio"] == 0.2


# --------------------------------------------------------------------------- stage, report

def test_registered_stage_in_results_and_reports():
    base = {"pod": "pod-in-a-box", "ra_profile": "isilon-f800-dgx1", "simulated": True, "finished": "t",
            "checks": []}
    doc = build_results(base, {}, EXP, {"nccl": measurements(slow="sim-dgx3")}, run_tags=["nccl"])
    assert doc["measurements"]["nccl"]["localisation"]["slow"][0]["node"] == "sim-dgx3"
    md = render_markdown(doc)
    assert "## NCCL (all_reduce)" in md and "**sim-dgx3 is the slow node**" in md and "SIMULATED" in md
    html = render_html(doc)
    assert html.count("<svg") >= 3 and "busbw vs message size: pairs (localisation)" in html
    assert "sim-dgx3 is the slow node" in html
    missing = build_results(base, {}, EXP, {}, run_tags=["nccl"])
    assert [c["status"] for c in missing["checks"] if c["check"] == "nccl"] == ["error"]


def test_evaluation_does_not_need_the_report_to_have_run_first():
    m = measurements()
    once = [c.to_dict() for c in ne.evaluate(copy.deepcopy(m), EXP, {"simulated": True})]
    ne_copy = copy.deepcopy(m)
    twice = [c.to_dict() for c in ne.evaluate(ne_copy, EXP, {"simulated": True})]
    assert once == twice and ne_copy["localisation"]["method"] == "pairs"


def test_module_command_line():
    import pod_nccl
    p = {"tests_dir": "/opt/podsim/nccl-tests-standin", "collective": "all_gather", "min_bytes": "1M",
         "max_bytes": "8M", "step_factor": 2, "iters": 5, "warmup_iters": 1, "check": False, "datatype": "float",
         "op": "sum", "tests_timeout": 60}
    prog, args = pod_nccl.nccl_args(p)
    assert prog == "/opt/podsim/nccl-tests-standin/all_gather_perf"
    assert args[1:] == ["-b", "1M", "-e", "8M", "-f", "2", "-n", "5", "-w", "1", "-c", "0", "-d", "float", "-o", "sum",
                        "-g", "1", "-T", "60"]
    assert "-T" not in pod_nccl.nccl_args(dict(p, tests_timeout=0))[1]


def test_runs_through_slurm_say_so_and_a_refused_allocation_blames_the_drained_dgx():
    """library/pod_nccl scheduler=slurm: the runs carry their Slurm job; a run Slurm did not allocate (a drained
    DGX) is the stage's error naming that DGX with Slurm's reason, and the report says how each run was launched."""
    base = {"pod": "pod-in-a-box", "ra_profile": "isilon-f800-dgx1", "simulated": True, "finished": "t",
            "checks": []}
    m = measurements(pairs=False)
    for i, r in enumerate(m["single"] + [m["all"]]):
        r["slurm"] = {"job_id": 40 + i, "granted": True, "partition": "dgx", "job_name": "dgxpod-nccl-x"}
    m["all"] = {"nodes": NODES, "ok": False, "rows": [], "failed_hosts": {
        "sim-dgx3": "drained in Slurm: dgxpod nccl_busbw: slow"},
        "error": "Slurm did not allocate sim-dgx1,sim-dgx2,sim-dgx3,sim-dgx4 (partition dgx) within 120s: ...",
        "slurm": {"job_id": 45, "granted": False, "partition": "dgx",
                  "error": "Required node not available (down, drained or reserved)"}}
    doc = build_results(base, {}, EXP, {"nccl": m}, run_tags=["nccl"])
    errors = [c for c in doc["checks"] if c["status"] == "error"]
    assert [(c["check"], c["host"]) for c in errors] == [("nccl_run", "all (4 DGX)")], errors
    assert "Hosts: sim-dgx3 (drained in Slurm: dgxpod nccl_busbw: slow)" in errors[0]["reason"]
    md = render_markdown(doc)
    assert ("Launched through Slurm (salloc, partition dgx), each run in its own allocation of its DGX: single "
            "sim-dgx1: job 40;") in md
    assert "all all (4 DGX): not allocated (Required node not available (down, drained or reserved))" in md
    assert "Launched through Slurm" in render_html(doc)
    assert "Launched through Slurm" not in render_markdown(build_results(base, {}, EXP, {"nccl": measurements()},
                                                                         run_tags=["nccl"]))


@pytest.mark.parametrize("first, slacks, want", [
    (3.2, [2.3, 2.34, 2.3, 2.3], 1.9),     # step 1 on the 4-DGX pod-in-a-box used 0.9 s: + 1 s headroom
    (3.2, [1.4, 1.5, 1.45, 1.5], 2.8),     # a slower sitting used 1.8 s
    (3.2, [3.1, 3.0], 1.5),                # a fast launch: the floor
    (3.2, [2.3, -0.5], 3.2),               # a node was late: the rounds keep step 1's margin, never more
    (3.2, [0.1], 3.2),                     # used almost everything: capped at step 1's margin
    (3.2, [None, "n/a", True], 3.2),       # no number from step 1 (failed before its start): unchanged
    (3.2, [], 3.2),
    (None, [2.0], None),                   # no step-1 margin known: nothing to size
    (6.0, [5.5, 4.0], 3.0),                # an overridden first margin
])
def test_pair_start_margin_follows_what_step_1_used(first, slacks, want):
    assert npl.pair_start_margin(first, slacks) == want


def test_pair_margin_filter_reads_every_host_s_step_1_slack():
    hv = {"a": {"pod_nccl_single": {"start_slack": 2.5}}, "b": {"pod_nccl_single": {"start_slack": 1.0}},
          "c": {"pod_nccl_single": {"ok": False}}, "d": {}}
    assert nccl_filters.pod_nccl_pair_margin(["a", "b", "c", "d"], hv, "3.2") == 3.2  # b used 2.2 s, + 1 s: capped
    assert nccl_filters.pod_nccl_pair_margin(["a", "c"], hv, 3.2) == 1.7
    assert nccl_filters.pod_nccl_pair_margin(["c", "d"], hv, 3.2) == 3.2


def test_the_correctness_line_says_the_wrong_count_must_be_zero():
    """'measured 28 wrong elements (expected = 0)': a count that must be 0, not a threshold (before: '>= 0')."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details
    m = measurements(pairs=False)
    m["single"][0] = dict(run(["sim-dgx1"], 1.0), rows=rows(1.0, wrong=7))
    res = {c.host: c for c in by(ne.evaluate(m, EXP, {"simulated": True}), "nccl_correctness")}
    assert details(res["sim-dgx1"].to_dict()).startswith("measured 28 wrong elements (expected = 0)")
    assert details(res["sim-dgx2"].to_dict()) == "measured 0 wrong elements (expected = 0)"
