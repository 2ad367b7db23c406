# -*- coding: utf-8 -*-
"""Parsers for Slurm's node views (issue 20): pure functions, stdlib only.

* :func:`parse_sinfo` reads ``sinfo -N -h -o '%N|%t|%E'`` (node, compact state, reason);
* :func:`parse_scontrol_nodes` reads ``scontrol show node -o`` (one line per node, ``Key=Value`` fields;
  ``OS=`` and ``Reason=`` values hold spaces);
* :func:`parse_slurmd_c` reads ``slurmd -C`` (the node's hardware as a slurm.conf NodeName line).

Each returns plain data; :func:`node_states` merges either view into ``{node: {state, drain, responding,
reason}}``, the shape the ``pod_slurm`` module returns and the ``slurm`` check reads. The fixtures in
tests/unit/fixtures/slurm were captured from Slurm 22.05.8 (Debian 12) on a real slurmctld/slurmd
(docs/slurm.md shows the session); the state codes are sinfo(1)'s NODE STATE CODES.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

# sinfo(1) NODE STATE CODES, compact form (%t) -> long form (%T) base state.
SHORT_STATES = {
    "alloc": "allocated", "comp": "completing", "down": "down", "drain": "drained", "drng": "draining",
    "fail": "fail", "failg": "failing", "futr": "future", "idle": "idle", "inval": "invalid", "maint": "maint",
    "mix": "mixed", "npc": "perfctrs", "plnd": "planned", "pow_dn": "power_down", "pow_up": "powering_up",
    "resv": "reserved", "reboot": "reboot_requested", "unk": "unknown", "boot": "rebooting",
    "blocked": "blocked", "drng~": "draining",
}
# Suffixes sinfo appends to a compact state (sinfo(1)): '*' not responding, '~' powered off, '#' powering
# up, '!' pending power down, '%' powering down, '$' maintenance reservation, '@' reboot pending, '^' reboot
# issued, '-' planned for a job.
SUFFIXES = "*~#!%$@^-"
UNHEALTHY = ("down", "drained", "draining", "fail", "failing", "invalid", "unknown")


def _state_from_short(code: str) -> Dict[str, Any]:
    flags = ""
    base = code.strip().lower()
    while base and base[-1] in SUFFIXES:
        flags = base[-1] + flags
        base = base[:-1]
    state = SHORT_STATES.get(base, base)
    return {"state": state, "drain": state in ("drained", "draining"), "responding": "*" not in flags,
            "flags": flags}


def _reason(text: Optional[str]) -> Optional[str]:
    text = (text or "").strip()
    return None if text in ("", "none", "(null)") else text


def parse_sinfo(text: str) -> List[Dict[str, Any]]:
    """``sinfo -N -h -o '%N|%t|%E'`` -> [{node, state, drain, responding, flags, reason}].

    A node in several partitions is listed once per partition; it is kept once. The reason (%E) is the last
    field, so a '|' inside a reason stays in it."""
    out: List[Dict[str, Any]] = []
    seen = set()
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|", 2)
        if len(parts) < 2:
            raise ValueError("not sinfo -o '%%N|%%t|%%E' output: %r" % line)
        node = parts[0].strip()
        if node in seen:
            continue
        seen.add(node)
        row = {"node": node}
        row.update(_state_from_short(parts[1]))
        row["reason"] = _reason(parts[2] if len(parts) > 2 else None)
        out.append(row)
    return out


_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z_]*)=")
_REASON_TAIL = re.compile(r"\s*\[[^\]@]*@[^\]]*\]\s*$")  # " [root@2026-11-23T21:11:24]"


def _fields(line: str) -> Dict[str, str]:
    """``Key=Value Key=Value ...`` where values may hold spaces (OS=Linux 6.1 #1 SMP ...): a value runs up to
    the next `` Key=``. ``Reason=`` runs to the end of the line (a reason may contain '=')."""
    reason = None
    cut = line.find(" Reason=")
    if cut >= 0:
        reason = line[cut + len(" Reason="):]
        line = line[:cut]
    marks = [(m.start(1), m.end(), m.group(1)) for m in _FIELD.finditer(line)]
    fields: Dict[str, str] = {}
    for i, (_start, value_start, key) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(line)
        fields[key] = line[value_start:end].strip()
    if reason is not None:
        fields["Reason"] = reason.rstrip("\n")
    return fields


def parse_scontrol_nodes(text: str) -> List[Dict[str, Any]]:
    """``scontrol show node -o`` -> [{node, state, drain, responding, flags, reason, reason_by, fields}].

    ``State=IDLE+DRAIN`` is the base state and its flags: IDLE+DRAIN -> drained, ALLOCATED/MIXED+DRAIN ->
    draining, ``+NOT_RESPONDING`` (or a '*' in sinfo) -> responding false."""
    out = []
    for line in text.splitlines():
        if not line.startswith("NodeName="):
            continue
        f = _fields(line)
        words = (f.get("State") or "UNKNOWN").upper().split("+")
        base, extra = words[0].lower(), [w for w in words[1:] if w]
        state = {"alloc": "allocated", "mix": "mixed"}.get(base, base)
        if "DRAIN" in extra:
            state = "drained" if base in ("idle", "down") else "draining"
        if "INVALID_REG" in extra or "INVALID" in extra:
            state = "invalid" if state not in ("drained", "draining") else state
        reason = f.get("Reason")
        by = None
        if reason is not None:
            tail = _REASON_TAIL.search(reason)
            if tail:
                by = tail.group(0).strip()[1:-1]
                reason = reason[:tail.start()]
        out.append({"node": f["NodeName"], "state": "down" if base == "down" and "DRAIN" not in extra else state,
                    "drain": "DRAIN" in extra, "responding": "NOT_RESPONDING" not in extra,
                    "flags": "+".join(extra), "reason": _reason(reason), "reason_by": by, "fields": f})
    return out


def parse_slurmd_c(text: str) -> Dict[str, Any]:
    """``slurmd -C`` -> {NodeName, CPUs, Boards, SocketsPerBoard, CoresPerSocket, ThreadsPerCore, RealMemory}
    (numbers as ints; the ``UpTime=`` line is dropped)."""
    for line in text.splitlines():
        if line.startswith("NodeName="):
            out: Dict[str, Any] = {}
            for word in line.split():
                key, _, value = word.partition("=")
                out[key] = int(value) if value.isdigit() else value
            return out
    raise ValueError("no NodeName= line in slurmd -C output")


def node_states(rows: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """{node: {state, drain, responding, reason}} from either parser's rows."""
    return {r["node"]: {"state": r["state"], "drain": r["drain"], "responding": r["responding"],
                        "reason": r["reason"]} for r in rows}


def unhealthy(states: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The nodes a scheduler check reports: down, drained/draining, failing, invalid, or not responding."""
    return {n: s for n, s in states.items() if s["state"] in UNHEALTHY or s["drain"] or not s["responding"]}
