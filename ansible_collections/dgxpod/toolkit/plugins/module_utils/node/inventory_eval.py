# -*- coding: utf-8 -*-
"""Host inventory and BMC checks of a DGX (issue 39 items 2 and 3), pure Python: the stage "node", category
``node_state``, subject the node (and the drive's ``/dev/nvmeN`` as ``path`` where a drive is at fault).

``evaluate(recorded, expectations, context)`` reads what the stage recorded per DGX - the parsed readings of
module_utils/node/inventory_parse.py and bmc_parse.py - and compares them with the DGX model of the hardware
catalogue (module_utils/catalog/dgx.py)::

    {"nodes": {host: {"status": "ok" | "unreachable", "dgx_model": <a DGX_MODELS key>,
                      "readings": {"lscpu": {...}, "meminfo": {...}, "numactl": {...}, "swaps": [...],
                                   "nvme_list": [...], "smartctl": {"nvme0": {...}}, "df": [...], "uname_r": "...",
                                   "sel": {...}, "sdr": {...}, "sensor": {...}},
                      "errors": {"<reading>": "why it was not read (tool missing, no permission, ...)"}}}}

A reading that is absent makes its check ``skipped`` with the recorded reason (never a pass); a host that did not
answer is ``no_result``. Thresholds are data: ``expectations.node`` (``root_min_free_pct``, ``raid_min_free_pct``,
``raid_mount``, ``swap_max_gb``, ``memory_gb``, ``sel_since``), each with its source, with the defaults below.

Checks: ``host_cpu``, ``host_memory``, ``host_numa``, ``host_swap``, ``host_nvme``, ``host_disk_space``,
``host_kernel``, ``bmc_sel``, ``bmc_sensors``.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DgxModel, dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.inventory_parse import nvme_drives
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Problem,
                                                                                  Subject, compare, expectation,
                                                                                  no_result)

STAGE = "node"
GIB = 1024 ** 3

# MemTotal is the installed memory less what firmware reserves, the kernel image and the page structures (64 bytes
# per 4 KiB page: 1.56 %): about 98 % of it (the kernel docs' example: 32858820 kB of 32 GiB, 97.9 %; a 2-socket
# 512 GiB host's numactl -H: 515640 MB, 98.4 %). One DIMM gone of D takes 1/D (DGX H100: 1/32 = 3.1 %; DGX A100
# 1 TB: 1/16 = 6.25 %). The floor sits half a DIMM below the healthy figure with 2.5 % for the kernel's share.
MEMORY_OVERHEAD = 0.025
# a NUMA node with this much less memory than the largest has lost DIMMs on its socket/channel
NUMA_IMBALANCE = 0.03

DEFAULTS = {"root_min_free_pct": 10.0, "raid_min_free_pct": 10.0, "raid_mount": "/raid"}
SRC_DEFAULT_SPACE = ("toolkit default: 10 % free on / and on the data RAID (DGX OS logs, containers and the "
                     "/raid cache need headroom); set expectations.node.root_min_free_pct / raid_min_free_pct")
SRC_SMART = ("NVMe base specification SMART / Health log (critical_warning bits: spare below threshold, "
             "temperature, reliability degraded, read-only, volatile backup failed) read by smartctl -j "
             "(smartmontools src/nvmeprint.cpp); media_errors > 0: unrecovered data integrity errors")
SRC_KERNEL = "toolkit rule (docs/validation.md): one kernel release across the pod's DGX nodes"
SRC_SWAP = "NVIDIA documents no swap size for DGX OS (catalog/dgx.py swap_guidance): reported only"
SRC_SEL = ("IPMI 2.0 sensor-specific event offsets as ipmitool prints them (include/ipmitool/ipmi_sel.h): power "
           "supply failure / AC lost, uncorrectable ECC, machine check, critical interrupts, critical thresholds")
SRC_SENSORS = ("ipmitool sdr elist / sensor status (lib/ipmi_sdr.c ipmi_sdr_get_thresh_status: cr critical, nr "
               "non-recoverable) and the power supply states of ipmi_sel.h")

# Critical SEL events (data): (sensor type or None for any, regular expression over the event text, what to do).
# Only asserted events count; a deasserted one is the condition clearing.
CRITICAL_SEL_EVENTS: Tuple[Tuple[Optional[str], str, str], ...] = (
    ("Power Supply", r"^Failure detected", "replace the power supply {sensor}"),
    ("Power Supply", r"^(Power Supply AC lost|AC lost or out-of-range|AC out-of-range)",
     "restore the AC feed of {sensor} (cable, PDU) or replace it"),
    ("Power Supply", r"^Predictive failure", "replace the power supply {sensor} (predictive failure)"),
    ("Power Supply", r"^Config Error", "power supply {sensor} is mismatched: install the DGX's PSU model"),
    ("Memory", r"^Uncorrectable ECC", "reseat or replace the DIMM {where} (uncorrectable ECC)"),
    ("Memory", r"^Memory Device Disabled", "the BIOS disabled the DIMM {where}: replace it"),
    ("Memory", r"^Correctable ECC logging limit reached", "replace the DIMM {where} (correctable ECC limit)"),
    ("Processor", r"^(IERR|Uncorrectable machine check exception|Thermal Trip)",
     "CPU fault at {sensor}: open a case with NVIDIA Enterprise Support"),
    ("Critical Interrupt", r"^(PCI PERR|PCI SERR|Bus Uncorrectable error|Bus Fatal Error)",
     "PCIe fatal error at {sensor}: find the device in the kernel log (AER) and reseat or replace it"),
    (None, r"^(Lower|Upper) (Critical|Non-recoverable) going (low|high)",
     "{sensor} crossed its critical threshold: check the fans, airflow or power feed"),
    (None, r"^Transition to (Critical|Non-recoverable)", "{sensor} went critical: check it in the BMC"),
)
# Discrete states of a sensor (sdr elist) that are a failure, with what to do.
FAILED_STATES: Tuple[Tuple[str, str], ...] = (
    (r"^Failure detected$", "replace the power supply {sensor}"),
    (r"^(Power Supply AC lost|AC lost or out-of-range|AC out-of-range)", "restore the AC feed of {sensor}"),
    (r"^Predictive failure$", "replace {sensor} (predictive failure)"),
    (r"^Config Error", "{sensor} is mismatched: install the DGX's PSU model"),
    (r"^Uncorrectable ECC", "replace the DIMM of {sensor}"),
    (r"^Transition to (Critical|Non-recoverable)", "{sensor} is critical: check it in the BMC"),
)
BAD_SENSOR_STATUS = ("cr", "nr", "lcr", "ucr", "lnr", "unr")


def _on(node: str, **subject: Any) -> Dict[str, Any]:
    return {"subject": Subject(node=node, **subject), "category": NODE_STATE}


def _problem(node: str, text: str, **subject: Any) -> Problem:
    return Problem(text, NODE_STATE, Subject(node=node, **subject))


def _skipped(check: str, node: str, why: str, source: Optional[str] = None) -> CheckResult:
    return CheckResult(check, node, "skipped", reason=why, source=source, **_on(node))


def _missing(entry: Dict[str, Any], *names: str) -> Optional[str]:
    """Why a reading is absent (the recorded error), or None when all are there."""
    readings = entry.get("readings") or {}
    errors = entry.get("errors") or {}
    for name in names:
        if readings.get(name) is None:
            return "%s not read: %s" % (name, errors.get(name, "the stage recorded no %s reading" % name))
    return None


def _fails(check: str, node: str, problems: List[Problem], measured: Any, expected: Any, source: str,
           unit: Optional[str] = None, absolute: bool = False, how: Optional[str] = None,
           **details: Any) -> CheckResult:
    """pass without problems, else fail with the problems' texts as the cause."""
    ok = not problems
    return CheckResult(check, node, "pass" if ok else "fail", expected=expected, measured=measured, unit=unit,
                       source=source, absolute=absolute, cause=None if ok else "; ".join(p.text for p in problems),
                       problems=tuple(problems), details=dict(compare(how) if how else {}, **details), **_on(node))


