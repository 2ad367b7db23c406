# -*- coding: utf-8 -*-
"""Parser for DCGM's ``dcgmi diag -r N -j`` (JSON), the GPU stage's diagnostic (pure function, stdlib only).

The nvidia-smi, lspci and /proc/modules parsers of the same stage are in module_utils/gpu/parse.py; this one
raises the same :class:`gpu_parse.GpuParseError` (naming the tool, the line and what was expected) and refuses
a tool error printed instead of the output the same way. Tested against real captures
(tests/unit/fixtures/gpu/dcgmi_diag_*.json, provenance in docs/hardware-facts.md).
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List

from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.parse import GpuParseError, refuse_failure

_PASS = {"pass": "pass", "fail": "fail", "warn": "warn", "warning": "warn", "skip": "skip", "skipped": "skip",
         "not run": "skip"}


def parse_dcgmi_diag(text: str) -> Dict[str, Any]:
    """``dcgmi diag -r N -j`` -> {version, tests: [{category, name, results: [{gpus, failing, status, warnings,
    info}]}]}.

    Layout: ``{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results":
    [{"gpu_ids", "status", "warnings", "info"}]}]}]}}``, in two forms:

    - what ``dcgmi diag -j`` of DCGM 2.x/3.x prints (dcgmi/Diag.cpp ``HelperJsonBuildOutput``): the
      Deployment tests have ONE result for all GPUs and no ``gpu_ids``; ``warnings`` and ``info`` are plain
      strings; status ``Pass | Fail | Skip``; 3.x adds ``version`` next to the root key;
    - the NVVS JSON (``nvvs -j``; DCGM 3.1 captures): Deployment ``gpu_ids`` lists every GPU ("0,1,...,7"),
      ``warnings`` is a list of ``{warning, error_id}``, ``info`` a list; ``null`` entries between tests;
    - ``dcgmi diag -j`` of DCGM 3.2/3.3 (dcgmi/Diag.cpp at DCGM 3.3.9): a per-GPU result names its GPU in
      ``gpu_id`` (one id), a Deployment result carries the ``gpu_id`` of its error (-1: none) and its warning
      objects hold the text under ``warnings``, not ``warning``;
    - DCGM 4.x (dcgmi/Diag.cpp ``HelperJsonBuildOutput``, NvvsJsonStrings.h): the root key is ``DCGM
      Diagnostic``, a result names its entity (``entity_group`` "GPU", ``entity_id``), each test has a
      ``test_summary`` {status, warnings} and the version is ``metadata.version``. A test whose summary failed
      or warned while none of its per-entity results did gets the summary as one more result (the errors DCGM
      tied to no entity); a test with only a summary gets it as its result. Results of another entity group
      (a CPU) keep ``gpus`` "" and ``entity`` "CPU 0".

    ``{"DCGM [GPU ]Diagnostic": {"runtime_error": "..."}}`` (what dcgmi -j prints when the diagnostic could not
    run) is refused with DCGM's message.

    A Deployment test covers every GPU, so its ``gpu_ids`` (or their absence) does not say which GPU failed:
    DCGM names it in the message ("Pending page retirements together with a DBE were detected on GPU 2.").
    ``failing`` is therefore the GPU(s) a failed/warned result is about: its single ``gpu_ids`` entry, else the
    GPUs its warnings name, else its ``gpu_ids`` as printed ("" when DCGM gave none); ``None`` for a passed or
    skipped result. Lines before the JSON (warnings dcgmi prints) are skipped. Status is lower-cased to
    pass | fail | warn | skip. Warnings keep DCGM's own text (with `` (DCGM error N)`` when it gave an id)."""
    tool = "dcgmi diag -j"
    start = text.find("{") if isinstance(text, str) else -1
    if start < 0:
        refuse_failure(tool, text)
        raise GpuParseError(tool, "expected a JSON document", 1, (text.splitlines() or [""])[0])
    try:
        doc = json.loads(text[start:])
    except ValueError as exc:
        line = text[:start].count("\n") + getattr(exc, "lineno", 1)
        raise GpuParseError(tool, "not valid JSON (%s)" % exc, line) from None
    root = None
    if isinstance(doc, dict):
        root = next((doc[k] for k in _ROOT_KEYS if k in doc), None)
    if isinstance(root, dict) and root.get("runtime_error"):
        raise GpuParseError(tool, "the tool reported an error instead of its output: %r" % root["runtime_error"])
    if not isinstance(root, dict) or not isinstance(root.get("test_categories"), list):
        raise GpuParseError(tool, "expected {\"DCGM GPU Diagnostic\" (DCGM 2.x/3.x) or \"DCGM Diagnostic\" (4.x): "
                            "{\"test_categories\": [...]}}")
    tests = []
    for cat in root["test_categories"]:
        if not isinstance(cat, dict):
            continue
        for test in cat.get("tests") or []:
            if test is None:
                continue
            if not isinstance(test, dict) or "name" not in test:
                raise GpuParseError(tool, "a test in category %r has no name" % cat.get("category"))
            results = []
            for r in test.get("results") or []:
                results.append(_result(tool, test["name"], r))
            summary = test.get("test_summary")
            if summary is not None:
                s = _result(tool, test["name"], summary)
                if not results or (s["status"] in ("fail", "warn")
                                   and not any(x["status"] in ("fail", "warn") for x in results)):
                    results.append(s)
            tests.append({"category": cat.get("category"), "name": test["name"], "results": results})
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    version = next((v for v in (doc.get("version"), root.get("version"), meta.get("version")) if v is not None), None)
    return {"version": version, "tests": tests}


