# -*- coding: utf-8 -*-
"""Render a results document (schema v2, docs/results.md) as report.md, report.html and junit.xml.

Pure functions: a dict in, text out. report.html is self-contained (inline CSS and SVG, no script, no
external asset). On a simulated pod the first line of every file says SIMULATED.
"""
from __future__ import annotations

import json
from html import escape
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.sax.saxutils import quoteattr

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.checks import row_subject
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import html_sections, markdown_sections

SIM_LINE = ("SIMULATED POD (pod-in-a-box): these results come from the simulator, not from DGX hardware; "
            "they are never compared with the RA's hardware figures.")
STATUS_ORDER = {"fail": 0, "error": 1, "skipped": 2, "pass": 3}
COLORS = {"pass": "#2e7d32", "fail": "#c62828", "error": "#6a1b9a", "skipped": "#757575"}


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%.1f" % v) if abs(v) >= 10 else ("%.3g" % v)
    return str(v)


def details(c: Dict[str, Any]) -> str:
    """One line for a check: its cause/reason, or what was measured."""
    if c.get("check") == "identity" and "reason" not in c:
        text = "hostname %s%s" % (c.get("hostname"), "" if c.get("hostname_ok") else " (expected %s)" % c.get("host"))
        if c.get("missing_nics"):
            text += "; missing NICs: " + ", ".join(c["missing_nics"])
        return text
    if c.get("check") == "network" and "reason" not in c:
        return "; ".join(c.get("problems") or []) or "%s full-MTU pings answered" % c.get("pings")
    if c.get("check") == "nfs_mounts" and "reason" not in c:
        return "; ".join(c.get("problems") or []) or "%s mounts as planned, data read through each" % c.get("mounts")
    if c.get("check") == "mpi_containers" and "reason" not in c:
        if c.get("problems"):
            return "; ".join(c["problems"])
        seen = c.get("mpirun_seen")
        return "container %s running; ssh on 2222 from %s with a pinned host key; %s" % (
            c.get("container"), c.get("launcher"),
            "mpirun hostname saw it %s time(s)" % seen if seen is not None
            else "mpirun not run (another node failed)")
    parts = []
    if "measured" in c or "expected" in c:
        which = row_subject(c)  # the adapter, GPU, link, step or pass of this row
        m = "%smeasured %s" % ("%s: " % which if which else "", _fmt(c.get("measured")))
        m += " %s" % c["unit"] if c.get("unit") else ""
        if c.get("expected") is not None:  # a threshold (>=) unless the check says how it compares, or is not a number
            numeric = isinstance(c["expected"], (int, float)) and not isinstance(c["expected"], bool)
            m += " (expected %s%s)" % (c.get("compare") or (">= " if numeric else ""), _fmt(c.get("expected")))
        if c.get("measured") is not None or c.get("expected") is not None:
            parts.append(m.strip())
    for key in ("cause", "reason", "note"):  # note: e.g. a pair that ran again to confirm (iperf_confirm)
        if c.get(key):
            parts.append(str(c[key]))
    if not parts and c.get("problems"):
        parts.append("; ".join(c["problems"]))
    return " - ".join(parts)


def problem_line(c: Dict[str, Any]) -> str:
    """'[check host] why' for a failed or errored check (the run's closing message)."""
    if c.get("reason"):
        why = str(c["reason"])
    elif c.get("problems"):
        why = "; ".join(c["problems"])
    elif c.get("cause"):
        why = str(c["cause"])
    elif c.get("check") == "identity":
        why = "missing NICs: " + ", ".join(c.get("missing_nics") or [])
        if not c.get("hostname_ok", True):
            why += "; hostname %s" % c.get("hostname")
    else:
        why = details(c)
    return "[%s %s] %s" % (c.get("check"), c.get("host"), why)


