# -*- coding: utf-8 -*-
"""The registry of every validation stage (docs/architecture.md): each check of the report is decided here.

A stage (identity, network, storage mounts, containers, iperf3, fio, GPU health, drift, switches, NCCL, training,
Slurm) is a playbook that measures and records its raw readings on localhost in the fact ``pod_stages`` under its
name (``pod_stages.nccl = {...}``, playbooks/tasks/record_stage.yml), plus one
:class:`Stage` entry here that says how to turn those measurements into :class:`CheckResult` objects and,
optionally, what the report shows for it. ``pod_report_write`` calls :func:`evaluate_stages`; the report
renderers call :func:`markdown_sections` and :func:`html_sections`.

Adding a stage: write ``module_utils/<concern>/eval.py`` with ``evaluate(recorded, expectations,
context) -> List[CheckResult]`` (every result with its subject and category; and ``markdown``/``html`` if the
report shows more than the check rows), then add one line to :func:`registry`. A host the record lists without a
reading is the evaluator's ``error`` naming it (result.check.no_result).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

# The stages' evaluators are imported at module scope: Mitogen's module finder ships only the imports it sees
# there (mitogen.imports.codeobj_imports ignores function-local ones), so an import inside registry() made
# pod_report_write fail under the mitogen_linear strategy (docs/benchmarks.md).
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import eval as containers_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift import eval as drift_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import eval as nccl_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import counters_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import eval as network_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_stage
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import rdma_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import eval as node_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf import iperf_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import eval as slurm_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import ckpt_eval, fio_eval, fio_report, nfs_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import eval as switch_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import eval as training_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (POD_STATE, CheckResult, Subject,
                                                                                  apply_simulated_policy)

Evaluate = Callable[[Dict[str, Any], Dict[str, Any], Dict[str, Any]], List[CheckResult]]
Section = Callable[[Dict[str, Any]], List[str]]


@dataclass(frozen=True)
class Stage:
    """``name``: the key under ``pod_stages`` and under results.json ``measurements``; ``tag``: the
    validate.yml tag that selects it, or the tags (a tuple) of which any selects it and any skips it, as Ansible
    decides for a play with those tags; ``title``: for the report."""

    name: str
    tag: Union[str, Tuple[str, ...]]
    title: str
    evaluate: Evaluate
    markdown: Optional[Section] = None
    html: Optional[Section] = None


def registry() -> List[Stage]:
    """Every stage, in report order."""
    stages: List[Stage] = [
        Stage("identity", "identity", "identity", network_eval.evaluate_identity),
        Stage("network", "network", "network state", network_eval.evaluate_network),
        Stage("nfs_mounts", "storage", "storage mounts", nfs_eval.evaluate),
        Stage("containers", "containers", "MPI containers", containers_eval.evaluate),
        Stage("iperf", ("network", "iperf"), "iperf3", iperf_eval.evaluate, None, iperf_eval.html),
        Stage("rdma", "rdma", "RDMA per rail", rdma_eval.evaluate, rdma_eval.markdown),
        Stage("fio", ("storage", "fio"), "fio", fio_eval.evaluate, fio_report.markdown, fio_report.html),
        Stage("gpu", "gpu", "GPU and node health", gpu_eval.evaluate, gpu_eval.markdown, gpu_eval.html),
        Stage("node", "node", "node health", node_eval.evaluate, node_eval.markdown, node_eval.html),
        Stage("drift", "drift", "drift", drift_eval.evaluate, drift_eval.markdown, drift_eval.html),
        Stage("switches", "switches", "switch", switch_eval.evaluate, switch_eval.markdown, switch_eval.html_section),
        Stage("ib", "ib", "InfiniBand fabric", ib_stage.evaluate),
        Stage("nccl", "nccl", "NCCL", nccl_eval.evaluate, nccl_eval.markdown, nccl_eval.html),
        Stage("training", "training", "training", training_eval.evaluate, training_eval.markdown, training_eval.html),
        Stage("checkpoint", "checkpoint", "checkpoint writes and metadata", ckpt_eval.evaluate, ckpt_eval.markdown),
        Stage("slurm", "slurm", "Slurm", slurm_eval.evaluate, slurm_eval.markdown, slurm_eval.html),
        Stage("hca_counters", ("counters", "network", "rdma"), "HCA port counters", counters_eval.evaluate),
    ]
    return stages


def _selected(tag: Union[None, str, Tuple[str, ...]], run_tags: Sequence[str], skip_tags: Sequence[str]) -> bool:
    if tag is None:
        return True
    tags = {tag} if isinstance(tag, str) else set(tag)
    run = set(run_tags or ["all"])
    return ("all" in run or bool(tags & run)) and not tags & set(skip_tags or [])


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
