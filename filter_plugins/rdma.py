# -*- coding: utf-8 -*-
"""Filters for the RDMA stage (playbooks/validate_rdma.yml): the perftest plan per rail, each host's part, the
records (module_utils/network/rdma_plan.py)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.rdma_plan import (BASE_PORT,  # noqa: E402
    host_parts, rdma_plan, records, round_seconds, schedule_seconds)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.schedule import (ALL_PAIRS_MAX, SEED,  # noqa: E402
    choose, dgx_matchings)


def pod_rdma_plan(pod, hostvars, groups, schedule="auto", all_pairs_max=ALL_PAIRS_MAX, rounds=None, seed=SEED,
                  base_port=BASE_PORT):
    """Rounds of perftest pairs on every rail (compute fabric): every pair of DGX up to ``all_pairs_max`` DGX, the
    iperf3 stage's matchings beyond (``schedule``: auto | all_pairs | matchings, as pod_perf_schedule)."""
    dgx = list(groups.get("dgx", []))
    hosts = {h: {"nics": hostvars[h].get("nics") or []} for h in dgx}
    try:
        pairs = None
        if choose(len(dgx), str(schedule or "auto"), int(all_pairs_max)) == "matchings":
            pairs = lambda nics, fabric: dgx_matchings(nics, fabric, int(rounds) if rounds else None, seed)  # noqa: E731
        return rdma_plan(hosts, dgx, pod.get("fabrics") or [], int(base_port), pairs)
    except ValueError as exc:
        raise AnsibleFilterError("pod_rdma_plan: %s" % exc) from exc


def pod_rdma_round_seconds(bw_duration, lat_seconds):
    return round_seconds(float(bw_duration), float(lat_seconds))


def pod_rdma_schedule_seconds(plan, seconds_per_round):
    return schedule_seconds(plan, float(seconds_per_round))


def pod_rdma_host_parts(plan, seconds_per_round, bw_duration):
    try:
        return host_parts(plan, float(seconds_per_round), float(bw_duration))
    except ValueError as exc:
        raise AnsibleFilterError("pod_rdma_host_parts: %s" % exc) from exc


def pod_rdma_records(plan, hostvars, result_vars):
    """One record per planned test from what each host registered (the async_status result, else the launch's)."""
    hosts = sorted({t[k] for r in plan for t in r["tests"] for k in ("server", "client")})
    names = [result_vars] if isinstance(result_vars, str) else list(result_vars)
    got = {}
    for h in hosts:
        try:
            hv = hostvars[h]
        except KeyError:
            got[h] = None
            continue
        got[h] = next((dict(hv[n]) for n in names if isinstance(hv.get(n), dict) and not hv[n].get("skipped")
                       and (hv[n].get("tests") is not None or hv[n].get("unreachable") or hv[n].get("failed"))), None)
    return records(plan, got)


class FilterModule:
    def filters(self):
        return {"pod_rdma_plan": pod_rdma_plan, "pod_rdma_round_seconds": pod_rdma_round_seconds,
                "pod_rdma_schedule_seconds": pod_rdma_schedule_seconds, "pod_rdma_host_parts": pod_rdma_host_parts,
                "pod_rdma_records": pod_rdma_records}
