"""Root-cause findings (module_utils/report/findings.py): one finding per fault, every failed check under exactly one.

The results are built the way a run builds them: ping failure lines in pod_ping_mesh's format towards the
targets pod_derive.ping_targets plans, NFS problems in pod_nfs_verify's format for the mounts
storage_plan.mount_plan plans, iperf/fio checks from pod_eval.evaluate_* on perf_sample's measurements,
missing per-host results as the registry makes them (result.check.no_result), on the simulator's inventory."""
from __future__ import annotations

import copy

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (FILE_STATE, JOB_PERF, JOB_STATE,
    NODE_STATE, POD_STATE, PORT_STATE, REACH, CheckResult, Problem, Subject)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import (build_findings, finding_line,
    with_findings)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import pod_index
from perf_sample import profile, sample_perf, sim_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import ping_targets
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_eval import evaluate_iperf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_eval import evaluate_fio
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import no_result
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import mount_plan

EXP = profile()["expectations"]
SHAPE = ["id", "host", "subject", "cause", "status", "root", "explains", "summary"]


@pytest.fixture(scope="module")
def pod():
    p, hosts, groups = sim_model()
    return Pod.from_hostvars(hosts, groups, p)


@pytest.fixture(scope="module")
def index(pod):
    return pod_index(pod)


def dgx(pod):
    return [h.name for h in pod.dgx]


def ping_line(me, t, detail="100% packet loss"):
    """pod_ping_mesh's failure line."""
    return "%s %s -> %s (%s) at MTU %s: %s" % (me, t["nic"], t["peer"], t["address"], t["mtu"], detail)


def kernel(host, line):
    """A kernel difference as the network stage gives it: 'enp132s0 mtu: 1500 -> 9000' with its NIC and the
    finding's words ('MTU 1500, model 9000')."""
    nic, rest = line.split(" ", 1)
    field, change = rest.split(": ", 1)
    have, want = change.split(" -> ")
    return Problem("kernel differs from the model: %s" % line, NODE_STATE, Subject(node=host, nic=nic),
                   "%s %s, model %s" % ("MTU" if field == "mtu" else field, have, want))


def network(pod, host, own=(), unreachable=(), detail="100% packet loss", extra=()):
    """A DGX's network check: its own kernel differences, then the pings that fail (to ``unreachable``
    addresses, or all of them from a NIC named in ``own``)."""
    bad_nics = {p.split()[0] for p in own}
    fails = [Problem(ping_line(host, t, detail), REACH, Subject(node=host, nic=t["nic"], peer=t["peer"],
                                                                address=t["address"]))
             for t in ping_targets(pod, host) if t["address"] in unreachable or t["nic"] in bad_nics]
    problems = [kernel(host, p) for p in own] + fails + list(extra)
    return CheckResult("network", host, "fail" if problems else "pass", problems=problems,
                       details={"pings": len(ping_targets(pod, host))}, subject=Subject(node=host),
                       category=NODE_STATE, stage="network").to_dict()


def nfs(pod, host, dead=(), detail="listing failed: ls did not finish within 15s", own=()):
    """A DGX's nfs_mounts check, the mounts from ``dead`` addresses failing as pod_nfs_verify says; ``own``:
    (mount point, text) of mounts of its own that are wrong."""
    mounts = mount_plan(pod, host)["mounts"]
    problems = [Problem("%s: %s from %s: %s" % (host, m["path"], m["ip"], detail), REACH,
                        Subject(node=host, address=m["ip"], path=m["path"])) for m in mounts if m["ip"] in dead]
    problems += [Problem("%s: %s" % (host, text), NODE_STATE, Subject(node=host, path=path), text)
                 for path, text in own]
    return CheckResult("nfs_mounts", host, "fail" if problems else "pass", problems=problems,
                       details={"mounts": len(mounts)}, subject=Subject(node=host), category=NODE_STATE,
                       stage="storage").to_dict()


def healthy(pod):
    out = []
    for h in dgx(pod):
        out += [CheckResult("identity", h, "pass", details={"hostname": h, "hostname_ok": True, "missing_nics": []},
                            subject=Subject(node=h), category=NODE_STATE, stage="identity").to_dict(),
                network(pod, h), nfs(pod, h)]
    return out


def missing(host, check, stage):
    """The row of a host that did not record its check (it did not answer), as the registry makes it."""
    return no_result(check, host, category=NODE_STATE).but(stage=stage).to_dict()


