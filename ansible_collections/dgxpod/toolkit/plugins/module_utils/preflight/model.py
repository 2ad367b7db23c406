# -*- coding: utf-8 -*-
"""Preflight of the pod model: runs the schema, catalogue and cross-checks (pure functions, stdlib only).

A pod is an Ansible inventory (see docs/pod-model.md). ``validate(model, profiles)`` takes what Ansible
sees for every host (``pod.types.model_from_hostvars``) and returns ``Finding`` objects; it never touches the
network or the file system. ``preflight/sources.py`` finds the inventory file and line that define a finding's
key. The hardware catalogues are in ``module_utils/catalog/`` (re-exported here), the schema and ``Finding`` in
``preflight/schema.py``, the switch and cabling checks in ``preflight/switch_checks.py``, the scheduler's in
``preflight/slurm_checks.py``; this module runs them all and re-exports what callers use. Once the model passes,
``pod.types.Pod`` is the typed, read-only view every derivation takes.

The model given to ``validate`` is::

    {"pod": <the pod variable>,
     "hosts": {"DGX1-1": {"groups": ["dgx"], "vars": {"ansible_host": ..., "nics": [...], ...}}, ...}}
"""
from __future__ import annotations

import ipaddress
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.mtu import (ETHERNET_OVERHEAD, frame_bytes,
    IPOIB_MTU_MAX, max_host_mtu)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (PLATFORMS, port_lanes,
    SWITCH_MODELS, SwitchModel)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import ROLE_GROUPS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import (addr_owner, check_schema, errors,
    FABRIC_SCHEMA, Field, Finding, group_findings, GROUP_LIST, HOST_SCHEMAS, HOSTNAME_RE, ip_of, natural_key, net_of,
    NIC_SCHEMA, POD_SCHEMA, role_of, STORAGE_PLATFORMS, STORAGE_SCHEMA, suggest, SWITCH_SCHEMA)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.switch_checks import (check_cabling,
    check_switch_l3, check_switches, host_mtu)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.ib_checks import check_ib
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.slurm_checks import check_slurm
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.settings_checks import (check_links,
    misplaced_hosts)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.path_checks import check_storage_paths

# What callers import from here (the catalogue, schema and switch checks live in their own files now).
__all__ = ["DGX_MODELS", "ETHERNET_OVERHEAD", "IPOIB_MTU_MAX", "PLATFORMS", "ROLE_GROUPS", "STORAGE_PLATFORMS",
           "SWITCH_MODELS", "SwitchModel", "host_mtu", "port_lanes", "FABRIC_SCHEMA", "Field",
           "Finding", "GROUP_LIST", "HOST_SCHEMAS", "NIC_SCHEMA", "POD_SCHEMA", "STORAGE_SCHEMA",
           "SWITCH_SCHEMA", "check_schema", "errors", "group_findings", "natural_key", "role_of", "check_switch_l3",
           "validate"]


