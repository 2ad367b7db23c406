# -*- coding: utf-8 -*-
"""Filters that read the pod model (docs/pod-model.md)."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import (hosts_entries, nccl_env, nic_plan,
    ping_targets, rdma_problems)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import rdma_changes
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import MODEL_VARS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.settings_checks import SETTINGS_VARS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import merged_expectations, ra_profile
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import (FSTAB_BEGIN, FSTAB_END,
    fstab_block, mount_plan)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import pod_index
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_plan import verbs_ports


PROFILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiles")


def pod_ra_profile(pod):
    """The pod's RA profile (profiles/<pod.ra_profile>.yml, its ``profile`` mapping): the one way every role
    and stage reads it (module_utils/pod/profile.py; loaded once per run)."""
    return ra_profile(pod, PROFILES)


def pod_expectations(pod):
    """The expectations a run is judged against: the RA profile's with the pod's ``pod.validation.expectations``
    on top (module_utils/pod/profile.py merged_expectations) - what every stage's decision and the report read."""
    return merged_expectations(ra_profile(pod, PROFILES), pod)


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


def pod_settings_vars(host_names, hostvars):
    """{host: {var: value}} of the role variables preflight checks beside the model (settings_checks.SETTINGS_VARS),
    for the hosts that set them in the inventory. A value that cannot be templated is left out (its own error comes
    when a play reads it)."""
    out = {}
    for name in host_names:
        hv = hostvars[name]
        entry = {}
        for key in SETTINGS_VARS:
            if key in hv:
                try:
                    entry[key] = hv[key]
                except Exception:  # an undefined variable inside the value: not this check's to report
                    continue
        out[name] = entry
    return out


def pod_var_map(host_names, hostvars, key):
    """{host: hostvars[host][key]} for the hosts that define ``key`` in the inventory (others are left out, so the
    consumer's default applies). Used by preflight for per-host/per-switch settings that are not model keys."""
    out = {}
    for name in host_names:
        hv = hostvars[name]
        if key in hv:
            out[name] = hv[key]
    return out


def pod_scale_verbs_ports(nics, pod, port=1):
    """Spectrum Scale verbsPorts entries ['mlx5_0/1', ...]: the host's NICs with an RDMA device on InfiniBand
    fabrics that carry storage (module_utils/storage/scale_plan.verbs_ports)."""
    return verbs_ports(nics or [], (pod or {}).get("fabrics") or [], int(port))


def _whole_pod(hostvars, groups, pod) -> Pod:
    """The typed pod of the DGX and storage nodes (the only hosts these derivations read)."""
    members = list(groups.get("dgx", [])) + list(groups.get("storage", []))
    return Pod.from_hostvars({h: hostvars[h] for h in members}, groups, pod)


def pod_nic_plan(nics, pod):
    """Per-NIC configuration (cidr, netmask, mtu, gateway, kind, ...) from the model."""
    return nic_plan(Pod.of_one_host(pod, nics or []), "this-host")


def pod_hosts_entries(host_names, hostvars, groups, pod):
    """/etc/hosts entries [{address, name}] for every DGX and storage node."""
    del host_names  # the groups decide; kept so the filter reads naturally in templates
    return hosts_entries(_whole_pod(hostvars, groups, pod))


def pod_primary_nic(nics, pod):
    """The NIC a host's name resolves to (a plan entry, as pod_nic_plan gives), or None."""
    one = Pod.of_one_host(pod, nics or [])
    nic = one.primary_nic("this-host")
    return nic_plan(one, "this-host")[nic.index] if nic is not None else None


def pod_nccl_env(nics, pod, profile_env, gid_indexes=None):
    """NCCL/MPI environment variables for one DGX."""
    return nccl_env(Pod.of_one_host(pod, nics or []), "this-host", profile_env or {}, gid_indexes)


def pod_ping_targets(host, hostvars, groups, pod):
    """Full-MTU ping targets (nic, peer, address, mtu) from one DGX to every other DGX and storage node."""
    return ping_targets(_whole_pod(hostvars, groups, pod), host)


def pod_ping_target_map(host_names, hostvars, groups, pod):
    """pod_ping_targets for each of ``host_names``, from one typed pod: {host: targets}. For a task run once for
    the play (issue 19): each host's own pod_ping_targets reads every DGX's variables, so a play of N DGX read
    N x N hostvars (4.4 s of controller time for one task at 64 DGX, 2026-11-28); this reads N."""
    whole = _whole_pod(hostvars, groups, pod)
    return _each(host_names, lambda h: ping_targets(whole, h))


def _each(host_names, derive):
    """{host: derive(host)} for the hosts whose derivation succeeds. A host left out makes its own with the
    one-host filter and fails there alone with that filter's error, as it did before the map existed."""
    out = {}
    for h in host_names:
        try:
            out[h] = derive(h)
        except Exception:  # noqa: BLE001 - re-raised by the host's own derivation (see the docstring)
            continue
    return out


