# -*- coding: utf-8 -*-
"""One check result for every validation stage, and the simulated policy applied once. Pure Python.

Every stage (identity, network, storage, containers, iperf, fio, NCCL, training, GPU, switches) reports
what it decided as :class:`CheckResult` objects; ``to_dict()`` gives the results.json entry
(docs/results.md): ``check``, ``host``, ``status`` (pass | fail | skipped | error), ``expected``,
``measured``, ``unit``, ``source``, and, when not pass, ``cause`` (what is likely wrong, naming the node,
NIC, GPU or port) or ``reason`` (why the check could not run or was skipped).

Status is decided here, in Python (unit-tested), never in a template. A check that compares a measurement
with a hardware figure (an RA number, NVIDIA's published bandwidth) is ``absolute``: on a simulated pod
:func:`apply_simulated_policy` turns it into ``skipped`` with :data:`SIMULATED_REASON`, after evaluation,
so evaluators never need to know whether the pod is simulated.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

STATUSES = ("pass", "fail", "skipped", "error")
SIMULATED_REASON = ("simulated: the pod-in-a-box's numbers are not DGX hardware; absolute RA figures are not "
                    "compared (relative checks still run)")
# results.json key order: the fixed fields first, then the check's own details
_FIELDS = ("check", "host", "status", "expected", "measured", "unit", "source", "cause", "reason")


@dataclass
class CheckResult:
    """One decided check. ``host`` is what the check is about: a node, a pair ``a<->b``, a switch, or
    ``pod`` for pod-wide checks. ``details`` are extra keys for the report and results.json (they never
    replace the fixed fields).

    ``layout``, when set, is the results.json key order of a check whose entry was written before this type
    existed (iperf, fio, storage sizing: docs/results.md) and must stay as it was: its keys in that order, the
    fixed fields even when empty (``null``) except ``cause`` and ``reason``, a detail when it is there,
    ``absolute`` when true; then anything it does not name, in the usual order."""

    check: str
    host: str
    status: str
    expected: Any = None
    measured: Any = None
    unit: Optional[str] = None
    source: Optional[str] = None
    cause: Optional[str] = None
    reason: Optional[str] = None
    absolute: bool = False
    details: Dict[str, Any] = field(default_factory=dict)
    layout: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError("check %s on %s: status %r is not one of %s" % (self.check, self.host, self.status,
                                                                          ", ".join(STATUSES)))
        if not self.check or not self.host:
            raise ValueError("a check result needs a check name and a host (got %r, %r)" % (self.check, self.host))

    def to_dict(self) -> Dict[str, Any]:
        """The results.json entry; ``absolute: true`` marks a check against a hardware figure."""
        out: Dict[str, Any] = {}
        for key in _FIELDS:
            value = getattr(self, key)
            if value is not None or key in ("check", "host", "status"):
                out[key] = value
        if self.absolute:
            out["absolute"] = True
        for key, value in self.details.items():
            if key not in out and key not in ("absolute", "details", "layout"):
                out[key] = value
        return self._laid_out(out) if self.layout else out

    def _laid_out(self, usual: Dict[str, Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key in self.layout:
            if key in _FIELDS:
                value = getattr(self, key)
                if value is not None or key not in ("cause", "reason"):
                    out[key] = value
            elif key in usual:
                out[key] = usual[key]
        out.update((k, v) for k, v in usual.items() if k not in self.layout)
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> CheckResult:
        """The inverse of :meth:`to_dict` (every key that is not a field becomes a detail)."""
        fields = {k: d.get(k) for k in _FIELDS}
        details = {k: v for k, v in d.items() if k not in _FIELDS and k != "absolute"}
        return cls(absolute=bool(d.get("absolute")), details=details, **fields)


def expectation(exp: Dict[str, Any], section: str, key: str, default: Any = None) -> Tuple[Any, str]:
    """(value, source) of ``expectations.<section>.<key>`` (the RA profile's, with the pod's overrides on top:
    pod.validation.expectations). A bare value (an override without a source) reads as 'pod override'; no entry
    gives ``default`` from the 'toolkit default'."""
    item = (exp.get(section) or {}).get(key)
    if isinstance(item, dict) and "value" in item:
        return item["value"], str(item.get("source") or "pod override")
    if item is None:
        return default, "toolkit default"
    return item, "pod override"


def link_text(t: Dict[str, Any]) -> str:
    """An iperf3 test's link as causes and the report name it: client NIC, the direction the data went (``<-``
    with iperf3 -R), server NIC, fabric."""
    arrow = "<-" if t.get("reverse") else "->"
    return "%s %s %s %s %s on %s" % (t["client"], t["client_nic"], arrow, t["server"], t["server_nic"], t["fabric"])


def row_subject(c: Dict[str, Any]) -> Optional[str]:
    """What one row of a check with several rows for the same host is about - the adapter, the GPU, the iperf3
    link, the fio step, the training pass - or None. The report puts it before the measurement, or such rows
    read the same ("hca_pcie_link | sim-dgx1 | pass | measured x16" four times)."""
    name = str(c.get("check") or "")
    gpu = c.get("gpu")
    if c.get("hca"):
        return str(c["hca"])
    if name.startswith("gpu_") and isinstance(gpu, (int, str)) and not isinstance(gpu, bool):
        return "GPU %s" % gpu
    if name.startswith("iperf") and all(c.get(k) for k in ("client", "client_nic", "server", "server_nic", "fabric")):
        return link_text(c)
    if name.startswith("fio_") and name != "fio_scaling" and c.get("step") is not None:
        return "step of %s node(s)" % c["step"]
    if name.startswith("train_") and c.get("pass"):
        return "%s pass" % c["pass"]
    return None


def pass_fail(ok: bool) -> str:
    return "pass" if ok else "fail"


# How a check's number compares with its expectation, as the report prints it ("measured 1.9 loss (expected
# <= 2.76)"). A check with a numeric expectation and no ``compare`` detail is a threshold (``>= ``); a check that
# wants at most, or exactly, its expectation says so with ``details={"compare": ...}`` (:func:`compare`).
COMPARES = {">= ": lambda m, e: m >= e, "<= ": lambda m, e: m <= e, "= ": lambda m, e: m == e}


def compare(how: str) -> Dict[str, str]:
    """``details`` saying how a check compares its measurement with its expectation: ``">="``, ``"<="`` or
    ``"="`` (a count that must be 0, a GPU count that must match the model)."""
    key = how.strip() + " "
    if key not in COMPARES:
        raise ValueError("compare: %r is not one of %s" % (how, ", ".join(k.strip() for k in COMPARES)))
    return {"compare": key}


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def contradiction(c: Any) -> Optional[str]:
    """What a ``pass`` says against itself, or None: a numeric measurement that does not meet its numeric
    expectation the way the check says it compares (``>=`` unless ``compare`` says otherwise). The report
    prints that comparison next to the status, so a check deciding by another rule than it states would read
    as a pass that failed (or the reverse). ``c``: a :class:`CheckResult` or a results.json entry."""
    d = c.to_dict() if isinstance(c, CheckResult) else c
    how = d.get("compare") or ">= "
    if how not in COMPARES:
        return "check %s on %s: compare %r is not one of %s" % (d.get("check"), d.get("host"), how, list(COMPARES))
    m, e = d.get("measured"), d.get("expected")
    if not (_number(m) and _number(e)):
        return None
    holds = COMPARES[how](m, e)
    if d.get("status") == "pass" and not holds:
        return "check %s on %s passes with measured %s, but says expected %s%s" % (d.get("check"), d.get("host"),
                                                                                 m, how, e)
    if d.get("status") == "fail" and holds and not d.get("cause"):
        return "check %s on %s fails with measured %s, expected %s%s met, and gives no cause" % (
            d.get("check"), d.get("host"), m, how, e)
    return None


# The results.json key order of the checks written before CheckResult existed (iperf, fio, storage sizing):
# an error says it right after the name; after the measurement a skipped check says why, a decided one its
# expectation, ``decided`` (ratio, ...), status, and the cause or note.
ERROR_LAYOUT = ("check", "status", "expected", "measured", "source", "reason")


def layout_tail(status: str, decided: Tuple[str, ...] = ()) -> Tuple[str, ...]:
    if status == "skipped":
        return ("status", "expected", "reason")
    return ("expected",) + decided + ("status", "cause", "note")


def at_least(check: str, host: str, measured: Optional[float], expected: Optional[float], unit: str, source: str,
             cause: str, absolute: bool = False, **details: Any) -> CheckResult:
    """``measured >= expected`` -> pass, else fail with ``cause``. No measurement -> error (the cause is the
    reason it could not be measured); no expectation -> skipped."""
    if measured is None:
        return CheckResult(check, host, "error", expected=expected, unit=unit, source=source, absolute=absolute,
                           reason=cause or "nothing was measured", details=details)
    if expected is None:
        return CheckResult(check, host, "skipped", measured=measured, unit=unit, source=source, absolute=absolute,
                           reason="no expectation for this pod in the profile", details=details)
    ok = measured >= expected
    return CheckResult(check, host, "pass" if ok else "fail", expected=expected, measured=measured, unit=unit,
                       source=source, cause=None if ok else cause, absolute=absolute, details=details)


def apply_simulated_policy(results: Iterable[CheckResult], simulated: bool,
                           reason: str = SIMULATED_REASON) -> List[CheckResult]:
    """On a simulated pod every ``absolute`` check that was decided (pass, fail, or skipped for want of an
    expectation) becomes ``skipped`` with ``reason`` and no expectation: the simulator's numbers are never
    compared with hardware figures. The measurement stays for the record. Errors stay errors: a crash is a
    crash anywhere."""
    out = []
    for r in results:
        if simulated and r.absolute and r.status != "error":
            r = CheckResult(r.check, r.host, "skipped", measured=r.measured, unit=r.unit, source=r.source,
                            reason=_simulated_reason(reason, r.status, r.reason), absolute=True,
                            details=dict(r.details), layout=_with_reason_last(r))
        out.append(r)
    return out


def _with_reason_last(r: CheckResult) -> Tuple[str, ...]:
    """A laid-out entry gains its ``reason`` last, as :func:`apply_simulated_policy_to_dicts` adds it."""
    if not r.layout or "reason" in r.layout:
        return r.layout
    return r.layout + tuple(k for k in r.details if k not in r.layout) + ("reason",)


def _simulated_reason(reason: str, status: str, own: Optional[str]) -> str:
    """A check that was skipped for a reason of its own keeps it after the simulated one."""
    return "%s - %s" % (reason, own) if status == "skipped" and own and own != reason else reason


def apply_simulated_policy_to_dicts(checks: Iterable[Dict[str, Any]], simulated: bool) -> List[Dict[str, Any]]:
    """:func:`apply_simulated_policy` for checks already in their results.json form."""
    out = []
    for c in checks:
        if simulated and c.get("absolute") and c.get("status") != "error":
            c = {k: v for k, v in c.items() if k != "cause"}
            c.update(status="skipped", expected=None,
                     reason=_simulated_reason(SIMULATED_REASON, c["status"], c.get("reason")))
        out.append(c)
    return out


def counts(checks: Iterable[Any]) -> Dict[str, int]:
    """{pass, fail, skipped, error} over CheckResults or their dicts."""
    out = {s: 0 for s in STATUSES}
    for c in checks:
        status = c.status if isinstance(c, CheckResult) else c["status"]
        out[status] = out.get(status, 0) + 1
    return out
