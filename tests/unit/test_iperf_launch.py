"""Each host's part of the iperf3 schedule (module_utils/perf/iperf_launch.py) and the records built back from
what the hosts returned: every planned test gets exactly one record, and a host that did not answer is named."""
from __future__ import annotations

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_launch import (check_plan, host_schedules,
    records, round_seconds, schedule_seconds)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import iperf_plan
from perf_sample import sim_model


def sim_plan():
    pod, hosts, groups = sim_model()
    return iperf_plan(hosts, groups["dgx"], groups["storage"], pod["fabrics"])


def test_every_test_is_one_client_entry_at_its_rounds_offset_and_every_server_listens_once():
    plan = sim_plan()
    parts = host_schedules(plan, round_seconds(5, 0, 3))
    tests = {t["id"]: t for r in plan for t in r["tests"]}
    entries = [e for p in parts.values() for e in p["tests"]]
    assert sorted(e["id"] for e in entries) == sorted(tests)
    for host, part in parts.items():
        for e in part["tests"]:
            t = tests[e["id"]]
            assert t["client"] == host and e["bind"] == t["client_address"] and e["server"] == t["server_address"]
            assert e["offset"] == (t["round"] - 1) * 8.0 and e["reverse"] == t["reverse"]
            # the server of that test listens on that address and port for the whole schedule
            assert {"bind": t["server_address"], "port": t["port"]} in parts[t["server"]]["listen"]
        assert len(part["listen"]) == len({(x["bind"], x["port"]) for x in part["listen"]})
    # storage nodes only serve; each DGX both serves and runs clients
    assert all(not parts[s]["tests"] and parts[s]["listen"] for s in ("sim-isilon1", "sim-isilon2"))
    assert schedule_seconds(plan, 8.0) == 8.0 * len(plan)


def test_a_plan_that_asks_one_server_port_for_two_tests_at_once_is_refused():
    plan = sim_plan()
    r1 = plan[0]
    clash = dict(r1["tests"][1], server=r1["tests"][0]["server"], server_address=r1["tests"][0]["server_address"],
                 port=r1["tests"][0]["port"], id="clash")
    bad = [dict(r1, tests=r1["tests"] + [clash])]
    with pytest.raises(ValueError, match=r"port \d+ twice on"):
        host_schedules(bad, 8.0)


def test_a_nic_in_two_tests_of_one_round_is_refused_before_anything_starts():
    # the same invariants as every schedule's (perf_schedule re-exports this check_plan): a NIC measured
    # twice at once would halve both numbers and fail two healthy pairs
    plan = sim_plan()
    r1 = plan[0]
    t0 = r1["tests"][0]
    other = next(t for r in plan[1:] for t in r["tests"] if t["client"] == t0["client"] and t["fabric"] == t0["fabric"]
                 and t["server"] != t0["server"])
    twice = dict(other, id="twice", port=t0["port"] + 50)
    with pytest.raises(ValueError, match="NIC %s:%s in two tests" % (t0["client"], t0["client_nic"])):
        host_schedules([dict(r1, tests=r1["tests"] + [twice])], 8.0)
    assert check_plan(plan) == [] and check_plan(plan[1:2]) == ["round 2 is at position 1"]


def _ok(test_id):
    return {"id": test_id, "status": "ok", "result": {"received_bps": 2e9}, "started_at": 100.0}


def returned(plan, drop_client=None, unreachable_server=None, bad_port=None):
    parts = host_schedules(plan, 8.0)
    servers, clients = {}, {}
    for host, part in parts.items():
        if host == unreachable_server:
            servers[host] = {"unreachable": True, "msg": "Failed to connect to the host via ssh"}
        else:
            servers[host] = {"status": "ok", "servers": [
                dict(x, status="error", reason="port in use") if (host, x["port"]) == bad_port
                else dict(x, status="ok", pid=1) for x in part["listen"]]}
        if part["tests"] and host != drop_client:
            clients[host] = {"finished": 1, "status": "ok", "tests": [_ok(e["id"]) for e in part["tests"]]}
    return servers, clients


def test_records_keep_the_plan_fields_and_take_each_tests_result():
    plan = sim_plan()
    out = records(plan, *returned(plan))
    assert len(out) == sum(len(r["tests"]) for r in plan)
    assert all(r["status"] == "ok" and r["result"] == {"received_bps": 2e9} and r["started_at"] == 100.0
               for r in out)
    assert {k for k in plan[0]["tests"][0]} <= set(out[0])


def test_records_name_the_host_that_did_not_answer_and_only_its_tests():
    plan = sim_plan()
    out = records(plan, *returned(plan, unreachable_server="sim-isilon2", drop_client="sim-dgx3"))
    for rec in out:
        if rec["server"] == "sim-isilon2":
            assert rec["status"] == "error" and rec["reason"].startswith("server host sim-isilon2 unreachable: Failed")
        elif rec["client"] == "sim-dgx3":
            assert rec["status"] == "error" and rec["reason"] == "client host sim-dgx3 unreachable"
        else:
            assert rec["status"] == "ok", rec


def test_a_server_that_did_not_start_fails_exactly_the_tests_on_its_port():
    plan = sim_plan()
    t = plan[0]["tests"][0]
    out = records(plan, *returned(plan, bad_port=(t["server"], t["port"])))
    bad = [r for r in out if r["status"] != "ok"]
    assert bad and all(r["server"] == t["server"] and r["port"] == t["port"] for r in bad)
    assert all(r["reason"] == "server: port in use" for r in bad)


def test_a_client_job_that_never_finished_is_an_error_not_a_number():
    plan = sim_plan()
    servers, clients = returned(plan)
    host = plan[0]["tests"][0]["client"]
    clients[host] = {"finished": 0, "msg": "async task did not complete within the requested time"}
    out = records(plan, servers, clients)
    mine = [r for r in out if r["client"] == host]
    assert mine and all(r["status"] == "error" and "did not complete" in r["reason"] and r["result"] == {}
                        for r in mine)