# --------------------------------------------------------------------------------------------------------- CPU, NUMA

def host_cpu(node: str, entry: Dict[str, Any], model: DgxModel) -> CheckResult:
    """Sockets, cores per socket and threads per core (lscpu) against the model: a socket or cores missing is a
    CPU gone or disabled in the BIOS; threads per core 1 is SMT switched off."""
    why = _missing(entry, "lscpu")
    if why:
        return _skipped("host_cpu", node, why, model.sources.get("cpu_memory"))
    cpu = entry["readings"]["lscpu"]
    want = {"sockets": model.cpu_sockets, "cores_per_socket": model.cpu_cores_per_socket,
            "threads_per_core": model.cpu_threads_per_core}
    problems = [_problem(node, "%s: %s is %s, the %s has %s (%s)" % (node, k.replace("_", " "), cpu.get(k), model.title,
                                                                    v, model.cpu)
                         + (": enable SMT (Hyper-Threading) in the BIOS" if k == "threads_per_core" else
                            ": a CPU or cores are disabled or missing - check the BIOS and open a case"))
                for k, v in want.items() if cpu.get(k) != v]
    have = "%sx%sx%s" % (cpu.get("sockets"), cpu.get("cores_per_socket"), cpu.get("threads_per_core"))
    return _fails("host_cpu", node, problems, have, "%dx%dx%d" % tuple(want.values()),
                  model.sources.get("cpu_memory", ""), unit="sockets x cores x threads", absolute=True,
                  model_name=cpu.get("model_name"))


