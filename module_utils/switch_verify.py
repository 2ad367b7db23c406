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


def parse_eos_pfc(text: str) -> Dict[str, Any]:
    """{"global": bool|None, "ports": {"Et1/1": {"enabled": bool, "active": bool, "priorities": [3]}}}."""
    out: Dict[str, Any] = {"global": None, "ports": {}}
    m = re.search(r"^Global PFC\s*:\s*(\w+)", text, re.M)
    if m:
        out["global"] = m.group(1).lower() == "enabled"
    for line in text.splitlines():
        m = re.match(r"^((?:Et|Ethernet|Po|Port-Channel)[\d/]+)\s+([EDAW ]+?)\s{2,}([\d ,]+|-)\s", line + " ")
        if not m:
            continue
        flags = m.group(2).split()
        prios = [int(p) for p in re.findall(r"\d", m.group(3))]
        out["ports"][_eos_short(m.group(1))] = {"enabled": "E" in flags, "active": "A" in flags,
                                                "watchdog": "W" in flags, "priorities": prios}
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
