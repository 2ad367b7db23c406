# -*- coding: utf-8 -*-
"""Structured switch configuration derived from the pod model (pure functions, stdlib only).

``structured_config(model, switch)`` turns the pod model (``pod.types.model_from_hostvars``) into one
vendor-neutral dict per switch: hostname, management address, host-facing interfaces (speed, MTU,
description and lossless QoS taken from the cabled NICs), port-channels, static routes, spanning tree,
RoCE QoS, the InfiniBand subnet manager and the raw-CLI escape hatch. The role writes it to
``build/<switch>/structured.yml`` and renders it with one template per platform.

Cabling is stated once, on the NICs (``nics[].switch``/``switch_port``); a switch's own ``switch`` dict adds
per-port overrides, port-channels and routes (docs/pod-model.md). Preflight has validated the model
before this runs; the functions here still fail with a clear ``ValueError`` on what they cannot use.
"""
from __future__ import annotations

import ipaddress
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.mtu import (ETHERNET_OVERHEAD, fits_port,
    frame_bytes, headroom)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import SWITCH_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod, switch_port_mtu, vlan_id
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.model import check_switch_l3, Finding

# Host side of lossless RoCE (REFERENCE_FACTS / docs/pod-model.md): trust DSCP, PFC on priority 3.
ROCE_PFC_PRIORITY = 3
ROCE_TRUST = "dscp"

# Per platform: the management interface, the LAG interface name pattern and the netmiko device type.
PLATFORM_INFO: Dict[str, Dict[str, str]] = {
    "eos": {"mgmt": "Management1", "lag": "Port-Channel%d", "device_type": "arista_eos"},
    "onyx": {"mgmt": "mgmt0", "lag": "port-channel %d", "device_type": "mellanox_mlnxos"},
    "cumulus": {"mgmt": "eth0", "lag": "bond%d", "device_type": "cumulus_linux"},
    "mlnx-ib": {"mgmt": "mgmt0", "lag": "", "device_type": "mellanox_mlnxos"},
}

DEFAULT_OPTIONS: Dict[str, Any] = {
    "spanning_tree_mode": "mstp",  # EOS/Onyx; 004 lists `spanning-tree mode mstp`
    "pfc_priority": ROCE_PFC_PRIORITY,
    "ib_subnet_manager": "auto",  # auto: on for the first InfiniBand switch (by name) of the pod, off on the others
}


def connection_argument_spec() -> Dict[str, Dict[str, Any]]:
    """The argument spec every switch module shares (switch_config, switch_validate): which switch, how to log in,
    how long to wait. A fresh dict each call (modules add their own options to it)."""
    return dict(
        platform=dict(type="str", required=True, choices=["eos", "onyx", "cumulus", "mlnx-ib"]),
        host=dict(type="str", required=True),
        port=dict(type="int", default=22),
        name=dict(type="str"),
        username=dict(type="str", required=True),
        password=dict(type="str", required=True, no_log=True),
        enable_secret=dict(type="str", no_log=True),
        config=dict(type="str", required=True),
        lossless_expect=dict(type="dict", default={}),
        host_key_checking=dict(type="bool", default=True),
        known_hosts_file=dict(type="path"),
        connect_timeout=dict(type="int", default=10),
        command_timeout=dict(type="int", default=60),
    )


def switch_module(name: str, **options: Dict[str, Any]) -> Any:
    """The AnsibleModule of a switch module (switch_config, switch_validate): the connection options plus the
    module's own, check mode supported. It fails naming what to install when netmiko or hier_config is missing on
    the controller (switch_push and switch_diff import them only when they talk to a switch or diff a config)."""
    import importlib.util

    from ansible.module_utils.basic import AnsibleModule  # only the modules come here (not the filters)

    module = AnsibleModule(argument_spec=dict(connection_argument_spec(), **options), supports_check_mode=True)
    missing = [m for m in ("netmiko", "hier_config") if importlib.util.find_spec(m) is None]
    if missing:
        module.fail_json(msg="%s needs netmiko and hier_config on the controller (bash scripts/setup.sh): %s not "
                             "installed" % (name, " and ".join(missing)))
    return module


