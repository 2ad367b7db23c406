# -*- coding: utf-8 -*-
"""Kernel-log events of a DGX (pure functions, stdlib only): read the kernel log as DGX OS keeps it and return
the events the node stage judges - NVIDIA Xid and NVSwitch SXid messages, PCIe AER errors, PCIe links that train
below what the device can do, mlx5 link and port-module events and mlx5 firmware health.

Formats read (one line at a time, so a mix is read too):

- ``dmesg`` (``[ 1234.567890] msg``: seconds since boot, placed with ``boot_time``), ``dmesg -T`` / ``--ctime``
  (``[Fri Aug 30 11:43:09 2024] msg``), ``dmesg --time-format iso`` (``2025-01-25T10:34:54,859532+00:00 msg``),
  ``dmesg -t`` (no stamp), ``dmesg -x`` (``kern  :err   : `` before the stamp) and ``/dev/kmsg``'s ``<3>``;
- ``journalctl -k -o short-iso`` / ``short-iso-precise`` (``2024-02-14T05:03:41+0000 host kernel: msg``), ``-o
  short`` / ``short-precise`` and syslog files (``Feb 14 05:03:41 host kernel: msg``: no year, so ``year`` places
  it); a ``[ secs]`` stamp after ``kernel:`` is kept too. Lines of other processes and journal markers
  (``-- Boot ... --``) are skipped.

What each message is, from the printing code:

- Xid: NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c ``krcReportXid``:
  ``NVRM: Xid (PCI:%04x:%02x:%02x[ GPU-I:%02u[ GPU-CI:%02u]]): %d, pid=%s, name=%s, %s%s`` or without
  ``pid=..., name=...,`` (older drivers print ``pid='<unknown>', name=<unknown>``, the oldest ``(0000:03:00)``
  without ``PCI:``); ``%s`` last is `` caused by previous Xid %d`` on Xid 45. ``NVRM: GPU at PCI:...: GPU-<uuid>``
  (``_krcLogUuidOnce``) maps the bus id to the GPU's UUID. ``NVRM: GPU %s: GPU has fallen off the bus.`` and the
  multi-line ``NVRM: The NVIDIA GPU %s ... fallen off the bus`` (osinit.c / nv.c) are a lost GPU without Xid.
- SXid: the NVSwitch driver (src/common/nvswitch) ``nvidia-%s: SXid (PCI:%04x:%02x:%02x.%x): %05d, <Fatal|Non-fatal>,
  ...``, followed by a ``Data {...}`` line for the same SXid (not counted twice).
- AER: torvalds/linux drivers/pci/pcie/aer.c (4.x-6.x): the root port's ``[Multiple ]<severity> error received:
  <bdf>`` (``id=00e8`` before 4.19, ``error message received from <bdf>`` from 6.x), then per device ``PCIe Bus
  Error: severity=<Corrected|Correctable|Uncorrected (Non-Fatal)|Uncorrectable (Fatal)|...>, type=<layer>,
  [id=XXXX](<agent>)``, ``device [vvvv:dddd] error status/mask=%08x/%08x``, ``[%2d] <name>[ (First)]``.
- PCIe bandwidth: drivers/pci/pci.c ``__pcie_print_link_status``: ``%u.%03u Gb/s available PCIe bandwidth, limited
  by %s x%d link at %s (capable of %u.%03u Gb/s with %s x%d link)[, in Flit mode]``.
- mlx5: ``<drv> <bdf> <netdev>: Link up|Link down`` (mlx5e_update_carrier, netdev_info); ``<drv> <bdf> <ibdev>: Port:
  %d Link <DOWN|INIT|ARMED|ACTIVE>`` (ib_core cache.c, ibdev_info); ``Port module event[error]: module %u, %s[, %s]``
  (mlx5 events.c); firmware health (health.c): ``device's health compromised - reached miss count``, ``Fatal error
  %u detected``, ``Health issue observed, %s, severity(%d) %s:``, ``Driver is in error state. Unloading``, ``PCI
  slot is unavailable`` (mlx5_core_err adds ``func:line:(pid N): ``).

A kernel log is free text: every other line is counted in ``unrecognised`` and otherwise ignored. A line that
carries one of the markers above but does not read as its format (``NVRM: Xid`` without a number, an AER severity
that is not one of the kernel's) is garbled and raises :class:`ParseError`, and so does a last line without its
newline (output cut off): a fault is never dropped silently.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo, UTC
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, complete_lines

TOOL = "kernel log"

_HEX = "[0-9a-fA-F]"
_BDF = r"(?:%s{4,8}:)?%s{2}:%s{2}\.[0-7]" % (_HEX, _HEX, _HEX)

# --------------------------------------------------------------------------- bus ids


def bus_id(text: str) -> Optional[str]:
    """A PCI address as one comparable string ``dddd:bb:dd.f`` (lower case, 4-digit domain, function 0 when the
    text has none): nvidia-smi's ``00000000:07:00.0``, the kernel's ``0000:07:00.0``, the Xid's ``PCI:0000:07:00``
    and a bare ``07:00.0`` all give ``0000:07:00.0``. None when ``text`` is not a PCI address."""
    if not isinstance(text, str):
        return None
    m = re.match(r"^\s*(?:PCI:)?(?:(%s{1,8}):)?(%s{1,2}):(%s{1,2})(?:\.([0-7]))?\s*$" % (_HEX, _HEX, _HEX), text)
    if not m:
        return None
    domain = int(m.group(1) or "0", 16)
    if domain > 0xFFFF:
        return None
    return "%04x:%02x:%02x.%s" % (domain, int(m.group(2), 16), int(m.group(3), 16), m.group(4) or "0")


# --------------------------------------------------------------------------- time stamps

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), 1)}
_DECODE = re.compile(r"^(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])\s*:"
                     r"\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:\s?")
_KMSG_LEVEL = re.compile(r"^<\d{1,3}>")
_MONO = re.compile(r"^\[\s*(\d{1,10}\.\d{1,9})\]\s?(.*)$")
_CTIME = re.compile(r"^\[([A-Z][a-z]{2}) ([A-Z][a-z]{2})\s+(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\]\s?(.*)$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?\s(.*)$")
_SYSLOG = re.compile(r"^([A-Z][a-z]{2})\s+(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? (.*)$")
# "host kernel: msg" / "host proc[pid]: msg" after a journal/syslog stamp
_JOURNAL_IDENT = re.compile(r"^(\S+) (kernel|[^\s\[\]:]+\[\d+\]):\s?(.*)$")
_JOURNAL_MARKER = re.compile(r"^-- .* --$|^-- No entries --$|^-- (?:Logs begin|Journal begins) ")


def _zone(text: Optional[str], default: tzinfo) -> tzinfo:
    if not text:
        return default
    if text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def _epoch(year: int, month: int, day: int, hh: int, mm: int, ss: int, frac: Optional[str], zone: tzinfo
           ) -> Optional[float]:
    try:
        dt = datetime(year, month, day, hh, mm, ss, tzinfo=zone)
    except ValueError:
        return None
    return dt.timestamp() + (float("0." + frac) if frac else 0.0)


def _stamp(line: str, year: Optional[int], zone: tzinfo) -> Tuple[Optional[str], Optional[float], Optional[float],
                                                                   Optional[bool], str]:
    """(format, wall-clock epoch seconds, seconds since boot, is-kernel, message) of one line. ``is-kernel`` is
    False for another process's journal line, None where the format has no identifier (dmesg)."""
    line = _KMSG_LEVEL.sub("", _DECODE.sub("", line))
    m = _MONO.match(line)
    if m:
        return "dmesg", None, float(m.group(1)), None, m.group(2)
    m = _CTIME.match(line)
    if m and m.group(2) in _MONTHS:
        when = _epoch(int(m.group(7)), _MONTHS[m.group(2)], int(m.group(3)), int(m.group(4)), int(m.group(5)),
                      int(m.group(6)), None, zone)
        if when is not None:
            return "dmesg-ctime", when, None, None, m.group(8)
    m = _ISO.match(line)
    if m:
        when = _epoch(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                      int(m.group(6)), m.group(7), _zone(m.group(8), zone))
        if when is not None:
            j = _JOURNAL_IDENT.match(m.group(9))
            if j:
                return _journal("journal-iso", when, j)
            return "dmesg-iso", when, None, None, m.group(9)
    m = _SYSLOG.match(line)
    if m and m.group(1) in _MONTHS:
        j = _JOURNAL_IDENT.match(m.group(7))
        if j:
            when = None if year is None else _epoch(year, _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)),
                                                    int(m.group(4)), int(m.group(5)), m.group(6), zone)
            return _journal("journal-short", when, j)
    return None, None, None, None, line