def host_numa(node: str, entry: Dict[str, Any], model: DgxModel) -> CheckResult:
    """NUMA nodes (numactl -H, else lscpu) against the model (BIOS default: NPS4 on DGX A100, 2 elsewhere)."""
    readings = entry.get("readings") or {}
    numa = readings.get("numactl")
    count = numa.get("nodes") if numa else (readings.get("lscpu") or {}).get("numa_nodes")
    source = model.sources.get("host_inventory", "")
    if count is None:
        return _skipped("host_numa", node, _missing(entry, "numactl") or "no NUMA node count", source)
    if model.numa_nodes is None:
        return _skipped("host_numa", node, "the catalogue has no NUMA node count for %s" % model.title, source)
    problems = [] if count == model.numa_nodes else [_problem(
        node, "%s shows %d NUMA nodes, the %s has %d: the BIOS NUMA setting (NPS / sub-NUMA clustering) differs "
        "from NVIDIA's default, or a socket's memory is gone" % (node, count, model.title, model.numa_nodes))]
    return _fails("host_numa", node, problems, count, model.numa_nodes, source, unit="NUMA nodes", absolute=True,
                  how="=")


# --------------------------------------------------------------------------------------------------------- memory

def memory_floor_gib(installed_gb: int, dimms: int) -> float:
    """The least MemTotal (GiB) a healthy DGX with ``installed_gb`` GiB in ``dimms`` DIMMs shows (see
    MEMORY_OVERHEAD): half a DIMM under the installed memory less the kernel's share."""
    return installed_gb * (1 - MEMORY_OVERHEAD - 1.0 / (2 * dimms))


def host_memory(node: str, entry: Dict[str, Any], model: DgxModel, exp: Dict[str, Any]) -> CheckResult:
    """MemTotal against the installed memory (the configuration it is nearest, or expectations.node.memory_gb),
    per-NUMA-node imbalance (numactl -H) and memory the kernel took offline as corrupted."""
    source = model.sources.get("host_inventory", "")
    why = _missing(entry, "meminfo")
    if why:
        return _skipped("host_memory", node, why, source)
    mem = entry["readings"]["meminfo"]
    total_gib = mem["mem_total_kib"] / (1024.0 ** 2)
    pinned, pin_source = expectation(exp, STAGE, "memory_gb")
    configs = list(zip(model.memory_gb, model.dimms or (None,) * len(model.memory_gb), strict=True))
    if pinned is not None:
        configs = [c for c in configs if c[0] == pinned] or [(pinned, None)]
        source = "%s; %s" % (pin_source, source)
    # the configuration the host is nearest (a 2 TB DGX A100 that lost half reads as missing memory only if pinned)
    installed, dimms = min(configs, key=lambda c: abs(c[0] - total_gib))
    floor = memory_floor_gib(installed, dimms) if dimms else installed * (1 - MEMORY_OVERHEAD - 0.03)
    problems = []
    if total_gib < floor:
        gone = installed - total_gib / (1 - MEMORY_OVERHEAD / 2)
        per = installed / dimms if dimms else None
        problems.append(_problem(node, "%s: MemTotal %.1f GiB of %d GiB installed (floor %.1f GiB): about %.0f GiB "
                                 "missing%s - reseat or replace the DIMM(s) the BIOS / BMC event log names" % (
                                     node, total_gib, installed, floor, gone,
                                     " (%.1f DIMM(s) of %d GiB)" % (gone / per, per) if per else "")))
    numa = (entry.get("readings") or {}).get("numactl") or {}
    sizes = numa.get("node_size_mb") or {}
    if len(sizes) > 1:
        top = max(sizes.values())
        for nid, mb in sorted(sizes.items()):
            if top and mb < top * (1 - NUMA_IMBALANCE):
                problems.append(_problem(node, "%s: NUMA node %s has %d MB, its largest peer %d MB: DIMMs missing "
                                         "on that node's memory channels - reseat or replace them" % (
                                             node, nid, mb, top)))
    corrupted = mem.get("hardware_corrupted_kib")
    if corrupted:
        problems.append(_problem(node, "%s: the kernel took %d kB of RAM offline as corrupted (HardwareCorrupted): "
                                 "replace the failing DIMM" % (node, corrupted)))
    return _fails("host_memory", node, problems, round(total_gib, 1), round(floor, 1), source, unit="GiB",
                  absolute=True, installed_gib=installed, dimms=dimms)