def _sorted_checks(checks: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return sorted(checks, key=lambda c: (STATUS_ORDER.get(c.get("status"), 9), str(c.get("check")),
                                         str(c.get("host"))))


def finding_of(results: Dict[str, Any]) -> Dict[Tuple[str, str], Dict[str, Any]]:
    """{(check, host): the finding that explains it} (the first one, if the same name and host repeat)."""
    out: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for f in results.get("findings") or []:
        for e in f.get("explains") or []:
            out.setdefault((str(e.get("check")), str(e.get("host"))), f)
    return out


def _after_subject(f: Dict[str, Any]) -> str:
    """The summary without the subject it starts with (the report prints the subject in bold)."""
    text, subject = str(f.get("summary") or ""), str(f.get("subject") or "")
    return text[len(subject) + 2:] if text.startswith(subject + ": ") else text


def findings_markdown(results: Dict[str, Any]) -> List[str]:
    """The Findings section: one root cause per item, the checks it explains under it."""
    findings = results.get("findings") or []
    if not findings:
        return []
    out = ["", "## Findings", "",
           "%d root cause(s) for %d failed or errored check(s), the one explaining most first:" % (
               len(findings), sum(len(f.get("explains") or []) for f in findings)), ""]
    for f in findings:
        out.append("%s. **%s** [%s]: %s" % (str(f.get("id"))[1:], f.get("subject"), f.get("status"), _after_subject(f)))
        checks = ", ".join("`%s` %s" % (e.get("check"), e.get("host")) for e in f.get("explains") or [])
        out.append("   - checks: %s" % checks)
    return out


def findings_html(results: Dict[str, Any]) -> List[str]:
    findings = results.get("findings") or []
    if not findings:
        return []
    out = ["<h2>Findings</h2><ol>"]
    for f in findings:
        out.append('<li id="%s"><b>%s</b> <span class="%s">%s</span>: %s<br><small>checks: %s</small></li>' % (
            escape(str(f.get("id"))), escape(str(f.get("subject"))), escape(str(f.get("status"))),
            escape(str(f.get("status"))), escape(_after_subject(f)),
            escape(", ".join("%s %s" % (e.get("check"), e.get("host")) for e in f.get("explains") or []))))
    out.append("</ol>")
    return out


def first_line(results: Dict[str, Any]) -> str:
    return SIM_LINE if results.get("simulated") else "Pod %s: validation results." % results.get("pod")


# ------------------------------------------------------------------------------------------ markdown

def render_markdown(results: Dict[str, Any]) -> str:
    s = results.get("summary") or {}
    out = ["**%s**" % first_line(results), "",
           "# Validation report: %s" % results.get("pod"), "",
           "- RA profile: `%s`" % results.get("ra_profile"),
           "- Finished: %s (UTC)" % results.get("finished"),
           "- Summary: %s pass, %s fail, %s skipped, %s error" % (s.get("pass", 0), s.get("fail", 0),
                                                                  s.get("skipped", 0), s.get("error", 0))]
    run = results.get("run") or {}
    if run:
        out.append("- Run profile: `%s` %s" % (run.get("profile"), json.dumps(run.get("params") or {}, sort_keys=True)))
    out += findings_markdown(results)
    sz = results.get("sizing")
    if sz:
        out += ["", "## RA sizing for this pod", "", "| input / result | value |", "|---|---|"]
        for label, key in (("GPUs", "gpus"), ("DGX", "dgx"), ("workload", "workload"),
                           ("MB/s per GPU", "mbps_per_gpu"), ("required storage read (MB/s)", "required_mbps"),
                           ("storage nodes in the pod", "storage_nodes"),
                           ("storage nodes needed", "storage_nodes_needed"),
                           ("basis", "storage_nodes_basis"), ("measured read, all DGX (MB/s)", "measured_mbps")):
            out.append("| %s | %s |" % (label, _fmt(sz.get(key))))
        for name, hit in (sz.get("cache_hit") or {}).items():
            out.append("| cache-hit estimate, %s | %d%% |" % (name, round(100 * hit)))
        if sz.get("sources"):
            out.append("| sources | %s |" % "; ".join(sz["sources"]).replace("|", "\\|"))
    problems = [c for c in results.get("checks") or [] if c.get("status") in ("fail", "error")]
    if problems:
        out += ["", "## Problems", ""]
        for c in _sorted_checks(problems):
            out.append("- **%s** `%s` %s: %s" % (c["status"], c.get("check"), c.get("host"), details(c)))
    out += markdown_sections(results)
    out += ["", "## Checks", "", "| check | host | status | details |", "|---|---|---|---|"]
    for c in sorted(results.get("checks") or [], key=lambda c: (str(c.get("host")), str(c.get("check")))):
        out.append("| %s | %s | %s | %s |" % (c.get("check"), c.get("host"), c.get("status"),
                                              details(c).replace("|", "\\|")))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------ junit

def render_junit(results: Dict[str, Any]) -> str:
    checks = results.get("checks") or []
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for c in checks:
        groups.setdefault(str(c.get("check")), []).append(c)
    s = results.get("summary") or {}
    owner = finding_of(results)
    lines = ["<!-- %s -->" % first_line(results).replace("--", "- -")]
    for f in results.get("findings") or []:  # the root causes first (each failure message names its own)
        lines.append("<!-- finding %s -->" % ("%s [%s] %s" % (f.get("id"), f.get("status"), f.get("summary"))
                                              ).replace("--", "- -"))
    lines.append('<testsuites name=%s tests="%d" failures="%d" errors="%d" skipped="%d">'
                 % (quoteattr("validate %s" % results.get("pod")), len(checks), s.get("fail", 0), s.get("error", 0),
                    s.get("skipped", 0)))
    for name in sorted(groups):
        cs = groups[name]
        n = {k: sum(1 for c in cs if c.get("status") == k) for k in ("fail", "error", "skipped")}
        lines.append('  <testsuite name=%s tests="%d" failures="%d" errors="%d" skipped="%d" timestamp=%s>'
                     % (quoteattr(name), len(cs), n["fail"], n["error"], n["skipped"],
                        quoteattr(str(results.get("finished") or ""))))
        for c in cs:
            label = str(c.get("host"))
            if c.get("fabric"):
                label += " [%s]" % c["fabric"]
            if c.get("step"):
                label += " [%s node(s)]" % c["step"]
            lines.append('    <testcase classname=%s name=%s>' % (quoteattr("%s.%s" % (results.get("pod"), name)),
                                                                   quoteattr(label)))
            text = details(c)
            f = owner.get((str(c.get("check")), str(c.get("host")))) if c.get("status") in ("fail", "error") else None
            if f is not None:
                text = "[%s %s] %s" % (f.get("id"), f.get("subject"), text)
            if c.get("status") == "fail":
                lines.append("      <failure message=%s/>" % quoteattr(text or "failed"))
            elif c.get("status") == "error":
                lines.append("      <error message=%s/>" % quoteattr(text or "could not run"))
            elif c.get("status") == "skipped":
                lines.append("      <skipped message=%s/>" % quoteattr(c.get("reason") or text or "skipped"))
            body = {k: c.get(k) for k in ("expected", "measured", "unit", "source") if c.get(k) is not None}
            if body:
                lines.append("      <system-out>%s</system-out>" % escape(json.dumps(body, sort_keys=True)))
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ SVG plots

def _color(ratio: Optional[float]) -> str:
    """Red (<= 0.5) to green (>= 1.0) for a ratio to the expectation."""
    if ratio is None:
        return "#e0e0e0"
    r = max(0.0, min(1.0, (ratio - 0.5) / 0.5))
    return "hsl(%d,65%%,%d%%)" % (int(120 * r), 55 + int(15 * r))


def heatmaps(results: Dict[str, Any]) -> List[Tuple[str, str]]:
    """[(fabric, svg)] - pair-throughput matrix per fabric from the iperf checks."""
    by_fabric: Dict[str, Dict[Tuple[str, str], Dict[str, Any]]] = {}
    for c in results.get("checks") or []:
        if c.get("check") not in ("iperf", "iperf_relative") or not c.get("fabric"):
            continue
        cell = by_fabric.setdefault(c["fabric"], {}).setdefault((c["client"], c["server"]), {})
        cell[c["check"]] = c
    out = []
    for fabric in sorted(by_fabric):
        cells = by_fabric[fabric]
        hosts = sorted({h for pair in cells for h in pair})
        size, pad = 64, 120
        w = pad + size * len(hosts) + 20
        h = pad + size * len(hosts) + 20
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label=%s>'
                 % (w, h, quoteattr("iperf3 pair throughput on %s (Gb/s)" % fabric)),
                 '<text x="4" y="16" font-size="13" font-weight="bold">%s (Gb/s, client row -&gt; server column)</text>'
                 % escape(fabric)]
        for i, host in enumerate(hosts):
            parts.append('<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>'
                         % (pad - 6, pad + i * size + size // 2 + 4, escape(host)))
            parts.append('<text x="%d" y="%d" font-size="11" transform="rotate(-40 %d %d)">%s</text>'
                         % (pad + i * size + 8, pad - 8, pad + i * size + 8, pad - 8, escape(host)))
        for (a, b), cell in cells.items():
            absolute, relative = cell.get("iperf") or {}, cell.get("iperf_relative") or {}
            measured = absolute.get("measured", relative.get("measured"))
            ratio = None
            if absolute.get("expected"):
                ratio = measured / (absolute["expected"] / 0.9) if measured is not None else None
            elif relative.get("ratio") is not None:
                ratio = relative["ratio"]
            status = "fail" if "fail" in (absolute.get("status"), relative.get("status")) else \
                ("error" if "error" in (absolute.get("status"), relative.get("status")) else "pass")
            x, y = pad + hosts.index(b) * size, pad + hosts.index(a) * size
            fill = "#b39ddb" if status == "error" else _color(ratio)
            stroke = ' stroke="#000" stroke-width="2"' if status == "fail" else ' stroke="#fff"'
            label = "err" if measured is None else _fmt(measured)
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"%s><title>%s</title></rect>'
                         % (x, y, size, size, fill, stroke,
                            escape("%s -> %s: %s" % (a, b, details(absolute or relative)))))
            parts.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>'
                         % (x + size // 2, y + size // 2 + 4, escape(label)))
        parts.append("</svg>")
        out.append((fabric, "".join(parts)))
    return out


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
        parts.append('<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>' % (left - 4, y + 3, _fmt(v)))
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


def fio_plot(results: Dict[str, Any]) -> Optional[str]:
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
                color = COLORS.get(steps[i].get("status"), "#1565c0")
                parts.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s node(s): %s MB/s</title></circle>'
                             % (xs[i], y(v), color, steps[i].get("step"), _fmt(v)))
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


def latency_plot(results: Dict[str, Any]) -> Optional[str]:
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
                         % (px, py, color, label, s, _fmt(per_step[s][key])))
        parts.append('<text x="%d" y="14" font-size="11" fill="%s">&#9679; %s</text>' % (left + 70 * n, color, label))
    parts.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">nodes reading at once</text>'
                 % (left + pw // 2, h - 4))
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------------ HTML

CSS = """body{font-family:sans-serif;margin:1.5em;max-width:80em;color:#222}
.sim{background:#fff3e0;border:2px solid #ef6c00;padding:.6em;font-weight:bold}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;
text-align:left;vertical-align:top}th{background:#f5f5f5}
.pass{color:#2e7d32}.fail{color:#c62828;font-weight:bold}.error{color:#6a1b9a;font-weight:bold}.skipped{color:#757575}
.plots{display:flex;flex-wrap:wrap;gap:1.5em}figure{margin:0}figcaption{font-size:12px;color:#555}"""


def render_html(results: Dict[str, Any]) -> str:
    s = results.get("summary") or {}
    sim = bool(results.get("simulated"))
    body = []
    head = first_line(results)
    body.append('<p class="%s">%s</p>' % ("sim" if sim else "", escape(head)))
    body.append("<h1>Validation report: %s</h1>" % escape(str(results.get("pod"))))
    body.append("<p>RA profile <code>%s</code> &middot; finished %s UTC &middot; "
                '<span class="pass">%s pass</span>, <span class="fail">%s fail</span>, '
                '<span class="skipped">%s skipped</span>, <span class="error">%s error</span></p>'
                % (escape(str(results.get("ra_profile"))), escape(str(results.get("finished"))), s.get("pass", 0),
                   s.get("fail", 0), s.get("skipped", 0), s.get("error", 0)))
    body += findings_html(results)
    problems = [c for c in results.get("checks") or [] if c.get("status") in ("fail", "error")]
    if problems:
        body.append("<h2>Problems</h2><ul>")
        for c in _sorted_checks(problems):
            body.append('<li><span class="%s">%s</span> <code>%s</code> %s: %s</li>'
                        % (c["status"], c["status"], escape(str(c.get("check"))), escape(str(c.get("host"))),
                           escape(details(c))))
        body.append("</ul>")
    maps = heatmaps(results)
    if maps:
        body.append("<h2>Network: iperf3 pair throughput per fabric</h2>")
        body.append("<p>Each cell is one test (client row, server column); colour: measured vs expected "
                    "(red &le; 50%%, green &ge; 100%%%s); a black border marks a failed check.</p>"
                    % ("; simulated pod: vs the median of comparable links" if sim else ""))
        body.append('<div class="plots">')
        for fabric, svg in maps:
            body.append("<figure>%s<figcaption>%s</figcaption></figure>" % (svg, escape(fabric)))
        body.append("</div>")
    fplot, lplot = fio_plot(results), latency_plot(results)
    if fplot or lplot:
        body.append("<h2>Storage: fio read scaling</h2><div class=\"plots\">")
        if fplot:
            body.append("<figure>%s<figcaption>aggregate read throughput vs number of DGX reading at once"
                        "</figcaption></figure>" % fplot)
        if lplot:
            body.append("<figure>%s<figcaption>completion latency percentiles (worst node of each step)"
                        "</figcaption></figure>" % lplot)
        body.append("</div>")
    body += html_sections(results)
    sz = results.get("sizing")
    if sz:
        body.append("<h2>RA sizing for this pod</h2><table>")
        for label, key in (("GPUs", "gpus"), ("workload", "workload"), ("MB/s per GPU", "mbps_per_gpu"),
                           ("required storage read (MB/s)", "required_mbps"), ("storage nodes", "storage_nodes"),
                           ("storage nodes needed", "storage_nodes_needed"), ("basis", "storage_nodes_basis"),
                           ("measured read, all DGX (MB/s)", "measured_mbps")):
            body.append("<tr><th>%s</th><td>%s</td></tr>" % (escape(label), escape(_fmt(sz.get(key)))))
        for name, hit in (sz.get("cache_hit") or {}).items():
            body.append("<tr><th>cache-hit estimate, %s</th><td>%d%%</td></tr>" % (escape(name), round(100 * hit)))
        body.append("<tr><th>sources</th><td>%s</td></tr></table>" % escape("; ".join(sz.get("sources") or [])))
    body.append("<h2>All checks</h2><table><tr><th>check</th><th>host</th><th>status</th><th>expected</th>"
                "<th>measured</th><th>unit</th><th>details</th><th>source</th></tr>")
    for c in _sorted_checks(results.get("checks") or []):
        body.append('<tr><td>%s</td><td>%s</td><td class="%s">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                    "<td>%s</td></tr>"
                    % (escape(str(c.get("check"))), escape(str(c.get("host"))), c.get("status"), c.get("status"),
                       escape(_fmt(c.get("expected"))), escape(_fmt(c.get("measured"))),
                       escape(str(c.get("unit") or "")),
                       escape(details(c)), escape(str(c.get("source") or ""))))
    body.append("</table>")
    title = ("SIMULATED - " if sim else "") + "validation %s" % results.get("pod")
    return ("<!-- %s -->\n<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>"
            "<style>%s</style></head><body>\n%s\n</body></html>\n"
            % (head.replace("--", "- -"), escape(title), CSS, "\n".join(body)))


def render_all(results: Dict[str, Any]) -> Dict[str, str]:
    """{file name: text} for the four report files."""
    return {"results.json": json.dumps(results, indent=2, sort_keys=False) + "\n",
            "report.md": render_markdown(results),
            "report.html": render_html(results),
            "junit.xml": render_junit(results)}
