# -*- coding: utf-8 -*-
"""Evaluation of the NCCL stage (playbooks/validate_nccl.yml). Pure functions.

Measurements (``pod_stages.nccl``, results.json ``measurements.nccl``, docs/results.md): collective,
profile, params, topology (module_utils/nccl/plan.topology), ``single`` (one run per DGX alone), ``all``
(every DGX together), ``pairs`` (the localisation rounds, when they ran), ``localisation`` {run, why}.
A run is what library/pod_nccl returns: nodes, ok, error, failed_hosts, failed_ranks, rows, footer,
transport, ranks, backend, seconds.

Checks (docs/validation.md "NCCL"):
- ``nccl_run``: a run that did not finish (hang, crash, unreachable container, unreadable output) is
  ``error`` naming its hosts and ranks.
- ``nccl_busbw`` (absolute): the large-message plateau (``nccl_plan.plateau_busbw``) of each node alone vs
  the model's single-node figure, and of the all-node run and each pair vs a fraction of the NIC bandwidth.
- ``nccl_relative``: each node alone vs the median of the other nodes; each pair vs the median of the pairs
  sharing no node with it; the all-node run vs the median pair.
- ``nccl_correctness``: #wrong = 0 in every row and ``Out of bounds values : 0 OK``.
- ``nccl_transport`` (absolute): on an RDMA pod every inter-node connection over NET/IB (or the IB plugin)
  on the model's HCAs, with GPUDirect RDMA where the model has it; Socket fallback or no GDRDMA fail with
  the likely cause.
- ``nccl_localisation``: the node whose pairs are slow while the others' are not, named.
"""
from __future__ import annotations

from html import escape
from statistics import median
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_PERF, JOB_STATE, NODE_STATE,
                                                                                  CheckResult, Subject, at_least,
                                                                                  blocked_result, compare,
                                                                                  expectation)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import multi_node_expectation, plateau_busbw

UNIT = "GB/s"


def _exp(exp: Dict[str, Any], key: str, default: Any = None) -> Tuple[Any, str]:
    return expectation(exp, "nccl", key, default)


def _fraction(exp: Dict[str, Any]) -> Tuple[float, str]:
    """The relative threshold (the simulator's looser one is an override in its inventory)."""
    v, s = _exp(exp, "relative_fraction_of_peers", 0.8)
    return float(v), s


def _label(run: Dict[str, Any]) -> str:
    nodes = run.get("nodes") or []
    return nodes[0] if len(nodes) == 1 else "<->".join(nodes) if len(nodes) == 2 else "all (%d DGX)" % len(nodes)


def _subject(step: str, nodes: Any) -> Subject:
    """What a run (or a comparison of it) is about: a node alone, a pair (node and peer), or every node of the
    all-node run."""
    nodes = [str(n) for n in nodes or []]
    if step == "single" and len(nodes) == 1:
        return Subject(node=nodes[0], step=step)
    if step == "pair" and len(nodes) == 2:
        return Subject(node=nodes[0], peer=nodes[1], step=step)
    return Subject(nodes=tuple(nodes), step=step)


def _about(step: str, run: Dict[str, Any], category: str) -> Dict[str, Any]:
    return {"subject": _subject(step, run.get("nodes")), "category": category}