def pod_nfs_mount_plan(host, hostvars, groups, pod, profile_nfs=None, client="kernel", fuse_helper=""):
    """The NFS scripts + data mounts of one DGX (module_utils/storage/nfs_plan.py, docs/nfs-client.md)."""
    return mount_plan(_whole_pod(hostvars, groups, pod), host, profile_nfs or {}, client, fuse_helper or "")


def pod_nfs_mount_plans(host_names, hostvars, groups, pod, profile_nfs=None, client="kernel", fuse_helper=""):
    """pod_nfs_mount_plan for each of ``host_names`` with one client type and helper, from one typed pod:
    {'client': ..., 'fuse_helper': ..., 'plans': {host: plan}}. For a task run once for the play (issue 19; N
    hostvars read instead of N x N: 5.6 s of controller time for one task at 64 DGX, 2026-11-28). The client
    and helper it was made with are kept so that a host whose own differ makes its plan itself."""
    whole = _whole_pod(hostvars, groups, pod)
    fuse_helper = fuse_helper or ""
    return {"client": client, "fuse_helper": fuse_helper,
            "plans": _each(host_names, lambda h: mount_plan(whole, h, profile_nfs or {}, client, fuse_helper))}


def pod_nfs_host_plan(plans, host, hostvars, groups, pod, profile_nfs=None, client="kernel", fuse_helper=""):
    """``host``'s NFS plan from the play's ``plans`` (pod_nfs_mount_plans, made once) when they were made with the
    host's own client type and helper and hold it; otherwise the host's own (pod_nfs_mount_plan: a host whose client
    or helper differs, or whose plan could not be made with the others, makes it itself and fails there alone).
    roles/nfs_client (tasks/plan.yml) and roles/pod_training pick a DGX's plan with it."""
    plans = plans or {}
    fuse_helper = fuse_helper or ""
    if (host in (plans.get("plans") or {}) and plans.get("client") == client
            and (plans.get("fuse_helper") or "") == fuse_helper):
        return plans["plans"][host]
    return pod_nfs_mount_plan(host, hostvars, groups, pod, profile_nfs, client, fuse_helper)


def pod_nfs_fstab_block(mounts):
    """The managed /etc/fstab block library/pod_nfs_mounts.py writes for a mount plan, as the keys of a drift
    entry (library/pod_drift.py ``files``): the lines (``block``) between its BEGIN and END lines
    (``marker`` ``{mark}`` = the whole line; module_utils/storage/nfs_plan.py holds both and the line format)."""
    return {"marker": "{mark}", "marker_begin": FSTAB_BEGIN, "marker_end": FSTAB_END,
            "block": fstab_block(list(mounts or []))}


def pod_findings_index(hostvars, groups, pod):
    """The pod index the report's root-cause findings read (module_utils/report/findings_rules.py pod_index): every
    DGX's and storage node's NICs (address, fabric, switch port) and the switch names."""
    index = pod_index(_whole_pod(hostvars, groups, pod))
    index["switches"] = list(groups.get("switches", []))
    return index


def pod_pfc_bit(index, priority):
    """1 if ``index`` is the PFC priority, else 0 (builds mlnx_qos's --pfc vector)."""
    return 1 if int(index) == int(priority) else 0


def pod_rdma_changes(rdma_nics, dgx_hw, pfc_priority, manage_port_mode=True):
    """What the deploy changes on a DGX's RDMA hardware, and why it may not (module_utils/pod/derive.rdma_changes)."""
    return rdma_changes(rdma_nics, dgx_hw, int(pfc_priority), bool(manage_port_mode))


def pod_rdma_problems(rdma_nics, dgx_hw, pfc_priority):
    """What the RDMA hardware facts say differs from the model, one line per problem."""
    return rdma_problems(rdma_nics, dgx_hw, int(pfc_priority))


class FilterModule:
    def filters(self):
        return {"pod_ra_profile": pod_ra_profile, "pod_expectations": pod_expectations,
                "pod_model_vars": pod_model_vars, "pod_var_map": pod_var_map, "pod_settings_vars": pod_settings_vars,
                "pod_nic_plan": pod_nic_plan,
                "pod_hosts_entries": pod_hosts_entries, "pod_primary_nic": pod_primary_nic,
                "pod_nccl_env": pod_nccl_env, "pod_ping_targets": pod_ping_targets,
                "pod_ping_target_map": pod_ping_target_map, "pod_nfs_mount_plans": pod_nfs_mount_plans,
                "pod_nfs_host_plan": pod_nfs_host_plan,
                "pod_findings_index": pod_findings_index, "pod_pfc_bit": pod_pfc_bit,
                "pod_rdma_problems": pod_rdma_problems, "pod_rdma_changes": pod_rdma_changes,
                "pod_nfs_mount_plan": pod_nfs_mount_plan, "pod_nfs_fstab_block": pod_nfs_fstab_block,
                "pod_scale_verbs_ports": pod_scale_verbs_ports}