def host_swap(node: str, entry: Dict[str, Any], model: DgxModel, exp: Dict[str, Any]) -> CheckResult:
    """Swap in use on the node (/proc/swaps, else meminfo): compared with expectations.node.swap_max_gb where the
    pod sets one; NVIDIA documents none for DGX OS, so otherwise it is reported (skipped, with the figure)."""
    readings = entry.get("readings") or {}
    swaps, mem = readings.get("swaps"), readings.get("meminfo")
    if swaps is None and mem is None:
        return _skipped("host_swap", node, _missing(entry, "swaps") or "no swap reading", SRC_SWAP)
    total_gib = (sum(s["size_kib"] for s in swaps) if swaps is not None else mem["swap_total_kib"]) / 1024.0 ** 2
    limit, source = expectation(exp, STAGE, "swap_max_gb", model.swap_guidance)
    details = {"devices": [s["name"] for s in swaps or []]}
    if limit is None:
        return CheckResult("host_swap", node, "skipped", measured=round(total_gib, 1), unit="GiB", source=SRC_SWAP,
                           reason="reported only: %.1f GiB of swap (%s); no NVIDIA guidance, set "
                                  "expectations.node.swap_max_gb to check it" % (
                                      total_gib, ", ".join(details["devices"]) or "none"),
                           details=details, **_on(node))
    problems = [] if total_gib <= float(limit) else [_problem(
        node, "%s has %.1f GiB of swap (%s), the pod allows %s GiB: swapoff and remove it from /etc/fstab" % (
            node, total_gib, ", ".join(details["devices"]), limit))]
    return _fails("host_swap", node, problems, round(total_gib, 1), float(limit), source, unit="GiB", how="<=",
                  **details)


# --------------------------------------------------------------------------------------------------------- NVMe

def _smart_problems(node: str, drive: Dict[str, Any], smart: Dict[str, Any]) -> List[Problem]:
    ctrl = drive.get("controller") or drive["device"]
    where = "%s /dev/%s (%s, serial %s)" % (node, ctrl, drive.get("model"), drive.get("serial"))
    out = []
    if smart.get("critical_warning"):
        out.append(_problem(node, "%s: SMART critical warning 0x%02x - replace the drive" % (
            where, smart["critical_warning"]), path="/dev/%s" % ctrl))
    if smart.get("media_errors"):
        out.append(_problem(node, "%s: %d media and data integrity errors - replace the drive" % (
            where, smart["media_errors"]), path="/dev/%s" % ctrl))
    if smart.get("passed") is False and not out:
        out.append(_problem(node, "%s: SMART overall health FAILED - replace the drive" % where,
                            path="/dev/%s" % ctrl))
    return out


