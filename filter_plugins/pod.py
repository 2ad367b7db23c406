# -*- coding: utf-8 -*-
"""Filters that read the pod model (docs/pod-model.md)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from pod_model import MODEL_VARS  # noqa: E402


def pod_model_vars(host_names, hostvars):
    """{host: {group_names, <model vars>}} for the given hosts - what pod_preflight needs.

    Only model keys are read, so unrelated (possibly undefined) variables are never templated."""
    out = {}
    for name in host_names:
        hv = hostvars[name]
        entry = {"group_names": list(hv.get("group_names") or [])}
        for key in MODEL_VARS:
            if key in hv:
                entry[key] = hv[key]
        out[name] = entry
    return out


class FilterModule:
    def filters(self):
        return {"pod_model_vars": pod_model_vars}
