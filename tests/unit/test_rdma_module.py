"""pod_rdma (library/pod_rdma.py) and the RDMA stage's plan (module_utils/network/rdma_plan.py): the perftest command
lines, each run judged from perftest's real outputs (tests/unit/fixtures/fabric, sources in its README.md) through an
injected runner, every host's part of a schedule, the records; and the module run by Ansible on localhost against the
simulator's perftest stand-ins (sim/standins/ib_write_bw) over 127.0.0.1."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

import pod_rdma
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import Ran
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import rdma_plan as rp
from inventory_util import ROOT

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "fabric")
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
STANDINS = os.path.join(ROOT, "sim", "standins")

FABRICS = [{"name": "rail-a", "kind": "ethernet", "carries": ["compute"]},
           {"name": "rail-b", "kind": "infiniband", "carries": ["compute", "storage"]},
           {"name": "stor", "kind": "ethernet", "carries": ["storage"]}]


def fixture(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def hosts(n=4):
    out = {}
    for i in range(1, n + 1):
        out["dgx%d" % i] = {"nics": [
            {"name": "eth0", "rdma_device": "mlx5_0", "fabric": "rail-a", "address": "10.0.1.%d" % i, "speed": 100},
            {"name": "ib1", "rdma_device": "mlx5_1", "fabric": "rail-b", "address": "10.0.2.%d" % i, "speed": 200},
            {"name": "eth9", "fabric": "stor", "address": "10.0.9.%d" % i, "speed": 100}]}
    return out


P = {"bw_duration": 5, "bw_size": 65536, "qps": 1, "lat_iterations": 1000, "lat_size": 2, "use_cuda": False,
     "cuda_device": 0, "gid_index": None, "sysfs_root": "/", "connect_retry": 0.0, "timeout": 5,
     "latency_tool": "ib_write_lat"}


def run(tool="bw", side="client", link="ethernet"):
    return {"id": "rdma1:rail-a:dgx1-dgx2", "tool": tool, "side": side, "hca": "mlx5_0", "port": 18515,
            "address": "10.0.1.1", "peer": "dgx2", "peer_address": "10.0.1.2", "link_layer": link, "offset": 0.0}


# ------------------------------------------------------------------------------------------ plan

def test_the_plan_pairs_dgx_on_every_rail_with_their_hcas_and_two_ports_a_test():
    plan = rp.rdma_plan(hosts(4), ["dgx1", "dgx2", "dgx3", "dgx4"], FABRICS)
    assert [len(r["tests"]) for r in plan] == [4, 4, 4]  # 3 rounds, 2 pairs on each of the 2 rails
    tests = [t for r in plan for t in r["tests"]]
    assert {t["fabric"] for t in tests} == {"rail-a", "rail-b"}  # the storage-only fabric is no rail
    pairs = {(t["fabric"], frozenset((t["client"], t["server"]))) for t in tests}
    assert len(pairs) == 12  # every pair once per rail
    t = next(t for t in tests if t["fabric"] == "rail-b")
    assert (t["client_hca"], t["server_hca"], t["link_layer"], t["link_gbps"]) == ("mlx5_1", "mlx5_1", "infiniband",
                                                                                    200)
    ports = [p for t in tests for p in (t["port"], t["lat_port"])]
    assert min(ports) == rp.BASE_PORT
    for r in plan:  # no server port twice in a round, bandwidth and latency ports apart
        used = [(t["server"], p) for t in r["tests"] for p in (t["port"], t["lat_port"])]
        assert len(used) == len(set(used))
    assert all(t["id"].startswith("rdma%d:" % t["round"]) for t in tests)


def test_a_nic_without_rdma_device_takes_no_part():
    h = hosts(3)
    h["dgx3"]["nics"][0].pop("rdma_device")
    plan = rp.rdma_plan(h, ["dgx1", "dgx2", "dgx3"], FABRICS)
    assert not [t for r in plan for t in r["tests"] if t["fabric"] == "rail-a" and "dgx3" in (t["client"], t["server"])]


def test_every_host_gets_its_servers_and_clients_at_their_offsets():
    plan = rp.rdma_plan(hosts(4), ["dgx1", "dgx2", "dgx3", "dgx4"], FABRICS)
    per_round = rp.round_seconds(5, 2)
    parts = rp.host_parts(plan, per_round, 5)
    assert sorted(parts) == ["dgx1", "dgx2", "dgx3", "dgx4"]
    t = plan[1]["tests"][0]
    srv = [x for x in parts[t["server"]]["tests"] if x["id"] == t["id"]]
    cli = [x for x in parts[t["client"]]["tests"] if x["id"] == t["id"]]
    assert [(x["tool"], x["side"], x["offset"]) for x in srv] == [("bw", "server", per_round),
                                                                  ("lat", "server", per_round + 1 + 5 + 1)]
    assert [(x["tool"], x["side"], x["offset"]) for x in cli] == [("bw", "client", per_round + 1),
                                                                  ("lat", "client", per_round + 1 + 5 + 1 + 1)]
    assert cli[0]["peer_address"] == t["server_address"] and cli[1]["port"] == t["lat_port"]
    assert rp.schedule_seconds(plan, per_round) == 3 * per_round


def test_a_plan_that_breaks_its_invariants_is_refused():
    plan = rp.rdma_plan(hosts(4), ["dgx1", "dgx2", "dgx3", "dgx4"], FABRICS)
    plan[0]["tests"].append(dict(plan[0]["tests"][0], id="again"))
    with pytest.raises(ValueError, match="invariants"):
        rp.host_parts(plan, 10, 5)


# ------------------------------------------------------------------------------------------ the module's runs

def test_perftest_command_lines():
    argv = pod_rdma.perftest_argv("/usr/bin/ib_write_bw", run("bw", "client"), P, 3)
    assert argv == ["/usr/bin/ib_write_bw", "-d", "mlx5_0", "-p", "18515", "-D", "5", "-s", "65536", "-q", "1",
                    "--report_gbits", "-F", "-x", "3", "10.0.1.2"]
    argv = pod_rdma.perftest_argv("ib_write_lat", run("lat", "server"), dict(P, use_cuda=True, cuda_device=2), None)
    assert argv == ["ib_write_lat", "-d", "mlx5_0", "-p", "18515", "-n", "1000", "-s", "2", "-F", "--use_cuda=2"]


def test_the_gid_index_comes_from_sysfs_on_roce_and_is_none_on_infiniband(tmp_path):
    gdir = tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for i, (gid, typ) in enumerate([("fe80:0000:0000:0000:526b:4bff:fe01:cef0", "IB/RoCE v1"),
                                    ("fe80:0000:0000:0000:526b:4bff:fe01:cef0", "RoCE v2"),
                                    ("0000:0000:0000:0000:0000:ffff:0a00:0101", "IB/RoCE v1"),
                                    ("0000:0000:0000:0000:0000:ffff:0a00:0101", "RoCE v2")]):
        (gdir / "gids").mkdir(parents=True, exist_ok=True)
        (gdir / "gid_attrs" / "types").mkdir(parents=True, exist_ok=True)
        (gdir / "gids" / str(i)).write_text(gid + "\n")
        (gdir / "gid_attrs" / "types" / str(i)).write_text(typ + "\n")
    p = dict(P, sysfs_root=str(tmp_path))
    assert pod_rdma.gid_for(run(), p, {}) == (3, None)
    assert pod_rdma.gid_for(run(link="infiniband"), p, {}) == (None, None)
    assert pod_rdma.gid_for(run(), dict(p, gid_index=7), {}) == (7, None)
    gid, err = pod_rdma.gid_for(dict(run(), address="10.0.1.9"), p, {})
    assert gid is None and "10.0.1.9" in err and "mlx5_0" in err


class FakeRunner:
    """run_tool / start_tool answering each call with the next text of ``outputs`` (a client whose server does not
    listen yet gets the connect error first, as in perftest PR 228)."""

    def __init__(self, outputs, rc=0):
        self.outputs, self.rc, self.calls = list(outputs), rc, []

    def ran(self, argv):
        self.calls.append(argv)
        text = self.outputs.pop(0)
        return Ran(self.rc if text else 1, text, "", False, 0.1, argv, None)

    def run_tool(self, argv, timeout, merge_stderr=False):
        return self.ran(argv)

    def start_tool(self, argv, merge_stderr=False):
        runner = self

        class Started:
            def finish(self, timeout):
                return runner.ran(argv)
        return Started()


def one(monkeypatch, outputs, r, p=P):
    fake = FakeRunner(outputs)
    monkeypatch.setattr(pod_rdma, "run_tool", fake.run_tool)
    monkeypatch.setattr(pod_rdma, "start_tool", fake.start_tool)
    tools = {"bw": "/usr/bin/ib_write_bw", "lat": "/usr/bin/ib_write_lat"}
    return pod_rdma.run_one(r, dict(p, gid_index=3), tools, time.time(), {}, "dgx1"), fake


def test_a_client_run_gives_perftest_s_reading(monkeypatch):
    out, fake = one(monkeypatch, [fixture("ib_write_bw__cx7_ndr_dac_guide_client_gbits.txt")], run())
    assert out["status"] == "ok" and out["reason"] is None
    assert out["result"]["rows"][-1]["bw_average_gbps"] == 392.34 and out["gid_index"] == 3
    assert len(fake.calls) == 1


def test_a_client_retries_while_its_server_does_not_listen(monkeypatch):
    outs = [fixture("ib_write_bw__perftest_pr228_connect_error.txt"),
            fixture("ib_write_bw__cx7_ndr_dac_guide_client_gbits.txt")]
    out, fake = one(monkeypatch, outs, run(), dict(P, connect_retry=30.0))
    assert out["status"] == "ok" and len(fake.calls) == 2


def test_a_server_that_never_listens_is_a_failure_in_perftest_s_words(monkeypatch):
    out, _ = one(monkeypatch, [fixture("ib_write_bw__perftest_pr228_connect_error.txt")], run())
    assert out["status"] == "failed"
    assert out["reason"].startswith("perftest: Couldn't connect to 192.168.125.211:18515")


def test_a_completion_error_is_a_failure_with_perftest_s_words(monkeypatch):
    out, _ = one(monkeypatch, [fixture("ib_write_bw__perftest_issue173_completion_error.txt")], run())
    assert out["status"] == "failed" and "perftest:" in out["reason"] and out["output"]


def test_cut_off_output_is_an_error_naming_the_run(monkeypatch):
    out, _ = one(monkeypatch, [fixture("ib_write_bw__perftest_issue234_server_roce_cut.txt")], run(side="server"))
    assert out["status"] == "error" and "cannot be read" in out["reason"] and "dgx1" in out["reason"]


def test_the_latency_run_parses_on_both_sides(monkeypatch):
    out, _ = one(monkeypatch, [fixture("ib_write_lat__dgx_spark_guide_rdma_cm.txt")], run("lat", "server"))
    assert out["status"] == "ok" and out["result"]["rows"][0]["t_typical"] == 1.47


def test_a_missing_tool_is_an_error_naming_the_host():
    out = pod_rdma.run_one(run(), dict(P, gid_index=3), {"bw": None, "lat": None}, time.time(), {}, "dgx1")
    assert out["status"] == "error" and out["reason"] == "ib_write_bw is not installed on dgx1"


def test_records_join_both_sides_and_keep_perftest_s_words():
    plan = rp.rdma_plan(hosts(2), ["dgx1", "dgx2"], FABRICS[:1])
    t = plan[0]["tests"][0]

    def res(host, status="ok", reason=None):
        side = "client" if host == t["client"] else "server"
        return {"tests": [{"id": t["id"], "tool": tool, "side": side, "status": status, "reason": reason,
                           "result": {}} for tool in ("bw", "lat")]}
    ok = rp.records(plan, {t["client"]: res(t["client"]), t["server"]: res(t["server"])})
    assert ok[0]["status"] == "ok" and set(ok[0]["bw"]) == {"client", "server"}
    bad = rp.records(plan, {t["client"]: res(t["client"], "failed", "perftest: Failed to modify QP 77 to RTR"),
                            t["server"]: res(t["server"])})
    assert bad[0]["status"] == "failed" and "Failed to modify QP 77 to RTR" in bad[0]["reason"]
    assert t["client"] in bad[0]["reason"] and "mlx5_0" in bad[0]["reason"]
    gone = rp.records(plan, {t["client"]: res(t["client"]), t["server"]: {"unreachable": True, "msg": "ssh: timeout"}})
    assert gone[0]["status"] == "error" and gone[0]["unreachable"] and t["server"] in gone[0]["reason"]
    never = rp.records(plan, {t["client"]: res(t["client"]), t["server"]: {"failed": True, "msg": "boom"}})
    assert never[0]["status"] == "error" and "boom" in never[0]["reason"]


# ------------------------------------------------------------------------------------------ through Ansible

def test_the_module_runs_a_pair_against_the_stand_ins_and_in_check_mode(tmp_path):
    state = tmp_path / "hardware.json"
    state.write_text(json.dumps({"hcas": {"mlx5_0": {"netdev": "lo"}}}))
    port = 20000 + os.getpid() % 20000
    runs = [dict(run(tool, side), address="127.0.0.1", peer_address="127.0.0.1", port=port + (tool == "lat"),
                 offset=(tool == "lat") * 3.0 + (side == "client") * 0.5)
            for tool in ("bw", "lat") for side in ("server", "client")]
    args = {"tests": runs, "bw_duration": 1, "lat_iterations": 200, "gid_index": 3, "perftest_dir": STANDINS}
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False,
             "environment": {"PODSIM_HW_STATE": str(state), "PODSIM_RDMA_FAULTS": str(tmp_path / "none.json")},
             "tasks": [{"name": "check", "pod_rdma": args, "check_mode": True, "register": "c"},
                       {"name": "run", "pod_rdma": args, "register": "r"}]}]
    path = tmp_path / "play.json"
    path.write_text(json.dumps(play))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    res = subprocess.run([PLAYBOOK, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = json.loads(res.stdout[res.stdout.index("{"):])
    got = {t["task"]["name"]: t["hosts"]["localhost"] for t in out["plays"][0]["tasks"]}
    assert got["check"]["status"] == "skipped"
    assert [t["cmd"][-1] for t in got["check"]["tests"] if t["side"] == "client"] == ["127.0.0.1", "127.0.0.1"]
    tests = got["run"]["tests"]
    assert [t["status"] for t in tests] == ["ok"] * 4, tests
    bw = next(t for t in tests if t["tool"] == "bw" and t["side"] == "client")
    assert bw["result"]["rows"][0]["bw_average_gbps"] > 0 and bw["result"]["settings"]["gid_index"] == 3
    lat = next(t for t in tests if t["tool"] == "lat" and t["side"] == "client")
    assert lat["result"]["rows"][0]["iterations"] == 200


def test_the_plan_only_predictor_has_the_rdma_stage():
    import plan_perf as pp
    r = pp.plan_report(os.path.join(ROOT, "inventories", "sim"), "quick")
    st = {s["stage"]: s for s in r["stages"]}["rdma"]
    assert list(pp.STAGES).index("rdma") == list(pp.STAGES).index("fio") + 1
    per_round = rp.round_seconds(5, 2)  # quick: ib_write_bw -D 5, 1000 latency iterations (1 s + 1 s)
    assert st["seconds"] == pytest.approx(3 * per_round + 3 + 0.4 + pp.play_seconds(pp.RDMA_TASKS, 4))
    assert st["formula"].startswith("3 rounds on 4 rails (24 pairs)")
    big = {s["stage"]: s for s in pp.plan_report(os.path.join(ROOT, "inventories", "sim"), "full", dgx=140)["stages"]}
    assert big["rdma"]["formula"].startswith("8 rounds on 4 rails")  # matchings beyond 16 DGX, as the filter plans


def test_the_records_filter_takes_the_finished_job_else_the_launch():
    from filter_plugins.rdma import pod_rdma_plan, pod_rdma_records
    pod = {"fabrics": FABRICS[:1]}
    hv = {h: {"nics": v["nics"]} for h, v in hosts(2).items()}
    plan = pod_rdma_plan(pod, hv, {"dgx": ["dgx1", "dgx2"]})
    t = plan[0]["tests"][0]
    runs = {h: {"tests": [{"id": t["id"], "tool": tool, "side": "client" if h == t["client"] else "server",
                           "status": "ok", "result": {}} for tool in ("bw", "lat")]} for h in ("dgx1", "dgx2")}
    hv[t["client"]].update(rdma_result=dict(runs[t["client"]], finished=1), rdma_job={"ansible_job_id": "1"})
    hv[t["server"]].update(rdma_result={"skipped": True}, rdma_job={"unreachable": True, "msg": "ssh: gone"})
    rec = pod_rdma_records(plan, hv, ["rdma_result", "rdma_job"])
    assert rec[0]["status"] == "error" and rec[0]["unreachable"] and "ssh: gone" in rec[0]["reason"]
    hv[t["server"]].update(rdma_result=dict(runs[t["server"]], finished=1))
    assert pod_rdma_records(plan, hv, ["rdma_result", "rdma_job"])[0]["status"] == "ok"
