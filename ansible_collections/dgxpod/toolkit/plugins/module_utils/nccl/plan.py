# -*- coding: utf-8 -*-
"""The NCCL stage's plan: topology facts from the pod model, pair rounds, when to localise. Pure functions.

- ``topology``: from the typed ``Pod`` (module_utils/pod/types.py), per DGX the GPUs, the compute-fabric NICs
  (count, Gb/s, RDMA devices = the HCAs NCCL must use), whether the model has GPUDirect RDMA; what the
  evaluation compares the transport lines with.
- ``pair_rounds``: the DGX tournament of module_utils/perf/plan.round_robin (every pair once, no DGX twice
  in a round), each pair launched from its first node.
- ``needs_localisation``: run the pairs when the all-node step failed (error, wrong results, or below the
  expectation), or always with the ``full`` profile / ``localise: always``.
- ``plateau_busbw``: the large-message bus bandwidth of a run (not nccl-tests' average over all sizes).
- ``pair_start_margin``: the localisation rounds' start margin from what step 1's launch used of its own.
"""
from __future__ import annotations

from statistics import median
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_gpus, dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.start_margin import margin_from_slack
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import round_robin
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import expectation


def _gdr(model: str) -> bool:
    """GPUDirect RDMA between the model's GPUs and its ConnectX HCAs (the hardware catalogue; False when unknown)."""
    m = dgx_model(model)
    return bool(m is not None and m.gpudirect_rdma)


def topology(pod: Pod, dgx: Sequence[str]) -> Dict[str, Any]:
    """{model, gpus_per_node, nodes: {host: {gpus, nics, nic_gbps, hcas}}, fabric: 'rdma'|'tcp',
    gdr_expected} of the typed pod's DGX named in ``dgx`` (in that order): compute-fabric NICs only (the
    fabrics whose ``carries`` has ``compute``)."""
    compute = {f.name for f in pod.fabrics_carrying("compute")}
    nodes = {}
    models = set()
    for h in dgx:
        host = pod.hosts.get(h)
        model = str(host.dgx_model or "") if host is not None else ""
        models.add(model)
        nics = [n for n in (host.nics if host is not None else ()) if n.fabric.name in compute]
        gpus = host.gpus if host is not None else None
        nodes[h] = {"gpus": int(gpus or dgx_gpus(model) or 8), "nics": len(nics),
                    "nic_gbps": sum(float(n.speed or 0) for n in nics) or None,
                    "hcas": sorted(n.rdma_device for n in nics if n.rdma_device)}
    model = sorted(models)[0] if len(models) == 1 else "mixed"
    rdma = any(v["hcas"] for v in nodes.values())
    gpus_per_node = sorted({v["gpus"] for v in nodes.values()})
    return {"model": model, "gpus_per_node": gpus_per_node[0] if len(gpus_per_node) == 1 else None, "nodes": nodes,
            "fabric": "rdma" if rdma else "tcp", "gdr_expected": bool(rdma and _gdr(model))}


def pair_rounds(nodes: Sequence[str]) -> List[Dict[str, Any]]:
    """[{round, pairs: [[a, b], ...]}]: the round-robin tournament of the DGX."""
    return [{"round": i + 1, "pairs": [sorted([a, b], key=list(nodes).index) for a, b in rnd]}
            for i, rnd in enumerate(round_robin(list(nodes)))]


def round_launchers(rnd: Dict[str, Any]) -> Dict[str, List[str]]:
    """launcher -> [launcher, peer] for one round (the first node of each pair launches it)."""
    return {pair[0]: list(pair) for pair in rnd["pairs"]}


def pair_start_margin(first_margin: Optional[float], slacks: Sequence[Any], headroom: float = 1.0,
                      floor: float = 1.5) -> Optional[float]:
    """The start margin of the localisation rounds, sized from step 1: every DGX launched its run at once in
    step 1 and returned ``start_slack``, the seconds of ``first_margin`` left when it was ready. What the
    slowest node used (``first_margin`` - the least slack) plus ``headroom``, at least ``floor``, never more
    than ``first_margin`` - a round launches on half the DGX, so step 1's launch bounds its launch. Without a
    number from step 1 (it did not run, every node failed before its start), or when a node was late
    (negative slack), the rounds keep ``first_margin``."""
    if first_margin is None:
        return None
    return margin_from_slack(float(first_margin), slacks, headroom=headroom, floor=floor)


def plateau_busbw(rows: Sequence[Dict[str, Any]], sizes: int = 3, min_bytes: int = 0) -> Optional[float]:
    """Median over the ``sizes`` largest message sizes (at least ``min_bytes``) of each size's best bus
    bandwidth (out-of-place or in-place), GB/s. None without rows."""
    good = [r for r in rows or [] if int(r.get("size") or 0) >= int(min_bytes or 0)] or list(rows or [])
    good = sorted(good, key=lambda r: int(r.get("size") or 0))[-max(1, int(sizes)):]
    vals = []
    for r in good:
        bw = [float(p["busbw"]) for p in (r.get("out_of_place"), r.get("in_place")) if p and p.get("busbw") is not None]
        if bw:
            vals.append(max(bw))
    return round(median(vals), 4) if vals else None


