# -*- coding: utf-8 -*-
"""Filters of the training stage (roles/pod_training)."""
from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training.user_dataset import (UserDatasetError,
                                                                                          check_path, manifest_name)


def pod_training_target(hv, pod, connect="name"):
    """One DGX as pod_train's hosts entry: node, connect (its inventory name, or its primary NIC's address
    with connect='address', as the MPI containers reach each other), hostname (what its ranks report)."""
    node = hv["inventory_hostname"]
    nic = Pod.of_one_host(pod, hv.get("nics") or [], node).primary_nic(node)
    return {"node": node, "connect": node if connect == "name" or nic is None else nic.address,
            "hostname": ((hv.get("pod_training_hostname") or {}).get("stdout") or node).strip()}


def pod_training_mount_map(hostvars, hosts, fact="pod_training_mounts"):
    """node -> {data mount path: {ip, storage_host, storage_nic, fabric}} from each DGX's plan (the fact ``fact``
    holding its data mounts: the training role's, or the checkpoint stage's)."""
    return {h: {m["path"]: {k: m.get(k) for k in ("ip", "storage_host", "storage_nic", "fabric")}
                for m in hostvars[h].get(fact) or []} for h in hosts}


def pod_training_user_path(path):
    """pod_training_dataset_path checked: relative to the data mounts, no '..' (a clear error otherwise)."""
    try:
        return check_path(path)
    except UserDatasetError as exc:
        raise AnsibleFilterError(str(exc)) from None


def pod_training_list_name(path):
    """The file-list name of a user dataset in the toolkit's own list directory on the shared storage."""
    try:
        return manifest_name(path)
    except UserDatasetError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"pod_training_target": pod_training_target, "pod_training_mount_map": pod_training_mount_map,
                "pod_training_user_path": pod_training_user_path, "pod_training_list_name": pod_training_list_name}