_ROOT_KEYS = ("DCGM GPU Diagnostic", "DCGM Diagnostic")  # DCGM 2.x/3.x, 4.x (NvvsJsonStrings.h NVVS_NAME)


def _result(tool: str, test: str, r: Any) -> Dict[str, Any]:
    """One result (or a DCGM 4 test_summary) of a test -> {gpus, status, failing, warnings, info[, entity]}."""
    if not isinstance(r, dict):
        raise GpuParseError(tool, "test %r: a result is not an object: %r" % (test, r))
    status = str(r.get("status", "")).strip().lower()
    if status not in _PASS:
        raise GpuParseError(tool, "test %r: unknown status %r" % (test, r.get("status")))
    warnings = []
    for w in _as_list(r.get("warnings")):
        if isinstance(w, dict):
            text = w.get("warning") if w.get("warning") is not None else w.get("warnings")  # 3.3: "warnings"
            warnings.append(("%s (DCGM error %s)" % (text, w["error_id"]))
                            if w.get("error_id") is not None else str(text))
        else:
            warnings.append(str(w))
    out: Dict[str, Any] = {}
    if r.get("gpu_ids") is not None:
        gpus = str(r["gpu_ids"])
    elif r.get("gpu_id") is not None:  # 3.2/3.3 dcgmi; a Deployment error not about one GPU has -1
        gpus = "" if str(r["gpu_id"]).strip().startswith("-") else str(r["gpu_id"]).strip()
    elif r.get("entity_id") is not None:  # 4.x
        group = str(r.get("entity_group") or "GPU")
        gpus = str(r["entity_id"]) if group.upper() == "GPU" else ""
        if group.upper() != "GPU":
            out["entity"] = "%s %s" % (group, r["entity_id"])
    else:
        gpus = ""
    out.update({"gpus": gpus, "status": _PASS[status],
                "failing": _failing_gpus(gpus, warnings) if _PASS[status] in ("fail", "warn") else None,
                "warnings": warnings, "info": [str(i) for i in _as_list(r.get("info"))]})
    return {k: out[k] for k in ("gpus", "status", "failing", "warnings", "info", "entity") if k in out}


def _as_list(value: Any) -> List[Any]:
    """dcgmi prints ``warnings``/``info`` as one string, NVVS as a list; absent or empty is []."""
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, list) else [value]


# DCGM's messages name a GPU as "GPU 2", "GPU: 2", "gpuId 2" or "GPUs 2, 5" (dcgm_errors.h formats).
_GPU_IN_MESSAGE = re.compile(r"\b(?:GPU|gpuId)s?:?\s+(\d+(?:\s*,\s*\d+)*)")


def _failing_gpus(gpu_ids: str, warnings: List[str]) -> str:
    """The GPU(s) a failed result is about, as "2" or "2,5" (see parse_dcgmi_diag)."""
    ids = [g.strip() for g in gpu_ids.split(",") if g.strip()]
    if len(ids) == 1:
        return ids[0]
    named: List[int] = []
    for w in warnings:
        for m in _GPU_IN_MESSAGE.finditer(w):
            named += [int(g) for g in re.split(r"\s*,\s*", m.group(1))]
    named = sorted(set(n for n in named if not ids or str(n) in ids))
    return ",".join(str(n) for n in named) if named else ",".join(ids)
