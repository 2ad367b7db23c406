# -*- coding: utf-8 -*-
"""The fio stage (registered in module_utils/report/stages.py): the fio read steps and the storage sizing
against the RA profile's expectations, and the report's fio plots and sizing table. Pure functions.

Record (playbooks/validate_perf.yml through playbooks/tasks/record_stage.yml): ``pod_stages.fio = {"run":
{profile, params}, "steps": [{"nodes": [h...], "results": {h: pod_fio's record}}]}``. What the evaluation needs
from the model comes in the registry's context: ``nodes`` ({host: {storage_link_gbps, mounts}}), ``storage``
({nodes, link_gbps}) and ``sizing`` (:func:`sizing`, the document's ``sizing``).

- ``fio_read`` (absolute, NODE_PERF: subject the node, its step, storage): each DGX's read rate in each scaling
  step against :func:`node_capacity` - the least of its storage links, its share of the storage front-end links,
  of the storage nodes and of its NFS mounts.
- ``fio_relative`` (relative, NODE_PERF): each node against the median node of its step.
- ``fio_scaling`` (absolute, POD_PERF: subject the step's nodes): a step's aggregate against the sum of its nodes'
  expectations.
- ``storage_sizing`` (absolute, POD_PERF: the all-node step): its aggregate against what the pod's GPUs need
  (:func:`sizing`).

The checks are :class:`CheckResult`s (``*_checks``; ``evaluate_*`` give their results.json entries).
"""
from __future__ import annotations

import math
from statistics import median
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_PERF, POD_PERF, CheckResult,
    Subject, expectation, pass_fail)

MBPS_PER_GBPS = 125.0  # 1 Gb/s = 125 MB/s (decimal, as the RAs write MB/s)


def _pct(x: float) -> str:
    return "%d%%" % round(100 * x)


# ------------------------------------------------------------------------------------------------- fio

def node_capacity(node: Dict[str, Any], n_nodes: int, storage: Dict[str, Any], exp: Dict[str, Any]) -> Dict[str, Any]:
    """Expected read MB/s for one DGX when ``n_nodes`` read at once, with the figure that limits it.

    node: {storage_link_gbps (sum of its NICs on storage fabrics), mounts (directories used)}
    storage: {nodes (count), link_gbps (sum of storage NIC speeds on storage fabrics)}"""
    frac, frac_src = expectation(exp, "storage", "read_fraction_of_links", 0.9)
    ra, ra_src = expectation(exp, "storage", "ra_read_per_dgx")
    ra_link = ((exp.get("storage") or {}).get("ra_read_per_dgx") or {}).get("link_gbps") \
        if isinstance((exp.get("storage") or {}).get("ra_read_per_dgx"), dict) else None
    per_node, per_node_src = expectation(exp, "storage", "read_per_storage_node")
    per_mount, per_mount_src = expectation(exp, "storage", "read_per_nfs_mount")
    n = max(1, int(n_nodes))
    limits = []  # (Gb/s-equivalent bottleneck for this DGX, what)
    if node.get("storage_link_gbps"):
        limits.append((float(node["storage_link_gbps"]), "its storage links (%s Gb/s)" % node["storage_link_gbps"]))
    if storage.get("link_gbps"):
        limits.append((float(storage["link_gbps"]) / n, "storage front-end links %s Gb/s shared by %d node(s)"
                       % (storage["link_gbps"], n)))
    if not limits:
        return {"expected": None, "limit": "no port speeds in the model", "source": None}
    gbps, what = min(limits)
    if ra and ra_link:
        mbps = float(ra) * gbps / float(ra_link)
        basis = "RA %s MB/s per %s Gb/s scaled to %s" % (ra, ra_link, what)
        sources = [ra_src]
    else:
        mbps = gbps * MBPS_PER_GBPS
        basis = "line rate of %s" % what
        sources = []
    if per_node and storage.get("nodes"):
        cap = float(per_node) * storage["nodes"] / n
        if cap < mbps:
            mbps, basis = cap, "%s storage node(s) x %s MB/s shared by %d DGX" % (storage["nodes"], per_node, n)
            sources = [per_node_src]
    if per_mount and node.get("mounts"):
        cap = float(per_mount) * node["mounts"]
        if cap < mbps:
            mbps, basis = cap, "%d NFS mount(s) x %s MB/s" % (node["mounts"], per_mount)
            sources = [per_mount_src]
    return {"expected": round(frac * mbps, 1), "limit": "%s x %s" % (frac, basis),
            "source": "; ".join([frac_src] + sources)}


