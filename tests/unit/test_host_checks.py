# -*- coding: utf-8 -*-
"""The deploy roles' per-host checks, decided in Python (module_utils/report/host_checks.py, filter_plugins/checks.py):
pass, fail, skipped and error, with the results.json key order the roles' facts had."""
from __future__ import annotations

import importlib

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.checks import STATUSES, CheckResult
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.host_checks import (identity_check,
    identity_problems, mpi_containers_check, network_check, nfs_mounts_check, read_record, switch_config_summary,
    switch_validation_record)

checks_filters = importlib.import_module("filter_plugins.checks")


def _roundtrip(d):
    """Every result is a valid CheckResult (status one of the four) that reads back to the same dict."""
    assert d["status"] in STATUSES
    assert CheckResult.from_dict(d).check == d["check"]
    return d


# -- identity ---------------------------------------------------------------------------------------------------

def test_identity_pass_keeps_the_roles_key_order():
    r = _roundtrip(identity_check("dgx-1", "dgx-1", ["lo", "ib0", "eth0"], ["eth0", "ib0"]))
    assert list(r) == ["check", "host", "hostname", "hostname_ok", "missing_nics", "status"]
    assert r == {"check": "identity", "host": "dgx-1", "hostname": "dgx-1", "hostname_ok": True,
                 "missing_nics": [], "status": "pass"}


def test_identity_fails_on_hostname_and_names_missing_nics_once_in_model_order():
    r = _roundtrip(identity_check("dgx-1", "dgx-9", ["lo", "eth0"], ["ib1", "eth0", "ib0", "ib1"]))
    assert r["status"] == "fail" and r["hostname_ok"] is False and r["missing_nics"] == ["ib1", "ib0"]
    assert identity_problems(r, ["lo", "eth0"]) == [
        "hostname is dgx-9, inventory says dgx-1", "NICs missing on the node: ib1, ib0 (it has: eth0, lo)"]


@pytest.mark.parametrize("check_hostname, check_nics, status", [(False, True, "fail"), (True, False, "fail"),
                                                                (False, False, "pass")])
def test_identity_checks_can_be_switched_off(check_hostname, check_nics, status):
    r = identity_check("dgx-1", "other", ["lo"], ["ib0"], check_hostname, check_nics)
    assert r["status"] == status
    assert r["hostname_ok"] is (not check_hostname)
    assert r["missing_nics"] == (["ib0"] if check_nics else [])


def test_identity_filter_reads_nic_names_from_the_model():
    r = checks_filters.pod_identity_check("dgx-1", "dgx-1", ["ib0"], [{"name": "ib0", "kind": "infiniband"}])
    assert r["status"] == "pass" and identity_problems(r, ["ib0"]) == []


# -- network ----------------------------------------------------------------------------------------------------

def test_network_pass():
    r = _roundtrip(network_check("dgx-1", {"changed": False, "changes": []}, {"checked": 12, "failures": []}, []))
    assert r == {"check": "network", "host": "dgx-1", "status": "pass", "problems": [], "pings": 12}


def test_network_fail_lists_kernel_differences_ping_failures_and_rdma_problems_in_that_order():
    r = network_check("dgx-1", {"changes": ["ib0: mtu 1500"]}, {"checked": 3, "failures": ["ib0 -> dgx-2: loss"]},
                      ["ib1 (mlx5_1): no RDMA device behind this NIC"])
    assert r["status"] == "fail"
    assert r["problems"] == ["kernel differs from the model: ib0: mtu 1500", "ib0 -> dgx-2: loss",
                             "ib1 (mlx5_1): no RDMA device behind this NIC"]


@pytest.mark.parametrize("state, problem", [({"failed": True, "msg": "nmcli not found"}, "nmcli not found"),
                                            ({"failed": True}, "verify failed")])
def test_network_a_failed_verify_read_is_a_problem_and_a_skipped_mesh_is_no_ping(state, problem):
    r = network_check("dgx-1", state, {"skipped": True, "changed": False})
    assert r["status"] == "fail" and r["problems"] == [problem] and r["pings"] == 0


# -- NFS mounts -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pod, shown", [({"storage": {"protocol": "scale"}}, "scale"), ({}, "not set"),
                                        ({"storage": {"servers": []}}, "not set")])
def test_nfs_skipped_when_storage_is_not_nfs(pod, shown):
    r = _roundtrip(nfs_mounts_check("dgx-1", pod, {"problems": ["ignored"]}))
    assert r == {"check": "nfs_mounts", "host": "dgx-1", "status": "skipped",
                 "reason": "pod storage protocol is %s, not nfs" % shown}


def test_nfs_pass_and_fail():
    pod = {"storage": {"protocol": "nfs"}}
    ok = _roundtrip(nfs_mounts_check("dgx-1", pod, {"results": [{}, {}], "problems": []}))
    assert ok == {"check": "nfs_mounts", "host": "dgx-1", "status": "pass", "mounts": 2, "problems": []}
    bad = nfs_mounts_check("dgx-1", pod, {"results": [{}], "problems": ["/data: not mounted"]})
    assert bad["status"] == "fail" and bad["problems"] == ["/data: not mounted"] and bad["mounts"] == 1


@pytest.mark.parametrize("verify, reason", [(None, "it did not run"), ({"failed": True, "msg": "boom"}, "boom")])
def test_nfs_error_when_the_verify_gave_no_result(verify, reason):
    r = _roundtrip(nfs_mounts_check("dgx-1", {"storage": {"protocol": "nfs"}}, verify))
    assert r["status"] == "error" and r["reason"] == "pod_nfs_verify gave no result: " + reason


# -- MPI containers ---------------------------------------------------------------------------------------------

def test_mpi_containers_pass_and_fail_per_node():
    verify = {"failed_nodes": {"dgx-2": "ssh: connection refused"}, "mpirun": {"counts": {"dgx-1": 8}}}
    ok = _roundtrip(mpi_containers_check("dgx-1", verify, "pod-mpi", "running", "dgx-1"))
    assert ok == {"check": "mpi_containers", "host": "dgx-1", "status": "pass", "container": "pod-mpi",
                  "state": "running", "launcher": "dgx-1", "mpirun_seen": 8, "problems": []}
    bad = mpi_containers_check("dgx-2", verify, "pod-mpi", "exited", "dgx-1")
    assert bad["status"] == "fail" and bad["problems"] == ["ssh: connection refused"] and bad["mpirun_seen"] is None


def test_mpi_containers_error_when_the_verify_did_not_report():
    r = _roundtrip(mpi_containers_check("dgx-1", {"failed": True, "msg": "target lacks port"}, "c", "running", "dgx-1"))
    assert r["status"] == "error" and r["reason"] == "ngc_mpi_verify gave no result: target lacks port"
    assert mpi_containers_check("dgx-1", None, "c", "running", "dgx-1")["status"] == "error"


# -- switches ---------------------------------------------------------------------------------------------------

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


def test_filter_module_exposes_every_decision():
    names = checks_filters.FilterModule().filters()
    assert set(names) == {"pod_identity_check", "pod_identity_problems", "dgx_network_check", "nfs_mounts_check",
                          "mpi_containers_check", "switch_config_summary", "switch_validation_record",
                          "pod_read_record"}


# -- stage records of a read-only task --------------------------------------------------------------------------

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
