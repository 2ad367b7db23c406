# -*- coding: utf-8 -*-
"""Parse iperf3 ``-J`` (JSON) output into a compact result dict. Pure functions, no I/O.

Tested against iperf 3.1.3 (UDP), 3.9, 3.12 (Debian 12: TCP, UDP, --bidir TCP and UDP) and 3.16 outputs and
the JSON printing code of iperf_api.c at 3.10 / 3.11 / 3.17 (tests/unit/fixtures/perf/).

Contract: a readable client output gives a result dict; iperf3's own error report (its ``error`` key) gives
``status: "error"`` with that text. Output that is not a complete iperf3 JSON document (empty, cut off, no
end summary, a throughput that is not a number) raises ``ValueError`` saying what was expected - never a
result built from part of it, nor a value that is NaN/Infinity, nor one of two different reports in one output.

Result (``parse_iperf3``)::

    status            "ok" | "error"
    error             iperf3's "error" text (None when ok)
    version           "3.12" (None when unknown)
    protocol          "TCP" | "UDP" | "SCTP" | None
    streams_requested int | None   (-P)
    bidir             True for --bidir (iperf 3.7+): then ``reverse`` holds the server->client direction
    reverse_mode      True for -R (test_start "reverse", not --bidir): the server sent; sent_bps / retransmits
                      are then the server's (sum_sent), received_bps the client's
    duration          seconds measured (sum_received / sum seconds)
    sent_bps          bits/s sent (client -> server; with -R server -> client)
    received_bps      bits/s received (TCP: sum_received; UDP 3.11+: sum_received; UDP before 3.11:
                      sum * (1 - loss))
    retransmits       int | None (TCP, Linux senders only)
    host_cpu_percent  float | None   (the side that ran the client)
    remote_cpu_percent float | None  (the server side)
    lost_percent, jitter_ms  UDP only (None for TCP): measured by the receiver
    local, remote     "address:port" of the first connection (None if not connected)
    streams           [{socket, direction ("forward"|"reverse"), sent_bps, received_bps, retransmits}]
    reverse           None, or for --bidir {sent_bps, received_bps, retransmits, lost_percent, jitter_ms,
                      duration} of the server->client direction (never added to the forward numbers)
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional


def _num(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _obj(value: Any, what: str) -> Dict[str, Any]:
    """``value`` when it is an object, {} when it is absent/empty; ValueError for another type (a list, text)."""
    if not value:
        return {}
    if not isinstance(value, dict):
        raise ValueError("iperf3 output: %s is not an object (got %s)" % (what, type(value).__name__))
    return value


def _report(text: str) -> Dict[str, Any]:
    """The iperf3 report among the JSON objects of ``text``: the one with "start"/"end"/"error". iperf 3.16 -
    3.17 can print the same report twice (esnet/iperf#1688, #1716): identical copies count once; two different
    reports (two runs in one file) are refused rather than one picked."""
    docs = [d for d in load_json_documents(text) if any(k in d for k in ("start", "end", "error"))]
    if not docs:
        raise ValueError("iperf3 output: no JSON object with 'start', 'end' or 'error' (not iperf3 -J output?)")
    if any(d != docs[0] for d in docs[1:]):
        raise ValueError("iperf3 output holds %d different reports (several runs in one output?)" % len(docs))
    return docs[0]


def load_json_documents(text: str) -> List[Dict[str, Any]]:
    """Every top-level JSON object in ``text`` (fio ``--status-interval`` prints one per report), skipping the
    text tools print around them (fio ``fio: pid=...`` warnings, ``--output-format=json,normal``). A document
    that starts at the beginning of a line but does not end (output cut off) raises ValueError with its line."""
    if not isinstance(text, str):
        raise ValueError("output is not text")
    docs: List[Dict[str, Any]] = []
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        start = text.find("{", pos)
        if start == -1:
            break
        at_line_start = start == 0 or text[start - 1] == "\n"
        try:
            obj, length = decoder.raw_decode(text[start:])
        except ValueError as exc:
            if at_line_start:
                raise ValueError("the JSON document starting on line %d is cut off or malformed (%s)"
                                 % (text.count("\n", 0, start) + 1, exc)) from None
            pos = start + 1
            continue
        if isinstance(obj, dict):
            docs.append(obj)
        pos = start + length
    if not docs:
        raise ValueError("no JSON object in the output" if text.strip() else "empty output")
    return docs


def load_json_document(text: str) -> Dict[str, Any]:
    """The first JSON object in ``text`` (see ``load_json_documents``). Raises ValueError when there is none."""
    return load_json_documents(text)[0]


def _empty(error: str, version: Optional[str] = None) -> Dict[str, Any]:
    return {"status": "error", "error": error, "version": version, "protocol": None, "streams_requested": None,
            "bidir": False, "duration": None, "sent_bps": None, "received_bps": None, "retransmits": None,
            "host_cpu_percent": None, "remote_cpu_percent": None, "lost_percent": None, "jitter_ms": None,
            "local": None, "remote": None, "streams": [], "reverse": None, "reverse_mode": False}


def _version(start: Dict[str, Any]) -> Optional[str]:
    text = str(start.get("version") or "")
    return text.split()[-1] if text.startswith("iperf") and text.split() else (text or None)


def _bps(block: Any, what: str, required: bool = True) -> Optional[float]:
    """A summary block's bits_per_second; ValueError when it is required and missing or not a number."""
    value = block.get("bits_per_second") if isinstance(block, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if required or value is not None:
            raise ValueError("iperf3 output: %s has no numeric bits_per_second (got %r)" % (what, value))
        return None
    if not math.isfinite(value) or value < 0:
        raise ValueError("iperf3 output: %s bits_per_second is negative or not finite (%r)" % (what, value))
    return float(value)


def _direction(end: Dict[str, Any], suffix: str, udp: bool) -> Dict[str, Any]:
    """The numbers of one direction: suffix "" (client -> server) or "_bidir_reverse" (--bidir, server -> client)."""
    sent, recv, total = end.get("sum_sent" + suffix), end.get("sum_received" + suffix), end.get("sum" + suffix)
    d: Dict[str, Any] = {"sent_bps": None, "received_bps": None, "retransmits": None, "lost_percent": None,
                         "jitter_ms": None, "duration": None}
    if udp and recv is None:  # iperf before 3.11: one "sum" per direction, loss measured by the receiver
        if not isinstance(total, dict):
            raise ValueError("iperf3 output: UDP result without 'sum%s'" % suffix)
        bps = _bps(total, "end.sum" + suffix)
        lost = _num(total.get("lost_percent"))
        d.update(sent_bps=bps, received_bps=bps * (1 - (lost or 0.0) / 100.0), lost_percent=lost,
                 jitter_ms=_num(total.get("jitter_ms")), duration=_num(total.get("seconds")))
        return d
    if not isinstance(sent, dict) or not isinstance(recv, dict):
        raise ValueError("iperf3 output: the end summary has no 'sum_sent%s' and 'sum_received%s'" % (suffix, suffix))
    d["sent_bps"] = _bps(sent, "end.sum_sent" + suffix)
    d["received_bps"] = _bps(recv, "end.sum_received" + suffix)
    d["duration"] = _num(recv.get("seconds")) or _num(sent.get("seconds"))
    if udp:  # 3.11+: the receiver's loss and jitter are in sum_received (and in sum)
        src = recv if "lost_percent" in recv else _obj(total, "end.sum" + suffix)
        d["lost_percent"], d["jitter_ms"] = _num(src.get("lost_percent")), _num(src.get("jitter_ms"))
    else:
        rt = sent.get("retransmits")
        d["retransmits"] = int(rt) if isinstance(rt, (int, float)) and not isinstance(rt, bool) else None
    return d


def _stream_direction(s: Dict[str, Any], reverse_mode: bool) -> str:
    """'forward' when the client sent on this stream (iperf 3.7+ marks each side with "sender"; before, only
    test_start "reverse" (-R) says the server sent)."""
    for key in ("sender", "udp"):
        block = s.get(key)
        if isinstance(block, dict) and isinstance(block.get("sender"), bool):
            return "forward" if block["sender"] else "reverse"
    return "reverse" if reverse_mode else "forward"


def parse_iperf3(output: Any) -> Dict[str, Any]:
    """Parse iperf3 -J output (text or an already-loaded dict) of a client run; see the module docstring."""
    doc = output if isinstance(output, dict) else _report(output)
    start = doc.get("start") or {}
    end = doc.get("end") or {}
    if not isinstance(start, dict) or not isinstance(end, dict):
        raise ValueError("iperf3 output: 'start' and 'end' must be objects")
    version = _version(start)
    if doc.get("error"):
        res = _empty(str(doc["error"]), version)
        return res
    test = _obj(start.get("test_start"), "start.test_start")
    protocol = test.get("protocol")
    if protocol is None and isinstance(end.get("sum"), dict) and "jitter_ms" in end["sum"]:
        protocol = "UDP"  # 3.0 - 3.1 clients may leave test_start out
    if not any(k in end for k in ("sum_sent", "sum_received", "sum")):
        raise ValueError("iperf3 output has no end summary (test interrupted?)")
    udp = protocol == "UDP"
    bidir = "sum_sent_bidir_reverse" in end or "sum_received_bidir_reverse" in end or "sum_bidir_reverse" in end
    reverse_mode = bool(test.get("reverse")) and not bidir
    res = _empty("", version)
    res.update(status="ok", error=None, protocol=protocol, bidir=bidir, reverse_mode=reverse_mode,
               streams_requested=int(test["num_streams"]) if isinstance(test.get("num_streams"), int) else None)
    connected = start.get("connected") or [None]
    if not isinstance(connected, list):
        raise ValueError("iperf3 output: start.connected is not a list")
    conn = connected[0]
    if isinstance(conn, dict):
        res["local"] = "%s:%s" % (conn.get("local_host"), conn.get("local_port"))
        res["remote"] = "%s:%s" % (conn.get("remote_host"), conn.get("remote_port"))
    cpu = _obj(end.get("cpu_utilization_percent"), "end.cpu_utilization_percent")
    res["host_cpu_percent"] = _num(cpu.get("host_total"))
    res["remote_cpu_percent"] = _num(cpu.get("remote_total"))
    fwd = _direction(end, "", udp)
    res.update({k: fwd[k] for k in ("sent_bps", "received_bps", "retransmits", "lost_percent", "jitter_ms",
                                    "duration")})
    if bidir:
        res["reverse"] = _direction(end, "_bidir_reverse", udp)
    streams: List[Dict[str, Any]] = []
    for s in end.get("streams") or []:
        if not isinstance(s, dict):
            raise ValueError("iperf3 output: a stream entry of the end summary is not an object")
        if udp:
            u = _obj(s.get("udp"), "a UDP stream")
            streams.append({"socket": u.get("socket"), "direction": _stream_direction(s, reverse_mode),
                            "sent_bps": _num(u.get("bits_per_second")), "received_bps": None, "retransmits": None})
            continue
        snd = _obj(s.get("sender"), "a stream's sender")
        rcv = _obj(s.get("receiver"), "a stream's receiver")
        srt = snd.get("retransmits")
        streams.append({"socket": snd.get("socket", rcv.get("socket")), "direction": _stream_direction(s, reverse_mode),
                        "sent_bps": _num(snd.get("bits_per_second")),
                        "received_bps": _num(rcv.get("bits_per_second")),
                        "retransmits": int(srt) if isinstance(srt, (int, float)) and not isinstance(srt, bool)
                        else None})
    res["streams"] = streams
    return res
