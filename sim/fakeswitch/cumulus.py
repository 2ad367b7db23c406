# -*- coding: utf-8 -*-
"""The fake Cumulus Linux NVUE CLI (see base.py for the Device and Session it builds on)."""
from __future__ import annotations

import json
import re
import shlex
from typing import Any, List, Tuple

try:
    from .base import _IPV4, Reply, Session, _natural
    from .nvue_show import show as nvue_operational
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from base import _IPV4, Reply, Session, _natural  # type: ignore
    from nvue_show import show as nvue_operational  # type: ignore


_IFNAME = r"(swp\d+(s\d)?|bond\d+|eth\d|lo|vlan\d+|peerlink)"
_NV_SET = [re.compile(p) for p in (
    r"^system hostname [A-Za-z0-9][\w.-]*$",
    r"^interface %s(,%s)* (description .+|link mtu \d{3,5}|link speed (\d+G|auto)|link state (up|down)"
    r"|bridge domain \S+|bridge domain \S+ access \d{1,4}|bond member %s|bond mode (lacp|static)"
    r"|ip address %s/\d{1,2}|ip vrf \S+)$"
    % (_IFNAME, _IFNAME, _IFNAME, _IPV4),
    r"^bridge domain \S+ vlan \d{1,4}$",
    r"^qos roce mode (lossless|lossy)$",
    r"^qos roce (enable|state) (on|off)$",
    r"^vrf \S+ router static %s/\d{1,2} via %s$" % (_IPV4, _IPV4),
)]
_NV_MULTI = (("bond", "member"), ("ip", "address"), ("router", "static"), ("bridge", "domain"))


def nv_tokens(line: str) -> List[str]:
    """Tokens of an ``nv set``/``nv unset`` line without the verb (quoting normalised)."""
    toks = shlex.split(line)
    if toks[:1] == ["nv"]:
        toks = toks[2:]
    return toks


def nv_line(tokens: List[str]) -> str:
    return "nv set " + " ".join(shlex.quote(t) for t in tokens)


def nv_key(tokens: List[str]) -> Tuple[str, ...]:
    for i in range(len(tokens) - 1):
        if tuple(tokens[i:i + 2]) in _NV_MULTI:
            return tuple(tokens)  # multi-valued: each value is its own entry
    return tuple(tokens[:-1])


def _nv_sort(tokens: List[str]) -> Tuple[Any, ...]:
    order = {"system": 0, "interface": 1, "bridge": 2, "qos": 3, "vrf": 4}
    return (order.get(tokens[0], 9), [_natural(t) for t in tokens])


