# -*- coding: utf-8 -*-
"""Filters for the GPU and node health stage (playbooks/validate_gpu.yml)."""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS, dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_plan import dcgm_timeout


def gpu_stage_record(dgx_hosts, hostvars, level, result_var="gpu_health_read"):
    """pod_stages.gpu from every DGX's registered dgx_gpu_health result: {level, nodes: {host: {status,
    reason, dgx_model, facts}}}. A DGX without a result (unreachable, or the play failed before the module
    ran) and one whose module failed are recorded as ``error`` with the reason, never left out."""
    nodes = {}
    for host in dgx_hosts:
        hv = hostvars[host]
        res = hv.get(result_var)
        model = hv.get("dgx_model")
        if res is None:
            nodes[host] = {"status": "error", "dgx_model": model, "unreachable": True,
                           "reason": "no result: the DGX was unreachable or its play failed before the health "
                                     "module ran"}
        elif res.get("unreachable"):
            nodes[host] = {"status": "error", "dgx_model": model, "unreachable": True,
                           "reason": "unreachable: %s" % (res.get("msg") or "")}
        elif res.get("failed") or "dgx_gpu" not in res:
            nodes[host] = {"status": "error", "dgx_model": model,
                           "reason": "dgx_gpu_health failed: %s" % (res.get("msg") or res.get("module_stderr") or "")}
        else:
            nodes[host] = {"status": "ok", "dgx_model": model, "facts": res["dgx_gpu"]}
    return {"level": int(level), "nodes": nodes}


DEFAULT_LEVELS = {"quick": 1, "full": 3}


def gpu_dcgm_level(ra_profile, run_profile, override=None):
    """The dcgmi diag level: ``override`` (-e gpu_dcgm_level), else the RA profile's
    perf_runs.<run_profile>.gpu.dcgm_level, else 1 for quick and 3 for full (DCGM docs: r1 quick, r3 long; level 4,
    "extra long", 1-2 hours, is selectable the same ways)."""
    if override not in (None, ""):
        return int(override)
    run = ((ra_profile or {}).get("perf_runs") or {}).get(run_profile) or {}
    level = (run.get("gpu") or {}).get("dcgm_level")
    return int(level if level is not None else DEFAULT_LEVELS.get(run_profile, 1))


def gpu_dcgm_timeout(level, model=None, override=None):
    """Seconds ``dcgmi diag -r <level>`` may run on a DGX of ``model`` (``dgx_model``): ``override``
    (-e gpu_dcgm_timeout) when given, else module_utils/gpu/dcgm_plan.py ``dcgm_timeout`` from DCGM's documented
    duration of the level, scaled by the model's GPU count (the hardware catalogue). An unknown model is sized for
    the catalogue's largest GPU count, so it is never cut short."""
    if override not in (None, ""):
        return int(override)
    m = dgx_model(model)
    gpus = m.gpus if m is not None else max(x.gpus for x in DGX_MODELS.values())
    return dcgm_timeout(level, gpus)


def gpu_nvswitch(model):
    """Whether a DGX of ``dgx_model`` joins its GPUs through NVSwitches (so nvidia-fabricmanager must run): the
    hardware catalogue's answer (module_utils/catalog/dgx.py), False for an unknown model."""
    m = dgx_model(model)
    return bool(m is not None and m.nvswitch)


class FilterModule:
    def filters(self):
        return {"gpu_stage_record": gpu_stage_record, "gpu_dcgm_level": gpu_dcgm_level,
                "gpu_dcgm_timeout": gpu_dcgm_timeout, "gpu_nvswitch": gpu_nvswitch}
