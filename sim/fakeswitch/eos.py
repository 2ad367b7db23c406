# -*- coding: utf-8 -*-
"""The fake Arista EOS CLI (see base.py for the Device and Session it builds on)."""
from __future__ import annotations

import copy
import difflib
import re
from typing import Any, List, Optional, Tuple

try:
    from .base import _IPV4, Device, Reply, Session, _natural
    from .eos_show import show as eos_operational
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from base import _IPV4, Device, Reply, Session, _natural  # type: ignore
    from eos_show import show as eos_operational  # type: ignore


_EOS_IF = re.compile(r"^interface (Ethernet\d+(?:/\d+)*|Port-Channel\d+|Management\d+|Vlan\d+|Loopback\d+)$",
                     re.IGNORECASE)
_EOS_IF_ABBREV = {"ethernet": "Et", "port-channel": "Po", "management": "Ma", "vlan": "Vl", "loopback": "Lo"}
_EOS_TOP = [re.compile(p) for p in (
    r"^hostname [A-Za-z0-9][\w.-]*$",
    r"^spanning-tree mode (mstp|rstp|rapid-pvst|none)$",
    r"^ip routing$",
    r"^ip route %s/\d{1,2} %s$" % (_IPV4, _IPV4),
    r"^transceiver qsfp default-mode \S+$",
    r"^(username|aaa|ntp|logging|clock|snmp-server|ip name-server|ip domain-name|banner) .+$",
)]
_EOS_IF_CMDS = [re.compile(p) for p in (
    r"^description \S.*$",
    r"^mtu \d{3,5}$",
    r"^speed (forced )?(\d+g(full)?|\d+g-\d|auto|auto \d+gfull)$",
    r"^channel-group \d{1,4} mode (active|passive|on)$",
    r"^qos trust (dscp|cos)$",
    r"^priority-flow-control (on|mode on)$",
    r"^priority-flow-control priority [0-7] no-drop$",
    r"^ip address %s/\d{1,2}$" % _IPV4,
    r"^shutdown$",
    r"^(no )?switchport( .*)?$",
    r"^load-interval \d+$",
)]
_EOS_NO_TOP = ("hostname", "spanning-tree", "ip", "interface", "transceiver", "username", "ntp", "logging", "vlan")
_EOS_VLAN = re.compile(r"^vlan (\d{1,4})$")
_EOS_VLAN_CMDS = [re.compile(p) for p in (r"^name [A-Za-z0-9_.-]{1,32}$", r"^state (active|suspend)$")]
_EOS_NO_VLAN = ("name", "state")
_EOS_NO_IF = ("description", "mtu", "speed", "channel-group", "qos", "priority-flow-control", "ip", "shutdown",
              "switchport", "load-interval")


# The deliberate twin (issue 13) of module_utils/switch/diff.py's line keys: kept apart so a bug in the product's
# keying cannot hide itself in the tests.
def eos_key(line: str) -> str:
    """Lines with the same key replace each other (``mtu 1500`` -> ``mtu 9214``); others accumulate."""
    w = line.split()
    if w and w[0] == "no":
        w = w[1:]
    if not w:
        return line
    if w[:2] == ["priority-flow-control", "priority"]:
        return " ".join(w[:3])
    if w[0] == "priority-flow-control":
        return "priority-flow-control mode"
    if w[:2] in (["qos", "trust"], ["ip", "address"], ["spanning-tree", "mode"], ["ip", "routing"],
                 ["transceiver", "qsfp"]):
        return " ".join(w[:2])
    if w[0] in ("description", "mtu", "speed", "channel-group", "hostname", "shutdown", "load-interval", "name",
                "state"):
        return w[0]
    if w[:2] == ["switchport", "access"]:
        return "switchport access"  # one access VLAN per port
    return " ".join(w)


def _eos_order(item: List[Any]) -> Tuple[Any, ...]:
    line = item[0]
    if line.startswith("hostname"):
        return (0,)
    if line.startswith("spanning-tree"):
        return (1,)
    if _EOS_VLAN.match(line):
        return (1, 1, int(line.split()[1]))
    if line.startswith("interface "):
        name = line.split(None, 1)[1]
        kind = next((i for i, k in enumerate(("Port-Channel", "Ethernet", "Management", "Loopback", "Vlan"))
                     if name.startswith(k)), 9)
        return (2, kind, _natural(name))
    if line in ("ip routing", "no ip routing"):
        return (3,)
    if line.startswith("ip route "):
        return (4, _natural(line))
    return (5,)


