# -*- coding: utf-8 -*-
"""The per-host checks of the deploy roles, decided in Python. Pure functions, no I/O.

The roles (pod_identity, dgx_network, nfs_client, ngc_container, switch_config) read the node and register what
their modules returned; the status (pass | fail | skipped | error) and the cause of each check are decided here
and nowhere else: a role's YAML only hands the facts to a filter (filter_plugins/checks.py) and stores the
returned dict as its fact (pod_identity_result, dgx_network_result, nfs_client_check, ngc_container_check,
switch_config_summary, switch_config_validation). roles/pod_report collects those facts into results.json as they
are, so each function keeps the key order its fact had (docs/results.md).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.checks import CheckResult, pass_fail

# results.json key order of the identity check (the status came last when the role built it in YAML)
IDENTITY_LAYOUT = ("check", "host", "hostname", "hostname_ok", "missing_nics", "status")


def _missing(wanted: Sequence[str], present: Sequence[str]) -> List[str]:
    """The names of ``wanted`` that are not in ``present``, once each, in ``wanted``'s order (the YAML this
    replaced used Jinja's ``difference``, a set: the same names in an order that changed from run to run)."""
    out: List[str] = []
    for name in wanted:
        if name not in present and name not in out:
            out.append(name)
    return out


def identity_check(host: str, hostname: str, interfaces: Sequence[str], nic_names: Sequence[str],
                   check_hostname: Any = True, check_nics: Any = True) -> Dict[str, Any]:
    """Is the node the one the inventory describes? pass when its hostname is ``host`` (unless
    ``check_hostname`` is off) and every modelled NIC name is among its ``interfaces`` (unless ``check_nics``
    is off); fail otherwise, naming what differs (``hostname_ok``, ``missing_nics``)."""
    hostname_ok = (not check_hostname) or hostname == host
    missing = _missing(list(nic_names or []), list(interfaces or [])) if check_nics else []
    return CheckResult("identity", host, pass_fail(bool(hostname_ok) and not missing),
                       details={"hostname": hostname, "hostname_ok": bool(hostname_ok), "missing_nics": missing},
                       layout=IDENTITY_LAYOUT).to_dict()


def identity_problems(result: Mapping[str, Any], interfaces: Sequence[str]) -> List[str]:
    """The identity check's failures in words, for the role's assert: the hostname and the missing NICs."""
    problems = []
    if not result.get("hostname_ok"):
        problems.append("hostname is %s, inventory says %s" % (result.get("hostname"), result.get("host")))
    if result.get("missing_nics"):
        problems.append("NICs missing on the node: %s (it has: %s)" % (", ".join(result["missing_nics"]),
                                                                       ", ".join(sorted(interfaces or []))))
    return problems


