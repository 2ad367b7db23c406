# -*- coding: utf-8 -*-
"""The results document (results.json, docs/results.md) of a validation run: every registered stage's record
evaluated (report/stages.py), the pod's RA sizing, the run profile. Pure. The root-cause findings are added after
(report/findings.py with_findings), the four report files rendered from it (report/render.py)."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import model_from_hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import counts
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_eval import sizing

NOTICE = "SIMULATED POD: numbers from the pod-in-a-box, never compared with the RA's hardware figures"


# what of the model a run's measurements do not depend on: the judgement (pod.validation: expectations, workload,
# dataset - a changed threshold or regression tolerance is not a changed pod) and how the controller reaches a host
DIGEST_LEFT_OUT = ("validation",)
HOST_VARS_LEFT_OUT = ("ansible_host",)
PART_DIGEST_CHARS = 16  # model_parts: enough to tell a changed host, short for a pod of a thousand


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_digests(model_vars: Mapping[str, Any]) -> Dict[str, Any]:
    """``model_digest`` ("sha256:<hex>") and ``model_parts`` ({"pod": <hex>, "hosts": {host: <hex>}}, 16 hex digits
    each) of the pod model, for telling a run of another model from a run of this one (report/baseline.py): the model
    from ``model_vars`` ({host: {group_names, pod, nics, dgx_model, gpus, storage_node, switch, ...}}, the filter
    ``pod_model_vars``) as pod/types.model_from_hostvars reads it, without ``pod.validation`` and each host's
    ``ansible_host`` (:data:`DIGEST_LEFT_OUT`). Keys in any order digest alike; a list's order counts (a host's
    NICs)."""
    model = model_from_hostvars({h: dict(v or {}) for h, v in model_vars.items()})
    pod = {k: v for k, v in (model.get("pod") or {}).items() if k not in DIGEST_LEFT_OUT}
    hosts = {h: {"groups": sorted(e["groups"]),
                 "vars": {k: v for k, v in e["vars"].items() if k not in HOST_VARS_LEFT_OUT}}
             for h, e in model["hosts"].items()}
    return {"model_digest": "sha256:" + _digest({"pod": pod, "hosts": hosts}),
            "model_parts": {"pod": _digest(pod)[:PART_DIGEST_CHARS],
                            "hosts": {h: _digest(e)[:PART_DIGEST_CHARS] for h, e in sorted(hosts.items())}}}


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
    """The results document from ``base`` (pod, ra_profile, simulated, finished, and model_digest, model_parts when
    given - :func:`model_digests`: roles/pod_report), the pod's
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
    for key in ("model_digest", "model_parts"):  # which pod model the run measured (report/baseline.py)
        if base.get(key):
            doc[key] = base[key]
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
