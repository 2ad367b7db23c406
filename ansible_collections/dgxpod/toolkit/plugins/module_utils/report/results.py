# -*- coding: utf-8 -*-
"""The results document (results.json, docs/results.md) of a validation run: every registered stage's record
evaluated (report/stages.py), the pod's RA sizing, the run profile. Pure. The root-cause findings are added after
(report/findings.py with_findings), the four report files rendered from it (report/render.py)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import counts
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_eval import sizing

NOTICE = "SIMULATED POD: numbers from the pod-in-a-box, never compared with the RA's hardware figures"


def pod_sizing(context: Dict[str, Any], expectations: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The RA's sizing for this pod (storage/fio_eval.sizing) from the context's ``sizing`` inputs (gpus, dgx,
    storage_nodes, workload, dataset_tb, caches_tb), or None when the context has none."""
    si = context.get("sizing")
    if not si:
        return None
    return sizing(int(si.get("gpus") or 0), int(si.get("dgx") or 0), int(si.get("storage_nodes") or 0),
                  expectations, si.get("workload"), si.get("dataset_tb"), si.get("caches_tb"))


def build_results(base: Dict[str, Any], context: Optional[Dict[str, Any]], expectations: Dict[str, Any],
                  stages: Optional[Dict[str, Any]] = None, run_tags: Sequence[str] = ("all",),
                  skip_tags: Sequence[str] = ()) -> Dict[str, Any]:
    """The results document from ``base`` (pod, ra_profile, simulated, finished: roles/pod_report), the pod's
    ``context`` (what the stages' evaluators need from the model: ``nodes`` {host: {storage_link_gbps, mounts,
    gpus}}, ``storage`` {nodes, link_gbps}, ``sizing`` {gpus, dgx, storage_nodes, workload, dataset_tb, caches_tb};
    the pod_perf_context filter) and ``stages`` ({stage name: its record}, the localhost fact pod_stages), every
    stage evaluated by the registry; run_tags/skip_tags tell a stage left out by --tags (skipped) from one that
    failed before it recorded anything (error). ``run``: the run profile a stage's record names (iperf3, fio)."""
    simulated = bool(base.get("simulated"))
    context = context or {}
    doc: Dict[str, Any] = {}
    if simulated:  # first key, so the file's second line says it
        doc["notice"] = NOTICE
    doc["schema_version"] = 3
    for key in ("pod", "ra_profile", "simulated", "finished"):
        doc[key] = base.get(key)
    size = pod_sizing(context, expectations)
    if size is not None:
        doc["sizing"] = size
    evaluation = {"simulated": simulated, "pod": base.get("pod"), "sizing": size,
                  "nodes": context.get("nodes") or {}, "storage": context.get("storage") or {}}
    checks, measurements = evaluate_stages(stages or {}, expectations, evaluation, run_tags, skip_tags)
    doc["summary"] = counts(checks)
    doc["checks"] = checks
    run = next((r["run"] for r in measurements.values() if isinstance(r, dict) and r.get("run")), None)
    if run:
        doc["run"] = run
    if measurements:
        doc["measurements"] = measurements
    if size is not None or measurements:
        doc["expectations"] = expectations
    return doc