def _node_mbps(r: Dict[str, Any]) -> Optional[float]:
    if not r or r.get("status") != "ok":
        return None
    agg = ((r.get("result") or {}).get("aggregate") or {}).get("read") or {}
    bw = agg.get("bw_bytes")
    return None if bw is None else bw / 1e6


def fio_checks(steps: Sequence[Dict[str, Any]], nodes: Dict[str, Dict[str, Any]], storage: Dict[str, Any],
               exp: Dict[str, Any]) -> List[CheckResult]:
    """Checks for the fio scaling steps: [{"nodes": [h...], "results": {h: pod_fio result}}].
    ``fio_read`` and ``fio_scaling`` are absolute (build_results applies the simulated policy)."""
    rel, rel_src = expectation(exp, "storage", "relative_fraction_of_peers", 0.8)
    checks = []
    for step in steps:
        hosts = list(step.get("nodes") or [])
        n = len(hosts)
        results = step.get("results") or {}
        measured = {h: _node_mbps(results.get(h) or {}) for h in hosts}
        good = [v for v in measured.values() if v is not None]
        ref = median(good) if len(good) >= 2 else None
        total_expected = 0.0
        for h in hosts:
            base = {"step": n}
            subject = Subject(node=h, step=n, storage=True)
            r = results.get(h) or {}
            mbps = measured[h]
            if mbps is None:
                reason = r.get("reason") or ("no result: the host was unreachable or failed before fio ran"
                                             if not r else (r.get("result") or {}).get("error") or "no result")
                for name in ("fio_read", "fio_relative"):
                    checks.append(CheckResult(name, h, "error", unit="MB/s", details=dict(base),
                                              reason="fio on %s (%d-node step): %s" % (h, n, reason),
                                              subject=subject, category=NODE_PERF,
                                              unreachable=bool(r.get("unreachable"))))
                continue
            res = r.get("result") or {}
            lat = ((res.get("aggregate") or {}).get("read") or {}).get("clat_percentiles_ns") or {}
            extra = dict(base, iops=round(((res.get("aggregate") or {}).get("read") or {}).get("iops") or 0.0, 1),
                         clat_p50_ms=round(lat.get("p50", 0.0) / 1e6, 3),
                         clat_p99_ms=round(lat.get("p99", 0.0) / 1e6, 3),
                         clat_p99_9_ms=round(lat.get("p99.9", 0.0) / 1e6, 3))
            cap = node_capacity(nodes.get(h) or {}, n, storage, exp)
            if cap["expected"]:
                total_expected += cap["expected"]
            details = dict(extra, limit=cap["limit"])
            if cap["expected"] is None:
                a = CheckResult("fio_read", h, "skipped", measured=round(mbps, 1), unit="MB/s", source=cap["source"],
                                reason=cap["limit"], absolute=True, details=details, subject=subject,
                                category=NODE_PERF)
            else:
                ok = mbps >= cap["expected"]
                cause = None if ok else (
                    "%s read %.0f MB/s in the %d-node step, %s of the %.0f MB/s expected (%s): check its storage NICs, "
                    "its mounts (options rsize/wsize, which storage IP each uses) and the storage nodes' load"
                    % (h, mbps, n, _pct(mbps / cap["expected"]), cap["expected"], cap["limit"]))
                a = CheckResult("fio_read", h, pass_fail(ok), expected=cap["expected"], measured=round(mbps, 1),
                                unit="MB/s", source=cap["source"], cause=cause, absolute=True, details=details,
                                subject=subject, category=NODE_PERF)
            checks.append(a)
            if ref is None:
                rc = CheckResult("fio_relative", h, "skipped", measured=round(mbps, 1), unit="MB/s", source=rel_src,
                                 reason="only one node in this step", details=dict(extra), subject=subject,
                                 category=NODE_PERF)
            else:
                ratio = mbps / ref if ref else 0.0
                cause = None if ratio >= rel else (
                    "%s read %.0f MB/s, %s of the median node (%.0f MB/s) in the %d-node step: check its storage "
                    "NICs and mounts, and the storage node(s) its mounts point at" % (h, mbps, _pct(ratio), ref, n))
                rc = CheckResult("fio_relative", h, pass_fail(ratio >= rel), expected=round(rel * ref, 1),
                                 measured=round(mbps, 1), unit="MB/s", source=rel_src, cause=cause,
                                 details=dict(extra, ratio=round(ratio, 3)), subject=subject, category=NODE_PERF)
            checks.append(rc)
        checks.append(_fio_step(n, hosts, measured, good, total_expected))
    return checks


