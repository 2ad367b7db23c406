# -*- coding: utf-8 -*-
"""Parsers for the switch ``show`` outputs the switch validation stage reads (pure functions, stdlib only).

Every parser returns a correct value or raises ``ValueError`` naming the command, the line and what was
expected - never a half-read result. Port names are normalised to the pod model's spelling: EOS
``Ethernet1/1``, Onyx ``1/1``, Cumulus ``swp1``. Sources of the test outputs: tests/unit/fixtures/switch/SOURCES.md.

- Arista EOS (JSON, ``| json``): ``show interfaces status``, ``show lldp neighbors detail``,
  ``show interfaces counters errors``, ``show interfaces counters discards``, ``show priority-flow-control counters``.
- NVIDIA Onyx (text): ``show interfaces ethernet status``, ``show lldp interfaces ethernet remote``.
- Cumulus Linux NVUE (text tables): ``nv show interface``, ``nv show interface lldp``.
- The running config, per port (all three): MTU, speed, shutdown, QoS trust and PFC lines (``port_config``).

Text outputs are read without terminal artefacts (CR/LF, ANSI escapes, backspaces, ``--More--``, trailing blanks);
a prompt line (with the echoed command above a table, or alone after it) is skipped; a CLI error line
(``% ...``, ``Error: ...``) is refused, never read as "no ports" or "no neighbours".
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

# ---------------------------------------------------------------------------------------------- helpers


# a CLI prompt left at the end of an output (``leaf1#``, ``switch [standalone: master] #``, ``cumulus@sw1:mgmt:~$``)
_PROMPT = re.compile(r"^[\w.@:~()/\-]+(?: \[[^\]\n]*\])? ?[#>$]$")


def eos_json(command: str, text: str, key: str) -> Dict[str, Any]:
    """The JSON object of an EOS ``| json`` output, which must hold ``key``."""
    body = (text or "").strip()
    start = body.find("{")
    if start < 0:
        first = body.splitlines()[0] if body else "(empty output)"
        raise ValueError("%s: expected JSON (| json), got %r" % (command, first[:120]))
    try:
        data, end = json.JSONDecoder().raw_decode(body[start:])
    except ValueError as exc:
        raise ValueError("%s: the JSON output does not parse: %s" % (command, exc)) from None
    rest = body[start + end:].strip()
    if rest and not _PROMPT.match(rest):
        raise ValueError("%s: unexpected text after the JSON output: %r" % (command, rest.splitlines()[0][:120]))
    if not isinstance(data, dict) or key not in data:
        raise ValueError("%s: the JSON output has no %r key (keys: %s)" % (
            command, key, ", ".join(sorted(data)) if isinstance(data, dict) else type(data).__name__))
    return data


def _table(command: str, data: Dict[str, Any], key: str) -> Dict[str, Any]:
    """``data[key]``, which must be an object keyed by port (the plain ``show lldp neighbors`` has a list)."""
    table = data[key]
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ValueError("%s: %r is a %s, expected an object keyed by port (is this the right command?)" % (
            command, key, type(table).__name__))
    return table


def _int(command: str, port: str, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s: %s %s is %r, expected a number" % (command, port, field, value))
    return int(value)


def speed_gbps(text: Any) -> Optional[float]:
    """'100G', '100 Gbps', '40Gb/s', '100000' (Mb/s, NVUE/ethtool), 100000000000 (b/s, EOS bandwidth)."""
    if text is None:
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) / 1e9 if text >= 1e6 else float(text)
    s = str(text).strip()
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([GMK])?(?:b(?:ps|/s)?|bps)?$", s, re.I)
    if not m:
        return None
    value, unit = float(m.group(1)), (m.group(2) or "").upper()
    if not unit and not m.group(0)[len(m.group(1)):].strip():
        # a bare number: Mb/s as NVUE and ethtool print it ('100000'), Gb/s only below 1000 ('100')
        return value / 1000.0 if value >= 1000 else value
    return value if unit == "G" else value / 1000.0 if unit == "M" else value / 1e6 if unit == "K" else value


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[^\x08\n]\x08|\x08")
_PAGER = re.compile(r"^\s*-+\s*More\s*-+\s*", re.I)


def _lines(text: str) -> List[str]:
    """The lines of a text output, without terminal artefacts: ANSI escapes, backspaces, a ``--More--`` pager
    prompt at the start of a line (the rest of the line is kept: paging continues it), trailing whitespace."""
    out = []
    for ln in (text or "").splitlines():
        prev = None
        while prev != ln:
            prev, ln = ln, _ESCAPES.sub("", ln)
        out.append(_PAGER.sub("", ln).rstrip())
    return out


def _cli_error(command: str, lines: List[str]) -> None:
    """Refuse an output that is a CLI error (``% Invalid input``, ``% Unrecognized command``, ``Error: ...``)."""
    for ln in lines:
        if re.match(r"^\s*(%\s*\S|Error:)", ln):
            raise ValueError("%s: the switch answered with an error: %r" % (command, ln.strip()[:120]))


def _strip_quotes(value: Any) -> str:
    return str(value or "").strip().strip('"')


# ---------------------------------------------------------------------------------------------- Arista EOS


def eos_interfaces_status(text: str) -> Dict[str, Dict[str, Any]]:
    """``show interfaces status | json`` -> {port: {oper, up, speed_gbps, description}}.

    ``linkStatus`` is connected | notconnect | disabled | errdisabled | ...; ``bandwidth`` in bit/s."""
    cmd = "show interfaces status | json"
    data = eos_json(cmd, text, "interfaceStatuses")
    out: Dict[str, Dict[str, Any]] = {}
    for port, info in _table(cmd, data, "interfaceStatuses").items():
        if not isinstance(info, dict) or "linkStatus" not in info:
            raise ValueError("%s: %s has no linkStatus" % (cmd, port))
        bw = info.get("bandwidth")
        out[port] = {"oper": info["linkStatus"], "up": info["linkStatus"] == "connected",
                     "speed_gbps": _int(cmd, port, "bandwidth", bw) / 1e9 if bw is not None else None,
                     "description": info.get("description", "")}
    return out


def eos_lldp_neighbors_detail(text: str) -> Dict[str, List[Dict[str, str]]]:
    """``show lldp neighbors detail | json`` -> {port: [{system_name, port_id, port_description, chassis_id}]}."""
    cmd = "show lldp neighbors detail | json"
    data = eos_json(cmd, text, "lldpNeighbors")
    out: Dict[str, List[Dict[str, str]]] = {}
    for port, info in _table(cmd, data, "lldpNeighbors").items():
        if not isinstance(info, dict) or not isinstance(info.get("lldpNeighborInfo"), list):
            raise ValueError("%s: %s has no lldpNeighborInfo list" % (cmd, port))
        neighbours = []
        for n in info["lldpNeighborInfo"]:
            iface = (n.get("neighborInterfaceInfo") or {}) if isinstance(n, dict) else None
            if not isinstance(iface, dict):
                raise ValueError("%s: %s has a neighbour entry that is not an object with neighborInterfaceInfo: %r"
                                 % (cmd, port, n))
            neighbours.append({
                "system_name": _strip_quotes(n.get("systemName")),
                "port_id": _strip_quotes(iface.get("interfaceId_v2") or iface.get("interfaceId")),
                "port_description": _strip_quotes(iface.get("interfaceDescription")),
                "chassis_id": _strip_quotes(n.get("chassisId"))})
        out[port] = neighbours
    return out


_EOS_ERRORS = ("inErrors", "outErrors", "fcsErrors", "alignmentErrors", "symbolErrors", "frameTooLongs",
               "frameTooShorts")


def eos_counters_errors(text: str) -> Dict[str, Dict[str, int]]:
    """``show interfaces counters errors | json`` -> {port: {inErrors, outErrors, fcsErrors, ...}}."""
    return _eos_counters("show interfaces counters errors | json", text, "interfaceErrorCounters",
                         ("inErrors", "outErrors"), _EOS_ERRORS)


def eos_counters_discards(text: str) -> Dict[str, Dict[str, int]]:
    """``show interfaces counters discards | json`` -> {port: {inDiscards, outDiscards}}."""
    return _eos_counters("show interfaces counters discards | json", text, "interfaces", ("inDiscards", "outDiscards"))


def eos_pfc_counters(text: str) -> Dict[str, Dict[str, int]]:
    """``show priority-flow-control counters | json`` -> {port: {rxFrames, txFrames}} (PFC pause frames)."""
    return _eos_counters("show priority-flow-control counters | json", text, "interfaceCounters",
                         ("rxFrames", "txFrames"))


def _eos_counters(cmd: str, text: str, table: str, need: Tuple[str, ...],
                  keep: Optional[Tuple[str, ...]] = None) -> Dict[str, Dict[str, int]]:
    """{port: {counter: n}} from the ports of an EOS ``| json`` counter table: every port has the counters ``need``
    (else ValueError naming the command and the port); ``keep`` (default ``need``) are returned when present."""
    out: Dict[str, Dict[str, int]] = {}
    for port, info in _table(cmd, eos_json(cmd, text, table), table).items():
        if not isinstance(info, dict) or any(k not in info for k in need):
            raise ValueError("%s: %s lacks %s" % (cmd, port, "/".join(need)))
        out[port] = {k: _int(cmd, port, k, info[k]) for k in keep or need if k in info}
    return out


# ---------------------------------------------------------------------------------------------- NVIDIA Onyx


def _onyx_port(name: str) -> str:
    """'Eth1/1' / 'Ethernet 1/1' / 'ethernet 1/1' -> '1/1' (the model's Onyx port name)."""
    m = re.match(r"^(?:eth(?:ernet)?)\s*(\d+/\d+(?:/\d+)?)$", name.strip(), re.I)
    if not m:
        raise ValueError("not an Onyx Ethernet port name: %r" % name)
    return m.group(1)


def onyx_interfaces_status(text: str) -> Dict[str, Dict[str, Any]]:
    """``show interfaces ethernet status`` -> {port: {oper, up, speed_gbps, negotiation}}.

    Table: ``Port  Operational state  Speed  Negotiation`` then rows ``Eth1/1  Up  40 Gbps  No-Negotiation``."""
    cmd = "show interfaces ethernet status"
    lines = _lines(text)
    _cli_error(cmd, lines)
    head = next((i for i, ln in enumerate(lines) if re.match(r"^\s*Port\s+Operational state\s+Speed", ln)), None)
    if head is None:
        raise ValueError("%s: no 'Port  Operational state  Speed' header in the output" % cmd)
    out: Dict[str, Dict[str, Any]] = {}
    for ln in lines[head + 1:]:
        if not ln.strip() or set(ln.strip()) <= set("- ") or _PROMPT.match(ln.strip()):
            continue
        m = re.match(r"^\s*(Eth\S+)\s+(Up|Down|\S+)\s+(\d+(?:\.\d+)?\s*[GM](?:bps|b/s)?|N/A|Unknown|-)(?:\s+(\S.*))?$",
                     ln, re.I)
        if not m:
            raise ValueError("%s: cannot read the row %r (expected: port, state, speed, negotiation)" % (cmd, ln))
        oper = m.group(2)
        try:
            port = _onyx_port(m.group(1))
        except ValueError as exc:
            raise ValueError("%s: %s (row %r)" % (cmd, exc, ln)) from None
        out[port] = {"oper": oper, "up": oper.lower() == "up", "speed_gbps": speed_gbps(m.group(3).replace(" ", "")),
                     "negotiation": (m.group(4) or "").strip()}
    return out


def onyx_lldp_remote(text: str) -> Dict[str, List[Dict[str, str]]]:
    """``show lldp interfaces ethernet remote`` -> {port: [{system_name, port_id, port_description, chassis_id}]}.

    Blocks start with ``Ethernet 1/1`` and hold ``Remote chassis id: X ; chassis id subtype: mac``,
    ``Remote port-id: Y; port id subtype: local``, ``Remote port description: Z``, ``Remote system name: N``."""
    cmd = "show lldp interfaces ethernet remote"
    out: Dict[str, List[Dict[str, str]]] = {}
    current: Optional[Dict[str, str]] = None
    port: Optional[str] = None
    lines = _lines(text)
    _cli_error(cmd, lines)
    for raw in lines:
        ln = raw.strip()
        if not ln:
            continue
        m = re.match(r"^Eth(?:ernet)?\s*(\d+/\d+(?:/\d+)?)$", ln, re.I)
        if m:
            port = m.group(1)
            out.setdefault(port, [])
            current = None
            continue
        # a port heading we cannot read: its neighbours would be filed under the port above
        if re.match(r"^Eth(?:ernet)?\s*\d", ln, re.I):
            raise ValueError("%s: cannot read the port line %r (expected 'Eth1/1' or 'Ethernet 1/1')" % (cmd, ln))
        if ln.startswith("Remote Index"):
            if port is None:
                raise ValueError("%s: %r before any 'Ethernet N/M' line" % (cmd, ln))
            current = {"system_name": "", "port_id": "", "port_description": "", "chassis_id": ""}
            out[port].append(current)
            continue
        m = re.match(r"^Remote (chassis id|port-id|port description|system name)\s*:\s*(.*?)\s*(?:;.*)?$", ln)
        if m:
            if current is None:
                raise ValueError("%s: %r outside a 'Remote Index' block" % (cmd, ln))
            key = {"chassis id": "chassis_id", "port-id": "port_id", "port description": "port_description",
                   "system name": "system_name"}[m.group(1)]
            current[key] = _strip_quotes(m.group(2))
    return out


# ---------------------------------------------------------------------------------------------- Cumulus NVUE


def nvue_table(cmd: str, text: str, first: str) -> List[Dict[str, str]]:
    """Rows of an NVUE table (header, a dashed rule, fixed-width columns); continuation rows (empty first
    column) are dropped. Column widths come from the dashed rule."""
    lines = _lines(text)
    head = next((i for i, ln in enumerate(lines) if ln.split()[:1] == [first]), None)
    if head is None or head + 1 >= len(lines) or not lines[head + 1].lstrip().startswith("-"):
        raise ValueError("%s: no table header starting with %r followed by a dashed rule" % (cmd, first))
    rule = lines[head + 1]
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", rule)]
    header = lines[head]
    names = [header[s:(spans[i + 1][0] if i + 1 < len(spans) else None)].strip() for i, (s, _) in enumerate(spans)]
    rows = []
    for ln in lines[head + 2:]:
        if not ln.strip() or ln[:1] == " " or _PROMPT.match(ln):
            continue
        cells = [ln[s:(spans[i + 1][0] if i + 1 < len(spans) else None)].strip() for i, (s, _) in enumerate(spans)]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def nvue_interfaces(text: str) -> Dict[str, Dict[str, Any]]:
    """``nv show interface`` -> {port: {oper, up, speed_gbps, mtu, type, remote_host, remote_port}}."""
    cmd = "nv show interface"
    out: Dict[str, Dict[str, Any]] = {}
    for row in nvue_table(cmd, text, "Interface"):
        if "State" not in row:
            raise ValueError("%s: no State column (columns: %s)" % (cmd, ", ".join(row)))
        mtu = row.get("MTU") or ""
        out[row["Interface"]] = {"oper": row["State"], "up": row["State"] == "up",
                                 "speed_gbps": speed_gbps(row.get("Speed")), "mtu": int(mtu) if mtu.isdigit() else None,
                                 "type": row.get("Type", ""), "remote_host": row.get("Remote Host", ""),
                                 "remote_port": row.get("Remote Port", "")}
    return out


def nvue_lldp(text: str) -> Dict[str, List[Dict[str, str]]]:
    """``nv show interface lldp`` -> {port: [{system_name, port_id, port_description, chassis_id}]}."""
    cmd = "nv show interface lldp"
    out: Dict[str, List[Dict[str, str]]] = {}
    for row in nvue_table(cmd, text, "Interface"):
        if "Remote Host" not in row:
            raise ValueError("%s: no 'Remote Host' column" % cmd)
        out[row["Interface"]] = [{"system_name": row["Remote Host"], "port_id": row.get("Remote Port", ""),
                                  "port_description": "", "chassis_id": ""}] if row["Remote Host"] else []
    return out


# ---------------------------------------------------------------------------------------------- running config


def _port_entry() -> Dict[str, Any]:
    return {"mtu": None, "speed": None, "shutdown": False, "trust": None, "pfc": False, "pfc_priorities": []}


def port_config(platform: str, text: str) -> Dict[str, Dict[str, Any]]:
    """Per-port settings from a running config: {port: {mtu, speed, shutdown, trust, pfc, pfc_priorities}}.

    EOS: ``interface EthernetX`` sections (``mtu``, ``speed``, ``shutdown``, ``qos trust``,
    ``priority-flow-control on``, ``priority-flow-control priority N no-drop``); Onyx: flat
    ``interface ethernet 1/1 <setting>`` lines (``dcb priority-flow-control mode on``; the priorities are
    switch-wide under ``roce``); Cumulus: ``nv set interface swpN link mtu|speed|state``."""
    ports: Dict[str, Dict[str, Any]] = {}
    if platform == "eos":
        current = None
        for raw in (text or "").splitlines():
            if raw.startswith("interface "):
                name = raw.split(None, 1)[1].strip()
                current = ports.setdefault(name, _port_entry()) if name.startswith(("Ethernet", "Port-Channel")) \
                    else None
                continue
            if not raw.startswith(" "):
                current = None
                continue
            if current is None:
                continue
            ln = raw.strip()
            w = ln.split()
            if not w:
                continue
            if w[0] == "mtu" and len(w) == 2 and w[1].isdigit():
                current["mtu"] = int(w[1])
            elif w[0] == "speed":
                current["speed"] = _eos_speed(w[-1])
            elif ln == "shutdown":
                current["shutdown"] = True
            elif w[:2] == ["qos", "trust"] and len(w) == 3:
                current["trust"] = w[2]
            elif ln in ("priority-flow-control on", "priority-flow-control mode on"):
                current["pfc"] = True
            elif re.match(r"^priority-flow-control priority [0-7] no-drop$", ln):
                current["pfc_priorities"].append(int(w[2]))
    elif platform in ("onyx", "mlnx-ib"):
        for raw in (text or "").splitlines():
            m = re.match(r"^\s*interface ethernet (\d+/\d+(?:/\d+)?(?:-\d+/\d+(?:/\d+)?)?) (.+?)\s*$", raw)
            if not m:
                continue
            rest = m.group(2).split()
            for name in _onyx_range(m.group(1)):
                _onyx_setting(ports.setdefault(name, _port_entry()), rest)
    elif platform == "cumulus":
        for raw in (text or "").splitlines():
            m = re.match(r"^nv set interface (\S+) link (mtu|speed|state) (\S+)$", raw.strip())
            if not m:
                continue
            for name in _nvue_names(m.group(1)):
                entry = ports.setdefault(name, _port_entry())
                if m.group(2) == "mtu" and m.group(3).isdigit():
                    entry["mtu"] = int(m.group(3))
                elif m.group(2) == "speed":
                    entry["speed"] = speed_gbps(m.group(3))
                elif m.group(2) == "state":
                    entry["shutdown"] = m.group(3) == "down"
    else:
        raise ValueError("port_config: no per-port reader for platform %r" % platform)
    return ports


def _eos_speed(word: str) -> Optional[float]:
    """The speed of an EOS ``speed`` line's last word: ``100gfull``, ``100g-4``, ``25g``, ``auto`` (None) - and
    the older Mb/s forms ``1000full``, ``10000full``, ``100full``/``100half`` (a bare number is Mb/s there)."""
    word = re.sub(r"-\d+$", "", word.lower())
    m = re.match(r"^(\d+)(?:full|half)?$", word)
    if m:
        return int(m.group(1)) / 1000.0
    return speed_gbps(re.sub(r"(full|half)$", "", word))


def _onyx_range(spec: str) -> List[str]:
    """'1/5' -> ['1/5']; a running-config range '1/2-1/4' -> ['1/2', '1/3', '1/4'] (also '1/1/1-1/1/4')."""
    if "-" not in spec:
        return [spec]
    first, last = spec.split("-", 1)
    a, b = first.rsplit("/", 1), last.rsplit("/", 1)
    if a[0] != b[0] or int(b[1]) < int(a[1]):
        raise ValueError("port_config: cannot expand the Onyx port range %r" % spec)
    return ["%s/%d" % (a[0], i) for i in range(int(a[1]), int(b[1]) + 1)]


def _nvue_names(spec: str) -> List[str]:
    """NVUE interface lists: 'swp1,swp3' and ranges 'swp1-4' / 'swp1s0-3' -> the single names."""
    out: List[str] = []
    for part in spec.split(","):
        m = re.match(r"^(.*?)(\d+)-(\d+)$", part)
        if m and m.group(1) and int(m.group(3)) >= int(m.group(2)):
            out += ["%s%d" % (m.group(1), i) for i in range(int(m.group(2)), int(m.group(3)) + 1)]
        else:
            out.append(part)
    return out


def _onyx_setting(entry: Dict[str, Any], rest: List[str]) -> None:
    """One flat Onyx ``interface ethernet P <setting>`` line's setting words into a port entry."""
    if rest[0] == "mtu" and len(rest) > 1 and rest[1].isdigit():
        entry["mtu"] = int(rest[1])
    elif rest[0] == "speed" and len(rest) > 1:
        entry["speed"] = speed_gbps(rest[1])
    elif rest == ["shutdown"]:
        entry["shutdown"] = True
    elif rest[:2] == ["qos", "trust"] and len(rest) == 3:
        entry["trust"] = rest[2]
    elif rest[:4] == ["dcb", "priority-flow-control", "mode", "on"]:
        entry["pfc"] = True