# --------------------------------------------------------------------------- validation
def validate(model: Dict[str, Any], profiles: Iterable[str]) -> List[Finding]:
    """Validate the whole pod model. Returns findings (errors and warnings), most basic first."""
    out: List[Finding] = []
    hosts: Dict[str, Dict[str, Any]] = model.get("hosts") or {}
    pod = model.get("pod")
    any_host = next(iter(hosts), None)

    if not hosts:
        out.append(Finding(None, "inventory", "", "the inventory has no hosts",
                           "point -i at a pod inventory directory (e.g. inventories/sim)"))
        return out
    if pod is None:
        out.append(Finding(any_host, "pod", "pod", "the pod variable is not defined",
                           "create group_vars/all/pod.yml with pod: {name, ra_profile, fabrics}"))
        return out
    pod_ok = check_schema(pod, POD_SCHEMA, "pod", "pod", any_host, out)
    fabrics: Dict[str, Dict[str, Any]] = {}
    declared: Optional[set] = None  # None: pod.fabrics itself is unusable (reported), so is every NIC's fabric
    if isinstance(pod, dict):
        profile = pod.get("ra_profile")
        profiles = sorted(profiles)
        if isinstance(profile, str) and profile.strip() and profile not in profiles:
            close = suggest(profile[:-4] if profile.endswith(".yml") else profile, profiles)
            out.append(Finding(any_host, "pod", "pod.ra_profile", "unknown RA profile '%s'" % profile,
                               ("did you mean '%s'?" % close) if close else
                               "use one of %s (files in profiles/)" % ", ".join(profiles)))
        fabrics = _check_fabrics(pod.get("fabrics"), any_host, out)
        if isinstance(pod.get("fabrics"), list):
            # declared, even if invalid: a NIC on a fabric whose own entry is wrong is not a second mistake
            declared = {f["name"] for f in pod["fabrics"] if isinstance(f, dict) and isinstance(f.get("name"), str)}
        hf = pod.get("hosts_fabric")
        if isinstance(hf, str) and fabrics and hf not in fabrics:
            out.append(Finding(any_host, "pod", "pod.hosts_fabric", "'%s' is not a fabric of this pod" % hf,
                               "use one of %s" % ", ".join(fabrics)))
    del pod_ok

    # ---- per host: role, schema
    usable: Dict[str, Dict[str, Any]] = {}
    missing: Dict[Tuple[str, str], List[str]] = {}  # (role, var) -> hosts lacking a required var
    lowered: Dict[str, str] = {}
    misplaced = misplaced_hosts(hosts, fabrics)  # issue 46: "looks like a DGX", not "add storage_node"
    out.extend(misplaced.values())
    for name, info in hosts.items():
        groups = info.get("groups") or []
        roles = role_of(groups)
        if not HOSTNAME_RE.match(name):
            out.append(Finding(name, "inventory", "hosts.%s" % name,
                               "'%s' is not a valid host name (letters, digits, '-'; 1-63 chars)" % name,
                               "rename the host; it becomes the node's hostname and /etc/hosts name"))
        low = name.lower()
        if low in lowered:
            out.append(Finding(name, "inventory", "hosts.%s" % name,
                               "host name differs from '%s' only by case; DNS and /etc/hosts treat them "
                               "as the same name" % lowered[low], "give each host a distinct name"))
        lowered.setdefault(low, name)
        if len(roles) != 1:
            out.append(Finding(name, "inventory", "hosts.%s" % name,
                               ("is in no role group" if not roles else
                                "is in several role groups (%s)" % ", ".join(roles)),
                               "put the host in exactly one of the groups %s" % ", ".join(ROLE_GROUPS)))
            continue
        if name in misplaced:
            continue
        role = roles[0]
        hv = info.get("vars") or {}
        ok = True
        for var, spec in HOST_SCHEMAS[role].items():
            if hv.get(var) is None:
                if spec.required:
                    missing.setdefault((role, var), []).append(name)
                    ok = False
                continue
            ok = check_schema(hv[var], spec, var, var, name, out) and ok
        usable[name] = {"role": role, "vars": hv, "ok": ok}

    for (role, var), names in missing.items():
        many = "" if len(names) == 1 else " (and %d more host(s) of the group: %s)" % (
            len(names) - 1, ", ".join(names[1:6]) + (", ..." if len(names) > 6 else ""))
        out.append(Finding(names[0], var, var, "required for hosts in group '%s' but not set%s" % (role, many),
                           _missing_fix(var)))

    # copies: the checks note what they found on each (_lanes, _pc_members) and must not write into the hostvars
    switches = {h: dict(u["vars"]["switch"]) for h, u in usable.items()
                if u["role"] == "switches" and isinstance(u["vars"].get("switch"), dict)
                and u["vars"]["switch"].get("model") in SWITCH_MODELS}
    switch_hosts = {h for h, info in hosts.items() if "switches" in (info.get("groups") or [])}
    # a switch listed under another group is reported once (misplaced_hosts), not on every NIC cabled to it
    switch_hosts |= {h for h, f in misplaced.items() if getattr(f, "looks_like", None) == "switches"}
    check_switches(switches, usable, fabrics, out, switch_hosts)
    _check_nics(usable, fabrics, switches, out, declared, switch_hosts)
    check_ib(pod, usable, fabrics, switches, any_host, out)
    if isinstance(pod, dict):
        _check_storage(pod.get("storage"), usable, fabrics, any_host, out)
        check_slurm(pod, usable, any_host, out)
    check_links(usable, fabrics, any_host, out)
    return out