def host_nvme(node: str, entry: Dict[str, Any], model: DgxModel) -> CheckResult:
    """The NVMe drives (nvme list, one per serial number) against the model's OS + data drives, and each drive's
    SMART health (smartctl -j, keyed by controller ``nvmeN``): a critical warning or media errors fail naming the
    drive. With the count right and SMART unread the check is skipped (the health is not known)."""
    source = model.sources.get("host_inventory", "")
    why = _missing(entry, "nvme_list")
    if why:
        return _skipped("host_nvme", node, why, source)
    drives = nvme_drives(entry["readings"]["nvme_list"])
    allowed = model.nvme_drives or (0,)
    problems: List[Problem] = []
    if len(drives) not in allowed:
        more = len(drives) > max(allowed)
        problems.append(_problem(node, "%s has %d NVMe drive(s), the %s has %s (OS %s + data %s): %s" % (
            node, len(drives), model.title, " or ".join(map(str, allowed)), model.nvme_os_drives or 0,
            "/".join(map(str, model.nvme_data_drives)) or 0,
            "a drive the model does not have - check what was added (dgx_model right?)" if more else
            "a drive is missing or dead - check the BMC and reseat or replace it")))
    smart = (entry.get("readings") or {}).get("smartctl")
    unread = [d.get("controller") or d["device"] for d in drives
              if smart is None or (d.get("controller") or d["device"]) not in smart]
    for d in drives:
        reading = (smart or {}).get(d.get("controller") or d["device"])
        if reading:
            problems += _smart_problems(node, d, reading)
    details = {"drives": [d.get("controller") or d["device"] for d in drives], "smart_unread": unread}
    if not problems and unread:
        return CheckResult("host_nvme", node, "skipped", measured=len(drives), expected=max(allowed),
                           unit="drives", source="%s; %s" % (source, SRC_SMART), details=details,
                           reason="%d NVMe drive(s) as the %s has, but SMART not read for %s: %s" % (
                               len(drives), model.title, ", ".join(unread),
                               (entry.get("errors") or {}).get("smartctl", "no smartctl reading")), **_on(node))
    return _fails("host_nvme", node, problems, len(drives), max(allowed) if len(drives) not in allowed else len(drives),
                  "%s; %s" % (source, SRC_SMART), unit="drives", absolute=False, how="=", **details)


# --------------------------------------------------------------------------------------------------------- disk space

def host_disk_space(node: str, entry: Dict[str, Any], model: DgxModel, exp: Dict[str, Any]) -> CheckResult:
    """Free space (df -P -B1: available / (used + available), as df's Capacity) on / and on the data RAID
    (expectations.node.raid_mount, /raid) against the minimums of expectations.node; a DGX with data NVMe drives
    whose RAID is not mounted fails."""
    why = _missing(entry, "df")
    if why:
        return _skipped("host_disk_space", node, why, SRC_DEFAULT_SPACE)
    rows = {r["mount"]: r for r in entry["readings"]["df"]}
    raid_mount, _ = expectation(exp, STAGE, "raid_mount", DEFAULTS["raid_mount"])
    problems: List[Problem] = []
    measured: Dict[str, Optional[float]] = {}
    sources = set()
    for mount, key in (("/", "root_min_free_pct"), (raid_mount, "raid_min_free_pct")):
        minimum, src = expectation(exp, STAGE, key, DEFAULTS[key])
        sources.add(src if src != "toolkit default" else SRC_DEFAULT_SPACE)
        row = rows.get(mount)
        if row is None:
            if mount == "/" or model.nvme_data_drives:
                problems.append(_problem(node, "%s: %s is not mounted - assemble and mount the data RAID "
                                         "(DGX OS: configure_raid_array.py / the /raid fstab entry)" % (node, mount)
                                         if mount != "/" else "%s: df shows no / filesystem" % node, path=mount))
            continue
        used, avail = row.get("used_bytes"), row.get("avail_bytes")
        if used is None or avail is None or used + avail == 0:
            problems.append(_problem(node, "%s: df gave no size for %s" % (node, mount), path=mount))
            continue
        free = 100.0 * avail / (used + avail)
        measured[mount] = round(free, 1)
        if free < float(minimum):
            problems.append(_problem(node, "%s: %s has %.1f %% free (%.0f GB), the minimum is %s %% - clean it up" % (
                node, mount, free, avail / 1e9, minimum), path=mount))
    lowest = min(measured.values()) if measured else None
    expected = ", ".join("%s >= %s %%" % (m, expectation(exp, STAGE, k, DEFAULTS[k])[0])
                         for m, k in (("/", "root_min_free_pct"), (raid_mount, "raid_min_free_pct")))
    return _fails("host_disk_space", node, problems, lowest, expected, "; ".join(sorted(sources)), unit="% free",
                  free_pct=measured)