def eos_render(items: List[List[Any]], hostname: str) -> str:
    out = ["! Command: show running-config", "! device: %s (DCS-7060CX2-32S, EOS-4.19.8M)" % hostname, "!",
           "! boot system flash:/EOS-4.19.8M.swi", "!"]
    for line, children in sorted(items, key=_eos_order):
        out.append(line)
        for child in children or []:
            out.append("   " + child)
        out.append("!")
    out.append("end")
    return "\n".join(out)


class EosConfig:
    """A running config as ordered [line, children|None] items (sections have a children list)."""

    def __init__(self, items: List[List[Any]]):
        self.items = items

    def find(self, line: str) -> Optional[List[Any]]:
        return next((it for it in self.items if it[0] == line), None)

    def section(self, header: str) -> List[str]:
        item = self.find(header)
        if item is None:
            item = [header, []]
            self.items.append(item)
        return item[1]

    @staticmethod
    def apply(lines: List[str], line: str, top: bool) -> None:
        """Apply one (already validated) line to a list of lines (a section's children or top-level lines)."""
        if not top and line in ("no switchport", "switchport"):  # routed port on/off; "no switchport" is shown
            lines[:] = [x for x in lines if x != "no switchport" and not x.startswith("switchport ")]
            if line == "no switchport":
                lines.append(line)
            return
        if line.startswith("no "):
            target = line[3:]
            key = eos_key(target)
            lines[:] = [x for x in lines if not (eos_key(x) == key or x == target or x.startswith(target + " "))]
            if top and target == "ip routing":
                lines.append("no ip routing")
            return
        key = eos_key(line)
        if key != line or line in lines:
            lines[:] = [x for x in lines if eos_key(x) != key]
        lines.append(line)

    def apply_top(self, line: str) -> None:
        plain = [it[0] for it in self.items if it[1] is None]
        sections = [it for it in self.items if it[1] is not None]
        m = re.match(r"^no vlan (\d{1,4})$", line)
        if m:
            self.items = [[p, None] for p in plain] + [it for it in sections if it[0] != "vlan " + m.group(1)]
            return
        m = re.match(r"^no interface (\S+)$", line) or re.match(r"^default interface (\S+)$", line)
        if m:
            for it in sections:
                if it[0].lower() == ("interface " + m.group(1)).lower():
                    if it[0].startswith("interface Ethernet") or it[0].startswith("interface Management"):
                        it[1] = []  # physical interfaces exist; they go back to defaults
                    else:
                        sections.remove(it)
                    break
            self.items = [[p, None] for p in plain] + sections
            return
        self.apply(plain, line, True)
        self.items = [[p, None] for p in plain] + sections