def _missing_fix(var: str) -> str:
    return {
        "nics": "list the host's NICs in host_vars/<host>.yml: nics: [{name, fabric, address}]",
        "dgx_model": "set dgx_model (one of %s) in group_vars/dgx.yml" % ", ".join(DGX_MODELS),
        "storage_node": "set storage_node: {platform: ...} for the storage host",
        "switch": "set switch: {platform, model} in host_vars/<switch>.yml",
    }.get(var, "set it")


def _check_fabrics(raw: Any, host: Optional[str], out: List[Finding]) -> Dict[str, Dict[str, Any]]:
    fabrics: Dict[str, Dict[str, Any]] = {}
    if not isinstance(raw, list):
        return fabrics
    seen_nets: List[Tuple[ipaddress.IPv4Network, str]] = []
    for i, fab in enumerate(raw):
        path = "pod.fabrics[%d]" % i
        if not isinstance(fab, dict) or not isinstance(fab.get("name"), str):
            continue
        name = fab["name"]
        if name in fabrics:
            out.append(Finding(host, "pod", path + ".name", "fabric name '%s' is used twice" % name,
                               "give every fabric a unique name"))
            continue
        net = net_of(fab.get("subnet"))
        kind = fab.get("kind")
        valid = net is not None and isinstance(fab.get("mtu"), int) and kind in ("ethernet", "infiniband")
        if net is not None:
            for other, other_name in seen_nets:
                if net.overlaps(other):
                    out.append(Finding(host, "pod", path + ".subnet", "%s overlaps fabric '%s' (%s)" % (
                        net, other_name, other), "give each fabric its own, non-overlapping subnet"))
                    valid = False
            seen_nets.append((net, name))
        gw = ip_of(fab.get("gateway")) if fab.get("gateway") is not None else None
        if gw is not None and net is not None:
            if gw not in net:
                out.append(Finding(host, "pod", path + ".gateway", "%s is outside the fabric subnet %s" % (
                    gw, net), "use a gateway address inside %s" % net))
            elif gw in (net.network_address, net.broadcast_address):
                out.append(Finding(host, "pod", path + ".gateway", "%s is the network or broadcast address"
                                   % gw, "use a host address of %s" % net))
        if kind == "infiniband":
            if fab.get("roce", "none") != "none":
                out.append(Finding(host, "pod", path + ".roce", "RoCE is an Ethernet setting; this fabric is "
                                   "InfiniBand", "remove roce from InfiniBand fabrics"))
            mode = fab.get("ipoib_mode") or "datagram"
            mtu = fab.get("mtu")
            if isinstance(mtu, int) and mode in IPOIB_MTU_MAX and mtu > IPOIB_MTU_MAX[mode]:
                out.append(Finding(host, "pod", path + ".mtu", "IPoIB %s mode allows at most %d, not %d" % (
                    mode, IPOIB_MTU_MAX[mode], mtu), "use mtu %d (or ipoib_mode: connected, up to 65520)"
                    % IPOIB_MTU_MAX[mode] if mode == "datagram" else "use mtu 65520 or less"))
        elif kind == "ethernet":
            if fab.get("ipoib_mode") is not None:
                out.append(Finding(host, "pod", path + ".ipoib_mode", "ipoib_mode applies to InfiniBand only",
                                   "remove it from Ethernet fabrics"))
            mtu = fab.get("mtu")
            if isinstance(mtu, int) and mtu > 9216:
                out.append(Finding(host, "pod", path + ".mtu", "Ethernet MTU %d is above any switch's 9216"
                                   % mtu, "use 9000 (the RAs' value)"))
        if valid:
            fabrics[name] = dict(fab, _net=net, _index=i)
    return fabrics


