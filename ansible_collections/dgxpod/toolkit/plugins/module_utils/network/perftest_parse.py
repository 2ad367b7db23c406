# -*- coding: utf-8 -*-
"""Parsers for perftest's output (linux-rdma/perftest: ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``,
``ib_write_lat``, ``ib_read_lat``, ``ib_send_lat``; pure functions, stdlib only).

The formats are perftest's own, read from its source (src/perftest_parameters.h ``RESULT_FMT*``/``REPORT_FMT*``,
src/perftest_parameters.c ``ctx_print_test_info``, ``print_full_bw_report``, ``print_report_lat``,
``write_test_info_to_file``; src/perftest_communication.h ``BASIC_ADDR_FMT``/``PERF_GID_FMT``), the same from
4.x to 26.x but for the bandwidth unit (``MB/sec`` up to 25.x, ``MiB/sec`` from 26.x: the same number, bytes
divided by 0x100000) and the header lines added over the versions (Lock-free, Enhanced Reorder, CQE Poll Batch).
Real outputs: tests/unit/fixtures/fabric/ (sources in its README.md).

What a run printed, as one dict (:func:`parse_perftest`)::

    {"test": "RDMA_Write BW Test", "verb": "write", "kind": "bw", "bidirectional": False,
     "role": "server" | "client" | None, "settings": {"device": "mlx5_0", "transport_type": "IB",
     "link_type": "Ethernet", "gid_index": 3, "mtu": 4096, "number_of_qps": 1, "connection_type": "RC", ...},
     "local": [{"lid": 0, "qpn": 264, "psn": ..., "gid": "0000:...:ffff:0aff:ff05", "ipv4": "10.255.255.5"}],
     "remote": [...], "unit": "Gb/sec" | "MB/sec" | "MiB/sec" | "usec",
     "rows": [{"bytes": 65536, "iterations": 5000, "bw_peak": 392.38, "bw_average": 392.34,
               "msg_rate_mpps": 0.748336, "bw_average_gbps": 392.34, "bw_peak_gbps": 392.38}],
     "errors": [{"line_no": 7, "text": "Couldn't connect to 10.0.0.2:18515"}], "notices": [...], "ok": True}

Latency rows carry ``t_min``, ``t_max``, ``t_typical``, ``t_avg``, ``t_stdev``, ``p99``, ``p99_9`` (usec); a
duration (``-D``) latency run ``t_avg`` and ``tps_average``.

**Errors perftest reports are data, not parse errors.** A broken RDMA path ("Couldn't connect to ...",
"Failed to modify QP 1234 to RTR", "Completion with error at client", "Unable to init the socket connection")
is the measurement the stage is after: the parser returns it in ``errors`` with ``ok`` False, and the caller
reports the test as failed with perftest's own words (a row printed before the error stays in ``rows``). A
``ParseError`` means the text is not a perftest output this parser can vouch for: a table without its closing
line (cut off) and no error to explain it, a row that does not fit the table's header, garbled lines, a last line
without a newline. Free text perftest or the host prints around the table (``Conflicting CPU frequency values
detected ...``, ``WARNING: ...``, ``Disabling dynamic polling``) is kept in ``notices``.

``--out_json`` / ``--out_json_file`` (perftest 4.5-0.x and later: ``write_test_info_to_file`` and
``write_bw_report_to_file``/``write_report_lat_to_file``) is read by :func:`parse_perftest_json`; the file does
not say the unit, so the caller says whether it ran with ``--report_gbits``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, complete_lines

__all__ = ["parse_perftest", "parse_perftest_json", "to_gbps", "gid_from_perftest", "PERFTEST_ERRORS"]

TOOL = "perftest"

# bytes per "MB" in perftest's MB/sec (and MiB/sec): format_factor 0x100000 in perftest_parameters.c
# (calc_bw / print_report_bw); Gb/sec is bits / 1e9 (format_factor 125000000 bytes).
_MIB = 0x100000

# RESULT_LINE (and RESULT_LINE_PER_PORT): a line of dashes only
_DASHES = re.compile(r"^-{40,}$")
# ctx_print_test_info's first line: testsStr[verb] [atomic type] [Bidirectional] [Post List] BW|Latency
# [forwarding] [Multicast] Test
_TITLE = re.compile(r"^(?P<verb>Send_imm|Send|RDMA_Write_imm|RDMA_Write|RDMA_Read|Atomic)(?: (?P<atomic>[A-Z_]+))?"
                    r"(?P<bidir> Bidirectional)?(?P<postlist> Post List)? (?P<kind>BW|Latency)"
                    r"(?: forwarding)?(?: Multicast)? Test$")
_VERBS = {"Send": "send", "Send_imm": "send_imm", "RDMA_Write": "write", "RDMA_Write_imm": "write_imm",
          "RDMA_Read": "read", "Atomic": "atomic"}
# BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x" [READ_FMT " OUT %#04x"] [RDMA_FMT " RKey %#08x
# VAddr %#016llx"] [XRC_FMT/DC_FMT " SRQn %#08x"]
_ADDR = re.compile(r"^(?P<side>local|remote) address: LID (?P<lid>0x[0-9a-fA-F]+|\d+) QPN (?P<qpn>0x[0-9a-fA-F]+|\d+)"
                   r" PSN (?P<psn>0x[0-9a-fA-F]+|\d+)(?: OUT (?P<out>0x[0-9a-fA-F]+|\d+))?"
                   r"(?: RKey (?P<rkey>0x[0-9a-fA-F]+|\d+) VAddr (?P<vaddr>0x[0-9a-fA-F]+|\d+))?"
                   r"(?: SRQn (?P<srqn>0x[0-9a-fA-F]+|\d+))?$")
# PERF_GID_FMT " %s: %02d:...:%02d" (16 decimal bytes), "GID" or "MGID"
_GID = re.compile(r"^(?P<what>M?GID): (?P<gid>\d{1,3}(?::\d{1,3}){15})$")
# a results table header: one of RESULT_FMT* (perftest_parameters.h)
_HEADER = re.compile(r"^#bytes\s")
_COLUMNS = [
    (re.compile(r"^#bytes"), "bytes"),
    (re.compile(r"^#sl"), "sl"),
    (re.compile(r"^#iterations"), "iterations"),
    (re.compile(r"^BW peak\[(?P<unit>[^\]]+)\]"), "bw_peak"),
    (re.compile(r"^BW average\[(?P<unit>[^\]]+)\]"), "bw_average"),
    (re.compile(r"^MsgRate\[Mpps\]"), "msg_rate_mpps"),
    (re.compile(r"^BW Port(?P<port>[12])\[(?P<unit>[^\]]+)\]"), "bw_port"),
    (re.compile(r"^MsgRate Port(?P<port>[12])\[Mpps\]"), "msg_rate_port"),
    (re.compile(r"^t_min\[usec\]"), "t_min"),
    (re.compile(r"^t_max\[usec\]"), "t_max"),
    (re.compile(r"^t_typical\[usec\]"), "t_typical"),
    (re.compile(r"^t_avg\[usec\]"), "t_avg"),
    (re.compile(r"^t_stdev\[usec\]"), "t_stdev"),
    (re.compile(r"^99% percentile\[usec\]"), "p99"),
    (re.compile(r"^99\.9% percentile\[usec\]"), "p99_9"),
    (re.compile(r"^tps average"), "tps_average"),
    (re.compile(r"^CPU_Util\[%\]"), "cpu_util"),
]
_BW_UNITS = ("Gb/sec", "MB/sec", "MiB/sec")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")

# perftest's own failure messages (fprintf(stderr, ...) in src/*.c), as a line starts: the words a caller reports.
PERFTEST_ERRORS = re.compile(
    r"^(Couldn't|Could not|Unable to|Failed to|Failed status|Completion with error|Problems with|"
    r"Found Incompatibility|Please Try to use a different IP version|Parser function exited with Error|"
    r"ethernet_(?:read|write)_keys|No IB devices found|IB device \S+ not found|Error|ERROR|"
    r"Server/Client didn't|Mismatch|Unsupported|Multicast is supported|Conflicting connection|"
    r"Connection refused|Cannot|Test exited with Error|.*[Ff]ailed to complete|.*\bscnt=\d+)")
# what perftest or the host prints as a warning, never a failure of the test
_NOTICE = re.compile(r"^(WARNING|Warning|Disabling dynamic polling|Conflicting CPU frequency|Waiting for client|"
                     r"Please run the same command|Client closed connection|Local results|Remote results|"
                     r"Test with events|MultiCast runs on UD|\*+|\* Waiting for client to connect\.\.\. \*)")


def _int(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def gid_from_perftest(text: str) -> Tuple[str, Optional[str]]:
    """perftest's GID (16 decimal bytes, ``00:...:255:255:10:255:255:05``) as the kernel writes a GID
    (``0000:0000:0000:0000:0000:ffff:0aff:ff05``) and, for an IPv4-mapped (RoCEv2 IPv4) GID, the address."""
    parts = [int(p) for p in text.split(":")]
    if len(parts) != 16 or any(p > 255 for p in parts):
        raise ValueError("not a perftest GID: %r" % text)
    words = ["%02x%02x" % (parts[i], parts[i + 1]) for i in range(0, 16, 2)]
    ipv4 = ".".join(str(p) for p in parts[12:]) if parts[:10] == [0] * 10 and parts[10:12] == [255, 255] else None
    return ":".join(words), ipv4


def to_gbps(value: Optional[float], unit: str) -> Optional[float]:
    """A perftest bandwidth in Gb/s (10^9 bit/s): ``Gb/sec`` as is; ``MB/sec`` and ``MiB/sec`` are 0x100000
    bytes per second (perftest_parameters.c format_factor)."""
    if value is None:
        return None
    if unit == "Gb/sec":
        return value
    if unit in ("MB/sec", "MiB/sec"):
        return value * _MIB * 8 / 1e9
    raise ValueError("not a perftest bandwidth unit: %r" % unit)


def _key(name: str) -> str:
    """A header key as a dict key: ``Number of qps`` -> ``number_of_qps``, ``ibv_wr* API`` -> ``ibv_wr_api``."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


