# -*- coding: utf-8 -*-
"""Parsers for a DGX host's inventory (issue 39 item 2): pure functions, stdlib only.

``lscpu -J`` (util-linux JSON, the flat list of util-linux < 2.37 and the tree with ``children`` since) and the plain
``lscpu`` text; ``/proc/meminfo``; ``/proc/swaps``; ``nvme list -o json`` (nvme-cli 1.x: ``Index``/``ProductName``;
2.x: ``GenericPath``; the nested ``HostNQN``/``Subsystems``/``Controllers`` form of ``-v`` and of 2.11);
``smartctl -j -a /dev/nvmeN`` (smartmontools JSON); ``df -P -B1`` (POSIX format, any ``<N>-blocks``); ``uname -r``;
``numactl -H``.

NUMA: ``numactl -H`` is read rather than a ``/sys/devices/system/node`` listing because it gives, in one output that
ends with a distance matrix (so a cut-off output is seen), the nodes, their CPUs and each node's memory - a node
with much less memory than its peers is a DIMM gone on that socket, which a directory listing cannot show. Where
numactl is not installed, ``lscpu``'s ``NUMA node(s)`` gives the count (the evaluator uses either).

Every parser returns the value the text means or raises :class:`ParseError` naming the tool, the line and what was
expected - never another exception, never a part of the answer passed off as the whole (a last line without a
newline is a cut-off output; JSON must be complete). Fixtures: tests/unit/fixtures/node/ (sources in
tests/unit/test_node_inventory.py).
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import (ParseError, complete_lines,
                                                                                       content_lines, parse_int)

# --------------------------------------------------------------------------------------------------------- JSON


def load_json(tool: str, text: str) -> Any:
    """The one JSON document a tool printed (nothing before or after it), or ParseError naming where it broke."""
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    if not text.strip():
        raise ParseError(tool, "empty output, expected a JSON document")
    if not text.endswith(("\n", "}", "]")):
        raise ParseError(tool, "the output does not end a JSON document (cut off?)")
    try:
        return json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError
        line = getattr(exc, "lineno", None)
        src = text.splitlines()[line - 1] if line and line <= len(text.splitlines()) else None
        raise ParseError(tool, "not a complete JSON document (%s)" % getattr(exc, "msg", exc), line, src) from None


def _int_field(tool: str, value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(tool, "%s: expected a whole number, got %r" % (what, value))
    return value


# --------------------------------------------------------------------------------------------------------- lscpu

LSCPU = "lscpu"
# The summary fields the host check needs; every one is printed by lscpu on x86 (util-linux sys-utils/lscpu.c)
_LSCPU_REQUIRED = ("CPU(s)", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "NUMA node(s)")
_LSCPU_KEY = re.compile(r"^(\s*)([A-Za-z0-9][A-Za-z0-9 ()/_.,+-]{0,48}):(?:\s+(.*))?$")


def _lscpu_json_fields(tool: str, items: Any, out: List[Tuple[str, Optional[str]]]) -> None:
    if not isinstance(items, list):
        raise ParseError(tool, "expected a list of {field, data} entries, got %s" % type(items).__name__)
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            raise ParseError(tool, "expected an entry with a \"field\", got %r" % (item,))
        data = item.get("data")
        if data is not None and not isinstance(data, str):
            raise ParseError(tool, "field %r: expected a string, got %r" % (item["field"], data))
        out.append((item["field"].strip().rstrip(":"), data))
        if "children" in item:
            _lscpu_json_fields(tool, item["children"], out)


def _lscpu_text_fields(text: str) -> List[Tuple[str, Optional[str]]]:
    """(field, value) of the plain output, flat (util-linux < 2.37) or indented as a tree; a line indented past a
    field's value column continues that value (the wrapped Flags and vulnerability texts)."""
    out: List[Tuple[str, Optional[str]]] = []
    for n, line, stripped in content_lines(LSCPU, text):
        m = _LSCPU_KEY.match(line)
        if m and ";" not in m.group(2):
            out.append((m.group(2).strip(), (m.group(3) or "").strip() or None))
        elif line[:1].isspace() and out:
            key, value = out[-1]
            out[-1] = (key, (value or "") + stripped)
        else:
            raise ParseError(LSCPU, "expected 'Field: value'", n, line)
    return out


