# -*- coding: utf-8 -*-
"""Parse the human-readable output of IBM Spectrum Scale (GPFS) commands - pure functions.

Formats: mmlscluster, mmgetstate [-L] [-a|-N], mmlsconfig, mmlsmount all -L, mmlslicense -L, as printed
by Spectrum Scale 4.2 - 5.1 (IBM Knowledge Center examples and public captures; the fixtures in
tests/unit/fixtures/scale/ name their sources). The parsers are tolerant of column widths (they split on
whitespace; Scale pads columns to the longest name, and long FQDNs push rows out of alignment) and of
the licence warning banner mmlscluster prints above its output.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

NOT_MEMBER_RE = re.compile(r"does not belong to a GPFS cluster")
GPFS_STATES = ("active", "arbitrating", "down", "unknown", "unresponsive")
_CLUSTER_KEYS = {
    "GPFS cluster name": "cluster_name",
    "GPFS cluster id": "cluster_id",
    "GPFS UID domain": "uid_domain",
    "Remote shell command": "remote_shell",
    "Remote file copy command": "remote_copy",
    "Repository type": "repository_type",
}


def short_name(name: str) -> str:
    """'worker01.ocp4.scale.ibm.com' -> 'worker01' (Scale prints short, daemon or admin names)."""
    return (name or "").split(".")[0]


def same_node(a: str, b: str) -> bool:
    return bool(a) and bool(b) and short_name(a) == short_name(b)


def not_member(text: str) -> bool:
    """True when a command said this node is in no cluster (6027-1382)."""
    return bool(NOT_MEMBER_RE.search(text or ""))


def _rows_after_rule(lines: List[str], header_re: Any) -> List[List[str]]:
    """Whitespace-split rows that follow ``header_re`` and its line of dashes, up to a blank line."""
    rows: List[List[str]] = []
    state = 0  # 0: looking for header, 1: expecting dashes, 2: in rows
    for line in lines:
        if state == 0:
            if header_re.search(line):
                state = 1
            continue
        if state == 1:
            if set(line.strip()) <= {"-"} and line.strip():
                state = 2
            continue
        if not line.strip():
            if rows:
                break
            continue
        rows.append(line.split())
    return rows


def parse_mmlscluster(text: str) -> Dict[str, Any]:
    """mmlscluster -> {member, cluster_name, cluster_id, uid_domain, repository_type, ..., nodes: [{number,
    daemon_name, ip, admin_name, designation}]}. ``member`` is False when the node is in no cluster."""
    if not_member(text):
        return {"member": False, "nodes": []}
    out: Dict[str, Any] = {"member": False, "nodes": []}
    lines = (text or "").splitlines()
    for line in lines:
        m = re.match(r"^\s*([A-Za-z][A-Za-z ]+?):\s+(\S.*?)\s*$", line)
        if m and m.group(1) in _CLUSTER_KEYS:
            out[_CLUSTER_KEYS[m.group(1)]] = m.group(2)
        m = re.match(r"^\s*(Primary|Secondary) server:\s+(\S+)", line)
        if m:
            out.setdefault("config_servers", {})[m.group(1).lower()] = m.group(2)
    for row in _rows_after_rule(lines, re.compile(r"^\s*Node\s+Daemon node name\s+IP address")):
        if len(row) < 4 or not row[0].isdigit():
            continue
        out["nodes"].append({"number": int(row[0]), "daemon_name": row[1], "ip": row[2], "admin_name": row[3],
                             "designation": " ".join(row[4:])})
    out["member"] = "cluster_name" in out
    return out


def parse_mmgetstate(text: str) -> List[Dict[str, Any]]:
    """mmgetstate [-L] [-s] [-a|-N ...] -> [{number, name, state, quorum, nodes_up, total_nodes, remarks}].

    With -L the quorum columns may be empty (a node still arbitrating prints none), so the state is found
    as the first known state word after the name; numbers before it are quorum / nodes up / total."""
    out = []
    for row in _rows_after_rule((text or "").splitlines(), re.compile(r"^\s*Node number\s+Node name")):
        if len(row) < 3 or not row[0].isdigit():
            continue
        rest = row[2:]
        idx = next((i for i, tok in enumerate(rest) if tok in GPFS_STATES), None)
        if idx is None:
            continue
        nums = [int(t) for t in rest[:idx] if t.isdigit()]
        entry = {"number": int(row[0]), "name": row[1], "state": rest[idx], "remarks": " ".join(rest[idx + 1:])}
        if len(nums) == 3:
            entry.update(quorum=nums[0], nodes_up=nums[1], total_nodes=nums[2])
        out.append(entry)
    return out


def parse_mmlsconfig(text: str) -> Dict[str, Any]:
    """mmlsconfig -> {cluster_name, common: {attr: value}, sections: [{nodes: [...], values: {...}}],
    filesystems: [names]}. A ``[name,name]`` line starts values that apply to those nodes or node
    classes only, ``[common]`` returns to cluster-wide values."""
    out: Dict[str, Any] = {"cluster_name": None, "common": {}, "sections": [], "filesystems": []}
    current: Dict[str, str] = out["common"]
    in_fs = False
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or set(line) <= {"-"}:
            continue
        m = re.match(r"^Configuration data for cluster (\S+?):?$", line)
        if m:
            out["cluster_name"] = m.group(1)
            continue
        if re.match(r"^File systems in cluster \S+?:?$", line):
            in_fs = True
            continue
        if in_fs:
            if line.startswith("/dev/") or re.match(r"^\S+$", line):
                out["filesystems"].append(line[5:] if line.startswith("/dev/") else line)
            continue
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            if m.group(1) == "common":
                current = out["common"]
            else:
                section = {"nodes": [n.strip() for n in m.group(1).split(",")], "values": {}}
                out["sections"].append(section)
                current = section["values"]
            continue
        parts = line.split(None, 1)
        value = parts[1] if len(parts) > 1 else ""
        # `mmlsconfig attr` prints node-specific values as "attr value [node,node]"
        m = re.match(r"^(.*?)\s*\[([^\]]+)\]$", value)
        if m and current is out["common"] and parts[0] != "cipherList":
            out["sections"].append({"nodes": [n.strip() for n in m.group(2).split(",")],
                                    "values": {parts[0]: m.group(1)}})
            continue
        current[parts[0]] = value
    return out


def effective_config(config: Dict[str, Any], node: str, node_classes: Optional[List[str]] = None) -> Dict[str, str]:
    """The values that apply to ``node``: common, overridden by every section naming the node (short or
    long name) or one of ``node_classes``."""
    values = dict(config.get("common") or {})
    classes = set(node_classes or [])
    for section in config.get("sections") or []:
        if any(same_node(n, node) or n in classes for n in section["nodes"]):
            values.update(section["values"])
    return values


def parse_mmlsmount(text: str) -> Dict[str, Dict[str, Any]]:
    """mmlsmount {all|fs} -L -> {fs: {owner, device, count, nodes: [{ip, name, cluster}]}}; a file
    system that is not mounted anywhere has count 0 and no nodes."""
    out: Dict[str, Dict[str, Any]] = {}
    current: Optional[Dict[str, Any]] = None
    for line in (text or "").splitlines():
        m = re.match(r"^File system (\S+)(?: \((\S+?):(\S+)\))? is mounted on (\d+) nodes?:", line.strip())
        if m:
            current = {"owner": m.group(2), "device": m.group(3) or m.group(1), "count": int(m.group(4)), "nodes": []}
            out[m.group(1)] = current
            continue
        m = re.match(r"^File system (\S+)(?: \((\S+?):(\S+)\))? is not mounted", line.strip())
        if m:
            out[m.group(1)] = {"owner": m.group(2), "device": m.group(3) or m.group(1), "count": 0, "nodes": []}
            current = None
            continue
        if current is not None and line.strip():
            row = line.split()
            if len(row) >= 2:
                current["nodes"].append({"ip": row[0], "name": row[1], "cluster": row[2] if len(row) > 2 else None})
        elif not line.strip():
            current = None
    return out


def parse_mmlslicense(text: str) -> Dict[str, Dict[str, str]]:
    """mmlslicense -L -> {node: {required, designated}} ('none' when no licence is designated)."""
    out = {}
    for row in _rows_after_rule((text or "").splitlines(), re.compile(r"^\s*Node name\s+Required license")):
        if len(row) >= 3:
            out[row[0]] = {"required": row[1], "designated": row[2]}
        elif len(row) == 2:
            out[row[0]] = {"required": row[1], "designated": "none"}
    return out