def assert_partition(results, findings):
    """Every failed or errored check is under exactly one finding; nothing else is."""
    bad = sorted((c["check"], c["host"], c["status"]) for c in results if c["status"] in ("fail", "error"))
    got = sorted((e["check"], e["host"], e["status"]) for f in findings for e in f["explains"])
    assert got == bad
    for f in findings:
        assert list(f) == SHAPE
        assert f["status"] in ("fail", "error")
        assert f["root"] is None or {"check": f["root"]["check"], "host": f["root"]["host"]} in [
            {"check": e["check"], "host": e["host"]} for e in f["explains"]]
    assert [f["id"] for f in findings] == ["F%d" % (i + 1) for i in range(len(findings))]


def test_healthy_run_has_no_findings(pod, index):
    results = healthy(pod)
    assert all(c["status"] == "pass" for c in results)
    assert build_findings(results, index) == []


def test_one_nic_at_mtu_1500_is_one_finding_explaining_the_pings_towards_it(pod, index):
    results = healthy(pod)
    victim = pod.host("sim-dgx2").nic("enp132s0")
    for i, c in enumerate(results):
        if c["check"] == "network":
            own = ["enp132s0 mtu: 1500 -> 9000"] if c["host"] == "sim-dgx2" else ()
            results[i] = network(pod, c["host"], own=own, unreachable={victim.address}, detail="message too long")
        if c == nfs(pod, "sim-dgx2"):  # one read through that NIC times out
            results[i] = nfs(pod, "sim-dgx2", dead={"198.18.66.211"})
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1
    f = findings[0]
    assert f["host"] == "sim-dgx2" and f["subject"] == "sim-dgx2 enp132s0 (sim-sw2 Ethernet2/1)"
    assert f["root"] == {"check": "network", "host": "sim-dgx2"} and f["status"] == "fail"
    assert f["cause"] == "MTU 1500, model 9000"
    assert f["summary"] == ("sim-dgx2 enp132s0 (sim-sw2 Ethernet2/1): MTU 1500, model 9000 \u2014 explains 3 nodes' "
                            "failed pings to sim-dgx2 and 1 nfs_mounts check")


def test_a_switch_port_fault_names_the_nic_cabled_to_it_and_explains_its_pings(pod, index):
    results = healthy(pod)
    addr = pod.host("sim-dgx3").nic("enp139s0").address
    for i, c in enumerate(results):
        if c["check"] == "network" and c["host"] != "sim-dgx3":
            results[i] = network(pod, c["host"], unreachable={addr})
    # switch_eval's result for the port (its cause names the port and the host NIC on it)
    port = Subject(switch="sim-sw2", port="Ethernet7/1", node="sim-dgx3", nic="enp139s0")
    results.append(CheckResult("switch_port_mtu", "sim-sw2 Ethernet7/1", "fail", expected=9000, measured=1500,
                               unit="bytes", cause="sim-sw2 Ethernet7/1 (sim-dgx3 enp139s0): MTU 1500, model 9000",
                               details={"compare": "= "}, subject=port, category=PORT_STATE).to_dict())
    results.append(CheckResult("switch_port_mtu", "sim-sw2 Ethernet6/1", "pass", expected=9000, measured=9000,
                               subject=Subject(switch="sim-sw2", port="Ethernet6/1"), category=PORT_STATE).to_dict())
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1 and findings[0]["host"] == "sim-sw2"  # the fault is on the switch
    assert findings[0]["subject"] == "sim-sw2 Ethernet7/1 (sim-dgx3 enp139s0)"
    assert findings[0]["cause"] == "MTU 1500, model 9000"
    assert findings[0]["root"] == {"check": "switch_port_mtu", "host": "sim-sw2 Ethernet7/1"}
    assert "3 nodes' failed pings to sim-dgx3" in findings[0]["summary"]


def test_a_frozen_storage_node_is_named_with_its_addresses(pod, index):
    dead = {n.address for n in pod.host("sim-isilon2").nics}
    results = [c if c["check"] != "nfs_mounts" else nfs(pod, c["host"], dead=dead) for c in healthy(pod)]
    assert sum(c["status"] == "fail" for c in results) == 4
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1
    f = findings[0]
    assert f["host"] == "sim-isilon2" and f["root"] is None
    assert f["cause"].startswith("sim-isilon2 does not answer (addresses 198.18.5.212, 198.18.66.212): 4 DGX")
    assert f["summary"].endswith("explains 4 nfs_mounts checks")