def _port_index(model_name: str, port: str) -> int:
    ports = SWITCH_MODELS[model_name].ports
    return ports.index(port) if port in ports else len(ports)


def cabling(model: Dict[str, Any], pod: Optional[Pod] = None) -> Dict[str, List[Dict[str, Any]]]:
    """{switch: every NIC cabled to it} in one pass over the pod (see :func:`cabled_nics`)."""
    pod = pod or Pod.from_model(model)
    return {switch: [{"host": n.host, "nic": n.name, "index": n.index, "port": n.switch_port,
                      "fabric": n.fabric.name, "kind": n.fabric.kind, "speed": n.speed, "host_mtu": n.mtu,
                      "roce": n.fabric.roce, "address": n.address} for n in nics]
            for switch, nics in pod.cabling().items()}


def cabled_nics(model: Dict[str, Any], switch: str) -> List[Dict[str, Any]]:
    """Every NIC of the pod cabled to ``switch``: [{host, nic, port, fabric, speed, host_mtu, roce}]."""
    return cabling(model).get(switch, [])


def _management(pod: Pod, switch_vars: Dict[str, Any], platform: str) -> Optional[Dict[str, Any]]:
    """The switch's management address: its ansible_host, when a management fabric of the pod holds it."""
    try:
        addr = ipaddress.IPv4Address(str(switch_vars.get("ansible_host", "")).strip())
    except ValueError:
        return None
    for fab in pod.fabrics_carrying("management"):
        if addr in fab.subnet:
            return {"interface": PLATFORM_INFO[platform]["mgmt"], "address": str(addr),
                    "prefix_length": fab.subnet.prefixlen, "fabric": fab.name}
    return None


def _first_ib_switch(model: Dict[str, Any]) -> Optional[str]:
    ib = sorted(h for h, info in (model.get("hosts") or {}).items()
                if ((info.get("vars") or {}).get("switch") or {}).get("platform") == "mlnx-ib")
    return ib[0] if ib else None


def _ib_subnet_manager(switch: str, option: Any, first_ib_switch: Optional[str]) -> bool:
    if isinstance(option, bool):
        return option
    return first_ib_switch is not None and first_ib_switch == switch


class _PodIndex:
    """What every switch's config reads from the whole pod, computed once for a fabric of switches."""

    def __init__(self, model: Dict[str, Any]):
        self.pod = Pod.from_model(model)
        self.cabling = cabling(model, self.pod)
        self.first_ib_switch = _first_ib_switch(model)