def _check_nics(usable: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
                switches: Dict[str, Dict[str, Any]], out: List[Finding], declared: Optional[set] = None,
                switch_hosts: Optional[set] = None) -> None:
    addresses: Dict[ipaddress.IPv4Address, str] = {}
    for fname, fab in fabrics.items():
        gw = ip_of(fab.get("gateway")) if fab.get("gateway") else None
        if gw is not None:
            addresses[gw] = "the gateway of fabric %s" % fname
    cabled: Dict[Tuple[str, str], str] = {}
    for name, info in usable.items():
        hv = info["vars"]
        nics = hv.get("nics")
        if info["role"] == "switches" or not isinstance(nics, list):
            continue
        names: Dict[str, int] = {}
        rdma: Dict[str, int] = {}
        on_fabric: Dict[str, int] = {}  # fabric -> first NIC of this host on it
        defaults = []
        own_addresses = set()
        for i, nic in enumerate(nics):
            if not isinstance(nic, dict):
                continue
            path = "nics[%d]" % i
            nic_name = nic.get("name")
            if isinstance(nic_name, str):
                if nic_name in names:
                    out.append(Finding(name, "nics", path + ".name", "NIC %s is listed twice (also nics[%d]); a "
                                       "NIC is one port, cabled to one switch port" % (nic_name, names[nic_name]),
                                       "keep one entry per NIC"))
                names.setdefault(nic_name, i)
                if len(nic_name) > 15:
                    out.append(Finding(name, "nics", path + ".name", "'%s' is longer than Linux's 15-character "
                                       "interface names" % nic_name, "use the kernel's name for the NIC"))
            dev = nic.get("rdma_device")
            if isinstance(dev, str):
                if dev in rdma:
                    out.append(Finding(name, "nics", path + ".rdma_device", "%s is already the RDMA device of "
                                       "nics[%d]" % (dev, rdma[dev]), "give each NIC its own RDMA device"))
                rdma.setdefault(dev, i)
            fab_name = nic.get("fabric")
            fab = fabrics.get(fab_name) if isinstance(fab_name, str) else None
            if isinstance(fab_name, str) and fab_name.strip() and fab is None and declared is not None \
                    and fab_name not in declared:
                close = suggest(fab_name, declared)
                out.append(Finding(name, "nics", path + ".fabric", "'%s' is not a fabric of this pod" % fab_name,
                                   ("did you mean '%s'?" % close) if close else
                                   "use one of %s (pod.fabrics)" % ", ".join(sorted(declared))))
            addr = ip_of(nic.get("address")) if isinstance(nic.get("address"), str) else None
            if addr is not None:
                own_addresses.add(addr)
                if addr in addresses:
                    out.append(Finding(name, "nics", path + ".address", "%s is already used by %s" % (
                        addr, addresses[addr]), "give every NIC its own address"))
                else:
                    addresses[addr] = addr_owner(name, path)
                if fab is not None:
                    net = fab["_net"]
                    if addr not in net:
                        out.append(Finding(name, "nics", path + ".address", "%s is outside fabric '%s' subnet %s"
                                           % (addr, fab_name, net), "use an address in %s, or put the NIC on "
                                           "the fabric whose subnet holds %s" % (net, addr)))
                    elif addr in (net.network_address, net.broadcast_address):
                        out.append(Finding(name, "nics", path + ".address", "%s is the network or broadcast "
                                           "address of %s" % (addr, net), "use a host address of %s" % net))
            if fab is not None and info["role"] == "dgx":
                # the toolkit configures a DGX's Linux networking; a storage OS (OneFS pools) is its own business
                if fab_name in on_fabric:
                    first = nics[on_fabric[fab_name]]
                    out.append(Finding(name, "nics", path + ".fabric", "%s and %s (nics[%d]) are both on fabric '%s' "
                                       "(%s, %s): two interfaces of one host in one subnet answer each other's ARP "
                                       "and the kernel sends the whole subnet out of one of them" % (
                                           nic.get("name"), first.get("name"), on_fabric[fab_name], fab_name,
                                           fab["_net"], "IPoIB" if fab["kind"] == "infiniband" else "Ethernet"),
                                       "give each NIC its own fabric and subnet (one subnet per rail), or drop "
                                       "the NIC from the model"))
                on_fabric.setdefault(fab_name, i)
            if nic.get("default_route") is True:
                defaults.append(i)
                if fab is not None and not fab.get("gateway"):
                    out.append(Finding(name, "nics", path + ".default_route", "fabric '%s' has no gateway" %
                                       fab_name, "add a gateway to the fabric or drop default_route"))
            if fab is not None:
                mtu = nic.get("mtu")
                if isinstance(mtu, int) and fab["kind"] == "infiniband":
                    mode = fab.get("ipoib_mode") or "datagram"
                    if mtu > IPOIB_MTU_MAX.get(mode, 65520):
                        out.append(Finding(name, "nics", path + ".mtu", "IPoIB %s mode allows at most %d" % (
                            mode, IPOIB_MTU_MAX[mode]), "lower the MTU or use ipoib_mode: connected"))
                check_cabling(name, path, nic, fab, switches, cabled, out, switch_hosts)
        _check_data_nics(name, info["role"], nics, fabrics, out)
        if len(defaults) > 1:
            out.append(Finding(name, "nics", "nics[%d].default_route" % defaults[1], "more than one NIC carries "
                               "the default route (nics[%s])" % ", ".join(str(d) for d in defaults),
                               "set default_route on one NIC only"))
        ah = ip_of(hv.get("ansible_host")) if isinstance(hv.get("ansible_host"), str) else None
        if ah is not None and ah not in own_addresses and any(ah in f["_net"] for f in fabrics.values()):
            out.append(Finding(name, "ansible_host", "ansible_host", "%s is on a pod fabric but is not one of "
                               "this host's NIC addresses" % ah,
                               "set ansible_host to one of the host's own addresses"))
    for name, sw in switches.items():
        short = sw.pop("_mtu_short", None)
        if short:
            need = frame_bytes(max(m for m, _ in short))
            out.append(Finding(name, "switch", "switch.mtu", "%d is too small for %d cabled NIC(s): host MTU up "
                               "to %d + %d bytes of headers (first: %s)" % (
                                   sw["mtu"], len(short), max_host_mtu(need), ETHERNET_OVERHEAD,
                                   short[0][1]), "set switch.mtu to at least %d (max %s)" % (
                                   need, SWITCH_MODELS[sw["model"]].max_mtu)))
    for name, info in usable.items():
        if info["role"] != "switches":
            continue
        ah = ip_of(info["vars"].get("ansible_host")) if isinstance(info["vars"].get("ansible_host"), str) else None
        if ah is not None and ah in addresses:
            out.append(Finding(name, "ansible_host", "ansible_host", "%s is already used by %s" % (
                ah, addresses[ah]), "give the switch its own management address"))