def parse_lscpu(text: str) -> Dict[str, Any]:
    """``lscpu -J`` or ``lscpu`` -> {cpus, sockets, cores_per_socket, threads_per_core, numa_nodes, model_name,
    vendor}. The JSON is told from the text by its first character. Several CPU models reporting different socket
    or core counts (a hybrid part) are refused: no DGX has one, and one answer would misstate the other."""
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    if text.lstrip().startswith("{"):
        doc = load_json("lscpu -J", text)
        if not isinstance(doc, dict) or "lscpu" not in doc:
            raise ParseError("lscpu -J", "expected {\"lscpu\": [...]}")
        fields: List[Tuple[str, Optional[str]]] = []
        _lscpu_json_fields("lscpu -J", doc["lscpu"], fields)
        tool = "lscpu -J"
    else:
        fields = _lscpu_text_fields(text)
        tool = LSCPU
    seen: Dict[str, Optional[str]] = {}
    for key, value in fields:
        if key in seen and key in _LSCPU_REQUIRED and seen[key] != value:
            raise ParseError(tool, "%s given twice (%r, %r): several CPU types, not a DGX layout" % (
                key, seen[key], value))
        seen.setdefault(key, value)
    missing = [k for k in _LSCPU_REQUIRED if k not in seen]
    if missing:
        raise ParseError(tool, "no %s in the output (cut off, or not lscpu?)" % ", ".join(missing))

    def number(key: str) -> Optional[int]:
        value = (seen[key] or "").strip()
        if value == "-":  # lscpu's "unknown" (a socket count it cannot tell)
            return None
        if not value.isdigit():
            raise ParseError(tool, "%s: expected a number, got %r" % (key, value))
        return int(value)

    return {"cpus": number("CPU(s)"), "sockets": number("Socket(s)"),
            "cores_per_socket": number("Core(s) per socket"), "threads_per_core": number("Thread(s) per core"),
            "numa_nodes": number("NUMA node(s)"), "model_name": seen.get("Model name"),
            "vendor": seen.get("Vendor ID")}


# --------------------------------------------------------------------------------------------------------- meminfo

MEMINFO = "/proc/meminfo"
_MEMINFO_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_()]*):\s+(\d+)(?: (kB))?$")


def parse_meminfo(text: str, hardware_corrupted: bool = True) -> Dict[str, Optional[int]]:
    """``/proc/meminfo`` -> {mem_total_kib, mem_available_kib, swap_total_kib, swap_free_kib,
    hardware_corrupted_kib} (KiB: the kernel's "kB" is 1024 bytes, fs/proc/meminfo.c). MemTotal, SwapTotal,
    SwapFree and - with ``hardware_corrupted`` - HardwareCorrupted are required: DGX OS's Ubuntu kernels build
    CONFIG_MEMORY_FAILURE, and HardwareCorrupted comes late in the file, so an output cut before it is refused
    rather than read as "no corrupted memory". ``hardware_corrupted=False`` reads a kernel without it (the value is
    then None). MemAvailable (3.14+) is None where absent."""
    values: Dict[str, int] = {}
    for n, line, stripped in content_lines(MEMINFO, text):
        m = _MEMINFO_LINE.match(stripped)
        if not m:
            raise ParseError(MEMINFO, "expected 'Name:   <number> kB'", n, line)
        values[m.group(1)] = int(m.group(2))
    required = ("MemTotal", "SwapTotal", "SwapFree") + (("HardwareCorrupted",) if hardware_corrupted else ())
    missing = [k for k in required if k not in values]
    if missing:
        raise ParseError(MEMINFO, "no %s (cut off, not /proc/meminfo, or a kernel without CONFIG_MEMORY_FAILURE?)"
                         % ", ".join(missing))
    return {"mem_total_kib": values["MemTotal"], "mem_available_kib": values.get("MemAvailable"),
            "swap_total_kib": values["SwapTotal"], "swap_free_kib": values["SwapFree"],
            "hardware_corrupted_kib": values.get("HardwareCorrupted")}


# --------------------------------------------------------------------------------------------------------- swaps

SWAPS = "/proc/swaps"


