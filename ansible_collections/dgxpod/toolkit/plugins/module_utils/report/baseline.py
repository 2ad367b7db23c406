# -*- coding: utf-8 -*-
"""A run compared with the pod's baseline run (issue 43 item 3): every measurement worse than the baseline's by more
than its class's tolerance is a failed ``regression_<check>``, even when the RA's threshold and the relative checks
still pass (a link 20 % slower than at hand-over); a change in the pod's model between the two runs is one
``baseline_model`` check instead of a comparison of things that are not the same. Pure, but for
:func:`read_results` (a results.json from a path or a run directory).

What is compared: every check row of the current run with a numeric ``measured`` and a performance ``category``
(``link_perf``, ``node_perf``, ``job_perf``, ``pod_perf``: result/check.py ``PERF_CATEGORIES``) whose baseline run has
the same row - the same check, ``host``, ``subject`` and ``reverse`` - with a numeric ``measured``. State checks
(counts that must be 0, versions, states) have absolute rules of their own and are not compared. The direction is
the check's own comparison (``compare``: ``>=`` - the default of a numeric threshold - higher is better; ``<=`` lower
is better); a check that wants an exact value (``=``) is not compared. One measurement judged by two checks of its
stage (``iperf`` and ``iperf_relative`` carry the same Gb/s of the same link; ``fio_read`` and ``fio_relative``) is
compared once, under the first check's name.

Each compared row gives ``regression_<check>`` (stage ``baseline``, the original's ``host``, ``subject`` and
``category``): ``expected`` the baseline's value less the tolerance (``>=``; plus the tolerance for ``<=``),
``measured`` this run's, ``baseline`` and ``ratio`` (this run / baseline) in its details; ``fail`` with a cause
naming the row when it is worse than that. The tolerance of a row is the first of
``expectations.regression.<check>``, ``expectations.regression.<category>`` and :data:`DEFAULT_TOLERANCE`, a
fraction (0.1 = 10 %) with its source.

The model: results.json ``model_digest`` (report/results.py model_digests). Both runs have one and they differ:
``baseline_model`` is an ``error`` naming the hosts added, removed or changed (``model_parts``) and nothing is
compared. Same digest: ``baseline_model`` passes. A run without a digest (written before it existed): compared by
check and subject, ``baseline_model`` ``skipped`` saying the model could not be checked - unless the pod names or
the simulated flag differ, which is an ``error`` again.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (PERF_CATEGORIES, POD_STATE,
                                                                                   CheckResult, Subject, counts)

STAGE = "baseline"
DEFAULT_TOLERANCE = 0.1
DEFAULT_SOURCE = ("toolkit default (docs/validation.md 'Baseline and regressions'): at most 10 % worse than the "
                  "baseline run, half the 20 % the relative checks let a link or node trail its peers "
                  "(relative_fraction_of_peers 0.8); a pod sets its own in expectations.regression")
# a check's ``compare`` -> which way is better
BETTER = {">= ": "higher", "<= ": "lower"}

Key = Tuple[str, str, str, Any]


def read_results(path: str) -> Dict[str, Any]:
    """A results.json: ``path`` itself, or ``path``/results.json for a run directory (a ``latest`` or ``baseline``
    link included). ValueError naming the path when there is none or it is not a results document."""
    file = os.path.join(path, "results.json") if os.path.isdir(path) else path
    try:
        with open(file, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise ValueError("baseline %s: cannot read it (%s)" % (file, exc.strerror or exc)) from None
    except ValueError as exc:
        raise ValueError("baseline %s: not JSON (%s)" % (file, exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), list):
        raise ValueError("baseline %s: not a results.json (no checks list)" % file)
    return doc


def run_name(doc: Mapping[str, Any]) -> str:
    """'pod-in-a-box 20261129T022723Z': how a cause names a run."""
    return "%s %s" % (doc.get("pod") or "?", doc.get("finished") or "?")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def tolerance(block: Optional[Mapping[str, Any]], check: str, category: Optional[str]) -> Tuple[float, str]:
    """(fraction, source) for a row of ``check`` in ``category``: ``block`` is ``expectations.regression``
    ({<check or category>: {value, source} or a bare fraction}). ValueError for a value that is not a fraction in
    [0, 1)."""
    for key in (check, category):
        item = (block or {}).get(key) if key else None
        if item is None:
            continue
        value, source = (item.get("value"), item.get("source")) if isinstance(item, Mapping) else (item, None)
        if not _number(value) or not 0 <= value < 1:
            raise ValueError("expectations.regression.%s: %r is not a fraction from 0 to below 1 (0.1 = 10 %%)"
                             % (key, value))
        return float(value), "expectations.regression.%s: %s" % (key, source or "pod override")
    return DEFAULT_TOLERANCE, DEFAULT_SOURCE


def row_key(c: Mapping[str, Any]) -> Key:
    """Which row a check entry is, the same in two runs: check, host, subject, and ``reverse`` (an iperf3 -R test
    of the same link)."""
    return (str(c.get("check")), str(c.get("host")), json.dumps(c.get("subject") or {}, sort_keys=True),
            c.get("reverse"))


def comparable(c: Mapping[str, Any]) -> bool:
    """A row whose number is compared: a performance category, a numeric measurement, a direction."""
    return (c.get("category") in PERF_CATEGORIES and _number(c.get("measured"))
            and (c.get("compare") or ">= ") in BETTER)


def rows(doc: Mapping[str, Any]) -> Dict[Key, Mapping[str, Any]]:
    """{row key: entry} of a document's comparable rows (the first of two with one key)."""
    out: Dict[Key, Mapping[str, Any]] = {}
    for c in doc.get("checks") or []:
        if isinstance(c, Mapping) and comparable(c):
            out.setdefault(row_key(c), c)
    return out