def _check_data_nics(name: str, role: str, nics: List[Any], fabrics: Dict[str, Dict[str, Any]],
                     out: List[Finding]) -> None:
    """A DGX needs at least one NIC on a compute or storage fabric (a management NIC alone runs no job)."""
    data_fabrics = [f for f, fab in fabrics.items() if set(fab.get("carries") or []) & {"compute", "storage"}]
    if role != "dgx" or not data_fabrics:
        return
    known = [n for n in nics if isinstance(n, dict) and n.get("fabric") in fabrics]
    if len(known) != len(nics):
        return  # a NIC on an unknown fabric is reported already
    if any(n["fabric"] in data_fabrics for n in known):
        return
    held = ", ".join("%s on %s" % (n.get("name"), n["fabric"]) for n in known) or "none"
    out.append(Finding(name, "nics", "nics", "the DGX has no data NIC: no NIC on a compute or storage fabric "
                       "(NICs: %s)" % held, "list the DGX's data NICs (name, fabric, address, rdma_device) on the "
                       "compute/storage fabrics (%s)" % ", ".join(data_fabrics)))


def _check_storage(storage: Any, usable: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
                   host: Optional[str], out: List[Finding]) -> None:
    storage_fabrics = {n for n, f in fabrics.items() if "storage" in (f.get("carries") or [])}
    if not isinstance(storage, dict):
        return
    for key in ("scripts_mount", "data_mount_prefix"):
        value = storage.get(key)
        if isinstance(value, str) and not value.startswith("/"):
            out.append(Finding(host, "pod", "pod.storage." + key, "'%s' is not an absolute path" % value,
                               "use an absolute mount point such as /mnt/isilon"))
    _check_mount_paths(storage, host, out)
    check_storage_paths(storage, host, out)
    _check_mount_options(storage, host, out)
    scale = storage.get("scale")
    if isinstance(scale, dict) and isinstance(scale.get("filesystems"), list):
        seen: Dict[str, int] = {}
        for i, fs in enumerate(scale["filesystems"]):
            if isinstance(fs, str):
                if fs in seen:
                    out.append(Finding(host, "pod", "pod.storage.scale.filesystems[%d]" % i, "file system '%s' is "
                                       "listed twice (also filesystems[%d]); it would be mounted twice" % (
                                           fs, seen[fs]), "list each file system once"))
                seen.setdefault(fs, i)
    if storage.get("protocol") == "spectrum-scale":
        if not isinstance(scale, dict):
            out.append(Finding(host, "pod", "pod.storage", "protocol spectrum-scale needs pod.storage.scale",
                               "add scale: {cluster_name: <cluster>, contact_node: <storage host in the cluster>}"))
        elif isinstance(scale.get("contact_node"), str) and scale["contact_node"] not in usable:
            out.append(Finding(host, "pod", "pod.storage.scale.contact_node", "'%s' is not a host in this inventory"
                               % scale["contact_node"], "name a host of group 'storage' that is a cluster member"))
        elif isinstance(scale.get("contact_node"), str) and usable[scale["contact_node"]]["role"] != "storage":
            out.append(Finding(host, "pod", "pod.storage.scale.contact_node", "'%s' is in group '%s', not 'storage'"
                               % (scale["contact_node"], usable[scale["contact_node"]]["role"]),
                               "name a host of group 'storage' that is a cluster member"))
    elif scale is not None:
        out.append(Finding(host, "pod", "pod.storage.scale", "set, but protocol is '%s'" % storage.get("protocol"),
                           "remove scale or set protocol: spectrum-scale", severity="warning"))
    if fabrics and not storage_fabrics:
        out.append(Finding(host, "pod", "pod.fabrics", "no fabric carries storage traffic",
                           "add 'storage' to the carries list of the fabric(s) storage is reached over"))
        return
    endpoints = [
        (h, i) for h, info in usable.items() if info["role"] == "storage"
        for i, nic in enumerate(info["vars"].get("nics") or [])
        if isinstance(nic, dict) and nic.get("fabric") in storage_fabrics]
    if storage_fabrics and not endpoints:
        out.append(Finding(host, "pod", "pod.storage", "no storage node has a NIC on a storage fabric (%s)" %
                           ", ".join(sorted(storage_fabrics)),
                           "add storage hosts with NICs on those fabrics"))
        return
    _check_storage_nodes(usable, fabrics, storage_fabrics, out)
    _check_scripts_server(storage, usable, fabrics, storage_fabrics, host, out)