def test_one_dgx_losing_a_mount_is_its_own_finding_not_the_storage_node(pod, index):
    results = healthy(pod)
    results[2] = nfs(pod, "sim-dgx1", own=[("/mnt/isilon4", "not mounted (planned /mnt/isilon4 from 198.18.66.212)")])
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [(f["host"], f["subject"]) for f in findings] == [("sim-dgx1", "sim-dgx1")]
    assert "not mounted" in findings[0]["cause"]


def test_an_unreachable_dgx_explains_its_checks_and_everything_towards_it(pod, index):
    addrs = {n.address for n in pod.host("sim-dgx4").nics}
    base = [c for c in healthy(pod) if c["host"] != "sim-dgx4"]
    base = [network(pod, c["host"], unreachable=addrs) if c["check"] == "network" else c for c in base]
    results = base + [missing("sim-dgx4", name, stage)
                      for name, stage in (("identity", "identity"), ("network", "network"), ("nfs_mounts", "storage"))]
    perf = sample_perf(slow=None, fio_error_host=None)
    tests = copy.deepcopy(perf["iperf"]["tests"])
    for t in tests:
        if "sim-dgx4" in (t["client"], t["server"]):
            t.update(status="error", reason="sim-dgx4 unreachable", result=None)
    results += [dict(c, status="skipped") if c.get("absolute") and c["status"] != "error" else c
                for c in evaluate_iperf(tests, EXP)]  # simulated: the absolute checks are skipped
    findings = build_findings(results, index)
    assert_partition(results, findings)
    f = findings[0]
    assert f["host"] == "sim-dgx4" and f["status"] == "error" and f["root"]["host"] == "sim-dgx4"
    assert f["cause"].startswith("sim-dgx4 does not answer: no result: the host was unreachable")
    hosts = {e["host"] for e in f["explains"]}
    assert {"sim-dgx1", "sim-dgx2", "sim-dgx3", "sim-dgx4"} <= hosts  # its own checks and the others' pings
    assert all("sim-dgx4" in e["host"] for e in f["explains"] if e["check"].startswith("iperf"))
    assert len(findings) == 1


def test_a_nic_slow_towards_storage_and_peers_is_named_across_test_kinds(pod, index):
    """Issue 17: one DGX NIC shaped to ~2 Gbit: its storage pairs (and some DGX pairs) fail; one culprit."""
    perf = sample_perf(slow=None, fio_error_host=None)
    tests = copy.deepcopy(perf["iperf"]["tests"])
    for t in tests:
        if "sim-dgx2" in (t["client"], t["server"]) and t["fabric"] == "data-66":
            factor = 0.5 if t["kind"] == "dgx-storage" else 0.7
            for k in ("received_bps", "sent_bps"):
                t["result"][k] *= factor
    results = [dict(c, stage="iperf") for c in evaluate_iperf(tests, EXP)]  # as the registry stamps them
    results = [dict(c, status="skipped") if c.get("absolute") else c for c in results]  # simulated
    failed = [c for c in results if c["status"] == "fail"]
    assert {c["kind"] for c in failed} == {"dgx-dgx", "dgx-storage"} and len(failed) >= 3
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1
    f = findings[0]
    assert f["host"] == "sim-dgx2" and f["subject"] == "sim-dgx2 enp132s0" and f["root"] is None
    assert "iperf dgx-dgx" in f["cause"] and "iperf dgx-storage" in f["cause"]


def test_a_pod_wide_shortfall_is_one_finding_and_a_slow_nic_still_stands_out(pod, index):
    perf = sample_perf(fio_error_host=None)  # 20 Gb/s on 100 Gb/s ports everywhere, sim-dgx3 data-12 at half
    results = evaluate_iperf(perf["iperf"]["tests"], EXP)
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [(f["host"], f["subject"]) for f in findings] == [("pod", "pod iperf"), ("sim-dgx3", "sim-dgx3 enp12s0")]
    assert findings[0]["cause"].startswith("40 of 40 iperf checks fail")
    assert {e["check"] for e in findings[1]["explains"]} == {"iperf_relative"}


def nccl_pair(a, b, status, busbw):
    return CheckResult("nccl_relative", "%s<->%s" % (a, b), status, expected=8.0, measured=busbw, stage="nccl",
                       subject=Subject(node=a, peer=b, step="pair"), category=JOB_PERF).to_dict()