def _fio_step(n: int, hosts: List[str], measured: Dict[str, Optional[float]], good: List[float],
              total_expected: float) -> CheckResult:
    """The step as a whole (fio scaling)."""
    agg = round(sum(good), 1) if good else None
    name, host, details = "fio_scaling", "%d node(s)" % n, {"step": n, "nodes": hosts}
    about = {"subject": Subject(nodes=tuple(hosts), step=n, storage=True), "category": POD_PERF}
    missing = [h for h in hosts if measured[h] is None]
    if missing:
        return CheckResult(name, host, "error", measured=agg, unit="MB/s", absolute=True, details=details,
                           reason="no fio result from %s in the %d-node step" % (", ".join(missing), n), **about)
    if not total_expected:
        return CheckResult(name, host, "skipped", measured=agg, unit="MB/s", absolute=True, details=details,
                           reason="no port speeds in the model", **about)
    ok = agg >= total_expected
    cause = None if ok else ("the %d-node step read %.0f MB/s, %s of the expected %.0f MB/s: if the single-node step "
                             "passed, the storage side (nodes, front-end links) limits the pod"
                             % (n, agg, _pct(agg / total_expected), total_expected))
    return CheckResult(name, host, pass_fail(ok), expected=round(total_expected, 1), measured=agg, unit="MB/s",
                       source="sum of the per-node expectations of this step (fio_read)", cause=cause, absolute=True,
                       details=details, **about)


def evaluate_fio(steps: Sequence[Dict[str, Any]], nodes: Dict[str, Dict[str, Any]], storage: Dict[str, Any],
                 exp: Dict[str, Any]) -> List[Dict[str, Any]]:
    """:func:`fio_checks` as results.json entries (before the simulated policy)."""
    return [c.to_dict() for c in fio_checks(steps, nodes, storage, exp)]


# ---------------------------------------------------------------------------------------------- sizing

def sizing(gpus: int, dgx: int, storage_nodes: int, exp: Dict[str, Any], workload: Optional[str] = None,
           dataset_tb: Optional[float] = None, caches_tb: Optional[Dict[str, float]] = None) -> Dict[str, Any]:
    """The RA's sizing for this pod: storage MB/s its GPUs need for a workload class, storage nodes needed,
    cache-hit estimates (cache size / dataset size, 004). Inputs are returned so the report shows them."""
    sz = exp.get("sizing") or {}
    workload = workload or sz.get("workload")
    per_gpu_table, per_gpu_src = expectation(exp, "sizing", "mbps_per_gpu", {})
    per_node_table, per_node_src = expectation(exp, "sizing", "gpus_per_storage_node", {})
    node_mbps, node_src = expectation(exp, "storage", "read_per_storage_node")
    out: Dict[str, Any] = {"gpus": gpus, "dgx": dgx, "gpu": sz.get("gpu"), "workload": workload,
                           "storage_nodes": storage_nodes, "sources": []}
    per_gpu = (per_gpu_table or {}).get(workload) if isinstance(per_gpu_table, dict) else None
    out["mbps_per_gpu"] = per_gpu
    out["required_mbps"] = round(per_gpu * gpus, 1) if per_gpu is not None else None
    if per_gpu is not None:
        out["sources"].append(per_gpu_src)
    needed = []
    per_node = (per_node_table or {}).get(workload) if isinstance(per_node_table, dict) else None
    if per_node:
        needed.append((math.ceil(gpus / float(per_node)) if gpus else 0,
                       "%d GPUs / %s GPUs per storage node" % (gpus, per_node)))
        out["sources"].append(per_node_src)
    if out["required_mbps"] and node_mbps:
        needed.append((math.ceil(out["required_mbps"] / float(node_mbps)),
                       "%.0f MB/s / %s MB/s per storage node" % (out["required_mbps"], node_mbps)))
        out["sources"].append(node_src)
    if needed:
        n, basis = max(needed)
        out["storage_nodes_needed"], out["storage_nodes_basis"] = n, basis
    else:
        out["storage_nodes_needed"], out["storage_nodes_basis"] = None, "no sizing figures for workload %s" % workload
    out["cache_hit"] = {}
    if dataset_tb:
        for name, size in (caches_tb or {}).items():
            out["cache_hit"][name] = round(min(1.0, float(size) / float(dataset_tb)), 4)
        if out["cache_hit"]:
            out["sources"].append("004 (REFERENCE_FACTS 'Cache hit estimate'): cache size / dataset size")
    out["dataset_tb"] = dataset_tb
    out["caches_tb"] = dict(caches_tb or {})
    return out


