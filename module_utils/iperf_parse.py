# -*- coding: utf-8 -*-
"""Parse iperf3 ``-J`` (JSON) output into a compact result dict. Pure functions, no I/O.

Tested against iperf 3.1.3, 3.9, 3.12 (Debian 12) and 3.16 outputs (tests/unit/fixtures/perf/).

Result (``parse_iperf3``)::

    status            "ok" | "error"
    error             iperf3's "error" text, or why the output could not be read (None when ok)
    version           "3.12" (None when unknown)
    protocol          "TCP" | "UDP" | None
    streams_requested int | None   (-P)
    duration          seconds measured (sum_received / sum seconds)
    sent_bps          bits/s sent (TCP: sum_sent; UDP: sum)
    received_bps      bits/s received (TCP: sum_received; UDP: sum * (1 - loss))
    retransmits       int | None (TCP, Linux senders only)
    host_cpu_percent  float | None   (the side that ran the client)
    remote_cpu_percent float | None  (the server side)
    lost_percent, jitter_ms  UDP only (None for TCP)
    local, remote     "address:port" of the first connection (None if not connected)
    streams           [{socket, sent_bps, received_bps, retransmits}]
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


def _num(value: Any) -> Optional[float]:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def load_json_document(text: str) -> Any:
    """The first JSON object in ``text``: tools print warnings (fio ``fio: pid=...``) or a text report
    around the JSON. Raises ValueError when there is none."""
    if not isinstance(text, str):
        raise ValueError("output is not text")
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start:])
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
        start = text.find("{", start + 1)
    raise ValueError("no JSON object in the output" if text.strip() else "empty output")


def _empty(error: str, version: Optional[str] = None) -> Dict[str, Any]:
    return {"status": "error", "error": error, "version": version, "protocol": None, "streams_requested": None,
            "duration": None, "sent_bps": None, "received_bps": None, "retransmits": None,
            "host_cpu_percent": None, "remote_cpu_percent": None, "lost_percent": None, "jitter_ms": None,
            "local": None, "remote": None, "streams": []}


def _version(start: Dict[str, Any]) -> Optional[str]:
    text = str(start.get("version") or "")
    return text.split()[-1] if text.startswith("iperf") and text.split() else (text or None)


def parse_iperf3(output: Any) -> Dict[str, Any]:
    """Parse iperf3 -J output (text or an already-loaded dict) of a client run."""
    try:
        doc = output if isinstance(output, dict) else load_json_document(output)
    except ValueError as exc:
        return _empty("iperf3 output unreadable: %s" % exc)
    start = doc.get("start") or {}
    end = doc.get("end") or {}
    version = _version(start)
    if doc.get("error"):
        return _empty(str(doc["error"]), version)
    test = start.get("test_start") or {}
    protocol = test.get("protocol")
    res = _empty("", version)
    res.update(status="ok", error=None, protocol=protocol,
               streams_requested=int(test["num_streams"]) if "num_streams" in test else None)
    conn = (start.get("connected") or [None])[0]
    if conn:
        res["local"] = "%s:%s" % (conn.get("local_host"), conn.get("local_port"))
        res["remote"] = "%s:%s" % (conn.get("remote_host"), conn.get("remote_port"))
    cpu = end.get("cpu_utilization_percent") or {}
    res["host_cpu_percent"] = _num(cpu.get("host_total"))
    res["remote_cpu_percent"] = _num(cpu.get("remote_total"))

    if "sum_sent" in end or "sum_received" in end:  # TCP (and SCTP)
        sent = end.get("sum_sent") or {}
        recv = end.get("sum_received") or {}
        res["sent_bps"] = _num(sent.get("bits_per_second"))
        res["received_bps"] = _num(recv.get("bits_per_second"))
        res["duration"] = _num(recv.get("seconds")) or _num(sent.get("seconds"))
        rt = sent.get("retransmits")
        res["retransmits"] = int(rt) if isinstance(rt, (int, float)) else None
        streams: List[Dict[str, Any]] = []
        for s in end.get("streams") or []:
            snd = s.get("sender") or {}
            rcv = s.get("receiver") or {}
            srt = snd.get("retransmits")
            streams.append({"socket": snd.get("socket", rcv.get("socket")),
                            "sent_bps": _num(snd.get("bits_per_second")),
                            "received_bps": _num(rcv.get("bits_per_second")),
                            "retransmits": int(srt) if isinstance(srt, (int, float)) else None})
        res["streams"] = streams
    elif "sum" in end:  # UDP
        total = end["sum"]
        bps = _num(total.get("bits_per_second"))
        lost = _num(total.get("lost_percent"))
        res["sent_bps"] = bps
        res["received_bps"] = bps * (1 - (lost or 0.0) / 100.0) if bps is not None else None
        res["duration"] = _num(total.get("seconds"))
        res["lost_percent"] = lost
        res["jitter_ms"] = _num(total.get("jitter_ms"))
        res["streams"] = [{"socket": (s.get("udp") or {}).get("socket"),
                           "sent_bps": _num((s.get("udp") or {}).get("bits_per_second")),
                           "received_bps": None, "retransmits": None} for s in end.get("streams") or []]
    else:
        return _empty("iperf3 output has no end summary (test interrupted?)", version)
    if res["received_bps"] is None and res["sent_bps"] is None:
        return _empty("iperf3 output has no throughput", version)
    return res