def _runs(m: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    out = [("single", r) for r in m.get("single") or []]
    if m.get("all"):
        out.append(("all", m["all"]))
    out += [("pair", r) for r in m.get("pairs") or []]
    return out


def _run_error(step: str, run: Dict[str, Any]) -> CheckResult:
    hosts = sorted(run.get("failed_hosts") or {})
    ranks = run.get("failed_ranks") or {}
    where = ", ".join("%s (%s)" % (h, run["failed_hosts"][h]) for h in hosts) or "no host named"
    rk = ", ".join("rank %s on %s: %s" % (r, v.get("host") or "?", v.get("reason")) for r, v in sorted(ranks.items()))
    return CheckResult("nccl_run", _label(run), "error", reason="%s run did not finish: %s. Hosts: %s%s"
                       % (step, run.get("error") or "no result", where, ("; ranks: " + rk) if rk else ""),
                       details={"step": step, "nodes": run.get("nodes"), "failed_hosts": run.get("failed_hosts"),
                                "failed_ranks": ranks, "last_lines": (run.get("last_lines") or [])[-5:]},
                       **_about(step, run, JOB_STATE))


def _correctness(step: str, run: Dict[str, Any]) -> CheckResult:
    wrong = 0
    bad_sizes = []
    for r in run.get("rows") or []:
        w = sum(int((r.get(k) or {}).get("wrong") or 0) for k in ("out_of_place", "in_place"))
        if w:
            wrong += w
            bad_sizes.append(r.get("size"))
    footer = run.get("footer") or {}
    oob = footer.get("out_of_bounds")
    ok = wrong == 0 and footer.get("out_of_bounds_ok", True)
    cause = None
    if not ok:
        cause = ("%d wrong element(s)%s, out-of-bounds values %s: data corruption on %s - a faulty GPU, NVLink or "
                 "NIC (run dcgmi diag -r 3 on these nodes; check the ECC and PCIe error counters)"
                 % (wrong, " at sizes %s" % bad_sizes[:5] if bad_sizes else "", oob, ", ".join(run.get("nodes") or [])))
    return CheckResult("nccl_correctness", _label(run), "pass" if ok else "fail", expected=0,
                       measured=wrong + (oob or 0),
                       unit="wrong elements", source="nccl-tests: #wrong must be 0 and 'Out of bounds values : 0 OK' "
                       "(REFERENCE_FACTS 'Pass thresholds')", cause=cause, details=dict(compare("="), step=step),
                       **_about(step, run, JOB_STATE))


TRANSPORT_CAUSE_SOCKET = ("NCCL fell back to TCP sockets (NET/Socket) between the nodes: check NCCL_IB_HCA lists the "
                          "compute HCAs (%s), the RoCE GID index (NCCL_IB_GID_INDEX, docs/hardware-facts.md), that "
                          "/dev/infiniband is passed to the container, and that the HCAs are up (ibv_devinfo)")
TRANSPORT_CAUSE_NOGDR = ("inter-node traffic goes through host memory (no GDRDMA): load nvidia-peermem (or use a "
                         "DMA-BUF capable driver and kernel) and disable ACS/IOMMU on the PCIe switches between "
                         "GPUs and HCAs")


def _transport(step: str, run: Dict[str, Any], topo: Dict[str, Any]) -> CheckResult:
    t = run.get("transport")
    host = _label(run)
    # the transport of an inter-node run: every node of it (the model's HCAs are named in the cause, no NIC)
    about = {"subject": Subject(nodes=tuple(str(n) for n in run.get("nodes") or []), step=step),
             "category": NODE_STATE}
    src = "004 (REFERENCE_FACTS 'Proof NCCL is configured right'): 'via NET/IB/N/GDRDMA'; NVIDIA/nccl transport code"
    if (t or {}).get("backend") == "cpu" or run.get("backend") == "cpu":
        return CheckResult("nccl_transport", host, "skipped", source=src, absolute=True,
                           reason="simulator stand-in (backend: cpu): no NCCL, no GPU transport to check",
                           details={"step": step, "backend": "cpu",
                                    "backend_transports": (t or {}).get("backend_transports")}, **about)
    if not t:
        return CheckResult("nccl_transport", host, "error", source=src, absolute=True,
                           reason="no NCCL INFO lines in the output (NCCL_DEBUG=INFO not honoured?)",
                           details={"step": step}, **about)
    tnodes = topo.get("nodes") or {}
    hcas = sorted({h for n in run.get("nodes") or [] for h in (tnodes.get(n) or {}).get("hcas") or []})
    measured = {"summary": t.get("summary"), "ib_devices": t.get("ib_devices"), "networks": t.get("networks")}
    if t.get("socket_fallback") or (t.get("net_connections", 0) == 0 and "Socket" in (t.get("networks") or [])):
        return CheckResult("nccl_transport", host, "fail", expected="NET/IB%s on %s" % (
            "/GDRDMA" if topo.get("gdr_expected") else "", ",".join(hcas)), measured=measured, source=src,
            absolute=True, cause=TRANSPORT_CAUSE_SOCKET % (",".join(hcas) or "none in the model"),
            details={"step": step}, **about)
    if t.get("net_connections", 0) == 0:
        return CheckResult("nccl_transport", host, "error", source=src, absolute=True,
                           reason="no inter-node connection line (Channel ... via NET/...) in the log",
                           details={"step": step, "networks": t.get("networks")}, **about)
    foreign = sorted(set(t.get("ib_devices") or []) - set(hcas)) if hcas else []
    if foreign:
        return CheckResult("nccl_transport", host, "fail", expected=hcas, measured=measured, source=src, absolute=True,
                           cause="NCCL uses HCAs the model does not list for compute (%s): set NCCL_IB_HCA to %s"
                           % (",".join(foreign), ",".join(hcas)), details={"step": step}, **about)
    if topo.get("gdr_expected") and not t.get("gdr_everywhere"):
        return CheckResult("nccl_transport", host, "fail", expected="GDRDMA on every NET/IB connection",
                           measured=measured, source=src, absolute=True, cause=TRANSPORT_CAUSE_NOGDR,
                           details={"step": step, "gdr_disabled_hcas": t.get("gdr_disabled_hcas")}, **about)
    return CheckResult("nccl_transport", host, "pass", expected="NET/IB on %s" % ",".join(hcas), measured=measured,
                       source=src, absolute=True, details={"step": step}, **about)


def _peer_median(values: Dict[str, float], key: str, peers: List[str]) -> Optional[float]:
    vals = [values[p] for p in peers if p in values and values[p] is not None]
    return median(vals) if vals else None


def localise(pairs: Dict[Tuple[str, str], float], frac: float) -> Dict[str, Any]:
    """From pair plateaus {(a, b): busbw}: each node's median pair busbw, compared with the median of the
    other nodes' scores. Returns {scores, slow: [{node, score, peers_median, ratio}], method: 'pairs'}."""
    nodes = sorted({n for p in pairs for n in p})
    scores = {}
    for n in nodes:
        mine = [v for p, v in pairs.items() if n in p and v is not None]
        if mine:
            scores[n] = median(mine)
    slow = []
    for n, s in sorted(scores.items()):
        others = [v for m, v in scores.items() if m != n]
        if not others:
            continue
        ref = median(others)
        if ref > 0 and s < frac * ref:
            slow.append({"node": n, "score": round(s, 4), "peers_median": round(ref, 4), "ratio": round(s / ref, 3)})
    return {"method": "pairs", "scores": {k: round(v, 4) for k, v in scores.items()}, "slow": slow}


def evaluate(m: Dict[str, Any], exp: Dict[str, Any], context: Dict[str, Any]) -> List[CheckResult]:
    topo = m.get("topology") or {}
    sizes = int(_exp(exp, "plateau_sizes", 3)[0])
    frac, frac_src = _fraction(exp)
    out: List[CheckResult] = []
    plateau: Dict[str, Dict[str, float]] = {"single": {}, "pair": {}, "all": {}}
    if m.get("blocked") and not m.get("all"):
        # steps 2 and 3 not started: the checks they depend on already failed (report/prerequisites.py)
        nodes = [str(n) for n in (topo.get("nodes") or {})] or sorted({str(b.get("host")) for b in m["blocked"]})
        out.append(blocked_result("nccl_run", "all DGX", "the NCCL run across the DGX (and its pairs)", m["blocked"],
                                  subject=Subject(nodes=tuple(nodes), step="all"), category=JOB_STATE))
    for step, run in _runs(m):
        if not run.get("ok"):
            out.append(_run_error(step, run))
            continue
        out.append(_correctness(step, run))
        bw = plateau_busbw(run.get("rows") or [], sizes)
        plateau[step][_label(run)] = bw
        run["plateau_busbw"] = bw
        if step == "single":
            table, src = _exp(exp, "single_node_busbw", {})
            want = (table or {}).get(str(topo.get("model"))) if isinstance(table, dict) else table
            out.append(at_least("nccl_busbw", _label(run), bw, want, UNIT, src, absolute=True, step=step,
                                cause="the GPUs of %s do not reach the model's all-reduce bus bandwidth inside the "
                                      "node: a GPU or NVLink is degraded (nvidia-smi nvlink -s, dcgmi diag)"
                                      % _label(run)).but(**_about(step, run, JOB_PERF)))
        else:
            f, src = _exp(exp, "multi_node_fraction_of_nics")
            want = multi_node_expectation(topo, f)
            out.append(at_least("nccl_busbw", _label(run), bw, want, UNIT,
                                "%s x the compute NICs' bandwidth of the model (%s)" % (f, src), absolute=True,
                                step=step, cause="the fabric between %s is below the NICs' bandwidth: check the "
                                "transport (nccl_transport), the NIC links and the switch ports"
                                % ", ".join(run.get("nodes") or [])).but(**_about(step, run, JOB_PERF)))
            if topo.get("fabric") == "rdma" or (run.get("transport") or {}).get("backend") == "cpu":
                out.append(_transport(step, run, topo))
    rel_src = "%s x the median of the peers (%s)" % (frac, frac_src)
    singles = plateau["single"]
    for n, bw in sorted(singles.items()):
        ref = _peer_median(singles, n, [p for p in singles if p != n])
        if ref is None or bw is None:
            continue
        out.append(at_least("nccl_relative", n, bw, round(frac * ref, 4), UNIT, rel_src, step="single",
                            peers_median=round(ref, 4),
                            cause="%s alone reaches %.0f%% of the other nodes' median: a GPU or NVLink of %s is "
                                  "slow" % (n, 100 * bw / ref if ref else 0, n)).but(
                                subject=_subject("single", [n]), category=JOB_PERF))
    pairs = {tuple(r["nodes"]): r.get("plateau_busbw") for r in m.get("pairs") or [] if r.get("ok")}
    for p, bw in sorted(pairs.items()):
        peers = [q for q in pairs if not set(q) & set(p)] or [q for q in pairs if q != p]
        vals = [pairs[q] for q in peers if pairs[q] is not None]
        if not vals or bw is None:
            continue
        ref = median(vals)
        out.append(at_least("nccl_relative", "<->".join(p), bw, round(frac * ref, 4), UNIT, rel_src, step="pair",
                            peers_median=round(ref, 4),
                            cause="the pair %s reaches %.0f%% of the pairs that share no node with it"
                                  % ("<->".join(p), 100 * bw / ref if ref else 0)).but(
                                subject=_subject("pair", p), category=JOB_PERF))
    all_run = m.get("all") or {}
    if all_run.get("ok") and pairs:
        vals = [v for v in pairs.values() if v is not None]
        bw = all_run.get("plateau_busbw")
        if vals and bw is not None:
            ref = median(vals)
            out.append(at_least("nccl_relative", _label(all_run), bw, round(frac * ref, 4), UNIT, rel_src, step="all",
                                peers_median=round(ref, 4),
                                cause="the all-node run reaches %.0f%% of the median pair: one slow node or link "
                                      "holds the ring back (see nccl_localisation)" % (100 * bw / ref if ref else 0)
                                ).but(**_about("all", all_run, JOB_PERF)))
    if pairs:
        loc = localise(pairs, frac)
        m.setdefault("localisation", {}).update(loc)
        if loc["slow"]:
            for s in loc["slow"]:
                out.append(CheckResult("nccl_localisation", s["node"], "fail",
                                       expected=round(frac * s["peers_median"], 4),
                                       measured=s["score"], unit=UNIT, source=rel_src,
                                       cause="%s is the slow node (its pairs at %.0f%% of the others)"
                                             % (s["node"], 100 * s["ratio"]),
                                       details={"scores": loc["scores"]},
                                       subject=Subject(node=s["node"], step="pair"), category=JOB_PERF))
        else:
            out.append(CheckResult("nccl_localisation", "pod", "pass", unit=UNIT, source=rel_src,
                                   measured=loc["scores"], details={"note": "no node stands out in the pairs"},
                                   subject=Subject(nodes=tuple(sorted(loc["scores"])), step="pair"),
                                   category=JOB_PERF))
    return out


# ------------------------------------------------------------------------------------------- the report

def _series(m: Dict[str, Any], step: str) -> List[Tuple[str, List[Tuple[int, float]]]]:
    out = []
    for s, run in _runs(m):
        if s != step or not run.get("rows"):
            continue
        pts = []
        for r in run["rows"]:
            bw = [float(p["busbw"]) for p in (r.get("out_of_place"), r.get("in_place"))
                  if p and p.get("busbw") is not None]
            if bw:
                pts.append((int(r["size"]), max(bw)))
        out.append((_label(run), pts))
    return out


PALETTE = ("#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#455a64")


def _human(n: int) -> str:
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return "%g%s" % (n / div, unit)
    return str(n)


def busbw_plot(m: Dict[str, Any], step: str, title: str) -> Optional[str]:
    """SVG: bus bandwidth (best of out-of-place/in-place) vs message size, one line per run of ``step``."""
    series = [s for s in _series(m, step) if s[1]]
    if not series:
        return None
    w, h, left, bottom = 560, 300, 70, 40
    sizes = sorted({x for _, pts in series for x, _ in pts})
    ymax = max(v for _, pts in series for _, v in pts) * 1.1 or 1.0
    pw, ph = w - left - 20, h - bottom - 30
    xs = {s: left + pw * (i + 0.5) / len(sizes) for i, s in enumerate(sizes)}

    def y(v: float) -> float:
        return 30 + ph - ph * v / ymax
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">'
             % (w, h, escape(title))]
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, 30 + ph, left + pw, 30 + ph))
    parts.append('<line x1="%d" y1="30" x2="%d" y2="%d" stroke="#333"/>' % (left, left, 30 + ph))
    for i in range(5):
        v = ymax * i / 4
        parts.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%.3g</text>' % (left - 4, y(v) + 3, v))
    for s in sizes:
        parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                     % (xs[s], 30 + ph + 14, _human(s)))
    for i, (label, pts) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        parts.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                     % (color, " ".join("%.1f,%.1f" % (xs[x], y(v)) for x, v in pts)))
        for x, v in pts:
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %.4g GB/s</title></circle>'
                         % (xs[x], y(v), color, escape(label), _human(x), v))
        parts.append('<text x="%d" y="%d" font-size="11" fill="%s">%s</text>'
                     % (left + 10 + (i % 4) * 120, 12 + 12 * (i // 4), color, escape(label)))
    parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">message size (bytes); y: busbw GB/s</text>'
                 % (left + pw // 2, h - 4))
    parts.append("</svg>")
    return "".join(parts)


def _transport_rows(m: Dict[str, Any]) -> List[List[str]]:
    rows = []
    for step, run in _runs(m):
        if step == "single":
            continue
        t = run.get("transport") or {}
        rows.append([step, _label(run), str(run.get("backend") or "nccl"),
                     ", ".join("%s: %s" % kv for kv in sorted((t.get("summary") or {}).items())) or "-",
                     ", ".join(t.get("networks") or []) or "-", ", ".join(t.get("ib_devices") or []) or "-",
                     "; ".join(t.get("backend_transports") or []) or "-"])
    return rows


def _loc_text(m: Dict[str, Any]) -> str:
    loc = m.get("localisation") or {}
    if not loc.get("run") and not loc.get("scores"):
        return "Localisation: not run (%s)." % (loc.get("why") or "not needed")
    slow = loc.get("slow") or []
    scores = ", ".join("%s %.4g" % kv for kv in sorted((loc.get("scores") or {}).items()))
    if slow:
        return "Localisation (%s; pairs in round-robin rounds): %s. Median pair busbw per node (GB/s): %s." % (
            loc.get("why") or "", "; ".join("**%s is the slow node** (its pairs at %.0f%% of the others)"
                                            % (s["node"], 100 * s["ratio"]) for s in slow), scores)
    return ("Localisation (%s; pairs in round-robin rounds): no node stands out. Median pair busbw per node "
            "(GB/s): %s." % (loc.get("why") or "", scores))


def _slurm_text(m: Dict[str, Any]) -> Optional[str]:
    """How the runs were launched, when through Slurm (library/pod_nccl scheduler=slurm): the partition and each
    run's job id, or Slurm's refusal."""
    jobs = [(step, run) for step, run in _runs(m) if run.get("slurm")]
    if not jobs:
        return None
    parts = []
    for step, run in jobs:
        sl = run["slurm"]
        parts.append("%s %s: %s" % (step, _label(run), "job %s" % sl.get("job_id") if sl.get("granted")
                                    else "not allocated (%s)" % (sl.get("error") or "no allocation")))
    return "Launched through Slurm (salloc, partition %s), each run in its own allocation of its DGX: %s." % (
        jobs[0][1]["slurm"].get("partition") or "-", "; ".join(parts))


def markdown(doc: Dict[str, Any]) -> List[str]:
    m = (doc.get("measurements") or {}).get("nccl") or {}
    lines = ["", "## NCCL (%s)" % m.get("collective", "all_reduce"), ""]
    if m.get("simulated") or doc.get("simulated"):
        lines += ["SIMULATED: the nccl-tests stand-in (backend: cpu, MPI over the simulator's veths) - bus "
                  "bandwidths are CPU/veth numbers, never DGX figures; transport and absolute checks are skipped.", ""]
    slurm = _slurm_text(m)
    if slurm:
        lines += [slurm, ""]
    lines += ["| step | run | ok | plateau busbw (GB/s) | seconds |", "|---|---|---|---|---|"]
    for step, run in _runs(m):
        bw = plateau_busbw(run.get("rows") or [], int(m.get("plateau_sizes") or 3))
        lines.append("| %s | %s | %s | %s | %s |" % (step, _label(run), "yes" if run.get("ok") else
                                                    "**no**: %s" % (run.get("error") or "")[:160].replace("|", "/"),
                                                    "-" if bw is None else "%.4g" % bw, run.get("seconds", "-")))
    lines += ["", "Transport (inter-node runs):", "",
              "| step | run | backend | connections | network | HCAs | stand-in |", "|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in _transport_rows(m)]
    lines += ["", _loc_text(m), ""]
    return lines


def html(doc: Dict[str, Any]) -> List[str]:
    m = (doc.get("measurements") or {}).get("nccl") or {}
    out = ['<h2>NCCL (%s)</h2>' % escape(str(m.get("collective", "all_reduce")))]
    if m.get("simulated") or doc.get("simulated"):
        out.append('<p class="simulated">SIMULATED: the nccl-tests stand-in (backend: cpu) - CPU/veth numbers, '
                   'never DGX figures; transport and absolute checks are skipped.</p>')
    slurm = _slurm_text(m)
    if slurm:
        out.append('<p>%s</p>' % escape(slurm))
    for step, title in (("single", "each DGX alone"), ("all", "all DGX together"), ("pair", "pairs (localisation)")):
        svg = busbw_plot(m, step, "NCCL busbw vs size - " + title)
        if svg:
            out.append('<h3>busbw vs message size: %s</h3>' % escape(title))
            out.append('<figure class="plot">%s</figure>' % svg)
    rows = _transport_rows(m)
    if rows:
        out.append('<h3>Transport</h3><table><tr><th>step</th><th>run</th><th>backend</th><th>connections</th>'
                   '<th>network</th><th>HCAs</th><th>stand-in transport</th></tr>')
        out += ['<tr>%s</tr>' % "".join("<td>%s</td>" % escape(c) for c in r) for r in rows]
        out.append('</table>')
    out.append('<p>%s</p>' % escape(_loc_text(m)).replace("**", ""))
    return out
