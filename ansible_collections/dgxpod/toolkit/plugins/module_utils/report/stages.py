# -*- coding: utf-8 -*-
"""The registry of validation stages that evaluate measurements in Python (docs/architecture.md).

A stage (NCCL, training, GPU health, switches, ...) is a playbook that measures and records its raw
measurements on localhost in the fact ``pod_stages`` under its name (``pod_stages.nccl = {...}``), plus one
:class:`Stage` entry here that says how to turn those measurements into :class:`CheckResult` objects and,
optionally, what the report shows for it. ``pod_report_write`` calls :func:`evaluate_stages`; the report
renderers call :func:`markdown_sections` and :func:`html_sections`.

Adding a stage: write ``module_utils/<stage>_eval.py`` with ``evaluate(measurements, expectations,
context) -> List[CheckResult]`` (and ``markdown``/``html`` if the report shows more than the check rows),
then add one line to :func:`registry`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# The stages' evaluators are imported at module scope: Mitogen's module finder ships only the imports it sees
# there (mitogen.imports.codeobj_imports ignores function-local ones), so an import inside registry() made
# pod_report_write fail under the mitogen_linear strategy (docs/benchmarks.md).
from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift import eval as drift_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import eval as nccl_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import eval as slurm_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import eval as switch_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import eval as training_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE, CheckResult,
                                                                                  Subject, apply_simulated_policy)

Evaluate = Callable[[Dict[str, Any], Dict[str, Any], Dict[str, Any]], List[CheckResult]]
Section = Callable[[Dict[str, Any]], List[str]]


@dataclass(frozen=True)
class Stage:
    """``name``: the key under ``pod_stages`` and under results.json ``measurements``; ``tag``: the
    validate.yml tag that selects it; ``title``: for the report."""

    name: str
    tag: str
    title: str
    evaluate: Evaluate
    markdown: Optional[Section] = None
    html: Optional[Section] = None


def registry() -> List[Stage]:
    """Every stage, in report order."""
    stages: List[Stage] = [
        Stage("gpu", "gpu", "GPU and node health", gpu_eval.evaluate, gpu_eval.markdown, gpu_eval.html),
        Stage("drift", "drift", "drift", drift_eval.evaluate, drift_eval.markdown, drift_eval.html),
        Stage("switches", "switches", "switch", switch_eval.evaluate, switch_eval.markdown, switch_eval.html_section),
        Stage("nccl", "nccl", "NCCL", nccl_eval.evaluate, nccl_eval.markdown, nccl_eval.html),
        Stage("training", "training", "training", training_eval.evaluate, training_eval.markdown, training_eval.html),
        Stage("slurm", "slurm", "Slurm", slurm_eval.evaluate, slurm_eval.markdown, slurm_eval.html),
    ]
    return stages


def _selected(tag: Optional[str], run_tags: Sequence[str], skip_tags: Sequence[str]) -> bool:
    if tag is None:
        return True
    run = set(run_tags or ["all"])
    return ("all" in run or tag in run) and tag not in set(skip_tags or [])


def resolve_missing(checks: Sequence[Dict[str, Any]], run_tags: Sequence[str] = ("all",),
                    skip_tags: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """Per-host results the report role found missing (``{check, host, tag, missing: true}``, from
    roles/pod_report/templates/collect.j2) become ``skipped`` when this run's tags left the check out and
    ``error`` otherwise (the host was unreachable or failed before the check ran). Others pass through."""
    out = []
    for c in checks:
        if c.get("missing"):
            if _selected(c.get("tag"), run_tags, skip_tags):
                c = CheckResult(c["check"], c["host"], "error", reason="no result: the host was unreachable or "
                                "failed before this check ran", unreachable=True, subject=Subject(node=c["host"]),
                                category=NODE_STATE).to_dict()
            else:
                c = CheckResult(c["check"], c["host"], "skipped",
                                reason="not selected by this run's --tags/--skip-tags", subject=Subject(node=c["host"]),
                                category=NODE_STATE).to_dict()
        out.append(c)
    return out


def evaluate_stages(recorded: Dict[str, Any], expectations: Dict[str, Any], context: Dict[str, Any],
                    run_tags: Sequence[str] = ("all",), skip_tags: Sequence[str] = (),
                    stages: Optional[List[Stage]] = None) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """(check dicts, measurements) for every registered stage.

    A stage that recorded measurements is evaluated (then the simulated policy is applied once, from
    ``context['simulated']``). A stage that recorded nothing is ``skipped`` when this run's tags left it
    out, and ``error`` when it was selected (it failed before it could record: the play output says why).
    A stage whose evaluation raises is ``error`` with the exception, never a silent pass. Those rows of the
    registry's own are about the pod (POD_STATE); every result carries ``stage``, the stage's name."""
    checks: List[Dict[str, Any]] = []
    measurements: Dict[str, Any] = {}
    simulated = bool(context.get("simulated"))
    for stage in registry() if stages is None else stages:
        data = (recorded or {}).get(stage.name)
        if data is None:
            if _selected(stage.tag, run_tags, skip_tags):
                results = [CheckResult(stage.name, "pod", "error",
                                       reason="the %s stage recorded no measurements: it failed or was "
                                              "interrupted before the end (see the play output)" % stage.title,
                                       subject=Subject(), category=POD_STATE)]
            else:
                results = [CheckResult(stage.name, "pod", "skipped",
                                       reason="not selected by this run's --tags/--skip-tags", subject=Subject(),
                                       category=POD_STATE)]
        else:
            measurements[stage.name] = data
            try:
                results = stage.evaluate(data, expectations, context)
            except Exception as exc:  # noqa: BLE001 - an evaluator bug must show as error, never as pass
                results = [CheckResult(stage.name, "pod", "error",
                                       reason="evaluating the %s measurements failed: %s: %s"
                                              % (stage.title, type(exc).__name__, exc),
                                       subject=Subject(), category=POD_STATE)]
        checks += [r.but(stage=stage.name).to_dict() for r in apply_simulated_policy(results, simulated)]
    return checks, measurements


def _sections(doc: Dict[str, Any], which: str) -> List[str]:
    out: List[str] = []
    present = doc.get("measurements") or {}
    for stage in registry():
        render = getattr(stage, which)
        if render is not None and stage.name in present:
            out += render(doc)
    return out


def markdown_sections(doc: Dict[str, Any]) -> List[str]:
    """Markdown lines every stage with measurements adds to report.md."""
    return _sections(doc, "markdown")


def html_sections(doc: Dict[str, Any]) -> List[str]:
    """HTML fragments every stage with measurements adds to report.html."""
    return _sections(doc, "html")
