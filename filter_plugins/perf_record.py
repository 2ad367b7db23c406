# -*- coding: utf-8 -*-
"""Filters that build the performance stage's records (roles/pod_perf): the record of one fio step, decided in
Python (module_utils/storage/fio_record.py), never in Jinja."""
from __future__ import annotations


from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_record import ready_nodes, step_record_by_host


def pod_fio_step_record_hosts(nodes, hostvars, start_at=None):
    """{{ pod_perf_nodes | pod_fio_step_record_hosts(hostvars, start_at) }}: the step's record from what each node
    registered in the step's per-host tasks (fio_record.PHASE_VARS): {nodes, results: {node: {status, reason,
    result, ...}}, start_at} (docs/results.md)."""
    return step_record_by_host(list(nodes), hostvars, start_at)


def pod_fio_ready(nodes, hostvars):
    """{{ pod_perf_nodes | pod_fio_ready(hostvars) }}: the nodes whose layout finished ok, in the step's order."""
    return ready_nodes(list(nodes), hostvars)


class FilterModule:
    def filters(self):
        return {"pod_fio_step_record_hosts": pod_fio_step_record_hosts, "pod_fio_ready": pod_fio_ready}