def network_check(host: str, verify_state: Mapping[str, Any], mesh: Optional[Mapping[str, Any]] = None,
                  rdma_problems: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The network verify of one DGX: pass when the kernel state read back (dgx_nic_apply in check mode,
    ``verify_state``) has no difference from the model, every full-MTU ping of the mesh (pod_ping_mesh,
    ``mesh``) answered and the RDMA hardware has no problem (``rdma_problems``); fail with every problem
    otherwise. A verify read that failed (no ``changes``) is a problem in itself, with its message."""
    verify_state = verify_state or {}
    mesh = mesh or {}
    problems: List[Any] = []
    if "changes" not in verify_state:
        problems.append(verify_state.get("msg", "verify failed"))
    problems += ["kernel differs from the model: %s" % c for c in verify_state.get("changes") or []]
    problems += list(mesh.get("failures") or [])
    problems += list(rdma_problems or [])
    return CheckResult("network", host, pass_fail(not problems),
                       details={"problems": problems, "pings": mesh.get("checked", 0)}).to_dict()


def nfs_mounts_check(host: str, pod: Mapping[str, Any], verify: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The NFS mounts of one DGX: skipped when the pod's storage is not NFS; else pass when pod_nfs_verify
    (``verify``) found no problem with any planned mount, fail with its problems; error when the verify did
    not report (it did not run or failed without a result)."""
    storage = pod.get("storage") or {}
    protocol = storage.get("protocol", "not set") if isinstance(storage, Mapping) else "not set"
    if protocol != "nfs":
        return CheckResult("nfs_mounts", host, "skipped",
                           reason="pod storage protocol is %s, not nfs" % protocol).to_dict()
    if not verify or "problems" not in verify:
        return CheckResult("nfs_mounts", host, "error",
                           reason="pod_nfs_verify gave no result: %s" % ((verify or {}).get("msg") or "it did not run")
                           ).to_dict()
    problems = list(verify.get("problems") or [])
    return CheckResult("nfs_mounts", host, pass_fail(not problems),
                       details={"mounts": len(verify.get("results") or []), "problems": problems}).to_dict()


def mpi_containers_check(host: str, verify: Optional[Mapping[str, Any]], container: str, state: str,
                         launcher: str) -> Dict[str, Any]:
    """One DGX's part of the MPI container mesh: fail when ngc_mpi_verify (``verify``, run once from the
    launcher) names this node among ``failed_nodes`` (its problem is the cause), pass otherwise; error when the
    verify gave no ``failed_nodes`` (it did not run, or failed before it could check any node).
    ``mpirun_seen`` is how often ``mpirun hostname`` printed this node (None when mpirun did not run)."""
    verify = verify or {}
    if "failed_nodes" not in verify:
        return CheckResult("mpi_containers", host, "error",
                           reason="ngc_mpi_verify gave no result: %s" % (verify.get("msg") or "it did not run"),
                           details={"container": container, "state": state, "launcher": launcher}).to_dict()
    failed = verify.get("failed_nodes") or {}
    counts = (verify.get("mpirun") or {}).get("counts") or {}
    return CheckResult("mpi_containers", host, "fail" if host in failed else "pass",
                       details={"container": container, "state": state, "launcher": launcher,
                                "mpirun_seen": counts.get(host),
                                "problems": [failed[host]] if host in failed else []}).to_dict()


def switch_config_summary(host: str, result: Mapping[str, Any]) -> Dict[str, Any]:
    """The deploy's record of one switch after switch_config pushed (``result``; the module fails the host on
    any problem, so a recorded push passed): changed, how many commands, the backup, the lossless read-back
    (``not checked`` when it was not verified)."""
    result = result or {}
    return CheckResult("switch_config", host, "pass",
                       details={"changed": result.get("changed", False), "commands": len(result.get("commands") or []),
                                "backup": result.get("backup_path", ""),
                                "lossless": (result.get("lossless") or {}).get("ok", "not checked")}).to_dict()


# what switch_validate returns that the switch stage evaluates (module_utils/switch/eval.py)
SWITCH_READINGS = ("drift", "port_config", "lossless", "status", "lldp", "counters", "errors", "timings", "platform")


def switch_validation_record(host: str, platform: str, structured: Mapping[str, Any],
                             readings: Mapping[str, Any]) -> Dict[str, Any]:
    """One switch's entry of pod_stages.switches: the model, and either the readings switch_validate returned
    (only the keys switch_eval reads, in the order it returned them) or, when the read failed, its message as
    ``error`` (switch_eval reports that switch's checks as error with it)."""
    readings = readings or {}
    out: Dict[str, Any] = {"name": host, "platform": platform, "structured": structured}
    if readings.get("failed"):
        out["error"] = readings.get("msg", "the switch_validate task failed")
    else:
        out["result"] = {k: v for k, v in readings.items() if k in SWITCH_READINGS}
    return out


def read_record(result: Optional[Mapping[str, Any]], key: str = "nodes") -> Dict[str, Any]:
    """What a registered read-only task gave, for a stage record that its evaluator decides (e.g.
    pod_stages.slurm, module_utils/slurm/eval.py): ``{key: the reading, error: None, unreachable: False}``, or,
    when the task failed or its host was unreachable, ``{key: None, error: its message ('failed' without one),
    unreachable: ...}``."""
    result = result or {}
    unreachable = bool(result.get("unreachable", False))
    if result.get("failed", False) or unreachable:
        return {key: None, "error": result.get("msg", "failed"), "unreachable": unreachable}
    return {key: result.get(key), "error": None, "unreachable": False}