# --------------------------------------------------------------------------------------------------------- kernel

def host_kernel(releases: Dict[str, Optional[str]], reasons: Dict[str, str]) -> List[CheckResult]:
    """One kernel release across the pod: the release most nodes run is the reference, each other node fails
    naming both. No majority (a tie) fails every node of the tie. A node without a reading is skipped."""
    counts = Counter(r for r in releases.values() if r)
    out = []
    if not counts:
        return [_skipped("host_kernel", n, reasons.get(n, "uname -r not read"), SRC_KERNEL) for n in releases]
    top = counts.most_common()
    majority = top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else None
    for node, rel in sorted(releases.items()):
        if not rel:
            out.append(_skipped("host_kernel", node, reasons.get(node, "uname -r not read"), SRC_KERNEL))
            continue
        if majority is None:
            problems = [_problem(node, "%s runs kernel %s; the pod has no majority release (%s)" % (
                node, rel, ", ".join("%s on %d" % kv for kv in top)))]
        elif rel != majority:
            problems = [_problem(node, "%s runs kernel %s, %d of the pod's other nodes run %s: install the pod's "
                                 "kernel (or reboot into it)" % (node, rel, counts[majority], majority))]
        else:
            problems = []
        out.append(_fails("host_kernel", node, problems, rel, majority, SRC_KERNEL, releases=dict(counts)))
    return out


# --------------------------------------------------------------------------------------------------------- BMC

def _in_window(entry: Dict[str, Any], since: Optional[str]) -> bool:
    """An entry is in the window when it is dated at or after ``since`` (ISO, the BMC's clock), or cannot be
    dated (Pre-Init, unset clock): an undated critical event is reported rather than dropped."""
    return since is None or entry.get("timestamp") is None or entry["timestamp"] >= since


def critical_sel_entries(sel: Dict[str, Any], since: Optional[str] = None) -> List[Tuple[Dict[str, Any], str]]:
    """(entry, what to do) for every asserted SEL entry of CRITICAL_SEL_EVENTS in the window."""
    out = []
    for e in sel.get("entries") or []:
        if e.get("kind") == "panic" and _in_window(e, since):
            out.append((e, "the host OS panicked (%s): read the kernel log" % e.get("event")))
            continue
        if not e.get("asserted") or not _in_window(e, since):
            continue
        for stype, pattern, todo in CRITICAL_SEL_EVENTS:
            if (stype is None or e.get("sensor_type") == stype) and re.search(pattern, e.get("event") or ""):
                sensor = e.get("sensor") or e.get("column") or "?"
                out.append((e, todo.format(sensor=sensor, where=e.get("extra") or sensor)))
                break
    return out


def bmc_sel(node: str, entry: Dict[str, Any], exp: Dict[str, Any]) -> CheckResult:
    """Critical SEL entries (ipmitool sel elist) in the window ``expectations.node.sel_since`` (ISO date-time of
    the BMC's clock; all entries when unset): each fails naming the record, the sensor and what to do."""
    why = _missing(entry, "sel")
    if why:
        return _skipped("bmc_sel", node, why, SRC_SEL)
    since, _ = expectation(exp, STAGE, "sel_since")
    found = critical_sel_entries(entry["readings"]["sel"], since)
    problems = [_problem(node, "%s BMC SEL #%x %s: %s %s - %s" % (
        node, e["id"], e.get("timestamp") or ("Pre-Init +%ss" % e.get("pre_init_seconds")
                                              if e.get("pre_init_seconds") is not None else "undated"),
        e.get("column") or "", e.get("event"), todo)) for e, todo in found]
    return _fails("bmc_sel", node, problems, len(found), 0, SRC_SEL, unit="critical entries", how="=",
                  since=since, entries=len(entry["readings"]["sel"].get("entries") or []))


def _sensor_todo(name: str, status: str) -> str:
    low = name.lower()
    if "psu" in low or "ps" == low[:2] or "power supply" in low:
        return "replace the power supply %s or restore its AC feed" % name
    if "fan" in low:
        return "replace the fan module %s" % name
    if "temp" in low:
        return "%s is %s: check the airflow, the fans and the inlet temperature" % (name, status)
    return "%s is %s: check it in the BMC" % (name, status)