def _journal(fmt: str, when: Optional[float], j: re.Match[str]) -> Tuple[str, Optional[float], Optional[float],
                                                                           bool, str]:
    msg = j.group(3)
    mono = None
    m = _MONO.match(msg)
    if m:  # "kernel: [240314.528856] NVRM: ..." (syslog files of kernels that print the boot stamp)
        mono, msg = float(m.group(1)), m.group(2)
    return fmt, when, mono, j.group(2) == "kernel", msg


# --------------------------------------------------------------------------- messages

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<bus>%s{4}:%s{2}:%s{2})(?P<attr>(?: GPU-I:\d+)?(?: GPU-CI:\d+)?)\): "
                  r"(?P<xid>\d{1,5}),\s?(?P<rest>.*)$" % (_HEX, _HEX, _HEX))
_XID_PID = re.compile(r"^pid=(?P<pid>'<unknown>'|<unknown>|<n/a>|'?\d*'?), name=(?P<name>.*?), (?P<text>.*)$")
_XID_PID_ONLY = re.compile(r"^pid=(?P<pid>'<unknown>'|<unknown>|<n/a>|\d+), (?P<text>.*)$")
_CAUSED_BY = re.compile(r" caused by previous Xid (\d{1,5})$")
_LINK_NO = re.compile(r"\b[Ll]ink (-?\d{1,3})\b")
_FATAL_WORD = re.compile(r"\b(Fatal|Nonfatal|Non-fatal)\b")
_GPU_UUID = re.compile(r"NVRM: GPU at PCI:(?P<bus>%s{4}:%s{2}:%s{2}): (?P<uuid>GPU-[0-9a-fA-F-]{36})$"
                       % (_HEX, _HEX, _HEX))
