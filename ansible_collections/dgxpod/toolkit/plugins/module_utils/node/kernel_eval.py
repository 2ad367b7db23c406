# -*- coding: utf-8 -*-
"""Kernel-log checks of a DGX (the node stage), pure Python: the events module_utils/node/kernel_log.py read, in
a window, mapped to the node's GPUs (bus id -> index, from nvidia-smi) and HCAs (bus id -> mlx5_N and netdev),
judged with the Xid catalogue (module_utils/catalog/xid.py) into :class:`CheckResult` objects.

Checks (category ``node_state``; one pass per node and check when nothing is found):

- ``kernel_xid``: per GPU, the Xids in the catalogue's ``critical``/``error`` severities (an Xid not in the
  catalogue too, "Xid N, not in the catalogue"), a lost GPU without an Xid counted as Xid 79; NVLink Xids go to
  ``kernel_nvlink``; ``application``/``warning``/``info`` Xids and :data:`catalog.xid.BENIGN` ones are listed in
  the pass's details, not failed.
- ``kernel_nvlink``: per GPU the NVLink Xids (74, 136, 137, 144-150; a ``Nonfatal`` NVLink5 one is a warning), per
  NVSwitch the SXids (catalogued, else by the driver's Fatal/Non-fatal word).
- ``kernel_aer``: per device, any uncorrected (non-fatal or fatal) AER error fails; corrected ones fail above
  ``aer_corrected_max`` in the window.
- ``kernel_pcie_limited``: a device whose link runs narrower than it can (the kernel's "limited by ... xN");
  a speed-only limit passes with a note (the link generation drops at idle).
- ``kernel_link_flap``: per HCA port, a link that was up and went down (``Link down``, ``Port: N Link DOWN``,
  ``Cable unplugged``) in the window fails - down then up is a flap, down without up is a link that stayed down;
  a port-module error fails too. A first ``Link down`` before any ``up`` (the interface being brought up) is not one.
- ``kernel_hca_health``: mlx5 firmware health messages (health compromised, fatal error, driver in error state).

Each problem names the node, the device (GPU index and bus id, or mlx5_N/netdev and bus id), the event, how many
times, first and last, and the catalogue's recommended action as the cause. Thresholds are data
(:data:`THRESHOLDS`), overridable per pod through ``expectations.node`` (result.check.expectation).
"""
from __future__ import annotations

from datetime import datetime, UTC
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog import xid as xcat
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import bus_id, in_window
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Problem,
                                                                                  Subject, compare, expectation)

STAGE = "node"
SRC_AER = ("PCIe AER as the kernel reports it (drivers/pci/pcie/aer.c): an uncorrected error is a failed "
           "transaction; corrected errors above the threshold are a marginal link (toolkit default threshold)")
SRC_LIMITED = ("the kernel's PCIe bandwidth notice (drivers/pci/pci.c __pcie_print_link_status): a link narrower "
               "than the device can do; the speed drops at idle (nvidia-smi: the current generation falls at idle), "
               "so only the width is judged")
SRC_FLAP = ("mlx5 carrier and IB port state messages (mlx5e_update_carrier, ib_core cache.c), port module events "
            "(mlx5 events.c): a link that was up must not go down (toolkit default: one flap fails)")
SRC_HEALTH = "mlx5 firmware health (drivers/net/ethernet/mellanox/mlx5/core/health.c)"

# Thresholds (toolkit defaults; a pod overrides them in expectations.node)
THRESHOLDS: Mapping[str, Any] = {
    "kernel_aer_corrected_max": 100,   # corrected AER errors per device in the window
    "kernel_link_flaps_max": 0,        # link flaps per HCA port in the window
    "kernel_window_hours": 24,         # the window when no 'since' is given (the module/integrator applies it)
}


def _on(node: str, **subject: Any) -> Dict[str, Any]:
    return {"subject": Subject(node=node, **subject), "category": NODE_STATE}


def when_text(ev: Mapping[str, Any]) -> str:
    """An event's time as a report prints it: UTC ISO seconds, or ``boot+Ns`` when it could not be placed."""
    t = ev.get("time")
    if t is not None:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if ev.get("mono") is not None:
        return "boot+%.0fs" % ev["mono"]
    return "line %s" % ev.get("line")


