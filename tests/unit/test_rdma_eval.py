"""The RDMA stage's evaluation (module_utils/network/rdma_eval.py): each check seen passing and failing, a slow and a
broken HCA named with its node, NIC and HCA - by the check and by the report's top finding (report/findings.py)."""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import rdma_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import rdma_plan as rp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (LINK_PERF, NODE_STATE,
    apply_simulated_policy, contradiction)

DGX = ["dgx1", "dgx2", "dgx3", "dgx4"]
FABRICS = [{"name": "rail-0", "kind": "ethernet", "carries": ["compute"]},
           {"name": "rail-1", "kind": "ethernet", "carries": ["compute"]}]
NICS = {"rail-0": ("enp5s0", "mlx5_0"), "rail-1": ("enp12s0", "mlx5_1")}
EXP = {"rdma": {"bw_fraction_of_port_rate": {"value": 0.9, "source": "test source"},
                "bw_relative_fraction_of_peers": {"value": 0.8, "source": "test rule"},
                "lat_max_of_peers": {"value": 1.5, "source": "test rule"}}}


def hosts():
    return {h: {"nics": [{"name": NICS[f][0], "rdma_device": NICS[f][1], "fabric": f,
                          "address": "10.%d.0.%d" % (k, i), "speed": 100, "switch": "sw%d" % k,
                          "switch_port": "Ethernet%d/1" % i}
                         for k, f in enumerate(sorted(NICS))]} for i, h in enumerate(DGX, 1)}


def side_run(status="ok", gbps=None, lat=None, reason=None):
    rows = [{"bytes": 65536, "iterations": 1000, "bw_average_gbps": gbps}] if gbps is not None else \
        ([{"bytes": 2, "iterations": 1000, "t_typical": lat, "t_avg": lat}] if lat is not None else [])
    return {"status": status, "reason": reason, "result": {"ok": status == "ok", "rows": rows}}


def records(gbps=lambda t: 95.0, lat=lambda t: 2.0, broken=None, words="perftest: Failed to modify QP 9 to RTR"):
    """Every planned test as recorded: ``gbps(t)``/``lat(t)`` its readings; ``broken`` an endpoint (host, nic)
    whose runs fail with ``words`` (its peers' with the cut exchange)."""
    out = []
    for r in rp.rdma_plan(hosts(), DGX, FABRICS):
        for t in r["tests"]:
            rec = dict(t)
            ends = {"client": (t["client"], t["client_nic"]), "server": (t["server"], t["server_nic"])}
            if broken in ends.values():
                runs = {side: side_run("failed", reason=words if ends[side] == broken else
                                       "perftest: Failed to exchange data between server and clients")
                        for side in ends}
                rec.update(status="failed", reason="%s: %s" % (broken[0], words), bw=runs, lat=runs)
            else:
                rec.update(status="ok", reason=None,
                           bw={s: side_run(gbps=gbps(t)) for s in ends}, lat={s: side_run(lat=lat(t)) for s in ends})
            out.append(rec)
    return out


def on(t, host, nic):
    return (t["client"], t["client_nic"]) == (host, nic) or (t["server"], t["server_nic"]) == (host, nic)


def by(checks, name):
    return [c for c in checks if c.check == name]


def pod_index():
    return {"pod": "test", "dgx": DGX, "storage": [], "switches": ["sw0", "sw1"],
            "nics": {h: [dict(n, carries=["compute"]) for n in v["nics"]] for h, v in hosts().items()}}


def top_finding(checks):
    return build_findings([c.but(stage="rdma").to_dict() for c in checks], pod_index())[0]


def test_a_healthy_pod_passes_every_check_on_every_rail():
    checks = rdma_eval.rdma_checks(records(), EXP)
    assert {c.check for c in checks} == set(rdma_eval.CHECKS)
    assert len(by(checks, "rdma_path")) == 12 and {c.status for c in checks} == {"pass"}
    assert all(c.category == LINK_PERF and c.subject.hca and c.subject.peer_nic for c in checks)
    assert {c.subject.fabric for c in checks} == {"rail-0", "rail-1"}
    bw = by(checks, "rdma_bw")[0]
    assert bw.absolute and bw.expected == 90.0 and bw.measured == 95.0 and bw.source.startswith("test source")
    assert not any(contradiction(c) for c in checks)


def test_below_the_port_rate_fails_the_absolute_check_which_the_simulated_pod_skips():
    checks = rdma_eval.rdma_checks(records(gbps=lambda t: 60.0), EXP)
    assert {c.status for c in by(checks, "rdma_bw")} == {"fail"}
    assert "60% of the 100 Gb/s port rate" in by(checks, "rdma_bw")[0].cause
    assert {c.status for c in by(checks, "rdma_bw_relative")} == {"pass"}  # all alike: no one link stands out
    sim = apply_simulated_policy(checks, True)
    assert {c.status for c in sim if c.check == "rdma_bw"} == {"skipped"}
    assert {c.status for c in sim if c.check == "rdma_bw_relative"} == {"pass"}


