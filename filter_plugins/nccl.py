# -*- coding: utf-8 -*-
"""Filters for the NCCL stage (playbooks/validate_nccl.yml); the logic is in module_utils/nccl/plan.py."""
from __future__ import annotations


from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import (collect, collect_pairs,
    multi_node_expectation, needs_localisation, pair_rounds, pair_start_margin, round_launchers, run_record,
    thresholds, topology)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod


def _pick(hostvars, hosts, keys):
    """Only the keys asked for (each templated on access; dict(hostvars[h]) would template every var)."""
    out = {}
    for h in hosts:
        hv = hostvars[h]
        out[h] = {k: hv[k] for k in keys if k in hv}
    return out


def pod_nccl_topology(pod, hostvars, dgx):
    """The NCCL topology (module_utils/nccl/plan.topology) of the typed pod of the DGX in ``dgx``."""
    dgx = list(dgx)
    return topology(Pod.from_hostvars({h: hostvars[h] for h in dgx}, {"dgx": dgx}, pod), dgx)


def pod_nccl_pair_rounds(nodes):
    return pair_rounds(list(nodes))


def pod_nccl_round_launchers(rnd):
    return round_launchers(rnd)


def pod_nccl_thresholds(expectations):
    """{multi_node_fraction_of_nics, plateau_sizes} from the merged expectations (``pod | pod_expectations``)."""
    return thresholds(expectations)


def pod_nccl_needs_localisation(all_run, topo, expectations, profile, always=False, simulated=False):
    """Whether to run the pair rounds (module_utils/nccl/plan.needs_localisation), with the thresholds of the
    merged expectations (``pod | pod_expectations``: the RA profile's with the pod's overrides) - the same the
    report's evaluation reads."""
    t = thresholds(expectations)
    return needs_localisation(all_run, multi_node_expectation(topo, t["multi_node_fraction_of_nics"]), profile,
                              bool(always), bool(simulated), t["plateau_sizes"])


def pod_nccl_record(result, nodes):
    return run_record(result, list(nodes))


def pod_nccl_collect(hosts, hostvars, key, nodes_if_missing=None):
    return collect(list(hosts), _pick(hostvars, hosts, (key,)), key, nodes_if_missing)


def pod_nccl_collect_pairs(hosts, hostvars, key):
    return collect_pairs(list(hosts), _pick(hostvars, hosts, (key,)), key)


def pod_nccl_pair_margin(hosts, hostvars, first_margin, key="pod_nccl_single"):
    """The localisation rounds' start margin (plan.pair_start_margin) from the ``start_slack`` of each host's
    step-1 result (``key``)."""
    picked = _pick(hostvars, hosts, (key,))
    slacks = [(picked[h].get(key) or {}).get("start_slack") for h in hosts]
    return pair_start_margin(None if first_margin is None else float(first_margin), slacks)


class FilterModule:
    def filters(self):
        return {"pod_nccl_topology": pod_nccl_topology, "pod_nccl_pair_rounds": pod_nccl_pair_rounds,
                "pod_nccl_round_launchers": pod_nccl_round_launchers,
                "pod_nccl_needs_localisation": pod_nccl_needs_localisation, "pod_nccl_thresholds": pod_nccl_thresholds,
                "pod_nccl_record": pod_nccl_record,
                "pod_nccl_collect": pod_nccl_collect, "pod_nccl_collect_pairs": pod_nccl_collect_pairs,
                "pod_nccl_pair_margin": pod_nccl_pair_margin}
