# -*- coding: utf-8 -*-
"""What a multi-node job depends on that already failed in this run (issue 46).

validate.yml runs the state stages (network, storage mounts, MPI containers) before the jobs (NCCL across nodes,
training). When one of those already found a fault on a node the job runs on - a data NIC at the wrong MTU, a
storage node that does not answer, a container down - the job would only fail after waiting out its timeouts
(minutes of gloo/NCCL time-outs on every rank) and add a finding of its own repeating every rank's error. The job's
stage asks :func:`job_blockers` first and, when it returns checks, records the job as not run
(result.check.blocked_result) - one error naming them, which the findings put under the finding that explains them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import registry

# what each job depends on: the stages whose failed checks on its nodes stop it
NCCL_NEEDS = ("network", "containers")
TRAINING_NEEDS = ("network", "nfs_mounts", "containers")


def _text(c: Mapping[str, Any], limit: int = 200) -> str:
    text = str(c.get("cause") or c.get("reason") or "; ".join(str(p) for p in c.get("problems") or []) or
               c.get("status"))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _involved(c: Mapping[str, Any]) -> List[str]:
    s = c.get("subject") if isinstance(c.get("subject"), Mapping) else {}
    out = [s.get("node"), s.get("peer")] + list(s.get("nodes") or [])
    out += [a.get("node") for a in c.get("problem_subjects") or [] if isinstance(a, Mapping)]
    return [str(n) for n in out if n]


def job_blockers(recorded: Mapping[str, Any], needs: Sequence[str], nodes: Sequence[str]) -> List[Dict[str, Any]]:
    """The failed or errored checks of the stages in ``needs`` that this run already recorded (``recorded``: the
    ``pod_stages`` fact) and that involve one of ``nodes``: [{stage, check, host, status, text}], in stage order.
    A stage not recorded (not selected, or not run yet) blocks nothing; a stage whose evaluation raises blocks
    nothing either (the report shows that error)."""
    want = set(str(n) for n in nodes or [])
    out: List[Dict[str, Any]] = []
    for stage in registry():
        if stage.name not in needs or (recorded or {}).get(stage.name) is None:
            continue
        try:
            results = stage.evaluate(dict(recorded[stage.name]), {}, {})
        except Exception:  # noqa: BLE001 - the report evaluates it again and shows the error
            continue
        for r in results:
            c = r.to_dict()
            if c.get("status") in ("fail", "error") and want & set(_involved(c) + [str(c.get("host"))]):
                out.append({"stage": stage.name, "check": c.get("check"), "host": c.get("host"),
                            "status": c.get("status"), "text": _text(c)})
    return out