def test_fio_and_nccl_slow_node_found_from_their_own_evaluators(pod, index):
    perf = sample_perf(slow=None, fio_error_host=None)
    for step in perf["fio"]["steps"]:
        for h, r in step["results"].items():
            if h == "sim-dgx3":
                r["result"]["aggregate"]["read"]["bw_bytes"] *= 0.4
    results = [dict(c, status="skipped") if c.get("absolute") else c
               for c in evaluate_fio(perf["fio"]["steps"], perf["nodes"], perf["storage"], EXP)]
    results.append(nccl_pair("sim-dgx3", "sim-dgx1", "fail", 3.0))
    results.append(nccl_pair("sim-dgx2", "sim-dgx4", "pass", 10.0))
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1 and findings[0]["host"] == "sim-dgx3"
    assert "fio" in findings[0]["cause"] and "nccl" in findings[0]["cause"]


def test_a_gpu_fault_explains_the_nodes_own_checks_only(pod, index):
    gpu = {"subject": Subject(node="sim-dgx3"), "category": NODE_STATE, "stage": "gpu"}
    results = healthy(pod) + [
        CheckResult("gpu_count", "sim-dgx3", "fail", expected=8, measured=7,
                    cause="sim-dgx3: 7 GPUs, model 8 (GPU 00000000:8A:00.0 missing)", **gpu).to_dict(),
        CheckResult("nccl_relative", "sim-dgx3", "fail", expected=100.0, measured=60.0,
                    cause="sim-dgx3 alone reaches 60% of the other nodes' median", stage="nccl",
                    subject=Subject(node="sim-dgx3", step="single"), category=JOB_PERF).to_dict(),
        CheckResult("gpu_count", "sim-dgx1", "pass", expected=8, measured=8, **dict(gpu, subject=Subject(
            node="sim-dgx1"))).to_dict(),
        nccl_pair("sim-dgx1", "sim-dgx3", "fail", 3.0),
        nccl_pair("sim-dgx2", "sim-dgx4", "pass", 10.0),
        CheckResult("iperf_relative", "sim-dgx1<->sim-dgx3", "fail", expected=8.0, measured=3.0, stage="iperf",
                    details={"client": "sim-dgx1", "client_nic": "enp5s0", "server": "sim-dgx3",
                             "server_nic": "enp5s0", "hosts": ["sim-dgx1", "sim-dgx3"]}, category="link_perf",
                    subject=Subject(node="sim-dgx1", nic="enp5s0", peer="sim-dgx3", peer_nic="enp5s0")).to_dict()]
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [f["subject"] for f in findings] == ["sim-dgx3", "sim-dgx1<->sim-dgx3 iperf_relative"]
    assert findings[0]["root"] == {"check": "gpu_count", "host": "sim-dgx3"}
    assert [e["check"] for e in findings[0]["explains"]] == ["gpu_count", "nccl_relative", "nccl_relative"]


def test_unknown_check_names_are_their_own_findings_ordered_by_size_then_errors(pod, index):
    results = healthy(pod) + [
        CheckResult("hosts_drift", "sim-dgx2", "fail", cause="/etc/hosts block differs", category=FILE_STATE,
                    subject=Subject(node="sim-dgx2", path="/etc/hosts")).to_dict(),
        CheckResult("nccl_env_drift", "sim-dgx1", "error", reason="cannot read nccl.env", category=FILE_STATE,
                    subject=Subject(node="sim-dgx1", path="/etc/dgxpod/nccl.env")).to_dict(),
        CheckResult("brand_new", "pod", "fail", cause="something", category=POD_STATE, subject=Subject()).to_dict()]
    dead = {n.address for n in pod.host("sim-isilon1").nics}
    results = [nfs(pod, c["host"], dead=dead) if c["check"] == "nfs_mounts" else c for c in results]
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [f["subject"] for f in findings] == ["sim-isilon1", "sim-dgx1 nccl_env_drift", "pod brand_new",
                                                "sim-dgx2 hosts_drift"]
    assert findings[1]["status"] == "error" and findings[1]["cause"] == "cannot read nccl.env"
    assert finding_line(findings[3]) == "F4 [fail] sim-dgx2 hosts_drift: /etc/hosts block differs (1 check)"


def test_without_a_pod_index_every_check_still_has_one_finding(pod):
    results = [c if c["check"] != "nfs_mounts" else nfs(pod, c["host"], dead={"198.18.66.212"}) for c in healthy(pod)]
    results += [missing("sim-dgx9", "identity", "identity")]
    findings = build_findings(results, None)
    assert_partition(results, findings)
    assert [(f["host"], f["status"], len(f["explains"])) for f in findings] == [
        ("198.18.66.212", "fail", 4), ("sim-dgx9", "error", 1)]
    assert findings[0]["cause"].startswith("the node at does not answer (address 198.18.66.212): 4 DGX")