_GPU_LOST = re.compile(r"NVRM: GPU (?P<bus>%s): GPU has fallen off the bus\.?$" % _BDF)
_GPU_LOST_HEAD = re.compile(r"NVRM: The NVIDIA GPU (?P<bus>%s)\s*$" % _BDF)
_GPU_LOST_TAIL = "fallen off the bus and is not responding to commands"
_SXID = re.compile(r"^(?:(?P<dev>[\w-]+): )?SXid \(PCI:(?P<bus>%s)\): (?P<sxid>\d{1,6}),\s?(?P<rest>.*)$" % _BDF)
_SXID_DETAIL = re.compile(r"^Severity \d+ Engine instance")
_DEV = re.compile(r"^(?P<drv>[\w.-]+) (?P<bdf>%s)(?: (?P<ifname>[^\s:]+))?: (?P<msg>.*)$" % _BDF)
_AER_SEVERITIES = {"corrected": "corrected", "correctable": "corrected",
                   "uncorrected (non-fatal)": "nonfatal", "uncorrectable (non-fatal)": "nonfatal",
                   "uncorrected (fatal)": "fatal", "uncorrectable (fatal)": "fatal"}
_AER_RECEIVED = re.compile(r"^(?P<multi>Multiple )?(?P<sev>[A-Za-z]+(?: \([A-Za-z-]+\))?) error (?:received|message "
                           r"received from):? (?:id=(?P<id>%s{4})|(?P<src>%s))(?P<tail>.*)$" % (_HEX, _BDF))
_AER_BUS_ERROR = re.compile(r"^PCIe Bus Error: severity=(?P<sev>[^,]+), type=(?P<type>[^,]+), "
                            r"(?:id=(?P<id>%s{4}))?\((?P<agent>[^)]+)\)$" % _HEX)
_AER_STATUS = re.compile(r"^device \[(?P<ven>%s{4}):(?P<dev>%s{4})\] error status/mask=(?P<st>%s{8})/(?P<mask>%s{8})$"
                         % (_HEX, _HEX, _HEX, _HEX))
_AER_BIT = re.compile(r"^\[\s*(?P<bit>\d{1,2})\]\s+(?P<name>.*?)\s*(?P<first>\(First\))?$")
_PCIE_LIMITED = re.compile(r"^(?P<avail>\d+\.\d{3}) Gb/s available PCIe bandwidth, limited by (?P<speed>.+?) "
                           r"x(?P<width>\d{1,2}) link at (?P<at>\S+) \(capable of (?P<cap>\d+\.\d{3}) Gb/s with "
                           r"(?P<cspeed>.+?) x(?P<cwidth>\d{1,2}) link\)(?:, in Flit mode)?$")
_IB_PORT = re.compile(r"^Port: (?P<port>\d{1,3}) Link (?P<state>[A-Z_]+)$")
_MODULE = re.compile(r"^Port module event(?P<err>\[error\])?: module (?P<module>\d{1,3}), (?P<status>[^,]+)"
                     r"(?:, (?P<error>.+))?$")
