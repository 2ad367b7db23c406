# -*- coding: utf-8 -*-
"""One check result for every validation stage, and the simulated policy applied once. Pure Python, the ground
floor: it imports nothing of ours (docs/architecture.md).

Every stage (identity, network, storage, containers, iperf, fio, NCCL, training, GPU, switches, ...) reports
what it decided as :class:`CheckResult` objects; ``to_dict()`` gives the results.json entry
(docs/results.md): ``check``, ``host``, ``status`` (pass | fail | skipped | error), ``expected``,
``measured``, ``unit``, ``source``, and, when not pass, ``cause`` (what is likely wrong, naming the node,
NIC, GPU or port) or ``reason`` (why the check could not run or was skipped).

What a check is about is data, not text: ``subject`` (:class:`Subject`: node, NIC, peer and peer NIC, switch
and port, GPU, HCA, step, ...) and ``category`` (:data:`CATEGORIES`: a node's state, a switch port's state, a
link's performance, ...). The root-cause findings read only those (module_utils/report/findings*.py); ``host``
is the subject as the report prints it. A check whose result lists several problems of different things (the
network check of a DGX: a NIC's MTU, a ping to another node) gives each as a :class:`Problem` with its own
subject and category.

Status is decided here, in Python (unit-tested), never in a template. A check that compares a measurement
with a hardware figure (an RA number, NVIDIA's published bandwidth) is ``absolute``: on a simulated pod
:func:`apply_simulated_policy` turns it into ``skipped`` with :data:`SIMULATED_REASON`, after evaluation,
so evaluators never need to know whether the pod is simulated.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

STATUSES = ("pass", "fail", "skipped", "error")
SIMULATED_REASON = ("simulated: the pod-in-a-box's numbers are not DGX hardware; absolute RA figures are not "
                    "compared (relative checks still run)")
# results.json key order: the fixed fields first, then the check's own details
_FIELDS = ("check", "host", "status", "expected", "measured", "unit", "source", "cause", "reason")

# What kind of thing a check decides - how the root-cause findings read a failure of it (docs/results.md):
NODE_STATE = "node_state"        # one node's own state: a fault of subject.node (its nic, gpu, hca)
PORT_STATE = "port_state"        # a switch port (subject.switch, .port): a fault of it and of the NIC cabled to it
SWITCH_STATE = "switch_state"    # a switch as a whole (its configuration drift, its answer)
FILE_STATE = "file_state"        # a file the deploy wrote, on subject.node at subject.path (drift)
SERVICE_STATE = "service_state"  # a pod service's view of a node or of itself (Slurm's node state, slurmctld)
JOB_STATE = "job_state"          # a GPU job's outcome (it ran, its results are correct, the loss fell)
POD_STATE = "pod_state"          # the pod or a stage as a whole (a stage that recorded nothing)
REACH = "reach"                  # subject.node could not reach subject.peer / .address: the fault points at the peer
LINK_PERF = "link_perf"          # a measurement between two endpoints: subject.node/.nic and subject.peer/.peer_nic
NODE_PERF = "node_perf"          # one node's measurement among its peers' (a fio step's node)
JOB_PERF = "job_perf"            # a GPU job's speed on a node, a pair or all (NCCL, training): a GPU fault explains it
POD_PERF = "pod_perf"            # the pod or a step of many nodes as a whole (scaling, sizing): no one node at fault
CATEGORIES = (NODE_STATE, PORT_STATE, SWITCH_STATE, FILE_STATE, SERVICE_STATE, JOB_STATE, POD_STATE, REACH,
              LINK_PERF, NODE_PERF, JOB_PERF, POD_PERF)
PERF_CATEGORIES = (LINK_PERF, NODE_PERF, JOB_PERF, POD_PERF)


@dataclass(frozen=True)
class Subject:
    """What a check (or one problem of it) is about, as data. Every field is optional; set what is known.

    ``node``: the pod node (DGX or storage node; for a pair, the client side); ``nic``: its NIC; ``peer`` and
    ``peer_nic``: the other end (the iperf3 server, the NCCL partner, the node a ping or mount went to);
    ``address``: the peer's address (when the peer is not a pod node, or as well); ``fabric``; ``switch`` and
    ``port``; ``gpu`` (index) and ``hca`` (``mlx5_N``) of the node; ``nodes``: every node of a step or run;
    ``step`` (a fio step's node count, an NCCL step ``single``/``all``/``pair``); ``phase`` (a training pass);
    ``path`` (a file or mount point on the node); ``storage``: the check measures the pod's shared storage."""

    node: Optional[str] = None
    nic: Optional[str] = None
    peer: Optional[str] = None
    peer_nic: Optional[str] = None
    address: Optional[str] = None
    fabric: Optional[str] = None
    switch: Optional[str] = None
    port: Optional[str] = None
    gpu: Optional[Any] = None
    hca: Optional[str] = None
    nodes: Tuple[str, ...] = ()
    step: Optional[Any] = None
    phase: Optional[str] = None
    path: Optional[str] = None
    storage: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.nodes, tuple):
            object.__setattr__(self, "nodes", tuple(self.nodes or ()))

    def to_dict(self) -> Dict[str, Any]:
        """The fields that are set, in declaration order (``nodes`` as a list)."""
        out: Dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == () or value is False:
                continue
            out[f.name] = list(value) if f.name == "nodes" else value
        return out

    @classmethod
    def from_dict(cls, d: Optional[Mapping[str, Any]]) -> Subject:
        known = {f.name for f in fields(cls)}
        d = d or {}
        unknown = sorted(set(d) - known - {"category", "cause"})
        if unknown:
            raise ValueError("subject: unknown field(s) %s (known: %s)" % (", ".join(unknown),
                                                                           ", ".join(sorted(known))))
        return cls(**{k: (tuple(v) if k == "nodes" else v) for k, v in d.items() if k in known})

    def involved(self) -> Tuple[str, ...]:
        """Every pod node this subject names (node, peer, nodes), once each, in that order."""
        out: List[str] = []
        for n in (self.node, self.peer) + tuple(self.nodes):
            if n and n not in out:
                out.append(n)
        return tuple(out)