class CumulusSession(Session):
    def banner(self) -> str:
        return ("Linux %s 5.10.0-cl-1-amd64 #1 SMP Debian 5.10.179-1+cl5.4.0u5 x86_64\n\n"
                "Welcome to NVIDIA Cumulus (R) Linux (R)\n\nLast login: Thu Jan  1 00:00:00 2026 from 127.0.0.1\n"
                % self.dev.hostname())

    def prompt(self) -> str:
        return "cumulus@%s:mgmt:~$ " % self.dev.hostname()

    def _invalid(self, line: str) -> str:
        toks = line.split()
        return "Error: Invalid command: '%s' is not a valid setting" % " ".join(toks[2:] if toks[:1] == ["nv"] else
                                                                            toks)

    def _applied(self) -> List[List[str]]:
        return [nv_tokens(x) for x in self.dev.state["running"]]

    def _pending(self) -> List[List[str]]:
        pending = self.dev.state.get("pending")
        return [nv_tokens(x) for x in (pending if pending is not None else self.dev.state["running"])]

    def _store_pending(self, toks: List[List[str]]) -> None:
        self.dev.state["pending"] = [nv_line(t) for t in sorted(toks, key=_nv_sort)]
        self.dev.save()

    def _command(self, line: str) -> Reply:
        if not line:
            return "", None
        if line in ("exit", "logout"):
            return "", "close"
        try:
            toks = shlex.split(line)
        except ValueError as exc:
            return "-bash: syntax error: %s" % exc, None
        if toks[0] != "nv":
            if toks[0] in ("hostname",):
                return self.dev.hostname(), None
            return "-bash: %s: command not found" % toks[0], None
        verb = toks[1] if len(toks) > 1 else ""
        rest = toks[2:]
        if verb in ("set", "unset"):
            fault = self._fault_before_config_line(line)
            if fault is not None:
                return fault
            return self._set(verb, rest), None
        if verb == "config":
            return self._config(rest)
        if verb == "show":
            return self._show(rest), None
        return "Error: Unknown command 'nv %s'" % verb, None

    def _set(self, verb: str, path: List[str]) -> str:
        text = " ".join(path)
        if verb == "set":
            if not any(p.match(text) for p in _NV_SET):
                return self._invalid("nv set " + text)
            targets = [path]
            if path[0] == "interface" and "," in path[1]:
                targets = [[path[0], name] + path[2:] for name in path[1].split(",")]
            pending = self._pending()
            for t in targets:
                key = nv_key(t)
                pending = [p for p in pending if nv_key(p) != key and p != t] + [t]
            self._store_pending(pending)
            return ""
        if not path:
            return "Error: nv unset needs a path"
        pending = [p for p in self._pending() if p[:len(path)] != path]
        self._store_pending(pending)
        return ""

    def _config(self, rest: List[str]) -> Reply:
        if rest[:1] == ["apply"]:
            if "-y" not in rest and "--assume-yes" not in rest:
                return "Error: use 'nv config apply -y' (this switch does not prompt)", None
            pending = self.dev.state.get("pending")
            if pending is None or pending == self.dev.state["running"]:
                self.dev.state["pending"] = None
                self.dev.save()
                return "Warning: The following files have been changed since the last save, and they WILL be " \
                       "overwritten.\nNothing to apply.", None
            self.dev.state["running"] = pending
            self.dev.state["pending"] = None
            self.dev.state["revision"] = int(self.dev.state.get("revision", 1)) + 1
            for t in self._applied():
                if t[:2] == ["system", "hostname"]:
                    self.dev.state["hostname"] = t[2]
            self.dev.save()
            return self._fault_after_commit() or ("applied [rev_id: %d]" % self.dev.state["revision"], None)
        if rest[:1] == ["save"]:
            self.dev.state["startup"] = list(self.dev.state["running"])
            self.dev.state["saves"] = int(self.dev.state.get("saves", 0)) + 1
            self.dev.save()
            return "saved [rev_id: %d]" % self.dev.state.get("revision", 1), None
        if rest[:1] == ["detach"]:
            self.dev.state["pending"] = None
            self.dev.save()
            return "", None
        if rest[:1] == ["show"]:
            lines = [nv_line(t) for t in sorted(self._applied(), key=_nv_sort)]
            if "commands" in rest:
                return "\n".join(lines), None
            return "\n".join("- " + " ".join(t) for t in self._applied()), None
        if rest[:1] == ["diff"]:
            applied = {tuple(t) for t in self._applied()}
            pending = {tuple(t) for t in self._pending()}
            out = ["nv unset " + " ".join(shlex.quote(x) for x in t) for t in sorted(applied - pending)]
            out += [nv_line(list(t)) for t in sorted(pending - applied)]
            return "\n".join(out), None
        return "Error: Unknown command 'nv config %s'" % " ".join(rest), None

    def _show(self, rest: List[str]) -> str:
        if rest[:2] == ["qos", "roce"]:
            return nv_show_qos_roce(self._applied(), "json" in rest)
        out = nvue_operational(self.dev.state, self._applied(), rest)  # interface, LLDP, counters (nvue_show.py)
        if out is not None:
            self.dev.save()  # counters may have moved
            return out
        if rest[:1] == ["system"]:
            return "hostname  %s\nbuild     Cumulus Linux 5.4.0\nuptime    1:02:03" % self.dev.hostname()
        return "Error: Unknown path %s" % " ".join(rest)


def nv_show_qos_roce(applied: List[List[str]], as_json: bool) -> str:
    """``nv show qos roce`` (-o json) for the applied config, shaped like the real output (see
    tests/unit/fixtures/switch/nvue_show_qos_roce.json)."""
    mode = next((t[3] for t in applied if t[:3] == ["qos", "roce", "mode"]), None)
    enabled = mode is not None
    data = {
        "enable": "on" if enabled else "off",
        "mode": mode or "lossless",
        "pfc": {"pfc-priority": "3" if enabled else "", "switch-prio": 3},
        "congestion-control": {"congestion-mode": "ECN", "enabled-tc": "0,3", "max-threshold": 1.43,
                               "min-threshold": 0.14, "probability": 100},
        "trust": {"trust-mode": "pcp,dscp"},
        "roce-pfc": {"pfc-priority": 3 if enabled else None},
    }
    if as_json:
        return json.dumps(data, indent=2)
    return "\n".join("%-20s %s" % (k, v) for k, v in data.items() if not isinstance(v, dict))
