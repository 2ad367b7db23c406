# -*- coding: utf-8 -*-
"""Filters for the performance tests (playbooks/validate_perf.yml): schedule, context, progress."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import (eta_seconds, fio_files,  # noqa: E402
    fio_steps, format_eta, iperf_plan, perf_context, progress_line)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_launch import (host_schedules,  # noqa: E402
    records, round_seconds, schedule_seconds)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_confirm import (DEFAULT_MAX_ROUNDS,  # noqa: E402
    confirm_plan, merge, to_confirm)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.schedule import (ALL_PAIRS_MAX, SEED,  # noqa: E402
    GAP_S, STORAGE_ROUNDS, choose, iperf_storage_hosts, predict_seconds, schedule_plan)


def _model(host_names, hostvars):
    return {h: {k: hostvars[h].get(k) for k in ("nics", "dgx_model", "gpus")} for h in host_names}


def pod_iperf_plan(pod, hostvars, groups, storage_iperf=None, base_port=5201, schedule="auto",
                   all_pairs_max=ALL_PAIRS_MAX, rounds=None, storage_rounds=STORAGE_ROUNDS, seed=SEED):
    """Rounds of iperf3 tests. ``schedule`` (pod_perf_schedule) auto | all_pairs | matchings: auto = every pair of
    DGX on every data fabric up to ``all_pairs_max`` DGX (pod_perf_all_pairs_max), a few rounds of matchings per
    fabric beyond (module_utils/perf/schedule.py). Then DGX<->storage with the storage hosts that can run iperf3
    (storage_iperf; default: storage_node.iperf3 true, or the simulator's nfs-ganesha nodes)."""
    dgx, storage = list(groups.get("dgx", [])), list(groups.get("storage", []))
    if storage_iperf is None:
        storage_iperf = iperf_storage_hosts(storage, hostvars)
    try:
        if choose(len(dgx), str(schedule or "auto"), int(all_pairs_max)) == "all_pairs":  # as it always was
            return iperf_plan(_model(dgx + storage, hostvars), dgx, storage, pod.get("fabrics") or [],
                              int(base_port), list(storage_iperf))
        return schedule_plan(_model(dgx + storage, hostvars), dgx, storage, pod.get("fabrics") or [], "matchings",
                             int(all_pairs_max), int(rounds) if rounds else None, int(storage_rounds), seed,
                             int(base_port), list(storage_iperf))
    except ValueError as exc:
        raise AnsibleFilterError("pod_iperf_plan: %s" % exc) from exc


def pod_fio_steps(hosts, mode="linear", max_steps=None):
    return fio_steps(list(hosts), mode, max_steps)


def pod_fio_files(dirs, numjobs, prefix="podfio"):
    return fio_files(list(dirs), int(numjobs), prefix)


def pod_perf_context(pod, hostvars, groups):
    """What the stages' evaluators need from the model (the report's context, module_utils/report/results.py):
    {nodes, storage, sizing}; the sizing's inputs include pod.validation's workload, dataset_tb and caches_tb when
    the pod sets them."""
    dgx, storage = list(groups.get("dgx", [])), list(groups.get("storage", []))
    mounts = int(((pod.get("storage") or {}).get("data_mounts")) or 0)
    out = perf_context(_model(dgx + storage, hostvars), dgx, storage, pod.get("fabrics") or [], mounts)
    validation = pod.get("validation") or {}
    for key in ("workload", "dataset_tb", "caches_tb"):
        if validation.get(key) is not None:
            out["sizing"][key] = validation[key]
    return out


def pod_perf_eta(iperf_rounds_left, iperf_duration, fio_steps_left, fio_seconds_per_step, overhead=5):
    """Seconds left: {{ rounds_left | pod_perf_eta(iperf_duration, fio_steps_left, fio_seconds_per_step) }}."""
    return eta_seconds(int(iperf_rounds_left), float(iperf_duration), int(fio_steps_left),
                       float(fio_seconds_per_step), float(overhead))


def pod_perf_predict(plan, run, fio_steps_count=0):
    """'12m40s': the predicted duration of the iperf3 plan and ``fio_steps_count`` fio steps under the run profile
    (module_utils/perf/schedule.predict_seconds, the same figure scripts/plan_perf.py prints)."""
    return format_eta(predict_seconds(plan, run or {}, int(fio_steps_count)))


def pod_progress(seconds_left, kind, index, total, detail=""):
    return progress_line(kind, int(index), int(total), float(seconds_left), detail)


def pod_iperf_round_seconds(duration, omit=0, gap=GAP_S):
    return round_seconds(float(duration), float(omit or 0), float(gap))


def pod_iperf_host_schedules(plan, seconds_per_round):
    """{host: {listen: [...], tests: [...]}}: each host's part of the whole iperf3 schedule."""
    return host_schedules(plan, float(seconds_per_round))


def pod_iperf_schedule_seconds(plan, seconds_per_round):
    return schedule_seconds(plan, float(seconds_per_round))


def _result(hostvars, host, names):
    """The first of ``names`` that the host registered with something in it (not a skipped task)."""
    try:
        hv = hostvars[host]
    except KeyError:
        return None
    for name in names:
        res = hv.get(name)
        if isinstance(res, dict) and not res.get("skipped"):
            return dict(res)
    return None


def pod_iperf_records(plan, hostvars, servers_var, clients_vars):
    """One record per planned test from what each host registered (see module_utils/perf/iperf_launch.py)."""
    hosts = sorted({t[k] for r in plan for t in r["tests"] for k in ("server", "client")})
    names = [clients_vars] if isinstance(clients_vars, str) else list(clients_vars)
    return records(plan, {h: _result(hostvars, h, [servers_var]) for h in hosts},
                   {h: _result(hostvars, h, names) for h in hosts})


def pod_iperf_confirm_plan(tests, plan, expectations=None, simulated=False, max_rounds=DEFAULT_MAX_ROUNDS):
    """The rounds to run again before a lone pair is called slow (module_utils/perf/iperf_confirm.py): {"rounds",
    "tests", "left"}. ``expectations``: the merged ones (``pod | pod_expectations``: the RA profile's with the pod's
    overrides), as the report reads them."""
    return confirm_plan(plan, to_confirm(tests, expectations or {}, bool(simulated)), int(max_rounds))


def pod_iperf_merge(tests, again, confirmed=None):
    """The first run's records, each test that ran again as the better of its runs, with ``attempts``."""
    return merge(tests, again, confirmed)


class FilterModule:
    def filters(self):
        return {"pod_iperf_plan": pod_iperf_plan, "pod_fio_steps": pod_fio_steps, "pod_fio_files": pod_fio_files,
                "pod_perf_context": pod_perf_context, "pod_perf_eta": pod_perf_eta,
                "pod_perf_predict": pod_perf_predict, "pod_progress": pod_progress,
                "pod_iperf_round_seconds": pod_iperf_round_seconds,
                "pod_iperf_host_schedules": pod_iperf_host_schedules,
                "pod_iperf_schedule_seconds": pod_iperf_schedule_seconds, "pod_iperf_records": pod_iperf_records,
                "pod_iperf_confirm_plan": pod_iperf_confirm_plan, "pod_iperf_merge": pod_iperf_merge}
