# -*- coding: utf-8 -*-
"""Remediation: the commands that turn a switch's running config into the rendered (desired) one.

Only what the toolkit manages is compared - the *scope*: the sections and lines the desired config has
(host-facing interfaces, port-channels, management address, the VLANs and VLAN interfaces the model
declares) plus a few global families it owns (hostname, spanning-tree mode, ip routing, static routes, RoCE
mode, subnet manager). Everything else on the switch (users, AAA, NTP, SNMP, other ports, VLANs the model
does not declare) is left alone: a line outside the scope is never negated. The access VLAN of a managed
port is part of that port, so a stale assignment is corrected.

- EOS: hier_config (``Platform.ARISTA_EOS``) on the scoped running config; sections end with ``exit``.
- Onyx / mlnx-ib: a line-set diff of the flat config (ranges such as ``1/2-1/18`` expanded, quotes
  normalised); a line that the desired config sets with another value is replaced, not negated.
- Cumulus NVUE: a diff of ``nv set`` lines (``nv config show -o commands``); removals are ``nv unset``.

``remediation(platform, running, desired)`` returns a ``Remediation`` with ``commands`` (to send, in
order), ``before``/``after`` (scoped texts for Ansible's diff) and ``changed``.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence, Set, Tuple

ERROR_PATTERNS = {
    "eos": r"% ?Invalid|% ?Incomplete|% ?Ambiguous|% ?Error|^Error:",
    "onyx": r"^%|^Error",
    "mlnx-ib": r"^%|^Error",
    "cumulus": r"^Error|^Invalid|command not found",
}
MANAGEMENT = {"eos": "Management", "onyx": "mgmt0", "mlnx-ib": "mgmt0", "cumulus": "eth0"}


@dataclass
class Remediation:
    platform: str
    commands: List[str] = field(default_factory=list)
    before: str = ""
    after: str = ""
    touches_management: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.commands)


def remediation(platform: str, running: str, desired: str, extra_scope: Optional[str] = None) -> Remediation:
    """Commands that make ``running`` match ``desired`` within the managed scope.

    ``extra_scope``: another config whose sections/lines also count as managed (used when restoring a
    backup after a failed push, so lines the failed push added are removed too)."""
    if platform == "eos":
        rem = _eos(running, desired, extra_scope)
    elif platform in ("onyx", "mlnx-ib"):
        rem = _onyx(platform, running, desired, extra_scope)
    elif platform == "cumulus":
        rem = _nvue(running, desired, extra_scope)
    else:
        raise ValueError("unknown platform %r" % platform)
    mgmt = MANAGEMENT[platform]
    rem.touches_management = any(mgmt in c for c in rem.commands)
    return rem


# ---------------------------------------------------------------------------------------------- EOS
_EOS_FAMILIES = ("hostname ", "spanning-tree mode ", "ip routing", "no ip routing", "ip route ")


def _eos(running: str, desired: str, extra: Optional[str]) -> Remediation:
    from hier_config import Platform, WorkflowRemediation, get_hconfig

    want = get_hconfig(Platform.ARISTA_EOS, desired)
    have = get_hconfig(Platform.ARISTA_EOS, running)
    scope: Set[str] = {c.text for c in want.children}
    if extra is not None:
        scope |= {c.text for c in get_hconfig(Platform.ARISTA_EOS, extra).children}
    scoped = get_hconfig(Platform.ARISTA_EOS, "")
    for child in have.children:
        if child.text in scope or child.text.startswith(_EOS_FAMILIES):
            scoped.add_deep_copy_of(child)
    rem = WorkflowRemediation(scoped, want).remediation_config
    commands: List[str] = []
    for child in rem.children:
        commands.append(child.text)
        if child.children:
            commands.extend(_eos_lines(child, 1))
            commands.append("exit")
    return Remediation("eos", commands, _eos_text(scoped), _eos_text(want))


def _eos_lines(node, depth: int) -> List[str]:
    out = []
    for child in node.children:
        out.append("   " * depth + child.text)
        if child.children:
            out.extend(_eos_lines(child, depth + 1))
            out.append("   " * depth + "exit")
    return out


def _eos_text(root) -> str:
    out = []
    for child in root.children:
        out.append(child.text)
        out.extend(_eos_lines(child, 1) if child.children else [])
    return "\n".join(out) + ("\n" if out else "")


# ---------------------------------------------------------------------------------------------- Onyx
_ONYX_IF_HEADS = ("ethernet", "port-channel", "mlag-port-channel", "vlan", "loopback")
_ONYX_FAMILIES = ("hostname ", "lacp", "roce", "spanning-tree mode ", "ip routing", "no ip routing", "ip route ",
                  "ib sm", "no ib sm", "interface mgmt0 ip address")
_ONYX_SKIP = ("no cli default prefix-modes enable", "cli default prefix-modes enable")


def _unquote_tail(words: List[str]) -> List[str]:
    text = " ".join(words)
    try:
        return shlex.split(text)
    except ValueError:
        return words


def onyx_normalise(text: str) -> List[str]:
    """Flat Onyx config lines: comments dropped, ranges expanded, quoting normalised, order kept."""
    out: List[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line in _ONYX_SKIP:
            continue
        w = line.split()
        if len(w) >= 3 and w[0] == "interface" and w[1] == "ethernet":
            m = re.match(r"^1/(\d+)-1/(\d+)$", w[2])
            ports = ["1/%d" % n for n in range(int(m.group(1)), int(m.group(2)) + 1)] if m else [w[2]]
            rest = w[3:]
            if rest[:1] == ["description"]:
                rest = ["description", " ".join(_unquote_tail(rest[1:]))]
            for port in ports:
                out.append(" ".join(["interface", "ethernet", port] + rest))
            continue
        if len(w) >= 4 and w[0] == "interface" and w[1] == "port-channel" and w[3] == "description":
            line = " ".join(w[:4] + [" ".join(_unquote_tail(w[4:]))])
        if len(w) == 7 and w[:2] == ["interface", "vlan"] and w[3:5] == ["ip", "address"] and w[6] == "primary":
            line = " ".join(w[:6])  # the running config marks the first address "primary"
        if len(w) >= 4 and w[0] == "vlan" and w[2] == "name":
            line = " ".join(w[:3] + [" ".join(_unquote_tail(w[3:]))])
        out.append(line)
    return out


# The deliberate twin (issue 13): sim/fakeswitch/onyx.py (and eos.py) key lines the same way with their own copy;
# the fake switch must not import this diff code, so that a bug here cannot hide itself in the tests.
def _onyx_split(w: List[str]) -> Tuple[List[str], List[str]]:
    n = 3 if len(w) > 1 and w[1] in _ONYX_IF_HEADS else 2
    return w[:n], w[n:]


def onyx_key(line: str) -> str:
    """Lines with the same key hold one value (``... mtu 1500 force`` vs ``... mtu 9216 force``)."""
    w = line.split()
    if w and w[0] == "no":
        w = w[1:]
    if not w:
        return line
    if w[0] == "interface":
        head, rest = _onyx_split(w)
        if rest[:1] == ["no"]:
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
        return " ".join(w[:3])  # vlan N name X: one name per VLAN
    return " ".join(w)


def _onyx_negate(line: str) -> str:
    w = line.split()
    if w[0] == "no":
        return " ".join(w[1:])
    if w[0] == "interface":
        head, rest = _onyx_split(w)
        if rest:
            key = onyx_key(line).split()[len(head):]
            if key == ["switchport", "access"]:
                key.append("vlan")  # back to the default VLAN: "no switchport access vlan"
            return " ".join(head + ["no"] + key)
        return "no " + line
    if w[0] in ("hostname", "roce"):
        return "no " + w[0]
    return "no " + line


def _onyx_in_scope(line: str, heads: Set[str], exact: Set[str]) -> bool:
    if line in exact or line.startswith(_ONYX_FAMILIES):
        return True
    w = line.split()
    if w[0] == "interface":
        return " ".join(_onyx_split(w)[0]) in heads
    if w[0] == "vlan" and len(w) >= 2:
        return "vlan " + w[1] in exact  # lines of a VLAN the model declares; other VLANs are left alone
    return False


def _quote_onyx(line: str) -> str:
    """Send descriptions quoted (Onyx takes one token otherwise)."""
    w = line.split()
    if w[0] == "interface" and "description" in w:
        i = w.index("description")
        text = " ".join(w[i + 1:])
        if " " in text and not text.startswith('"'):
            return " ".join(w[:i + 1]) + ' "%s"' % text
    return line


def _onyx(platform: str, running: str, desired: str, extra: Optional[str]) -> Remediation:
    want = onyx_normalise(desired)
    have = onyx_normalise(running)
    scope_src = want + (onyx_normalise(extra) if extra is not None else [])
    heads = {" ".join(_onyx_split(x.split())[0]) for x in scope_src if x.split()[0] == "interface"}
    heads.discard("interface mgmt0")
    exact = set(scope_src)
    scoped = [x for x in have if _onyx_in_scope(x, heads, exact)]
    want_set, have_set = set(want), set(scoped)
    want_keys = {onyx_key(x) for x in want}
    removals = [_onyx_negate(x) for x in scoped if x not in want_set and onyx_key(x) not in want_keys]
    additions = [_quote_onyx(x) for x in want if x not in have_set]
    commands = _dedupe(removals + additions)
    return Remediation(platform, commands, "\n".join(scoped) + "\n" if scoped else "",
                       "\n".join(want) + "\n" if want else "")


# ---------------------------------------------------------------------------------------------- NVUE
_NV_MULTI = (("bond", "member"), ("ip", "address"), ("router", "static"), ("bridge", "domain"))


def nv_parse(text: str) -> List[Tuple[str, ...]]:
    """``nv set`` lines as token tuples (verb dropped); comments and other lines ignored."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("nv set "):
            continue
        try:
            toks = shlex.split(line)[2:]
        except ValueError:
            continue
        if toks:
            if toks[0] == "interface" and len(toks) > 1 and "," in toks[1]:
                out.extend(tuple([toks[0], n] + toks[2:]) for n in toks[1].split(","))
            else:
                out.append(tuple(toks))
    return out


