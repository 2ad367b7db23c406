# -*- coding: utf-8 -*-
"""Parsers for a DGX's BMC through ``ipmitool`` (issue 39 item 3): pure functions, stdlib only.

- ``ipmitool sel elist`` / ``sel list``: ipmitool lib/ipmi_sel.c ``ipmi_sel_print_std_entry`` prints
  ``"%4x | " date " | " time " | " <sensor type> <sensor id or #0xNN> " | " <event> " | " Asserted|Deasserted``
  and, for a threshold event, `` | Reading R > Threshold T <unit>``; an entry the BMC logged before its clock was
  set reads `` Pre-Init  |%010d| `` (seconds since the BMC started) instead of date and time. The date is ``%x``
  (1.8.19: ``05/27/22`` in the C locale; 1.8.18 and older ``%m/%d/%Y``), the time ``%X %Z`` (``06:12:15 PM CST``
  in some locales) or ``%H:%M:%S``. OEM records print ``OEM record cN | ...`` and a Linux panic record
  ``Linux kernel panic: ...``.
- ``ipmitool sdr elist``: lib/ipmi_sdr.c ``ipmi_sdr_print_sensor_fc`` prints ``"%-16s | %02Xh | %-3s | %2d.%1d | "``
  then the reading (``23 degrees C``) or the asserted states joined by ``", "``; the status is ``ok``/``ns`` or,
  for a threshold sensor, ``ipmi_sdr_get_thresh_status``: ``cr``/``nc``/``nr`` or, in elist's extended form,
  ``lcr``/``ucr``/``lnc``/``unc``/``lnr``/``unr``.
- ``ipmitool sensor``: lib/ipmi_sensor.c ``dump_sensor_fc_thredshold`` prints ``"%-16s | %-10.3f | %-10s | %-6s"``
  then six thresholds (lnr, lcr, lnc, unc, ucr, unr) as numbers or ``na``; a discrete sensor prints its raw value
  ``0x0``, ``discrete`` and its state bits ``0x0080``.

Each parser returns what the text means or raises :class:`ParseError` naming the tool and the line (a last line
without a newline is a cut-off output). Lines without a ``|`` (ipmitool's own notes such as "SEL has no entries",
or "Get SEL Entry 40 command failed: ...") are kept in ``messages``.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, content_lines

SEL = "ipmitool sel elist"
SDR = "ipmitool sdr elist"
SENSOR = "ipmitool sensor"

# ipmitool's sensor type names (lib/ipmi_sdr.c sensor_type_desc, and the SEL's sensor_specific type names), longest
# first: the SEL's sensor column is "<type> <sensor id>" or "<type> #0xNN".
SENSOR_TYPES = tuple(sorted((
    "reserved", "Temperature", "Voltage", "Current", "Fan", "Physical Security", "Platform Security", "Processor",
    "Power Supply", "Power Unit", "Cooling Device", "Other", "Memory", "Drive Slot / Bay", "Drive Slot (Bay)",
    "POST Memory Resize", "System Firmwares", "System Firmware Progress", "System Firmware Error",
    "Event Logging Disabled", "Watchdog1", "Watchdog 1", "System Event", "Critical Interrupt", "Button",
    "Module / Board", "Module/Board", "Microcontroller", "Add-in Card", "Chassis", "Chip Set", "Other FRU",
    "Cable / Interconnect", "Cable/Interconnect", "Terminator", "System Boot Initiated", "Boot Error", "OS Boot",
    "OS Critical Stop", "Slot / Connector", "Slot/Connector", "System ACPI Power State", "Watchdog2", "Watchdog 2",
    "Platform Alert", "Entity Presence", "Monitor ASIC", "LAN", "Management Subsys Health", "Battery",
    "Session Audit", "Version Change", "FRU State", "OEM reserved", "Unknown"), key=len, reverse=True))

_SEL_ID = r"^\s*([0-9a-fA-F]{1,4})\s*\|"
_SEL_PREINIT = re.compile(_SEL_ID + r"\s*Pre-Init\s*[|,]\s*(\d{1,10})\s*\|(.*)$")
_SEL_DATED = re.compile(_SEL_ID + r"\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|(.*)$")
_DATE = re.compile(r"^(\d{2})/(\d{2})/(\d{2}|\d{4})$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})(?:\s+([AP]M))?(?:\s+([A-Za-z][A-Za-z0-9+-]*))?$")


def _sensor_split(column: str) -> Dict[str, Optional[str]]:
    """'Power Supply PSU2 Status' -> type 'Power Supply', sensor 'PSU2 Status'; 'Processor #0x40' -> sensor '#0x40';
    a type ipmitool's tables do not hold (an OEM one) leaves ``sensor_type`` None and the whole column as sensor."""
    for t in SENSOR_TYPES:
        if column == t or column.startswith(t + " "):
            rest = column[len(t):].strip()
            return {"sensor_type": t, "sensor": rest or None}
    return {"sensor_type": None, "sensor": column or None}


