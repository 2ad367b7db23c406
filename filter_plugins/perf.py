# -*- coding: utf-8 -*-
"""Filters for the performance tests (playbooks/validate_perf.yml): schedule, context, progress."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from perf_plan import eta_seconds, fio_files, fio_steps, iperf_plan, perf_context, progress_line  # noqa: E402


def _model(host_names, hostvars):
    return {h: {k: hostvars[h].get(k) for k in ("nics", "dgx_model", "gpus")} for h in host_names}


def pod_iperf_plan(pod, hostvars, groups, storage_iperf=None, base_port=5201):
    """Rounds of iperf3 tests: DGX tournament per data fabric, then DGX<->storage with the storage hosts that can
    run iperf3 (storage_iperf; default: storage_node.iperf3 true, or the simulator's nfs-ganesha nodes)."""
    dgx, storage = list(groups.get("dgx", [])), list(groups.get("storage", []))
    if storage_iperf is None:
        storage_iperf = [h for h in storage if (hostvars[h].get("storage_node") or {}).get(
            "iperf3", (hostvars[h].get("storage_node") or {}).get("platform") == "nfs-ganesha")]
    return iperf_plan(_model(dgx + storage, hostvars), dgx, storage, pod.get("fabrics") or [], int(base_port),
                      list(storage_iperf))


def pod_fio_steps(hosts, mode="linear", max_steps=None):
    return fio_steps(list(hosts), mode, max_steps)


def pod_fio_files(dirs, numjobs, prefix="podfio"):
    return fio_files(list(dirs), int(numjobs), prefix)


def pod_perf_context(pod, hostvars, groups):
    dgx, storage = list(groups.get("dgx", [])), list(groups.get("storage", []))
    mounts = int(((pod.get("storage") or {}).get("data_mounts")) or 0)
    return perf_context(_model(dgx + storage, hostvars), dgx, storage, pod.get("fabrics") or [], mounts)


def pod_perf_eta(iperf_rounds_left, iperf_duration, fio_steps_left, fio_seconds_per_step, overhead=5):
    """Seconds left: {{ rounds_left | pod_perf_eta(iperf_duration, fio_steps_left, fio_seconds_per_step) }}."""
    return eta_seconds(int(iperf_rounds_left), float(iperf_duration), int(fio_steps_left),
                       float(fio_seconds_per_step), float(overhead))


def pod_progress(seconds_left, kind, index, total, detail=""):
    return progress_line(kind, int(index), int(total), float(seconds_left), detail)


class FilterModule:
    def filters(self):
        return {"pod_iperf_plan": pod_iperf_plan, "pod_fio_steps": pod_fio_steps, "pod_fio_files": pod_fio_files,
                "pod_perf_context": pod_perf_context, "pod_perf_eta": pod_perf_eta, "pod_progress": pod_progress}
