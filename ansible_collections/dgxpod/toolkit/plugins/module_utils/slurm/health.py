# -*- coding: utf-8 -*-
"""The node-local health program's decisions (issue 43 item 1): what Slurm's ``HealthCheckProgram``
(``dgxpod-health``, roles/slurm/files/dgxpod_health_main.py) does with one DGX's cheap checks. Pure functions
and one injected runner, so the unit tests drive it with a fake ``scontrol`` (tests/unit/test_health_program.py).

* :func:`evaluate_local` judges the node's readings with the stages' own evaluators - module_utils/gpu/eval.py on
  the dgx_gpu_health reading (no DCGM, no nvbandwidth) and module_utils/node/eval.py on the dgx_node_health reading
  (the kernel log since the last healthy run, the host inventory, the BMC) - in the records the validate stages
  record, then the simulated policy, as the report does. No second copy of a verdict.
* :func:`problems` keeps what makes the node unusable: a ``fail`` or an ``error`` about this node (a check that
  could not read a GPU is not a healthy GPU); ``skipped`` is not a problem.
* :func:`decide` is the whole drain/resume rule on Slurm's view of the node (``scontrol show node -o <self>``,
  slurm/parse.py): failing and not drained -> drain with ``dgxpod-health: <first problem>``; failing and drained by
  us -> the reason follows the first problem; failing and drained by anyone else -> left as it is (never overwrite
  an administrator's reason); healthy and drained by us -> resume; healthy and drained by anyone else -> left
  drained; a node DOWN (not drained) is left alone. Only a reason that starts with :data:`PREFIX` is ours.
* :func:`run_once` wires them: read the state, decide, run ``scontrol update``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import eval as node_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import CheckResult, apply_simulated_policy
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.parse import parse_scontrol_nodes

# Every drain this program makes starts with it; it resumes only a node whose reason does. Not "dgxpod " (the
# validation's drain, slurm/drain.py PREFIX): playbooks/slurm_resume.yml and this program never undo each other's.
PREFIX = "dgxpod-health: "
REASON_MAX = 200  # characters, as slurm/drain.py: sinfo -R and scontrol lines stay readable
BAD = ("fail", "error")

Runner = Callable[[List[str], float], Tuple[Optional[int], str, str]]


def records(node: str, gpu_reading: Optional[Mapping[str, Any]], node_reading: Optional[Mapping[str, Any]],
            dgx_model: Optional[str], gpu_error: Optional[str] = None, node_error: Optional[str] = None
            ) -> Dict[str, Dict[str, Any]]:
    """The gpu and node stage records of this one DGX, in the shapes playbooks/validate_gpu.yml
    (filter_plugins/gpu.py gpu_stage_record) and validate_node.yml record them, so the stages' evaluators read
    them unchanged. A reading that could not be taken is that stage's error for the node, as on the controller."""
    if gpu_reading is not None and gpu_error is None:
        gpu_entry: Dict[str, Any] = {"status": "ok", "dgx_model": dgx_model, "facts": dict(gpu_reading)}
    else:
        gpu_entry = {"status": "error", "dgx_model": dgx_model,
                     "reason": "dgx_gpu_health failed: %s" % (gpu_error or "no reading")}
    node_entry = {"dgx_node": dict(node_reading) if node_reading is not None else None,
                  "error": node_error if node_reading is not None or node_error else "no reading",
                  "unreachable": False, "dgx_model": dgx_model}
    return {"gpu": {"level": 0, "nodes": {node: gpu_entry}}, "node": {"nodes": {node: node_entry}}}


def evaluate_local(recorded: Mapping[str, Mapping[str, Any]], expectations: Mapping[str, Any],
                   context: Optional[Mapping[str, Any]] = None, ignore: Sequence[str] = ()) -> List[CheckResult]:
    """Every gpu and node check of the record, judged by the stages' evaluators, with the simulated policy of
    ``context['simulated']`` applied once after evaluation (result/check.py), less the checks named in ``ignore``
    (the role's ``slurm_health_ignore_checks``: a site that accepts a check's failure on its nodes)."""
    ctx = dict(context or {})
    exp = dict(expectations or {})
    results: List[CheckResult] = []
    if "gpu" in recorded:
        results += gpu_eval.evaluate(dict(recorded["gpu"]), exp, ctx)
    if "node" in recorded:
        results += node_eval.evaluate(dict(recorded["node"]), exp, ctx)
    results = apply_simulated_policy(results, str(ctx.get("simulated")).lower() in ("true", "1", "yes"))
    return [r for r in results if r.check not in set(ignore)]


def problems(results: Sequence[CheckResult], node: str) -> List[CheckResult]:
    """The results that make ``node`` unusable: ``fail`` or ``error``, about this node (its own checks, and the
    pod-wide rows the one-node record still makes, such as a version pin), in the order the evaluators gave them."""
    return [r for r in results if r.status in BAD
            and (r.subject is None or r.subject.node in (None, node) or r.host in (node, "pod"))]


