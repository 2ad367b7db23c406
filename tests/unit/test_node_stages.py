# -*- coding: utf-8 -*-
"""The identity, network, storage-mounts and containers stages (issue 38: registered like every stage, formerly the
deploy roles' per-host checks): module_utils/network/eval.py, storage/nfs_eval.py, containers/eval.py, their
filters, the stage records (report/records.py, filter_plugins/stages.py) and the switch role's records
(switch/record.py). Every result carries its subject and category; problems are data."""
from __future__ import annotations

import importlib

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import eval as containers_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import eval as network_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.records import host_readings, read_record
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages, registry
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NO_RESULT, NODE_STATE, REACH,
    STATUSES, CheckResult)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import nfs_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.record import (switch_config_summary,
    switch_validation_record)

network_filters = importlib.import_module("filter_plugins.network")
storage_filters = importlib.import_module("filter_plugins.storage")
ngc_filters = importlib.import_module("filter_plugins.ngc")
stage_filters = importlib.import_module("filter_plugins.stages")


def _roundtrip(r):
    """Every result is a valid CheckResult with a subject and a category that reads back to the same dict."""
    d = r.to_dict()
    assert d["status"] in STATUSES and d["category"] and d["subject"]["node"] == d["host"]
    assert CheckResult.from_dict(d).to_dict() == d
    return d


def _ident(hostname="dgx-1", interfaces=("lo", "ib0", "eth0"), nics=("eth0", "ib0"), **kw):
    return network_eval.identity_reading(hostname, list(interfaces), [{"name": n} for n in nics], **kw)


# -- identity ---------------------------------------------------------------------------------------------------

def test_identity_pass():
    d = _roundtrip(network_eval.identity_result("dgx-1", _ident()))
    assert d["status"] == "pass" and d["category"] == NODE_STATE and d["subject"] == {"node": "dgx-1"}
    assert (d["hostname"], d["hostname_ok"], d["missing_nics"], d["note"]) == ("dgx-1", True, [], "hostname dgx-1")
    assert "problems" not in d


def test_identity_fails_on_hostname_and_names_each_missing_nic_once_in_model_order():
    r = network_eval.identity_result("dgx-1", _ident("dgx-9", ["lo", "eth0"], ["ib1", "eth0", "ib0", "ib1"]))
    d = _roundtrip(r)
    assert d["status"] == "fail" and d["hostname_ok"] is False and d["missing_nics"] == ["ib1", "ib0"]
    assert d["note"] == "hostname dgx-9 (expected dgx-1); missing NICs: ib1, ib0"
    # each problem is about its NIC (the findings read these), the hostname about the node
    assert [(p.category, p.subject.nic, p.cause) for p in r.problems] == [
        (NODE_STATE, "ib1", "ib1 missing on the host"), (NODE_STATE, "ib0", "ib0 missing on the host"),
        (NODE_STATE, None, "hostname dgx-9")]
    assert network_filters.identity_messages(d, ["lo", "eth0"]) == [
        "hostname is dgx-9, inventory says dgx-1", "NICs missing on the node: ib1, ib0 (it has: eth0, lo)"]


@pytest.mark.parametrize("check_hostname, check_nics, status", [(False, True, "fail"), (True, False, "fail"),
                                                                (False, False, "pass")])
def test_identity_checks_can_be_switched_off(check_hostname, check_nics, status):
    reading = _ident("other", ["lo"], ["ib0"], check_hostname=check_hostname, check_nics=check_nics)
    d = network_eval.identity_result("dgx-1", reading).to_dict()
    assert d["status"] == status and d["hostname_ok"] is (not check_hostname)
    assert d["missing_nics"] == (["ib0"] if check_nics else [])


def test_identity_filters_read_the_model_and_decide_as_the_stage():
    reading = network_filters.pod_identity_reading("dgx-1", ["ib0"], [{"name": "ib0", "kind": "infiniband"}])
    assert reading["nics"] == ["ib0"]
    assert network_filters.pod_identity_result("dgx-1", reading)["status"] == "pass"


# -- network ----------------------------------------------------------------------------------------------------

def _mesh(*failed, checked=12):
    return {"checked": checked, "failures": [f["text"] for f in failed], "unanswered": list(failed)}


def test_network_pass():
    reading = network_eval.network_reading({"changed": False, "changes": [], "differences": []}, _mesh())
    d = _roundtrip(network_eval.network_result("dgx-1", reading))
    assert d["status"] == "pass" and d["pings"] == 12 and d["note"] == "12 full-MTU pings answered"


