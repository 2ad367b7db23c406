# -*- coding: utf-8 -*-
"""What the switch role keeps for the report, from what its modules returned (filter_plugins/switch.py). Pure.

- :func:`switch_validation_record`: one switch's entry of ``pod_stages.switches`` (roles/switch_config
  tasks/validate.yml; evaluated by module_utils/switch/eval.py).
- :func:`switch_config_summary`: the deploy's record of one switch after switch_config pushed (the fact
  ``switch_config_summary``).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping

# what switch_validate returns that the switch stage evaluates (module_utils/switch/eval.py)
SWITCH_READINGS = ("drift", "port_config", "lossless", "status", "lldp", "counters", "optics", "environment", "errors",
                   "timings", "platform")


def switch_validation_record(host: str, platform: str, structured: Mapping[str, Any],
                             readings: Mapping[str, Any]) -> Dict[str, Any]:
    """One switch's entry of pod_stages.switches: the model, and either the readings switch_validate returned
    (only the keys switch_eval reads, in the order it returned them) or, when the read failed, its message as
    ``error`` (switch_eval reports that switch's checks as error with it)."""
    readings = readings or {}
    out: Dict[str, Any] = {"name": host, "platform": platform, "structured": structured}
    if readings.get("failed"):
        out["error"] = readings.get("msg", "the switch_validate task failed")
    else:
        out["result"] = {k: v for k, v in readings.items() if k in SWITCH_READINGS}
    return out


def switch_config_summary(host: str, result: Mapping[str, Any]) -> Dict[str, Any]:
    """The deploy's record of one switch after switch_config pushed (``result``; the module fails the host on
    any problem, so a recorded push passed): changed, how many commands, the backup, the lossless read-back
    (``not checked`` when it was not verified)."""
    result = result or {}
    return {"check": "switch_config", "host": host, "status": "pass", "changed": result.get("changed", False),
            "commands": len(result.get("commands") or []), "backup": result.get("backup_path", ""),
            "lossless": (result.get("lossless") or {}).get("ok", "not checked")}
