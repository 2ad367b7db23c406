# -*- coding: utf-8 -*-
"""Preflight checks of the switches in the pod model: models and ports, port-channels, VLANs and routed
ports (check_switch_l3), and the cabling of every NIC to a switch port (split out of preflight/model.py, issue 13);
the MTU a NIC has in the model (host_mtu; a switch port's, switch_port_mtu, is the model's own: pod/types.py). The
hardware is the catalogue's (module_utils/catalog/)."""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.mtu import (ETHERNET_OVERHEAD, fits_port,
    frame_bytes, max_host_mtu)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (PLATFORMS, port_lanes,
    SWITCH_MODELS, SwitchModel)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import switch_port_mtu, vlan_id
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding, ip_of, ipif_of


def host_mtu(nic: Dict[str, Any], fabric: Dict[str, Any]) -> int:
    """A NIC's MTU in the model: its own, else its fabric's."""
    return int(nic.get("mtu") or fabric["mtu"])


def _port_fix(model: SwitchModel) -> str:
    return "use a port of this model (%s ... %s)" % (model.ports[0], model.ports[-1])


def _lane_words(model: SwitchModel, port: str, lanes: frozenset) -> str:
    if len(lanes) == 4:
        return "%s uses the whole port" % port
    if model.platform == "eos" and len(lanes) > 1:
        return "%s uses lanes %s" % (port, ", ".join(str(n) for n in sorted(lanes)))
    return "%s is a breakout lane" % port


