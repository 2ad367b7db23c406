# -*- coding: utf-8 -*-
"""The MPI containers stage (registered in module_utils/report/stages.py): from the first running MPI container,
ssh on the container port with strict host keys to every DGX's container, then mpirun hostname across all of
them (roles/ngc_container tasks/check.yml, library/ngc_mpi_verify.py). Pure functions.

Record (playbooks/validate_containers.yml through playbooks/tasks/record_stage.yml):
``pod_stages.containers = {"container": name, "launcher": the DGX mpirun started from, "verify": what
ngc_mpi_verify returned (failed_nodes, mpirun.counts, msg), "hosts": {host: {"state": its container's state} or
None}}`` (:func:`containers_record`); ``None``: the host gave none (unreachable, or its play failed before).

``mpi_containers`` (NODE_STATE, subject the node): fail when the verify names the node among ``failed_nodes``
(its problem is the cause), pass otherwise; error when the verify gave no ``failed_nodes`` (it did not run, or
failed before it could check any node).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Problem,
    Subject, per_host)

CHECK = "mpi_containers"


def containers_record(readings: Mapping[str, Optional[Mapping[str, Any]]]) -> Dict[str, Any]:
    """pod_stages.containers from every DGX's reading ({host: {container, state, launcher, verify} or None},
    roles/ngc_container tasks/check.yml's ``ngc_container_reading``): the container, the launcher and the verify's
    result (only the keys the evaluation reads) from the first host that has them - the verify ran once, from the
    launcher - and each host's container state (None: the host gave no reading)."""
    first: Mapping[str, Any] = next((r for r in readings.values() if r), {})
    verify = first.get("verify") or {}
    kept = {k: verify[k] for k in ("failed_nodes", "msg") if k in verify}
    counts = (verify.get("mpirun") or {}).get("counts") if isinstance(verify.get("mpirun"), Mapping) else None
    if counts is not None:
        kept["mpirun"] = {"counts": counts}
    return {"container": first.get("container"), "launcher": first.get("launcher"), "verify": kept,
            "hosts": {h: (None if r is None else {"state": r.get("state")}) for h, r in readings.items()}}


def container_result(host: str, reading: Mapping[str, Any], container: str, launcher: Optional[str],
                     verify: Mapping[str, Any]) -> CheckResult:
    subject = Subject(node=host)
    base = {"container": container, "state": reading.get("state"), "launcher": launcher}
    if "failed_nodes" not in verify:
        return CheckResult(CHECK, host, "error", subject=subject, category=NODE_STATE, details=base,
                           reason="ngc_mpi_verify gave no result: %s" % (verify.get("msg") or "it did not run"))
    failed = verify.get("failed_nodes") or {}
    seen = ((verify.get("mpirun") or {}).get("counts") or {}).get(host)
    details = dict(base, mpirun_seen=seen)
    if host in failed:
        return CheckResult(CHECK, host, "fail", subject=subject, category=NODE_STATE, details=details,
                           problems=(Problem(str(failed[host]), NODE_STATE, subject),))
    details["note"] = "container %s running; ssh on 2222 from %s with a pinned host key; %s" % (
        container, launcher, "mpirun hostname saw it %s time(s)" % seen if seen is not None
        else "mpirun not run (another node failed)")
    return CheckResult(CHECK, host, "pass", subject=subject, category=NODE_STATE, details=details)


def evaluate(recorded: Mapping[str, Any], expectations: Mapping[str, Any],
             context: Mapping[str, Any]) -> List[CheckResult]:
    """One ``mpi_containers`` check per DGX of the record."""
    verify = recorded.get("verify") or {}
    return per_host(recorded, CHECK, lambda host, reading: container_result(
        host, reading, recorded.get("container"), recorded.get("launcher"), verify))
