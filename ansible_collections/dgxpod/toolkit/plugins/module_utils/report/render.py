# -*- coding: utf-8 -*-
"""Render a results document (docs/results.md) as report.md, report.html and junit.xml.

Pure functions: a dict in, text out. report.html is self-contained (inline CSS and SVG, no script, no
external asset). On a simulated pod the first line of every file says SIMULATED. Nothing here knows a check or a
stage by name: a stage's plots and tables are its own report sections (report/stages.py markdown_sections,
html_sections), a check's line is what it measured, its cause, reason or note, else its problems.
"""
from __future__ import annotations

import json
from html import escape
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.sax.saxutils import quoteattr

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.report_text import fmt_number
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import html_sections, markdown_sections
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import link_text

SIM_LINE = ("SIMULATED POD (pod-in-a-box): these results come from the simulator, not from DGX hardware; "
            "they are never compared with the RA's hardware figures.")
STATUS_ORDER = {"fail": 0, "error": 1, "skipped": 2, "pass": 3}


def row_subject(c: Dict[str, Any]) -> Optional[str]:
    """What one row of a check is about beyond its ``host``, read from the row's ``subject`` (results.json v5), or
    None - the report puts it before the measurement, or the rows of one check for one host read the same
    ("hca_pcie_link | sim-dgx1 | pass | measured x16" four times). The HCA (``hca``), the GPU (``gpu``: "GPU 3"),
    the link (``node``/``nic`` to ``peer``/``peer_nic`` on ``fabric``: "sim-dgx1 enp5s0 -> sim-dgx2 enp5s0 on
    data-5", ``<-`` when the row says ``reverse``), one node's step of several (a numeric ``step`` with a ``node``:
    "step of 3 node(s)"; a step of many nodes is its ``host`` already) or the pass of a row that is one of a
    series of passes (``phase`` where the row names its ``pass``: "warm pass"). Nothing here knows a check by
    name."""
    s = c.get("subject")
    if not isinstance(s, dict):
        return None
    gpu, step = s.get("gpu"), s.get("step")
    if s.get("hca"):
        return str(s["hca"])
    if isinstance(gpu, (int, str)) and not isinstance(gpu, bool):
        return "GPU %s" % gpu
    if all(s.get(k) for k in ("node", "nic", "peer", "peer_nic", "fabric")):
        return link_text({"client": s["node"], "client_nic": s["nic"], "server": s["peer"],
                          "server_nic": s["peer_nic"], "fabric": s["fabric"], "reverse": c.get("reverse")})
    if isinstance(step, int) and not isinstance(step, bool) and s.get("node"):
        return "step of %s node(s)" % step
    if s.get("phase") and c.get("pass"):
        return "%s pass" % s["phase"]
    return None


def details(c: Dict[str, Any]) -> str:
    """One line for a check: what was measured, its cause, reason or note, else its problems."""
    parts = []
    if "measured" in c or "expected" in c:
        which = row_subject(c)  # the adapter, GPU, link, step or pass of this row
        m = "%smeasured %s" % ("%s: " % which if which else "", fmt_number(c.get("measured")))
        m += " %s" % c["unit"] if c.get("unit") else ""
        if c.get("expected") is not None:  # a threshold (>=) unless the check says how it compares, or is not a number
            numeric = isinstance(c["expected"], (int, float)) and not isinstance(c["expected"], bool)
            m += " (expected %s%s)" % (c.get("compare") or (">= " if numeric else ""), fmt_number(c.get("expected")))
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
    body += html_sections(results)
    body.append("<h2>All checks</h2><table><tr><th>check</th><th>host</th><th>status</th><th>expected</th>"
                "<th>measured</th><th>unit</th><th>details</th><th>source</th></tr>")
    for c in _sorted_checks(results.get("checks") or []):
        body.append('<tr><td>%s</td><td>%s</td><td class="%s">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                    "<td>%s</td></tr>"
                    % (escape(str(c.get("check"))), escape(str(c.get("host"))), c.get("status"), c.get("status"),
                       escape(fmt_number(c.get("expected"))), escape(fmt_number(c.get("measured"))),
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