def _usable_parts(sw: Dict[str, Any]) -> None:
    """Drop what the schema check rejected (``ports`` as a list, ``mtu: "9214"``, ``members: Ethernet31/1``) so
    the cross-checks read only well-typed values: the schema finding names the mistake, a TypeError would not."""
    if not isinstance(sw.get("ports"), dict):
        sw.pop("ports", None)
    else:
        sw["ports"] = {p: c for p, c in sw["ports"].items() if isinstance(c, dict) or c is None}
        for port, cfg in sw["ports"].items():
            if isinstance(cfg, dict) and any(not _int(cfg.get(k)) for k in ("mtu", "speed") if cfg.get(k) is not None):
                sw["ports"][port] = {k: v for k, v in cfg.items() if k not in ("mtu", "speed") or _int(v)}
    if sw.get("mtu") is not None and not _int(sw["mtu"]):
        sw.pop("mtu")
    if not isinstance(sw.get("port_channels"), list):
        sw.pop("port_channels", None)
    else:
        sw["port_channels"] = [pc for pc in sw["port_channels"] if isinstance(pc, dict)
                               and isinstance(pc.get("members") or [], list)]
    if not isinstance(sw.get("routes"), list):
        sw.pop("routes", None)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_switches(switches: Dict[str, Dict[str, Any]], usable: Dict[str, Dict[str, Any]],
                    fabrics: Dict[str, Dict[str, Any]], out: List[Finding],
                    switch_hosts: Optional[set] = None) -> None:
    for name, sw in switches.items():
        _usable_parts(sw)
        model = SWITCH_MODELS[sw["model"]]
        if sw.get("platform") in PLATFORMS and sw["platform"] != model.platform:
            out.append(Finding(name, "switch", "switch.platform", "model %s runs %s, not %s" % (
                sw["model"], model.platform, sw["platform"]), "set platform: %s" % model.platform))
        mtu = sw.get("mtu")
        if isinstance(mtu, int):
            if model.max_mtu is None:
                out.append(Finding(name, "switch", "switch.mtu", "an InfiniBand switch has no Ethernet MTU",
                                   "remove mtu"))
            elif mtu > model.max_mtu:
                out.append(Finding(name, "switch", "switch.mtu", "%d is above the %s maximum of %d" % (
                    mtu, sw["model"], model.max_mtu), "use %d or less" % model.max_mtu))
        for port, cfg in (sw.get("ports") or {}).items():
            if port not in model.ports:
                out.append(Finding(name, "switch", "switch.ports.%s" % port, "port does not exist on a %s"
                                   % sw["model"], _port_fix(model)))
            elif isinstance(cfg, dict) and isinstance(cfg.get("mtu"), int) and model.max_mtu and \
                    cfg["mtu"] > model.max_mtu:
                out.append(Finding(name, "switch", "switch.ports.%s.mtu" % port, "%d is above the %s maximum "
                                   "of %d" % (cfg["mtu"], sw["model"], model.max_mtu),
                                   "use %d or less" % model.max_mtu))
        members_seen: Dict[str, str] = {}
        ids_seen: Dict[int, int] = {}
        for i, pc in enumerate(sw.get("port_channels") or []):
            if not isinstance(pc, dict):
                continue
            if _int(pc.get("id")):
                if pc["id"] in ids_seen:
                    out.append(Finding(name, "switch", "switch.port_channels[%d].id" % i, "Port-Channel%d is "
                                       "defined twice on this switch (also port_channels[%d]): the switch makes one "
                                       "channel of both entries' members" % (pc["id"], ids_seen[pc["id"]]),
                                       "give each port-channel its own id (or merge the two entries' members)"))
                ids_seen.setdefault(pc["id"], i)
            for j, member in enumerate(pc.get("members") or []):
                path = "switch.port_channels[%d].members[%d]" % (i, j)
                if not isinstance(member, str):
                    continue  # the schema check reports it
                if member not in model.ports:
                    out.append(Finding(name, "switch", path, "port '%s' does not exist on a %s" % (
                        member, sw["model"]), _port_fix(model)))
                elif member in members_seen:
                    out.append(Finding(name, "switch", path, "port %s is already a member of %s" % (
                        member, members_seen[member]), "use each port in one port-channel only"))
                members_seen[member] = "Port-Channel%s" % pc.get("id")
            peer = pc.get("peer")
            if peer is not None and peer not in switches and peer not in (switch_hosts or ()):
                out.append(Finding(name, "switch", "switch.port_channels[%d].peer" % i,
                                   "'%s' is not a switch in this inventory" % peer,
                                   "name a host of group 'switches'"))
        sw["_pc_members"] = members_seen
        lanes: Dict[int, List[Tuple[str, frozenset, str]]] = {}
        for member, channel in members_seen.items():
            cfg = (sw.get("ports") or {}).get(member)
            got = port_lanes(model, member, cfg.get("speed") if isinstance(cfg, dict) else None)
            if got is not None:
                lanes.setdefault(got[0], []).append((member, got[1], "%s (inter-switch link)" % channel))
        sw["_lanes"] = lanes
        out.extend(check_switch_l3(name, sw))
        for i, route in enumerate(sw.get("routes") or []):
            hop = ip_of(route.get("next_hop")) if isinstance(route, dict) else None
            if hop is not None and fabrics and not any(hop in f["_net"] for f in fabrics.values()):
                out.append(Finding(name, "switch", "switch.routes[%d].next_hop" % i,
                                   "%s is not inside any fabric of the pod" % hop,
                                   "check the address, or model the fabric it belongs to", "warning"))
    check_peer_links(switches, out)


_LACP = ("active", "passive")


def check_peer_links(switches: Dict[str, Dict[str, Any]], out: List[Finding]) -> None:
    """The two ends of an inter-switch (MLAG peer) link agree: the same LACP mode (the renderer's default is
    active), at least one end active, and the same number of member links."""
    ends: Dict[Tuple[str, str], Tuple[int, Dict[str, Any]]] = {}
    for name, sw in switches.items():
        for i, pc in enumerate(sw.get("port_channels") or []):
            if isinstance(pc, dict) and isinstance(pc.get("peer"), str) and pc["peer"] in switches:
                ends.setdefault((name, pc["peer"]), (i, pc))
    for (name, peer), (i, pc) in sorted(ends.items()):
        if (peer, name) not in ends or name > peer:
            continue  # the far end is not modelled (no finding: it may be an unmanaged switch) or seen already
        j, other = ends[(peer, name)]
        mode, other_mode = pc.get("mode") or "active", other.get("mode") or "active"
        if not all(isinstance(m, str) for m in (mode, other_mode)):
            continue  # the schema check reports it
        where = "switch.port_channels[%d].mode" % j
        if mode != other_mode:
            static = "on" in (mode, other_mode)
            out.append(Finding(peer, "switch", where, "the peer link to %s is '%s' here but '%s' on %s (its "
                               "port_channels[%d]): %s" % (
                                   name, other_mode, mode, name, i,
                                   "a static channel ('on') sends no LACP, so the LACP end never bundles the links"
                                   if static else "both ends of a peer link run LACP the same way (the RAs: active "
                                   "on both)"),
                               "set mode: %s on both ends (%s port_channels[%d] and this one)" % (
                                   "active" if "active" in (mode, other_mode) else mode, name, i)))
        elif mode == "passive":
            out.append(Finding(peer, "switch", where, "both ends of the peer link to %s are LACP passive: neither "
                               "starts the negotiation, so the channel never comes up" % name,
                               "set mode: active on both ends"))
        members, other_members = pc.get("members") or [], other.get("members") or []
        if isinstance(members, list) and isinstance(other_members, list) and members and other_members \
                and len(members) != len(other_members):
            out.append(Finding(peer, "switch", "switch.port_channels[%d].members" % j, "the peer link to %s has %d "
                               "member(s) here but %d on %s: a cable has one port at each end" % (
                                   name, len(other_members), len(members), name),
                               "list the same number of member ports on both switches (one per cable)"))


