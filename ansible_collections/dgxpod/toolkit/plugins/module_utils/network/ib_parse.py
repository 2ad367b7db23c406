# -*- coding: utf-8 -*-
"""Parsers for the InfiniBand fabric tools (infiniband-diags from rdma-core; pure functions, stdlib only):
``sminfo``, ``iblinkinfo`` (and ``iblinkinfo -l``), ``ibnetdiscover`` (the topology file), ``ibstat`` and
``ibstatus``. The formats are the tools' own printf formats (rdma-core infiniband-diags/sminfo.c ``main``,
iblinkinfo.c ``print_port``/``print_node_header``, ibnetdiscover.c ``out_switch``/``out_ca``/``out_switch_port``/
``out_ca_port``, ibstat.c ``ca_dump``/``port_dump``, scripts/ibstatus; libibmad dump.c for the width, speed and
state words); real outputs in tests/unit/fixtures/fabric/ (sources in its README.md).

A link's width and speed read the same from every tool: ``width`` ``"4X"`` (``lanes`` 4) and ``speed`` the IBTA
generation (``SDR`` ``DDR`` ``QDR`` ``FDR10`` ``FDR`` ``EDR`` ``HDR`` ``NDR`` ``XDR``): iblinkinfo prints the lane rate
(``4X 25.78125 Gbps``: EDR), ibnetdiscover ``4xEDR``, ibstatus ``100 Gb/sec (4X EDR)``, ibstat the link rate only.
GUIDs are lower-case ``0x`` + 16 hex digits. Anything a parser cannot read raises ``ParseError`` naming the tool
and the line; a tool's own error (``sminfo: iberror: ...``, ``ibwarn: ...``) is data where it means "no answer"
(:func:`parse_sminfo`'s ``error``), a ParseError elsewhere.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, content_lines

__all__ = ["SPEEDS", "LANE_GBPS", "guid", "speed_of_lane_rate", "parse_sminfo", "parse_iblinkinfo",
           "parse_ibnetdiscover", "parse_ibstat", "parse_ibstatus"]

# the IBTA generations in order, and libibmad's lane-rate words for each (dump.c mad_dump_linkspeed[ext])
SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
LANE_GBPS = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "14.0625": "FDR", "25.78125": "EDR", "53.125": "HDR",
             "106.25": "NDR", "212.5": "XDR"}
# the data rate of one lane (Gb/s) per generation, for a link's rate (ibstat's "Rate: 100" is 4 x EDR)
LANE_DATA_GBPS = {"SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0, "FDR": 13.64, "EDR": 25.0, "HDR": 50.0,
                  "NDR": 100.0, "XDR": 200.0}
# ibstat/sysfs name the link rate; these are the 4X rates the kernel prints for each generation
_RATE_4X = {10: "SDR", 20: "DDR", 40: "QDR", 56: "FDR", 100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}


def guid(text: str) -> str:
    """A GUID as ``0x`` + 16 lower-case hex digits (``8c0eb0300ddc0f6`` -> ``0x08c0eb0300ddc0f6``)."""
    t = text.strip().lower()
    t = t[2:] if t.startswith("0x") else t
    if not re.match(r"^[0-9a-f]{1,16}$", t):
        raise ValueError("not a GUID: %r" % text)
    return "0x" + t.rjust(16, "0")


def speed_of_lane_rate(text: str) -> Optional[str]:
    """libibmad's lane rate (``25.78125 Gbps``, ``10.0 Gbps (FDR10)``) as the generation, or None."""
    s = text.strip()
    if "FDR10" in s:
        return "FDR10"
    m = re.match(r"^(\d+(?:\.\d+)?)\s*Gbps$", s)
    return LANE_GBPS.get(m.group(1)) if m else None


def _width(text: str) -> Tuple[str, int]:
    m = re.match(r"^(\d+)[xX]$", text.strip())
    if not m or int(m.group(1)) not in (1, 2, 4, 8, 12):
        raise ValueError("not a link width: %r" % text)
    return m.group(1) + "X", int(m.group(1))


# ---------------------------------------------------------------------------------------------- sminfo

_SMINFO = re.compile(r"^sminfo: sm lid (?P<lid>\d+|0x[0-9a-fA-F]+) sm guid (?P<guid>0x[0-9a-fA-F]+), activity count "
                     r"(?P<act>\d+) priority (?P<prio>\d+)(?: state (?P<state>\d+) (?P<name>\S+))?$")