_SPLIT = re.compile(r"\t+(?=[A-Za-z][^:\t]*:)| {3,}(?=[A-Za-z][^:\t]*?\s*:)")


def _settings_line(s: str) -> Optional[Dict[str, str]]:
    """The ``Key : value`` pairs of one header line (two per line split by tabs, or by spaces where a copy
    turned the tabs into spaces), or None when the line is not such a line."""
    out: Dict[str, str] = {}
    for seg in _SPLIT.split(s):
        key, sep, value = seg.partition(":")
        if not sep or not key.strip() or not value.strip() or not re.match(r"^[A-Za-z][\w .*/()\-]*$", key.strip()):
            return None
        out[_key(key)] = value.strip()
    return out or None


_TYPED = {"number_of_qps": int, "tx_depth": int, "rx_depth": int, "cq_moderation": int, "gid_index": int,
          "gid_index2": int, "outstand_reads": int, "post_list": int, "mtu": int, "max_inline_data": int}


def _typed(settings: Dict[str, str]) -> Dict[str, Any]:
    """The header values with numbers as numbers: ``Mtu : 4096[B]`` -> ``mtu: 4096``; the device, transport and
    link type stay strings."""
    out: Dict[str, Any] = {}
    for k, v in settings.items():
        m = re.match(r"^(\d+)\[B\]$", v)
        if m:
            out[k] = int(m.group(1))
        elif k in _TYPED and re.match(r"^\d+$", v):
            out[k] = _TYPED[k](v)
        else:
            out[k] = v
    return out


