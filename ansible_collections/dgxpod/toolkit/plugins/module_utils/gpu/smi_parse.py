# -*- coding: utf-8 -*-
"""Parsers for ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`` and ``nvidia-smi -L`` (pure
functions, stdlib only; tested as hw_parsers is: tests/unit/test_hw_parsers.py).
"""
from __future__ import annotations

import csv
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import (ParseError, complete_lines,
    content_lines)


# --------------------------------------------------------------------------- nvidia-smi

_NA = {"n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "[insufficient permissions]",
       "[gpu is lost]", "[gpu requires reset]", "[requested functionality has been deprecated]",
       "requested functionality has been deprecated"}
_HEADER_UNIT = re.compile(r"^(?P<name>.+?)\s*\[(?P<unit>[^\]]+)\]$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_HEADER_CELL = re.compile(r"^[a-z_][a-z0-9_.]*(\s*\[[^\]]+\])?$")
_LIST_GPU = re.compile(r"^GPU\s+(?P<index>\d+):\s+(?P<name>.+?)\s+\(UUID:\s*(?P<uuid>GPU-[0-9a-fA-F-]+)\)$")
_LIST_MIG = re.compile(r"^MIG\s+(?P<profile>\S+)\s+Device\s+(?P<device>\d+):\s+\(UUID:\s*(?P<uuid>MIG-[^)\s]+)\)$")


# what nvidia-smi prints instead of data when it cannot talk to the driver or the query is wrong (any line)
_SMI_ERROR = re.compile(
    r"^(Failed to initialize NVML|NVIDIA-SMI has failed|No devices were found|NVML library version|"
    r"Unable to determine the device handle|Unable to determine|Invalid combination of input arguments|"
    r"Field \".*\" is not a valid field to query|GPU access blocked|Insufficient Permissions|"
    r"Driver/library version mismatch|Unknown Error|ERROR:)", re.I)
# fields whose values must be numbers (or N/A); a message in their place is never taken for a value
_SMI_NUMERIC = ("index", "count", "memory.", "temperature.", "utilization.", "fan.speed", "clocks.", "power.",
                "pcie.link.gen.", "pcie.link.width.", "ecc.errors.", "retired_pages.", "enforced.power")
_SMI_FORMAT = {
    "uuid": r"^(GPU|MIG)-[0-9a-fA-F-]+$", "gpu_uuid": r"^(GPU|MIG)-[0-9a-fA-F-]+$",
    "pci.bus_id": r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$",
    "gpu_bus_id": r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$",
    "driver_version": r"^\d+(\.\d+)+$",
}
# fields whose values stay strings even when they look like numbers (driver 440.64, bus 0x0A, serial), and the
# Yes/No / Enabled/Disabled fields under a numeric prefix (nvidia-smi --help-query-gpu: retired_pages.pending,
# power.management)
_SMI_STRING_FIELDS = ("driver_version", "vbios_version", "serial", "gpu_serial", "uuid", "gpu_uuid", "name",
                      "gpu_name", "gpu_bus_id", "pstate", "compute_mode", "persistence_mode", "retired_pages.pending",
                      "power.management")


def _smi_value(name: str, value: str, unit: Optional[str]) -> Any:
    v = value.strip()
    if v.lower() in _NA:
        return None
    if unit and v.endswith(unit):
        v = v[: -len(unit)].strip()
    if name in _SMI_STRING_FIELDS or name.startswith(("pci.", "inforom.", "ecc.mode", "mig.mode")):
        return v
    if _NUMBER.match(v):
        return float(v) if "." in v else int(v)
    return v


def _smi_checked(name: str, value: Any, n: int, line: str) -> Any:
    """The value, or ParseError when a numeric field holds text or a formatted field does not match."""
    if value is None:
        return value
    if name.startswith(_SMI_NUMERIC) and name not in _SMI_STRING_FIELDS and not isinstance(value, (int, float)):
        raise ParseError("nvidia-smi", "expected a number for %s, got %r" % (name, value), n, line)
    pattern = _SMI_FORMAT.get(name)
    if pattern and not re.match(pattern, str(value)):
        raise ParseError("nvidia-smi", "%s %r does not look like one" % (name, value), n, line)
    return value


