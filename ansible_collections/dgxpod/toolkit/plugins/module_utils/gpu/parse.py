# -*- coding: utf-8 -*-
"""Parsers for the GPU health tools of a DGX (pure functions, stdlib only).

``nvidia-smi -q -x`` (XML), ``nvidia-smi nvlink -s`` (per-link speed), ``nvidia-smi nvlink -e`` (per-link
error counters, both layouts), ``nvidia-smi topo -m`` (the matrix, GPU<->NIC affinity), ``lspci -vv``
(LnkCap / LnkSta) and ``/proc/modules``; DCGM's ``dcgmi diag -r N -j`` (JSON) is read by module_utils/gpu/dcgm_parse.py
with the same error type.

Each is tested against real captures (tests/unit/fixtures/gpu/, provenance in docs/hardware-facts.md) and the
pod-in-a-box stand-ins. Input a parser cannot read raises :class:`GpuParseError` (a ``ValueError``) naming the
tool, the line and what was expected - never a half-read result. A tool that printed an error instead of its
output (``Failed to initialize NVML: Driver/library version mismatch``, ``NVIDIA-SMI has failed ...``) is
reported the same way, with the tool's own words.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, Dict, Iterator, Optional, Tuple


class GpuParseError(ValueError):
    """``str()`` names the tool, the line number and the line, and what was expected."""

    def __init__(self, tool: str, message: str, line_no: Optional[int] = None, line: Optional[str] = None):
        self.tool = tool
        self.line_no = line_no
        where = "" if line_no is None else " line %d" % line_no
        text = "" if line is None else ": %r" % line.strip()
        super().__init__("%s output%s: %s%s" % (tool, where, message, text))


# Messages the NVIDIA tools print instead of their output when the driver cannot be reached.
_TOOL_FAILURES = (
    "Failed to initialize NVML",
    "NVIDIA-SMI has failed",
    "No devices were found",
    "Unable to determine the device handle",
    "Error: unable to establish a connection",
    "Error: Unable to",
    "Unable to connect to host engine",
    "couldn't find libnvidia-ml.so",  # "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system."
)


def refuse_failure(tool: str, text: str) -> None:
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    for no, line in enumerate(text.splitlines(), 1):
        for marker in _TOOL_FAILURES:
            if marker.lower() in line.lower():
                raise GpuParseError(tool, "the tool reported an error instead of its output", no, line)


# --------------------------------------------------------------------------- nvidia-smi -q -x

# What nvidia-smi prints where NVML gave no value (not supported, an NVML error, a lost GPU, a field retired by
# the driver): never a reading. Compared case-insensitively, with or without the brackets.
_SMI_UNKNOWN = ("", "n/a", "not supported", "unknown error", "insufficient permissions", "gpu is lost",
                "gpu requires reset", "requested functionality has been deprecated", "not available", "unknown")


def _unknown(value: str) -> bool:
    return value.strip().strip("[]").strip().lower() in _SMI_UNKNOWN


def _text(el: Optional[ET.Element], path: str) -> Optional[str]:
    if el is None:
        return None
    found = el.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if _unknown(value) else value


def _num(value: Optional[str]) -> Optional[float]:
    """'66 C' -> 66.0, '16x' -> 16.0, '232.80 W' -> 232.8; None/N/A -> None."""
    if value is None:
        return None
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", value)
    return float(m.group(1)) if m else None


def _int_or_none(value: Optional[str]) -> Optional[int]:
    n = _num(value)
    return None if n is None else int(n)


def _yes(value: Optional[str]) -> Optional[bool]:
    """Yes/Enabled/Active/True -> True, No/Disabled/Not Active/False -> False, anything else (N/A, an error
    text) -> None: a value nvidia-smi did not give is not a "no"."""
    if value is None:
        return None
    v = value.strip().lower()
    if v in ("yes", "enabled", "active", "true", "on"):
        return True
    if v in ("no", "disabled", "not active", "false", "off"):
        return False
    return None


def _any_yes(*values: Optional[str]) -> Optional[bool]:
    """True if any says yes, False if all that were given say no, None if none was given."""
    answers = [_yes(v) for v in values]
    if any(a is True for a in answers):
        return True
    return False if any(a is False for a in answers) else None


def _ecc_counts(block: Optional[ET.Element]) -> Dict[str, Optional[int]]:
    """Correctable / uncorrectable totals of an ECC block, for both layouts: the Volta-era
    ``single_bit/total`` + ``double_bit/total`` and the Ampere-and-later ``*_correctable`` /
    ``*_uncorrectable*`` leaves (drivers 5xx: sram_* and dram_*)."""
    if block is None:
        return {"correctable": None, "uncorrectable": None}
    if block.find("single_bit") is not None or block.find("double_bit") is not None:
        return {"correctable": _int_or_none(_text(block, "single_bit/total")),
                "uncorrectable": _int_or_none(_text(block, "double_bit/total"))}
    corr, unc, seen = 0, 0, False
    for leaf in block:
        value = _int_or_none(leaf.text.strip() if leaf.text else None)
        if value is None:
            continue
        if leaf.tag.endswith("_correctable"):
            corr += value
            seen = True
        elif "_uncorrectable" in leaf.tag:
            unc += value
            seen = True
    return {"correctable": corr if seen else None, "uncorrectable": unc if seen else None}


THROTTLE_REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                    "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")


def _throttle(gpu: ET.Element) -> Tuple[Optional[str], Dict[str, bool]]:
    """(element name used, {reason: active}). Drivers up to 535 print ``clocks_throttle_reasons`` /
    ``clocks_throttle_reason_*``; 550 and later ``clocks_event_reasons`` / ``clocks_event_reason_*``."""
    for block_name in ("clocks_event_reasons", "clocks_throttle_reasons"):
        block = gpu.find(block_name)
        if block is not None:
            out = {}
            for leaf in block:
                m = re.match(r"^clocks_(?:event|throttle)_reason_(\w+)$", leaf.tag)
                active = _yes(leaf.text.strip()) if m and leaf.text else None
                if active is not None:  # N/A, Not Supported, an error text: the reason is not known
                    out[m.group(1)] = active
            return block_name, out
    return None, {}


def parse_smi_xml(text: str) -> Dict[str, Any]:
    """``nvidia-smi -q -x`` -> {driver_version, cuda_version, attached_gpus, gpus: [...]}.

    Per GPU: index (position in the output, as nvidia-smi numbers them), name, serial, uuid, bus_id,
    persistence_mode, ecc_mode, ecc {volatile, aggregate: {correctable, uncorrectable}}, retired_pages
    {single_bit, double_bit, pending} (None where the GPU has no page retirement: Ampere and later),
    remapped_rows {correctable, uncorrectable, pending, failure} (None before Ampere), pcie {gen, max_gen,
    width, max_width}, throttle {reason: active}, throttle_element, temperature_c, temperature_slowdown_c,
    temperature_shutdown_c, power_draw_w (``power_draw``, else the ``instant_``/``average_power_draw`` of newer
    drivers), power_limit_w.

    A value nvidia-smi did not give (N/A, [Not Supported], Unknown Error, [GPU requires reset], "Requested
    functionality has been deprecated") is None - a flag too (persistence_mode, ecc_mode, pending, failure), never
    False; a throttle reason without a value is left out of ``throttle``; ``remapped_rows`` whose fields are all
    N/A is None."""
    tool = "nvidia-smi -q -x"
    refuse_failure(tool, text)
    start = text.find("<")
    if start < 0:
        raise GpuParseError(tool, "expected an XML document (<nvidia_smi_log>), got no XML", 1,
                            (text.splitlines() or [""])[0])
    try:
        root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", text[start:]))
    except ET.ParseError as exc:
        line = exc.position[0] if hasattr(exc, "position") else None
        raise GpuParseError(tool, "not well-formed XML (%s)" % exc, line) from None
    if root.tag != "nvidia_smi_log":
        raise GpuParseError(tool, "expected the root element <nvidia_smi_log>, got <%s>" % root.tag)
    driver = _text(root, "driver_version")
    if driver is None:
        raise GpuParseError(tool, "no <driver_version> in the log")
    gpus = []
    for index, gpu in enumerate(root.findall("gpu")):
        bus = gpu.get("id") or _text(gpu, "pci/pci_bus_id")
        name = _text(gpu, "product_name")
        if not bus or not name:
            raise GpuParseError(tool, "GPU %d has no PCI bus id or product name" % index)
        ecc = gpu.find("ecc_errors")
        retired = gpu.find("retired_pages")
        retired_out = None
        single = _int_or_none(_text(retired, "multiple_single_bit_retirement/retired_count"))
        double = _int_or_none(_text(retired, "double_bit_retirement/retired_count"))
        if single is not None or double is not None:
            retired_out = {"single_bit": single, "double_bit": double,
                           "pending": _any_yes(_text(retired, "pending_retirement"),
                                               _text(retired, "pending_blacklist"))}
        remap = gpu.find("remapped_rows")
        remap_out = None
        if remap is not None and len(remap):
            remap_out = {
                "correctable": _int_or_none(_text(remap, "remapped_row_corr")),
                "uncorrectable": _int_or_none(_text(remap, "remapped_row_unc")),
                "pending": _yes(_text(remap, "remapped_row_pending")),
                "failure": _yes(_text(remap, "remapped_row_failure")),
            }
            if all(v is None for v in remap_out.values()):
                remap_out = None  # every field N/A: no row remapping on this GPU
        link = gpu.find("pci/pci_gpu_link_info")
        power = gpu.find("gpu_power_readings")
        if power is None:
            power = gpu.find("power_readings")
        temp = gpu.find("temperature")
        element, throttle = _throttle(gpu)
        gpus.append({
            "index": index,
            "name": name,
            "serial": _text(gpu, "serial"),
            "uuid": _text(gpu, "uuid"),
            "vbios": _text(gpu, "vbios_version"),  # what a VBIOS pin (gpu/pins.py) is judged on
            "bus_id": bus,
            "persistence_mode": _yes(_text(gpu, "persistence_mode")),
            "ecc_mode": _yes(_text(gpu, "ecc_mode/current_ecc")),
            "ecc": {"volatile": _ecc_counts(ecc.find("volatile") if ecc is not None else None),
                    "aggregate": _ecc_counts(ecc.find("aggregate") if ecc is not None else None)},
            "retired_pages": retired_out,
            "remapped_rows": remap_out,
            "pcie": {"gen": _int_or_none(_text(link, "pcie_gen/current_link_gen")),
                     "max_gen": _int_or_none(_text(link, "pcie_gen/max_link_gen")),
                     "width": _int_or_none(_text(link, "link_widths/current_link_width")),
                     "max_width": _int_or_none(_text(link, "link_widths/max_link_width"))},
            "throttle": throttle,
            "throttle_element": element,
            "temperature_c": _num(_text(temp, "gpu_temp")),
            "temperature_slowdown_c": _num(_text(temp, "gpu_temp_slow_threshold")),
            "temperature_shutdown_c": _num(_text(temp, "gpu_temp_max_threshold")),
            "power_draw_w": _num(_text(power, "power_draw") or _text(power, "instant_power_draw")
                                 or _text(power, "average_power_draw")),
            "power_limit_w": _num(_text(power, "current_power_limit") or _text(power, "power_limit")),
        })
    return {"driver_version": driver, "cuda_version": _text(root, "cuda_version"),
            "attached_gpus": _int_or_none(_text(root, "attached_gpus")), "gpus": gpus}


# --------------------------------------------------------------------------- nvidia-smi nvlink -s / -e

_GPU_HEAD = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: ([^)]*)\))?\s*$")
_LINK_SPEED = re.compile(r"^Link (\d+): (?:(\d+(?:\.\d+)?) GB/s|<inactive>)\s*$")
_LINK_ERR = re.compile(r"^Link (\d+): ([A-Za-z][A-Za-z0-9 -]*?) Errors: (\d+|N/A|\[N/A\]|\[Not Supported\])\s*$")
# printed under a GPU's header instead of its links when NVML has nothing for it, e.g. "NVML: Unable to retrieve
# NVLink information as all links are inActive" (B200, driver 570; leptonai/gpud#1085)
_NVML_GPU_MESSAGE = re.compile(r"^NVML:\s*(.+)$")


def _nvlink_lines(tool: str, text: str) -> Iterator[Tuple[Optional[re.Match], int, str, str]]:
    """(the ``GPU n: name`` match or None, line number, raw line, stripped line) for every non-blank line of an
    ``nvidia-smi nvlink`` output, after refusing an nvidia-smi failure message."""
    refuse_failure(tool, text)
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line:
            yield _GPU_HEAD.match(line), no, raw, line


def parse_nvlink_status(text: str) -> Dict[int, Dict[str, Any]]:
    """``nvidia-smi nvlink -s`` -> {gpu index: {name, uuid, links: {link: GB/s or None (inactive)}}}.

    A GPU under which nvidia-smi printed an ``NVML: ...`` message instead of its links ("Unable to retrieve NVLink
    information as all links are inActive") has ``links`` {} (none reported) and ``error``: that message."""
    tool = "nvidia-smi nvlink -s"
    out: Dict[int, Dict[str, Any]] = {}
    current = None
    for head, no, raw, line in _nvlink_lines(tool, text):
        if head:
            current = int(head.group(1))
            out[current] = {"name": head.group(2), "uuid": head.group(3), "links": {}}
            continue
        msg = _NVML_GPU_MESSAGE.match(line)
        if msg and current is not None and not out[current]["links"] and "error" not in out[current]:
            out[current]["error"] = line
            continue
        m = _LINK_SPEED.match(line)
        if m and current is not None:
            out[current]["links"][int(m.group(1))] = float(m.group(2)) if m.group(2) else None
            continue
        raise GpuParseError(tool, "expected 'GPU n: name' or 'Link n: <speed> GB/s | <inactive>'", no, raw)
    return out


def parse_nvlink_errors(text: str) -> Dict[int, Dict[int, Dict[str, int]]]:
    """``nvidia-smi nvlink -e`` -> {gpu: {link: {counter: value}}}. Counter names are snake_case of what the
    driver prints: ``replay``, ``recovery``, ``crc`` (single CRC line) or ``crc_flit`` / ``crc_data`` (the
    layout with separate flit and data CRC counters). Blank lines between links are allowed. A counter printed as
    N/A is left out of its link's dict (not known, not 0). A GPU under which
    nvidia-smi printed an ``NVML: ...`` message instead of its links has {} (no counter reported)."""
    tool = "nvidia-smi nvlink -e"
    out: Dict[int, Dict[int, Dict[str, int]]] = {}
    current = None
    for head, no, raw, line in _nvlink_lines(tool, text):
        if head:
            current = int(head.group(1))
            out[current] = {}
            continue
        if _NVML_GPU_MESSAGE.match(line) and current is not None and not out[current]:
            continue
        m = _LINK_ERR.match(line)
        if m and current is not None:
            key = re.sub(r"[ -]+", "_", m.group(2).strip().lower())
            counters = out[current].setdefault(int(m.group(1)), {})
            if m.group(3).isdigit():  # a counter the GPU does not report (N/A) is left out, never 0
                counters[key] = int(m.group(3))
            continue
        raise GpuParseError(tool, "expected 'GPU n: name' or 'Link n: <Name> Errors: <count>'", no, raw)
    return out


# --------------------------------------------------------------------------- nvidia-smi topo -m

_TOPO_VALUE = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|SOC|NV\d+|N/A)$")


def parse_topo_matrix(text: str) -> Dict[str, Any]:
    """``nvidia-smi topo -m`` -> {columns, matrix: {row: {column: value}}, cpu_affinity: {gpu: str or None},
    numa_affinity: {gpu: str or None} (None where nvidia-smi printed N/A; read by the header's column order),
    nics: {NICn: rdma device} (from the "NIC Legend", newer drivers),
    gpu_nic: {GPUn: {nic device: value}}} (the NIC columns resolved through the legend).

    Older drivers name the NIC columns after the RDMA device (``mlx5_0``); newer ones print ``NIC0`` and a
    legend ``NIC0: mlx5_0``. Rows of NICs are kept in ``matrix`` too."""
    tool = "nvidia-smi topo -m"
    refuse_failure(tool, text)
    lines = text.splitlines()
    head_no = None
    for no, line in enumerate(lines):
        clean = re.sub(r"\x1b\[[0-9;]*m", "", line)
        if re.match(r"^\s+GPU0\b", clean):
            head_no = no
            break
    if head_no is None:
        raise GpuParseError(tool, "expected a header line starting with GPU0", 1, lines[0] if lines else "")
    header = re.sub(r"\x1b\[[0-9;]*m", "", lines[head_no])
    tail_names = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
    device_part = header
    tails = sorted((t for t in tail_names if t in header), key=header.index)  # in the header's order
    if tails:
        device_part = header[:header.index(tails[0])]
    columns = device_part.split()
    matrix: Dict[str, Dict[str, str]] = {}
    cpu: Dict[str, str] = {}
    numa: Dict[str, str] = {}
    nics: Dict[str, str] = {}
    in_table = True
    for no in range(head_no + 1, len(lines)):
        line = re.sub(r"\x1b\[[0-9;]*m", "", lines[no]).rstrip()
        if not line.strip():
            in_table = False
            continue
        m = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if m:
            nics[m.group(1)] = m.group(2)
            continue
        if not in_table:
            continue  # the Legend text
        parts = line.split()
        row = parts[0]
        values = parts[1:1 + len(columns)]
        if len(values) != len(columns) or not all(_TOPO_VALUE.match(v) for v in values):
            raise GpuParseError(tool, "expected %d link types (X, NV#, PIX, PXB, PHB, NODE, SYS) after the row name"
                                % len(columns), no + 1, lines[no])
        matrix[row] = dict(zip(columns, values, strict=True))
        rest = dict(zip(tails, parts[1 + len(columns):], strict=False))  # NIC rows have no affinity cells
        if row.startswith("GPU"):
            if "CPU Affinity" in rest:
                cpu[row] = None if rest["CPU Affinity"] == "N/A" else rest["CPU Affinity"]
            if "NUMA Affinity" in rest:
                numa[row] = None if rest["NUMA Affinity"] == "N/A" else rest["NUMA Affinity"]
    if not any(r.startswith("GPU") for r in matrix):
        raise GpuParseError(tool, "no GPU rows under the header", head_no + 1, lines[head_no])
    gpu_nic = {}
    for row, vals in matrix.items():
        if not row.startswith("GPU"):
            continue
        gpu_nic[row] = {nics.get(col, col): v for col, v in vals.items() if not col.startswith("GPU")}
    return {"columns": columns, "matrix": matrix, "cpu_affinity": cpu, "numa_affinity": numa, "nics": nics,
            "gpu_nic": gpu_nic}


def nvlinks_from_topo(topo: Dict[str, Any]) -> Dict[str, Dict[str, int]]:
    """{GPUa: {GPUb: bonded NVLink count}} from a parsed matrix (``NV12`` -> 12)."""
    out: Dict[str, Dict[str, int]] = {}
    for row, vals in topo["matrix"].items():
        if row.startswith("GPU"):
            out[row] = {c: int(v[2:]) for c, v in vals.items() if c.startswith("GPU") and v.startswith("NV")}
    return out


# --------------------------------------------------------------------------- lspci -vv

# pciutils ls-caps.c link_compare(): " (ok)" / " (downgraded)" / " (strange)" (3.6-3.7), then "" / " (downgraded)" /
# " (overdriven)" (status above capability)
_LNK = re.compile(r"^\s*(LnkCap|LnkSta):\s*(?:Port #\d+,\s*)?Speed ([\d.]+)GT/s"
                  r"(?: \((ok|downgraded|strange|overdriven)\))?,\s*"
                  r"Width x(\d+)(?: \((ok|downgraded|strange|overdriven)\))?")
GT_TO_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}


