# -*- coding: utf-8 -*-
"""The fio stage's report sections (registered with storage/fio_eval.py in module_utils/report/stages.py): the
aggregate read vs nodes plot, the completion latency plot and the RA sizing table. Pure: a results document
(results.json) in, Markdown lines or HTML fragments out (inline SVG, no script)."""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.report_text import STATUS_COLORS, fmt_number


def _axes(w: int, h: int, left: int, bottom: int, xlabels: Sequence[str], ymax: float, ylabel: str) -> List[str]:
    ph = h - bottom - 20
    pw = w - left - 20
    parts = ['<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (left, 20, left, 20 + ph),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (left, 20 + ph, left + pw, 20 + ph),
             '<text x="12" y="%d" font-size="11" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>'
             % (20 + ph // 2, 20 + ph // 2, escape(ylabel))]
    for k in range(5):
        v = ymax * k / 4
        y = 20 + ph - ph * k / 4
        parts.append('<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>'
                     % (left - 4, y + 3, fmt_number(v)))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>' % (left, y, left + pw, y))
    for i, lab in enumerate(xlabels):
        x = left + pw * (i + 0.5) / max(1, len(xlabels))
        parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>'
                     % (x, 20 + ph + 16, escape(lab)))
    return parts


def _polyline(points: Sequence[Tuple[float, float]], color: str, dash: bool = False) -> str:
    pts = " ".join("%.1f,%.1f" % p for p in points)
    return '<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>' % (
        pts, color, ' stroke-dasharray="6 4"' if dash else "")


def fio_plot(results: Mapping[str, Any]) -> Optional[str]:
    """Aggregate fio read MB/s vs nodes, with the expectation line (or, simulated, linear-from-one-node)."""
    steps = sorted((c for c in results.get("checks") or [] if c.get("check") == "fio_scaling"),
                   key=lambda c: c.get("step") or 0)
    if not steps:
        return None
    w, h, left, bottom = 560, 300, 70, 40
    measured = [c.get("measured") for c in steps]
    expected = [c.get("expected") for c in steps]
    simulated = bool(results.get("simulated"))
    ref = None
    if not any(expected) and measured and measured[0]:
        ref = [measured[0] * (c.get("step") or 1) for c in steps]  # linear scaling from the 1-node step
    ymax = max([v for v in measured + expected + (ref or []) if v] or [1.0]) * 1.1
    pw, ph = w - left - 20, h - bottom - 20
    xs = [left + pw * (i + 0.5) / len(steps) for i in range(len(steps))]

    def y(v: float) -> float:
        return 20 + ph - ph * v / ymax

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="fio read '
             'throughput vs nodes">' % (w, h)]
    parts += _axes(w, h, left, bottom, [str(c.get("step")) for c in steps], ymax, "aggregate read MB/s")
    pts = [(xs[i], y(v)) for i, v in enumerate(measured) if v is not None]
    if pts:
        parts.append(_polyline(pts, "#1565c0"))
        for i, v in enumerate(measured):
            if v is not None:
                color = STATUS_COLORS.get(steps[i].get("status"), "#1565c0")
                parts.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s node(s): %s MB/s</title></circle>'
                             % (xs[i], y(v), color, steps[i].get("step"), fmt_number(v)))
    line, label = (expected, "expected (RA, scaled to this pod)") if any(expected) else \
        (ref, "linear from 1 node (reference%s)" % (", simulated: no RA figure" if simulated else ""))
    if line and any(line):
        parts.append(_polyline([(xs[i], y(v)) for i, v in enumerate(line) if v], "#ef6c00", dash=True))
    parts.append('<text x="%d" y="14" font-size="11" fill="#1565c0">&#9679; measured</text>' % left)
    parts.append('<text x="%d" y="14" font-size="11" fill="#ef6c00">- - %s</text>' % (left + 90, escape(label)))
    parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">nodes reading at once</text>'
                 % (left + pw // 2, h - 4))
    parts.append("</svg>")
    return "".join(parts)


def latency_plot(results: Mapping[str, Any]) -> Optional[str]:
    """Worst node's completion latency percentiles (p50, p99, p99.9, ms) per fio step."""
    per_step: Dict[int, Dict[str, float]] = {}
    for c in results.get("checks") or []:
        if c.get("check") != "fio_read" or c.get("measured") is None:
            continue
        d = per_step.setdefault(int(c.get("step") or 0), {})
        for key in ("clat_p50_ms", "clat_p99_ms", "clat_p99_9_ms"):
            d[key] = max(d.get(key, 0.0), float(c.get(key) or 0.0))
    if not per_step:
        return None
    steps = sorted(per_step)
    w, h, left, bottom = 560, 300, 70, 40
    series = (("clat_p50_ms", "p50", "#2e7d32"), ("clat_p99_ms", "p99", "#ef6c00"),
              ("clat_p99_9_ms", "p99.9", "#c62828"))
    ymax = max([per_step[s][k] for s in steps for k, _, _ in series] + [0.001]) * 1.1
    pw, ph = w - left - 20, h - bottom - 20
    xs = [left + pw * (i + 0.5) / len(steps) for i in range(len(steps))]
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="fio completion '
             'latency percentiles">' % (w, h)]
    parts += _axes(w, h, left, bottom, [str(s) for s in steps], ymax, "completion latency (ms), worst node")
    for n, (key, label, color) in enumerate(series):
        pts = [(xs[i], 20 + ph - ph * per_step[s][key] / ymax) for i, s in enumerate(steps)]
        parts.append(_polyline(pts, color))
        for (px, py), s in zip(pts, steps, strict=True):
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %d node(s): %s ms</title></circle>'
                         % (px, py, color, label, s, fmt_number(per_step[s][key])))
        parts.append('<text x="%d" y="14" font-size="11" fill="%s">&#9679; %s</text>' % (left + 70 * n, color, label))
    parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">nodes reading at once</text>'
                 % (left + pw // 2, h - 4))
    parts.append("</svg>")
    return "".join(parts)


# the sizing table's rows: (label, key of the document's sizing)
_SIZING_MD = (("GPUs", "gpus"), ("DGX", "dgx"), ("workload", "workload"), ("MB/s per GPU", "mbps_per_gpu"),
              ("required storage read (MB/s)", "required_mbps"), ("storage nodes in the pod", "storage_nodes"),
              ("storage nodes needed", "storage_nodes_needed"), ("basis", "storage_nodes_basis"),
              ("measured read, all DGX (MB/s)", "measured_mbps"))
_SIZING_HTML = (("GPUs", "gpus"), ("workload", "workload"), ("MB/s per GPU", "mbps_per_gpu"),
                ("required storage read (MB/s)", "required_mbps"), ("storage nodes", "storage_nodes"),
                ("storage nodes needed", "storage_nodes_needed"), ("basis", "storage_nodes_basis"),
                ("measured read, all DGX (MB/s)", "measured_mbps"))


def markdown(doc: Mapping[str, Any]) -> List[str]:
    """report.md's RA sizing table (the document's ``sizing``)."""
    sz = doc.get("sizing")
    if not sz:
        return []
    out = ["", "## RA sizing for this pod", "", "| input / result | value |", "|---|---|"]
    for label, key in _SIZING_MD:
        out.append("| %s | %s |" % (label, fmt_number(sz.get(key))))
    for name, hit in (sz.get("cache_hit") or {}).items():
        out.append("| cache-hit estimate, %s | %d%% |" % (name, round(100 * hit)))
    if sz.get("sources"):
        out.append("| sources | %s |" % "; ".join(sz["sources"]).replace("|", "\\|"))
    return out


def html(doc: Mapping[str, Any]) -> List[str]:
    """report.html's fio plots (read scaling, latency) and the RA sizing table."""
    body: List[str] = []
    fplot, lplot = fio_plot(doc), latency_plot(doc)
    if fplot or lplot:
        body.append("<h2>Storage: fio read scaling</h2><div class=\"plots\">")
        if fplot:
            body.append("<figure>%s<figcaption>aggregate read throughput vs number of DGX reading at once"
                        "</figcaption></figure>" % fplot)
        if lplot:
            body.append("<figure>%s<figcaption>completion latency percentiles (worst node of each step)"
                        "</figcaption></figure>" % lplot)
        body.append("</div>")
    sz = doc.get("sizing")
    if sz:
        body.append("<h2>RA sizing for this pod</h2><table>")
        for label, key in _SIZING_HTML:
            body.append("<tr><th>%s</th><td>%s</td></tr>" % (escape(label), escape(fmt_number(sz.get(key)))))
        for name, hit in (sz.get("cache_hit") or {}).items():
            body.append("<tr><th>cache-hit estimate, %s</th><td>%d%%</td></tr>" % (escape(name), round(100 * hit)))
        body.append("<tr><th>sources</th><td>%s</td></tr></table>" % escape("; ".join(sz.get("sources") or [])))
    return body
