# -*- coding: utf-8 -*-
"""The record of one fio step (roles/pod_perf/tasks/fio_step.yml, docs/results.md). Pure functions.

A step runs pod_fio on every node of the step at once: phase=layout (async) and its async_status wait, then
phase=read (async, only on the nodes whose layout succeeded) and its wait. ``step_record`` reads the four
registered results and says, per node, what happened - the first thing that went wrong wins:

===========================================  =========  ============================================================
what                                         status     reason
===========================================  =========  ============================================================
the layout launch or its wait unreachable    error      ``<node> unreachable: <msg>``
the layout never started (no job id)         error      ``fio layout did not start: <msg>``
the layout wait gave no finished status      error      ``fio layout: <msg or "did not finish">``
the layout said status != ok                 error      ``layout: <reason or "failed">`` (+ layout, cleanup, seconds)
the read launch or its wait unreachable      error      ``<node> unreachable: <msg>`` (+ layout)
the read never started (no job id)           error      ``fio did not start: <msg>`` (+ layout)
the read wait gave no finished status        error      ``fio: <msg or "did not finish">`` (+ layout)
otherwise                                    the read's  its reason, result, layout, cleanup, seconds (layout + read,
                                             status     0.1 s), started_at, late_by; and ``layout_reused`` /
                                                        ``kept`` (true) when the layout wrote nothing because an
                                                        earlier step's read kept the files / this read kept them
                                                        for a later step (pod_fio reuse / keep)
===========================================  =========  ============================================================

A node that already holds its files (the host fact FILES_VAR) skips the step's layout. In its first step after
the layout before the steps (tasks/fio.yml) the record shows that layout as if it had run in the step; after
a read that kept them, the skipped layout counts as one that wrote nothing (``layout_reused: true``, no layout
seconds). A skipped layout without such files is still an error.

The same data, key for key and in the same order, as the Jinja template it replaced
(playbooks/tasks/perf_fio_record.j2; tests/unit/test_fio_record.py compares them on recorded cases), so
results.json does not change by a byte (the two keys of reused files are added only when true).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

_MISSING = object()


def _nth(registered: Any, index: int) -> Dict[str, Any]:
    """The index-th loop result of a registered task ({} when the task or that result is missing)."""
    results = registered.get("results") if isinstance(registered, dict) else None
    if isinstance(results, list) and 0 <= index < len(results) and isinstance(results[index], dict):
        return results[index]
    return {}


def _get(d: Dict[str, Any], key: str, default: Any) -> Any:
    """d[key], or default only when the key is absent (a None value stays None, as Jinja's default())."""
    return d[key] if key in d else default


def _num(value: Any) -> float:
    """A number of seconds: float(value), 0.0 when it is none or not a number (Jinja's float filter)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _finished(waited: Dict[str, Any]) -> bool:
    return bool(_get(waited, "finished", False)) and "status" in waited


def held_files(files: Any) -> bool:
    """True when ``files`` (FILES_VAR) is the finished, ok layout whose files the node still holds."""
    return isinstance(files, dict) and _finished(files) and files.get("status") == "ok"


def _carry(layout_job: Dict[str, Any], layout_waited: Dict[str, Any], files: Any):
    """The layout's two results. A layout skipped because the node holds its files is the layout that wrote
    them when ``files`` is that layout's own result (laid out before the steps: the node's first step shows it,
    as if laid out in the step), else one that wrote nothing (kept by an earlier read: reused, 0 s)."""
    if _get(layout_job, "skipped", False) is True and held_files(files):
        job = {"ansible_job_id": _get(files, "ansible_job_id", "held")}
        if "layout" in files:
            return job, dict(files)
        return job, {"finished": 1, "status": "ok", "reused": True, "seconds": 0}
    return layout_job, layout_waited


def node_record(node: str, layout_job: Dict[str, Any], layout_waited: Dict[str, Any], job: Dict[str, Any],
                waited: Dict[str, Any], files: Any = None) -> Dict[str, Any]:
    """One node's record: {status, reason, result[, layout, cleanup, seconds, started_at, late_by]}. ``files``:
    the node's FILES_VAR (a layout skipped because the node holds its files counts as done: see ``_carry``)."""
    lj, lw = _carry(layout_job, layout_waited, files)
    j, w = job, waited
    if _get(lj, "unreachable", False) or _get(lw, "unreachable", False):
        return {"status": "error", "reason": "%s unreachable: %s" % (node, _get(lj, "msg", _get(lw, "msg", ""))),
                "result": {}}
    if "ansible_job_id" not in lj:
        return {"status": "error", "reason": "fio layout did not start: %s" % (_get(lj, "msg", ""),), "result": {}}
    if not _finished(lw):
        return {"status": "error", "reason": "fio layout: %s" % (_get(lw, "msg", "did not finish"),), "result": {}}
    layout = _get(lw, "layout", {})
    if lw["status"] != "ok":
        return {"status": "error", "reason": "layout: %s" % (_get(lw, "reason", "failed"),), "result": {},
                "layout": layout, "cleanup": _get(lw, "cleanup", None), "seconds": _get(lw, "seconds", None)}
    if _get(j, "unreachable", False) or _get(w, "unreachable", False):
        return {"status": "error", "reason": "%s unreachable: %s" % (node, _get(j, "msg", _get(w, "msg", ""))),
                "result": {}, "layout": layout}
    if "ansible_job_id" not in j:
        return {"status": "error", "reason": "fio did not start: %s" % (_get(j, "msg", ""),), "result": {},
                "layout": layout}
    if not _finished(w):
        return {"status": "error", "reason": "fio: %s" % (_get(w, "msg", "did not finish"),), "result": {},
                "layout": layout}
    record = {"status": w["status"], "reason": _get(w, "reason", None), "result": _get(w, "result", {}),
              "layout": layout, "cleanup": _get(w, "cleanup", None),
              "seconds": round(_num(_get(lw, "seconds", 0)) + _num(_get(w, "seconds", 0)), 1),
              "started_at": _get(w, "started_at", None), "late_by": _get(w, "late_by", None)}
    if _get(lw, "reused", False) is True:
        record["layout_reused"] = True
    if _get(w, "kept", False) is True:
        record["kept"] = True
    return record


