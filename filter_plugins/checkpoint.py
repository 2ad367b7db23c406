# -*- coding: utf-8 -*-
"""Filters of the checkpoint stage (playbooks/validate_checkpoint.yml): thin, the verdicts are
module_utils/storage/ckpt_eval.py's."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import rank_data_dir

KEEP = ("ranks", "timed_out", "start_slack", "seconds")


def pod_checkpoint_rank_dir(rank: int, mount_paths: Sequence[str]) -> str:
    """The data mount rank ``rank`` works through: ``mount_paths[rank mod N]`` (004's round robin, as the training
    job reads: module_utils/storage/nfs_plan.rank_data_dir), with the pod model's words when there is none."""
    if not mount_paths:
        raise ValueError("pod_checkpoint_rank_dir: the DGX has no data mounts in the pod model")
    return str(rank_data_dir(rank, list(mount_paths)))


def _answer(res: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    if not res or res.get("skipped"):
        return None
    if res.get("failed") and not res.get("ranks"):
        return {"ranks": [], "error": str(res.get("msg") or "the module failed")}
    return {k: res.get(k) for k in KEEP}


def pod_checkpoint_record(hosts: Sequence[str], hostvars: Mapping[str, Any]) -> Dict[str, Any]:
    """{DGX: {write, read, metadata, cleanup_error} or None (no reading: it did not answer)} from each DGX's
    registered results. A phase the module failed in keeps its message as a rank-less answer with ``error``."""
    out: Dict[str, Any] = {}
    for h in hosts:
        hv = hostvars.get(h) or {}
        write = hv.get("pod_checkpoint_write")
        if not write or write.get("unreachable"):
            out[h] = None
            continue
        if write.get("failed") and not write.get("ranks"):
            out[h] = {"error": "the checkpoint write did not run: %s" % (write.get("msg") or "the module failed")}
            continue
        clean = hv.get("pod_checkpoint_cleanup") or {}
        out[h] = {"write": _answer(write), "read": _answer(hv.get("pod_checkpoint_read")),
                  "metadata": _answer(hv.get("pod_checkpoint_meta")),
                  "cleanup_error": str(clean.get("msg")) if clean.get("failed") else None}
    return out


class FilterModule:
    def filters(self) -> Dict[str, Any]:
        return {"pod_checkpoint_rank_dir": pod_checkpoint_rank_dir, "pod_checkpoint_record": pod_checkpoint_record}


__all__: List[str] = ["pod_checkpoint_rank_dir", "pod_checkpoint_record"]
