# -*- coding: utf-8 -*-
"""Plan the runtime NIC changes (addresses, MTU, link state, default route) - pure functions.

Input is what ``ip -j addr show`` and ``ip -j route show default`` print, and the NIC plan from
``pod_derive.nic_plan``; output is an ordered list of ``ip`` commands plus a human-readable diff.
The interface that carries the controller's SSH connection is protected: its link is never set down
and the address the connection uses is never removed, unless the caller allows it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class Plan:
    commands: List[List[str]] = field(default_factory=list)
    changes: List[Dict[str, str]] = field(default_factory=list)  # {nic, field, before, after}
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.commands)

    def add(self, command: List[str], nic: str, what: str, before: Any, after: Any) -> None:
        self.commands.append(command)
        self.changes.append({"nic": nic, "field": what, "before": str(before), "after": str(after)})

    @property
    def diff(self) -> List[str]:
        """'enp12s0 mtu: 1500 -> 9000' - one line per difference."""
        return ["%s %s: %s -> %s" % (c["nic"], c["field"], c["before"], c["after"]) for c in self.changes]


def links_by_name(ip_addr_json: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {link["ifname"]: link for link in ip_addr_json}


def ipv4_globals(link: Dict[str, Any]) -> List[str]:
    """'addr/prefix' of the link's global-scope IPv4 addresses."""
    return ["%s/%d" % (a["local"], a["prefixlen"]) for a in link.get("addr_info") or []
            if a.get("family") == "inet" and a.get("scope", "global") == "global"]


def is_up(link: Dict[str, Any]) -> bool:
    return "UP" in (link.get("flags") or [])


def plan_changes(nics: List[Dict[str, Any]], ip_addr_json: List[Dict[str, Any]],
                 default_routes: List[Dict[str, Any]], connection_address: Optional[str] = None,
                 allow_connection_change: bool = False, purge_addresses: bool = True) -> Plan:
    """Compute the ``ip`` commands that make the kernel state match ``nics`` (a nic_plan list)."""
    plan = Plan()
    links = links_by_name(ip_addr_json)
    missing = [n["name"] for n in nics if n["name"] not in links]
    if missing:
        plan.errors.append("NIC(s) in the model but not on the host: %s (the host has: %s)" % (
            ", ".join(missing), ", ".join(sorted(k for k in links if k != "lo"))))
        return plan  # nothing changes when the model does not fit the host
    for nic in nics:
        name = nic["name"]
        link = links[name]
        current = ipv4_globals(link)
        carries_connection = connection_address is not None and any(
            c.split("/")[0] == connection_address for c in current)
        guarded = carries_connection and not allow_connection_change
        if int(link.get("mtu", 0)) != nic["mtu"]:
            plan.add(["ip", "link", "set", "dev", name, "mtu", str(nic["mtu"])], name, "mtu", link.get("mtu"),
                     nic["mtu"])
        if nic["cidr"] not in current:
            plan.add(["ip", "addr", "add", nic["cidr"], "dev", name], name, "address", "(absent)", nic["cidr"])
        if purge_addresses:
            for extra in current:
                if extra == nic["cidr"]:
                    continue
                if guarded and extra.split("/")[0] == connection_address:
                    plan.warnings.append("%s: keeping %s, the address the controller is connected through "
                                         "(set dgx_network_allow_connection_change to replace it)" % (name, extra))
                    continue
                plan.add(["ip", "addr", "del", extra, "dev", name], name, "address", extra, "(absent)")
        if not is_up(link):
            plan.add(["ip", "link", "set", "dev", name, "up"], name, "link", "down", "up")
    wanted = [n for n in nics if n.get("gateway")]
    if len(wanted) > 1:
        plan.errors.append("more than one NIC carries the default route: %s" % ", ".join(n["name"] for n in wanted))
    elif wanted:
        nic = wanted[0]
        ok = any(r.get("gateway") == nic["gateway"] and r.get("dev") == nic["name"] for r in default_routes)
        if not ok:
            before = ", ".join("via %s dev %s" % (r.get("gateway"), r.get("dev")) for r in default_routes) or "none"
            plan.add(["ip", "route", "replace", "default", "via", nic["gateway"], "dev", nic["name"]], nic["name"],
                     "default route", before, "via %s dev %s" % (nic["gateway"], nic["name"]))
    return plan


def undo_commands(commands: List[List[str]], ip_addr_json: List[Dict[str, Any]],
                  default_routes: List[Dict[str, Any]]) -> List[List[str]]:
    """Commands that put back the state seen before ``commands`` ran (for rollback after a failure)."""
    links = links_by_name(ip_addr_json)
    undo: List[List[str]] = []
    for cmd in reversed(commands):
        if cmd[1:3] == ["link", "set"] and cmd[5] == "mtu":
            undo.append(["ip", "link", "set", "dev", cmd[4], "mtu", str(links[cmd[4]]["mtu"])])
        elif cmd[1:3] == ["link", "set"] and cmd[5] == "up":
            undo.append(["ip", "link", "set", "dev", cmd[4], "down"])
        elif cmd[1:3] == ["addr", "add"]:
            undo.append(["ip", "addr", "del", cmd[3], "dev", cmd[5]])
        elif cmd[1:3] == ["addr", "del"]:
            undo.append(["ip", "addr", "add", cmd[3], "dev", cmd[5]])
        elif cmd[1:3] == ["route", "replace"]:
            if default_routes:
                r = default_routes[0]
                undo.append(["ip", "route", "replace", "default", "via", r["gateway"], "dev", r["dev"]])
            else:
                undo.append(["ip", "route", "del", "default"])
    return undo