def _columns(tool: str, n: int, line: str) -> Tuple[List[str], Optional[str]]:
    """The column names of a results header and its bandwidth unit (``usec`` for latency)."""
    rest, names, unit = line.strip(), [], None
    while rest:
        for rx, name in _COLUMNS:
            m = rx.match(rest)
            if m:
                if name in ("bw_port", "msg_rate_port"):
                    name = "%s%s" % (name, m.group("port"))
                if "unit" in rx.groupindex and m.group("unit"):
                    if m.group("unit") not in _BW_UNITS:
                        raise ParseError(tool, "unknown bandwidth unit %r" % m.group("unit"), n, line)
                    if unit and unit != m.group("unit"):
                        raise ParseError(tool, "two bandwidth units in one header", n, line)
                    unit = m.group("unit")
                names.append(name)
                rest = rest[m.end():].strip()
                break
        else:
            raise ParseError(tool, "unknown column %r in the results header" % rest.split()[0], n, line)
    if "t_avg" in names:
        unit = "usec"
    if unit is None or "bytes" not in names or "iterations" not in names:
        raise ParseError(tool, "a results header without #bytes, #iterations and a bandwidth or latency", n, line)
    return names, unit


def _row(tool: str, names: List[str], unit: str, n: int, line: str) -> Dict[str, Any]:
    """One results row against its header (a CPU-utilisation column may follow when the header names it)."""
    cells = line.split()
    if len(cells) != len(names) or not all(_NUMBER.match(c) for c in cells):
        raise ParseError(tool, "a results row that does not fit the header (%s)" % " ".join(names), n, line)
    row: Dict[str, Any] = {}
    for name, cell in zip(names, cells, strict=True):
        row[name] = int(cell) if name in ("bytes", "iterations", "sl") else float(cell)
    if unit != "usec":
        for name in ("bw_peak", "bw_average", "bw_port1", "bw_port2"):
            if name in row:
                row[name + "_gbps"] = round(to_gbps(row[name], unit), 6)
    return row