def test_network_fail_gives_each_problem_its_subject_in_order():
    ping = {"nic": "enp132s0", "peer": "dgx-2", "peer_nic": "enp132s0", "address": "198.18.66.12", "mtu": 9000,
            "fabric": "data-66", "ok": False, "detail": "100% packet loss",
            "text": "dgx-1 enp132s0 -> dgx-2 (198.18.66.12) at MTU 9000: 100% packet loss"}
    state = {"changes": ["enp132s0 mtu: 1500 -> 9000"],
             "differences": [{"nic": "enp132s0", "field": "mtu", "before": "1500", "after": "9000"}]}
    rdma = [{"nic": "ib1", "rdma_device": "mlx5_1", "text": "ib1 (mlx5_1): no RDMA device behind this NIC"}]
    r = network_eval.network_result("dgx-1", network_eval.network_reading(state, _mesh(ping, checked=3), rdma))
    d = _roundtrip(r)
    assert d["status"] == "fail" and "note" not in d
    assert d["problems"] == ["kernel differs from the model: enp132s0 mtu: 1500 -> 9000",
                             "dgx-1 enp132s0 -> dgx-2 (198.18.66.12) at MTU 9000: 100% packet loss",
                             "ib1 (mlx5_1): no RDMA device behind this NIC"]
    kernel, reach, hw = d["problem_subjects"]
    assert kernel == {"category": NODE_STATE, "cause": "MTU 1500, model 9000", "node": "dgx-1", "nic": "enp132s0"}
    assert reach == {"category": REACH, "node": "dgx-1", "nic": "enp132s0", "peer": "dgx-2", "peer_nic": "enp132s0",
                     "address": "198.18.66.12", "fabric": "data-66"}
    assert hw == {"category": NODE_STATE, "node": "dgx-1", "nic": "ib1"}


@pytest.mark.parametrize("state, problem", [({"failed": True, "msg": "nmcli not found"}, "nmcli not found"),
                                            ({"failed": True}, "verify failed")])
def test_network_a_failed_verify_read_is_a_problem_and_a_skipped_mesh_is_no_ping(state, problem):
    d = network_eval.network_result("dgx-1", network_eval.network_reading(state, {"skipped": True})).to_dict()
    assert d["status"] == "fail" and d["problems"] == [problem] and d["pings"] == 0


def test_network_reading_filter_reads_the_rdma_problems_only_when_managed():
    state = {"changes": [], "differences": []}
    nics = [{"name": "ib1", "rdma_device": "mlx5_1", "kind": "infiniband"}]
    assert network_filters.dgx_network_reading(state, {}, [], {})["rdma"] == []
    got = network_filters.dgx_network_reading(state, {}, nics, {"nics": {}})["rdma"]
    assert got == [{"nic": "ib1", "rdma_device": "mlx5_1", "text": "ib1 (mlx5_1): no RDMA device behind this NIC"}]
    assert network_filters.dgx_network_result("dgx-1", network_filters.dgx_network_reading(state))["status"] == "pass"


# -- NFS mounts -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["scale", "not set"])
def test_nfs_skipped_when_storage_is_not_nfs(protocol):
    (r,) = nfs_eval.evaluate({"protocol": protocol, "hosts": {"dgx-1": {"verify": {"problems": ["x"]}}}}, {}, {})
    d = _roundtrip(r)
    assert d["status"] == "skipped" and d["reason"] == "pod storage protocol is %s, not nfs" % protocol


def test_nfs_pass_and_fail_with_reach_and_own_mount_problems():
    ok = {"verify": {"results": [{}, {}], "problems": [], "problem_details": []}}
    io = {"text": "dgx-2: /mnt/d2 from 198.18.5.212: listing failed: timeout", "reach": True, "path": "/mnt/d2",
          "address": "198.18.5.212", "peer": "isilon2", "peer_nic": "enp1", "nic": "enp5s0"}
    own = {"text": "dgx-2: not mounted (planned /mnt/d1 from 198.18.5.211)", "reach": False, "path": "/mnt/d1",
           "address": "198.18.5.211", "nic": "enp5s0"}
    bad = nfs_eval.mounts_reading({"results": [{}, {}], "problems": [io["text"], own["text"]],
                                   "problem_details": [io, own], "changed": False})
    p, f = nfs_eval.evaluate({"protocol": "nfs", "hosts": {"dgx-1": ok, "dgx-2": bad}}, {}, {})
    assert _roundtrip(p)["note"] == "2 mounts as planned, data read through each" and p.status == "pass"
    d = _roundtrip(f)
    assert d["status"] == "fail" and d["problems"] == [io["text"], own["text"]] and d["mounts"] == 2
    assert d["problem_subjects"] == [
        {"category": REACH, "node": "dgx-2", "nic": "enp5s0", "peer": "isilon2", "peer_nic": "enp1",
         "address": "198.18.5.212", "path": "/mnt/d2"},
        {"category": NODE_STATE, "cause": "not mounted (planned /mnt/d1 from 198.18.5.211)", "node": "dgx-2",
         "nic": "enp5s0", "address": "198.18.5.211", "path": "/mnt/d1"}]
    assert "changed" not in bad["verify"]