_SM_STATES = {0: "NOTACT", 1: "DISCOVER", 2: "STANDBY", 3: "MASTER"}


def parse_sminfo(text: str) -> Dict[str, Any]:
    """``sminfo [lid]``: the SM the port's SM LID names (or the one queried) -> ``{"lid", "guid", "activity",
    "priority", "state" ("MASTER", "STANDBY", "DISCOVER", "NOTACT"), "master", "error"}``.

    When no SM answers, sminfo prints ``sminfo: iberror: [pid] main: failed: query`` (older: ``sminfo: iberror:
    query failed``) and libibmad ``ibwarn: ... mad_rpc: _do_madrpc failed; ...`` lines: that is a reading - no SM
    reachable from this port - returned with the tool's words in ``error`` and the rest None."""
    tool = "sminfo"
    out: Dict[str, Any] = {"lid": None, "guid": None, "activity": None, "priority": None, "state": None,
                           "master": False, "error": None}
    seen = False
    errors: List[str] = []
    for n, line, s in content_lines(tool, text):
        m = _SMINFO.match(s)
        if m:
            if seen:
                raise ParseError(tool, "a second SM line", n, line)
            seen = True
            state = int(m.group("state")) if m.group("state") is not None else None
            name = m.group("name")
            if name is not None and name.replace("SMINFO_", "") != _SM_STATES.get(state, "???"):
                raise ParseError(tool, "state %s named %s" % (state, name), n, line)
            out.update(lid=int(m.group("lid"), 0), guid=guid(m.group("guid")), activity=int(m.group("act")),
                       priority=int(m.group("prio")), state=_SM_STATES.get(state) if state is not None else None,
                       master=state == 3)
        elif re.match(r"^(sminfo: iberror|ibwarn|ibpanic|.*\bmad_rpc\b|.*\bfailed\b)", s):
            errors.append(s)
        else:
            raise ParseError(tool, "expected 'sminfo: sm lid L sm guid G, activity count A priority P state S "
                                   "NAME'", n, line)
    if not seen and not errors:
        raise ParseError(tool, "empty output")
    if errors:
        out["error"] = "; ".join(errors)
    return out


# ---------------------------------------------------------------------------------------------- iblinkinfo

_LI_HEADER = re.compile(r"^(?P<type>Switch|CA|Router|\?\?): (?:(?P<guid>0x[0-9a-fA-F]{16}) )?(?P<desc>.*):$")
_LI_LINK = re.compile(r"^==\((?P<link>[^)]*)\)==>\s*(?P<remote>.*)$")
_LI_UP = re.compile(r"^(?P<width>\d+X)\s+(?P<speed>\d+(?:\.\d+)?\s*Gbps(?:\s*\(FDR10\))?)\s+(?P<state>\w+)/\s*"
                    r"(?P<phys>[\w ]+?)(?:\s+\(HOQ:\d+ VL_Stall:\d+\))?$")
_LI_DOWN = re.compile(r"^(?P<state>\w+)/\s*(?P<phys>[\w ]+?)$")
_LI_LOCAL = re.compile(r"^(?:(?P<guid>0x[0-9a-fA-F]{16})\s+)?(?:\"(?P<desc>[^\"]*)\"\s+)?(?P<lid>\d+)\s+(?P<port>\d+)"
                       r"\[(?P<ext>[^\]]*)\]\s*$")
_LI_REMOTE = re.compile(r"^(?:(?P<guid>0x[0-9a-fA-F]{16})\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[(?P<ext>[^\]]*)\]\s+"
                        r"\"(?P<desc>[^\"]*)\"\s+\((?P<msg>[^)]*)\)$")
_LI_NONE = re.compile(r"^\[\s*\]\s+\"\"\s+\(\s*\)$")


def _could_be(msg: str) -> Dict[str, Optional[str]]:
    """get_max_msg's words after the peer: ``Could be 4X``, ``Could be 25.78125 Gbps`` (the link trained below
    what both ends support)."""
    out: Dict[str, Optional[str]] = {"could_be_width": None, "could_be_speed": None}
    for m in re.finditer(r"Could be (\S+(?: Gbps(?: \(FDR10\))?)?)", msg):
        word = m.group(1)
        if re.match(r"^\d+X$", word):
            out["could_be_width"] = word
        else:
            out["could_be_speed"] = speed_of_lane_rate(word) or word
    return out