_MLX5_FUNC = re.compile(r"^(?P<func>\w+):(?P<lineno>\d+):(?:\(pid \d+\):)? ?")
_MLX5_HEALTH = ("device's health compromised", "Fatal error ", "Health issue observed", "Driver is in error state",
                "PCI slot is unavailable")


def _xid_event(msg: str, n: int, line: str) -> Dict[str, Any]:
    m = _XID.search(msg)
    if not m:
        raise ParseError(TOOL, "an NVRM Xid line not in the driver's format 'NVRM: Xid (PCI:dddd:bb:dd): N, ...'",
                         n, line)
    rest = m.group("rest")
    pid = name = None
    p = _XID_PID.match(rest) or _XID_PID_ONLY.match(rest)
    if p:
        pid, rest = p.group("pid").strip("'"), p.group("text")
        name = p.groupdict().get("name")
        pid = None if pid in ("<unknown>", "<n/a>", "") else pid
        name = None if name in (None, "<unknown>") else name
    caused = _CAUSED_BY.search(rest)
    xid = int(m.group("xid"))
    ev: Dict[str, Any] = {"kind": "xid", "bus_id": bus_id(m.group("bus")), "xid": xid, "pid": pid,
                          "process": name, "text": rest[:caused.start()] if caused else rest,
                          "caused_by": int(caused.group(1)) if caused else None}
    attr = m.group("attr").strip()
    if attr:
        ev["mig"] = attr
    link = _LINK_NO.search(rest)
    if link:
        ev["link"] = int(link.group(1))
    word = _FATAL_WORD.search(rest)
    if word:
        ev["fatal"] = word.group(1) == "Fatal"
    return ev


def _sxid_event(msg: str, n: int, line: str) -> Optional[Dict[str, Any]]:
    m = _SXID.match(msg)
    if not m:
        raise ParseError(TOOL, "an SXid line not in the NVSwitch driver's format 'nvidia-nvswitchN: SXid "
                               "(PCI:dddd:bb:dd.f): N, ...'", n, line)
    rest = m.group("rest")
    if rest.startswith("Data {") or _SXID_DETAIL.match(rest):
        return None  # the data / severity lines the driver prints after each SXid: the same event
    word = _FATAL_WORD.match(rest)
    ev: Dict[str, Any] = {"kind": "sxid", "device": (m.group("dev") or "").replace("nvidia-", "") or None,
                          "bus_id": bus_id(m.group("bus")), "sxid": int(m.group("sxid")), "text": rest,
                          "fatal": None if not word else word.group(1) == "Fatal"}
    link = _LINK_NO.search(rest)
    if link:
        ev["link"] = int(link.group(1))
    return ev


def _aer_severity(text: str, n: int, line: str) -> str:
    sev = _AER_SEVERITIES.get(text.strip().lower())
    if sev is None:
        raise ParseError(TOOL, "AER severity %r is none the kernel prints (Corrected/Correctable, Uncorrected/"
                               "Uncorrectable (Non-Fatal)/(Fatal))" % text, n, line)
    return sev


def _source_from_id(reporter: str, hexid: str) -> str:
    """A pre-4.19 ``id=00e8`` (bus << 8 | devfn) as a bus id in the reporting port's domain."""
    value = int(hexid, 16)
    return "%s:%02x:%02x.%d" % (reporter.split(":")[0], value >> 8, (value & 0xFF) >> 3, value & 0x7)