def _nv_multi(t: Sequence[str]) -> bool:
    return any(tuple(t[i:i + 2]) in _NV_MULTI for i in range(len(t) - 1))


def nv_key(t: Sequence[str]) -> Tuple[str, ...]:
    return tuple(t) if _nv_multi(t) else tuple(t[:-1])


def _nv_in_scope(t: Tuple[str, ...], interfaces: Set[str], exact: Set[Tuple[str, ...]]) -> bool:
    if t[:2] == ("system", "hostname") or t[:2] == ("qos", "roce"):
        return True
    if t[:2] == ("bridge", "domain"):
        return t in exact  # a VLAN of the bridge the model declares; other VLANs are left alone
    if t[0] == "interface" and len(t) > 1:
        return t[1] in interfaces
    return t[0] == "vrf" and len(t) > 3 and t[2:4] == ("router", "static")


def _nv(verb: str, t: Iterable[str]) -> str:
    return "nv %s %s" % (verb, " ".join(shlex.quote(x) for x in t))


def _nvue(running: str, desired: str, extra: Optional[str]) -> Remediation:
    want = nv_parse(desired)
    have = nv_parse(running)
    scope_src = want + (nv_parse(extra) if extra is not None else [])
    interfaces = {t[1] for t in scope_src if t[0] == "interface" and len(t) > 1}
    exact = set(scope_src)
    scoped = [t for t in have if _nv_in_scope(t, interfaces, exact)]
    want_set, have_set = set(want), set(scoped)
    want_keys = {nv_key(t) for t in want}
    removals = [_nv("unset", t if _nv_multi(t) else t[:-1]) for t in scoped
                if t not in want_set and nv_key(t) not in want_keys]
    additions = [_nv("set", t) for t in want if t not in have_set]
    return Remediation("cumulus", _dedupe(removals + additions),
                       "".join(_nv("set", t) + "\n" for t in scoped), "".join(_nv("set", t) + "\n" for t in want))


def _dedupe(items: List[str]) -> List[str]:
    seen: Set[str] = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