def _span(events: List[Mapping[str, Any]]) -> str:
    """'3 times, first T1, last T2' (or 'once, at T')."""
    if len(events) == 1:
        return "once, at %s" % when_text(events[0])
    return "%d times, first %s, last %s" % (len(events), when_text(events[0]), when_text(events[-1]))


def gpu_map(gpus: Any) -> Dict[str, Any]:
    """``{bus id: GPU index}`` from nvidia-smi's GPUs (``[{"index": 0, "bus_id": "00000000:07:00.0"}, ...]``) or an
    already made mapping; bus ids compared through :func:`kernel_log.bus_id` (case, domain width)."""
    out: Dict[str, Any] = {}
    items = gpus.items() if isinstance(gpus, Mapping) else ((g.get("bus_id"), g.get("index")) for g in gpus or ())
    for bdf, index in items:
        key = bus_id(str(bdf)) if bdf is not None else None
        if key:
            out[key] = index
    return out


def hca_map(hcas: Any) -> Dict[str, Dict[str, Any]]:
    """``{bus id: {"hca": "mlx5_0", "netdev": "ibp12s0"}}`` from ``[{"bus_id":, "hca":, "netdev":}, ...]`` or a
    mapping of bus id to such a dict."""
    out: Dict[str, Dict[str, Any]] = {}
    items = hcas.items() if isinstance(hcas, Mapping) else ((h.get("bus_id"), h) for h in hcas or ())
    for bdf, h in items:
        key = bus_id(str(bdf)) if bdf is not None else None
        if key:
            out[key] = {"hca": h.get("hca"), "netdev": h.get("netdev")}
    return out


class _Devices:
    """Names a bus id the way a problem says it: a GPU (index), an HCA (mlx5_N, netdev) or a bare PCI device."""

    def __init__(self, node: str, gpus: Dict[str, Any], hcas: Dict[str, Dict[str, Any]]):
        self.node, self.gpus, self.hcas = node, gpus, hcas

    def subject(self, bdf: Optional[str]) -> Dict[str, Any]:
        key = bus_id(bdf or "") or ""
        if key in self.gpus:
            return {"gpu": self.gpus[key]}
        if key in self.hcas:
            h = self.hcas[key]
            return {k: v for k, v in (("hca", h.get("hca")), ("nic", h.get("netdev"))) if v}
        return {}

    def name(self, bdf: Optional[str], netdev: Optional[str] = None) -> str:
        key = bus_id(bdf or "") or (bdf or "?")
        if key in self.gpus:
            return "%s GPU %s (%s)" % (self.node, self.gpus[key], key)
        if key in self.hcas:
            h = self.hcas[key]
            parts = [p for p in (h.get("hca"), netdev or h.get("netdev")) if p]
            return "%s %s (%s)" % (self.node, "/".join(parts) or "HCA", key)
        return "%s PCI device %s%s" % (self.node, key, " (%s)" % netdev if netdev else "")


def _grouped(events: Iterable[Mapping[str, Any]], key) -> Dict[Any, List[Mapping[str, Any]]]:
    out: Dict[Any, List[Mapping[str, Any]]] = {}
    for ev in events:
        out.setdefault(key(ev), []).append(ev)
    return out


def _fail(check: str, node: str, dev: _Devices, bdf: Optional[str], text: str, cause: str, source: str,
          measured: Any, expected: Any = 0, **details: Any) -> CheckResult:
    subject = dev.subject(bdf)
    return CheckResult(check, node, "fail", expected=expected, measured=measured, source=source, cause=cause,
                       details=dict(compare("<=") if isinstance(expected, (int, float)) else {}, bus_id=bus_id(
                           bdf or "") or bdf, **details),
                       problems=(Problem(text, NODE_STATE, Subject(node=node, **subject), cause),),
                       **_on(node, **subject))


def _pass(check: str, node: str, source: str, expected: Any = 0, measured: Any = 0, **details: Any) -> CheckResult:
    return CheckResult(check, node, "pass", expected=expected, measured=measured, source=source,
                       details=dict(compare("<=") if isinstance(expected, (int, float)) and isinstance(
                           measured, (int, float)) else {}, **details), **_on(node))


# --------------------------------------------------------------------------- Xid