class _Reader:
    """Reads one kernel log: holds the AER event each device's detail lines belong to and the multi-line
    'fallen off the bus' message in progress."""

    def __init__(self, boot_time: Optional[float], year: Optional[int], zone: tzinfo):
        self.boot_time, self.year, self.zone = boot_time, year, zone
        self.events: List[Dict[str, Any]] = []
        self.unrecognised = 0
        self.kernel_lines = 0
        self.formats: List[str] = []
        self.open_aer: Dict[str, Dict[str, Any]] = {}
        self.lost_head: Optional[Tuple[str, int, Optional[float], Optional[float]]] = None

    def add(self, ev: Dict[str, Any], n: int, when: Optional[float], mono: Optional[float]) -> None:
        if when is None and mono is not None and self.boot_time is not None:
            when = self.boot_time + mono
        ev.update(line=n, time=when, mono=mono)
        self.events.append(ev)

    def read(self, n: int, line: str) -> None:
        if not line.strip() or _JOURNAL_MARKER.match(line.strip()):
            return
        fmt, when, mono, is_kernel, msg = _stamp(line, self.year, self.zone)
        if fmt and fmt not in self.formats:
            self.formats.append(fmt)
        if is_kernel is False:
            self.unrecognised += 1  # another process's journal line
            return
        self.kernel_lines += 1
        if not self.message(msg.strip(), n, line, when, mono):
            self.unrecognised += 1

    def message(self, msg: str, n: int, line: str, when: Optional[float], mono: Optional[float]) -> bool:
        """Read one kernel message; False if it is none of the events (free text)."""
        if "NVRM: Xid" in msg:
            self.add(_xid_event(msg, n, line), n, when, mono)
            return True
        if "NVRM:" in msg:
            return self.nvrm(msg, n, when, mono)
        if "SXid (" in msg:
            ev = _sxid_event(msg, n, line)
            if ev is not None:
                self.add(ev, n, when, mono)
            return True
        d = _DEV.match(msg)
        if d:
            return self.device(d.group("drv"), bus_id(d.group("bdf")) or "", d.group("ifname"), d.group("msg"),
                                n, line, when, mono)
        for marker in ("PCIe Bus Error", "available PCIe bandwidth, limited by"):
            if marker in msg:
                raise ParseError(TOOL, "a %r line without the '<driver> <bus id>: ' the kernel prints before it"
                                 % marker, n, line)
        return False

    def nvrm(self, msg: str, n: int, when: Optional[float], mono: Optional[float]) -> bool:
        m = _GPU_UUID.search(msg)
        if m:
            self.add({"kind": "gpu_uuid", "bus_id": bus_id(m.group("bus")), "uuid": m.group("uuid")}, n, when, mono)
            return True
        m = _GPU_LOST.search(msg)
        if m:
            self.add({"kind": "gpu_lost", "bus_id": bus_id(m.group("bus")), "text": "GPU has fallen off the bus"},
                     n, when, mono)
            return True
        m = _GPU_LOST_HEAD.search(msg)
        if m:
            self.lost_head = (bus_id(m.group("bus")) or "", n, when, mono)
            return True
        if _GPU_LOST_TAIL in msg and self.lost_head and n - self.lost_head[1] <= 3:
            head_bus, _, head_when, head_mono = self.lost_head
            self.add({"kind": "gpu_lost", "bus_id": head_bus,
                      "text": "fallen off the bus and is not responding to commands"}, n, head_when, head_mono)
            self.lost_head = None
            return True
        return False

    def device(self, drv: str, bdf: str, ifname: Optional[str], msg: str, n: int, line: str,
               when: Optional[float], mono: Optional[float]) -> bool:
        body = msg[len("AER: "):] if msg.startswith("AER: ") else msg
        stripped = body.strip()
        if "PCIe Bus Error" in stripped:
            m = _AER_BUS_ERROR.match(stripped)
            if not m:
                raise ParseError(TOOL, "a PCIe Bus Error line not in aer.c's format 'PCIe Bus Error: severity=..., "
                                       "type=..., (agent)'", n, line)
            ev = {"kind": "aer", "driver": drv, "bus_id": bdf, "severity": _aer_severity(m.group("sev"), n, line),
                  "type": m.group("type").strip(), "agent": m.group("agent"), "errors": [], "first": None,
                  "status": None, "mask": None, "vendor_device": None}
            self.add(ev, n, when, mono)
            self.open_aer[bdf] = ev
            return True
        if "error received" in stripped or "error message received from" in stripped:
            m = _AER_RECEIVED.match(stripped)
            if not m:
                raise ParseError(TOOL, "an AER 'error received' line not in aer.c's format", n, line)
            source = m.group("src") and bus_id(m.group("src"))
            if m.group("id"):
                source = _source_from_id(bdf, m.group("id"))
            self.add({"kind": "aer_source", "bus_id": bdf, "source": source,
                      "severity": _aer_severity(m.group("sev"), n, line), "multiple": bool(m.group("multi"))},
                     n, when, mono)
            return True
        m = _AER_STATUS.match(stripped)
        if m:
            ev = self.open_aer.get(bdf)
            if ev is not None:
                ev.update(status=int(m.group("st"), 16), mask=int(m.group("mask"), 16),
                          vendor_device="%s:%s" % (m.group("ven").lower(), m.group("dev").lower()))
            return ev is not None
        m = _AER_BIT.match(stripped)
        if m and bdf in self.open_aer:
            ev = self.open_aer[bdf]
            ev["errors"].append(m.group("name"))
            if m.group("first"):
                ev["first"] = m.group("name")
            return True
        if "available PCIe bandwidth, limited by" in stripped:
            m = _PCIE_LIMITED.match(stripped)
            if not m:
                raise ParseError(TOOL, "a PCIe bandwidth line not in pci.c's format '... available PCIe bandwidth, "
                                       "limited by <speed> xN link at <bdf> (capable of ... with <speed> xN link)'",
                                 n, line)
            self.add({"kind": "pcie_limited", "driver": drv, "bus_id": bdf, "netdev": ifname,
                      "available_gbps": float(m.group("avail")), "speed": m.group("speed"),
                      "width": int(m.group("width")), "limited_at": bus_id(m.group("at")) or m.group("at"),
                      "capable_gbps": float(m.group("cap")), "capable_speed": m.group("cspeed"),
                      "capable_width": int(m.group("cwidth"))}, n, when, mono)
            return True
        if ifname and stripped in ("Link up", "Link down"):
            self.add({"kind": "link", "driver": drv, "bus_id": bdf, "netdev": ifname,
                      "state": stripped.split()[1]}, n, when, mono)
            return True
        m = _IB_PORT.match(stripped)
        if m and ifname:
            self.add({"kind": "ib_port", "driver": drv, "bus_id": bdf, "ibdev": ifname, "port": int(m.group("port")),
                      "state": m.group("state")}, n, when, mono)
            return True
        m = _MODULE.match(stripped)
        if m:
            self.add({"kind": "module", "driver": drv, "bus_id": bdf, "module": int(m.group("module")),
                      "status": m.group("status").strip(), "error": m.group("error") or (
                          "error" if m.group("err") else None)}, n, when, mono)
            return True
        f = _MLX5_FUNC.match(stripped)
        text = stripped[f.end():] if f else stripped
        if drv.startswith("mlx5") and text.startswith(_MLX5_HEALTH):
            self.add({"kind": "mlx5_health", "driver": drv, "bus_id": bdf, "function": f.group("func") if f else None,
                      "text": text}, n, when, mono)
            return True
        return False