@pytest.mark.parametrize("verify, reason", [(None, "it did not run"), ({"failed": True, "msg": "boom"}, "boom")])
def test_nfs_error_when_the_verify_gave_no_result(verify, reason):
    reading = storage_filters.nfs_mounts_reading(verify)
    (r,) = nfs_eval.evaluate({"protocol": "nfs", "hosts": {"dgx-1": reading}}, {}, {})
    d = _roundtrip(r)
    assert d["status"] == "error" and d["reason"] == "pod_nfs_verify gave no result: " + reason


# -- MPI containers ---------------------------------------------------------------------------------------------

def _containers(verify, states):
    hv = {h: ({"ngc_container_reading": {"container": "pod-mpi", "state": s, "launcher": "dgx-1", "verify": verify}}
              if s is not None else {}) for h, s in states.items()}
    return ngc_filters.mpi_containers_record(list(states), hv)


def test_mpi_containers_pass_and_fail_per_node():
    verify = {"failed_nodes": {"dgx-2": "ssh: connection refused"}, "mpirun": {"counts": {"dgx-1": 8}},
              "results": ["left out of the record"]}
    record = _containers(verify, {"dgx-1": "running", "dgx-2": "exited"})
    assert record["verify"] == {"failed_nodes": {"dgx-2": "ssh: connection refused"},
                                "mpirun": {"counts": {"dgx-1": 8}}}
    ok, bad = containers_eval.evaluate(record, {}, {})
    d = _roundtrip(ok)
    assert (d["status"], d["container"], d["state"], d["launcher"], d["mpirun_seen"]) == (
        "pass", "pod-mpi", "running", "dgx-1", 8)
    assert d["note"] == ("container pod-mpi running; ssh on 2222 from dgx-1 with a pinned host key; "
                         "mpirun hostname saw it 8 time(s)")
    d = _roundtrip(bad)
    assert d["status"] == "fail" and d["problems"] == ["ssh: connection refused"] and d["mpirun_seen"] is None
    assert d["problem_subjects"] == [{"category": NODE_STATE, "node": "dgx-2"}]


def test_mpi_containers_error_when_the_verify_did_not_report():
    (r,) = containers_eval.evaluate(_containers({"failed": True, "msg": "target lacks port"}, {"dgx-1": "running"}),
                                    {}, {})
    d = _roundtrip(r)
    assert d["status"] == "error" and d["reason"] == "ngc_mpi_verify gave no result: target lacks port"


# -- a host without a reading, a stage left out --------------------------------------------------------------

@pytest.mark.parametrize("stage, record", [
    ("identity", {"hosts": {"dgx-1": None}}), ("network", {"hosts": {"dgx-1": None}}),
    ("nfs_mounts", {"protocol": "nfs", "hosts": {"dgx-1": None}}),
    ("containers", {"container": None, "launcher": None, "verify": {}, "hosts": {"dgx-1": None}})])
def test_a_host_missing_from_a_stages_record_is_an_error_naming_it(stage, record):
    checks, _ = evaluate_stages({stage: record}, {}, {}, ["all"], [], [s for s in registry() if s.name == stage])
    (c,) = checks
    assert (c["host"], c["status"], c["reason"], c["unreachable"], c["stage"]) == ("dgx-1", "error", NO_RESULT, True,
                                                                                   stage)
    assert c["reason"] == "no result: the host was unreachable or failed before this check ran"  # the drill's words
    assert c["subject"] == {"node": "dgx-1"} and c["category"] == NODE_STATE