def xid_severity(ev: Mapping[str, Any]) -> Tuple[str, Optional[xcat.XidInfo]]:
    """(severity, catalogue entry or None) of an Xid event: the entry's severity; a ``Nonfatal`` NVLink5 Xid is
    :data:`catalog.xid.NVLINK5_NONFATAL_SEVERITY`; an Xid not in the catalogue is ``critical``."""
    info = xcat.xid_info(ev["xid"])
    if info is None:
        return xcat.CRITICAL, None
    if 144 <= info.number <= 150 and ev.get("fatal") is False:
        return xcat.NVLINK5_NONFATAL_SEVERITY, info
    return info.severity, info


def benign_reason(ev: Mapping[str, Any]) -> Optional[str]:
    """Why an event is benign (:data:`catalog.xid.BENIGN`), or None."""
    for b in xcat.BENIGN:
        if b.kind != ev.get("kind"):
            continue
        if b.xid is not None and ev.get("xid") != b.xid:
            continue
        if b.text is not None and b.text.lower() not in str(ev.get("text", "")).lower():
            continue
        return b.why
    return None


def _xid_label(number: int, info: Optional[xcat.XidInfo]) -> str:
    return "Xid %d: %s" % (number, info.meaning) if info else "Xid %d, not in the catalogue" % number


