# -*- coding: utf-8 -*-
"""Filters that build the performance stage's records (roles/pod_perf): the record of one fio step, decided in
Python (module_utils/storage/fio_record.py), never in Jinja; and a fio step's start margin from what the step
before used of its own (module_utils/common/start_margin.py)."""
from __future__ import annotations


from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.start_margin import margin_from_slack
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_record import ready_nodes, step_record_by_host


def pod_fio_step_record_hosts(nodes, hostvars, start_at=None):
    """{{ pod_perf_nodes | pod_fio_step_record_hosts(hostvars, start_at) }}: the step's record from what each node
    registered in the step's per-host tasks (fio_record.PHASE_VARS): {nodes, results: {node: {status, reason,
    result, ...}}, start_at} (docs/results.md)."""
    return step_record_by_host(list(nodes), hostvars, start_at)


def pod_fio_ready(nodes, hostvars):
    """{{ pod_perf_nodes | pod_fio_ready(hostvars) }}: the nodes whose layout finished ok, in the step's order."""
    return ready_nodes(list(nodes), hostvars)


def pod_fio_start_margin(nodes, hostvars, default_margin, prev_nodes=None, prev_margin=None, per_node=0.1,
                         key="pod_perf_fio_waited"):
    """{{ ready | pod_fio_start_margin(hostvars, default, prev_nodes, prev_margin, per_node) }}: the seconds from
    now to a fio step's common start. Step 1, or a step after one that gave no number: ``default_margin`` (the
    configured margin + per node). Later: what the previous step's slowest node used of ``prev_margin`` (its
    read's ``start_slack``, in ``key``) + 1 s + ``per_node`` for each node this step adds, at least 1.5 s, never
    more than ``default_margin`` (margin_from_slack)."""
    default = round(float(default_margin), 2)
    prev_nodes = list(prev_nodes or [])
    if not prev_nodes or prev_margin in (None, ""):
        return default
    slacks = []
    for h in prev_nodes:
        hv = hostvars[h] if h in hostvars else {}
        res = hv[key] if key in hv else {}
        slacks.append(res.get("start_slack") if isinstance(res, dict) else None)
    added = max(0, len(list(nodes)) - len(prev_nodes))
    return margin_from_slack(float(prev_margin), slacks, cap=default, extra=float(per_node) * added)


class FilterModule:
    def filters(self):
        return {"pod_fio_step_record_hosts": pod_fio_step_record_hosts, "pod_fio_ready": pod_fio_ready,
                "pod_fio_start_margin": pod_fio_start_margin}