def test_one_slow_hca_fails_every_pair_of_its_rail_and_is_the_top_finding():
    checks = rdma_eval.rdma_checks(records(gbps=lambda t: 40.0 if on(t, "dgx2", "enp12s0") else 95.0), EXP)
    failed = [c for c in by(checks, "rdma_bw_relative") if c.status == "fail"]
    assert len(failed) == 3 and all("dgx2" in (c.subject.node, c.subject.peer) for c in failed)
    assert all(c.subject.fabric == "rail-1" for c in failed)
    assert "dgx2 enp12s0 (HCA mlx5_1: its pairs run at 42% of their peers)" in failed[0].cause
    assert not [c for c in checks if c.status == "fail" and c.subject.fabric == "rail-0"]
    f = top_finding(checks)
    assert f["host"] == "dgx2" and f["subject"] == "dgx2 enp12s0" and "rdma rail rail-1" in f["cause"]


def test_a_pair_slow_on_its_own_fails_only_itself():
    slow = lambda t: 50.0 if {t["client"], t["server"]} == {"dgx1", "dgx3"} and t["fabric"] == "rail-0" else 95.0  # noqa: E731
    checks = rdma_eval.rdma_checks(records(gbps=slow), EXP)
    failed = [c for c in by(checks, "rdma_bw_relative") if c.status == "fail"]
    assert len(failed) == 1 and "only this pair is slow" in failed[0].cause


def test_latency_far_above_the_rail_s_peers_fails_its_pairs():
    checks = rdma_eval.rdma_checks(records(lat=lambda t: 9.0 if on(t, "dgx4", "enp5s0") else 2.0), EXP)
    failed = [c for c in by(checks, "rdma_lat") if c.status == "fail"]
    assert len(failed) == 3 and all(c.unit == "usec" and c.measured == 9.0 for c in failed)
    assert failed[0].details["compare"] == "<= " and failed[0].expected == 3.0
    assert "latency 9.00 usec = 4.5x the median" in failed[0].cause and "dgx4 enp5s0" in failed[0].cause
    assert {c.status for c in by(checks, "rdma_bw_relative")} == {"pass"}
    assert not any(contradiction(c) for c in checks)


def test_a_broken_hca_fails_its_paths_as_that_node_s_fault_in_perftest_s_words():
    checks = rdma_eval.rdma_checks(records(broken=("dgx3", "enp12s0")), EXP)
    failed = [c for c in by(checks, "rdma_path") if c.status == "fail"]
    assert len(failed) == 3
    for c in failed:
        assert c.category == NODE_STATE and (c.subject.node, c.subject.nic, c.subject.hca) == ("dgx3", "enp12s0",
                                                                                             "mlx5_1")
        assert "Failed to modify QP 9 to RTR" in c.cause and c.problems[0].subject.hca == "mlx5_1"
    # no bandwidth or latency rows for a pair that measured nothing; the rail's other pairs pass
    assert not [c for c in checks if c.check != "rdma_path" and "dgx3" in (c.subject.node, c.subject.peer)
                and c.subject.fabric == "rail-1"]
    assert {c.status for c in checks if c.check != "rdma_path"} == {"pass"}
    f = top_finding(checks)
    assert f["host"] == "dgx3" and "dgx3 enp12s0" in f["subject"]
    assert "RDMA broken on HCA mlx5_1" in f["cause"] and "to RTR" in f["cause"]


def test_one_broken_pair_is_that_pair_s_failure():
    recs = records()
    t = recs[0]
    t.update(status="failed", reason="dgx1 mlx5_0 (client): perftest: Couldn't connect to 10.0.0.4:18515")
    checks = rdma_eval.rdma_checks(recs, EXP)
    path = by(checks, "rdma_path")[0]
    assert path.status == "fail" and path.category == LINK_PERF and "Couldn't connect" in path.cause
    assert "only this pair" in path.cause


def test_a_host_that_did_not_answer_is_an_error():
    recs = records()
    recs[0].update(status="error", unreachable=True, reason="dgx4 did not answer: ssh timeout", bw={}, lat={})
    checks = rdma_eval.rdma_checks(recs, EXP)
    path = by(checks, "rdma_path")[0]
    assert path.status == "error" and path.unreachable and "dgx4 did not answer" in path.reason


def test_a_run_without_a_row_is_an_error_and_a_lone_rail_link_is_skipped():
    recs = [r for r in records() if r["fabric"] == "rail-0"][:1]
    recs[0]["bw"] = {"client": side_run(), "server": side_run()}
    checks = rdma_eval.rdma_checks(recs, EXP)
    assert by(checks, "rdma_bw")[0].status == "error"
    assert by(checks, "rdma_bw_relative")[0].status == "skipped"
    assert by(checks, "rdma_lat")[0].status == "skipped" and "no other link" in by(checks, "rdma_lat")[0].reason


def test_markdown_lists_every_pair():
    checks = rdma_eval.rdma_checks(records(broken=("dgx3", "enp12s0")), EXP)
    doc = {"checks": [c.but(stage="rdma").to_dict() for c in checks]}
    lines = rdma_eval.markdown(doc)
    assert lines[0] == "## RDMA per rail (perftest)" and len([x for x in lines if x.startswith("| rail-")]) == 12
    assert any("**rdma_path**" in x and "mlx5_1" in x for x in lines)