@pytest.mark.parametrize("run, skip, left_out", [
    (["gpu"], [], {"identity", "network", "nfs_mounts", "containers", "iperf", "fio"}),
    (["network"], [], {"identity", "nfs_mounts", "containers", "fio"}),  # network: its state and iperf3
    (["iperf"], [], {"identity", "network", "nfs_mounts", "containers", "fio"}),
    (["storage"], [], {"identity", "network", "containers", "iperf"}),  # storage: the mounts and fio
    (["fio"], [], {"identity", "network", "nfs_mounts", "containers", "iperf"}),
    (["all"], ["iperf", "fio"], {"iperf", "fio"}),
    (["all"], ["network"], {"network", "iperf"})])
def test_a_stage_left_out_by_the_tags_is_skipped_and_one_selected_that_recorded_nothing_an_error(run, skip, left_out):
    """The tags select what validate.yml's plays did: network = the network state and iperf3, storage = the
    mounts and fio, iperf / fio alone; a skipped tag leaves out every stage it names."""
    names = {"identity", "network", "nfs_mounts", "containers", "iperf", "fio"}
    doc = build_results({"pod": "p"}, {}, {}, {}, run, skip)
    got = {c["check"]: c for c in doc["checks"] if c["check"] in names}
    assert {n for n, c in got.items() if c["status"] == "skipped"} == left_out
    assert {n for n, c in got.items() if c["status"] == "error"} == names - left_out
    assert all(c["host"] == "pod" and c["stage"] == c["check"] for c in got.values())


# -- records ----------------------------------------------------------------------------------------------------

def test_host_readings_keep_a_host_without_the_fact_as_none():
    hv = {"dgx-1": {"r": {"a": 1}}, "dgx-2": {}}
    assert host_readings(["dgx-1", "dgx-2", "dgx-3"], hv, "r") == {"dgx-1": {"a": 1}, "dgx-2": None, "dgx-3": None}
    assert stage_filters.pod_stage_hosts(["dgx-2"], hv, "r") == {"dgx-2": None}


@pytest.mark.parametrize("result, want", [
    ({"changed": False, "nodes": {"dgx-1": {"state": "idle"}}},
     {"nodes": {"dgx-1": {"state": "idle"}}, "error": None, "unreachable": False}),
    ({"failed": True, "msg": "scontrol: refused"}, {"nodes": None, "error": "scontrol: refused", "unreachable": False}),
    ({"failed": True}, {"nodes": None, "error": "failed", "unreachable": False}),
    ({"unreachable": True, "msg": "no route"}, {"nodes": None, "error": "no route", "unreachable": True}),
])
def test_read_record(result, want):
    got = read_record(result, "nodes")
    assert got == want and list(got) == ["nodes", "error", "unreachable"]


def test_switch_config_summary():
    pushed = {"changed": True, "commands": ["a", "b"], "backup_path": "/b", "lossless": {"ok": True}}
    r = switch_config_summary("sw-1", pushed)
    assert r == {"check": "switch_config", "host": "sw-1", "status": "pass", "changed": True, "commands": 2,
                 "backup": "/b", "lossless": True}
    assert switch_config_summary("sw-1", {"changed": False})["lossless"] == "not checked"


def test_switch_validation_record_keeps_readings_or_the_error():
    readings = {"changed": False, "platform": "onyx", "drift": {}, "invocation": {}, "lldp": {"a": 1}}
    ok = switch_validation_record("sw-1", "onyx", {"platform": "onyx"}, readings)
    assert ok == {"name": "sw-1", "platform": "onyx", "structured": {"platform": "onyx"},
                  "result": {"platform": "onyx", "drift": {}, "lldp": {"a": 1}}}
    assert switch_validation_record("sw-1", "onyx", {}, {"failed": True, "msg": "timeout"})["error"] == "timeout"
    assert switch_validation_record("sw-1", "onyx", {}, {"failed": True})["error"] == "the switch_validate task failed"


def test_filter_modules_expose_the_readings_and_records():
    assert set(network_filters.FilterModule().filters()) == {"pod_identity_reading", "pod_identity_result",
                                                            "pod_identity_problems", "dgx_network_reading",
                                                            "dgx_network_result"}
    assert set(storage_filters.FilterModule().filters()) == {"nfs_mounts_reading"}
    assert {"mpi_containers_record"} <= set(ngc_filters.FilterModule().filters())
    assert set(stage_filters.FilterModule().filters()) == {"pod_stage_hosts", "pod_read_record", "pod_job_blockers"}