def _unescape_path(path: str) -> str:
    """seq_path escapes space, tab, newline and backslash as \\ooo (mm/swapfile.c swap_show)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


def parse_swaps(text: str) -> List[Dict[str, Any]]:
    """``/proc/swaps`` -> [{name, type, size_kib, used_kib, priority}]; [] when the header stands alone (no swap).
    Columns are whitespace-separated (the kernel pads with tabs or spaces, mm/swapfile.c); a newer kernel's extra
    trailing columns are ignored."""
    rows = content_lines(SWAPS, text)
    if not rows:
        raise ParseError(SWAPS, "empty output, expected the 'Filename Type Size Used Priority' header")
    n0, line0, head = rows[0]
    if head.split()[:5] != ["Filename", "Type", "Size", "Used", "Priority"]:
        raise ParseError(SWAPS, "expected the 'Filename Type Size Used Priority' header", n0, line0)
    out = []
    for n, line, stripped in rows[1:]:
        parts = stripped.split()
        if len(parts) < 5 or parts[1] not in ("partition", "file"):
            raise ParseError(SWAPS, "expected '<name> partition|file <size> <used> <priority>'", n, line)
        out.append({"name": _unescape_path(parts[0]), "type": parts[1],
                    "size_kib": parse_int(SWAPS, parts[2], n, line), "used_kib": parse_int(SWAPS, parts[3], n, line),
                    "priority": parse_int(SWAPS, parts[4], n, line)})
    return out


# --------------------------------------------------------------------------------------------------------- nvme list

NVME_LIST = "nvme list -o json"


def _size(value: Any) -> Optional[int]:
    """A byte count, or None where nvme-cli printed none or a negative one (nvme-cli 2.2-2.5 serialised 64-bit
    sizes through a 32-bit int: linux-nvme/nvme-cli#1786, #2028) - the drive is still there, its size unknown."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _ns_row(ns: Dict[str, Any], ctrl: Dict[str, Any]) -> Dict[str, Any]:
    name = ns.get("DevicePath") or ns.get("NameSpace")
    if not isinstance(name, str) or not name:
        raise ParseError(NVME_LIST, "a namespace without a device name: %r" % (ns,))
    device = name.rsplit("/", 1)[-1]
    controller = ctrl.get("Controller")
    if not controller:
        m = re.match(r"^(nvme\d+)(?:c\d+)?n\d+$", device)
        controller = m.group(1) if m else None
    nsid = ns.get("NSID") if "NSID" in ns else ns.get("NameSpace")
    return {"device": device, "controller": controller, "nsid": nsid if isinstance(nsid, int) else None,
            "serial": (ns.get("SerialNumber") or ctrl.get("SerialNumber") or "").strip() or None,
            "model": (ns.get("ModelNumber") or ctrl.get("ModelNumber") or "").strip() or None,
            "firmware": (ns.get("Firmware") or ctrl.get("Firmware") or "").strip() or None,
            "address": ctrl.get("Address"), "size_bytes": _size(ns.get("PhysicalSize")),
            "used_bytes": _size(ns.get("UsedBytes"))}


def _nested_rows(host: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    subsystems = host.get("Subsystems")
    if not isinstance(subsystems, list):
        raise ParseError(NVME_LIST, "a host entry without a Subsystems list")
    for sub in subsystems:
        if not isinstance(sub, dict):
            raise ParseError(NVME_LIST, "expected a subsystem object, got %r" % (sub,))
        for ctrl in sub.get("Controllers") or []:
            for ns in ctrl.get("Namespaces") or []:
                yield _ns_row(ns, ctrl)
        for ns in sub.get("Namespaces") or []:  # multipath: the namespace names its paths (controllers)
            paths = ns.get("Paths") or [{}]
            yield _ns_row(ns, paths[0] if isinstance(paths[0], dict) else {})


def parse_nvme_list(text: str) -> List[Dict[str, Any]]:
    """``nvme list -o json`` -> [{device (nvme0n1), controller (nvme0), nsid, serial, model, firmware, address,
    size_bytes, used_bytes}], one per namespace, for every shape nvme-cli prints: the flat ``Devices`` list (1.x
    with ``Index``/``ProductName``, 2.x with ``GenericPath``) and the nested ``HostNQN``/``Subsystems`` one
    (``-v``; plain ``-o json`` of nvme-cli 2.11). ``{"Devices": []}`` (no NVMe) is []."""
    doc = load_json(NVME_LIST, text)
    if not isinstance(doc, dict) or not isinstance(doc.get("Devices"), list):
        raise ParseError(NVME_LIST, "expected {\"Devices\": [...]}")
    out: List[Dict[str, Any]] = []
    for entry in doc["Devices"]:
        if not isinstance(entry, dict):
            raise ParseError(NVME_LIST, "expected a device object, got %r" % (entry,))
        if "Subsystems" in entry:
            out.extend(_nested_rows(entry))
        elif "DevicePath" in entry:
            out.append(_ns_row(entry, {}))
        else:
            raise ParseError(NVME_LIST, "a device entry with neither DevicePath nor Subsystems: keys %s"
                             % sorted(entry))
    return out


def nvme_drives(namespaces: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The physical drives behind ``parse_nvme_list``'s namespaces: one per serial number (a drive with several
    namespaces, or seen through several paths, counts once), else per controller; in order of first sight."""
    seen: Dict[str, Dict[str, Any]] = {}
    for ns in namespaces:
        key = ns.get("serial") or ns.get("controller") or ns["device"]
        if key not in seen:
            seen[key] = dict(ns, namespaces=[ns["device"]])
        else:
            seen[key]["namespaces"].append(ns["device"])
    return list(seen.values())


# --------------------------------------------------------------------------------------------------------- smartctl

SMARTCTL = "smartctl -j"
# smartctl(8) EXIT STATUS: the meaning of each bit
SMARTCTL_EXIT_BITS = {0: "command line did not parse", 1: "device open failed",
                      2: "a SMART command failed or a SMART structure has a checksum error",
                      3: "SMART status check returned DISK FAILING", 4: "prefail attributes <= threshold",
                      5: "attributes were <= threshold in the past", 6: "the device error log has records",
                      7: "the device self-test log has errors"}


def smartctl_exit_bits(status: int) -> List[str]:
    """The meanings of the bits set in smartctl's exit status."""
    return [SMARTCTL_EXIT_BITS[b] for b in range(8) if status & (1 << b)]


def parse_smartctl_nvme(text: str) -> Dict[str, Any]:
    """``smartctl -j -a /dev/nvmeN`` -> {device, model, serial, passed, critical_warning, media_errors,
    percentage_used, available_spare, available_spare_threshold, temperature_c, exit_status, exit_meanings,
    messages}. Keys from smartmontools src/nvmeprint.cpp (``nvme_smart_health_information_log``, ``smart_status``).
    A run that could not read the health log (device open failed, not an NVMe device) is refused with smartctl's own
    messages."""
    doc = load_json(SMARTCTL, text)
    if not isinstance(doc, dict) or not isinstance(doc.get("smartctl"), dict):
        raise ParseError(SMARTCTL, "expected smartctl's JSON (a \"smartctl\" object)")
    meta = doc["smartctl"]
    status = meta.get("exit_status")
    status = _int_field(SMARTCTL, status, "smartctl.exit_status") if status is not None else None
    messages = [str(m.get("string")) for m in meta.get("messages") or [] if isinstance(m, dict)]
    log = doc.get("nvme_smart_health_information_log")
    if not isinstance(log, dict):
        why = "; ".join(messages) or "no nvme_smart_health_information_log (not an NVMe device?)"
        raise ParseError(SMARTCTL, "no NVMe health log: %s" % why)
    for key in ("critical_warning", "media_errors"):
        if key not in log:
            raise ParseError(SMARTCTL, "nvme_smart_health_information_log has no %s" % key)
    smart = doc.get("smart_status") if isinstance(doc.get("smart_status"), dict) else {}
    passed = smart.get("passed")
    device = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    return {"device": device.get("name"), "model": doc.get("model_name"), "serial": doc.get("serial_number"),
            "passed": passed if isinstance(passed, bool) else None,
            "critical_warning": _int_field(SMARTCTL, log["critical_warning"], "critical_warning"),
            "media_errors": _int_field(SMARTCTL, log["media_errors"], "media_errors"),
            "percentage_used": log.get("percentage_used"), "available_spare": log.get("available_spare"),
            "available_spare_threshold": log.get("available_spare_threshold"),
            "temperature_c": log.get("temperature"), "exit_status": status,
            "exit_meanings": smartctl_exit_bits(status) if status else [], "messages": messages}


# --------------------------------------------------------------------------------------------------------- df

DF = "df -P -B1"
_DF_HEADER = re.compile(r"^Filesystem\s+(\d+)([KMGT]?)B?-blocks\s+Used\s+Avail(?:able)?\s+(?:Capacity|Use%)\s+"
                        r"Mounted on$")
_DF_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}


def parse_df(text: str) -> List[Dict[str, Any]]:
    """``df -P -B1`` (coreutils src/df.c POSIX format) -> [{filesystem, size_bytes, used_bytes, avail_bytes,
    capacity_pct, mount}]. The block size is read from the header (``1-blocks``, ``1024-blocks``, ``1K-blocks``),
    so ``df -P`` alone is read right too; a ``-`` (no figure) is None. The mount point is the rest of the line (it
    may hold spaces)."""
    rows = content_lines(DF, text)
    if not rows:
        raise ParseError(DF, "empty output, expected the 'Filesystem <N>-blocks Used Available' header")
    n0, line0, head = rows[0]
    m = _DF_HEADER.match(re.sub(r"\s+", " ", head))
    if not m:
        raise ParseError(DF, "expected the POSIX header 'Filesystem <N>-blocks Used Available Capacity Mounted on'",
                         n0, line0)
    block = int(m.group(1)) * _DF_UNITS[m.group(2)]
    out = []
    for n, line, stripped in rows[1:]:
        parts = stripped.split(None, 5)
        if len(parts) < 6 or not re.match(r"^(\d+%|-)$", parts[4]):
            raise ParseError(DF, "expected '<filesystem> <size> <used> <available> <N>% <mount>'", n, line)
        size, used, avail = (None if v == "-" else parse_int(DF, v, n, line) * block for v in parts[1:4])
        out.append({"filesystem": parts[0], "size_bytes": size, "used_bytes": used, "avail_bytes": avail,
                    "capacity_pct": None if parts[4] == "-" else int(parts[4][:-1]), "mount": parts[5]})
    return out


# --------------------------------------------------------------------------------------------------------- uname

UNAME = "uname -r"
_KERNEL = re.compile(r"^\d+\.\d+(?:\.\d+)?[-+~._A-Za-z0-9]*$")


def parse_uname_r(text: str) -> str:
    """``uname -r`` -> the kernel release (``5.15.0-1042-nvidia``): exactly one line, the release and nothing else."""
    rows = content_lines(UNAME, text)
    if len(rows) != 1:
        raise ParseError(UNAME, "expected one line (the kernel release), got %d" % len(rows))
    n, line, stripped = rows[0]
    if not _KERNEL.match(stripped):
        raise ParseError(UNAME, "expected a kernel release like 5.15.0-1042-nvidia", n, line)
    return stripped


# --------------------------------------------------------------------------------------------------------- numactl

NUMACTL = "numactl -H"
_NUMA_AVAIL = re.compile(r"^available: (\d+) nodes \(([0-9,-]+)\)$")
_NUMA_NODE = re.compile(r"^node (\d+) (cpus|size|free):\s*(.*)$")


def parse_numactl_hardware(text: str) -> Dict[str, Any]:
    """``numactl -H`` (numactl's print_node_cpus / hardware()) -> {nodes, node_ids, node_cpus {id: count},
    node_size_mb {id: MB}, node_free_mb {id: MB}}. The output ends with the ``node distances`` matrix, one row per
    node: a missing row is a cut-off output. "No NUMA available on this system" is refused with numactl's words."""
    rows = content_lines(NUMACTL, text)
    if not rows:
        raise ParseError(NUMACTL, "empty output, expected 'available: N nodes (...)'")
    n0, line0, first = rows[0]
    m = _NUMA_AVAIL.match(first)
    if not m:
        raise ParseError(NUMACTL, "expected 'available: N nodes (a-b)' (numactl printed something else)", n0, line0)
    count = int(m.group(1))
    cpus: Dict[int, int] = {}
    size: Dict[int, int] = {}
    free: Dict[int, int] = {}
    distance_rows = 0
    in_distances = False
    for n, line, stripped in rows[1:]:
        if in_distances:
            if re.match(r"^node(\s+\d+)+$", stripped):
                continue
            if re.match(r"^\d+:(\s+\d+)+$", stripped):
                distance_rows += 1
                continue
            raise ParseError(NUMACTL, "expected a distance row 'N: d d ...'", n, line)
        if stripped == "node distances:":
            in_distances = True
            continue
        nm = _NUMA_NODE.match(stripped)
        if not nm:
            raise ParseError(NUMACTL, "expected 'node N cpus|size|free: ...' or 'node distances:'", n, line)
        node, what, value = int(nm.group(1)), nm.group(2), nm.group(3).strip()
        if what == "cpus":
            if value and not re.match(r"^\d+( \d+)*$", value):
                raise ParseError(NUMACTL, "expected CPU numbers", n, line)
            cpus[node] = len(value.split()) if value else 0
        else:
            vm = re.match(r"^(\d+) MB$", value)
            if not vm:
                raise ParseError(NUMACTL, "expected '<number> MB'", n, line)
            (size if what == "size" else free)[node] = int(vm.group(1))
    ids = sorted(set(cpus) | set(size))
    if len(ids) != count or set(size) != set(ids) or distance_rows != count:
        raise ParseError(NUMACTL, "'available: %d nodes' but %d node(s) with a size and %d distance row(s) (cut "
                                  "off?)" % (count, len(size), distance_rows))
    return {"nodes": count, "node_ids": ids, "node_cpus": cpus, "node_size_mb": size, "node_free_mb": free}


__all__ = ["ParseError", "complete_lines", "load_json", "nvme_drives", "parse_df", "parse_lscpu", "parse_meminfo",
           "parse_numactl_hardware", "parse_nvme_list", "parse_smartctl_nvme", "parse_swaps", "parse_uname_r",
           "smartctl_exit_bits"]
