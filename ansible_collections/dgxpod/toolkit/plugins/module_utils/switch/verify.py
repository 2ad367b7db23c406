# -*- coding: utf-8 -*-
"""Parsers for the lossless-RoCE state a switch reports, and the check built on them.

- EOS ``show priority-flow-control``: per-port PFC status and no-drop priorities.
- Onyx ``show roce``: RoCE mode, trust mode, PFC state and the PFC-enabled switch priorities.
- Cumulus NVUE ``nv show qos roce`` (``-o json`` or the table): mode, PFC priority, trust mode.

``verify_lossless(platform, output, expect)`` compares a parsed output with what the structured config
asked for (``expect``: {"pfc_priority": 3, "ports": [...]}; empty: nothing is expected to be lossless) and
returns {"ok": bool, "problems": [...], "parsed": {...}}. Fixtures with real outputs and their sources are in
tests/unit/fixtures/switch/.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List


# The port table of EOS ``show priority-flow-control``. No captured output of a real switch was found in public
# sources (tests/unit/fixtures/switch/SOURCES.md), so two layouts are accepted and anything else is reported as
# unrecognised instead of being read as "PFC off":
# - "flags": legend "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled", header
#   "Port Status Priorities Action ... Note", rows "Et1/1  E A  3  -  DCBX disabled";
# - "columns": header "Port Enabled Priorities Active Note", rows "Ethernet1  Yes  3  Yes  DCBX disabled" (the
#   priorities cell is empty when PFC is off).
_EOS_PORT = r"(?:Et|Ethernet|Po|Port-Channel)\d[\d/.]*"
_EOS_FLAGS_ROW = re.compile(r"^(%s)\s+([EDAW](?: [EDAW])*)\s{2,}([\d ,]+|-)(?:\s|$)" % _EOS_PORT)
_EOS_COLUMNS_ROW = re.compile(r"^(%s)\s+(Yes|No)\s+([\d ,]*?)\s*(Yes|No)(?:\s|$)" % _EOS_PORT, re.I)


def _eos_layout(text: str) -> Any:
    for line in text.splitlines():
        cols = line.split()
        if not cols or cols[0] != "Port":
            continue
        if "Status" in cols and "Priorities" in cols:
            return "flags"
        if "Enabled" in cols and "Active" in cols and "Priorities" in cols:
            return "columns"
    return None


def parse_eos_pfc(text: str) -> Dict[str, Any]:
    """{"layout": "flags"|"columns"|None, "global": bool|None,
    "ports": {"Et1/1": {"enabled": bool, "active": bool, "watchdog": bool|None, "priorities": [3]}}}.

    ``layout`` is None when no known port-table header is in the output (then ``ports`` is empty)."""
    layout = _eos_layout(text)
    out: Dict[str, Any] = {"layout": layout, "global": None, "ports": {}}
    m = re.search(r"^Global PFC\s*:\s*(\w+)", text, re.M)
    if m:
        out["global"] = m.group(1).lower() == "enabled"
    for line in text.splitlines():
        line = line.rstrip()
        if layout == "flags":
            m = _EOS_FLAGS_ROW.match(line)
            if m:
                flags = m.group(2).split()
                out["ports"][_eos_short(m.group(1))] = {
                    "enabled": "E" in flags, "active": "A" in flags, "watchdog": "W" in flags,
                    "priorities": [int(p) for p in re.findall(r"\d", m.group(3))]}
        elif layout == "columns":
            m = _EOS_COLUMNS_ROW.match(line)
            if m:
                out["ports"][_eos_short(m.group(1))] = {
                    "enabled": m.group(2).lower() == "yes", "active": m.group(4).lower() == "yes",
                    "watchdog": None, "priorities": [int(p) for p in re.findall(r"\d", m.group(3))]}
    return out


def _eos_short(name: str) -> str:
    return name.replace("Ethernet", "Et").replace("Port-Channel", "Po")


def parse_onyx_roce(text: str) -> Dict[str, Any]:
    """{"mode": "lossless"|None, "trust": "L3", "pfc": bool, "pfc_priorities": [3], "ecn": bool, "tcs": {...}}."""
    out: Dict[str, Any] = {"mode": None, "trust": None, "pfc": None, "pfc_priorities": [], "tcs": {}}
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^RoCE mode\s*:\s*(\S+)", line)
        if m:
            out["mode"] = None if m.group(1) in ("N/A", "disabled") else m.group(1).lower()
        m = re.match(r"^Port trust mode\s*:\s*(\S+)", line)
        if m:
            out["trust"] = m.group(1)
        m = re.match(r"^PFC\s*:\s*(\S+)", line)
        if m:
            out["pfc"] = m.group(1).lower() == "enabled"
        m = re.match(r"^switch-priority (\d)\s*:\s*enabled", line)
        if m:
            out["pfc_priorities"].append(int(m.group(1)))
        m = re.match(r"^PFC switch-priority\s*:\s*(\d)", line)
        if m and int(m.group(1)) not in out["pfc_priorities"]:
            out["pfc_priorities"].append(int(m.group(1)))
        m = re.match(r"^(\d)\s+(\d)\s+(RoCE|CNP)\b", line)
        if m:
            out["tcs"][m.group(3)] = {"switch_priority": int(m.group(1)), "tc": int(m.group(2))}
    return out


def parse_nvue_roce(text: str) -> Dict[str, Any]:
    """{"enable": bool, "mode": str, "pfc_priority": int|None, "trust": str} from -o json or the table."""
    text = text.strip()
    if text.startswith("{"):
        data = json.loads(text)
        pfc = (data.get("pfc") or {}).get("pfc-priority")
        return {"enable": str(data.get("enable", "")).lower() in ("on", "true", "yes"),
                "mode": data.get("mode"),
                "pfc_priority": int(pfc) if str(pfc).strip().isdigit() else None,
                "trust": (data.get("trust") or {}).get("trust-mode")}
    out: Dict[str, Any] = {"enable": False, "mode": None, "pfc_priority": None, "trust": None}
    section = None
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("---") or "====" in raw:
            continue
        if raw.startswith("RoCE "):
            break  # the mapping tables follow
        indent = len(raw) - len(raw.lstrip())
        cols = raw.split()
        key, values = cols[0], cols[1:]
        if indent == 0:
            section = key
        if key == "enable" and values:
            out["enable"] = values[-1] == "on"
        elif key == "mode" and indent == 0 and values:
            out["mode"] = values[0]
        elif key == "pfc-priority" and section == "pfc" and values:
            out["pfc_priority"] = int(values[0])
        elif key == "trust-mode" and values:
            out["trust"] = values[0]
    if out["mode"] == "lossless" and out["pfc_priority"] is not None:
        out["enable"] = True
    return out


def verify_lossless(platform: str, output: str, expect: Dict[str, Any]) -> Dict[str, Any]:
    """Compare the parsed show output with the expectation; every problem is one readable line."""
    problems: List[str] = []
    prio = expect.get("pfc_priority")
    ports = list(expect.get("ports") or [])
    if platform == "eos":
        parsed = parse_eos_pfc(output)
        if ports and parsed["layout"] is None:
            first = next((ln.strip() for ln in output.splitlines() if ln.strip()), "")
            problems.append("show priority-flow-control: no known port table in the output (first line: %r); "
                            "cannot tell whether PFC is on - check the switch by hand" % first[:80])
            ports = []
        for port in ports:
            got = parsed["ports"].get(_eos_short(port))
            if got is None or not got["enabled"]:
                problems.append("%s: PFC is not enabled" % port)
            elif prio is not None and prio not in got["priorities"]:
                problems.append("%s: priority %s is not no-drop (no-drop: %s)" % (
                    port, prio, ",".join(str(p) for p in got["priorities"]) or "none"))
    elif platform == "onyx":
        parsed = parse_onyx_roce(output)
        if prio is not None:
            if parsed["mode"] != "lossless":
                problems.append("RoCE mode is %s, not lossless" % (parsed["mode"] or "disabled"))
            elif not parsed["pfc"] or prio not in parsed["pfc_priorities"]:
                problems.append("PFC is not enabled on switch-priority %s" % prio)
    elif platform == "cumulus":
        parsed = parse_nvue_roce(output)
        if prio is not None:
            if parsed["mode"] != "lossless" or not parsed["enable"]:
                problems.append("qos roce mode is %s (enable %s), not lossless" % (parsed["mode"], parsed["enable"]))
            elif parsed["pfc_priority"] != prio:
                problems.append("PFC priority is %s, not %s" % (parsed["pfc_priority"], prio))
    else:
        raise ValueError("no lossless check for platform %r" % platform)
    return {"ok": not problems, "problems": problems, "parsed": parsed, "expected": expect}