def _xid_checks(check: str, node: str, dev: _Devices, events: List[Mapping[str, Any]], nvlink: bool
                ) -> Tuple[List[CheckResult], List[str]]:
    failing: Dict[Tuple[str, int], List[Mapping[str, Any]]] = {}
    seen: List[str] = []
    for ev in events:
        sev, info = xid_severity(ev)
        if bool(info and info.nvlink) != nvlink:
            continue
        if sev in xcat.FAILING and benign_reason(ev) is None:
            failing.setdefault((ev["bus_id"], ev["xid"]), []).append(ev)
        else:
            label = "%s on %s (%s)" % (_xid_label(ev["xid"], info), dev.name(ev["bus_id"]), sev)
            if label not in seen:
                seen.append(label)
    out = []
    for (bdf, number), evs in sorted(failing.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        sev, info = xid_severity(evs[0])
        action = info.action_text if info else ("look the number up in NVIDIA's Xid catalog "
                                                "(docs.nvidia.com/deploy/xid-errors) and collect nvidia-bug-report.sh")
        links = sorted({e["link"] for e in evs if e.get("link") is not None})
        what = _xid_label(number, info) + (" on link %s" % ", ".join(map(str, links)) if links else "")
        text = "%s: %s, %s" % (dev.name(bdf), what, _span(evs))
        cause = "%s (%s): %s" % (text, sev, action)
        out.append(_fail(check, node, dev, bdf, text, cause, info.source if info else xcat.SRC_CATALOG,
                         measured=len(evs), xid=number, severity=sev, action=info.action if info else None,
                         first=when_text(evs[0]), last=when_text(evs[-1]), sample=evs[-1].get("text")))
    return out, seen


def _lost_as_xid79(events: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Xid events plus a lost GPU ('fallen off the bus' without an Xid 79 for the same bus id) as Xid 79."""
    xids = [e for e in events if e["kind"] == "xid"]
    with79 = {e["bus_id"] for e in xids if e["xid"] == 79}
    lost = [dict(e, kind="xid", xid=79) for e in events if e["kind"] == "gpu_lost" and e["bus_id"] not in with79]
    return sorted(xids + lost, key=lambda e: e.get("line") or 0)


def check_xid(node: str, dev: _Devices, events: List[Mapping[str, Any]]) -> List[CheckResult]:
    fails, seen = _xid_checks("kernel_xid", node, dev, _lost_as_xid79(events), nvlink=False)
    if fails:
        return fails
    return [_pass("kernel_xid", node, xcat.SRC_CATALOG, expected="no critical or error Xid",
                  measured="none", **({"seen": seen} if seen else {}))]


def check_nvlink(node: str, dev: _Devices, events: List[Mapping[str, Any]]) -> List[CheckResult]:
    fails, seen = _xid_checks("kernel_nvlink", node, dev, [e for e in events if e["kind"] == "xid"], nvlink=True)
    by_switch = _grouped((e for e in events if e["kind"] == "sxid"), lambda e: (e["bus_id"], e["sxid"]))
    for (bdf, number), evs in sorted(by_switch.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        info = xcat.sxid_info(number)
        fatal = any(e.get("fatal") for e in evs)
        sev = info.severity if info else (xcat.SXID_FATAL_SEVERITY if fatal else xcat.SXID_NONFATAL_SEVERITY)
        name = "%s NVSwitch %s (%s)" % (node, evs[0].get("device") or "?", bdf)
        what = "SXid %d: %s" % (number, info.meaning if info else "not in the catalogue, %s" % (
            "Fatal" if fatal else "Non-fatal"))
        links = sorted({e["link"] for e in evs if e.get("link") is not None})
        if links:
            what += " on link %s" % ", ".join(map(str, links))
        if sev not in xcat.FAILING:
            seen.append("%s on %s (%s)" % (what, name, sev))
            continue
        text = "%s: %s, %s" % (name, what, _span(evs))
        action = info.action_text if info else xcat.ACTIONS["RESET_FABRIC"]
        fails.append(CheckResult("kernel_nvlink", node, "fail", expected=0, measured=len(evs),
                                 source=info.source if info else xcat.SRC_SXID,
                                 cause="%s (%s): %s" % (text, sev, action),
                                 details=dict(compare("<="), bus_id=bdf, sxid=number, severity=sev,
                                              nvswitch=evs[0].get("device"), first=when_text(evs[0]),
                                              last=when_text(evs[-1])),
                                 problems=(Problem(text, NODE_STATE, Subject(node=node), action),), **_on(node)))
    if fails:
        return fails
    return [_pass("kernel_nvlink", node, xcat.SRC_CATALOG, expected="no NVLink Xid or SXid",
                  measured="none", **({"seen": seen} if seen else {}))]


# --------------------------------------------------------------------------- AER, PCIe width


def sources_without_detail(events: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """The root ports' 'error received from <device>' messages no 'PCIe Bus Error' detail followed (the kernel
    found no device with the error logged, or the log was cut): each still counts, for the source device."""
    out: List[Mapping[str, Any]] = []
    pending: Dict[str, Mapping[str, Any]] = {}
    for ev in sorted(events, key=lambda e: e.get("line") or 0):
        if ev["kind"] == "aer_source":
            if ev["bus_id"] in pending:
                out.append(pending[ev["bus_id"]])
            pending[ev["bus_id"]] = ev
        elif ev["kind"] == "aer" and pending:
            last = max(pending.values(), key=lambda e: e.get("line") or 0)
            pending.pop(last["bus_id"])
    out += pending.values()
    return [e for e in out if e.get("source")]


def check_aer(node: str, dev: _Devices, events: List[Mapping[str, Any]], corrected_max: int, source: str
              ) -> List[CheckResult]:
    """Per device: uncorrected errors fail; corrected ones fail above ``corrected_max``. A root port's 'error
    received from <device>' without that device's own detail lines in the window counts for that device."""
    detail = [e for e in events if e["kind"] == "aer"]
    fallback = [dict(e, kind="aer", bus_id=e["source"], errors=[], type=None) for e in sources_without_detail(events)]
    out = []
    for bdf, evs in sorted(_grouped(detail + fallback, lambda e: e["bus_id"]).items()):
        unc = [e for e in evs if e["severity"] in ("nonfatal", "fatal")]
        cor = [e for e in evs if e["severity"] == "corrected"]
        names = sorted({n for e in (unc or cor) for n in e.get("errors") or ()})
        kinds = ", ".join(names) if names else "no error names logged"
        if unc:
            fatal = any(e["severity"] == "fatal" for e in unc)
            text = "%s: %d uncorrected%s PCIe AER error(s) (%s), %s" % (dev.name(bdf), len(unc), " fatal" if fatal
                                                                       else " non-fatal", kinds, _span(unc))
            out.append(_fail("kernel_aer", node, dev, bdf, text, text + ": reseat or replace the device, check its "
                             "riser/cabling, run DCGM/field diagnostics", source, measured=len(unc),
                             severity="fatal" if fatal else "nonfatal", corrected=len(cor)))
        elif len(cor) > corrected_max:
            text = "%s: %d corrected PCIe AER errors (%s), %s, more than %d" % (dev.name(bdf), len(cor), kinds,
                                                                               _span(cor), corrected_max)
            out.append(_fail("kernel_aer", node, dev, bdf, text, text + ": a marginal PCIe link - reseat the device "
                             "and check its riser/cabling", source, measured=len(cor), expected=corrected_max,
                             severity="corrected"))
    if out:
        return out
    total = sum(1 for e in detail + fallback if e["severity"] == "corrected")
    return [_pass("kernel_aer", node, source, expected=corrected_max, measured=total,
                  note="uncorrected: none; corrected: the most on one device is compared")
            if not total else _pass("kernel_aer", node, source, expected=corrected_max,
                                    measured=max(len(v) for v in _grouped(detail + fallback,
                                                                          lambda e: e["bus_id"]).values()),
                                    note="uncorrected: none; corrected: the most on one device")]


def check_pcie_limited(node: str, dev: _Devices, events: List[Mapping[str, Any]]) -> List[CheckResult]:
    out, speed_only = [], []
    for bdf, evs in sorted(_grouped((e for e in events if e["kind"] == "pcie_limited"),
                                    lambda e: e["bus_id"]).items()):
        last = evs[-1]
        if last["width"] < last["capable_width"]:
            text = "%s: PCIe link limited to %s x%d at %s (capable of %s x%d; %.3f of %.3f Gb/s), %s" % (
                dev.name(bdf, last.get("netdev")), last["speed"], last["width"], last["limited_at"],
                last["capable_speed"], last["capable_width"], last["available_gbps"], last["capable_gbps"], _span(evs))
            out.append(_fail("kernel_pcie_limited", node, dev, bdf, text, text + ": reseat the device or its riser, "
                             "check the slot and the upstream port", SRC_LIMITED, measured="x%d" % last["width"],
                             expected="x%d" % last["capable_width"], limited_at=last["limited_at"]))
        else:
            speed_only.append("%s: %s x%d (capable of %s)" % (dev.name(bdf), last["speed"], last["width"],
                                                              last["capable_speed"]))
    if out:
        return out
    return [_pass("kernel_pcie_limited", node, SRC_LIMITED, expected="full width", measured="full width",
                  **({"speed_only": speed_only} if speed_only else {}))]


# --------------------------------------------------------------------------- HCA links


def _port_events(all_events: List[Mapping[str, Any]]) -> Dict[Tuple[str, str], List[Tuple[Mapping[str, Any], str]]]:
    """Per (bus id, port name) the link transitions in log order as (event, 'up'|'down'|'error')."""
    out: Dict[Tuple[str, str], List[Tuple[Mapping[str, Any], str]]] = {}
    for ev in all_events:
        if ev["kind"] == "link":
            out.setdefault((ev["bus_id"], ev["netdev"]), []).append((ev, ev["state"]))
        elif ev["kind"] == "ib_port":
            state = {"ACTIVE": "up", "DOWN": "down"}.get(ev["state"])
            if state:
                out.setdefault((ev["bus_id"], "%s port %d" % (ev["ibdev"], ev["port"])), []).append((ev, state))
        elif ev["kind"] == "module":
            status = ev["status"].lower()
            state = "error" if ev.get("error") or "error" in status else (
                "down" if "unplugged" in status or "disabled" in status else None)
            if state:
                out.setdefault((ev["bus_id"], "module %d" % ev["module"]), []).append((ev, state))
    return out


def check_link_flap(node: str, dev: _Devices, all_events: List[Mapping[str, Any]], window: List[Mapping[str, Any]],
                    flaps_max: int) -> List[CheckResult]:
    """A port that was up and went down in the window (read over the whole log, so the 'was up' may be older)."""
    inside = {id(e) for e in window}
    out = []
    for (bdf, port), seq in sorted(_port_events(all_events).items()):
        was_up, downs, ups_after, errors = False, [], 0, []
        for ev, state in seq:
            if state == "error":
                if id(ev) in inside:
                    errors.append(ev)
            elif state == "down":
                if (was_up or port.startswith("module")) and id(ev) in inside:
                    downs.append(ev)
                was_up = False
            else:
                if downs and id(ev) in inside:
                    ups_after += 1
                was_up = True
        if errors:
            e = errors[-1]
            text = "%s %s: port module error (%s%s), %s" % (dev.name(bdf), port, e["status"],
                                                            ", " + e["error"] if e.get("error") else "", _span(errors))
            out.append(_fail("kernel_link_flap", node, dev, bdf, text, text + ": check or replace the cable/"
                             "transceiver", SRC_FLAP, measured=len(errors), expected=0, port=port))
        stayed_down = bool(downs) and seq[-1][1] == "down"
        if len(downs) > flaps_max or stayed_down:
            what = "went down %d time(s) and came back" % len(downs) if not stayed_down else \
                "went down %d time(s) and is down at the end of the log" % len(downs)
            text = "%s %s: link %s, %s" % (dev.name(bdf), port, what, _span(downs))
            out.append(_fail("kernel_link_flap", node, dev, bdf, text, text + ": check the cable, transceiver and "
                             "switch port (a flapping link)", SRC_FLAP, measured=len(downs), expected=flaps_max,
                             port=port, stayed_down=stayed_down))
    if out:
        return out
    return [_pass("kernel_link_flap", node, SRC_FLAP, expected=flaps_max, measured=0)]


def check_hca_health(node: str, dev: _Devices, events: List[Mapping[str, Any]]) -> List[CheckResult]:
    out = []
    for bdf, evs in sorted(_grouped((e for e in events if e["kind"] == "mlx5_health"), lambda e: e["bus_id"]).items()):
        text = "%s: mlx5 firmware health: %s, %s" % (dev.name(bdf), evs[0]["text"], _span(evs))
        out.append(_fail("kernel_hca_health", node, dev, bdf, text, text + ": the HCA firmware stopped responding - "
                         "reset the HCA (mlxfwreset) or reboot; update or replace it if it recurs", SRC_HEALTH,
                         measured=len(evs), expected=0))
    return out or [_pass("kernel_hca_health", node, SRC_HEALTH, expected=0, measured=0)]


# --------------------------------------------------------------------------- entry points


def evaluate_node(node: str, parsed: Mapping[str, Any], gpus: Any = None, hcas: Any = None,
                  since: Optional[float] = None, until: Optional[float] = None,
                  thresholds: Optional[Mapping[str, Any]] = None, source: Optional[str] = None) -> List[CheckResult]:
    """Every kernel-log check of one node: ``parsed`` is :func:`kernel_log.parse_kernel_log`'s value, ``gpus`` and
    ``hcas`` what :func:`gpu_map` / :func:`hca_map` read, ``since``/``until`` the window (epoch seconds;
    events that could not be placed are kept), ``thresholds`` over :data:`THRESHOLDS`."""
    limits = dict(THRESHOLDS, **(thresholds or {}))
    dev = _Devices(node, gpu_map(gpus), hca_map(hcas))
    everything = list(parsed.get("events") or ())
    window = in_window(everything, since, until)
    aer_source = source or SRC_AER
    results = (check_xid(node, dev, window) + check_nvlink(node, dev, window)
               + check_aer(node, dev, window, int(limits["kernel_aer_corrected_max"]), aer_source)
               + check_pcie_limited(node, dev, window)
               + check_link_flap(node, dev, everything, window, int(limits["kernel_link_flaps_max"]))
               + check_hca_health(node, dev, window))
    unplaced = sum(1 for e in window if e.get("time") is None)
    for r in results:
        r.details.setdefault("window", {"since": since, "until": until, "events": len(window),
                                        "unplaced": unplaced, "unrecognised_lines": parsed.get("unrecognised")})
    return results


def evaluate(recorded: Mapping[str, Any], expectations: Mapping[str, Any], context: Any = None) -> List[CheckResult]:
    """The stage's evaluator: ``recorded = {"nodes": {host: {"status": "ok"|..., "reason": str, "kernel_log":
    <parse_kernel_log value>, "gpus": [...], "hcas": [...], "since": epoch, "until": epoch}}}``; thresholds from
    ``expectations.node`` (``kernel_aer_corrected_max``, ``kernel_link_flaps_max``). A node that recorded no kernel
    log is one ``error`` naming why."""
    thresholds, sources = {}, []
    for key, default in THRESHOLDS.items():
        value, src = expectation(dict(expectations or {}), STAGE, key, default)
        thresholds[key] = value
        if src != "toolkit default":
            sources.append("%s: %s" % (key, src))
    out: List[CheckResult] = []
    for node, entry in sorted(((recorded or {}).get("nodes") or {}).items()):
        parsed = entry.get("kernel_log") if isinstance(entry, Mapping) else None
        if not isinstance(parsed, Mapping) or entry.get("status", "ok") != "ok":
            why = (entry or {}).get("reason") if isinstance(entry, Mapping) else None
            out.append(CheckResult("kernel_log", node, "error", reason="%s: the kernel log was not read: %s" % (
                node, why or "nothing recorded"), **_on(node)))
            continue
        out += evaluate_node(node, parsed, entry.get("gpus"), entry.get("hcas"), entry.get("since"),
                             entry.get("until"), thresholds,
                             source=(SRC_AER + "; " + "; ".join(sources)) if sources else None)
    return out