def _check_storage_nodes(usable: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
                         storage_fabrics: Iterable[str], out: List[Finding]) -> None:
    """Every storage node has a NIC on a storage fabric: one with only a management NIC (or none) is in no DGX's
    mount plan and no storage check reads from it, so the pod would be validated without it."""
    storage_fabrics = sorted(storage_fabrics)
    for name, info in usable.items():
        nics = info["vars"].get("nics")
        if info["role"] != "storage" or not isinstance(nics, list):
            continue
        if not all(isinstance(n, dict) and n.get("fabric") in fabrics for n in nics):
            continue  # a NIC on an unknown fabric, or a broken entry: reported already
        if any(n["fabric"] in storage_fabrics for n in nics):
            continue
        held = ", ".join("%s on %s" % (n.get("name"), n["fabric"]) for n in nics) or "none"
        out.append(Finding(name, "nics", "nics", "the storage node has no NIC on a fabric that carries storage (%s): "
                           "no DGX mounts from it and validation does not test it (NICs: %s)" % (
                               ", ".join(storage_fabrics), held),
                           "list its front-end ports (name, fabric, address) on %s, or remove the node from group "
                           "'storage'" % " or ".join(storage_fabrics)))


# NFS options that take the locks the scripts/logs mount needs (004: "default options - it needs NFS locks")
_NO_LOCKS = ("nolock", "local_lock=all", "local_lock=posix")


