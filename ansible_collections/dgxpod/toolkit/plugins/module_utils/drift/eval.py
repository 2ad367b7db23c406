# -*- coding: utf-8 -*-
"""Drift of what the deploy wrote (validate.yml --tags drift), evaluated in pure Python.

``playbooks/validate_drift.yml`` records on localhost, in ``pod_stages.drift``::

    {"nodes": {host: {"status": "ok" | "error", "reason": str,
                      "files": [<pod_drift file result>], "containers": [<pod_drift container result>]}}}

Each file result (module_utils/drift/compare.py) becomes one :class:`CheckResult` ``drift_<name>`` for the node:
pass when the file is as the deploy writes it, fail naming the node, the file and the difference (the
summary, then the first diff lines), error when it could not be read. A node whose files could not be read
at all (unreachable, a failed play) is one ``drift`` error naming it.
"""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (FILE_STATE, POD_STATE, CheckResult,
                                                                                  Subject)

SOURCE = "toolkit rule (docs/validation.md \"Drift\"): a file the deploy writes is what its role renders today"
CAUSE_DIFF_LINES = 6  # diff lines quoted in the cause (results.json keeps up to the module's diff_lines)


def _cause(node: str, r: Dict[str, Any]) -> str:
    diff = [ln for ln in r.get("diff") or [] if not ln.startswith(("---", "+++"))][:CAUSE_DIFF_LINES]
    text = "%s %s" % (node, r.get("summary") or r.get("path"))
    if diff:
        text += " | " + " / ".join(diff)
    if r.get("fix"):
        text += " (the deploy's %s writes it: re-run it)" % r["fix"]
    return text


def _one(node: str, r: Dict[str, Any]) -> CheckResult:
    check = "drift_%s" % (r.get("name") or "file")
    about = {"subject": Subject(node=node, path=r.get("path")), "category": FILE_STATE}
    details = {"file": r.get("path"), "diff": r.get("diff") or []}
    expected = "as %s renders it" % r["source"] if r.get("source") else "as the deploy writes it"
    if r.get("expected_mode"):
        expected += ", mode %s" % r["expected_mode"]
    status = r.get("status")
    if status == "ok":
        return CheckResult(check, node, "pass", expected=expected, measured="%s as deployed" % r.get("path"),
                           source=SOURCE, details=details, **about)
    if status == "unreadable":
        return CheckResult(check, node, "error", expected=expected, source=SOURCE,
                           reason="%s %s" % (node, r.get("summary")), details=details, **about)
    measured = "missing" if status == "missing" else "differs (%s)" % (r.get("summary") or "").split(": ", 1)[-1]
    return CheckResult(check, node, "fail", expected=expected, measured=measured, source=SOURCE,
                       cause=_cause(node, r), details=details, **about)


def _unreachable(rec: Dict[str, Any]) -> bool:
    """The node did not answer: its record says so (``unreachable``, filter_plugins/drift.py)."""
    return bool(rec.get("unreachable"))


def evaluate(measurements: Dict[str, Any], expectations: Dict[str, Any], context: Dict[str, Any]) -> List[CheckResult]:
    """One check per node and file (and container); a node that could not be read is one error."""
    del expectations, context  # drift has no thresholds: the expectation is the deploy itself
    out: List[CheckResult] = []
    for node, rec in sorted(((measurements or {}).get("nodes") or {}).items()):
        if rec.get("status") != "ok":
            out.append(CheckResult("drift", node, "error", source=SOURCE,
                                   reason="%s: %s" % (node, rec.get("reason") or "no drift result"),
                                   subject=Subject(node=node), category=FILE_STATE, unreachable=_unreachable(rec)))
            continue
        for r in (rec.get("files") or []) + (rec.get("containers") or []):
            out.append(_one(node, r))
    if not out:
        out.append(CheckResult("drift", "pod", "error", source=SOURCE, reason="no DGX recorded a drift result",
                               subject=Subject(), category=POD_STATE))
    return out


def _drifted(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [c for c in doc.get("checks") or [] if str(c.get("check", "")).startswith("drift_")
            and c.get("status") == "fail" and c.get("diff")]


def markdown(doc: Dict[str, Any]) -> List[str]:
    """The diff of every drifted file (the check rows carry the summary)."""
    rows = _drifted(doc)
    if not rows:
        return []
    lines = ["", "## Drift of the deployed files", ""]
    for c in rows:
        lines += ["**%s** `%s`:" % (c["host"], c.get("file")), "", "```diff"] + list(c["diff"]) + ["```", ""]
    return lines


def html(doc: Dict[str, Any]) -> List[str]:
    """HTML version of :func:`markdown`."""
    rows = _drifted(doc)
    if not rows:
        return []
    out = ["<h2>Drift of the deployed files</h2>"]
    for c in rows:
        out.append("<p><b>%s</b> <code>%s</code></p><pre>%s</pre>"
                   % (escape(c["host"]), escape(str(c.get("file"))), escape("\n".join(c["diff"]))))
    return out
