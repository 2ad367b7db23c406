# -*- coding: utf-8 -*-
"""Preflight of the pod's scheduler (issue 20): ``pod.scheduler`` and ``pod.slurm`` against the inventory. Pure
functions, stdlib only; run by ``preflight.model.validate`` after the host, switch and storage checks."""
from __future__ import annotations

import difflib
import re
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS, dgx_gpus
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding, natural_key


_PARTITION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")
_CLUSTER_RE = re.compile(r"^[a-z0-9_][a-z0-9_-]{0,39}$")


def check_slurm(pod: Dict[str, Any], usable: Dict[str, Dict[str, Any]], host: Optional[str],
                out: List[Finding]) -> None:
    """pod.scheduler / pod.slurm (issue 20): the controller is a DGX of this inventory with an address, the
    partition and cluster names are ones Slurm accepts, every DGX's GPU count is known (its Gres=gpu:N)."""
    scheduler, slurm = pod.get("scheduler") or "none", pod.get("slurm")
    if scheduler != "slurm":
        if slurm is not None:
            out.append(Finding(host, "pod", "pod.slurm", "set, but pod.scheduler is '%s'" % scheduler,
                               "set scheduler: slurm to deploy Slurm, or remove pod.slurm", severity="warning"))
        return
    if not isinstance(slurm, dict):
        if slurm is None:
            out.append(Finding(host, "pod", "pod.slurm", "pod.scheduler is slurm but pod.slurm is not set",
                               "add slurm: {controller: <a DGX of the inventory>, partition: dgx}"))
        return
    ctl = slurm.get("controller")
    dgx = sorted((h for h, u in usable.items() if u["role"] == "dgx"), key=natural_key)
    if isinstance(ctl, str):
        if ctl not in usable:
            close = difflib.get_close_matches(ctl, dgx, n=1)
            out.append(Finding(host, "pod", "pod.slurm.controller", "'%s' is not a host in this inventory" % ctl,
                               ("did you mean '%s'?" % close[0]) if close else
                               "name the DGX that runs slurmctld (one of %s)" % ", ".join(dgx[:5])))
        elif usable[ctl]["role"] != "dgx":
            out.append(Finding(host, "pod", "pod.slurm.controller", "'%s' is in group '%s', not 'dgx'" % (
                ctl, usable[ctl]["role"]), "name a DGX (slurmctld runs beside a slurmd; the model has no "
                                          "head-node group yet)"))
        else:
            hv = usable[ctl]["vars"]
            if not hv.get("nics") and not hv.get("ansible_host"):
                out.append(Finding(ctl, "pod", "pod.slurm.controller", "'%s' has no address for SlurmctldHost "
                                   "(no NICs, no ansible_host)" % ctl, "list the host's NICs"))
    part = slurm.get("partition")
    if isinstance(part, str) and not _PARTITION_RE.match(part):
        out.append(Finding(host, "pod", "pod.slurm.partition", "'%s' is not a usable partition name" % part,
                           "use letters, digits, '_', '-', '.' (no spaces, commas or '='), e.g. dgx"))
    name = slurm.get("cluster_name")
    if isinstance(name, str) and not _CLUSTER_RE.match(name):
        out.append(Finding(host, "pod", "pod.slurm.cluster_name", "'%s' is not a usable ClusterName" % name,
                           "use up to 40 lower case letters, digits, '_', '-' (slurmdbd makes table names of it)"))
    if not dgx:
        out.append(Finding(host, "pod", "pod.scheduler", "Slurm needs DGX nodes for its partition; the "
                           "inventory has none", "add the DGX nodes to group dgx"))
    for h in dgx:
        hv = usable[h]["vars"]
        gpus = hv.get("gpus")
        if gpus is None and isinstance(hv.get("dgx_model"), str):
            gpus = dgx_gpus(hv["dgx_model"])
        if gpus is None:
            out.append(Finding(h, "gpus", "gpus", "the GPU count of this DGX is unknown, so its Slurm Gres=gpu:N "
                               "cannot be written", "set gpus: <N> or a dgx_model (one of %s)" % ", ".join(
                                   DGX_MODELS)))
        elif gpus == 0:
            out.append(Finding(h, "gpus", "gpus", "0 GPUs: the node joins the Slurm partition without Gres=gpu",
                               "set gpus to the DGX's GPU count, or leave it to dgx_model", severity="warning"))