def parse_kernel_log(text: str, boot_time: Optional[float] = None, year: Optional[int] = None,
                     tz: tzinfo = UTC) -> Dict[str, Any]:
    """The events of a kernel log (``dmesg`` in any of its time formats, ``journalctl -k``, a syslog file).

    ``boot_time``: the epoch seconds the node booted (``/proc/stat`` btime), to place ``[ secs]`` stamps;
    ``year``: the year of ``journalctl -o short``/syslog stamps, which print none; ``tz``: the zone of stamps
    printed without one (``dmesg -T``, ``-o short``; the node's own, UTC on DGX OS by default).

    Returns ``{"events": [...], "lines": N, "kernel_lines": K, "unrecognised": U, "formats": [...]}``; each event
    has ``kind`` (``xid``, ``sxid``, ``gpu_lost``, ``gpu_uuid``, ``aer``, ``aer_source``, ``pcie_limited``,
    ``link``, ``ib_port``, ``module``, ``mlx5_health``), ``bus_id`` (:func:`bus_id`), ``line``, ``time`` (epoch
    seconds or None when it cannot be placed) and ``mono`` (seconds since boot or None). An empty log has no
    events. Raises :class:`ParseError` on a cut-off last line or a garbled event line."""
    numbered = complete_lines(TOOL, text)
    reader = _Reader(boot_time, year, tz)
    for n, line in numbered:
        reader.read(n, line)
    return {"events": reader.events, "lines": len(numbered), "kernel_lines": reader.kernel_lines,
            "unrecognised": reader.unrecognised, "formats": reader.formats}


def in_window(events: List[Dict[str, Any]], since: Optional[float] = None, until: Optional[float] = None,
              keep_unplaced: bool = True) -> List[Dict[str, Any]]:
    """The events with ``since <= time <= until`` (either bound optional). An event without a time (a ``[ secs]``
    stamp and no boot time) cannot be placed: kept when ``keep_unplaced`` (the ring buffer holds only the current
    boot, so it is recent), dropped otherwise."""
    out = []
    for ev in events:
        t = ev.get("time")
        if t is None:
            if keep_unplaced:
                out.append(ev)
            continue
        if since is not None and t < since:
            continue
        if until is not None and t > until:
            continue
        out.append(ev)
    return out