def test_with_findings_puts_them_before_the_checks_in_schema_5(pod, index):
    doc = {"schema_version": 3, "pod": "p", "summary": {}, "checks": [
        CheckResult("x", "sim-dgx1", "fail", cause="c", subject=Subject(node="sim-dgx1"),
                    category=NODE_STATE).to_dict()], "measurements": {}}
    out = with_findings(doc, index)
    assert list(out) == ["schema_version", "pod", "summary", "findings", "checks", "measurements"]
    assert out["schema_version"] == 5 and out["findings"][0]["explains"] == [
        {"check": "x", "host": "sim-dgx1", "status": "fail"}]


def test_wrong_address_and_qos_lines_are_the_nodes_own_faults(pod, index):
    """nic_state's diff lines carry addresses and an arrow too: they are not pings to someone."""
    results = healthy(pod)
    own = ["enp12s0 address: 198.18.12.99/24 -> (absent)", "enp12s0 address: (absent) -> 198.18.12.13/24"]
    addr = pod.host("sim-dgx3").nic("enp12s0").address
    qos = Problem("enp5s0 (mlx5_0): QoS trust pcp, model dscp", NODE_STATE, Subject(node="sim-dgx1", nic="enp5s0",
                                                                                     hca="mlx5_0"))
    for i, c in enumerate(results):
        if c["check"] == "network":
            results[i] = network(pod, c["host"], own=own if c["host"] == "sim-dgx3" else (), unreachable={addr},
                                 extra=[qos] if c["host"] == "sim-dgx1" else ())
    assert results[1]["check"] == "network" and results[1]["host"] == "sim-dgx1" and results[1]["status"] == "fail"
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [(f["host"], f["subject"]) for f in findings] == [
        ("sim-dgx3", "sim-dgx3 enp12s0 (sim-sw1 Ethernet7/1)"), ("sim-dgx1", "sim-dgx1 enp5s0 (sim-sw1 Ethernet1/1)")]
    assert findings[0]["cause"] == "address 198.18.12.99/24, model (absent); address (absent), model 198.18.12.13/24"
    # sim-dgx1's network check shows a fault of its own: it stays under that one (each check under one finding)
    assert findings[0]["summary"].endswith("explains 2 nodes' failed pings to sim-dgx3")
    assert findings[1]["cause"] == "enp5s0 (mlx5_0): QoS trust pcp, model dscp"
    assert findings[1]["explains"] == [{"check": "network", "host": "sim-dgx1", "status": "fail"}]


def test_mounts_missing_on_two_dgx_are_not_a_storage_node_that_does_not_answer(pod, index):
    results = healthy(pod)
    for i in (2, 5):
        h = results[i]["host"]
        results[i] = nfs(pod, h, own=[("/mnt/isilon4", "not mounted (planned /mnt/isilon4 from %s)" % (
            mount_plan(pod, h)["mounts"][-1]["ip"]))])
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [f["subject"] for f in findings] == ["sim-dgx1", "sim-dgx2"]


def test_a_frozen_storage_node_explains_the_fio_errors_too(pod, index):
    dead = {n.address for n in pod.host("sim-isilon1").nics}
    results = [c if c["check"] != "nfs_mounts" else nfs(pod, c["host"], dead=dead) for c in healthy(pod)]
    perf = sample_perf(slow=None, fio_error_host=None)
    steps = copy.deepcopy(perf["fio"]["steps"][-1:])
    for h in steps[0]["results"]:
        steps[0]["results"][h] = {"status": "error", "reason": "/mnt/isilon1/fio did not answer within 15s",
                                  "result": {}}
    results += evaluate_fio(steps, perf["nodes"], perf["storage"], EXP)
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1 and findings[0]["host"] == "sim-isilon1" and findings[0]["status"] == "error"
    assert {e["check"] for e in findings[0]["explains"]} == {"nfs_mounts", "fio_read", "fio_relative", "fio_scaling"}