def parse_iblinkinfo(text: str) -> List[Dict[str, Any]]:
    """``iblinkinfo`` (node headers, one port per line) and ``iblinkinfo -l`` (the node on every line) -> one dict
    per port::

        {"node_type": "Switch" | "CA" | "Router", "node_guid": "0x..." (switch header / -l), "node_desc": "...",
         "port_guid": "0x..." (CA ports), "lid": 2, "port": 9, "width": "4X", "lanes": 4, "speed": "QDR",
         "lane_gbps": "10.0", "state": "Active", "phys_state": "LinkUp", "peer_guid": None | "0x..." (-l),
         "peer_lid": 1, "peer_port": 1, "peer_desc": "teaker-4 HCA-1", "could_be_width": None, "could_be_speed": None}

    A down port has width/speed None and no peer (``Down/ Polling``, ``Down/Disabled``)."""
    tool = "iblinkinfo"
    out: List[Dict[str, Any]] = []
    node: Dict[str, Any] = {}
    for n, line, s in content_lines(tool, text):
        m = _LI_HEADER.match(s)
        if m and "==(" not in s:
            node = {"node_type": m.group("type"), "node_guid": m.group("guid").lower() if m.group("guid") else None,
                    "node_desc": m.group("desc").strip()}
            continue
        if "==(" not in s or ")==>" not in s:
            raise ParseError(tool, "expected a node header ('Switch: 0x... desc:') or a port line with '==( ... )==>'",
                             n, line)
        left, _, rest = s.partition("==(")
        link, _, remote = rest.partition(")==>")
        lm = _LI_LOCAL.match(left.strip())
        if not lm:
            raise ParseError(tool, "the local port is not 'LID PORT[EXT]'", n, line)
        if lm.group("desc") is not None:  # -l: the port GUID and the node's description on every line
            entry: Dict[str, Any] = {"node_type": None, "node_guid": None, "node_desc": lm.group("desc").strip()}
        elif node:
            entry = dict(node)
        else:
            raise ParseError(tool, "a port line before any node header", n, line)
        entry["port_guid"] = lm.group("guid").lower() if lm.group("guid") else None
        entry.update(lid=int(lm.group("lid")), port=int(lm.group("port")))
        link = link.strip()
        up = _LI_UP.match(link)
        if up:
            width, lanes = _width(up.group("width"))
            speed = speed_of_lane_rate(up.group("speed"))
            if speed is None:
                raise ParseError(tool, "unknown lane rate %r" % up.group("speed"), n, line)
            entry.update(width=width, lanes=lanes, speed=speed, lane_gbps=up.group("speed").split()[0],
                         state=up.group("state"), phys_state=up.group("phys").strip())
        else:
            down = _LI_DOWN.match(link)
            if not down:
                raise ParseError(tool, "the link is not '4X 25.78125 Gbps Active/ LinkUp' or 'Down/ Polling'",
                                 n, line)
            entry.update(width=None, lanes=None, speed=None, lane_gbps=None, state=down.group("state"),
                         phys_state=down.group("phys").strip())
        remote = remote.strip()
        entry.update(peer_guid=None, peer_lid=None, peer_port=None, peer_desc=None, could_be_width=None,
                     could_be_speed=None)
        rm = _LI_REMOTE.match(remote)
        if rm:
            entry.update(peer_guid=rm.group("guid").lower() if rm.group("guid") else None,
                         peer_lid=int(rm.group("lid")), peer_port=int(rm.group("port")), peer_desc=rm.group("desc"),
                         **_could_be(rm.group("msg")))
        elif not (_LI_NONE.match(remote) or remote == '"Port not available"'):
            raise ParseError(tool, "the peer is not 'LID PORT[EXT] \"desc\" ( )'", n, line)
        out.append(entry)
    if not out:
        raise ParseError(tool, "no ports (empty output)")
    return out


# ---------------------------------------------------------------------------------------------- ibnetdiscover

