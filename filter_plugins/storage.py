# -*- coding: utf-8 -*-
"""Filters of the storage-mounts stage (module_utils/storage/nfs_eval.py): a DGX's reading as roles/nfs_client
records it for the stage's record.

    nfs_client_reading: "{{ nfs_client_verify_result | default(none) | nfs_mounts_reading }}"
"""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_eval import mounts_reading


def nfs_mounts_reading(verify):
    """pod_nfs_verify's result (None: it did not run) as the stage's reading of the node."""
    return mounts_reading(verify)


class FilterModule:
    def filters(self):
        return {"nfs_mounts_reading": nfs_mounts_reading}
