# -*- coding: utf-8 -*-
"""Filters for Slurm as the pod's scheduler (roles/slurm, playbooks/slurm_drain.yml; docs/slurm.md)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from pod_types import Pod  # noqa: E402
from slurm_conf import render_all  # noqa: E402
from slurm_drain import drain_plan  # noqa: E402
from slurm_parse import parse_slurmd_c  # noqa: E402


def slurm_conf_files(pod, hostvars, groups, reported=None, gpu_device_prefix="/dev/nvidia", overrides=None):
    """{"slurm.conf": text, "gres.conf": text} (module_utils/slurm_conf.py) for the DGX of ``groups``.

    ``reported``: {node: ``slurmd -C`` stdout}; a node's own report wins over the DGX model's catalogue."""
    members = list(groups.get("dgx", []))
    typed = Pod.from_hostvars({h: hostvars[h] for h in members}, groups, pod)
    parsed = {n: parse_slurmd_c(text) for n, text in (reported or {}).items() if text}
    return render_all(typed, parsed, gpu_device_prefix or "/dev/nvidia", overrides or {})


def slurm_drain_plan(results, dgx, max_fraction=0.5):
    """{drain: [{node, reason, finding}], skipped: [...], refused} from a results.json document."""
    return drain_plan(results or {}, list(dgx or []), float(max_fraction))


class FilterModule:
    def filters(self):
        return {"slurm_conf_files": slurm_conf_files, "slurm_drain_plan": slurm_drain_plan}