_ND_NODE = re.compile(r"^(?P<type>Switch|Ca|Rt)\s+(?P<ports>\d+)\s+\"(?P<kind>[SHR?])-(?P<guid>[0-9a-fA-F]{16})\""
                      r"\s*#\s*\"(?P<desc>[^\"]*)\""
                      r"(?:\s+(?P<p0>base|enhanced) port 0 lid (?P<lid>\d+) lmc (?P<lmc>\d+))?"
                      r"(?P<rest>.*)$")
_ND_PORT = re.compile(r"^\[(?P<port>\d+)\](?:\[ext \d+\])?(?:\((?P<pguid>[0-9a-fA-F]+)\))?\s*"
                      r"\"(?P<pkind>[SHR?])-(?P<peer>[0-9a-fA-F]{16})\"\[(?P<pport>\d+)\](?:\[ext \d+\])?"
                      r"\s*(?:\((?P<ppguid>[0-9a-fA-F]+)\))?\s*#\s*(?P<comment>.*)$")
_ND_SW_COMMENT = re.compile(r"^\"(?P<desc>[^\"]*)\" lid (?P<lid>\d+) (?P<w>\d+|\?\?)x(?P<speed>[A-Z0-9?]+)"
                            r"(?P<rest>.*)$")
_ND_CA_COMMENT = re.compile(r"^lid (?P<mylid>\d+) lmc (?P<lmc>\d+) \"(?P<desc>[^\"]*)\" lid (?P<lid>\d+) "
                            r"(?P<w>\d+|\?\?)x(?P<speed>[A-Z0-9?]+)(?P<rest>.*)$")
_ND_IDS = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=")
_ND_KIND = {"S": "Switch", "H": "Ca", "R": "Rt"}


def parse_ibnetdiscover(text: str) -> Dict[str, Any]:
    """``ibnetdiscover`` (the topology file) -> ``{"initiated_from": {"node", "port"}, "nodes": [...]}``, a node::

        {"type": "Switch" | "Ca" | "Rt", "guid": "0x...", "desc": "SwitchIB Mellanox Technologies", "ports": 36,
         "lid": 48 (switch port 0) | None, "links": [{"port": 1, "port_guid": "0x..." (CA) | None,
          "peer_type": "Ca", "peer_guid": "0x..." (node), "peer_port": 1, "peer_port_guid": "0x..." | None,
          "peer_desc": "node018 HCA-1", "peer_lid": 67, "width": "4X", "lanes": 4, "speed": "EDR"}]}

    The id lines (``vendid=``, ``switchguid=``...) and ``#`` comments, chassis and ``Non-Chassis Nodes`` lines are
    read past; a ``[port]`` line before a node line, a node twice, or a line of another shape raises ParseError.
    The output has no end marker: a topology cut after a whole line reads as a smaller fabric, which the cabling
    check then reports as missing links."""
    tool = "ibnetdiscover"
    nodes: List[Dict[str, Any]] = []
    seen: Dict[str, int] = {}
    cur: Optional[Dict[str, Any]] = None
    start: Dict[str, Optional[str]] = {"node": None, "port": None}
    for n, line, s in content_lines(tool, text):
        m = re.match(r"^# Initiated from node ([0-9a-fA-F]{16}) port ([0-9a-fA-F]{16})$", s)
        if m:
            start = {"node": guid(m.group(1)), "port": guid(m.group(2))}
            continue
        if s.startswith("#") or _ND_IDS.match(s) or re.match(r"^(Non-Chassis Nodes|Chassis \d+.*|Hostname: .*)$", s):
            continue
        m = _ND_NODE.match(s)
        if m:
            g = guid(m.group("guid"))
            if g in seen:
                raise ParseError(tool, "node %s twice" % g, n, line)
            kind = _ND_KIND.get(m.group("kind"))
            if kind != m.group("type"):
                raise ParseError(tool, "a %s named %s-" % (m.group("type"), m.group("kind")), n, line)
            cur = {"type": m.group("type"), "guid": g, "desc": m.group("desc"), "ports": int(m.group("ports")),
                   "lid": int(m.group("lid")) if m.group("lid") else None, "links": []}
            seen[g] = len(nodes)
            nodes.append(cur)
            continue
        m = _ND_PORT.match(s)
        if m:
            if cur is None:
                raise ParseError(tool, "a port line before any Switch/Ca line", n, line)
            comment = m.group("comment").strip()
            cm = (_ND_SW_COMMENT if cur["type"] == "Switch" else _ND_CA_COMMENT).match(comment)
            if not cm:
                raise ParseError(tool, "the comment is not '\"desc\" lid L 4xEDR' (switch) or 'lid L lmc M \"desc\" "
                                       "lid L 4xEDR' (CA)", n, line)
            port = int(m.group("port"))
            if any(link["port"] == port for link in cur["links"]):
                raise ParseError(tool, "port %d twice on %s" % (port, cur["guid"]), n, line)
            w = cm.group("w")
            width, lanes = _width(w + "x") if w != "??" else (None, None)
            speed = cm.group("speed") if cm.group("speed") in SPEEDS else None
            cur["links"].append({
                "port": port, "port_guid": guid(m.group("pguid")) if m.group("pguid") else None,
                "peer_type": _ND_KIND.get(m.group("pkind")), "peer_guid": guid(m.group("peer")),
                "peer_port": int(m.group("pport")),
                "peer_port_guid": guid(m.group("ppguid")) if m.group("ppguid") else None,
                "peer_desc": cm.group("desc"), "peer_lid": int(cm.group("lid")), "width": width, "lanes": lanes,
                "speed": speed})
            continue
        raise ParseError(tool, "expected a Switch/Ca node line, a '[port]' link line or an id line", n, line)
    if not nodes:
        raise ParseError(tool, "no nodes (empty output, or not ibnetdiscover's topology format)")
    return {"initiated_from": start, "nodes": nodes}


