# -*- coding: utf-8 -*-
"""Parsers for the port error, discard and PFC pause counters of NVIDIA Onyx and Cumulus Linux (NVUE) switches, and
what each counter means (pure functions, stdlib only). EOS's counters are read by switch/show_parse.py.

- Onyx: ``show interfaces ethernet | json-print`` - the ``Rx`` / ``Tx`` counter blocks of every Ethernet port
  (``error packets``, ``discard packets``, ...), in either layout Onyx prints: a list of port objects with a
  ``header`` (``Eth1/1``; Onyx before 3.6.6000), or ports keyed by name, each a list of attribute objects (later
  Onyx, as mellanox.onyx's ``onyx_interface`` reads it). Onyx's PFC pause counters are not read: no public output
  of them was found to build a parser on.
- NVUE: ``nv show interface --view counters`` (the ``Interface MTU RX_OK RX_ERR RX_DRP RX_OVR TX_OK TX_ERR TX_DRP
  TX_OVR Flg`` table of every interface) and ``nv show interface <port> counters qos pfc-stats`` (the
  ``switch-priority rx-pause-frames rx-pause-duration tx-pause-frames tx-pause-duration`` table of one port).

Every parser returns the counters or raises ``ValueError`` naming the command and what was wrong - never a half-read
value. Port names are the pod model's (Onyx ``1/1``, Cumulus ``swp1``). Sources of the test outputs:
tests/unit/fixtures/switch/SOURCES.md.

``MEANINGS`` says, for every counter the stage judges, what it means, so a finding reads "PFC pause frames received
(the peer asks this port to stop sending) +1000" rather than "rxFrames +1000".
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.show_parse import nvue_table

__all__ = ["onyx_interfaces_counters", "nvue_counters_view", "nvue_pfc_stats", "MEANINGS", "meaning",
           "ONYX_COUNTERS", "NVUE_COUNTERS", "NVUE_PFC"]

ONYX_COUNTERS = "show interfaces ethernet | json-print"
NVUE_COUNTERS = "nv show interface --view counters"
NVUE_PFC = "nv show interface %s counters qos pfc-stats"

# raw counter (as the switch names it, or "rx <name>" / "tx <name>" for Onyx's Rx/Tx blocks) -> what it means.
# Only the counters listed here are judged: a rising one fails switch_counters (module_utils/switch/eval.py).
MEANINGS: Dict[str, str] = {
    # EOS show interfaces counters errors | json
    "inErrors": "frames received with errors",
    "outErrors": "frames not sent because of errors",
    "fcsErrors": "FCS errors (bad frames: cable/optic)",
    "alignmentErrors": "alignment errors (bad frames: cable/optic)",
    "symbolErrors": "symbol errors (bad bits on the wire: cable/optic)",
    "frameTooLongs": "frames too long (an MTU mismatch with the peer?)",
    "frameTooShorts": "runt frames (too short)",
    # EOS show interfaces counters discards | json
    "inDiscards": "frames discarded on input",
    "outDiscards": "frames discarded on output (congestion: no buffer)",
    # EOS show priority-flow-control counters | json
    "rxFrames": "PFC pause frames received (the peer asks this port to stop sending)",
    "txFrames": "PFC pause frames sent (this port is congested and pauses the peer)",
    # Onyx show interfaces ethernet | json-print, Rx / Tx blocks
    "rx error packets": "frames received with errors",
    "tx error packets": "frames not sent because of errors",
    "rx discard packets": "frames discarded on input",
    "tx discard packets": "frames discarded on output (congestion: no buffer)",
    "rx fcs errors": "FCS errors (bad frames: cable/optic)",
    # NVUE nv show interface --view counters
    "RX_ERR": "frames received with errors",
    "TX_ERR": "frames not sent because of errors",
    "RX_DRP": "frames discarded on input",
    "TX_DRP": "frames discarded on output (congestion: no buffer)",
    "RX_OVR": "receive overruns (frames lost: the port could not take them)",
    # NVUE nv show interface <port> counters qos pfc-stats (summed over the switch priorities)
    "rx-pause-frames": "PFC pause frames received (the peer asks this port to stop sending)",
    "tx-pause-frames": "PFC pause frames sent (this port is congested and pauses the peer)",
}


def meaning(counter: str) -> str:
    """What a raw counter means (the counter's own name when the table does not know it)."""
    return MEANINGS.get(counter, counter)


# ---------------------------------------------------------------------------------------------- Onyx


def _onyx_port(name: str) -> Optional[str]:
    """'Eth1/1' -> '1/1'; None for a port that is not an Ethernet port (Vlan 10, Po1, mgmt0)."""
    m = re.match(r"^Eth(?:ernet)?\s*(\d+/\d+(?:/\d+)?)$", str(name).strip(), re.I)
    return m.group(1) if m else None


def _onyx_entries(data: Any) -> List[Dict[str, Any]]:
    """The port objects of either json-print layout, each with its name under ``header``."""
    if isinstance(data, list):
        out = []
        for item in data:
            if not isinstance(item, dict):
                raise ValueError("%s: a list item is a %s, expected an object" % (ONYX_COUNTERS, type(item).__name__))
            if "header" in item:
                out.append(item)
            else:  # [{"Eth1/1": [{...}, ...]}, ...]
                out += _onyx_entries(item)
        return out
    if isinstance(data, dict):
        out = []
        for name, attrs in data.items():
            items = attrs if isinstance(attrs, list) else [attrs]
            merged: Dict[str, Any] = {"header": name}
            for a in items:
                if not isinstance(a, dict):
                    raise ValueError("%s: %s has an attribute entry that is not an object: %r" % (
                        ONYX_COUNTERS, name, a))
                merged.update(a)
            out.append(merged)
        return out
    raise ValueError("%s: the JSON output is a %s, expected a list or an object of ports" % (
        ONYX_COUNTERS, type(data).__name__))


def _count(cmd: str, where: str, value: Any) -> int:
    """A counter value: an int, or Onyx's decimal string ("0", "1234")."""
    if isinstance(value, bool):
        raise ValueError("%s: %s is %r, expected a counter" % (cmd, where, value))
    if isinstance(value, int):
        return value
    s = str(value).strip().replace(",", "")
    if not re.match(r"^\d+$", s):
        raise ValueError("%s: %s is %r, expected a counter" % (cmd, where, value))
    return int(s)


def onyx_interfaces_counters(text: str) -> Dict[str, Dict[str, int]]:
    """``show interfaces ethernet | json-print`` -> ``{port: {"rx error packets": n, "rx discard packets": n,
    "tx error packets": n, "tx discard packets": n, ... every other numeric Rx/Tx counter}}`` for the Ethernet
    ports. A port without both Rx and Tx blocks, or without their error and discard packets, is refused (an
    output of another command, or cut off)."""
    cmd = ONYX_COUNTERS
    body = (text or "").strip()
    first = body.splitlines()[0].strip() if body else "(empty output)"
    if re.match(r"^(%\s*\S|Error:)", first):
        raise ValueError("%s: the switch answered with an error: %r" % (cmd, first[:120]))
    start = min([i for i in (body.find("["), body.find("{")) if i >= 0] or [-1])
    if start < 0:
        raise ValueError("%s: expected JSON (| json-print), got %r" % (cmd, first[:120]))
    try:
        data, end = json.JSONDecoder().raw_decode(body[start:])
    except ValueError as exc:
        raise ValueError("%s: the JSON output does not parse: %s" % (cmd, exc)) from None
    rest = body[start + end:].strip()
    if rest and not re.match(r"^[\w.@:~()/\-]+(?: \[[^\]\n]*\])? ?[#>$]$", rest):
        raise ValueError("%s: unexpected text after the JSON output: %r" % (cmd, rest.splitlines()[0][:120]))
    out: Dict[str, Dict[str, int]] = {}
    for entry in _onyx_entries(data):
        port = _onyx_port(entry.get("header", ""))
        if port is None:
            continue
        counters: Dict[str, int] = {}
        for side in ("Rx", "Tx"):
            block = entry.get(side)
            if not isinstance(block, dict):
                raise ValueError("%s: Eth%s has no %s counters block" % (cmd, port, side))
            for need in ("error packets", "discard packets"):
                if need not in block:
                    raise ValueError("%s: Eth%s %s has no %r counter" % (cmd, port, side, need))
            for key, value in block.items():
                name = "%s %s" % (side.lower(), key)
                if key in ("error packets", "discard packets"):
                    counters[name] = _count(cmd, "Eth%s %s %s" % (port, side, key), value)
                elif re.match(r"^\s*\d+\s*$", str(value)):
                    counters[name] = int(str(value).strip())
        out[port] = counters
    if not out:
        raise ValueError("%s: no Ethernet port in the output" % cmd)
    return out


# ---------------------------------------------------------------------------------------------- NVUE

_NVUE_VIEW = ("RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP", "TX_OVR")


def _cli_error(cmd: str, text: str) -> None:
    for ln in (text or "").splitlines():
        if re.match(r"^\s*(%\s*\S|Error:)", ln):
            raise ValueError("%s: the switch answered with an error: %r" % (cmd, ln.strip()[:120]))


def nvue_counters_view(text: str) -> Dict[str, Dict[str, int]]:
    """``nv show interface --view counters`` -> ``{interface: {"RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP",
    "TX_OVR": n}}`` for every row (swp ports, bonds, VLAN interfaces alike; the evaluator keeps the model's ports).
    A missing column or a value that is not a counter raises ValueError."""
    cmd = NVUE_COUNTERS
    _cli_error(cmd, text)
    rows = nvue_table(cmd, text, "Interface")
    out: Dict[str, Dict[str, int]] = {}
    for row in rows:
        missing = [c for c in _NVUE_VIEW if c not in row]
        if missing:
            raise ValueError("%s: no %s column (columns: %s)" % (cmd, "/".join(missing), ", ".join(row)))
        out[row["Interface"]] = {c: _count(cmd, "%s %s" % (row["Interface"], c), row[c]) for c in _NVUE_VIEW}
    if not out:
        raise ValueError("%s: a table without rows" % cmd)
    return out


def nvue_pfc_stats(text: str, port: str = "<port>") -> Dict[str, Any]:
    """``nv show interface <port> counters qos pfc-stats`` -> ``{"rx-pause-frames": total, "tx-pause-frames": total,
    "by_priority": {priority: {"rx-pause-frames", "tx-pause-frames"}}}`` (the totals over the eight switch
    priorities; the durations are not kept). Fewer than the eight priorities, or a value that is not a counter,
    raises ValueError."""
    cmd = NVUE_PFC % port
    _cli_error(cmd, text)
    rows = nvue_table(cmd, text, "switch-priority")
    by_prio: Dict[str, Dict[str, int]] = {}
    for row in rows:
        for col in ("rx-pause-frames", "tx-pause-frames"):
            if col not in row:
                raise ValueError("%s: no %s column (columns: %s)" % (cmd, col, ", ".join(row)))
        prio = row["switch-priority"]
        if not prio.isdigit():
            raise ValueError("%s: switch-priority %r is not a number" % (cmd, prio))
        by_prio[prio] = {c: _count(cmd, "priority %s %s" % (prio, c), row[c])
                         for c in ("rx-pause-frames", "tx-pause-frames")}
    if sorted(by_prio, key=int) != [str(i) for i in range(8)]:
        raise ValueError("%s: expected the switch priorities 0-7, got %s" % (cmd, ", ".join(sorted(by_prio)) or
                                                                             "none"))
    return {"rx-pause-frames": sum(v["rx-pause-frames"] for v in by_prio.values()),
            "tx-pause-frames": sum(v["tx-pause-frames"] for v in by_prio.values()), "by_priority": by_prio}