def _check_mount_options(storage: Dict[str, Any], host: Optional[str], out: List[Finding]) -> None:
    """pod.storage.scripts_options/data_options: comma-separated, no blanks inside an option, no option twice, and
    no 'nolock' on the scripts mount (004: it needs NFS locks)."""
    for key in ("scripts_options", "data_options"):
        text = storage.get(key)
        if not isinstance(text, str):
            continue
        path = "pod.storage." + key
        if not text.strip():
            out.append(Finding(host, "pod", path, "is empty", "remove %s to use the RA profile's options, or list "
                               "the options (comma-separated)" % key))
            continue
        opts = [o.strip() for o in text.split(",")]
        spaced = [o for o in opts if " " in o or "\t" in o]
        if spaced or "" in opts:
            out.append(Finding(host, "pod", path, "%r is not a comma-separated option list (%s)" % (
                text, "a blank inside %r" % spaced[0] if spaced else "an empty option between two commas"),
                "write the options as mount -o takes them: %s" % ",".join(
                    o.replace(" ", "").replace("\t", "") for o in opts if o)))
            continue
        seen: Dict[str, str] = {}
        for opt in opts:
            name = opt.split("=", 1)[0]
            if name in seen and seen[name] != opt:
                out.append(Finding(host, "pod", path, "option %s is given twice (%s and %s); only the last one "
                                   "counts" % (name, seen[name], opt), "keep one %s" % name))
            seen.setdefault(name, opt)
        if key == "scripts_options":
            bad = [o for o in opts if o in _NO_LOCKS]
            if bad:
                out.append(Finding(host, "pod", path, "%s on the scripts mount: the RA's scripts/logs mount needs NFS "
                                   "locks (only the read-only data mounts may use nolock)" % bad[0],
                                   "remove %s from scripts_options (put it in data_options)" % bad[0]))