def parse_lspci_link(text: str) -> Dict[str, Any]:
    """The ``LnkCap``/``LnkSta`` lines of one device's ``lspci -vv`` -> {cap: {gts, gen, width}, sta: {gts,
    gen, width, speed_downgraded, width_downgraded}}. Both the old (``Speed 8GT/s, Width x8, TrErr-``) and
    the newer (``Speed 16GT/s (ok), Width x16 (ok)``) LnkSta forms."""
    tool = "lspci -vv"
    out: Dict[str, Any] = {}
    for no, line in enumerate(text.splitlines(), 1):
        if not re.match(r"^\s*(LnkCap|LnkSta):", line):
            continue
        m = _LNK.match(line)
        if not m:
            raise GpuParseError(tool, "expected 'Speed <n>GT/s, Width x<n>'", no, line)
        kind, gts, sq, width, wq = m.groups()
        if gts not in GT_TO_GEN:
            raise GpuParseError(tool, "unknown PCIe speed %sGT/s" % gts, no, line)
        entry = {"gts": float(gts), "gen": GT_TO_GEN[gts], "width": int(width)}
        key = "cap" if kind == "LnkCap" else "sta"
        if key in out:
            raise GpuParseError(tool, "a second %s line: the output of more than one device (lspci -vv -s <bdf>)"
                                % kind, no, line)
        if kind == "LnkSta":
            entry["speed_downgraded"] = sq == "downgraded"
            entry["width_downgraded"] = wq == "downgraded"
        out[key] = entry
    if "sta" not in out:
        raise GpuParseError(tool, "no LnkSta line (run lspci -vv as root for the link status)")
    return out


# --------------------------------------------------------------------------- /proc/modules

def parse_proc_modules(text: str) -> Dict[str, Dict[str, Any]]:
    """``/proc/modules`` -> {module: {size, used_by: [...], state}}."""
    tool = "/proc/modules"
    out = {}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) < 5 or not parts[1].isdigit():
            raise GpuParseError(tool, "expected 'name size refcount used_by state address'", no, line)
        # "-" when unused; "[permanent]" (a module without an exit routine) is not a user
        used = [u for u in parts[3].split(",") if u and u not in ("-", "[permanent]")]
        out[parts[0]] = {"size": int(parts[1]), "used_by": used, "state": parts[4]}
    return out


PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")


def peermem_module(modules: Dict[str, Any]) -> Optional[str]:
    """The GPUDirect RDMA peer-memory module loaded, if any (``nvidia_peermem`` from driver 465, the older
    Mellanox ``nv_peer_mem``)."""
    for name in PEERMEM_MODULES:
        if name in modules and modules[name].get("state", "Live") == "Live":
            return name
    return None