def test_a_nic_whose_only_failures_are_its_storage_pairs_is_the_culprit(pod, index):
    """Issue 17's 2 Gbit case: its DGX<->DGX tests pass, its two DGX<->storage tests fail, each saying 'only
    this pair is slow'; the same NIC is in both, so the NIC is named."""
    perf = sample_perf(slow=None, fio_error_host=None)
    tests = copy.deepcopy(perf["iperf"]["tests"])
    for t in tests:
        if t["client"] == "sim-dgx2" and t["kind"] == "dgx-storage" and t["fabric"] == "data-66":
            for k in ("received_bps", "sent_bps"):
                t["result"][k] *= 0.5
    results = [dict(c, status="skipped") if c.get("absolute") else c for c in evaluate_iperf(tests, EXP)]
    failed = [c for c in results if c["status"] == "fail"]
    assert {c["kind"] for c in failed} == {"dgx-storage"} and len(failed) == 2
    assert all("only this pair is slow" in c["cause"] for c in failed)
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert [(f["host"], f["subject"]) for f in findings] == [("sim-dgx2", "sim-dgx2 enp132s0")]


def test_a_slow_nic_is_named_even_with_one_noisy_pair_on_another_nic_of_its_node(pod, index):
    """Seen in the drill on a busy simulator: sim-dgx2 enp12s0 shaped (its three DGX pairs at ~48% of their
    peers) and, by chance, one of its storage pairs on enp5s0 at 54%. The finding is the NIC, explaining its
    three pairs; the stray pair is a finding of its own, after it - not "sim-dgx2 is low" hiding the NIC."""
    perf = sample_perf(slow=None, fio_error_host=None)
    tests = copy.deepcopy(perf["iperf"]["tests"])
    stray = None
    for t in tests:
        if "sim-dgx2" in (t["client"], t["server"]) and t["fabric"] == "data-12":
            for k in ("received_bps", "sent_bps"):
                t["result"][k] *= 0.45
        elif stray is None and t["client"] == "sim-dgx2" and t["kind"] == "dgx-storage" and t["fabric"] == "data-5":
            stray = t  # low enough to fail (profile: 80% of its peers), not enough to make enp5s0 slow
            for k in ("received_bps", "sent_bps"):
                t["result"][k] *= 0.7
    results = [dict(c, status="skipped") if c.get("absolute") else c for c in evaluate_iperf(tests, EXP)]
    failed = [c for c in results if c["status"] == "fail"]
    assert len([c for c in failed if c.get("fabric") == "data-12"]) == 3 and len(failed) == 4, failed
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert findings[0]["subject"] == "sim-dgx2 enp12s0", [f["summary"] for f in findings]
    assert len(findings[0]["explains"]) == 3 and all(e["check"] == "iperf_relative" for e in findings[0]["explains"])
    assert len(findings) == 2 and "enp5s0" in findings[1]["summary"], [f["summary"] for f in findings]


def test_a_node_slow_on_its_own_too_is_the_node_not_its_links(pod, index):
    """Issue 46: a DGX slow in every NCCL run, its single-node run included, is told its links are fine and the
    node (GPUs, NVLink, CPU) is slow; slow only in pairs, the cable advice stays."""
    single = CheckResult("nccl_relative", "sim-dgx3", "fail", expected=100.0, measured=55.0, stage="nccl",
                         cause="sim-dgx3 alone reaches 55% of the other nodes' median",
                         subject=Subject(node="sim-dgx3", step="single"), category=JOB_PERF).to_dict()
    others = [CheckResult("nccl_relative", h, "pass", expected=100.0, measured=100.0, stage="nccl",
                          subject=Subject(node=h, step="single"), category=JOB_PERF).to_dict()
              for h in ("sim-dgx1", "sim-dgx2", "sim-dgx4")]
    pairs = [nccl_pair("sim-dgx3", "sim-dgx1", "fail", 3.0), nccl_pair("sim-dgx2", "sim-dgx3", "fail", 3.0),
             nccl_pair("sim-dgx2", "sim-dgx4", "pass", 10.0), nccl_pair("sim-dgx1", "sim-dgx4", "pass", 10.0)]
    findings = build_findings([single] + others + pairs, index)
    assert [f["subject"] for f in findings] == ["sim-dgx3"]
    assert "the node itself is slow, not its links" in findings[0]["cause"], findings[0]["cause"]
    assert "check its cable" not in findings[0]["cause"]
    findings = build_findings(others + pairs, index)  # slow in pairs only: its links
    assert [f["subject"] for f in findings] == ["sim-dgx3"] and "check its cable" in findings[0]["cause"]