def _date_time(date: str, time: str, n: int, line: str) -> Dict[str, Any]:
    if date == "Unspecified" or time == "Unspecified":
        return {"timestamp": None, "tz": None}
    if date.startswith("S+"):  # a BMC-relative stamp (ipmi_timestamp_date of a special timestamp)
        return {"timestamp": None, "tz": None}
    dm, tm = _DATE.match(date), _TIME.match(time)
    if not dm or not tm:
        raise ParseError(SEL, "expected 'MM/DD/YY(YY) | HH:MM:SS [AM|PM] [TZ]'", n, line)
    year = int(dm.group(3))
    year += 2000 if year < 100 else 0
    hour = int(tm.group(1))
    if tm.group(4):
        if not 1 <= hour <= 12:
            raise ParseError(SEL, "a 12-hour clock reading %d %s" % (hour, tm.group(4)), n, line)
        hour = hour % 12 + (12 if tm.group(4) == "PM" else 0)
    month, day, minute, second = int(dm.group(1)), int(dm.group(2)), int(tm.group(2)), int(tm.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        raise ParseError(SEL, "not a date and time", n, line)
    return {"timestamp": "%04d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, hour, minute, second),
            "tz": tm.group(5)}


def _event_columns(rest: str, n: int, line: str) -> Dict[str, Any]:
    """'<sensor> | <event> | Asserted [| <extra>]' (the part after the time)."""
    cols = [c.strip() for c in rest.split("|")]
    if len(cols) < 3 or cols[2] not in ("Asserted", "Deasserted"):
        raise ParseError(SEL, "expected '<sensor> | <event> | Asserted|Deasserted'", n, line)
    out: Dict[str, Any] = _sensor_split(cols[0])
    out.update({"column": cols[0], "event": cols[1], "asserted": cols[2] == "Asserted",
                "extra": " | ".join(c for c in cols[3:] if c) or None})
    return out


def parse_sel_elist(text: str) -> Dict[str, Any]:
    """``ipmitool sel elist`` (or ``sel list``) -> {entries, messages}. Each entry: id (the record id, hex), kind
    (``standard``, ``oem``, ``panic``), timestamp (ISO, the BMC's clock; None for Pre-Init and unset clocks),
    pre_init_seconds, tz, sensor_type, sensor, column (the whole sensor column), event, asserted, extra (the
    threshold reading, the DIMM). An empty SEL prints "SEL has no entries": entries []."""
    entries: List[Dict[str, Any]] = []
    messages: List[str] = []
    rows = content_lines(SEL, text)
    if not rows:
        raise ParseError(SEL, "empty output (ipmitool prints 'SEL has no entries' for an empty log)")
    for n, line, stripped in rows:
        if "|" not in stripped:
            if stripped.startswith("Linux kernel panic:"):
                raise ParseError(SEL, "a panic record without its record id", n, line)
            messages.append(stripped)
            continue
        panic = re.match(_SEL_ID + r"\s*Linux kernel panic: (.*)$", line)
        if panic:
            entries.append({"id": int(panic.group(1), 16), "kind": "panic", "timestamp": None, "tz": None,
                            "pre_init_seconds": None, "sensor_type": None, "sensor": None, "column": None,
                            "event": "Linux kernel panic: " + panic.group(2).strip(), "asserted": True,
                            "extra": None})
            continue
        oem = re.match(_SEL_ID + r"(.*)\|\s*OEM record ([0-9a-fA-F]{2})\s*(\|.*)?$", line) or \
            re.match(_SEL_ID + r"\s*()OEM record ([0-9a-fA-F]{2})\s*(\|.*)?$", line)
        if oem:
            entries.append({"id": int(oem.group(1), 16), "kind": "oem", "timestamp": None, "tz": None,
                            "pre_init_seconds": None, "sensor_type": None, "sensor": None, "column": None,
                            "event": "OEM record %s" % oem.group(3), "asserted": True,
                            "extra": (oem.group(4) or "").strip("| ").strip() or None})
            continue
        pre = _SEL_PREINIT.match(line)
        if pre:
            entry: Dict[str, Any] = {"id": int(pre.group(1), 16), "kind": "standard", "timestamp": None,
                                     "tz": None, "pre_init_seconds": int(pre.group(2))}
            entry.update(_event_columns(pre.group(3), n, line))
            entries.append(entry)
            continue
        dated = _SEL_DATED.match(line)
        if not dated:
            raise ParseError(SEL, "expected '<id> | <date> | <time> | <sensor> | <event> | Asserted'", n, line)
        entry = {"id": int(dated.group(1), 16), "kind": "standard", "pre_init_seconds": None}
        entry.update(_date_time(dated.group(2), dated.group(3), n, line))
        entry.update(_event_columns(dated.group(4), n, line))
        entries.append(entry)
    if not entries and not any("no entries" in m.lower() for m in messages):
        raise ParseError(SEL, "no SEL entry and no 'SEL has no entries' (ipmitool printed only: %s)" %
                         "; ".join(messages))
    return {"entries": entries, "messages": messages}


# --------------------------------------------------------------------------------------------------------- sdr elist

THRESHOLD_STATES = ("cr", "nc", "nr", "lcr", "ucr", "lnc", "unc", "lnr", "unr")
SDR_STATES = ("ok", "ns") + THRESHOLD_STATES
_SDR_LINE = re.compile(r"^(.*?)\s*\|\s*([0-9A-Fa-f]{2})h\s*\|\s*([a-z]{2,3})\s*\|\s*(\d+\.\d+)\s*\|(.*)$")
_READING = re.compile(r"^(-?\d+(?:\.\d+)?)\s+(.+)$")


def parse_sdr_elist(text: str) -> Dict[str, Any]:
    """``ipmitool sdr elist`` -> {sensors, messages}. Each sensor: name, number (the sensor number), status (ok, ns,
    or a threshold state), entity (``10.2``: entity id . instance - 10 is a power supply, 29 a fan), reading (a
    number, or None), unit, states (the discrete sensor's asserted states, e.g. ["Presence detected", "Failure
    detected"]), text (the column as printed)."""
    sensors: List[Dict[str, Any]] = []
    messages: List[str] = []
    rows = content_lines(SDR, text)
    if not rows:
        raise ParseError(SDR, "empty output, expected '<name> | <NN>h | <status> | <entity> | <reading>' rows")
    for n, line, stripped in rows:
        if "|" not in stripped:
            messages.append(stripped)
            continue
        m = _SDR_LINE.match(line)
        if not m or m.group(3) not in SDR_STATES:
            raise ParseError(SDR, "expected '<name> | <NN>h | ok|ns|cr|nc|nr|... | <entity> | <reading>'", n, line)
        value = m.group(5).strip()
        reading, unit, states = None, None, []
        rm = _READING.match(value)
        if rm and "," not in value:
            reading, unit = float(rm.group(1)), rm.group(2).strip()
        elif value and value not in ("Disabled", "No Reading", "Not Readable"):
            states = [s.strip() for s in value.split(",") if s.strip()]
        sensors.append({"name": m.group(1).strip(), "number": int(m.group(2), 16), "status": m.group(3),
                        "entity": m.group(4), "reading": reading, "unit": unit, "states": states, "text": value})
    if not sensors:
        raise ParseError(SDR, "no sensor row (ipmitool printed only: %s)" % "; ".join(messages))
    return {"sensors": sensors, "messages": messages}


# --------------------------------------------------------------------------------------------------------- sensor

THRESHOLD_NAMES = ("lnr", "lcr", "lnc", "unc", "ucr", "unr")


def _num_or_na(value: str, n: int, line: str) -> Optional[float]:
    if value == "na":
        return None
    try:
        return float(value)
    except ValueError:
        raise ParseError(SENSOR, "expected a number or na, got %r" % value, n, line) from None


def parse_ipmitool_sensor(text: str) -> Dict[str, Any]:
    """``ipmitool sensor`` (``sensor list``) -> {sensors, messages}. Each sensor: name, reading (a number; None for
    ``na`` or a discrete sensor), unit, status (ok, cr, nc, nr, ns, na; a discrete sensor's state bits ``0x0080``
    as printed), discrete (bool), thresholds {lnr, lcr, lnc, unc, ucr, unr: number or None}."""
    sensors: List[Dict[str, Any]] = []
    messages: List[str] = []
    rows = content_lines(SENSOR, text)
    if not rows:
        raise ParseError(SENSOR, "empty output, expected '<name> | <reading> | <unit> | <status> | 6 thresholds'")
    for n, line, stripped in rows:
        if "|" not in stripped:
            messages.append(stripped)
            continue
        cols = [c.strip() for c in line.split("|")]
        if len(cols) != 10:
            raise ParseError(SENSOR, "expected 10 columns (name, reading, unit, status, 6 thresholds), got %d"
                             % len(cols), n, line)
        name, raw, unit, status = cols[:4]
        discrete = unit == "discrete" or raw.lower().startswith("0x")
        if discrete:
            if not re.match(r"^(0x[0-9a-fA-F]+|na)$", raw):
                raise ParseError(SENSOR, "a discrete sensor's reading should be 0xNN or na", n, line)
            reading = None
        else:
            reading = _num_or_na(raw, n, line)
            if status not in ("ok", "cr", "nc", "nr", "ns", "na"):
                raise ParseError(SENSOR, "expected a status ok|cr|nc|nr|ns|na, got %r" % status, n, line)
        sensors.append({"name": name, "reading": reading, "unit": unit or None, "status": status,
                        "discrete": discrete,
                        "thresholds": {k: _num_or_na(v, n, line)
                                       for k, v in zip(THRESHOLD_NAMES, cols[4:], strict=True)}})
    if not sensors:
        raise ParseError(SENSOR, "no sensor row (ipmitool printed only: %s)" % "; ".join(messages))
    return {"sensors": sensors, "messages": messages}
