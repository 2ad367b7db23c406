# -*- coding: utf-8 -*-
"""Values derived from the pod model (docs/pod-model.md) - pure functions, stdlib only.

Everything a host needs is computed from the inventory, never from other hosts' gathered facts, so one
dead node cannot break the run for the others and `--limit` works.
"""
from __future__ import annotations

import ipaddress
from typing import Any, Dict, List, Optional


def fabrics_by_name(pod: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {f["name"]: f for f in pod.get("fabrics") or []}


def nic_plan(nics: List[Dict[str, Any]], pod: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Per NIC: everything needed to configure it (address with prefix, netmask, MTU, gateway, kind).

    >>> nic_plan([{"name": "e0", "fabric": "f", "address": "10.0.0.5", "default_route": True}],
    ...          {"fabrics": [{"name": "f", "kind": "ethernet", "subnet": "10.0.0.0/24", "mtu": 9000,
    ...                        "gateway": "10.0.0.1", "carries": ["compute"]}]})[0]["cidr"]
    '10.0.0.5/24'
    """
    fabrics = fabrics_by_name(pod)
    plan = []
    for nic in nics:
        fab = fabrics[nic["fabric"]]
        net = ipaddress.IPv4Network(fab["subnet"])
        gateway = fab.get("gateway") if nic.get("default_route") else None
        plan.append({
            "name": nic["name"],
            "fabric": fab["name"],
            "kind": fab["kind"],
            "carries": list(fab.get("carries") or []),
            "address": nic["address"],
            "prefix": net.prefixlen,
            "cidr": "%s/%d" % (nic["address"], net.prefixlen),
            "netmask": str(net.netmask),
            "mtu": int(nic.get("mtu") or fab["mtu"]),
            "gateway": gateway,
            "rdma_device": nic.get("rdma_device"),
            "roce": fab.get("roce", "none") if fab["kind"] == "ethernet" else "none",
            "ipoib_mode": (fab.get("ipoib_mode") or "datagram") if fab["kind"] == "infiniband" else None,
        })
    return plan


def hosts_fabric(pod: Dict[str, Any], nics: List[Dict[str, Any]]) -> Optional[str]:
    """The fabric whose address a host name resolves to.

    ``pod.hosts_fabric`` if set; else the fabric of the NIC with the default route (004: enp132s0,
    10.55.66.x); else the first NIC's fabric that carries compute traffic; else storage."""
    if pod.get("hosts_fabric"):
        return pod["hosts_fabric"]
    fabrics = fabrics_by_name(pod)
    for nic in nics:
        if nic.get("default_route"):
            return nic["fabric"]
    for wanted in ("compute", "storage"):
        for nic in nics:
            if wanted in (fabrics.get(nic["fabric"], {}).get("carries") or []):
                return nic["fabric"]
    return None


def primary_nic(nics: List[Dict[str, Any]], pod: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The NIC whose address the host's name resolves to (see hosts_fabric)."""
    fabric = hosts_fabric(pod, nics)
    for nic in nics:
        if nic["fabric"] == fabric:
            return nic
    fabrics = fabrics_by_name(pod)
    for nic in nics:  # a host with no NIC on that fabric (a storage node): its first storage NIC
        if "storage" in (fabrics.get(nic["fabric"], {}).get("carries") or []):
            return nic
    return None


def hosts_entries(hostvars: Dict[str, Dict[str, Any]], groups: Dict[str, List[str]],
                  pod: Dict[str, Any]) -> List[Dict[str, str]]:
    """/etc/hosts entries for every DGX and storage node, in inventory order: [{address, name}].

    A DGX name resolves to its address on the hosts fabric (004: DGX1-1 -> 10.55.66.231); a storage node
    to its address on that fabric, or its first storage-fabric address."""
    entries = []
    domain = pod.get("domain")
    for group in ("dgx", "storage"):
        for host in groups.get(group, []):
            nic = primary_nic(hostvars[host].get("nics") or [], pod)
            if nic is None:
                continue
            names = host if not domain else "%s.%s %s" % (host, domain, host)
            entries.append({"address": nic["address"], "name": names})
    return entries


def nccl_env(nics: List[Dict[str, Any]], pod: Dict[str, Any], profile_env: Dict[str, Any],
             gid_indexes: Optional[Dict[str, int]] = None) -> Dict[str, str]:
    """The NCCL/MPI environment for one DGX (written to an env file that containers and jobs read).

    NCCL_IB_HCA lists the RDMA devices of the compute NICs (004 writes "mlx5", i.e. all of them);
    NCCL_IB_GID_INDEX comes from the RoCEv2 IPv4 GID each device really has (resolved from sysfs by
    the hardware-facts module) and falls back to the profile's value when facts are not available;
    NCCL_SOCKET_IFNAME and the MPI TCP interface are the NIC the host name resolves to."""
    fabrics = fabrics_by_name(pod)
    compute = [n for n in nics if "compute" in (fabrics[n["fabric"]].get("carries") or []) and n.get("rdma_device")]
    primary = primary_nic(nics, pod)
    env = {str(k): str(v) for k, v in (profile_env or {}).items()}
    if compute:
        env["NCCL_IB_HCA"] = ",".join(n["rdma_device"] for n in compute)
    roce = [n for n in compute if fabrics[n["fabric"]].get("kind") == "ethernet"]
    if roce and gid_indexes:
        found = sorted({gid_indexes[n["rdma_device"]] for n in roce if n["rdma_device"] in gid_indexes})
        if len(found) == 1:
            env["NCCL_IB_GID_INDEX"] = str(found[0])
        elif found:
            raise ValueError("RoCEv2 GID index differs between devices (%s); NCCL takes one value per host"
                             % ", ".join("%s=%s" % (n["rdma_device"], gid_indexes.get(n["rdma_device"]))
                                         for n in roce))
    if not roce:
        env.pop("NCCL_IB_GID_INDEX", None)  # InfiniBand needs no GID index
    if primary is not None:
        env["NCCL_SOCKET_IFNAME"] = primary["name"]
        env["OMPI_MCA_btl_tcp_if_include"] = primary["name"]
    return dict(sorted(env.items()))


def ping_targets(host: str, hostvars: Dict[str, Dict[str, Any]], groups: Dict[str, List[str]],
                 pod: Dict[str, Any], group: str = "dgx") -> List[Dict[str, Any]]:
    """Full-MTU ping targets for ``host``: every other member of ``group`` on every Ethernet data fabric
    (fabrics that carry compute or storage) that both have a NIC on. MTU = the smaller of the two NICs'."""
    mine = {n["fabric"]: n for n in nic_plan(hostvars[host].get("nics") or [], pod)
            if n["kind"] == "ethernet" and set(n["carries"]) & {"compute", "storage"}}
    targets = []
    for peer in groups.get(group, []):
        if peer == host:
            continue
        for pn in nic_plan(hostvars[peer].get("nics") or [], pod):
            local = mine.get(pn["fabric"])
            if local is None:
                continue
            targets.append({"nic": local["name"], "fabric": pn["fabric"], "peer": peer,
                            "address": pn["address"], "mtu": min(local["mtu"], pn["mtu"])})
    return targets


def link_layer_mismatch(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any]) -> List[str]:
    """NICs whose RDMA link layer (as the hardware reports it now) is not the fabric's kind."""
    hw_nics = (dgx_hw or {}).get("nics") or {}
    out = []
    for nic in rdma_nics:
        have = (hw_nics.get(nic["name"]) or {}).get("link_layer")
        if have and have != ("Ethernet" if nic["kind"] == "ethernet" else "InfiniBand"):
            out.append(nic["name"])
    return out


def unsupported_port_modes(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any]) -> List[str]:
    """NICs whose link layer is not the fabric's kind and whose port mode cannot be changed (mlxconfig
    shows no LINK_TYPE for them: not a VPI adapter, or no MFT tools) - an error before anything changes."""
    hw_nics = (dgx_hw or {}).get("nics") or {}
    out = []
    for name in link_layer_mismatch(rdma_nics, dgx_hw):
        if not ((hw_nics[name].get("link_type") or {}).get("next_boot")):
            nic = next(n for n in rdma_nics if n["name"] == name)
            out.append("%s (%s) runs %s but its fabric is %s, and mlxconfig shows no LINK_TYPE for it (not a VPI "
                       "adapter, or the MFT tools are missing): its port mode cannot be changed" % (
                           name, nic.get("rdma_device"), hw_nics[name].get("link_layer"), nic["kind"]))
    return out


def rdma_problems(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any], pfc_priority: int = 3) -> List[str]:
    """Compare the RDMA hardware facts (dgx_hw_facts) with the NIC plan: link layer matches the fabric's
    kind, port active; on RoCE-lossless fabrics trust DSCP, PFC on exactly ``pfc_priority``, RoCEv2, and a
    RoCEv2 IPv4 GID for the NIC's address. One line per problem, naming the NIC."""
    problems = []
    hw_nics = (dgx_hw or {}).get("nics") or {}
    for nic in rdma_nics:
        hw = hw_nics.get(nic["name"])
        label = "%s (%s)" % (nic["name"], nic.get("rdma_device"))
        if hw is None:
            problems.append("%s: no RDMA device behind this NIC" % label)
            continue
        if nic.get("rdma_device") and hw.get("rdma_device") and hw["rdma_device"] != nic["rdma_device"]:
            problems.append("%s: ibdev2netdev maps %s to this NIC, model %s" % (
                label, hw["rdma_device"], nic["rdma_device"]))
        want = "Ethernet" if nic["kind"] == "ethernet" else "InfiniBand"
        if hw.get("link_layer") and hw["link_layer"] != want:
            pending = (hw.get("link_type") or {}).get("next_boot")
            problems.append("%s: link layer %s, model %s%s" % (label, hw["link_layer"], want, (
                " (port mode set to %s: reboot required)" % pending) if pending else ""))
        if hw.get("port_state") and hw["port_state"] != "PORT_ACTIVE":
            problems.append("%s: RDMA port %s, not PORT_ACTIVE" % (label, hw["port_state"]))
        if nic.get("roce") == "lossless":
            qos = hw.get("qos") or {}
            if qos.get("trust") != "dscp":
                problems.append("%s: QoS trust %s, model dscp" % (label, qos.get("trust")))
            if qos.get("pfc_priorities") != [pfc_priority]:
                problems.append("%s: PFC on priorities %s, model [%d]" % (label, qos.get("pfc_priorities"),
                                                                           pfc_priority))
            if hw.get("roce_mode") != "RoCE v2":
                problems.append("%s: RDMA-CM RoCE mode %s, model RoCE v2" % (label, hw.get("roce_mode")))
            if hw.get("gid_error"):
                problems.append("%s: %s" % (label, hw["gid_error"]))
    return problems
