# -*- coding: utf-8 -*-
"""An HCA port's counters: read (sysfs, ``perfquery [-x]``), compared over a window, and judged (pure, stdlib only).

Where they come from:

- sysfs: ``/sys/class/infiniband/<dev>/ports/<p>/counters/<name>`` (the IBTA PortCounters / PortCountersExtended the
  kernel reads from the port's PMA) and ``.../hw_counters/<name>`` (the driver's own: mlx5's RoCE and congestion
  counters). One integer per file; a device without a PMA answers ``N/A (no PMA)``. The caller reads the files and
  hands :func:`parse_sysfs_counters` a ``{name: text}`` mapping.
- ``perfquery`` / ``perfquery -x`` (infiniband-diags, rdma-core): ``Name:.....value`` lines under
  ``# Port counters: Lid L port P (CapMask: ...)`` (``-x``: ``# Port extended counters: ...``);
  :func:`parse_perfquery` gives the same sysfs names (``SymbolErrorCounter`` -> ``symbol_error``).

:func:`counter_deltas` compares two readings over ``seconds``; :func:`counter_checks` turns the deltas into
CheckResults (the hca_counters stage: network/counters_eval.py; category node_state, ``Subject(node, hca, nic)``),
one per judged counter, with the counter's meaning in words and its threshold's source (:data:`COUNTERS`). A
counter that sits at the maximum of its IBTA field (``link_downed`` 255, ``symbol_error`` 65535,
``excessive_buffer_overrun_errors`` 15, ...) no longer counts: it cannot show a rise, and its check says so instead
of passing.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, content_lines
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Subject,
    compare)

__all__ = ["COUNTERS", "IBTA_WIDTH", "PERFQUERY_NAMES", "parse_sysfs_counters", "parse_perfquery", "counter_deltas",
           "counter_checks", "saturated"]

IBTA_SPEC = "InfiniBand Architecture Specification Vol. 1, 16.1.3.5 PortCounters / 16.1.4.11 PortCountersExtended"
MLX5_DOC = ("NVIDIA, 'Understanding mlx5 Linux Counters and Status Parameters' "
            "(enterprise-support.nvidia.com/s/article/understanding-mlx5-linux-counters-and-status-parameters)")
BER_SOURCE = ("ibdiagnet BER threshold 10^-12 (NVIDIA ibdiagnet User Manual, 'Bit Error Rate (BER)': the default "
              "--ber_thresh); symbol errors allowed = port rate x window x 10^-12")
TOOLKIT_ZERO = "toolkit default: this counter does not rise on a healthy link during a validation window"

# Width in bits of each PortCounters field (IBTA Vol. 1 16.1.3.5): the counter stops at 2^w - 1 ("saturated").
IBTA_WIDTH = {"symbol_error": 16, "link_error_recovery": 8, "link_downed": 8, "port_rcv_errors": 16,
              "port_rcv_remote_physical_errors": 16, "port_rcv_switch_relay_errors": 16, "port_xmit_discards": 16,
              "port_xmit_constraint_errors": 8, "port_rcv_constraint_errors": 8, "local_link_integrity_errors": 4,
              "excessive_buffer_overrun_errors": 4, "VL15_dropped": 16, "port_xmit_wait": 32}

# perfquery's field names (libibmad's dump of PortCounters / PortCountersExtended) -> the sysfs file names.
PERFQUERY_NAMES = {
    "SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors", "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors", "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors", "VL15Dropped": "VL15_dropped",
    "PortXmitData": "port_xmit_data", "PortRcvData": "port_rcv_data", "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets", "PortXmitWait": "port_xmit_wait",
    "PortUnicastXmitPkts": "unicast_xmit_packets", "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets", "PortMulticastRcvPkts": "multicast_rcv_packets",
    "QP1Dropped": "qp1_dropped",
}

# The counters counter_checks judges: what each means (IBTA spec / NVIDIA's mlx5 counters article, in our words),
# the threshold (``max`` rises over the window, or ``ber``: a bit error rate at the port's rate) and its source;
# ``report`` counters are shown, never failed (congestion control at work is not a fault). link_downed comes before
# link_error_recovery: a link that flaps rises both, and the report names the first as the finding's root.
COUNTERS: Dict[str, Dict[str, Any]] = {
    "symbol_error": {"means": "symbol errors: invalid bit combinations received on a lane (cable, optics or "
                              "connector; after FEC on HDR/NDR)", "ber": 1e-12, "source": BER_SOURCE},
    "link_downed": {"means": "link downed: the link failed to recover and went down (a flapping link)", "max": 0,
                    "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "link_error_recovery": {"means": "link error recoveries: the link retrained after errors (a marginal cable or "
                                     "port)", "max": 0, "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "port_rcv_errors": {"means": "receive errors: malformed packets received (CRC, length, VL errors)", "max": 0,
                        "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "port_rcv_remote_physical_errors": {"means": "packets received marked bad by the sender (EBP): a physical "
                                                 "error further up the path", "max": 0,
                                        "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "port_xmit_discards": {"means": "outbound packets discarded (port down or congested beyond the switch "
                                    "lifetime limit)", "max": 0, "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "local_link_integrity_errors": {"means": "local link integrity threshold exceeded (too many physical errors "
                                             "in a short time)", "max": 0,
                                    "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    "excessive_buffer_overrun_errors": {"means": "receive buffer overruns (flow control broken: credits or PFC)",
                                        "max": 0, "source": TOOLKIT_ZERO + " (" + IBTA_SPEC + ")"},
    # RoCE (mlx5 hw_counters)
    "out_of_sequence": {"means": "out-of-sequence packets received (a packet was lost on the lossless path)",
                        "max": 0, "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "packet_seq_err": {"means": "NAK sequence errors received (the peer saw a lost packet)", "max": 0,
                       "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "local_ack_timeout_err": {"means": "ACK timeouts: the sender retransmitted after no ACK (loss or a dead path)",
                              "max": 0, "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "implied_nak_seq_err": {"means": "implied NAK sequence errors (a read response went missing)", "max": 0,
                            "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "roce_slow_restart": {"means": "RoCE slow restarts (rate restarted low after a retransmission timeout)",
                          "max": 0, "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "roce_adp_retrans": {"means": "adaptive retransmissions of RoCE traffic (loss)", "max": 0,
                         "source": TOOLKIT_ZERO + " (" + MLX5_DOC + ")"},
    "rnr_nak_retry_err": {"means": "RNR NAKs received (the receiver had no receive buffer posted; the QP retry "
                                   "limit was not exceeded): application flow control", "report": True,
                          "source": MLX5_DOC},
    "np_cnp_sent": {"means": "congestion notifications sent (ECN-marked packets received: congestion control at "
                             "work)", "report": True, "source": MLX5_DOC},
    "rp_cnp_handled": {"means": "congestion notifications handled (this HCA slowed down on the fabric's request)",
                       "report": True, "source": MLX5_DOC},
    "np_ecn_marked_roce_packets": {"means": "ECN-marked RoCE packets received", "report": True, "source": MLX5_DOC},
}

_NA = re.compile(r"^N/A(\s*\(.*\))?$")


def parse_sysfs_counters(files: Mapping[str, Optional[str]]) -> Dict[str, Optional[int]]:
    """``{name: file text}`` of a port's ``counters/`` and ``hw_counters/`` -> ``{name: int}``; a counter the
    device does not provide (``N/A (no PMA)``, or a file the caller could not read: None) is None. A name may carry
    its directory (``hw_counters/out_of_sequence``): the last path element is the name. Anything else that is not
    one decimal integer raises ParseError naming the file."""
    out: Dict[str, Optional[int]] = {}
    for raw_name, text in files.items():
        name = str(raw_name).rstrip("/").rsplit("/", 1)[-1]
        if not name:
            raise ParseError("sysfs counters", "a counter without a name (%r)" % raw_name)
        if name in out:
            raise ParseError("sysfs counters", "counter %r twice (counters/ and hw_counters/?)" % name)
        if text is None:
            out[name] = None
            continue
        value = text.strip()
        if _NA.match(value):
            out[name] = None
        elif re.match(r"^\d+$", value) and text.count("\n") <= 1:
            out[name] = int(value)
        else:
            raise ParseError("sysfs counters", "%s: expected one integer, got %r" % (raw_name, text[:60]))
    return out


_PQ_HEAD = re.compile(r"^# Port (?P<ext>extended )?counters: Lid (?P<lid>\d+) port (?P<port>\d+)"
                      r"(?: \(CapMask: (?P<cap>0x[0-9a-fA-F]+)(?: CapMask2: (?P<cap2>0x[0-9a-fA-F]+))?\))?$")
_PQ_FIELD = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*):\.*(?P<value>\S+)$")


def parse_perfquery(text: str) -> List[Dict[str, Any]]:
    """``perfquery [-x] [lid [port]]`` -> one dict per ``# Port ... counters`` block::

        {"lid": 10, "port": 1, "extended": True, "capmask": "0x5300", "counters": {"symbol_error": 0, ...},
         "other": {"PortSelect": "1", "CounterSelect": "0x0000", ...}}

    ``counters`` uses the sysfs names (:data:`PERFQUERY_NAMES`); fields not among them stay in ``other`` as printed.
    A field line before any block header is read into an implicit block (``perfquery`` without ``-v`` prints the
    header; some wrappers strip it). A line that is neither, a value that is not a number where one is expected, a
    field twice in one block, or a block without fields raises ParseError."""
    tool = "perfquery"
    blocks: List[Dict[str, Any]] = []
    cur: Optional[Dict[str, Any]] = None
    for n, line, s in content_lines(tool, text):
        m = _PQ_HEAD.match(s)
        if m:
            cur = {"lid": int(m.group("lid")), "port": int(m.group("port")), "extended": bool(m.group("ext")),
                   "capmask": m.group("cap"), "counters": {}, "other": {}, "line_no": n}
            blocks.append(cur)
            continue
        m = _PQ_FIELD.match(s)
        if not m:
            raise ParseError(tool, "expected '# Port counters: Lid L port P' or 'Name:....value'", n, line)
        if cur is None:
            cur = {"lid": None, "port": None, "extended": None, "capmask": None, "counters": {}, "other": {},
                   "line_no": n}
            blocks.append(cur)
        name, value = m.group("name"), m.group("value")
        key = PERFQUERY_NAMES.get(name)
        if key is not None:
            if not re.match(r"^\d+$", value):
                raise ParseError(tool, "%s is not a number" % name, n, line)
            if key in cur["counters"]:
                raise ParseError(tool, "%s twice in one block" % name, n, line)
            cur["counters"][key] = int(value)
        else:
            if name in cur["other"]:
                raise ParseError(tool, "%s twice in one block" % name, n, line)
            cur["other"][name] = value
    if not blocks:
        raise ParseError(tool, "no counters (empty output)")
    for b in blocks:
        if not b["counters"]:
            raise ParseError(tool, "a block without counters (output cut off after its header?)", b["line_no"])
        b.pop("line_no")
    return blocks


def saturated(name: str, value: Optional[int]) -> bool:
    """The counter sits at the top of its IBTA PortCounters field (2^width - 1): it stopped counting."""
    width = IBTA_WIDTH.get(name)
    return value is not None and width is not None and value == (1 << width) - 1


def counter_deltas(before: Mapping[str, Optional[int]], after: Mapping[str, Optional[int]],
                   seconds: float) -> Dict[str, Dict[str, Any]]:
    """What each counter did between two readings ``seconds`` apart: ``{name: {before, after, delta, per_hour,
    state}}``, ``state`` one of ``ok`` (delta is the rise), ``missing`` (not in both readings, or N/A),
    ``saturated`` (at its IBTA field's maximum in either reading: a rise cannot be seen), ``reset`` (it went down:
    cleared, or the port or driver restarted in between). ``delta``/``per_hour`` are None unless ``ok``."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
        raise ValueError("counter_deltas: the window must be a positive number of seconds, got %r" % (seconds,))
    out: Dict[str, Dict[str, Any]] = {}
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        entry: Dict[str, Any] = {"before": b, "after": a, "delta": None, "per_hour": None}
        if b is None or a is None:
            entry["state"] = "missing"
        elif saturated(name, b) or saturated(name, a):
            entry["state"] = "saturated"
        elif a < b:
            entry["state"] = "reset"
        else:
            entry.update(state="ok", delta=a - b, per_hour=round((a - b) * 3600.0 / seconds, 3))
        out[name] = entry
    return out


