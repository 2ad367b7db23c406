# -*- coding: utf-8 -*-
"""Filters that build the performance stage's records (roles/pod_perf): the record of one fio step, decided in
Python (module_utils/storage/fio_record.py), never in Jinja."""
from __future__ import annotations


from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_record import step_record


def pod_fio_step_record(nodes, layout_jobs, layout_waited=None, jobs=None, waited=None, start_at=None):
    """{{ pod_perf_nodes | pod_fio_step_record(pod_perf_fio_layout_jobs, pod_perf_fio_layout_waited | default(none),
    pod_perf_fio_jobs | default(none), pod_perf_fio_waited | default(none), pod_perf_fio_start_at | default(none)) }}:
    {nodes, results: {node: {status, reason, result, ...}}, start_at} (docs/results.md)."""
    return step_record(list(nodes), layout_jobs, layout_waited, jobs, waited, start_at)


class FilterModule:
    def filters(self):
        return {"pod_fio_step_record": pod_fio_step_record}