def structured_config(model: Dict[str, Any], switch: str, options: Optional[Dict[str, Any]] = None,
                      index: Optional[_PodIndex] = None) -> Dict[str, Any]:
    """The structured (vendor-neutral) configuration of one switch. See docs/switches.md for the keys.
    ``index``: the pod-wide lookups, when many switches of one model are built (structured_configs)."""
    index = index or _PodIndex(model)
    opts = dict(DEFAULT_OPTIONS, **{k: v for k, v in (options or {}).items() if v is not None})
    hosts = model.get("hosts") or {}
    if switch not in hosts:
        raise ValueError("%s is not a host of the inventory" % switch)
    hvars = hosts[switch].get("vars") or {}
    sw = hvars.get("switch")
    if not isinstance(sw, dict) or sw.get("model") not in SWITCH_MODELS:
        raise ValueError("%s has no valid switch: {platform, model} (run playbooks/preflight.yml)" % switch)
    catalogue = SWITCH_MODELS[sw["model"]]
    platform = sw.get("platform") or catalogue.platform
    if platform not in PLATFORM_INFO:
        raise ValueError("%s: unknown platform %r" % (switch, platform))
    ethernet = catalogue.max_mtu is not None
    problems = [f for f in check_switch_l3(switch, sw) if f.severity == "error"]
    if problems:
        raise ValueError("%s: %s: %s" % (switch, problems[0].path, problems[0].message))
    pfc = int(opts["pfc_priority"])
    overrides: Dict[str, Dict[str, Any]] = {p: dict(c or {}) for p, c in (sw.get("ports") or {}).items()}

    interfaces: Dict[str, Dict[str, Any]] = {}

    def port_entry(port: str) -> Dict[str, Any]:
        if port not in interfaces:
            entry: Dict[str, Any] = {"name": port}
            if ethernet:
                entry["mtu"] = switch_port_mtu(sw, port)
            interfaces[port] = entry
        return interfaces[port]

    for cab in index.cabling.get(switch, []):
        entry = port_entry(cab["port"])
        entry["description"] = "%s %s" % (cab["host"], cab["nic"])
        entry["peer"] = {"host": cab["host"], "nic": cab["nic"], "fabric": cab["fabric"], "host_mtu": cab["host_mtu"]}
        if cab["speed"]:
            entry["speed"] = int(cab["speed"])
        if ethernet and cab["roce"] == "lossless":
            entry["lossless"] = True

    port_channels = []
    any_lossless = any(i.get("lossless") for i in interfaces.values())
    for pc in sw.get("port_channels") or []:
        pc_id = int(pc["id"])
        name = PLATFORM_INFO[platform]["lag"] % pc_id if PLATFORM_INFO[platform]["lag"] else "lag%d" % pc_id
        peer = pc.get("peer")
        mode = pc.get("mode") or "active"
        desc = "peer link to %s" % peer if peer else "port-channel %d" % pc_id
        members = list(pc.get("members") or [])
        entry = {"id": pc_id, "name": name, "members": members, "mode": mode, "description": desc}
        if peer:
            entry["peer"] = peer
        if ethernet:
            entry["mtu"] = sw.get("mtu") or catalogue.max_mtu
        port_channels.append(entry)
        for m in members:
            member = port_entry(m)
            member["description"] = "%s member%s" % (name, " (%s)" % desc if peer else "")
            member["speed"] = catalogue.top_speed
            member["channel_group"] = {"id": pc_id, "mode": mode}
            if any_lossless:
                member["lossless"] = True  # lossless end to end if traffic ever crosses the inter-switch link

    for port, cfg in overrides.items():  # per-port overrides win over what the cabling derived
        entry = port_entry(port)
        for key in ("speed", "mtu", "description"):
            if cfg.get(key) is not None:
                entry[key] = cfg[key]
        if ethernet and cfg.get("vlan") is not None:
            entry["vlan"] = int(cfg["vlan"])
        if ethernet and cfg.get("address") is not None:
            entry["address"] = str(ipaddress.IPv4Interface(str(cfg["address"]).strip()))

    ordered = [interfaces[p] for p in sorted(interfaces, key=lambda p: (_port_index(sw["model"], p), p))]
    for entry in ordered:
        if entry.get("lossless"):
            entry["qos"] = {"trust": ROCE_TRUST, "pfc_priority": pfc}
        peer = entry.get("peer") or {}
        if ethernet and peer.get("host_mtu") and entry.get("mtu"):
            entry["mtu_headroom"] = headroom(peer["host_mtu"], entry["mtu"])

    vlans = []
    for key, vcfg in sorted((sw.get("vlans") or {}).items(), key=lambda kv: vlan_id(kv[0]) or 0):
        vcfg = vcfg or {}
        vlan: Dict[str, Any] = {"id": vlan_id(key)}
        if vcfg.get("name"):
            vlan["name"] = vcfg["name"]
        if vcfg.get("address") is not None:
            iface = ipaddress.IPv4Interface(str(vcfg["address"]).strip())
            vlan["address"] = str(iface)
            vlan["subnet"] = str(iface.network)
        vlans.append(vlan)

    routes = []
    for r in sw.get("routes") or []:
        route = {"prefix": str(ipaddress.IPv4Network(r["prefix"], strict=False)), "next_hop": r["next_hop"]}
        routes.append(route)

    out: Dict[str, Any] = {
        "hostname": switch,
        "platform": platform,
        "model": sw["model"],
        "device_type": PLATFORM_INFO[platform]["device_type"],
        "pod": (model.get("pod") or {}).get("name"),
    }
    mgmt = _management(index.pod, hvars, platform)
    if mgmt:
        out["management"] = mgmt
    if ethernet:
        if platform in ("eos", "onyx") and opts.get("spanning_tree_mode"):
            out["spanning_tree"] = {"mode": opts["spanning_tree_mode"]}
        # routes, SVIs or routed ports make the switch a router
        out["routing"] = bool(routes) or any("address" in v for v in vlans) or \
            any("address" in i for i in ordered)
        if any(i.get("lossless") for i in ordered):
            out["qos"] = {"roce": "lossless", "trust": ROCE_TRUST, "pfc_priority": pfc}
    else:
        out["subnet_manager"] = _ib_subnet_manager(switch, opts.get("ib_subnet_manager"), index.first_ib_switch)
    out["vlans"] = vlans if ethernet else []
    out["interfaces"] = ordered
    out["port_channels"] = port_channels
    out["routes"] = routes
    out["raw_cli"] = list(sw.get("raw_cli") or [])
    return out


