# -*- coding: utf-8 -*-
"""The storage-mounts stage (registered in module_utils/report/stages.py): every planned NFS mount of every DGX
is mounted as planned and moves data. Pure functions.

Record (playbooks/validate_storage.yml through playbooks/tasks/record_stage.yml):
``pod_stages.nfs_mounts = {"protocol": pod.storage.protocol, "hosts": {host: reading or None}}``; a reading is
``{"verify": what pod_nfs_verify returned (results, problems, problem_details, msg) or None when it did not run}``
(:func:`mounts_reading`); ``None``: the host gave none (unreachable, or its play failed before the check ran).

``nfs_mounts`` (NODE_STATE, subject the node): skipped when the pod's storage is not NFS; pass when
pod_nfs_verify found no problem, fail with each problem as data (pod_nfs_verify's ``problem_details``): a mount's
I/O that failed towards its storage address is REACH (the address, the storage node and NIC that own it, the DGX
NIC it goes through); a mount of its own (not mounted, the wrong server or type, options missing) is NODE_STATE
with its path and that NIC; error when the verify gave no result.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, REACH, CheckResult,
    Problem, Subject, pass_fail, per_host)

CHECK = "nfs_mounts"


def mounts_reading(verify: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """One DGX's reading (roles/nfs_client tasks/check.yml): only the keys of pod_nfs_verify's result the
    evaluation reads (None: the verify did not run)."""
    if verify is None:
        return {"verify": None}
    keep = ("results", "problems", "problem_details", "msg")
    return {"verify": {k: verify[k] for k in keep if k in verify}}


def _problem(text: str, item: Mapping[str, Any], host: str) -> Problem:
    subject = Subject(node=host, nic=item.get("nic"), peer=item.get("peer"), peer_nic=item.get("peer_nic"),
                      address=item.get("address"), path=item.get("path"))
    if item.get("reach"):
        return Problem(text, REACH, subject)
    cause = text[len(host) + 2:] if text.startswith(host + ": ") else text
    return Problem(text, NODE_STATE, subject, cause=cause)


def mounts_result(host: str, protocol: str, reading: Mapping[str, Any]) -> CheckResult:
    subject = Subject(node=host)
    if protocol != "nfs":
        return CheckResult(CHECK, host, "skipped", reason="pod storage protocol is %s, not nfs" % protocol,
                           subject=subject, category=NODE_STATE)
    verify = reading.get("verify")
    if not verify or "problems" not in verify:
        return CheckResult(CHECK, host, "error", subject=subject, category=NODE_STATE,
                           reason="pod_nfs_verify gave no result: %s" % ((verify or {}).get("msg") or "it did not run"))
    texts = list(verify.get("problems") or [])
    items = list(verify.get("problem_details") or [])
    problems = [_problem(str(t), items[i] if i < len(items) else {}, host) for i, t in enumerate(texts)]
    mounts = len(verify.get("results") or [])
    details: Dict[str, Any] = {"mounts": mounts}
    if not problems:
        details["note"] = "%s mounts as planned, data read through each" % mounts
    return CheckResult(CHECK, host, pass_fail(not problems), subject=subject, category=NODE_STATE,
                       problems=tuple(problems), details=details)


def evaluate(recorded: Mapping[str, Any], expectations: Mapping[str, Any],
             context: Mapping[str, Any]) -> List[CheckResult]:
    """One ``nfs_mounts`` check per DGX of the record."""
    protocol = str(recorded.get("protocol") or "not set")
    return per_host(recorded, CHECK, lambda host, reading: mounts_result(host, protocol, reading))