def parse_perftest(text: str) -> Dict[str, Any]:
    """A perftest run's standard output (bandwidth or latency, client or server side; stderr may be merged in:
    the error lines are read as ``errors``). See the module docstring for the value."""
    tool = TOOL
    numbered = complete_lines(tool, text)
    out: Dict[str, Any] = {"test": None, "verb": None, "kind": None, "bidirectional": False, "role": None,
                           "settings": {}, "local": [], "remote": [], "unit": None, "rows": [], "errors": [],
                           "notices": []}
    raw_settings: Dict[str, str] = {}
    names: Optional[List[str]] = None
    table_open = closed = False
    last_addr: Optional[Dict[str, Any]] = None
    for n, line in numbered:
        s = line.strip()
        if not s:
            continue
        if PERFTEST_ERRORS.match(s):
            out["errors"].append({"line_no": n, "text": s})
            continue
        if _DASHES.match(s):
            if table_open:
                table_open, closed = False, True
            continue
        if s.startswith("*") and "Waiting for client to connect" in s or "Waiting for client rdma_cm" in s:
            out["role"] = "server"
        m = _TITLE.match(s)
        if m:
            if out["test"] is not None:
                raise ParseError(tool, "a second test title (two runs in one output?)", n, line)
            out.update(test=s, verb=_VERBS[m.group("verb")], kind="bw" if m.group("kind") == "BW" else "lat",
                       bidirectional=bool(m.group("bidir")))
            continue
        if _HEADER.match(s):
            if names is not None:
                raise ParseError(tool, "a second results header", n, line)
            names, out["unit"] = _columns(tool, n, line)
            if out["kind"] and (out["unit"] == "usec") != (out["kind"] == "lat"):
                raise ParseError(tool, "a %s header under a %s test title" % (
                    "latency" if out["unit"] == "usec" else "bandwidth", out["test"]), n, line)
            table_open = True
            continue
        if names is not None and table_open and re.match(r"^\d", s):
            out["rows"].append(_row(tool, names, out["unit"], n, line))
            continue
        m = _ADDR.match(s)
        if m:
            addr = {k: _int(v) for k, v in m.groupdict().items() if k != "side" and v is not None}
            out[m.group("side")].append(addr)
            last_addr = addr
            continue
        m = _GID.match(s)
        if m and last_addr is not None and "gid" not in last_addr:
            try:
                last_addr["gid"], last_addr["ipv4"] = gid_from_perftest(m.group("gid"))
            except ValueError:
                raise ParseError(tool, "a GID byte above 255", n, line) from None
            last_addr["multicast"] = m.group("what") == "MGID"
            continue
        if _NOTICE.match(s):
            out["notices"].append(s)
            continue
        if names is None and out["test"] is not None and not out["local"]:
            pairs = _settings_line(s)
            if pairs:
                for k in pairs:
                    if k in raw_settings:
                        raise ParseError(tool, "header key %r twice" % k, n, line)
                raw_settings.update(pairs)
                continue
        if names is not None and re.match(r"^[\d.]+(\s|$)", s):
            raise ParseError(tool, "a results row after the table closed", n, line)
        # free text the host or a newer perftest prints (kept, never read as a value)
        if re.search(r"[\x00-\x08\x0e-\x1f\x7f]", s):
            raise ParseError(tool, "control characters (garbled output)", n, line)
        out["notices"].append(s)
    out["settings"] = _typed(raw_settings)
    if names is None and not out["errors"]:
        if out["test"] is None:
            raise ParseError(tool, "no perftest test title, results table or error message (is this perftest?)")
        raise ParseError(tool, "no results table and no error message (output cut off before the results?)")
    if table_open and not out["errors"]:
        raise ParseError(tool, "the results table has no closing line (output cut off?)", numbered[-1][0],
                         numbered[-1][1])
    if names is not None and not out["rows"] and not out["errors"]:
        raise ParseError(tool, "a results table without a row")
    if out["kind"] is None and out["unit"]:
        out["kind"] = "lat" if out["unit"] == "usec" else "bw"
    if out["role"] is None and out["settings"].get("tx_depth") is not None and out["kind"] == "bw" \
            and not out["bidirectional"] and out["verb"] in ("write", "read"):
        out["role"] = "client"  # ctx_print_test_info prints TX depth only on the client (or duplex)
    out["ok"] = bool(out["rows"]) and not out["errors"] and closed
    return out