def test_a_storage_port_dropping_full_size_frames_is_an_mtu_path_not_a_node_that_does_not_answer(pod, index):
    """Issue 46: sim-isilon2's data port drops full-size frames while small ones pass (its MTU below the fabric's):
    the NFS I/O over the connections already open hangs on every DGX, and every DGX's full-MTU ping to that address
    fails while pod_ping_mesh's small ping answers. One finding on sim-isilon2 that says so, not 'does not answer'."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "library"))
    import pod_ping_mesh
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import eval as network_eval
    port = next(n for n in pod.host("sim-isilon2").nics if n.name == "40gige-1")

    class Ran:
        def __init__(self, answered):
            self.rc, self.timed_out = (0 if answered else 1), False
            self.stdout = "2 packets transmitted, %d received, %s%% packet loss, time 201ms\n" % (
                (2, 0) if answered else (0, 100))
            self.stderr = ""

    def run(cmd, limit):  # the full-size, don't-fragment ping is lost; ping's default 56 bytes answer
        return Ran("-M" not in cmd)

    results = []
    for c in healthy(pod):
        if c["check"] == "network":
            host = c["host"]
            probed = [pod_ping_mesh.probe(t, "ping", run=run) for t in ping_targets(pod, host)
                      if t["address"] == port.address]
            assert probed and all(r["small_ok"] and not r["ok"] for r in probed), probed
            mesh = {"checked": len(ping_targets(pod, host)),
                    "unanswered": [dict(r, text=pod_ping_mesh.failure_text(host, r)) for r in probed]}
            c = network_eval.network_result(host, network_eval.network_reading({"changes": [], "differences": []},
                                                                               mesh)).but(stage="network").to_dict()
            assert "small pings answer" in c["problems"][0], c["problems"]
        elif c["check"] == "nfs_mounts":
            c = nfs(pod, c["host"], dead={port.address}, detail="read failed: did not finish within 20s")
        results.append(c)
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1, [f["summary"] for f in findings]
    f = findings[0]
    assert f["host"] == "sim-isilon2" and "does not answer" not in f["cause"], f["cause"]
    assert f["cause"].startswith("sim-isilon2 (address %s): full-MTU frames (MTU 9000) fail while small ones pass"
                                 % port.address), f["cause"]
    assert "4 DGX (sim-dgx1, sim-dgx2, sim-dgx3, sim-dgx4)" in f["cause"]
    assert {e["check"] for e in f["explains"]} == {"network", "nfs_mounts"}


def test_a_peer_that_answers_no_ping_at_all_still_does_not_answer(pod, index):
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "library"))
    import pod_ping_mesh

    class Lost:
        rc, timed_out, stderr = 1, False, ""
        stdout = "2 packets transmitted, 0 received, 100% packet loss, time 1001ms\n"

    t = ping_targets(pod, "sim-dgx1")[0]
    r = pod_ping_mesh.probe(t, "ping", run=lambda cmd, limit: Lost())
    assert (r["ok"], r["small_ok"], r["detail"]) == (False, False, "2 packets transmitted, 0 received, 100% packet "
                                                                     "loss, time 1001ms")


def _recorded_network(pod, bad_host=None, bad_nic="enp132s0"):
    """pod_stages.network as validate_network.yml records it: every DGX's reading, ``bad_host``'s NIC at MTU 1500
    (the kernel difference dgx_nic_apply reports) and every other DGX's full-MTU pings to it lost."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.eval import network_reading
    hosts = {}
    bad_addr = {n.address for n in pod.host(bad_host).nics if n.name == bad_nic} if bad_host else set()
    for h in dgx(pod):
        if h == bad_host:
            state = {"changes": ["%s mtu: 1500 -> 9000" % bad_nic],
                     "differences": [{"nic": bad_nic, "field": "mtu", "before": 1500, "after": 9000}]}
        else:
            state = {"changes": [], "differences": []}
        lost = [dict(t, ok=False, small_ok=True, detail="100% packet loss", text=ping_line(h, t))
                for t in ping_targets(pod, h) if t["address"] in bad_addr]
        hosts[h] = network_reading(state, {"checked": len(ping_targets(pod, h)), "unanswered": lost})
    return {"hosts": hosts}


