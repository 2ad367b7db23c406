# -*- coding: utf-8 -*-
"""Filters for the switch side of the pod model (docs/switches.md).

    {{ groups['all'] | pod_model_vars(hostvars) | switch_structured(inventory_hostname, options) }}
    {{ structured | switch_render }}
"""
from __future__ import annotations


from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import model_from_hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import structured_config
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.record import (switch_config_summary,
    switch_validation_record)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render


def switch_structured(model_vars, switch, options=None):
    """Structured config of ``switch`` from ``pod_model_vars`` output ({host: {group_names, model vars}})."""
    return structured_config(model_from_hostvars(dict(model_vars)), switch, dict(options or {}))


def switch_render(structured):
    """Configuration text of a structured switch config, rendered with its platform's template."""
    return render(dict(structured))


def switch_lossless_expect(structured):
    """What the lossless check expects: {pfc_priority, ports} - or {} when nothing on the switch is lossless."""
    qos = (structured or {}).get("qos")
    if not qos:
        return {}
    ports = [i["name"] for i in structured.get("interfaces") or [] if i.get("qos")]
    return {"pfc_priority": qos["pfc_priority"], "ports": ports if structured.get("platform") == "eos" else []}


class FilterModule:
    def filters(self):
        return {"switch_structured": switch_structured, "switch_render": switch_render,
                "switch_lossless_expect": switch_lossless_expect, "switch_config_summary": switch_config_summary,
                "switch_validation_record": switch_validation_record}
