# -*- coding: utf-8 -*-
"""Filters of the identity and network stages (module_utils/network/eval.py): a DGX's reading as the role records
it for the stage's record, and the check the deploy role asserts on (decided by the stage's own evaluator).

    pod_identity_reading: "{{ ansible_hostname | pod_identity_reading(ansible_interfaces, nics, true, true) }}"
    that: (inventory_hostname | pod_identity_result(pod_identity_reading)).status == 'pass'
"""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.eval import (identity_messages,
    identity_reading, identity_result, network_reading, network_result)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import rdma_problem_items


def pod_identity_reading(hostname, interfaces, nics, check_hostname=True, check_nics=True):
    """roles/pod_identity: what the node says (hostname, interfaces) and the model's NIC names."""
    return identity_reading(hostname, interfaces, nics, check_hostname, check_nics)


def pod_identity_result(host, reading):
    """The identity check of ``host`` from its reading (results.json form), as the identity stage decides it."""
    return identity_result(host, reading).to_dict()


def dgx_network_reading(verify_state, mesh=None, rdma_nics=None, dgx_hw=None, pfc_priority=3, names=None):
    """roles/dgx_network tasks/verify.yml: the kernel differences, the mesh's failed pings, the RDMA problems
    (``rdma_nics`` None or empty: the RDMA hardware is not managed, no problem) and the names that resolve
    elsewhere (pod_resolve's result; None: not checked)."""
    rdma = rdma_problem_items(list(rdma_nics), dgx_hw or {}, int(pfc_priority)) if rdma_nics else []
    return network_reading(verify_state, mesh, rdma, names)


def dgx_network_result(host, reading):
    """The network check of ``host`` from its reading (results.json form), as the network stage decides it."""
    return network_result(host, reading).to_dict()


class FilterModule:
    def filters(self):
        return {"pod_identity_reading": pod_identity_reading, "pod_identity_result": pod_identity_result,
                "pod_identity_problems": identity_messages, "dgx_network_reading": dgx_network_reading,
                "dgx_network_result": dgx_network_result}