def measurements(doc: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """The comparable rows of ``doc``, one per measurement: a row with the stage, subject, ``reverse``, unit and
    value of an earlier one is the same measurement judged by another check (iperf_relative after iperf)."""
    seen = set()
    out = []
    for c in rows(doc).values():
        same = (c.get("stage"), json.dumps(c.get("subject") or {}, sort_keys=True), c.get("reverse"), c.get("unit"),
                c.get("measured"))
        if same in seen:
            continue
        seen.add(same)
        out.append(c)
    return out


def _subject(c: Mapping[str, Any]) -> Subject:
    try:
        return Subject.from_dict(c.get("subject"))
    except (TypeError, ValueError):
        return Subject()


def _what(c: Mapping[str, Any]) -> str:
    """The row as a cause names it: its host, and the link or step where the subject says more."""
    s = c.get("subject") if isinstance(c.get("subject"), Mapping) else {}
    if all(s.get(k) for k in ("node", "nic", "peer", "peer_nic")):
        arrow = "<-" if c.get("reverse") else "->"
        return "%s %s %s %s %s %s" % (c.get("check"), s["node"], s["nic"], arrow, s["peer"], s["peer_nic"]) + (
            " on %s" % s["fabric"] if s.get("fabric") else "")
    step = " (step of %s node(s))" % s["step"] if _number(s.get("step")) and s.get("node") else ""
    return "%s %s%s" % (c.get("check"), c.get("host"), step)


def _fmt(v: float) -> str:
    return ("%.3f" % v).rstrip("0").rstrip(".")


def regression(current: Mapping[str, Any], base: Mapping[str, Any], block: Optional[Mapping[str, Any]],
               baseline_run: str) -> CheckResult:
    """``regression_<check>`` of one row: this run's ``current`` entry against the baseline's ``base``."""
    check, category = str(current["check"]), current.get("category")
    tol, source = tolerance(block, check, category)
    how = current.get("compare") or ">= "
    was, now = float(base["measured"]), float(current["measured"])
    higher = BETTER[how] == "higher"
    limit = was * (1 - tol) if higher else was * (1 + tol)
    ok = now >= limit if higher else now <= limit
    unit = " %s" % current["unit"] if current.get("unit") else ""
    details: Dict[str, Any] = {"compare": how, "baseline": was, "ratio": round(now / was, 4) if was else None,
                               "tolerance": tol, "baseline_run": baseline_run, "compared": check}
    for key in ("reverse", "pass"):
        if key in current:
            details[key] = current[key]
    cause = None
    if not ok:
        change = (was - now) / was * 100 if was else 0.0
        cause = "%s: %s%s, %s %% %s than the baseline's %s%s (run %s); more than the %s %% tolerance" % (
            _what(current), _fmt(now), unit, _fmt(abs(change)), "lower" if higher else "higher", _fmt(was), unit,
            baseline_run, _fmt(tol * 100))
    return CheckResult("regression_" + check, str(current.get("host")), "pass" if ok else "fail", expected=limit,
                       measured=now, unit=current.get("unit"), source="baseline run %s; %s" % (baseline_run, source),
                       cause=cause, details=details, subject=_subject(current), category=category, stage=STAGE)


def _changed_hosts(cur: Mapping[str, Any], base: Mapping[str, Any]) -> List[str]:
    """What of the model changed, from the two runs' ``model_parts``: the pod's settings, hosts added, removed,
    changed."""
    out = []
    if cur.get("pod") != base.get("pod"):
        out.append("the pod's settings (fabrics, NICs, storage, ...)")
    ch, bh = cur.get("hosts") or {}, base.get("hosts") or {}
    for what, names in (("hosts added", sorted(set(ch) - set(bh))), ("hosts removed", sorted(set(bh) - set(ch))),
                        ("hosts changed", sorted(h for h in set(ch) & set(bh) if ch[h] != bh[h]))):
        if names:
            shown = ", ".join(names[:5]) + (" and %d more" % (len(names) - 5) if len(names) > 5 else "")
            out.append("%s: %s" % (what, shown))
    return out


def model_check(current: Mapping[str, Any], baseline: Mapping[str, Any], where: str) -> CheckResult:
    """``baseline_model``: pass when both runs measured one model, error when they did not (nothing is compared
    then), skipped when a run has no digest to tell (compared by check and subject)."""
    subject, name = Subject(), run_name(baseline)
    cur, base = current.get("model_digest"), baseline.get("model_digest")
    common = dict(subject=subject, category=POD_STATE, stage=STAGE, source="baseline run %s (%s)" % (name, where),
                  details={"baseline_run": name})
    if cur and base and cur == base:
        return CheckResult("baseline_model", "pod", "pass", expected=base, measured=cur, **common)
    if cur and base:
        parts = _changed_hosts(current.get("model_parts") or {}, baseline.get("model_parts") or {})
        return CheckResult("baseline_model", "pod", "error", expected=base, measured=cur, reason=(
            "the pod's model changed since the baseline run %s%s: its measurements are not compared with this run's "
            "(take a run of this model as the baseline: -e pod_baseline=<run directory>)" % (
                name, " - " + "; ".join(parts) if parts else "")), **common)
    differ = [k for k in ("pod", "simulated") if current.get(k) != baseline.get(k)]
    if differ:
        return CheckResult("baseline_model", "pod", "error", reason=(
            "the baseline run %s is of another pod (%s: %s here, %s there): nothing is compared" % (
                name, ", ".join(differ), ", ".join(str(current.get(k)) for k in differ),
                ", ".join(str(baseline.get(k)) for k in differ))), **common)
    return CheckResult("baseline_model", "pod", "skipped", expected=base, measured=cur, reason=(
        "%s has no model digest (written before results.json carried one): the model could not be compared; "
        "measurements are compared by check, host and subject" % ("the baseline run" if not base else "this run")),
        **common)


def compare(current_doc: Mapping[str, Any], baseline_doc: Mapping[str, Any],
            tolerances: Optional[Mapping[str, Any]] = None, where: str = "") -> List[CheckResult]:
    """The baseline checks of ``current_doc`` against ``baseline_doc``: ``baseline_model`` first, then one
    ``regression_<check>`` per measurement both runs have (the module docstring). ``tolerances``: the merged
    expectations' ``regression`` block; ``where``: the baseline's path, for the source."""
    model = model_check(current_doc, baseline_doc, where or run_name(baseline_doc))
    if model.status == "error":
        return [model]
    try:
        for c in measurements(current_doc):  # every tolerance read before any row is judged
            tolerance(tolerances, str(c.get("check")), c.get("category"))
    except ValueError as exc:
        return [model, CheckResult("baseline", "pod", "error", reason=str(exc), subject=Subject(), category=POD_STATE,
                                   stage=STAGE)]
    base_rows = rows(baseline_doc)
    name = run_name(baseline_doc)
    out = [model]
    for c in measurements(current_doc):
        base = base_rows.get(row_key(c))
        if base is not None:
            out.append(regression(c, base, tolerances, name))
    return out


def unreadable(reason: str) -> CheckResult:
    """``baseline`` error: the baseline asked for could not be read (nothing compared)."""
    return CheckResult("baseline", "pod", "error", reason=reason, subject=Subject(), category=POD_STATE, stage=STAGE)


def with_baseline(doc: Mapping[str, Any], results: Sequence[CheckResult]) -> Dict[str, Any]:
    """``doc`` with ``results`` appended to its checks and its summary counted again (before the findings)."""
    out = dict(doc)
    out["checks"] = list(doc.get("checks") or []) + [r.to_dict() for r in results]
    out["summary"] = counts(out["checks"])
    return out


def summary_lines(results: Sequence[CheckResult]) -> List[str]:
    """What compare_runs.py prints: the model line, each failed or errored row, then the counts."""
    lines = []
    for r in results:
        if r.check in ("baseline_model", "baseline"):
            lines.append("[%s] %s: %s" % (r.status, r.check, r.reason or "same pod model (%s)" % r.measured))
        elif r.status != "pass":
            lines.append("[%s] %s %s: %s" % (r.status, r.check, r.host, r.cause or r.reason))
    regs = [r for r in results if r.check.startswith("regression_")]
    failed = [r for r in regs if r.status == "fail"]
    lines.append("%d measurement(s) compared, %d regression(s)" % (len(regs), len(failed)))
    return lines