def _check_mount_paths(storage: Dict[str, Any], host: Optional[str], out: List[Finding]) -> None:
    """NFS export absolute; the scripts mount is not one of the data mounts (<prefix>1..N)."""
    export = storage.get("export")
    if storage.get("protocol") == "nfs" and isinstance(export, str) and not export.startswith("/"):
        out.append(Finding(host, "pod", "pod.storage.export", "NFS export '%s' is not an absolute path" % export,
                           "write the path the NFS server exports, e.g. /ifs (Isilon/PowerScale)"))
    scripts, prefix, count = storage.get("scripts_mount"), storage.get("data_mount_prefix"), storage.get("data_mounts")
    if not (isinstance(scripts, str) and isinstance(prefix, str)):
        return
    norm = scripts.rstrip("/") or "/"
    if norm.startswith(prefix) and norm[len(prefix):].isdigit():
        n = int(norm[len(prefix):])
        if n >= 1 and (not isinstance(count, int) or n <= count) and str(n) == norm[len(prefix):]:
            out.append(Finding(host, "pod", "pod.storage.scripts_mount", "'%s' is also data mount %d (%s%d, "
                               "data_mount_prefix + N): two NFS mounts on one path, the second hides the first" % (
                                   scripts, n, prefix, n),
                               "use a scripts mount point outside %s1..%s (004: scripts on /mnt/isilon, data on "
                               "/mnt/isilon1..16)" % (prefix, count if isinstance(count, int) else "N")))


def _check_scripts_server(storage: Dict[str, Any], usable: Dict[str, Dict[str, Any]],
                          fabrics: Dict[str, Dict[str, Any]], storage_fabrics: Iterable[str],
                          host: Optional[str], out: List[Finding]) -> None:
    """pod.storage.scripts_server: a storage node's address on a storage fabric every DGX has a NIC on."""
    server = ip_of(storage.get("scripts_server")) if isinstance(storage.get("scripts_server"), str) else None
    if server is None:
        return
    storage_fabrics = set(storage_fabrics)
    dgx_fabrics: Dict[str, List[str]] = {}  # DGX -> fabrics of its NICs
    endpoints: Dict[ipaddress.IPv4Address, Tuple[str, str, str]] = {}  # storage address -> host, nic, fabric
    for name, info in usable.items():
        nics = [n for n in info["vars"].get("nics") or [] if isinstance(n, dict)]
        if info["role"] == "dgx":
            dgx_fabrics[name] = [n.get("fabric") for n in nics]
        elif info["role"] == "storage":
            for n in nics:
                addr = ip_of(n.get("address")) if isinstance(n.get("address"), str) else None
                if addr is not None:
                    endpoints[addr] = (name, str(n.get("name")), str(n.get("fabric")))
    reachable = sorted(
        (str(a) for a, (_h, _n, f) in endpoints.items()
         if f in storage_fabrics and dgx_fabrics and all(f in fl for fl in dgx_fabrics.values())),
        key=lambda a: ipaddress.IPv4Address(a))
    fix = ("use a storage node address on a storage fabric every DGX has a NIC on (%s), or drop scripts_server "
           "for the default" % (", ".join(reachable[:4]) + (", ..." if len(reachable) > 4 else "")
                                if reachable else "none in this model"))
    where = next((f for f, fab in fabrics.items() if server in fab["_net"]), None)
    if server not in endpoints:
        what = "on fabric '%s'" % where if where else "in no fabric of the pod"
        out.append(Finding(host, "pod", "pod.storage.scripts_server", "%s is not the address of any storage node "
                           "NIC (it is %s)" % (server, what), fix))
        return
    s_host, s_nic, fabric = endpoints[server]
    if fabric not in storage_fabrics:
        out.append(Finding(host, "pod", "pod.storage.scripts_server", "%s is %s %s on fabric '%s', which does not "
                           "carry storage traffic: the DGX nodes mount over their storage fabrics" % (
                               server, s_host, s_nic, fabric), fix))
        return
    lacking = sorted(h for h, fl in dgx_fabrics.items() if fabric not in fl)
    if lacking:
        out.append(Finding(host, "pod", "pod.storage.scripts_server", "%s (%s %s) is on fabric '%s', where %s "
                           "ha%s no NIC: %s cannot reach it" % (
                               server, s_host, s_nic, fabric, ", ".join(lacking[:5]) + (
                                   " and %d more" % (len(lacking) - 5) if len(lacking) > 5 else ""),
                               "s" if len(lacking) == 1 else "ve", "it" if len(lacking) == 1 else "they"), fix))
