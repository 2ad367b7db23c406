# -*- coding: utf-8 -*-
"""Filters for Slurm as the pod's scheduler (roles/slurm, playbooks/slurm_drain.yml; docs/slurm.md)."""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_gpus  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.conf import render_all  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.drain import drain_plan  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.parse import parse_slurmd_c  # noqa: E402


def slurm_conf_files(pod, hostvars, groups, reported=None, gpu_device_prefix="/dev/nvidia", overrides=None):
    """{"slurm.conf": text, "gres.conf": text} (module_utils/slurm/conf.py) for the DGX of ``groups``.

    ``reported``: {node: ``slurmd -C`` stdout}; a node's own report wins over the DGX model's catalogue."""
    members = list(groups.get("dgx", []))
    typed = Pod.from_hostvars({h: hostvars[h] for h in members}, groups, pod)
    parsed = {n: parse_slurmd_c(text) for n, text in (reported or {}).items() if text}
    return render_all(typed, parsed, gpu_device_prefix or "/dev/nvidia", overrides or {})


def slurm_drain_plan(results, dgx, max_fraction=0.5):
    """{drain: [{node, reason, finding}], skipped: [...], refused} from a results.json document."""
    return drain_plan(results or {}, list(dgx or []), float(max_fraction))


def slurm_gpu_count(host_vars):
    """A DGX's GPU count: its ``gpus`` variable, else its ``dgx_model``'s (the hardware catalogue,
    module_utils/catalog/dgx.py), else 0."""
    host_vars = host_vars or {}
    if host_vars.get("gpus") is not None:
        return int(host_vars["gpus"])
    return int(dgx_gpus(host_vars.get("dgx_model")) or 0)


def slurm_not_ready(nodes, dgx):
    """["DGX1-2: down (Not responding)", ...]: the DGX Slurm does not know, or knows as down, invalid, failing,
    unknown or not responding (module pod_slurm's ``nodes``). A drained node is ready: someone drained it."""
    out = []
    for name in dgx or []:
        s = (nodes or {}).get(name)
        if s is None:
            out.append("%s: not a Slurm node" % name)
        elif not s.get("responding", True) or s.get("state") in ("down", "invalid", "fail", "failing", "unknown"):
            out.append("%s: %s%s%s" % (name, s.get("state"), "" if s.get("responding", True) else ", not responding",
                                       " (%s)" % s["reason"] if s.get("reason") else ""))
    return out


class FilterModule:
    def filters(self):
        return {"slurm_conf_files": slurm_conf_files, "slurm_drain_plan": slurm_drain_plan,
                "slurm_gpu_count": slurm_gpu_count, "slurm_not_ready": slurm_not_ready}