def _where(node: str, hca: str, nic: Optional[str]) -> str:
    return "%s %s" % (node, hca) + (" (%s)" % nic if nic else "")


def counter_checks(node: str, hca: str, nic: Optional[str], deltas: Mapping[str, Mapping[str, Any]],
                   thresholds: Optional[Mapping[str, Mapping[str, Any]]] = None, seconds: Optional[float] = None,
                   rate_gbps: Optional[float] = None) -> List[CheckResult]:
    """One CheckResult per counter of :data:`COUNTERS` (``thresholds`` overrides an entry's ``max``/``ber``/
    ``source``, e.g. from the profile's expectations), check ``hca_<counter>``:

    - the rise over the window ``<=`` the threshold -> pass, else fail naming the HCA, the counter's meaning and
      the rise (``link_downed`` rising: "a flapping link");
    - ``symbol_error`` against the BER at the port's rate (``rate_gbps`` x ``seconds`` x BER); without both, 0;
    - a report-only counter (congestion) -> pass with its rise in ``measured``;
    - not read in both readings -> skipped (the HCA does not have it: an IB HCA has no RoCE hw_counters);
      saturated or reset -> error with the reason (the rise cannot be known; clear the counters).
    """
    subject = Subject(node=node, hca=hca, nic=nic)
    where = _where(node, hca, nic)
    out: List[CheckResult] = []
    for name, spec in COUNTERS.items():
        spec = dict(spec, **dict((thresholds or {}).get(name) or {}))
        check = "hca_" + name
        d = deltas.get(name)
        common = dict(unit="rises", subject=subject, category=NODE_STATE)
        details = dict(compare("<="), counter=name, means=spec["means"])
        if d is None or d.get("state") == "missing":
            if d is None and spec.get("report"):
                continue
            out.append(CheckResult(check, where, "skipped", source=spec["source"], details=details,
                                   reason="%s is not read on %s (the HCA or its driver does not provide it)" % (
                                       name, hca), **common))
            continue
        state = d.get("state")
        if state in ("saturated", "reset"):
            why = ("%s sits at %s, the maximum of its %d-bit IBTA field: it no longer counts (clear the port's "
                   "counters, e.g. perfquery -R, to see rises)" % (name, d.get("after") if saturated(
                       name, d.get("after")) else d.get("before"), IBTA_WIDTH.get(name, 0))
                   if state == "saturated" else
                   "%s went down from %s to %s during the window: the counters were cleared or the port or driver "
                   "restarted" % (name, d.get("before"), d.get("after")))
            out.append(CheckResult(check, where, "error", source=spec["source"], reason=why, details=details,
                                   **common))
            continue
        rise = int(d["delta"])
        details["per_hour"] = d.get("per_hour")
        if spec.get("report"):
            out.append(CheckResult(check, where, "pass", measured=rise, source=spec["source"],
                                   details=dict(details, report_only=True), **common))
            continue
        if "ber" in spec and rate_gbps and seconds:
            limit = int(float(rate_gbps) * 1e9 * float(seconds) * float(spec["ber"]))
            details["ber"] = spec["ber"]
        else:
            limit = int(spec.get("max", 0))
        ok = rise <= limit
        cause = None if ok else "%s: %s rose by %d in %s (%s)%s" % (
            where, name, rise, _window(seconds), spec["means"],
            "" if limit == 0 else ", above the %d a BER of %g allows at %g Gb/s" % (limit, spec.get("ber", 0),
                                                                                  rate_gbps or 0))
        out.append(CheckResult(check, where, "pass" if ok else "fail", expected=limit, measured=rise,
                               source=spec["source"], cause=cause, details=details, **common))
    return out


def _window(seconds: Optional[float]) -> str:
    if not seconds:
        return "the window"
    return "%.0f s" % seconds if seconds < 120 else "%.1f min" % (seconds / 60.0)
