# -*- coding: utf-8 -*-
"""The fake Onyx switch's operational show commands (the switch validation stage reads them):
``show interfaces ethernet status`` and ``show lldp interfaces ethernet remote``, in the layouts of
tests/unit/fixtures/switch/onyx_show_*.txt, and ``show interfaces ethernet | json-print`` (the ports' Rx / Tx
counter blocks, in the layout of tests/unit/fixtures/switch/onyx_show_interfaces_ethernet_json_print__*.txt), from
the running config (speed, shutdown), the cabling and the operational faults (oper.py: ``errors_rising`` adds Rx
error packets, ``discards_rising`` Tx discard packets; ``pause_rising`` has no Onyx output to show it in). A test
double."""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

try:
    from .oper import bump, link, natural
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from oper import bump, link, natural  # type: ignore

RISE = {"errors_rising": {"rx error packets": 7}, "discards_rising": {"tx discard packets": 11}}
ZERO = {"%s %s" % (side, key): 0 for side in ("rx", "tx") for key in ("error packets", "discard packets")}


def _ports(state: Dict[str, Any]) -> List[str]:
    names = {m.group(1) for m in (re.match(r"^interface ethernet (\d+/\d+(?:/\d+)?)\b", x)
                                  for x in state.get("running") or []) if m}
    names |= set((state.get("wiring") or {}).keys())
    return sorted(names, key=natural)


def _link(state: Dict[str, Any], port: str) -> Dict[str, Any]:
    lines = [x for x in state.get("running") or [] if x.startswith("interface ethernet %s " % port)]
    speed = next((re.search(r" speed (\d+)G", x) for x in lines if " speed " in x), None)
    return link(state, port, "interface ethernet %s shutdown" % port in lines,
                float(speed.group(1)) if speed else None)


def interfaces_status(state: Dict[str, Any]) -> str:
    rows = ["Port     Operational state  Speed     Negotiation", "----     -----------------  -----     -----------"]
    for port in _ports(state):
        lnk = _link(state, port)
        rows.append("%-8s %-18s %-9s %s" % ("Eth" + port, "Up" if lnk["state"] == "up" else "Down",
                                            "%d Gbps" % lnk["gbps"], "No-Negotiation"))
    return "\n".join(rows)


def lldp_remote(state: Dict[str, Any]) -> str:
    out = []
    for port in _ports(state):
        peer = _link(state, port)["peer"]
        if not peer:
            continue
        out += ["Ethernet %s" % port, "Remote Index: 1",
                "Remote chassis id: %s ; chassis id subtype: mac" % (peer.get("mac") or "00:00:00:00:00:00"),
                "Remote port-id: %s; port id subtype: local" % peer["nic"],
                "Remote port description: %s" % peer["nic"], "Remote system name: %s" % peer["host"],
                "Remote system description: fake", ""]
    return "\n".join(out)


def interfaces_json(state: Dict[str, Any]) -> str:
    """``show interfaces ethernet | json-print``: every port's state and its Rx / Tx counters (each read moves the
    counters a rising fault names)."""
    ports = _ports(state)
    counters = bump(state, ports, RISE, ZERO)
    out = []
    for port in ports:
        lnk = _link(state, port)
        c = counters[port]

        def block(side: str, c: Dict[str, int] = c) -> Dict[str, str]:
            keys = ["packets", "bytes", "multicast packets", "unicast packets", "discard packets", "error packets",
                    "broadcast packets"] + (["hoq discard packets"] if side == "tx" else [])
            return {k: str(c.get("%s %s" % (side, k), 0)) for k in keys}

        out.append({"Fec": "auto", "Mac address": "7c:fe:90:f0:54:%02x" % (len(out) + 1),
                    "Actual speed": "%d Gbps" % lnk["gbps"], "MTU": "9216 bytes(Maximum packet size 9238 bytes)",
                    "header": "Eth" + port, "Admin state": "Disabled" if lnk["state"] == "disabled" else "Enabled",
                    "Operational state": "Up" if lnk["state"] == "up" else "Down", "Description": "N\\A",
                    "Flow-control": "receive off send off", "Switchport mode": "access",
                    "Tx": block("tx"), "Rx": block("rx")})
    return json.dumps(out, indent=4)


def show(state: Dict[str, Any], line: str) -> Optional[str]:
    if line == "show interfaces ethernet | json-print":
        return interfaces_json(state)
    if line == "show interfaces ethernet status":
        return interfaces_status(state)
    if line == "show lldp interfaces ethernet remote":
        return lldp_remote(state)
    return None
