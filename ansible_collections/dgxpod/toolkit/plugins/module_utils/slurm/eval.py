# -*- coding: utf-8 -*-
"""The ``slurm`` stage of validate.yml (``--tags slurm``; docs/slurm.md), pure Python.

``playbooks/validate_slurm.yml`` records on localhost, in ``pod_stages.slurm``, either what the model says when
the pod has no scheduler::

    {"scheduler": "none"}                      -> no checks (a pod without Slurm has nothing to check)

or what ``pod_slurm action=state`` read on the controller::

    {"scheduler": "slurm", "controller": "DGX1-1", "partition": "dgx", "dgx": ["DGX1-1", ...],
     "nodes": {node: {state, drain, responding, reason}},      # module_utils/slurm/parse.node_states
     "error": "scontrol show node -o failed (rc 1): ...",       # only when the read failed
     "unreachable": false}                                      # the controller did not answer Ansible

:func:`evaluate` gives one ``slurm_controller`` check (slurmctld answered, or why not) and, when it answered,
one ``slurm_node`` check per DGX (module_utils/slurm/drain.py ``slurm_check_results``: pass when idle,
allocated or mixed and responding; fail naming the state and Slurm's reason). :func:`markdown` and
:func:`html` add the table of every node slurmctld knows to the report.
"""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import SERVICE_STATE, CheckResult, Subject
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.drain import slurm_check_results

SOURCE = "toolkit rule (docs/slurm.md): every DGX of the partition is a Slurm node, responding, not down or drained"


def evaluate(m: Dict[str, Any], expectations: Dict[str, Any], context: Dict[str, Any]) -> List[CheckResult]:
    """Checks from the recorded Slurm state; none when the model has no scheduler."""
    if (m or {}).get("scheduler") != "slurm":
        return []
    ctl = str(m.get("controller") or "pod")
    about = {"subject": Subject(node=None if ctl == "pod" else ctl), "category": SERVICE_STATE}
    if m.get("error") or m.get("nodes") is None:
        why = str(m.get("error") or "pod_slurm returned no node states")
        if m.get("unreachable"):
            return [CheckResult("slurm_controller", ctl, "error", expected="slurmctld answers",
                                reason="the Slurm controller %s did not answer: %s" % (ctl, why), unreachable=True,
                                **about)]
        return [CheckResult("slurm_controller", ctl, "fail", expected="slurmctld answers", measured="no answer",
                            source=SOURCE, cause="slurmctld on %s: %s" % (ctl, why), **about)]
    nodes = m.get("nodes") or {}
    out = [CheckResult("slurm_controller", ctl, "pass", expected="slurmctld answers",
                       measured="%d node(s) known" % len(nodes), source=SOURCE, **about)]
    for r in slurm_check_results(nodes, m.get("dgx") or []):
        r.source = SOURCE
        out.append(r)
    return out


def _rows(doc: Dict[str, Any]) -> List[List[str]]:
    m = (doc.get("measurements") or {}).get("slurm") or {}
    if m.get("scheduler") != "slurm" or not m.get("nodes"):
        return []
    return [[n, "%s%s" % (s.get("state"), "" if s.get("responding", True) else ", not responding"),
             str(s.get("reason") or "")] for n, s in sorted(m["nodes"].items())]


def _title(doc: Dict[str, Any]) -> str:
    m = (doc.get("measurements") or {}).get("slurm") or {}
    return "Slurm (controller %s, partition %s)" % (m.get("controller"), m.get("partition"))


def markdown(doc: Dict[str, Any]) -> List[str]:
    """Every node slurmctld knows, its state and reason (the check rows say which DGX fail)."""
    rows = _rows(doc)
    if not rows:
        return []
    lines = ["", "## %s" % _title(doc), "", "| node | state | reason |", "|---|---|---|"]
    lines += ["| %s |" % " | ".join(c.replace("|", "\\|") for c in row) for row in rows]
    return lines + [""]


def html(doc: Dict[str, Any]) -> List[str]:
    """HTML version of :func:`markdown`."""
    rows = _rows(doc)
    if not rows:
        return []
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % escape(c) for c in row) for row in rows)
    return ["<h2>%s</h2>" % escape(_title(doc)),
            "<table><tr><th>node</th><th>state</th><th>reason</th></tr>%s</table>" % body]
