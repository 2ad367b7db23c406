# -*- coding: utf-8 -*-
"""Which DGX a validation run drains in Slurm, and with what reason (issue 20). Pure, stdlib only.

Input: a results.json document (schema 4, docs/results.md): its ``findings`` (one per root cause, with the
``host`` at fault, the ``cause`` and the ``root`` check) and, for older documents, its ``checks``. Output: the
drain plan ``{"drain": [{node, reason, finding}], "skipped": [{host, why, finding}]}``.

* Only a finding whose host is a DGX of the partition drains: a storage node, a switch or the pod itself is
  not a Slurm node (draining every DGX for a frozen NAS would stop the pod; the report says what to fix).
* The reason is ``dgxpod <check>: <cause>`` (``sinfo -R`` shows it), so :func:`ours` can tell the drains this
  toolkit made from an administrator's and ``resume`` undoes only those.
* A run that names more than one DGX and more than ``max_fraction`` of them drains none: a pod-wide fault
  (a switch, the NCCL environment) shows as many nodes failing, and draining them all would take the pod
  out of service for a fault no node has.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import SERVICE_STATE, CheckResult, Subject

PREFIX = "dgxpod "
# The slurm stage's own checks (validate.yml --tags slurm): a node drained or down in Slurm fails them, and
# draining it "because it is drained" would replace its reason (an administrator's, or the cause a previous
# run gave) with a circular one. They are reported, never drained on.
SLURM_CHECKS = ("slurm_node", "slurm_controller")
REASON_MAX = 200  # characters; slurmctld keeps longer reasons, but sinfo/scontrol lines stay readable


def reason_of(finding: Mapping[str, Any]) -> str:
    root = finding.get("root") or {}
    check = root.get("check") or next((e.get("check") for e in finding.get("explains") or [] if e.get("check")),
                                      None) or "validate"
    cause = " ".join(str(finding.get("cause") or finding.get("summary") or finding.get("status") or "failed").split())
    text = "%s%s: %s" % (PREFIX, check, cause)
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def _findings(doc: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    if doc.get("findings") is not None:
        return [f for f in doc["findings"] if f.get("status") in ("fail", "error")]
    # results.json before schema 4: one pseudo-finding per failed check on a host
    return [{"host": c.get("host"), "cause": c.get("detail") or c.get("message") or c.get("status"),
             "status": c.get("status"), "root": {"check": c.get("check"), "host": c.get("host")},
             "id": c.get("check")} for c in doc.get("checks") or [] if c.get("status") in ("fail", "error")]


def _root_check(finding: Mapping[str, Any]) -> Optional[str]:
    return (finding.get("root") or {}).get("check")


def drain_plan(doc: Mapping[str, Any], dgx: Iterable[str], max_fraction: float = 0.5,
               exclude_checks: Iterable[str] = SLURM_CHECKS) -> Dict[str, Any]:
    """The nodes to drain (each once, the finding explaining most checks giving its reason). Findings whose
    root check is one of ``exclude_checks`` (Slurm's own) drain nothing."""
    nodes = list(dgx)
    excluded = set(exclude_checks)
    drain: Dict[str, Dict[str, Any]] = {}
    skipped: List[Dict[str, Any]] = []
    for f in _findings(doc):
        host = f.get("host")
        if _root_check(f) in excluded:
            skipped.append({"host": host, "finding": f.get("id"),
                            "why": "%s is Slurm's own state, reported and not drained on" % _root_check(f)})
            continue
        if host not in nodes:
            skipped.append({"host": host, "finding": f.get("id"),
                            "why": "not a DGX of the partition (%s)" % ("the pod" if host in (None, "pod") else host)})
            continue
        if host in drain:
            drain[host]["more"] += 1
            continue
        drain[host] = {"node": host, "reason": reason_of(f), "finding": f.get("id"), "more": 0}
    out = []
    for row in drain.values():
        if row["more"]:
            extra = " (+%d more finding%s)" % (row["more"], "" if row["more"] == 1 else "s")
            row["reason"] = row["reason"][:REASON_MAX - len(extra)] + extra
        out.append({"node": row["node"], "reason": row["reason"], "finding": row["finding"]})
    if nodes and len(out) > max(1.0, max_fraction * len(nodes)):
        why = ("%d of %d DGX named: more than %d%% of the partition looks like a pod-wide fault; nothing "
               "drained (fix the cause, or raise max_fraction)" % (len(out), len(nodes), round(max_fraction * 100)))
        return {"drain": [], "skipped": skipped + [{"host": r["node"], "finding": r["finding"], "why": why}
                                                   for r in out], "refused": why}
    return {"drain": out, "skipped": skipped, "refused": None}


def ours(reason: Optional[str]) -> bool:
    """A drain this toolkit made (its reason starts with ``dgxpod ``)."""
    return bool(reason) and str(reason).startswith(PREFIX)


def resume_plan(states: Mapping[str, Mapping[str, Any]], nodes: Optional[Iterable[str]] = None,
                only_ours: bool = True) -> List[str]:
    """The drained/draining nodes to resume: ``nodes`` (default all) whose reason is ours unless ``only_ours``
    is false."""
    wanted = set(nodes) if nodes is not None else None
    return [n for n, s in states.items() if s.get("drain") and (wanted is None or n in wanted)
            and (not only_ours or ours(s.get("reason")))]


def slurm_checks(states: Mapping[str, Mapping[str, Any]], dgx: Iterable[str]) -> List[Dict[str, Any]]:
    """:func:`slurm_check_results` as results.json entries."""
    return [r.to_dict() for r in slurm_check_results(states, dgx)]


def slurm_check_results(states: Mapping[str, Mapping[str, Any]], dgx: Iterable[str]) -> List[Any]:
    """One ``slurm_node`` check per DGX (module_utils/result/check.py's CheckResult; Slurm's view of the node,
    SERVICE_STATE): pass when Slurm knows it, it responds and it is idle/allocated/mixed/completing; fail naming
    the state and the reason (drained, draining, down, invalid, not responding, not in slurm.conf)."""
    out = []
    for node in dgx:
        s = states.get(node)
        if s is None:
            res = CheckResult("slurm_node", node, "fail", expected="a Slurm node", measured="absent",
                              cause="%s is not a node of slurmctld (slurm.conf lacks it, or slurmd never registered)"
                              % node, subject=Subject(node=node), category=SERVICE_STATE)
        else:
            bad = s.get("state") in ("down", "drained", "draining", "fail", "failing", "invalid", "unknown") or \
                s.get("drain") or not s.get("responding", True)
            what = "%s%s" % (s.get("state"), "" if s.get("responding", True) else ", not responding")
            res = CheckResult("slurm_node", node, "fail" if bad else "pass", expected="idle, allocated or mixed",
                              measured=what, cause=("%s in Slurm%s" % (what, ": " + s["reason"] if s.get("reason")
                                                                         else "")) if bad else None,
                              subject=Subject(node=node), category=SERVICE_STATE)
        out.append(res)
    return out