_JSON_KEYS = {"MsgSize": "bytes", "n_iterations": "iterations", "BW_peak": "bw_peak", "BW_average": "bw_average",
              "MsgRate": "msg_rate_mpps", "t_min": "t_min", "t_max": "t_max", "t_typical": "t_typical",
              "t_avg": "t_avg", "t_stdev": "t_stdev", "percentile_99": "p99", "percentile_99.9": "p99_9",
              "tps_average": "tps_average", "CPU_util": "cpu_util", "bw_avg": "bw_average",
              "msgRate_avg": "msg_rate_mpps", "avg_lat": "t_avg"}


def parse_perftest_json(text: str, report_gbits: bool) -> Dict[str, Any]:
    """The file ``--out_json`` / ``--out_json_file=F`` writes: ``{"test_info": {...}, "results": {...}}``.
    ``report_gbits``: whether the run had ``--report_gbits`` (the file does not say; without it the bandwidth
    is in MB/sec). The value has the shape of :func:`parse_perftest` (one row; no addresses, no notices).
    Anything but that object (perftest's QoS report writes ``sl: 1`` unquoted, the bare ``--output`` modes a
    trailing comma: not JSON) raises ParseError."""
    tool = TOOL + " --out_json"
    body = (text or "").strip()
    if not body:
        raise ParseError(tool, "empty file (the run failed before its report?)")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ParseError(tool, "not JSON: %s" % exc) from None
    if not isinstance(data, dict) or not isinstance(data.get("test_info"), dict) \
            or not isinstance(data.get("results"), dict):
        raise ParseError(tool, "expected an object with 'test_info' and 'results' objects")
    info, res = data["test_info"], data["results"]
    test = info.get("test")
    if not isinstance(test, str):
        raise ParseError(tool, "test_info.test is missing")
    m = _TITLE.match(test.replace("_", " ").replace("RDMA Write", "RDMA_Write").replace("RDMA Read", "RDMA_Read")
                     .replace("Send imm", "Send_imm").replace("RDMA_Write imm", "RDMA_Write_imm"))
    if not m:
        raise ParseError(tool, "unknown test %r" % test)
    kind = "bw" if m.group("kind") == "BW" else "lat"
    unit = "usec" if kind == "lat" else ("Gb/sec" if report_gbits else "MB/sec")
    row: Dict[str, Any] = {}
    for k, v in res.items():
        name = _JSON_KEYS.get(k)
        if name is None:
            continue  # a newer perftest's extra key
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ParseError(tool, "results.%s is %r, expected a number" % (k, v))
        row[name] = int(v) if name in ("bytes", "iterations") else float(v)
    need = ("bw_average",) if kind == "bw" else ("t_avg",)
    if not all(k in row for k in need):
        raise ParseError(tool, "results has no %s" % " / ".join(need))
    if kind == "bw":
        for name in ("bw_peak", "bw_average"):
            if name in row:
                row[name + "_gbps"] = round(to_gbps(row[name], unit), 6)
    settings = _typed({_key(k): str(v) for k, v in info.items() if k != "test" and not isinstance(v, (dict, list))})
    return {"test": test, "verb": _VERBS[m.group("verb")], "kind": kind, "bidirectional": bool(m.group("bidir")),
            "role": None, "settings": settings, "local": [], "remote": [], "unit": unit, "rows": [row],
            "errors": [], "notices": [], "ok": True}