def describe(result: CheckResult) -> str:
    """One problem as a drain reason's text: the check and what it found (its cause, else its reason), on one
    line."""
    why = result.cause or result.reason or ("%s (measured %s, expected %s)" % (result.status, result.measured,
                                                                               result.expected))
    return " ".join(("%s: %s" % (result.check, why)).split())


def reason_for(found: Sequence[CheckResult]) -> str:
    """``dgxpod-health: <first problem>[ (+N more)]``, at most :data:`REASON_MAX` characters."""
    more = " (+%d more)" % (len(found) - 1) if len(found) > 1 else ""
    text = PREFIX + describe(found[0])
    if len(text) + len(more) > REASON_MAX:
        text = text[:REASON_MAX - len(more) - 3] + "..."
    return text + more


def ours(reason: Optional[str]) -> bool:
    """A drain this program made: its reason starts with :data:`PREFIX`."""
    return bool(reason) and str(reason).startswith(PREFIX)


def node_state(text: str, node: str) -> Optional[Dict[str, Any]]:
    """This node's row of ``scontrol show node -o <node>`` (slurm/parse.py: state, drain, responding, reason), or
    None when Slurm does not list it."""
    for row in parse_scontrol_nodes(text):
        if row["node"] == node:
            return row
    return None


def decide(state: Optional[Mapping[str, Any]], found: Sequence[CheckResult]) -> Dict[str, Any]:
    """What to do with the node: ``{action: drain | resume | none, reason, why}``.

    ``state``: the node's row (:func:`node_state`); ``found``: :func:`problems`. The rule (module docstring): a
    drain of anyone else is never touched, whatever the checks say, and a healthy node is resumed only from our own
    drain."""
    if state is None:
        return {"action": "none", "reason": None, "why": "Slurm does not list the node"}
    drained = bool(state.get("drain"))
    current = state.get("reason")
    if state.get("state") == "down" and not drained:
        return {"action": "none", "reason": None,
                "why": "down in Slurm (%s): left as it is" % (current or "no reason")}
    if found:
        reason = reason_for(found)
        if not drained:
            return {"action": "drain", "reason": reason, "why": "%d check(s) failed" % len(found)}
        if not ours(current):
            return {"action": "none", "reason": None,
                    "why": "checks failed, but the node is already drained by someone else (%s): left as it is"
                           % (current or "no reason")}
        if current != reason:
            return {"action": "drain", "reason": reason, "why": "still failing, now for another reason"}
        return {"action": "none", "reason": None, "why": "still failing; already drained for it"}
    if drained and ours(current):
        return {"action": "resume", "reason": None, "why": "healthy again; the drain was ours (%s)" % current}
    if drained:
        return {"action": "none", "reason": None,
                "why": "healthy, but drained by someone else (%s): left drained" % (current or "no reason")}
    return {"action": "none", "reason": None, "why": "healthy"}


def update_argv(node: str, decision: Mapping[str, Any], scontrol: str = "scontrol") -> Optional[List[str]]:
    """The ``scontrol update`` of a decision (None for ``none``): ``state=drain reason=<reason>`` or
    ``state=resume``. One argv word per field, so a reason with spaces needs no shell quoting."""
    if decision["action"] == "drain":
        return [scontrol, "update", "nodename=%s" % node, "state=drain", "reason=%s" % decision["reason"]]
    if decision["action"] == "resume":
        return [scontrol, "update", "nodename=%s" % node, "state=resume"]
    return None


def run_once(node: str, found: Sequence[CheckResult], run: Runner, scontrol: str = "scontrol",
             timeout: float = 30) -> Dict[str, Any]:
    """Read the node's Slurm state, decide and apply: ``{node, action, reason, why, problems, error}``. A state
    that cannot be read or an update Slurm refuses is ``error`` with scontrol's words, and nothing else is done."""
    out: Dict[str, Any] = {"node": node, "action": "none", "reason": None, "why": None,
                           "problems": [describe(r) for r in found], "error": None}
    rc, text, err = run([scontrol, "show", "node", "-o", node], timeout)
    if rc != 0:
        out["error"] = "scontrol show node: exit %s: %s" % (rc, (err or text).strip()[-300:])
        return out
    try:
        state = node_state(text, node)
    except ValueError as exc:
        out["error"] = "scontrol show node: %s" % exc
        return out
    decision = decide(state, found)
    out.update(action=decision["action"], reason=decision["reason"], why=decision["why"])
    argv = update_argv(node, decision, scontrol)
    if argv is not None:
        rc, text, err = run(argv, timeout)
        if rc != 0:
            out["error"] = "scontrol update: exit %s: %s" % (rc, (err or text).strip()[-300:])
    return out
