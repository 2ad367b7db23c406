# -*- coding: utf-8 -*-
"""The fake NVIDIA Onyx (MLNX-OS) CLI (see base.py for the Device and Session it builds on)."""
from __future__ import annotations

import re
from typing import Any, List, Optional, Tuple

try:
    from .base import _IPV4, Device, Reply, Session, _natural
    from .onyx_show import show as onyx_operational
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from base import _IPV4, Device, Reply, Session, _natural  # type: ignore
    from onyx_show import show as onyx_operational  # type: ignore


_ONYX_IF_HEADS = ("ethernet", "port-channel", "mlag-port-channel", "vlan", "loopback")
_ONYX_GLOBAL = [re.compile(p) for p in (
    r"^hostname [A-Za-z0-9][\w.-]*$",
    r"^lacp$",
    r"^roce( lossless| lossy)?$",
    r"^spanning-tree mode (mst|rst|rpvst)$",
    r"^ip routing$",
    r"^ip route (vrf \S+ )?%s/\d{1,2} %s$" % (_IPV4, _IPV4),
    r"^ib sm$",
    r"^interface mgmt0 ip address %s /\d{1,2}$" % _IPV4,
    r"^interface port-channel \d+$",
    r"^interface ethernet 1/\d+(/\d+)?$",
    r"^interface vlan \d{1,4}$",
    r"^vlan \d{1,4}$",
    r"^vlan \d{1,4} name [A-Za-z0-9_.-]{1,32}$",
    r"^(username|ntp|logging|clock|snmp-server|banner|cli) .+$",
)]
_ONYX_IF_ATTRS = [re.compile(p) for p in (
    r"^mtu \d{3,5}( force)?$",
    r"^speed \d+G( force)?$",
    r"^description \S.*$",
    r"^channel-group \d+ mode (active|passive|on)$",
    r"^shutdown$",
    r"^switchport .+$",
    r"^dcb priority-flow-control mode on( force)?$",
    r"^qos trust (L2|L3|both)$",
    r"^ip address %s ?/\d{1,2}( primary)?$" % _IPV4,
)]
_ONYX_NO_GLOBAL = ("hostname", "lacp", "roce", "spanning-tree", "ip", "ib", "interface", "ntp", "logging", "vlan")
_ONYX_NO_IF = ("mtu", "speed", "description", "channel-group", "shutdown", "switchport", "dcb", "qos", "ip")


# The deliberate twin (issue 13): module_utils/switch/diff.py keys Onyx lines the same way for the product's diff.
# The fake switch keeps its own copy so that a bug in the product's keying cannot hide itself in the tests.
def _onyx_split_if(w: List[str]) -> Tuple[List[str], List[str]]:
    n = 3 if len(w) > 1 and w[1] in _ONYX_IF_HEADS else 2
    return w[:n], w[n:]


def onyx_key(line: str) -> str:
    w = line.split()
    if w and w[0] == "no":
        w = w[1:]
    if not w:
        return line
    if w[0] == "interface":
        head, rest = _onyx_split_if(w)
        if rest and rest[0] == "no":
            rest = rest[1:]
        if not rest:
            return " ".join(head)
        n = 2 if rest[0] in ("ip", "qos", "switchport") else 3 if rest[0] == "dcb" else 1
        return " ".join(head + rest[:n])
    if w[0] in ("hostname", "roce", "lacp"):
        return w[0]
    if w[:2] in (["ib", "sm"], ["spanning-tree", "mode"], ["ip", "routing"]):
        return " ".join(w[:2])
    if w[0] == "vlan" and len(w) >= 3 and w[2] == "name":
        return " ".join(w[:3])
    return " ".join(w)


def _onyx_section(line: str) -> Tuple[int, Any]:
    w = line.split()
    if w[0] == "no":
        w = w[1:]
    if w[0] == "interface" and len(w) > 1:
        if w[1] == "port-channel":
            return (1, _natural(line)) if len(w) == 3 else (3, _natural(line))
        if w[1] == "ethernet":
            return (3, 0) if len(w) > 3 and w[3] == "channel-group" else (2, 0)
        if w[1] in ("mgmt0", "vlan"):
            return (6, 0)
    if w[0] == "vlan":
        return (0, 0)
    if w[0] == "lacp":
        return (3, -1)
    if w[0] == "spanning-tree":
        return (4, 0)
    if w[0] == "roce":
        return (5, 0)
    if w[0] in ("hostname", "ip"):
        return (7, 0 if w[0] == "hostname" else 1)
    if w[:2] == ["ib", "sm"]:
        return (8, 0)
    return (9, 0)


