# -*- coding: utf-8 -*-
"""Filters that decide the deploy roles' per-host checks (module_utils/report/host_checks.py): the roles pass in what
they read and registered, the status and the cause are decided in Python."""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.host_checks import (identity_check,
    identity_problems, mpi_containers_check, network_check, nfs_mounts_check, read_record, switch_config_summary,
    switch_validation_record)


def pod_identity_check(host, hostname, interfaces, nics, check_hostname=True, check_nics=True):
    """roles/pod_identity: ``nics`` is the host's model (nics[].name is compared with ``interfaces``)."""
    return identity_check(host, hostname, interfaces, [n["name"] for n in nics or []], check_hostname, check_nics)


class FilterModule:
    def filters(self):
        return {"pod_identity_check": pod_identity_check, "pod_identity_problems": identity_problems,
                "dgx_network_check": network_check, "nfs_mounts_check": nfs_mounts_check,
                "mpi_containers_check": mpi_containers_check, "switch_config_summary": switch_config_summary,
                "switch_validation_record": switch_validation_record, "pod_read_record": read_record}