@dataclass(frozen=True)
class Problem:
    """One problem a check found, with what it is about: ``text`` as the report lists it; ``category``
    (NODE_STATE: a fault of subject.node itself, e.g. of subject.nic; REACH: subject.node could not reach
    subject.peer/.address); ``subject``; ``cause``: the words a finding uses for it when they differ from
    ``text`` (without the subject the finding names already: "MTU 1500, model 9000")."""

    text: str
    category: str
    subject: Subject
    cause: Optional[str] = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError("problem %r: category %r is not one of %s" % (self.text, self.category,
                                                                          ", ".join(CATEGORIES)))

    def about(self) -> Dict[str, Any]:
        """Its results.json entry in ``problem_subjects``: the category, the cause when it has its own, and the
        subject's fields."""
        out: Dict[str, Any] = {"category": self.category}
        if self.cause:
            out["cause"] = self.cause
        out.update(self.subject.to_dict())
        return out


@dataclass
class CheckResult:
    """One decided check. ``host`` is what the check is about as the report prints it: a node, a pair
    ``a<->b``, a switch and port, or ``pod`` for pod-wide checks; ``subject`` and ``category`` say the same as
    data (required: the findings read nothing else). ``problems``: what it found, each with its own subject
    (results.json ``problems`` keeps their texts, ``problem_subjects`` their subjects, in the same order).
    ``stage``: the registered stage that decided it (set by the registry). ``unreachable``: an ``error`` because the
    node did not answer (Ansible could not reach it, or a tool found it unreachable). ``details`` are extra keys for the
    report and results.json (they never replace the fixed fields)."""

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
    subject: Optional[Subject] = None
    category: Optional[str] = None
    problems: Tuple[Problem, ...] = ()
    stage: Optional[str] = None
    unreachable: bool = False

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError("check %s on %s: status %r is not one of %s" % (self.check, self.host, self.status,
                                                                          ", ".join(STATUSES)))
        if not self.check or not self.host:
            raise ValueError("a check result needs a check name and a host (got %r, %r)" % (self.check, self.host))
        if self.category is not None and self.category not in CATEGORIES:
            raise ValueError("check %s on %s: category %r is not one of %s" % (self.check, self.host, self.category,
                                                                              ", ".join(CATEGORIES)))
        if not isinstance(self.problems, tuple):
            object.__setattr__(self, "problems", tuple(self.problems or ()))

    def to_dict(self) -> Dict[str, Any]:
        """The results.json entry; ``absolute: true`` marks a check against a hardware figure."""
        out: Dict[str, Any] = {}
        for key in _FIELDS:
            value = getattr(self, key)
            if value is not None or key in ("check", "host", "status"):
                out[key] = value
        if self.absolute:
            out["absolute"] = True
        if self.problems:
            out["problems"] = [p.text for p in self.problems]
        for key, value in self.details.items():
            if key not in out and key not in _OWN:
                out[key] = value
        # what the check is about, as data (schema 5): after everything a v4 reader knew
        if self.problems:
            out["problem_subjects"] = [p.about() for p in self.problems]
        if self.stage:
            out["stage"] = self.stage
        if self.unreachable:
            out["unreachable"] = True
        if self.category:
            out["category"] = self.category
        if self.subject is not None:
            out["subject"] = self.subject.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> CheckResult:
        """The inverse of :meth:`to_dict` (every key that is not a field becomes a detail)."""
        fixed = {k: d.get(k) for k in _FIELDS}
        details = {k: v for k, v in d.items() if k not in _FIELDS and k not in _OWN}
        texts = list(d.get("problems") or [])
        abouts = list(d.get("problem_subjects") or [])
        problems: Tuple[Problem, ...] = ()
        if abouts:
            if len(abouts) != len(texts):
                raise ValueError("check %s on %s: %d problems but %d problem_subjects" % (d.get("check"), d.get("host"),
                                                                                     len(texts), len(abouts)))
            problems = tuple(Problem(str(t), str(a.get("category")), Subject.from_dict(a), a.get("cause"))
                             for t, a in zip(texts, abouts, strict=True))
        elif texts:
            details["problems"] = texts  # a v4 entry: the texts only
        subject = Subject.from_dict(d["subject"]) if d.get("subject") is not None else None
        return cls(absolute=bool(d.get("absolute")), details=details, subject=subject, category=d.get("category"),
                   problems=problems, stage=d.get("stage"), unreachable=bool(d.get("unreachable")), **fixed)

    def but(self, **changes: Any) -> CheckResult:
        """A copy with ``changes`` (dataclasses.replace)."""
        return replace(self, **changes)


