# -*- coding: utf-8 -*-
"""Values derived from the pod model (docs/pod-model.md) - pure functions, stdlib only.

Everything a host needs is computed from the inventory, never from other hosts' gathered facts, so one
dead node cannot break the run for the others and `--limit` works.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Nic, Pod


def nic_entry(nic: Nic) -> Dict[str, Any]:
    """Everything needed to configure one NIC (address with prefix, netmask, MTU, gateway, kind)."""
    fab = nic.fabric
    return {
        "name": nic.name,
        "fabric": fab.name,
        "kind": fab.kind,
        "carries": list(fab.carries),
        "address": nic.address,
        "prefix": nic.prefix,
        "cidr": nic.cidr,
        "netmask": str(fab.subnet.netmask),
        "mtu": nic.mtu,
        "gateway": fab.gateway if nic.default_route else None,
        "rdma_device": nic.rdma_device,
        "roce": fab.roce,
        "ipoib_mode": fab.ipoib_mode,
    }


def nic_plan(pod: Pod, host: str) -> List[Dict[str, Any]]:
    """Per NIC of ``host``: everything needed to configure it (see :func:`nic_entry`).

    >>> p = Pod.of_one_host({"fabrics": [{"name": "f", "kind": "ethernet", "subnet": "10.0.0.0/24", "mtu": 9000,
    ...                      "gateway": "10.0.0.1", "carries": ["compute"]}]},
    ...                     [{"name": "e0", "fabric": "f", "address": "10.0.0.5", "default_route": True}], "h")
    >>> nic_plan(p, "h")[0]["cidr"], nic_plan(p, "h")[0]["gateway"]
    ('10.0.0.5/24', '10.0.0.1')
    """
    return [nic_entry(n) for n in pod.host(host).nics]


def hosts_entries(pod: Pod) -> List[Dict[str, str]]:
    """/etc/hosts entries for every DGX and storage node, in inventory order: [{address, name}].

    A DGX name resolves to its address on the hosts fabric (004: DGX1-1 -> 10.55.66.231); a storage node
    to its address on that fabric, or its first storage-fabric address."""
    entries = []
    for host in pod.dgx + pod.storage_nodes:
        nic = pod.primary_nic(host.name)
        if nic is None:
            continue
        names = host.name if not pod.domain else "%s.%s %s" % (host.name, pod.domain, host.name)
        entries.append({"address": nic.address, "name": names})
    return entries


def nccl_env(pod: Pod, host: str, profile_env: Dict[str, Any],
             gid_indexes: Optional[Dict[str, int]] = None) -> Dict[str, str]:
    """The NCCL/MPI environment for one DGX (written to an env file that containers and jobs read).

    NCCL_IB_HCA lists the RDMA devices of the compute NICs (004 writes "mlx5", i.e. all of them);
    NCCL_IB_GID_INDEX comes from the RoCEv2 IPv4 GID each device really has (resolved from sysfs by
    the hardware-facts module) and falls back to the profile's value when facts are not available;
    NCCL_SOCKET_IFNAME and the MPI TCP interface are the NIC the host name resolves to."""
    compute = [n for n in pod.host(host).nics if "compute" in n.fabric.carries and n.rdma_device]
    primary = pod.primary_nic(host)
    env = {str(k): str(v) for k, v in (profile_env or {}).items()}
    if compute:
        env["NCCL_IB_HCA"] = ",".join(n.rdma_device for n in compute)
    roce = [n for n in compute if n.fabric.kind == "ethernet"]
    if roce and gid_indexes:
        found = sorted({gid_indexes[n.rdma_device] for n in roce if n.rdma_device in gid_indexes})
        if len(found) == 1:
            env["NCCL_IB_GID_INDEX"] = str(found[0])
        elif found:
            raise ValueError("RoCEv2 GID index differs between devices (%s); NCCL takes one value per host"
                             % ", ".join("%s=%s" % (n.rdma_device, gid_indexes.get(n.rdma_device)) for n in roce))
    if not roce:
        env.pop("NCCL_IB_GID_INDEX", None)  # InfiniBand needs no GID index
    if primary is not None:
        env["NCCL_SOCKET_IFNAME"] = primary.name
        env["OMPI_MCA_btl_tcp_if_include"] = primary.name
    return dict(sorted(env.items()))


def ping_targets(pod: Pod, host: str, group: str = "dgx") -> List[Dict[str, Any]]:
    """Full-MTU ping targets for ``host``: every other member of ``group`` on every Ethernet data fabric
    (fabrics that carry compute or storage) that both have a NIC on, then every storage node's NIC on an
    Ethernet storage fabric this host has a NIC on (a storage port that drops full-size frames is a black hole for
    the NFS connections already open: their I/O hangs while new, small packets pass - issue 46):
    {nic, fabric, peer, peer_nic, address, mtu}. MTU = the smaller of the two NICs'."""
    mine = {n.fabric.name: n for n in pod.host(host).nics
            if n.fabric.kind == "ethernet" and n.fabric.carries_any("compute", "storage")}
    targets = []
    peers = [(p, False) for p in pod.in_group(group)] + [(p, True) for p in pod.storage_nodes
                                                         if group != "storage"]
    for peer, storage in peers:
        if peer.name == host:
            continue
        for pn in peer.nics:
            local = mine.get(pn.fabric.name)
            if local is None or (storage and not pn.fabric.carries_any("storage")) or not pn.address:
                continue
            targets.append({"nic": local.name, "fabric": pn.fabric.name, "peer": peer.name, "peer_nic": pn.name,
                            "address": pn.address, "mtu": min(local.mtu, pn.mtu)})
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