def multi_node_expectation(topo: Dict[str, Any], fraction: Optional[float]) -> Optional[float]:
    """Bus bandwidth a multi-node all-reduce should reach, GB/s: fraction x the slowest node's compute NIC
    bandwidth (NIC count x speed / 8)."""
    bws = [v["nic_gbps"] for v in (topo.get("nodes") or {}).values() if v.get("nic_gbps")]
    if not bws or fraction is None:
        return None
    return round(min(bws) / 8.0 * float(fraction), 3)


def thresholds(expectations: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The NCCL thresholds the stage's own decisions take (whether to localise, the plateau it records), read from
    the merged expectations (pod/profile.py merged_expectations: the RA profile's with the pod's overrides, bare or
    {value, source}) the way the evaluation reads them (result.check.expectation)."""
    fraction = expectation(expectations or {}, "nccl", "multi_node_fraction_of_nics", 0.8)[0]
    sizes = expectation(expectations or {}, "nccl", "plateau_sizes", 3)[0]
    return {"multi_node_fraction_of_nics": None if fraction is None else float(fraction),
            "plateau_sizes": int(sizes if sizes is not None else 3)}


def needs_localisation(all_run: Optional[Dict[str, Any]], expected_busbw: Optional[float], profile: str,
                       always: bool = False, simulated: bool = False, plateau_sizes: int = 3) -> Dict[str, Any]:
    """{"run": bool, "why": str}: localise when the all-node run did not finish, had wrong results, or its
    plateau busbw is below ``expected_busbw`` (real pods); always with the full profile or ``always``."""
    if always or profile == "full":
        return {"run": True, "why": "%s profile: pairs always run" % ("localise: always" if always else profile)}
    if not all_run:
        return {"run": True, "why": "the all-node run did not run"}
    if not all_run.get("ok"):
        return {"run": True, "why": "the all-node run failed: %s" % (all_run.get("error") or "no result")}
    wrong = sum(int((r.get(k) or {}).get("wrong") or 0) for r in all_run.get("rows") or []
                for k in ("out_of_place", "in_place"))
    if wrong or not ((all_run.get("footer") or {}).get("out_of_bounds_ok", True)):
        return {"run": True, "why": "the all-node run had wrong results"}
    bw = plateau_busbw(all_run.get("rows") or [], plateau_sizes)
    if expected_busbw is not None and not simulated and bw is not None and bw < expected_busbw:
        return {"run": True, "why": "all-node busbw %.1f GB/s < expected %.1f GB/s" % (bw, expected_busbw)}
    return {"run": False, "why": "the all-node run passed"}


RUN_KEYS = ("nodes", "ok", "error", "failed_hosts", "failed_ranks", "rows", "footer", "transport", "ranks", "backend",
            "seconds", "last_lines", "cleanup", "round", "slurm", "late_by", "start_slack")


def run_record(result: Optional[Dict[str, Any]], nodes: Sequence[str]) -> Dict[str, Any]:
    """The part of a pod_nccl result the stage records. A result of a task that failed or did not run
    becomes ok=false with the reason, naming the nodes."""
    r = dict(result or {})
    if r.get("skipped"):
        return {"nodes": list(nodes), "ok": False, "error": "not run (%s)" % (r.get("skip_reason") or "skipped"),
                "failed_hosts": {n: "not run" for n in nodes}}
    if r.get("failed") or "ok" not in r:
        msg = r.get("msg") or "the pod_nccl task failed without a result"
        return {"nodes": list(nodes), "ok": False, "error": str(msg)[:2000],
                "failed_hosts": {nodes[0]: str(msg)[:300]} if nodes else {}}
    out = {k: r[k] for k in RUN_KEYS if k in r}
    out["nodes"] = list(r.get("nodes") or nodes)
    return out


def collect(hosts: Sequence[str], hostvars: Dict[str, Dict[str, Any]], key: str,
            nodes_if_missing: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """One recorded run per host (the fact ``key``); a host without it (unreachable, its play failed)
    gives an error run naming it."""
    out = []
    for h in hosts:
        rec = (hostvars.get(h) or {}).get(key)
        if rec is None:
            nodes = list(nodes_if_missing or [h])
            rec = {"nodes": nodes, "ok": False, "failed_hosts": {h: "no result"},
                   "error": "%s recorded no result (unreachable, or its play stopped before the run)" % h}
        out.append(rec)
    return out


def collect_pairs(hosts: Sequence[str], hostvars: Dict[str, Dict[str, Any]], key: str) -> List[Dict[str, Any]]:
    """Every pair run the launchers recorded, by round then launcher order."""
    runs = []
    for h in hosts:
        runs += list((hostvars.get(h) or {}).get(key) or [])
    return sorted(runs, key=lambda r: (int(r.get("round") or 0), list(hosts).index(r["nodes"][0])
                                       if r.get("nodes") and r["nodes"][0] in hosts else 0))