def sizing_checks(size: Dict[str, Any], steps: Sequence[Dict[str, Any]]) -> List[CheckResult]:
    """One check (absolute): the largest fio step's aggregate read covers the GPUs' demand (required_mbps)."""
    full = max(steps, key=lambda s: len(s.get("nodes") or []), default=None)
    vals = [_node_mbps((full.get("results") or {}).get(h) or {}) for h in (full or {}).get("nodes") or []]
    measured = round(sum(v for v in vals if v is not None), 1) if vals and None not in vals else None
    status, cause, reason = "skipped", None, None
    if full is None:
        reason = "no fio measurement"
    elif measured is None:
        status, reason = "error", "the all-node fio step has no result from every node"
    elif not size.get("required_mbps"):
        reason = size.get("storage_nodes_basis") or "no per-GPU demand for this workload"
    else:
        status = pass_fail(measured >= size["required_mbps"])
        if status == "fail":
            cause = ("the pod's storage read %.0f MB/s with all %d DGX, less than the %.0f MB/s its %d GPUs "
                     "need for %s (%s MB/s per GPU): add storage nodes (%s needed) or front-end links"
                     % (measured, len(full["nodes"]), size["required_mbps"], size["gpus"], size["workload"],
                        size["mbps_per_gpu"], size.get("storage_nodes_needed")))
    nodes = tuple((full or {}).get("nodes") or ())
    return [CheckResult("storage_sizing", "pod", status, expected=size.get("required_mbps"), measured=measured,
                        unit="MB/s", source="; ".join(size.get("sources") or []) or None, cause=cause, reason=reason,
                        absolute=True, details={"workload": size.get("workload")},
                        subject=Subject(nodes=nodes, step=len(nodes) if nodes else None, storage=True),
                        category=POD_PERF)]


def evaluate_sizing(size: Dict[str, Any], steps: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """:func:`sizing_checks` as results.json entries (before the simulated policy)."""
    return [c.to_dict() for c in sizing_checks(size, steps)]


def evaluate(recorded: Mapping[str, Any], expectations: Dict[str, Any],
             context: Mapping[str, Any]) -> List[CheckResult]:
    """The fio stage: the checks of every step (:func:`fio_checks`, with the model's ``nodes`` and ``storage`` from
    ``context``) and, when the context has the pod's ``sizing``, ``storage_sizing``; the document's sizing then
    records the all-node step's read as ``measured_mbps`` (the report's sizing table shows it)."""
    steps = list(recorded.get("steps") or [])
    out = fio_checks(steps, dict(context.get("nodes") or {}), dict(context.get("storage") or {}), expectations)
    size = context.get("sizing")
    if size and steps:
        sc = sizing_checks(size, steps)
        size["measured_mbps"] = sc[0].measured
        out += sc
    return out
