# -*- coding: utf-8 -*-
"""Filters for the drift stage (playbooks/validate_drift.yml, module_utils/drift/eval.py)."""
from __future__ import annotations


def drift_stage_record(dgx_hosts, hostvars, result_var="pod_drift_read"):
    """pod_stages.drift from every DGX's registered pod_drift result: {nodes: {host: {status, reason, files,
    containers}}}. A DGX without a result (unreachable, or its play failed before the module ran) and one
    whose module failed are recorded as ``error`` with the reason, never left out."""
    nodes = {}
    for host in dgx_hosts:
        res = (hostvars.get(host) or {}).get(result_var)
        if res is None:
            nodes[host] = {"status": "error", "unreachable": True,
                           "reason": "no result: the DGX was unreachable or its play failed before the files could "
                                     "be read"}
        elif res.get("unreachable"):
            nodes[host] = {"status": "error", "unreachable": True, "reason": "unreachable: %s" % (res.get("msg") or "")}
        elif res.get("failed") or "files" not in res:
            nodes[host] = {"status": "error",
                           "reason": "pod_drift failed: %s" % (res.get("msg") or res.get("module_stderr") or "")}
        else:
            nodes[host] = {"status": "ok", "files": res.get("files") or [], "containers": res.get("containers") or []}
    return {"nodes": nodes}


class FilterModule:
    def filters(self):
        return {"drift_stage_record": drift_stage_record}
