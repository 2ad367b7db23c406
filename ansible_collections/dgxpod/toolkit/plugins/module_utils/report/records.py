# -*- coding: utf-8 -*-
"""How a validation stage's playbook shapes what it read into its record (``pod_stages.<stage>``, recorded by
playbooks/tasks/record_stage.yml; filter_plugins/stages.py). Pure.

- :func:`host_readings`: ``{host: its reading, or None}`` for every host a stage should have read, from one
  per-host fact - a host without it (unreachable, or its play failed before the check ran) stays in the record
  as ``None``, which the stage's evaluator reports as an ``error`` naming it (result.check.no_result).
- :func:`read_record`: what a registered read-only task gave, or its error.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence


def host_readings(hosts: Sequence[str], hostvars: Mapping[str, Any], fact: str) -> Dict[str, Any]:
    """{host: hostvars[host][fact] or None} for every host of ``hosts``, in their order."""
    out: Dict[str, Any] = {}
    for host in hosts:
        hv = hostvars[host] if host in hostvars else {}
        out[host] = hv[fact] if fact in hv else None
    return out


def read_record(result: Optional[Mapping[str, Any]], key: str = "nodes") -> Dict[str, Any]:
    """What a registered read-only task gave, for a stage record that its evaluator decides (e.g.
    pod_stages.slurm, module_utils/slurm/eval.py): ``{key: the reading, error: None, unreachable: False}``, or,
    when the task failed or its host was unreachable, ``{key: None, error: its message ('failed' without one),
    unreachable: ...}``."""
    result = result or {}
    unreachable = bool(result.get("unreachable", False))
    if result.get("failed", False) or unreachable:
        return {key: None, "error": result.get("msg", "failed"), "unreachable": unreachable}
    return {key: result.get(key), "error": None, "unreachable": False}
