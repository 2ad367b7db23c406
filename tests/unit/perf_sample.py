"""A sample set of performance measurements on the simulator's inventory (for the evaluation and report
tests): iperf3 results shaped like the module's, one slow NIC, fio steps 1..4 with one node erroring."""
from __future__ import annotations

import copy
import json
import os

import yaml

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_parse import parse_fio
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import fio_steps, iperf_plan, perf_context

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "perf")


def sim_model():
    with open(os.path.join(ROOT, "inventories", "sim", "hosts.yml")) as fh:
        inv = yaml.safe_load(fh)
    with open(os.path.join(ROOT, "inventories", "sim", "group_vars", "all", "pod.yml")) as fh:
        pod = yaml.safe_load(fh)["pod"]
    groups = {g: list(inv["all"]["children"][g]["hosts"]) for g in ("dgx", "storage")}
    hosts = {}
    for g in groups:
        hosts.update(inv["all"]["children"][g]["hosts"])
    return pod, hosts, groups


def profile(name="isilon-f800-dgx1"):
    with open(os.path.join(ROOT, "profiles", name + ".yml")) as fh:
        return yaml.safe_load(fh)["profile"]


def fio_result(mbps):
    """A pod_fio result whose aggregate read is ``mbps`` MB/s (the Debian fixture, scaled)."""
    with open(os.path.join(FIXTURES, "fio-3.33-debian-read-2jobs.json")) as fh:
        parsed = parse_fio(fh.read())
    parsed = copy.deepcopy(parsed)
    scale = mbps * 1e6 / parsed["aggregate"]["read"]["bw_bytes"]
    for job in parsed["jobs"] + [parsed["aggregate"]]:
        r = job["read"] if "read" in job else job
        r["bw_bytes"] *= scale
    return {"status": "ok", "result": parsed}


def sample_perf(slow=("sim-dgx3", "data-12"), gbps=20.0, storage_gbps=15.0, node_mbps=1200.0,
                fio_error_host="sim-dgx4"):
    pod, hosts, groups = sim_model()
    plan = iperf_plan(hosts, groups["dgx"], groups["storage"], pod["fabrics"])
    tests = []
    for r in plan:
        for t in r["tests"]:
            g = gbps if t["kind"] == "dgx-dgx" else storage_gbps
            if slow and slow[0] in (t["client"], t["server"]) and t["fabric"] == slow[1]:
                g *= 0.48
            tests.append(dict(t, status="ok", reason=None,
                              result={"status": "ok", "received_bps": g * 1e9, "sent_bps": g * 1e9,
                                      "retransmits": 3, "host_cpu_percent": 40.0, "remote_cpu_percent": 30.0}))
    steps = []
    for nodes in fio_steps(groups["dgx"]):
        results = {}
        for h in nodes:
            if h == fio_error_host and len(nodes) == len(groups["dgx"]):
                results[h] = {"status": "error", "reason": "/mnt/isilon3/fio did not answer within 15s "
                              "(storage node down or mount hung?)", "result": {}}
            else:
                results[h] = fio_result(node_mbps * (1.0 if len(nodes) < 3 else 0.8))
        steps.append({"nodes": nodes, "results": results})
    ctx = perf_context(hosts, groups["dgx"], groups["storage"], pod["fabrics"], 16)
    ctx["sizing"].update(workload=None, dataset_tb=22, caches_tb={"linux page cache (DGX-1)": 0.5,
                                                                   "storage (8 F800)": 2.0})
    return dict(ctx, iperf={"tests": tests}, fio={"steps": steps},
                run={"profile": "quick", "params": {"iperf_duration": 5, "fio_size": "128MiB"}})


def base_results(simulated=True):
    """The run as roles/pod_report hands it to pod_report_write (results)."""
    return {"pod": "pod-in-a-box", "ra_profile": "isilon-f800-dgx1", "simulated": simulated,
            "finished": "20261121T080000Z"}


def sample_context(perf):
    """What roles/pod_report hands pod_report_write as context (the pod_perf_context filter): nodes, storage, sizing."""
    return {k: perf[k] for k in ("nodes", "storage", "sizing")}


def sample_stages(perf=None):
    """pod_stages as the validate playbooks record it: sim-dgx1's identity and network (both pass) and, from
    ``perf`` (sample_perf), the iperf and fio stages."""
    stages = {"identity": {"hosts": {"sim-dgx1": {"hostname": "sim-dgx1", "interfaces": ["lo", "enp5s0"],
                                                  "nics": ["enp5s0"], "check_hostname": True, "check_nics": True}}},
              "network": {"hosts": {"sim-dgx1": {"state": {"changes": [], "differences": []}, "pings": 12,
                                                 "ping_failures": [], "rdma": []}}}}
    if perf:
        stages["iperf"] = {"run": perf["run"], "tests": perf["iperf"]["tests"]}
        stages["fio"] = {"run": perf["run"], "steps": perf["fio"]["steps"]}
    return stages


if __name__ == "__main__":  # write a sample for trying the role by hand: python tests/unit/perf_sample.py > x.json
    perf = sample_perf()  # as validate_perf.yml records its two stages (playbooks/tasks/record_stage.yml)
    print(json.dumps({"pod_stages": {"iperf": {"run": perf["run"], "tests": perf["iperf"]["tests"]},
                                     "fio": {"run": perf["run"], "steps": perf["fio"]["steps"]}}}, indent=1))