class EosSession(Session):
    def __init__(self, device: Device):
        super().__init__(device)
        self.mode = "exec"  # exec | enable | config
        self.session_name: Optional[str] = None  # EOS configure session
        self.section: Optional[str] = None  # "interface Ethernet1/1" while in a sub-mode

    def banner(self) -> str:
        return "Last login: Thu Jan  1 00:00:00 2026 from 127.0.0.1\n"

    def prompt(self) -> str:
        host = self.dev.hostname()
        if self.mode == "exec":
            return host + ">"
        if self.mode == "enable":
            return host + "#"
        sub = ""
        if self.section:
            kind, name = self.section.split(None, 1)[1], ""
            m = re.match(r"([A-Za-z-]+)(.*)", kind)
            if m:
                name = _EOS_IF_ABBREV.get(m.group(1).lower(), m.group(1)[:2]) + m.group(2)
            sub = "-if-" + name
            if _EOS_VLAN.match(self.section):
                sub = "-vlan-" + self.section.split()[1]
        if self.session_name is not None:
            return "%s(config-s-%s%s)#" % (host, self.session_name[:6], sub)
        return "%s(config%s)#" % (host, sub)

    def _invalid(self, line: str) -> str:
        return f"% Invalid input (at token 0: '{line.split()[0] if line.split() else line}')"

    # -- config targets
    def _target(self) -> EosConfig:
        if self.session_name is not None:
            return EosConfig(self.dev.state["sessions"][self.session_name])
        return EosConfig(self.dev.state["running"])

    def _store(self, cfg: EosConfig) -> None:
        if self.session_name is not None:
            self.dev.state["sessions"][self.session_name] = cfg.items
        else:
            self.dev.state["running"] = cfg.items
            self._sync_hostname()
        self.dev.save()

    def _sync_hostname(self) -> None:
        for line, children in self.dev.state["running"]:
            if children is None and line.startswith("hostname "):
                self.dev.state["hostname"] = line.split()[1]

    def _command(self, line: str) -> Reply:
        if not line:
            return "", None
        if line in ("terminal length 0", "terminal len 0"):
            return "Pagination disabled.", None
        m = re.match(r"^terminal width (\d+)$", line)
        if m:
            return "Width set to %s columns." % m.group(1), None
        if line.startswith("show "):
            return self._show(line), None
        if line in ("quit", "logout") or (line == "exit" and self.mode in ("exec", "enable")):
            return "", "close"
        if self.mode == "exec":
            if line == "enable":
                self.mode = "enable"
                return "", None
            return self._invalid(line), None
        if self.mode == "enable":
            return self._enable_command(line)
        return self._config_command(line)

    def _enable_command(self, line: str) -> Reply:
        if line == "enable":
            return "", None
        if line == "disable":
            self.mode = "exec"
            return "", None
        if line in ("configure", "configure terminal", "config term", "conf t"):
            self.mode, self.session_name, self.section = "config", None, None
            return "", None
        m = re.match(r"^configure session ([A-Za-z0-9_.-]+)$", line)
        if m:
            return self._enter_session(m.group(1))
        if line in ("copy running-config startup-config", "write memory", "write"):
            self.dev.state["startup"] = copy.deepcopy(self.dev.state["running"])
            self.dev.state["saves"] = int(self.dev.state.get("saves", 0)) + 1
            self.dev.save()
            return "Copy completed successfully.", None
        return self._invalid(line), None

    def _enter_session(self, name: str) -> Reply:
        sessions = self.dev.state.setdefault("sessions", {})
        if name not in sessions:
            sessions[name] = copy.deepcopy(self.dev.state["running"])
            self.dev.save()
        self.mode, self.session_name, self.section = "config", name, None
        return "", None

    def _leave_config(self) -> None:
        self.mode, self.session_name, self.section = "enable", None, None

    def _config_command(self, line: str) -> Reply:
        if line == "end":
            self._leave_config()
            return "", None
        if line == "exit":
            if self.section:
                self.section = None
            else:
                self._leave_config()
            return "", None
        if self.session_name is not None and line in ("commit", "abort"):
            if line == "commit":
                dropped = self._fault_drop_before()
                if dropped is not None:
                    return dropped
            name = self.session_name
            items = self.dev.state["sessions"].pop(name)
            if line == "commit":
                self.dev.state["running"] = items
                self.dev.state["commits"] = int(self.dev.state.get("commits", 0)) + 1
                self._sync_hostname()
            self.dev.save()
            self._leave_config()
            if line == "commit":
                return self._fault_after_commit() or ("", None)
            return "", None
        m = re.match(r"^configure session ([A-Za-z0-9_.-]+)$", line)
        if m:
            return self._enter_session(m.group(1))
        if line in ("copy running-config startup-config", "write memory"):
            return self._enable_command(line)
        fault = self._fault_before_config_line(line)
        if fault is not None:
            return fault
        cfg = self._target()
        if self.section is not None and self._valid_in_section(line, self.section):
            EosConfig.apply(cfg.section(self.section), line, False)
            self._store(cfg)
            return "", None
        # EOS falls back to the parent mode for commands the sub-mode does not know
        m = _EOS_IF.match(line)
        if m or _EOS_VLAN.match(line):
            header = "interface " + m.group(1) if m else line
            cfg.section(header)
            self.section = header
            self._store(cfg)
            return "", None
        if self._valid_top(line):
            self.section = None
            cfg.apply_top(line)
            self._store(cfg)
            return "", None
        return self._invalid(line), None

    @staticmethod
    def _valid_in_section(line: str, section: str = "") -> bool:
        if _EOS_VLAN.match(section):
            if line.startswith("no ") or line.startswith("default "):
                return len(line.split()) > 1 and line.split()[1] in _EOS_NO_VLAN
            return any(p.match(line) for p in _EOS_VLAN_CMDS)
        if line.startswith("no ") or line.startswith("default "):
            return line.split()[1] in _EOS_NO_IF
        return any(p.match(line) for p in _EOS_IF_CMDS)

    @staticmethod
    def _valid_top(line: str) -> bool:
        if line.startswith("no ") or line.startswith("default "):
            rest = line.split(None, 1)[1] if len(line.split()) > 1 else ""
            return rest.split()[0] in _EOS_NO_TOP if rest else False
        return any(p.match(line) for p in _EOS_TOP)

    def _show(self, line: str) -> str:
        host = self.dev.hostname()
        if line in ("show running-config", "show running-config all", "show run"):
            return eos_render(self.dev.state["running"], host)
        if line in ("show startup-config",):
            return eos_render(self.dev.state.get("startup") or [], host)
        if line == "show session-config diffs" and self.session_name is not None:
            before = eos_render(self.dev.state["running"], host).splitlines()
            after = eos_render(self.dev.state["sessions"][self.session_name], host).splitlines()
            return "\n".join(difflib.unified_diff(before, after, "system:/running-config",
                                                  "session:/%s-session-config" % self.session_name, lineterm=""))
        if line == "show configuration sessions":
            rows = ["Name       State         User    Terminal", "---------- ------------- ------- --------"]
            for name in sorted(self.dev.state.get("sessions") or {}):
                state = "pending" if name != self.session_name else "pending*"
                rows.append("%-10s %-13s %-7s %s" % (name, state, "", ""))
            return "\n".join(rows)
        if line == "show version":
            return ("Arista DCS-7060CX2-32S-F\nHardware version:    11.01\nSerial number:       FAKE0000000\n"
                    "System MAC address:  2899.3a00.0001\n\nSoftware image version: 4.19.8M\n"
                    "Architecture:           i386\nInternal build version: 4.19.8M-fake\n\n"
                    "Uptime:                 1 hour and 2 minutes\nTotal memory:           8155096 kB\n"
                    "Free memory:            5161568 kB\n")
        if line in ("show hostname",):
            return "Hostname: %s\nFQDN:     %s" % (host, host)
        if line == "show priority-flow-control":
            return eos_show_pfc(self.dev.state["running"])
        out = eos_operational(self.dev.state, line)  # | json status, LLDP, counters (eos_show.py)
        if out is not None:
            self.dev.save()  # counters may have moved
            return out
        return self._invalid(line)


