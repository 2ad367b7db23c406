# -*- coding: utf-8 -*-
"""Parse the human-readable output of IBM Spectrum Scale (GPFS) commands - pure functions.

Formats: mmlscluster, mmgetstate [-L] [-a|-N] (a tiebreaker-disk quorum printed ``1*``), mmlsconfig,
mmlsmount {all|fs} [-L] (without -L only the node count), mmlslicense -L, as printed by Spectrum Scale
4.2 - 5.2 (IBM documentation examples and public captures; the fixtures in tests/unit/fixtures/scale/ name
their sources). The parsers are tolerant of column widths (they split on whitespace; Scale pads columns to
the longest name, and long FQDNs push rows out of alignment) and of the licence warning banner
mmlscluster prints above its output.

Contract: a value, or ``ScaleParseError`` (a ``ValueError``) naming the command, the line and what was
expected - empty output, a table row that is not a row, a node count that does not match the rows listed
(output cut off) are errors, never a partial answer.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, List, Optional

class ScaleParseError(ValueError):
    """A Spectrum Scale command printed something this parser cannot read (names command, line, what)."""

    def __init__(self, tool: str, message: str, line_no: Optional[int] = None, line: Optional[str] = None):
        where = "" if line_no is None else " line %d" % line_no
        text = "" if line is None else ": %r" % line.strip()
        super().__init__("%s output%s: %s%s" % (tool, where, message, text))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _nonempty(tool: str, text: Any) -> str:
    if not isinstance(text, str):
        raise ScaleParseError(tool, "expected the output as text, got %s" % type(text).__name__)
    if not text.strip():
        raise ScaleParseError(tool, "empty output")
    if not text.endswith(("\n", "\r")):  # every mm command ends its output with a newline
        lines = text.splitlines()
        raise ScaleParseError(tool, "the last line has no newline (output cut off?)", len(lines), lines[-1])
    return text


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


def _rows_after_rule(lines: List[str], header_re: Any, tool: str = "?") -> List[List[str]]:
    """Whitespace-split rows that follow ``header_re`` and its line of dashes, up to a blank line."""
    return [row for _, row in _numbered_rows(lines, header_re, tool)]


def _numbered_rows(lines: List[str], header_re: Any, tool: str) -> List[Any]:
    """[(line number, whitespace-split row)] after ``header_re`` and its dashes, up to a blank line.
    ScaleParseError when the header is missing or not followed by its line of dashes."""
    rows: List[Any] = []
    state = 0  # 0: looking for header, 1: expecting dashes, 2: in rows, 3: after the table
    for n, line in enumerate(lines, 1):
        if state == 0:
            if header_re.search(line):
                state = 1
            continue
        if state == 1:
            if set(line.strip()) <= {"-"} and line.strip():
                state = 2
                continue
            raise ScaleParseError(tool, "expected the line of dashes under the table header", n, line)
        if not line.strip():
            if rows:
                state = 3
            continue
        if state == 3:
            # after the table only a summary may follow (blank, dashes, 'Summary information', 'Name: value')
            text = line.strip()
            if not (set(text) <= {"-"} or text.startswith("Summary information") or ":" in text):
                raise ScaleParseError(tool, "a line after the table has ended (a blank line inside the table?)",
                                      n, line)
            continue
        rows.append((n, line.split()))
    if state == 0:
        raise ScaleParseError(tool, "no table header (%s)" % header_re.pattern.replace("\\s+", " ").strip("^\\s*"))
    if state == 1:
        raise ScaleParseError(tool, "the table header is the last line (output cut off?)")
    return rows


def parse_mmlscluster(text: str) -> Dict[str, Any]:
    """mmlscluster -> {member, cluster_name, cluster_id, uid_domain, repository_type, ..., nodes: [{number,
    daemon_name, ip, admin_name, designation}]}. ``member`` is False when the node is in no cluster."""
    tool = "mmlscluster"
    _nonempty(tool, text)
    if not_member(text):
        return {"member": False, "nodes": []}
    out: Dict[str, Any] = {"member": False, "nodes": []}
    lines = text.splitlines()
    for line in lines:
        m = re.match(r"^\s*([A-Za-z][A-Za-z ]+?):\s+(\S.*?)\s*$", line)
        if m and m.group(1) in _CLUSTER_KEYS:
            out[_CLUSTER_KEYS[m.group(1)]] = m.group(2)
        m = re.match(r"^\s*(Primary|Secondary) server:\s+(\S+)", line)
        if m:
            out.setdefault("config_servers", {})[m.group(1).lower()] = m.group(2)
    if "cluster_name" not in out:
        raise ScaleParseError(tool, "no 'GPFS cluster name:' line and no 'does not belong to a GPFS cluster'")
    for n, row in _numbered_rows(lines, re.compile(r"^\s*Node\s+Daemon node name\s+IP address"), tool):
        if len(row) < 4 or not row[0].isdigit() or not _is_ip(row[2]):
            raise ScaleParseError(tool, "expected 'number daemon-name IP admin-name [designation]'", n,
                                  lines[n - 1])
        out["nodes"].append({"number": int(row[0]), "daemon_name": row[1], "ip": row[2], "admin_name": row[3],
                             "designation": " ".join(row[4:])})
    if not out["nodes"]:
        raise ScaleParseError(tool, "the node table has no rows (output cut off?)")
    out["member"] = True
    return out


def parse_mmgetstate(text: str) -> List[Dict[str, Any]]:
    """mmgetstate [-L] [-s] [-a|-N ...] -> [{number, name, state, quorum, nodes_up, total_nodes, tiebreaker,
    remarks}].

    With -L the quorum columns may be empty (a node still arbitrating prints none), so the state is found
    as the first known state word after the name; numbers before it are quorum / nodes up / total. A quorum
    printed ``1*`` means tiebreaker disks are in use (quorum 1, ``tiebreaker: True``)."""
    tool = "mmgetstate"
    _nonempty(tool, text)
    lines = text.splitlines()
    out = []
    for n, row in _numbered_rows(lines, re.compile(r"^\s*Node number\s+Node name"), tool):
        if len(row) < 3 or not row[0].isdigit():
            raise ScaleParseError(tool, "expected 'number name [quorum up total] state [remarks]'", n, lines[n - 1])
        rest = row[2:]
        idx = next((i for i, tok in enumerate(rest) if tok in GPFS_STATES), None)
        if idx is None:
            raise ScaleParseError(tool, "no GPFS state (%s) in the row" % "/".join(GPFS_STATES), n, lines[n - 1])
        cols = rest[:idx]
        if any(not re.match(r"^\d+\*?$", t) for t in cols) or len(cols) not in (0, 3):
            raise ScaleParseError(tool, "expected quorum, nodes up and total nodes (or none) before the state",
                                  n, lines[n - 1])
        entry = {"number": int(row[0]), "name": row[1], "state": rest[idx], "remarks": " ".join(rest[idx + 1:])}
        if cols:
            entry.update(quorum=int(cols[0].rstrip("*")), nodes_up=int(cols[1].rstrip("*")),
                         total_nodes=int(cols[2].rstrip("*")), tiebreaker=cols[0].endswith("*"))
        out.append(entry)
    if not out:
        raise ScaleParseError(tool, "the state table has no rows")
    return out


def parse_mmlsconfig(text: str) -> Dict[str, Any]:
    """mmlsconfig -> {cluster_name, common: {attr: value}, sections: [{nodes: [...], values: {...}}],
    filesystems: [names]}. A ``[name,name]`` line starts values that apply to those nodes or node
    classes only, ``[common]`` returns to cluster-wide values."""
    tool = "mmlsconfig"
    _nonempty(tool, text)
    out: Dict[str, Any] = {"cluster_name": None, "common": {}, "sections": [], "filesystems": []}
    current: Dict[str, str] = out["common"]
    in_fs = False
    for n, raw in enumerate(text.splitlines(), 1):
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
            if not re.match(r"^(/dev/)?[A-Za-z0-9_][A-Za-z0-9_.-]*$", line):
                raise ScaleParseError(tool, "expected a file system (/dev/NAME) in the file system list", n, raw)
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
        if not re.match(r"^[A-Za-z][A-Za-z0-9_.-]*$", parts[0]):
            raise ScaleParseError(tool, "expected 'attribute value'", n, raw)
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
    """mmlsmount {all|fs} [-L] -> {fs: {owner, device, count, nodes}}. With -L ``nodes`` lists [{ip, name,
    cluster}] (at least one row, never more than the count); without -L ("is mounted on 3 nodes.") ``nodes`` is None:
    mounted somewhere, where not printed. A file system that is not mounted anywhere has count 0, nodes [].
    "No file systems were found" gives {}."""
    tool = "mmlsmount"
    _nonempty(tool, text)
    out: Dict[str, Dict[str, Any]] = {}
    current: Optional[Dict[str, Any]] = None
    lines = text.splitlines()

    def close(line_no: Optional[int]) -> None:
        # fewer rows than the count is seen in published outputs (CNSA INSTALL.md: 7 counted, 6 listed), so only
        # a header without any row, or more rows than counted, is refused
        if current is not None and current["nodes"] is not None and (
                len(current["nodes"]) > current["count"] or (current["count"] and not current["nodes"])):
            raise ScaleParseError(tool, "file system %s: %d node(s) listed, the header says %d (output cut off?)"
                                  % (current["fs"], len(current["nodes"]), current["count"]), line_no)

    for n, line in enumerate(lines, 1):
        s = line.strip()
        m = re.match(r"^File system (\S+)(?: \((\S+?):(\S+)\))? is mounted on (\d+) nodes?([:.])$", s)
        if m:
            close(n)
            if m.group(1) in out:
                raise ScaleParseError(tool, "file system %s listed twice" % m.group(1), n, line)
            current = {"fs": m.group(1), "owner": m.group(2), "device": m.group(3) or m.group(1),
                       "count": int(m.group(4)), "nodes": [] if m.group(5) == ":" else None}
            out[m.group(1)] = current
            if m.group(5) == ".":
                current = None
            continue
        m = re.match(r"^File system (\S+)(?: \((\S+?):(\S+)\))? is not mounted\.?$", s)
        if m:
            close(n)
            out[m.group(1)] = {"fs": m.group(1), "owner": m.group(2), "device": m.group(3) or m.group(1),
                               "count": 0, "nodes": []}
            current = None
            continue
        if re.match(r"^(mmlsmount: )?No file systems were found", s):
            continue
        if not s:
            close(n)
            current = None
            continue
        row = s.split()
        if current is None or current["nodes"] is None or len(row) not in (2, 3) or not _is_ip(row[0]):
            raise ScaleParseError(tool, "expected 'File system NAME ... is mounted on N nodes' or a node row "
                                  "'IP name [cluster]'", n, line)
        current["nodes"].append({"ip": row[0], "name": row[1], "cluster": row[2] if len(row) > 2 else None})
    close(None)
    for v in out.values():
        v.pop("fs")
    return out


def parse_mmlslicense(text: str) -> Dict[str, Dict[str, str]]:
    """mmlslicense -L -> {node: {required, designated}} ('none' when no licence is designated)."""
    tool = "mmlslicense"
    _nonempty(tool, text)
    lines = text.splitlines()
    out = {}
    for n, row in _numbered_rows(lines, re.compile(r"^\s*Node name\s+Required license"), tool):
        if len(row) not in (2, 3):
            raise ScaleParseError(tool, "expected 'node required-license [designated-license]'", n, lines[n - 1])
        out[row[0]] = {"required": row[1], "designated": row[2] if len(row) == 3 else "none"}
    if not out:
        raise ScaleParseError(tool, "the licence table has no rows")
    return out