def sensor_problems(node: str, readings: Dict[str, Any]) -> List[Problem]:
    """Problems of ``sdr elist`` and ``ipmitool sensor``: a threshold status cr/nr (or l/u forms), a reading past
    its critical threshold, a discrete state of FAILED_STATES. A sensor named by both tools counts once."""
    problems: List[Problem] = []
    seen = set()
    for s in (readings.get("sdr") or {}).get("sensors") or []:
        bad = [todo for pattern, todo in FAILED_STATES for st in s.get("states") or [] if re.search(pattern, st)]
        if s["status"] in BAD_SENSOR_STATUS or bad:
            seen.add(s["name"])
            todo = bad[0].format(sensor=s["name"]) if bad else _sensor_todo(s["name"], s["status"])
            problems.append(_problem(node, "%s BMC sensor %s: %s (%s) - %s" % (
                node, s["name"], s["status"], s.get("text") or "", todo)))
    for s in (readings.get("sensor") or {}).get("sensors") or []:
        if s["name"] in seen or s.get("discrete"):
            continue
        th, r = s.get("thresholds") or {}, s.get("reading")
        past = r is not None and ((th.get("lcr") is not None and r <= th["lcr"] and th["lcr"] != 0) or
                                  (th.get("ucr") is not None and r >= th["ucr"]))
        if s["status"] in ("cr", "nr") or past:
            seen.add(s["name"])
            problems.append(_problem(node, "%s BMC sensor %s: %s %s (status %s, critical %s..%s) - %s" % (
                node, s["name"], r, s.get("unit") or "", s["status"], th.get("lcr"), th.get("ucr"),
                _sensor_todo(s["name"], s["status"]))))
    return problems


def bmc_sensors(node: str, entry: Dict[str, Any]) -> CheckResult:
    """Sensors out of range (ipmitool sdr elist and/or ipmitool sensor): a sensor in a critical or
    non-recoverable state, past its critical threshold, or a power supply / fan in a failed state."""
    readings = entry.get("readings") or {}
    if readings.get("sdr") is None and readings.get("sensor") is None:
        return _skipped("bmc_sensors", node, _missing(entry, "sdr") or "no sensor reading", SRC_SENSORS)
    problems = sensor_problems(node, readings)
    count = len((readings.get("sdr") or {}).get("sensors") or []) + len(
        (readings.get("sensor") or {}).get("sensors") or [])
    return _fails("bmc_sensors", node, problems, len(problems), 0, SRC_SENSORS, unit="sensors out of range",
                  how="=", sensors_read=count)


# --------------------------------------------------------------------------------------------------------- stage

def evaluate(recorded: Dict[str, Any], expectations: Dict[str, Any], context: Any = None) -> List[CheckResult]:
    """Every host inventory and BMC check of every DGX the stage recorded (see the module docstring)."""
    out: List[CheckResult] = []
    exp = expectations or {}
    releases: Dict[str, Optional[str]] = {}
    reasons: Dict[str, str] = {}
    for node, entry in sorted(((recorded or {}).get("nodes") or {}).items()):
        if not isinstance(entry, dict) or entry.get("status") in ("unreachable", "error") or "readings" not in entry:
            out.append(no_result("host_inventory", node, **_on(node)))
            continue
        model = dgx_model(entry.get("dgx_model"))
        if model is None:
            out.append(CheckResult("host_inventory", node, "error", reason="unknown dgx_model %r: no catalogue "
                                   "entry to compare with" % entry.get("dgx_model"), **_on(node)))
            continue
        out += [host_cpu(node, entry, model), host_memory(node, entry, model, exp), host_numa(node, entry, model),
                host_swap(node, entry, model, exp), host_nvme(node, entry, model),
                host_disk_space(node, entry, model, exp), bmc_sel(node, entry, exp), bmc_sensors(node, entry)]
        releases[node] = (entry.get("readings") or {}).get("uname_r")
        if releases[node] is None:
            reasons[node] = _missing(entry, "uname_r") or "uname -r not read"
    out += host_kernel(releases, reasons)
    return out