def step_record(nodes: Sequence[str], layout_jobs: Any, layout_waited: Any = None, jobs: Any = None,
                waited: Any = None, start_at: Optional[Any] = None, files: Optional[Dict[str, Any]] = None
                ) -> Dict[str, Any]:
    """One fio step: {nodes, results: {node: node_record}, start_at}. The four registered results are those of the
    step's loops over ``nodes`` (layout, wait for the layouts, read, wait for the reads), in that order; any may
    be None (not run). ``files``: node -> its FILES_VAR."""
    names: List[str] = list(nodes)
    held = files or {}
    results = {h: node_record(h, _nth(layout_jobs, i), _nth(layout_waited, i), _nth(jobs, i), _nth(waited, i),
                              held.get(h))
               for i, h in enumerate(names)}
    return {"nodes": names, "results": results, "start_at": start_at}


# What each node registered in the step's four per-host tasks (roles/pod_perf/tasks/fio_step.yml), in phase order.
PHASE_VARS = ("pod_perf_fio_layout_job", "pod_perf_fio_layout_waited", "pod_perf_fio_job", "pod_perf_fio_waited")
# The finished layout whose files the node holds now (tasks/fio.yml, fio_step.yml): its step layout is skipped.
FILES_VAR = "pod_perf_fio_files"


def _registered(by_node: Any, node: str, var: str) -> Dict[str, Any]:
    """by_node[node][var] as a plain dict ({} when the node or the variable is missing)."""
    try:
        value = by_node[node].get(var)
    except (KeyError, AttributeError, TypeError):
        return {}
    return dict(value) if isinstance(value, dict) or hasattr(value, "keys") else {}


def step_record_by_host(nodes: Sequence[str], by_node: Any, start_at: Optional[Any] = None) -> Dict[str, Any]:
    """``step_record`` for a step whose phases ran as one task per node (each node registered its own four
    results under PHASE_VARS; ``by_node``: node -> its variables, e.g. Ansible's hostvars). The same record as the
    loop form: the loops are rebuilt from each node's own results, in the step's node order."""
    names: List[str] = list(nodes)
    loops = [{"results": [_registered(by_node, n, var) for n in names]} for var in PHASE_VARS]
    return step_record(names, *loops, start_at=start_at, files={n: _registered(by_node, n, FILES_VAR) for n in names})


def ready_nodes(nodes: Sequence[str], by_node: Any) -> List[str]:
    """The step's nodes whose layout wait finished with status ok, or whose layout was skipped because they hold
    their files (FILES_VAR): those that read (in the step's order)."""
    out = []
    for n in nodes:
        _, waited = _carry(_registered(by_node, n, PHASE_VARS[0]), _registered(by_node, n, PHASE_VARS[1]),
                           _registered(by_node, n, FILES_VAR))
        if _finished(waited) and waited.get("status") == "ok":
            out.append(n)
    return out