def eos_show_pfc(items: List[List[Any]]) -> str:
    """``show priority-flow-control`` for the running config, in the reconstructed "flags" layout of
    tests/unit/fixtures/switch/eos_show_priority_flow_control.txt (not a capture: see SOURCES.md there)."""
    rows = []
    for line, children in sorted(items, key=_eos_order):
        if children is None or not line.startswith("interface Ethernet"):
            continue
        name = "Et" + line.split("Ethernet", 1)[1]
        enabled = any(c in ("priority-flow-control on", "priority-flow-control mode on") for c in children)
        prios = sorted(int(c.split()[2]) for c in children if re.match(r"priority-flow-control priority \d", c))
        if not enabled and not prios:
            continue
        status = "E " if enabled else "D "
        status += "A" if enabled and prios else " "
        rows.append("%-12s %-7s %-11s %-6s %s" % (name, status, " ".join(str(p) for p in prios) or "-",
                                                  "-", "DCBX disabled"))
    head = ["The hardware supports PFC on priorities 0 1 2 3 4 5 6 7",
            "The PFC watchdog timeout is 0.0 second(s) (default)",
            "The PFC watchdog recovery-time is 0.0 second(s) (auto) (default)",
            "The PFC watchdog polling-interval is 0.0 second(s) (default)",
            "The PFC watchdog action is errdisable",
            "The PFC watchdog override action drop is false",
            "The PFC watchdog hardware monitoring is disabled",
            "Global PFC : Enabled",
            "",
            "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled",
            "Port         Status  Priorities  Action Note",
            "------------------------------------------------------"]
    return "\n".join(head + rows)