_VLAN_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


def check_switch_l3(name: str, sw: Dict[str, Any]) -> List[Finding]:
    """VLANs, SVI and routed-port addresses of one switch (``switch.vlans``, ``switch.ports.<p>.vlan|address``).

    Findings name the switch and the key: VLAN ids outside 1..4094, bad names, addresses that are not an
    interface address in CIDR form or are the subnet's network/broadcast address, a port on an undeclared
    VLAN, a port with both a VLAN and an address, VLANs/addresses on port-channel members or on an
    InfiniBand switch, and overlapping subnets of two L3 interfaces (SVIs and routed ports) of the switch."""
    out: List[Finding] = []
    model = SWITCH_MODELS.get(sw.get("model"))
    vlans = sw.get("vlans")
    ports = sw.get("ports") if isinstance(sw.get("ports"), dict) else {}
    if vlans is not None and not isinstance(vlans, dict):
        return out  # the schema check reports it
    vlans = vlans or {}
    if model is not None and model.max_mtu is None:
        if vlans:
            out.append(Finding(name, "switch", "switch.vlans", "an InfiniBand switch has no VLANs",
                               "remove vlans from this switch"))
        for port, cfg in ports.items():
            for key in ("vlan", "address"):
                if isinstance(cfg, dict) and cfg.get(key) is not None:
                    out.append(Finding(name, "switch", "switch.ports.%s.%s" % (port, key), "an InfiniBand switch "
                                       "port has no %s" % ("VLAN" if key == "vlan" else "IP address"),
                                       "remove %s" % key))
        return out
    l3: List[Tuple[str, ipaddress.IPv4Interface]] = []
    declared = set()
    for key, cfg in vlans.items():
        path = "switch.vlans.%s" % key
        vid = vlan_id(key)
        if vid is None:
            out.append(Finding(name, "switch", path, "VLAN id %r is not an integer in 1..4094" % (key,),
                               "use a VLAN id from 1 to 4094"))
            continue
        if vid in declared:
            out.append(Finding(name, "switch", path, "VLAN %d is declared twice" % vid, "declare it once"))
        declared.add(vid)
        if not isinstance(cfg, dict):
            continue
        vname = cfg.get("name")
        if isinstance(vname, str) and not _VLAN_NAME_RE.match(vname):
            out.append(Finding(name, "switch", path + ".name", "%r is not a usable VLAN name" % vname,
                               "use letters, digits, '_', '-', '.' (1-32 characters)"))
        if cfg.get("address") is not None:
            addr = ipif_of(cfg["address"])
            if addr is not None:
                l3.append((path + ".address", addr))
    members = set()
    for pc in sw.get("port_channels") or []:
        if isinstance(pc, dict):
            members.update(m for m in pc.get("members") or [] if isinstance(m, str))
    for port, cfg in ports.items():
        if not isinstance(cfg, dict):
            continue
        path = "switch.ports.%s" % port
        vid, addr = cfg.get("vlan"), cfg.get("address")
        if vid is not None and addr is not None:
            out.append(Finding(name, "switch", path, "a port is either an access port (vlan %s) or a routed port "
                               "(address %s), not both" % (vid, addr), "remove vlan or address"))
        if (vid is not None or addr is not None) and port in members:
            out.append(Finding(name, "switch", path + (".vlan" if vid is not None else ".address"),
                               "port %s is a port-channel member; its VLAN or address would be ignored" % port,
                               "remove it from the port, or take the port out of the port-channel"))
        if isinstance(vid, int) and not isinstance(vid, bool) and 1 <= vid <= 4094 and vid not in declared:
            out.append(Finding(name, "switch", path + ".vlan", "VLAN %d is not declared in switch.vlans" % vid,
                               "add switch.vlans.%d: {name: ...} or use one of %s" % (
                                   vid, ", ".join(str(v) for v in sorted(declared)) or "(none declared)")))
        if addr is not None and ipif_of(addr) is not None:
            if model is not None and model.platform == "onyx":
                out.append(Finding(name, "switch", path + ".address", "routed ports are not rendered for Onyx by "
                                   "this toolkit", "use a VLAN with an SVI address, or raw_cli"))
            l3.append((path + ".address", ipif_of(addr)))
    for i, (path, addr) in enumerate(l3):
        net = addr.network
        if net.prefixlen < 31 and addr.ip in (net.network_address, net.broadcast_address):
            out.append(Finding(name, "switch", path, "%s is the network or broadcast address of %s" % (addr.ip, net),
                               "use a host address of %s" % net))
        for other_path, other in l3[:i]:
            if net.overlaps(other.network):
                out.append(Finding(name, "switch", path, "subnet %s overlaps %s (%s) on the same switch" % (
                    net, other.network, other_path), "give every VLAN interface and routed port its own subnet"))
    return out


