# -*- coding: utf-8 -*-
"""The HCA port counters stage (issue 40 item 2): what every HCA port's counters did between the validation's start
and its end, judged per DGX and HCA by :func:`network.hca_counters.counter_checks` (pure).

``evaluate(recorded, expectations, context)`` reads ``pod_stages.hca_counters`` as playbooks/validate_counters.yml
records it::

    {"hosts": {host: None                                     # no reading at the end: the DGX did not answer
                     | {"start": <read> or None,               # None: the start read did not run (its play skipped)
                        "end": <read>}}}
    <read> = {"hca_counters": <library/dgx_hca_counters' hca_counters> or None, "error": str or None,
              "unreachable": bool}

Per DGX and HCA port: both readings parsed (``parse_sysfs_counters``), the window from their times, the rise of each
counter (``counter_deltas``) and one check per judged counter (``counter_checks``: ``hca_symbol_error``,
``hca_link_downed`` - a flapping link -, ``hca_port_rcv_errors``, the RoCE retransmission counters, ...; category
node_state, ``Subject(node, hca, nic)``). The thresholds come from ``expectations.hca_counters.<counter>`` (``value``
and ``source``; ``symbol_error``'s value is a bit error rate, the others a number of rises over the window), else
the defaults and sources of :data:`network.hca_counters.COUNTERS`.

A DGX without an end reading is ``no_result``; one whose read failed, or a port that cannot be compared (unreadable,
in one reading only, the clock went back) is ``error`` (check ``hca_counters``) naming why; a DGX whose start read did
not run (the end play run alone) is ``skipped`` per HCA port with the reason - never a pass.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hca_counters import (COUNTERS, counter_checks,
                                                                                         counter_deltas,
                                                                                         parse_sysfs_counters)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Subject,
                                                                                  expectation, no_result)

STAGE = "hca_counters"
CHECK = "hca_counters"  # the row of a DGX or port whose counters could not be compared
# the per-counter checks counter_checks emits, "hca_" + each name of COUNTERS (a test keeps them equal)
CHECKS = ("hca_symbol_error", "hca_link_downed", "hca_link_error_recovery", "hca_port_rcv_errors",
          "hca_port_rcv_remote_physical_errors", "hca_port_xmit_discards", "hca_local_link_integrity_errors",
          "hca_excessive_buffer_overrun_errors", "hca_out_of_sequence", "hca_packet_seq_err",
          "hca_local_ack_timeout_err", "hca_implied_nak_seq_err", "hca_roce_slow_restart", "hca_roce_adp_retrans",
          "hca_rnr_nak_retry_err", "hca_np_cnp_sent", "hca_rp_cnp_handled", "hca_np_ecn_marked_roce_packets")
NO_START = ("the counters were read only at the end: the start read (playbooks/validate_counters_start.yml, run by "
            "validate.yml before the stages) did not run, so no rise can be known - run validate.yml with the tag "
            "counters or network")

# ports/<p>/rate as the kernel prints it (drivers/infiniband/core/sysfs.c rate_show: "%d%s Gb/sec (%dX%s)",
# e.g. "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)"; ibsim's sysfs has no speed word: "(4X)")
_RATE = re.compile(r"^(?P<gbps>\d+(?:\.5)?) Gb/sec \((?P<width>\d+)X(?: (?P<speed>[A-Z0-9]+))?\)$")


def parse_port_rate(text: Optional[str]) -> Optional[float]:
    """Gb/s of a port's sysfs ``rate`` text, or None (no file, or a text not in the kernel's format: the symbol
    error check then allows none rather than guess a rate)."""
    m = _RATE.match((text or "").strip())
    return float(m.group("gbps")) if m else None


def thresholds(expectations: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """``{counter: {"max"|"ber": value, "source": ...}}`` from ``expectations.hca_counters`` (a counter without an
    entry keeps :data:`COUNTERS`' default and source). ``symbol_error`` (a BER counter) reads its value as the bit
    error rate; a report-only counter cannot be made a limit here."""
    out: Dict[str, Dict[str, Any]] = {}
    for name, spec in COUNTERS.items():
        value, source = expectation(expectations or {}, STAGE, name)
        if value is None or spec.get("report"):
            continue
        key = "ber" if "ber" in spec else "max"
        out[name] = {key: float(value) if key == "ber" else int(value), "source": source}
    return out


def _hca_label(port: Mapping[str, Any], key: str) -> str:
    """``mlx5_0`` for port 1 (a ConnectX port per device), ``mlx5_0/2`` for another port."""
    hca, num = port.get("hca") or key.split("/")[0], port.get("port")
    return hca if num in (1, None) else "%s/%s" % (hca, num)


def _error(host: str, reason: str, hca: Optional[str] = None, nic: Optional[str] = None) -> CheckResult:
    where = host if not hca else "%s %s" % (host, hca) + (" (%s)" % nic if nic else "")
    return CheckResult(CHECK, where, "error", reason=reason, subject=Subject(node=host, hca=hca, nic=nic),
                       category=NODE_STATE)


def _read_failed(host: str, read: Optional[Mapping[str, Any]], which: str) -> Optional[CheckResult]:
    """The error of a read that failed (its module's words), or None when it gave a reading."""
    if read is None:
        return None
    if read.get("unreachable"):
        return no_result(CHECK, host, Subject(node=host), NODE_STATE)
    if read.get("error") or not isinstance(read.get("hca_counters"), Mapping):
        return _error(host, "%s: the %s read of the HCA counters failed: %s" % (
            host, which, read.get("error") or "dgx_hca_counters returned no reading"))
    return None


def port_checks(host: str, key: str, start: Optional[Mapping[str, Any]], end: Mapping[str, Any],
                seconds: Optional[float], limits: Mapping[str, Mapping[str, Any]]) -> List[CheckResult]:
    """The checks of one HCA port from its start and end readings (``start`` None: the port was not read at the
    start, while the DGX was)."""
    hca, nic = _hca_label(end, key), end.get("netdev")
    if start is None:
        return [_error(host, "%s %s: in the end reading only (it was not there at the start: the device was reset "
                             "or added during the validation)" % (host, hca), hca, nic)]
    try:
        before = parse_sysfs_counters(start.get("counters") or {})
        after = parse_sysfs_counters(end.get("counters") or {})
    except ParseError as exc:
        return [_error(host, "%s %s: a counter file could not be read: %s" % (host, hca, exc), hca, nic)]
    if not before and not after:
        return [_error(host, "%s %s: no counters to read (%s)" % (host, hca, "; ".join(
            (end.get("errors") or []) + (start.get("errors") or [])) or "empty counters directories"), hca, nic)]
    rate = parse_port_rate(end.get("rate")) or parse_port_rate(start.get("rate"))
    results = counter_checks(host, hca, nic, counter_deltas(before, after, seconds), limits, seconds, rate)
    for r in results:
        r.details.update(window_s=round(seconds, 1), rate=end.get("rate"))
    return results


def judge_host(host: str, entry: Mapping[str, Any], limits: Mapping[str, Mapping[str, Any]]) -> List[CheckResult]:
    """Every check of one DGX's record entry (``{"start", "end"}``)."""
    end_read, start_read = entry.get("end"), entry.get("start")
    if end_read is None:
        return [no_result(CHECK, host, Subject(node=host), NODE_STATE)]
    failed = _read_failed(host, end_read, "end")
    if failed:
        return [failed]
    end = end_read["hca_counters"]
    ports = end.get("ports") or {}
    if not ports:
        return [_error(host, "%s: no HCA port to read (%s)" % (host, "; ".join(end.get("notes") or [])
                                                                or "no RDMA device under sysfs"))]
    if start_read is None:
        return [CheckResult(CHECK, "%s %s" % (host, _hca_label(p, k)) + (" (%s)" % p["netdev"] if p.get("netdev")
                                                                           else ""), "skipped", reason=NO_START,
                            subject=Subject(node=host, hca=_hca_label(p, k), nic=p.get("netdev")), category=NODE_STATE)
                for k, p in sorted(ports.items())]
    failed = _read_failed(host, start_read, "start")
    if failed:
        return [failed]
    start = start_read["hca_counters"]
    try:
        seconds = float(end["time"]) - float(start["time"])
    except (KeyError, TypeError, ValueError):
        return [_error(host, "%s: a reading without its time (start %r, end %r)" % (
            host, start.get("time"), end.get("time")))]
    if seconds <= 0:
        return [_error(host, "%s: the end reading is not after the start (%.1f s): the clock went back" % (
            host, seconds))]
    out: List[CheckResult] = []
    for key, port in sorted(ports.items()):
        out += port_checks(host, key, (start.get("ports") or {}).get(key), port, seconds, limits)
    for key in sorted(set(start.get("ports") or {}) - set(ports)):
        p = start["ports"][key]
        out.append(_error(host, "%s %s: read at the start, gone at the end (the device was reset or removed during "
                                "the validation)" % (host, _hca_label(p, key)), _hca_label(p, key), p.get("netdev")))
    return out


def evaluate(recorded: Dict[str, Any], expectations: Dict[str, Any], context: Any = None) -> List[CheckResult]:
    """Every HCA counter check of every DGX the stage recorded (see the module docstring)."""
    limits = thresholds(expectations or {})
    out: List[CheckResult] = []
    for host, entry in ((recorded or {}).get("hosts") or {}).items():
        if not isinstance(entry, Mapping):
            out.append(no_result(CHECK, host, Subject(node=host), NODE_STATE))
            continue
        out += judge_host(host, entry, limits)
    return out