def _port(hw: Dict[str, Any]) -> Any:
    """The NIC's RDMA port from its hardware facts, 1 when they do not say."""
    return 1 if hw.get("port") is None else hw["port"]


def rdma_changes(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any], pfc_priority: int = 3,
                 manage_port_mode: bool = True) -> Dict[str, Any]:
    """What the deploy changes on the RDMA hardware of one DGX, from its hardware facts (dgx_hw_facts), in one
    pass (roles/dgx_network/tasks/rdma.yml; issue 19: one decision task instead of one skipped task per change
    kind on a converged pod):

    - ``refused``: why nothing may change - a NIC in the wrong mode whose port mode cannot be changed
      (``unsupported_port_modes``), or a RoCE-lossless NIC whose QoS state could not be read (never re-applied
      blindly). One message each.
    - ``port_mode``: NICs whose next-boot port mode (mlxconfig LINK_TYPE) is not the fabric's kind (only with
      ``manage_port_mode``; a NIC mlxconfig shows no LINK_TYPE for is left alone): name, device (the PCI address
      when known), port, want (ETH/IB), code (mlxconfig's 2/1).
    - ``reboot_needed``: NICs whose active link layer is not the fabric's kind (``link_layer_mismatch``).
    - ``qos``: RoCE-lossless NICs without trust DSCP and PFC on exactly ``pfc_priority``.
    - ``roce_mode``: RoCE-lossless NICs whose RDMA-CM mode is not RoCE v2: name, device, port.
    - ``any``: whether there is anything to change or say (a change or a pending reboot).
    """
    hw_nics = (dgx_hw or {}).get("nics") or {}
    unread = [hw_nics[n["name"]]["qos_error"] for n in rdma_nics if n.get("roce") == "lossless"
              and "qos_error" in (hw_nics.get(n["name"]) or {})]
    refused = list(unsupported_port_modes(rdma_nics, dgx_hw))
    if unread:
        versions = [u.get("version") for u in (dgx_hw or {}).get("unreadable") or [] if u.get("tool") == "mlnx_qos"]
        refused.append("mlnx_qos output could not be read (%s): %s" % (
            (versions[0] if versions and versions[0] else "version unknown"), "; ".join(str(u) for u in unread)))
    port_mode, qos, roce_mode = [], [], []
    for nic in rdma_nics:
        hw = hw_nics.get(nic["name"]) or {}
        want = "ETH" if nic["kind"] == "ethernet" else "IB"
        next_boot = (hw.get("link_type") or {}).get("next_boot")
        if manage_port_mode and next_boot is not None and next_boot != want:
            port_mode.append({"name": nic["name"], "device": hw.get("pci") or nic.get("rdma_device"),
                              "rdma_device": nic.get("rdma_device"), "port": _port(hw), "want": want,
                              "code": 2 if want == "ETH" else 1})
        if nic.get("roce") != "lossless":
            continue
        have = hw.get("qos")
        if not have or have.get("trust") != "dscp" or have.get("pfc_priorities") != [int(pfc_priority)]:
            qos.append({"name": nic["name"]})
        if hw.get("roce_mode") != "RoCE v2":
            roce_mode.append({"name": nic["name"], "rdma_device": nic.get("rdma_device"), "port": _port(hw)})
    reboot = link_layer_mismatch(rdma_nics, dgx_hw)
    return {"refused": refused, "port_mode": port_mode, "reboot_needed": reboot, "qos": qos, "roce_mode": roce_mode,
            "any": bool(port_mode or qos or roce_mode or reboot)}