def test_a_job_is_blocked_by_the_failed_checks_of_its_nodes_and_lands_under_their_finding(pod, index):
    """Issue 46: one data NIC at MTU 1500. The network stage found it; the training stage asks first
    (report/prerequisites.job_blockers), does not start, and its one error goes under the NIC's finding."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.prerequisites import (TRAINING_NEEDS,
                                                                                              job_blockers)
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages
    recorded = {"network": _recorded_network(pod, "sim-dgx3")}
    blockers = job_blockers(recorded, TRAINING_NEEDS, dgx(pod))
    assert [(b["stage"], b["check"], b["host"]) for b in blockers] == [("network", "network", h) for h in dgx(pod)]
    assert "MTU 1500" in blockers[2]["text"] or "mtu: 1500" in blockers[2]["text"]
    assert job_blockers(recorded, TRAINING_NEEDS, ["sim-dgx9"]) == []  # a job on other nodes is not blocked
    assert job_blockers({}, TRAINING_NEEDS, dgx(pod)) == []  # nothing recorded yet: nothing blocks
    assert job_blockers({"network": _recorded_network(pod)}, TRAINING_NEEDS, dgx(pod)) == []  # healthy
    recorded["training"] = {"nodes": dgx(pod), "blocked": blockers}
    checks, _ = evaluate_stages(recorded, EXP, {}, run_tags=["training"])
    train = next(c for c in checks if c["check"] == "train_job")
    assert train["status"] == "error" and train["reason"].startswith("not run: the training job across 4 DGX depends")
    assert "pod_run_blocked_jobs=true" in train["reason"]
    assert train["blocked_by"][0] == {"stage": "network", "check": "network", "host": "sim-dgx1"}
    findings = build_findings(checks, index)
    assert_partition(checks, findings)
    assert len(findings) == 1, [f["summary"] for f in findings]
    assert findings[0]["subject"].startswith("sim-dgx3 enp132s0") and "MTU 1500, model 9000" in findings[0]["cause"]
    assert {"check": "train_job", "host": "pod", "status": "error"}.items() <= next(
        e for e in findings[0]["explains"] if e["check"] == "train_job").items()


def test_a_blocked_job_whose_blockers_are_not_placed_is_a_finding_of_its_own(pod, index):
    c = CheckResult("nccl_run", "all DGX", "error", reason="not run", subject=Subject(nodes=("sim-dgx1",)),
                    category=JOB_STATE, details={"blocked_by": [{"check": "mpi_containers", "host": "sim-dgx9"}]},
                    stage="nccl").to_dict()
    findings = build_findings(healthy(pod) + [c], index)
    assert [(f["host"], f["explains"][0]["check"]) for f in findings] == [("all DGX", "nccl_run")]


def test_a_job_that_ran_and_failed_over_a_frozen_storage_node_is_explained_by_that_node(pod, index):
    """The training job ran (no mounts stage in this run to block it... or it ran anyway) and every DGX's ranks
    failed reading: the storage node the mounts check found silent explains the job's errors."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import eval as training_eval
    dead = {n.address for n in pod.host("sim-isilon2").nics}
    results = [c if c["check"] != "nfs_mounts" else nfs(pod, c["host"], dead=dead) for c in healthy(pod)]
    mounts = {h: {m["path"]: {"storage_host": pod.owner(m["ip"]).host, "ip": m["ip"]}
                  for m in mount_plan(pod, h)["mounts"]} for h in dgx(pod)}
    m = {"nodes": dgx(pod), "mounts": mounts, "dataset": {"manifest": {"files": 10}},
         "passes": {"cold": {"ok": False, "error": "gloo: Timed out waiting 1800000ms",
                             "failed_nodes": {h: "rank 0: gloo timeout" for h in dgx(pod)}}}}
    results += [r.but(stage="training").to_dict() for r in training_eval.evaluate(m, {}, {})]
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1 and findings[0]["host"] == "sim-isilon2", [f["summary"] for f in findings]
    assert sum(e["check"] == "train_job" for e in findings[0]["explains"]) == 4


def test_one_job_failing_on_every_node_with_one_error_is_one_finding(pod, index):
    """No state check explains it (the training stage ran alone): the job's per-node errors with the same words are
    one finding for the job, not one per DGX repeating every rank's error (issue 46)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import eval as training_eval
    m = {"nodes": dgx(pod), "mounts": {}, "dataset": {"manifest": {"files": 10}},
         "passes": {"cold": {"ok": False, "error": "rank 2 on sim-dgx3: FileNotFoundError: /mnt/isilon3/x",
                             "failed_nodes": {h: "rank: error" for h in dgx(pod)}}}}
    results = [r.but(stage="training").to_dict() for r in training_eval.evaluate(m, {}, {})]
    findings = build_findings(results, index)
    assert_partition(results, findings)
    assert len(findings) == 1 and findings[0]["host"] == "pod", [f["summary"] for f in findings]
    assert findings[0]["subject"] == "train_job (the job on sim-dgx1, sim-dgx2, sim-dgx3, sim-dgx4)"
    assert len(findings[0]["explains"]) == 4