def _port_suggestion(model: Any, port: str) -> str:
    """'did you mean Ethernet2/1?' for ethernet2/1, Et2/1, Eth2/1 or swp01; else the model's port range."""
    text = port.strip()
    if model.platform == "eos":
        text = re.sub(r"(?i)^e(?:t|th|thernet)?\s*(?=\d)", "Ethernet", text)
    elif model.platform == "cumulus":
        text = re.sub(r"(?i)^swp0*(?=\d)", "swp", text)
    same = next((p for p in model.ports if p.lower() == text.lower()), None)  # only a spelling: not Ethernet33/1
    return ("did you mean '%s'? (%s)" % (same, _port_fix(model))) if same else _port_fix(model)


def check_cabling(host: str, path: str, nic: Dict[str, Any], fab: Dict[str, Any],
                   switches: Dict[str, Dict[str, Any]], cabled: Dict[Tuple[str, str], str],
                   out: List[Finding], switch_hosts: Optional[set] = None) -> None:
    sw_name, port = nic.get("switch"), nic.get("switch_port")
    if sw_name is None and port is None:
        return
    if not isinstance(sw_name, (str, type(None))) or not isinstance(port, (str, type(None))) or "" in (sw_name, port):
        return  # the schema check reports the type or the empty value
    if sw_name is None or port is None:
        missing = "switch" if sw_name is None else "switch_port"
        out.append(Finding(host, "nics", path + "." + missing, "a cabled NIC needs both switch and switch_port",
                           "add %s, or remove the other key if the NIC is not cabled to a modelled switch"
                           % missing))
        return
    sw = switches.get(sw_name)
    if sw is None and sw_name in (switch_hosts or ()):
        return  # a switch of the inventory whose own switch variable is wrong: reported on that switch
    if sw is None:
        out.append(Finding(host, "nics", path + ".switch", "'%s' is not a switch in this inventory" % sw_name,
                           "name a host of group 'switches' (with a valid switch.model)"))
        return
    model = SWITCH_MODELS[sw["model"]]
    if port not in model.ports:
        out.append(Finding(host, "nics", path + ".switch_port", "%s has no port '%s' (a %s)" % (
            sw_name, port, sw["model"]), _port_suggestion(model, port)))
        return
    key = (sw_name, port)
    if key in cabled:
        out.append(Finding(host, "nics", path + ".switch_port", "%s %s is already cabled to %s" % (
            sw_name, port, cabled[key]), "cable each switch port to one NIC"))
        return
    cabled[key] = "%s %s (%s)" % (host, nic.get("name"), path)
    port_cfg = (sw.get("ports") or {}).get(port) or {}
    speed = nic.get("speed")
    lanes = port_lanes(model, port, speed if speed is not None else (
        port_cfg.get("speed") if isinstance(port_cfg, dict) else None))
    if lanes is not None:
        cage, used = lanes
        taken = sw.setdefault("_lanes", {}).setdefault(cage, [])
        for other_port, other_used, who in taken:
            if other_used & used and other_port != port:  # the port itself in a port-channel: reported below
                whole, part = ((port, used), (other_port, other_used)) if len(used) >= len(other_used) else (
                    (other_port, other_used), (port, used))
                out.append(Finding(host, "nics", path + ".switch_port", "%s %s is cabled to %s, but the same lanes "
                                   "of port %d are cabled to %s: %s and %s" % (
                                       sw_name, port, "%s %s" % (host, nic.get("name")), cage, who,
                                       _lane_words(model, whole[0], whole[1]), _lane_words(model, part[0], part[1])),
                                   "cable the NIC to a free port, or break the port out and cable one NIC per lane "
                                   "(swpNs0-3, 1/N/1-4, EthernetN/1-4)"))
                break
        taken.append((port, used, "%s %s" % (host, nic.get("name"))))
    if port in sw.get("_pc_members", {}):
        out.append(Finding(host, "nics", path + ".switch_port", "%s %s is a member of %s (inter-switch link)"
                           % (sw_name, port, sw["_pc_members"][port]), "cable the NIC to a free port"))
    is_ib_switch = model.platform == "mlnx-ib"
    if is_ib_switch != (fab["kind"] == "infiniband"):
        out.append(Finding(host, "nics", path + ".switch", "link type mismatch: %s NIC on fabric '%s' is cabled "
                           "to %s, an %s switch" % (fab["kind"], fab["name"], sw_name,
                                                   "InfiniBand" if is_ib_switch else "Ethernet"),
                           "cable it to a switch of the fabric's kind, or fix the fabric's kind"))
        return
    port_speed = port_cfg.get("speed") if isinstance(port_cfg, dict) else None
    if isinstance(speed, int):
        if speed > model.top_speed:
            out.append(Finding(host, "nics", path + ".speed", "%d Gb/s is faster than a %s port (%d Gb/s)" % (
                speed, sw["model"], model.top_speed), "check the NIC speed or the switch model"))
        elif isinstance(port_speed, int) and port_speed != speed:
            out.append(Finding(host, "nics", path + ".speed", "NIC runs at %d Gb/s but %s %s is set to %d Gb/s"
                               % (speed, sw_name, port, port_speed), "make the port and NIC speeds agree"))
    if not is_ib_switch:
        mtu = host_mtu(nic, fab)
        if model.max_mtu is not None and not fits_port(mtu, model.max_mtu):
            # no switch setting can hold it: the host MTU is the value to change (the fabric's, unless the NIC
            # sets its own), reported once on that value
            own = nic.get("mtu") is not None
            out.append(Finding(host, "nics" if own else "pod", path + ".mtu" if own else "pod.fabrics[%d].mtu" %
                               fab["_index"], "host MTU %d + %d bytes of headers is more than a %s port takes (%d): "
                               "%s %s on %s %s" % (mtu, ETHERNET_OVERHEAD, sw["model"], model.max_mtu, host,
                                                   nic.get("name"), sw_name, port),
                               "lower the MTU to %d or less" % max_host_mtu(model.max_mtu),
                               inherited=not own))
            return
        port_mtu = switch_port_mtu(sw, port)
        port_override = isinstance(port_cfg, dict) and port_cfg.get("mtu") is not None
        if port_mtu is not None and not fits_port(mtu, port_mtu) and not port_override \
                and sw.get("mtu") is not None:
            # the switch-wide MTU is too low: one finding on switch.mtu, not one per cabled NIC
            sw.setdefault("_mtu_short", []).append((mtu, "%s %s (%s %s)" % (
                sw_name, port, host, nic.get("name"))))
        elif port_mtu is not None and not fits_port(mtu, port_mtu):
            out.append(Finding(host, "nics", path + ".switch_port", "host MTU %d + %d bytes of headers does not "
                               "fit %s %s (MTU %d)" % (mtu, ETHERNET_OVERHEAD, sw_name, port, port_mtu),
                               "raise the switch port MTU to at least %d (max %s) or lower the host MTU" % (
                                   frame_bytes(mtu), model.max_mtu)))