def _smi_errors(lines: List[Tuple[int, str]]) -> None:
    for n, line in lines:
        if _SMI_ERROR.match(line.strip()):
            raise ParseError("nvidia-smi", "nvidia-smi reported an error instead of GPU data", n, line)


def parse_nvidia_smi_list(text: str) -> List[Dict[str, Any]]:
    """``nvidia-smi -L``: [{"index": 0, "name": "Tesla V100-SXM2-32GB", "uuid": "GPU-...", "mig": [...]}]."""
    gpus: List[Dict[str, Any]] = []
    _smi_errors(complete_lines("nvidia-smi -L", text))
    for n, line, s in content_lines("nvidia-smi -L", text):
        m = _LIST_GPU.match(s)
        if m:
            gpus.append({"index": int(m["index"]), "name": m["name"], "uuid": m["uuid"], "mig": []})
            continue
        m = _LIST_MIG.match(s)
        if m and gpus:
            gpus[-1]["mig"].append({"profile": m["profile"], "device": int(m["device"]), "uuid": m["uuid"]})
            continue
        raise ParseError("nvidia-smi -L", "expected 'GPU <n>: <name> (UUID: GPU-...)'", n, line)
    if not gpus:
        raise ParseError("nvidia-smi -L", "empty output (no GPU line)")
    return gpus


def parse_nvidia_smi_query(text: str, fields: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
    """``nvidia-smi --query-gpu=F1,F2 --format=csv[,noheader][,nounits]``, one dict per GPU keyed by field.

    With a header line (``--format=csv``) the field names and units come from it (``memory.total [MiB]``
    -> key ``memory.total``, unit stripped from the values); with ``noheader`` pass ``fields`` (the
    ``--query-gpu`` list). Numbers become int/float, ``[N/A]``/``[Not Supported]`` become None. Output of
    ``nvidia-smi -L`` is recognised and parsed by ``parse_nvidia_smi_list``."""
    lines = [(n, line) for n, line in complete_lines("nvidia-smi", text) if line.strip()]
    if not lines:
        raise ParseError("nvidia-smi", "empty output (no GPU row)")
    _smi_errors(lines)
    first = lines[0][1].strip()
    if _LIST_GPU.match(first):
        return parse_nvidia_smi_list(text)
    wanted = [f.strip() for f in fields] if fields is not None else None
    head = [c.strip() for c in next(csv.reader([first], skipinitialspace=True))]
    is_header = all(_HEADER_CELL.match(c) for c in head)
    if not is_header and wanted is None:
        raise ParseError("nvidia-smi", "no header line (output of --format=csv,noheader: pass the query fields)",
                         lines[0][0], lines[0][1])
    names: List[str] = []
    units: List[Optional[str]] = []
    if is_header:
        for c in head:
            m = _HEADER_UNIT.match(c)
            names.append(m["name"] if m else c)
            units.append(m["unit"] if m else None)
        if wanted is not None:
            if len(names) != len(wanted):
                raise ParseError("nvidia-smi", "header has %d columns, the query %d (%s)"
                                 % (len(names), len(wanted), ",".join(wanted)), lines[0][0], lines[0][1])
            names = wanted  # the query's names (nvidia-smi may print another alias, e.g. gpu_name -> name)
        rows = lines[1:]
    else:
        names, units, rows = list(wanted or []), [None] * len(wanted or []), lines
    gpus = []
    for n, line in rows:
        cells = next(csv.reader([line], skipinitialspace=True))
        if len(cells) != len(names):
            raise ParseError("nvidia-smi", "row has %d values, expected %d (%s)"
                             % (len(cells), len(names), ", ".join(names)), n, line)
        gpus.append({name: _smi_checked(name, _smi_value(name, cell, unit), n, line)
                     for name, cell, unit in zip(names, cells, units)})  # noqa: B905 (py3.8 hosts)
    if not gpus:
        raise ParseError("nvidia-smi", "a header line but no GPU row", lines[0][0], lines[0][1])
    return gpus