def _problem_adder(problems: List[Dict[str, Any]], nic: Dict[str, Any]) -> Any:
    def add(text: str, unread: Optional[str] = None) -> None:
        item = {"nic": nic["name"], "rdma_device": nic.get("rdma_device"), "text": text}
        if unread:  # the state could not be read: not verified, rather than found wrong; a finding's words for it
            item.update(unread=True, cause=unread)
        problems.append(item)
    return add


UNVERIFIED = ": the NIC's %s could not be verified (model: %s)"


def _quoted(lines: Any) -> str:
    """A tool's lines as the problem quotes them: 'a'; 'b'."""
    return "; ".join("'%s'" % str(x).strip() for x in lines if str(x).strip())


def _lossless_problems(add: Any, nic: Dict[str, Any], hw: Dict[str, Any], pfc_priority: int) -> None:
    """A RoCE-lossless NIC's trust DSCP, PFC on exactly ``pfc_priority`` and RDMA-CM RoCE v2, each found wrong
    or, where the tool could not read it, said so in the tool's own words (dgx_hw_facts passes them on: the
    ``qos`` fact's ``unsupported``/``notices``, ``qos_failed``/``qos_error``, ``roce_mode_messages``,
    ``roce_mode_failed``/``roce_mode_error``): "mlnx_qos on mlx5_1 (enp12s0) said 'Priority trust state is not
    supported on your system': the NIC's QoS trust could not be verified (model: trust dscp)". Such a problem is
    ``unread`` (with a ``cause`` in a finding's words): a state that cannot be read is not a pass, nor is it a
    wrong value."""
    label = "%s (%s)" % (nic["name"], nic.get("rdma_device"))
    device = hw.get("rdma_device") or nic.get("rdma_device")
    qos_tool = "mlnx_qos on %s (%s)" % (device, nic["name"])
    pfc_model = "PFC on priority %d only" % pfc_priority
    qos = hw.get("qos")
    failed = hw.get("qos_failed") or hw.get("qos_error")
    if not qos and failed:  # mlnx_qos exited non-zero ('ETS features are not supported ...') or was unreadable
        add("%s: %s%s" % (qos_tool, failed, UNVERIFIED % ("QoS trust and PFC", "trust dscp, " + pfc_model)),
            "QoS trust and PFC not verified, mlnx_qos: %s" % failed)
    else:
        qos = qos or {}
        if qos.get("trust") is None and "trust" in (qos.get("unsupported") or []):
            said = [x for x in qos.get("notices") or [] if "trust" in str(x).lower()] or ["Priority trust state: none"]
            add("%s said %s%s" % (qos_tool, _quoted(said), UNVERIFIED % ("QoS trust", "trust dscp")),
                "QoS trust not verified, mlnx_qos said %s" % _quoted(said))
        elif qos.get("trust") != "dscp":
            add("%s: QoS trust %s, model dscp" % (label, qos.get("trust")))
        if qos.get("pfc_priorities") != [pfc_priority]:
            add("%s: PFC on priorities %s, model [%d]" % (label, qos.get("pfc_priorities"), pfc_priority))
    cma_tool = "cma_roce_mode on %s port %s (%s)" % (device, _port(hw), nic["name"])
    failed = hw.get("roce_mode_failed") or hw.get("roce_mode_error")
    said = hw.get("roce_mode_messages") or []
    if hw.get("roce_mode") is None and failed:  # it exited 1 ('Device mlx5_9 port 1 does not exist') or unreadable
        add("%s: %s%s" % (cma_tool, failed, UNVERIFIED % ("RDMA-CM RoCE mode", "RoCE v2")),
            "RDMA-CM RoCE mode not verified, cma_roce_mode: %s" % failed)
    elif hw.get("roce_mode") != "RoCE v2":
        add("%s: RDMA-CM RoCE mode %s, model RoCE v2%s" % (label, hw.get("roce_mode"), (
            " (%s said %s before it)" % (cma_tool, _quoted(said))) if said else ""))