# CheckResult fields that are not details (to_dict writes them itself)
_OWN = ("absolute", "details", "subject", "category", "problems", "problem_subjects", "stage",
        "unreachable")


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


# The reason of a host a stage expected a reading from and got none (scripts/drill.py matches these words).
NO_RESULT = "no result: the host was unreachable or failed before this check ran"


def no_result(check: str, host: str, subject: Optional[Subject] = None, category: Optional[str] = None,
              **details: Any) -> CheckResult:
    """``error`` for a host a stage's record lists without a reading: it did not answer, or its play failed before
    the check ran (``unreachable``: the findings take it as a node that does not answer)."""
    return CheckResult(check, host, "error", reason=NO_RESULT, subject=subject or Subject(node=host),
                       category=category, unreachable=True, details=details)


def per_host(recorded: Mapping[str, Any], check: str, judge: Any) -> List[CheckResult]:
    """One result per host of a per-host stage's record (``{"hosts": {host: reading or None}}``): ``judge(host,
    reading)``, or the ``no_result`` error naming a host that gave no reading (it did not answer, or its play failed
    before it read anything)."""
    return [judge(host, reading) if reading is not None else no_result(check, host, Subject(node=host), NODE_STATE)
            for host, reading in (recorded.get("hosts") or {}).items()]


RUN_BLOCKED_HINT = "-e pod_run_blocked_jobs=true runs it anyway"


def blocked_result(check: str, host: str, what: str, blockers: Sequence[Mapping[str, Any]],
                   subject: Optional[Subject] = None, category: Optional[str] = None) -> CheckResult:
    """``error`` for a multi-node job a stage did not start because checks it depends on already failed (the
    network, the mounts, the containers of its nodes - issue 46: say so at once instead of waiting out the job's
    timeouts). ``blockers``: those checks as report.prerequisites.job_blockers gives them ({stage, check, host,
    text}); ``details.blocked_by`` names them, and the findings put this check under the finding that explains
    them."""
    shown = "; ".join("%s %s: %s" % (b.get("check"), b.get("host"), b.get("text")) for b in list(blockers)[:3])
    more = " (and %d more)" % (len(blockers) - 3) if len(blockers) > 3 else ""
    return CheckResult(check, host, "error", subject=subject, category=category,
                       reason="not run: %s depends on checks that already failed - %s%s (%s)" % (
                           what, shown, more, RUN_BLOCKED_HINT),
                       details={"blocked_by": [{"stage": b.get("stage"), "check": b.get("check"),
                                                "host": b.get("host")} for b in blockers]})


def apply_simulated_policy(results: Iterable[CheckResult], simulated: bool,
                           reason: str = SIMULATED_REASON) -> List[CheckResult]:
    """On a simulated pod every ``absolute`` check that was decided (pass, fail, or skipped for want of an
    expectation) becomes ``skipped`` with ``reason`` and no expectation: the simulator's numbers are never
    compared with hardware figures. The measurement stays for the record. Errors stay errors: a crash is a
    crash anywhere."""
    out = []
    for r in results:
        if simulated and r.absolute and r.status != "error":
            r = replace(r, status="skipped", expected=None, cause=None,
                        reason=_simulated_reason(reason, r.status, r.reason), details=dict(r.details))
        out.append(r)
    return out


def _simulated_reason(reason: str, status: str, own: Optional[str]) -> str:
    """A check that was skipped for a reason of its own keeps it after the simulated one."""
    return "%s - %s" % (reason, own) if status == "skipped" and own and own != reason else reason


def counts(checks: Iterable[Any]) -> Dict[str, int]:
    """{pass, fail, skipped, error} over CheckResults or their dicts."""
    out = {s: 0 for s in STATUSES}
    for c in checks:
        status = c.status if isinstance(c, CheckResult) else c["status"]
        out[status] = out.get(status, 0) + 1
    return out