# ---------------------------------------------------------------------------------------------- ibstat

_IBSTAT_CA = re.compile(r"^CA '(?P<ca>[^']+)'$")
_IBSTAT_KV = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*[A-Za-z]):\s*(?P<value>.*)$")
_IBSTAT_PORT = re.compile(r"^Port (?P<port>\d+):$")


def _rate(text: str) -> Tuple[Optional[float], Optional[str]]:
    """ibstat's ``Rate: 200`` / ``Rate: 56 (FDR10)`` / ``Rate: 2.5`` -> (Gb/s, generation if the rate is a 4X one)."""
    m = re.match(r"^(\d+(?:\.\d+)?)(?:\s*\((FDR10)\))?$", text.strip())
    if not m:
        return None, None
    value = float(m.group(1))
    return value, m.group(2) or _RATE_4X.get(int(value)) if value == int(value) else m.group(2)


def parse_ibstat(text: str) -> List[Dict[str, Any]]:
    """``ibstat [ca]`` -> one dict per CA: ``{"ca", "ca_type", "firmware", "node_guid", "ports": [{"port",
    "state", "phys_state", "rate_gbps", "speed" (the generation when the rate is a 4X rate, else None), "base_lid",
    "sm_lid", "lmc", "port_guid", "link_layer"}]}``. Lines a newer ibstat adds (``Effective speed``) are kept under
    their key in ``other``; a ``Port N:`` block without State/Physical state/Rate is refused as cut off."""
    tool = "ibstat"
    cas: List[Dict[str, Any]] = []
    port: Optional[Dict[str, Any]] = None
    for n, line, s in content_lines(tool, text):
        m = _IBSTAT_CA.match(s)
        if m:
            cas.append({"ca": m.group("ca"), "ca_type": None, "firmware": None, "node_guid": None, "ports": [],
                        "other": {}})
            port = None
            continue
        if not cas:
            raise ParseError(tool, "expected \"CA 'mlx5_0'\" first", n, line)
        m = _IBSTAT_PORT.match(s)
        if m:
            port = {"port": int(m.group("port")), "state": None, "phys_state": None, "rate_gbps": None, "speed": None,
                    "base_lid": None, "sm_lid": None, "lmc": None, "port_guid": None, "link_layer": None, "other": {}}
            cas[-1]["ports"].append(port)
            continue
        m = _IBSTAT_KV.match(s)
        if not m:
            raise ParseError(tool, "expected 'Key: value'", n, line)
        key, value = m.group("key"), m.group("value").strip()
        try:
            if port is None:
                ca = cas[-1]
                if key == "CA type":
                    ca["ca_type"] = value
                elif key == "Firmware version":
                    ca["firmware"] = value
                elif key == "Node GUID":
                    ca["node_guid"] = guid(value)
                else:
                    ca["other"][key] = value
                continue
            if key == "State":
                port["state"] = value
            elif key == "Physical state":
                port["phys_state"] = value
            elif key == "Rate":
                port["rate_gbps"], port["speed"] = _rate(value)
                if port["rate_gbps"] is None:
                    raise ValueError("rate %r" % value)
            elif key == "Base lid":
                port["base_lid"] = int(value, 0)
            elif key == "SM lid":
                port["sm_lid"] = int(value, 0)
            elif key == "LMC":
                port["lmc"] = int(value)
            elif key == "Port GUID":
                port["port_guid"] = guid(value)
            elif key == "Link layer":
                port["link_layer"] = value
            else:
                port["other"][key] = value
        except ValueError as exc:
            raise ParseError(tool, "%s: %s" % (key, exc), n, line) from None
    if not cas:
        raise ParseError(tool, "no CA (empty output)")
    for ca in cas:
        for p in ca["ports"]:
            if p["state"] is None or p["phys_state"] is None or p["rate_gbps"] is None:
                raise ParseError(tool, "%s port %d has no State, Physical state or Rate (output cut off?)" % (
                    ca["ca"], p["port"]))
    return cas