_ONYX_HEADERS = {0: "VLAN configuration", 1: "Interface Ethernet configuration", 2: "Interface Ethernet configuration",
                 3: "LAG configuration", 4: "STP configuration", 5: "RoCE configuration",
                 6: "Network interface configuration", 7: "Other IP configuration",
                 8: "InfiniBand subnet manager configuration", 9: "Other configuration"}


def onyx_render(lines: List[str], hostname: str) -> str:
    out = ["##", '## Running database "initial"', "## Generated at 2026/01/01 00:00:00 +0000",
           "## Hostname: %s" % hostname, "##", "", "##", "## Running-config temporary prefix mode setting", "##",
           "no cli default prefix-modes enable"]
    current = None
    for line in sorted(lines, key=lambda x: _onyx_section(x)[0]):
        head = _ONYX_HEADERS[_onyx_section(line)[0]]
        if head != current:
            out += ["", "##", "## " + head, "##"]
            current = head
        out.append("   " + line)
    out += ["", "##", "## Persistent prefix mode setting", "##", "cli default prefix-modes enable"]
    return "\n".join(out)


class OnyxSession(Session):
    def __init__(self, device: Device):
        super().__init__(device)
        self.mode = "exec"
        self.sub: Optional[str] = None  # "interface ethernet 1/1" while in an interface sub-mode

    def banner(self) -> str:
        return ("\nNVIDIA Onyx Switch Management\n\nLast login: Thu Jan  1 00:00:00 2026 from 127.0.0.1\n\n"
                "NVIDIA Switch\n\n")

    def prompt(self) -> str:
        base = "%s [standalone: master] " % self.dev.hostname()
        if self.mode == "exec":
            return base + "> "
        if self.mode == "enable":
            return base + "# "
        if self.sub:
            return base + "(config %s) # " % self.sub
        return base + "(config) # "

    def _invalid(self, line: str) -> str:
        return f'% Unrecognized command "{line.split()[0] if line.split() else line}".\nType "?" for help.'

    def _command(self, line: str) -> Reply:
        if not line:
            return "", None
        if line in ("no cli session paging enable", "terminal length 999", "terminal length 0") or \
                re.match(r"^terminal width \d+$", line):
            return "", None
        if line.startswith("show "):
            return self._show(line), None
        if self.mode == "exec":
            if line == "enable":
                self.mode = "enable"
                return "", None
            if line in ("exit", "quit", "logout"):
                return "", "close"
            return self._invalid(line), None
        if self.mode == "enable":
            if line == "enable":
                return "", None
            if line == "disable":
                self.mode = "exec"
                return "", None
            if line in ("configure terminal", "config term", "conf t", "configure"):
                self.mode, self.sub = "config", None
                return "", None
            if line in ("exit", "quit", "logout"):
                return "", "close"
            if line in ("configuration write", "write memory"):
                return self._write(), None
            return self._invalid(line), None
        # config mode
        if line == "exit":
            if self.sub:
                self.sub = None
            else:
                self.mode = "enable"
            return "", None
        if line == "end":
            self.mode, self.sub = "enable", None
            return "", None
        if line in ("configuration write", "write memory"):
            return self._write(), None
        fault = self._fault_before_config_line(line)
        if fault is not None:
            return fault
        full = line
        if self.sub and not self._is_global(line):
            full = self.sub + " " + line
        if not self._valid(full):
            return self._invalid(line), None
        self._apply(full)
        w = full.split()
        if (w[0] == "interface" and len(w) <= 3 and w[1] in ("ethernet", "port-channel", "vlan")) or \
                (w[0] == "vlan" and len(w) == 2):
            self.sub = full  # a bare "interface X" or "vlan N" enters its sub-mode
        self.dev.save()
        return "", None

    def _write(self) -> str:
        self.dev.state["startup"] = list(self.dev.state["running"])
        self.dev.state["saves"] = int(self.dev.state.get("saves", 0)) + 1
        self.dev.save()
        return ""

    @staticmethod
    def _is_global(line: str) -> bool:
        w = line.split()
        if w[0] == "no" and len(w) > 1:
            w = w[1:]
        return w[0] in ("interface", "hostname", "lacp", "roce", "spanning-tree", "ip", "ib", "username", "ntp",
                        "logging", "cli", "banner", "clock", "snmp-server", "vlan")

    @staticmethod
    def _valid(line: str) -> bool:
        w = line.split()
        if w[0] == "interface" and len(w) > 2 and w[1] in _ONYX_IF_HEADS:
            head, rest = _onyx_split_if(w)
            if not re.match(r"^interface (ethernet 1/\d+(/\d+)?|port-channel \d+|vlan \d{1,4})$", " ".join(head)):
                return False
            if not rest:
                return True
            if rest[0] == "no":
                return len(rest) > 1 and rest[1] in _ONYX_NO_IF
            return any(p.match(" ".join(rest)) for p in _ONYX_IF_ATTRS)
        if w[0] == "no":
            return len(w) > 1 and w[1] in _ONYX_NO_GLOBAL
        return any(p.match(line) for p in _ONYX_GLOBAL)

    def _apply(self, line: str) -> None:
        lines: List[str] = self.dev.state["running"]
        w = line.split()
        if w[0] == "no":
            target = " ".join(w[1:])
            if target in ("ib sm", "ip routing"):
                lines[:] = [x for x in lines if onyx_key(x) != target] + ["no " + target]
                return
            tw = target.split()
            if (tw[0] == "vlan" and len(tw) == 2) or (tw[0] == "interface" and len(tw) == 3):
                # removes the VLAN (with its name) or the interface, and all its lines
                lines[:] = [x for x in lines if not (x == target or x.startswith(target + " "))]
                return
            key = onyx_key(target)
            lines[:] = [x for x in lines if onyx_key(x) != key and x != target]
            return
        if w[0] == "interface":
            head, rest = _onyx_split_if(w)
            if rest and rest[0] == "no":
                key = onyx_key(line)
                lines[:] = [x for x in lines if onyx_key(x) != key]
                return
        key = onyx_key(line)
        if key != line or line in lines:
            lines[:] = [x for x in lines if onyx_key(x) != key]
        lines.append(line)
        if w[0] == "hostname":
            self.dev.state["hostname"] = w[1]

    def _show(self, line: str) -> str:
        if line in ("show running-config", "show run"):
            return onyx_render(self.dev.state["running"], self.dev.hostname())
        if line == "show version":
            return ("Product name:      Onyx\nProduct release:   3.9.3124\nBuild ID:          #1-dev\n"
                    "Build date:        2021-07-14 16:31:13\nTarget arch:       x86_64\nTarget hw:         x86_64\n"
                    "Built by:          jenkins@fake\nVersion summary:   X86_64 3.9.3124 2021-07-14 16:31:13 x86_64\n"
                    "\nProduct model:     x86onie\nHost ID:           0C42A1000001\nSystem serial num: FAKE0000001\n"
                    "System UUID:       00000000-0000-0000-0000-000000000001\n\nUptime:            1h 2m 3.000s\n")
        if line == "show roce":
            return onyx_show_roce(self.dev.state["running"])
        out = onyx_operational(self.dev.state, line)  # interfaces status, LLDP, counters (onyx_show.py)
        if out is not None:
            self.dev.save()  # counters may have moved
            return out
        return self._invalid(line)


def onyx_show_roce(lines: List[str]) -> str:
    """``show roce`` in Onyx's layout (see tests/unit/fixtures/switch/onyx_show_roce.txt for the real output)."""
    mode = next((x.split()[1] for x in lines if x.startswith("roce ") and len(x.split()) > 1),
                "lossless" if "roce" in lines else None)
    if mode is None:
        return "RoCE mode                : disabled\n"
    return "\n".join([
        "RoCE mode                : %s" % mode,
        "LLDP                     : enabled",
        "Port trust mode          : L3",
        "Application TLV          : enabled",
        "Application TLV Priority : 3",
        "",
        "Application type         : UDP",
        "Application protocol     : 4791",
        "",
        "Switch-priority 0 TC     : 0",
        "Switch-priority 3 TC     : 3",
        "Switch-priority 6 TC     : 6",
        "",
        "PFC                      : %s" % ("enabled" if mode == "lossless" else "disabled"),
        "PFC switch-priority      : 3",
        "",
        "ECN                      : enabled",
        "ECN TC                   : 3",
        "",
        "CNP switch-priority      : 6",
        "CNP DSCP                 : 48",
        "",
        "RoCE used TCs            : 3, 6",
        ""])