def rdma_problem_items(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any],
                       pfc_priority: int = 3) -> List[Dict[str, Any]]:
    """Compare the RDMA hardware facts (dgx_hw_facts) with the NIC plan: link layer matches the fabric's
    kind, port active; on RoCE-lossless fabrics trust DSCP, PFC on exactly ``pfc_priority``, RoCEv2, and a
    RoCEv2 IPv4 GID for the NIC's address. One item per problem: ``nic``, ``rdma_device`` (the model's) and
    ``text`` (the line naming the NIC), and ``unread: True`` where the state could not be read (the tool's words
    in the text: :func:`_lossless_problems`)."""
    problems: List[Dict[str, Any]] = []
    hw_nics = (dgx_hw or {}).get("nics") or {}
    for nic in rdma_nics:
        hw = hw_nics.get(nic["name"])
        label = "%s (%s)" % (nic["name"], nic.get("rdma_device"))
        add = _problem_adder(problems, nic)
        if hw is None:
            add("%s: no RDMA device behind this NIC" % label)
            continue
        if nic.get("rdma_device") and hw.get("rdma_device") and hw["rdma_device"] != nic["rdma_device"]:
            add("%s: ibdev2netdev maps %s to this NIC, model %s" % (label, hw["rdma_device"], nic["rdma_device"]))
        want = "Ethernet" if nic["kind"] == "ethernet" else "InfiniBand"
        if hw.get("link_layer") and hw["link_layer"] != want:
            pending = (hw.get("link_type") or {}).get("next_boot")
            add("%s: link layer %s, model %s%s" % (label, hw["link_layer"], want, (
                " (port mode set to %s: reboot required)" % pending) if pending else ""))
        if hw.get("port_state") and hw["port_state"] != "PORT_ACTIVE":
            add("%s: RDMA port %s, not PORT_ACTIVE" % (label, hw["port_state"]))
        if nic.get("roce") == "lossless":
            _lossless_problems(add, nic, hw, pfc_priority)
            if hw.get("gid_error"):
                add("%s: %s" % (label, hw["gid_error"]))
    return problems


def rdma_problems(rdma_nics: List[Dict[str, Any]], dgx_hw: Dict[str, Any], pfc_priority: int = 3) -> List[str]:
    """The lines of :func:`rdma_problem_items`: one per problem, naming the NIC."""
    return [p["text"] for p in rdma_problem_items(rdma_nics, dgx_hw, pfc_priority)]