def structured_configs(model: Dict[str, Any], options: Optional[Dict[str, Any]] = None) -> Dict[str, Dict[str, Any]]:
    """Structured config of every switch of the pod (hosts in group ``switches``); the pod-wide lookups are
    made once, so a fabric of N switches costs O(N), not O(N^2)."""
    index = _PodIndex(model)
    return {h: structured_config(model, h, options, index) for h, info in sorted((model.get("hosts") or {}).items())
            if "switches" in (info.get("groups") or [])}


def cross_check(model: Dict[str, Any], options: Optional[Dict[str, Any]] = None,
                host_pfc_priority: int = ROCE_PFC_PRIORITY,
                switch_options: Optional[Dict[str, Dict[str, Any]]] = None,
                host_pfc_priorities: Optional[Dict[str, Any]] = None) -> List[Any]:
    """Host/switch cross-checks for preflight, as ``preflight.schema.Finding`` objects (one per mismatching NIC):

    - the port MTU the switch will get must hold the host MTU + 18 bytes of headers;
    - a NIC on a ``roce: lossless`` fabric must land on a port with PFC on the hosts' priority
      (``host_pfc_priority``, or the host's own entry in ``host_pfc_priorities``), and a port with PFC must
      face a lossless NIC.
    ``switch_options`` ({switch: switch_config_options}) overrides ``options`` per switch, as the role does with
    each switch's own variables. Each finding names the switch, the port, the host and the NIC."""
    out = []
    index = _PodIndex(model)
    for switch, info in sorted((model.get("hosts") or {}).items()):
        sw = (info.get("vars") or {}).get("switch")
        if "switches" not in (info.get("groups") or []) or not isinstance(sw, dict) or \
                sw.get("model") not in SWITCH_MODELS or SWITCH_MODELS[sw["model"]].max_mtu is None:
            continue
        own = (switch_options or {}).get(switch)
        cfg = structured_config(model, switch, dict(options or {}, **(own if isinstance(own, dict) else {})), index)
        by_port = {c["port"]: c for c in index.cabling.get(switch, [])}
        svi = {v["id"]: v for v in cfg.get("vlans") or [] if v.get("subnet")}
        for port in cfg["interfaces"]:
            peer = port.get("peer")
            if not peer or port["name"] not in by_port:
                continue
            cab = by_port[port["name"]]
            path = "nics[%d].switch_port" % cab["index"]
            who = "%s %s (host %s NIC %s)" % (switch, port["name"], peer["host"], peer["nic"])
            if peer.get("host_mtu") and port.get("mtu") and not fits_port(peer["host_mtu"], port["mtu"]):
                out.append(Finding(peer["host"], "nics", path, "MTU mismatch on %s: host MTU %d + %d bytes of "
                                   "headers does not fit the port MTU %d" % (who, peer["host_mtu"],
                                                                             ETHERNET_OVERHEAD, port["mtu"]),
                                   "raise switch.ports.%s.mtu (or switch.mtu) to at least %d, or lower the host "
                                   "MTU" % (port["name"], frame_bytes(peer["host_mtu"]))))
            subnet_finding = _l3_mismatch(port, cab, svi, who)
            if subnet_finding:
                out.append(Finding(peer["host"], "nics", "nics[%d].address" % cab["index"], *subnet_finding))
            lossless = cab["roce"] == "lossless"
            prio = (port.get("qos") or {}).get("pfc_priority")
            host_prio = int((host_pfc_priorities or {}).get(peer["host"], host_pfc_priority))
            if lossless and prio != host_prio:
                finding = Finding(peer["host"], "nics", path, "PFC mismatch on %s: the host uses PFC priority %d, "
                                  "the switch port %s" % (who, host_prio,
                                                          "priority %s" % prio if prio is not None else "no PFC"),
                                  "set switch_config_options.pfc_priority of %s to %d (the host's priority), or "
                                  "dgx_network_pfc_priority of %s to %s" % (switch, host_prio, peer["host"], prio))
                # the value to edit: the host's own priority when the inventory sets one, else the switch's own;
                # preflight moves the finding there when that is a group_vars line (one finding, not one per NIC)
                if peer["host"] in (host_pfc_priorities or {}):
                    finding.cause = (peer["host"], "dgx_network_pfc_priority", "dgx_network_pfc_priority",
                                     "set dgx_network_pfc_priority to %s here (every host of the group inherits it), "
                                     "or the switches' switch_config_options.pfc_priority to %d" % (prio, host_prio))
                elif isinstance(own, dict) and own.get("pfc_priority") is not None:
                    finding.cause = (switch, "switch_config_options", "switch_config_options.pfc_priority",
                                     "set switch_config_options.pfc_priority to %d here (the hosts' priority; every "
                                     "switch of the group inherits it)" % host_prio)
                out.append(finding)
            elif not lossless and prio is not None and not port.get("channel_group"):
                out.append(Finding(peer["host"], "nics", path, "PFC mismatch on %s: the port has PFC priority %s "
                                   "but fabric %s is not lossless" % (who, prio, cab["fabric"]),
                                   "set roce: lossless on the fabric or take PFC off the port"))
    return out


def _l3_mismatch(port: Dict[str, Any], cab: Dict[str, Any], svi: Dict[int, Dict[str, Any]], who: str):
    """(message, fix) when the NIC's address is outside the subnet of the port's VLAN SVI or routed address."""
    try:
        addr = ipaddress.IPv4Address(str(cab.get("address") or "").strip())
    except ValueError:
        return None
    if port.get("vlan") in svi:
        vlan = svi[port["vlan"]]
        net = ipaddress.IPv4Network(vlan["subnet"])
        where = "the SVI subnet %s of VLAN %d" % (net, vlan["id"])
    elif port.get("address"):
        net = ipaddress.IPv4Interface(port["address"]).network
        where = "the routed port's subnet %s" % net
    else:
        return None
    if addr in net:
        return None
    return ("VLAN subnet mismatch on %s: the NIC address %s is not inside %s" % (who, addr, where),
            "give the NIC an address in %s, or put the switch port on the VLAN of the NIC's subnet" % net)