# ---------------------------------------------------------------------------------------------- ibstatus

_IBSTATUS_HEAD = re.compile(r"^Infiniband device '(?P<dev>[^']+)' port (?P<port>\d+) status:$")
_IBSTATUS_RATE = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?) Gb/sec \((?P<w>\d+)X(?: (?P<speed>[A-Z0-9]+))?\)$")


def parse_ibstatus(text: str) -> List[Dict[str, Any]]:
    """``ibstatus`` (the sysfs files of each port, scripts/ibstatus) -> one dict per port: ``{"device", "port",
    "default_gid", "base_lid", "sm_lid", "state" ("ACTIVE"), "phys_state" ("LinkUp"), "rate_gbps", "width", "lanes",
    "speed", "link_layer"}``. A port block missing its state, phys state or rate line is refused (cut off)."""
    tool = "ibstatus"
    out: List[Dict[str, Any]] = []
    for n, line, s in content_lines(tool, text):
        m = _IBSTATUS_HEAD.match(s)
        if m:
            out.append({"device": m.group("dev"), "port": int(m.group("port")), "default_gid": None,
                        "base_lid": None, "sm_lid": None, "state": None, "phys_state": None, "rate_gbps": None,
                        "width": None, "lanes": None, "speed": None, "link_layer": None})
            continue
        if not out:
            raise ParseError(tool, "expected \"Infiniband device 'mlx5_0' port 1 status:\" first", n, line)
        key, sep, value = s.partition(":")
        value = value.strip()
        cur = out[-1]
        if not sep:
            raise ParseError(tool, "expected 'key: value'", n, line)
        key = key.strip()
        try:
            if key == "default gid":
                cur["default_gid"] = value
            elif key in ("base lid", "sm lid"):
                cur[key.replace(" ", "_")] = int(value, 0)
            elif key in ("state", "phys state"):
                sm = re.match(r"^\d+:\s*(\S.*)$", value)
                if not sm:
                    raise ValueError("expected 'N: NAME', got %r" % value)
                cur[key.replace(" ", "_")] = sm.group(1)
            elif key == "rate":
                rm = _IBSTATUS_RATE.match(value)
                if not rm:
                    raise ValueError("expected '100 Gb/sec (4X EDR)', got %r" % value)
                cur["rate_gbps"] = float(rm.group("gbps"))
                cur["width"], cur["lanes"] = _width(rm.group("w") + "X")
                cur["speed"] = rm.group("speed") if rm.group("speed") in SPEEDS else None
            elif key == "link_layer":
                cur["link_layer"] = value
            else:
                raise ValueError("unknown key %r" % key)
        except ValueError as exc:
            raise ParseError(tool, str(exc), n, line) from None
    if not out:
        raise ParseError(tool, "no ports (empty output)")
    for p in out:
        if p["state"] is None or p["phys_state"] is None or p["rate_gbps"] is None:
            raise ParseError(tool, "%s port %d has no state, phys state or rate (output cut off?)" % (p["device"],
                                                                                                    p["port"]))
    return out
