# -*- coding: utf-8 -*-
"""Evaluate the switch stage (validate.yml --tags switches): readings vs the pod model. Pure Python.

``playbooks/validate_switches.yml`` records on localhost ``pod_stages.switches``:

    {"expected": ["sim-sw1", "sim-sw2"],
     "switches": [{"name": "sim-sw1", "platform": "eos", "structured": {...},   # switch_model.structured_config
                   "result": {...switch_validate module result...} | None, "error": "..." | None}]}

and :func:`evaluate` turns it into checks, each naming the switch and port (``host`` is ``"<switch> <port>"``
for per-port checks), what was found, what the model expects and where that expectation comes from:

- ``switch_drift``: the running config vs the model, in the deploy's managed scope;
- ``switch_port_mtu``: the port's MTU vs the model (and the cabled host's MTU + 18 bytes of headers);
- ``switch_lossless``: trust DSCP and PFC on the no-drop priority on a lossless port, and the PFC/RoCE show output;
- ``switch_port_status``: link up, at the model's speed;
- ``switch_counters``: no error, discard or PFC pause counter rising between the stage's two reads, each named by
  what it means (``counters_parse.MEANINGS``: "PFC pause frames received (...) +1000 (rxFrames)");
- ``switch_optic_<parameter>`` (EOS; NVUE on the ports that are up) per cabled port: the transceiver's DOM
  readings inside the module's own warning thresholds (``optics_eval.optics_checks``); ``switch_psu``,
  ``switch_fans``, ``switch_temperature`` (EOS) and ``switch_environment`` (NVUE) for the switch; Onyx's optics
  and environment are ``skipped`` (not read);
- ``switch_lldp``: the LLDP neighbour is the host and NIC the model cables there (a swapped cable names both
  ports and both NICs).
"""
from __future__ import annotations

import html
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (PORT_STATE, SWITCH_STATE, CheckResult,
                                                                                  Subject)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.mtu import ETHERNET_OVERHEAD, fits_port
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import optics_eval as oe
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.counters_parse import (MEANINGS, NVUE_COUNTERS,
                                                                                           ONYX_COUNTERS)

SRC_MTU = "pod model: switch port MTU (switch.ports.<p>.mtu, switch.mtu or the switch's maximum; docs/switches.md)"
SRC_LOSSLESS = ("RA lossless RoCE: trust DSCP, PFC no-drop on priority %s (REFERENCE_FACTS.md; pod model fabric "
                "roce: lossless)")
SRC_STATUS = "pod model cabling: the NIC's speed (nics[].speed), link up"
SRC_COUNTERS = "no error, discard or PFC pause counter may rise while the stage reads (idle pod)"
SRC_LLDP = "pod model cabling: nics[].switch / nics[].switch_port"
SRC_DRIFT = "pod model: the rendered config (build/<switch>/running.cfg), managed scope"
CHECKS = ("switch_drift", "switch_port_mtu", "switch_lossless", "switch_port_status", "switch_counters", "switch_lldp",
          "switch_optic_rx_power", "switch_optic_tx_power", "switch_optic_temperature", "switch_optic_tx_bias",
          "switch_optic_voltage", "switch_optics", "switch_psu", "switch_fans", "switch_temperature",
          "switch_environment")
# the switch's MTU when the running config has no mtu line on the port
DEFAULT_MTU = {"eos": 1500, "onyx": 1500, "cumulus": 9216}
# the show commands of module_utils/switch/readings.py, by what they feed
STATUS_COMMANDS = ("show interfaces status | json", "show interfaces ethernet status", "nv show interface")
LLDP_COMMANDS = ("show lldp neighbors detail | json", "show lldp interfaces ethernet remote", "nv show interface lldp")
COUNTER_COMMANDS = ("show interfaces counters errors | json", "show interfaces counters discards | json",
                    "show priority-flow-control counters | json", ONYX_COUNTERS, NVUE_COUNTERS)
# the per-port counter commands (NVUE: nv show interface <port> counters qos pfc-stats)
PORT_COUNTER_COMMAND = re.compile(r"^nv show interface \S+ counters qos pfc-stats$")
# what each platform's counters cover (the expectation says so: Onyx's PFC pause counters are not read)
COUNTERS_READ = {"eos": "errors, discards, PFC pause frames", "onyx": "errors, discards (PFC pause: not read)",
                 "cumulus": "errors, discards, overruns, PFC pause frames"}
OPTICS_COMMANDS = {"eos": "show interfaces transceiver dom thresholds | json",
                   "cumulus": "nv show interface <port> transceiver thresholds"}
# the per-port optics command (NVUE): only the ports that were up are read
PORT_OPTICS_COMMAND = re.compile(r"^nv show interface \S+ transceiver thresholds$")
ENV_COMMANDS = {"power": ("switch_psu", "show system environment power | json"),
                "cooling": ("switch_fans", "show system environment cooling | json"),
                "temperature": ("switch_temperature", "show system environment temperature | json"),
                "platform": ("switch_environment", "nv show platform environment")}
NOT_READ = {"onyx": "Onyx's transceiver diagnostics, show power/fan/temperature are not read: no public output of "
                    "them was found to build a parser on (module_utils/switch/optics_parse.py)"}


def _short(name: str) -> str:
    return (name or "").split(".")[0].strip().lower()


def _peer_of(iface: Dict[str, Any], structured: Dict[str, Any]) -> Optional[Tuple[str, Optional[str]]]:
    """(host, nic) the model cables to the port; (peer switch, None) for an inter-switch port-channel member."""
    peer = iface.get("peer") or {}
    if peer.get("host"):
        return peer["host"], peer.get("nic")
    group = (iface.get("channel_group") or {}).get("id")
    for pc in structured.get("port_channels") or []:
        if pc.get("id") == group and pc.get("peer"):
            return pc["peer"], None
    return None


def _switch_wide(name: str) -> Dict[str, Any]:
    """A check of the switch as a whole: its subject and category."""
    return {"subject": Subject(switch=name), "category": SWITCH_STATE}


def _on_port(name: str, iface: Dict[str, Any]) -> Dict[str, Any]:
    """A check of one port: the switch and port, and the node and NIC the model cables to it (none for an
    inter-switch port-channel member: its other end is a switch, not a node)."""
    peer = iface.get("peer") or {}
    return {"subject": Subject(switch=name, port=iface["name"], node=peer.get("host") or None,
                               nic=peer.get("nic") if peer.get("host") else None), "category": PORT_STATE}


def _where(host: str, nic: Optional[str]) -> str:
    return "%s %s" % (host, nic) if nic else host


def evaluate(measurements: Dict[str, Any], expectations: Dict[str, Any], context: Dict[str, Any]) -> List[CheckResult]:
    records = {r.get("name"): r for r in measurements.get("switches") or [] if isinstance(r, dict)}
    out: List[CheckResult] = []
    for name in measurements.get("expected") or sorted(records):
        if name not in records:
            out.append(CheckResult("switch_connect", name, "error",
                                   reason="%s recorded nothing: its validation task did not run (see the play "
                                          "output)" % name, **_switch_wide(name)))
    # where the model cables every (host, nic): to name the other end of a swapped cable
    cabling: Dict[Tuple[str, str], Tuple[str, str]] = {}
    for rec in records.values():
        for iface in (rec.get("structured") or {}).get("interfaces") or []:
            peer = iface.get("peer") or {}
            if peer.get("host") and peer.get("nic"):
                cabling[(_short(peer["host"]), peer["nic"])] = (rec["name"], iface["name"])
    for name in sorted(records):
        out += _switch(records[name], cabling, records)
    return out


def _switch(rec: Dict[str, Any], cabling: Dict[Tuple[str, str], Tuple[str, str]],
            records: Dict[str, Dict[str, Any]]) -> List[CheckResult]:
    name = rec["name"]
    res = rec.get("result")
    if rec.get("error") or not isinstance(res, dict):
        return [CheckResult("switch_connect", name, "error", source="inventory: switch_config_connect_host/_port",
                            reason="cannot read %s: %s" % (name, rec.get("error") or "no result"),
                            **_switch_wide(name))]
    structured = rec.get("structured") or {}
    platform = rec.get("platform") or structured.get("platform")
    errors = res.get("errors") or {}
    out: List[CheckResult] = []

    drift = res.get("drift") or {}
    cmds = drift.get("commands") or []
    out.append(CheckResult(
        "switch_drift", name, "fail" if drift.get("changed") else "pass", expected="no difference",
        measured="%d line(s) differ" % len(cmds), source=SRC_DRIFT, details={"commands": cmds},
        cause=None if not drift.get("changed") else
        "%s: the running config differs from the model: the deploy would send %s" % (
            name, "; ".join(c.strip() for c in cmds[:8]) + (" ..." if len(cmds) > 8 else "")),
        **_switch_wide(name)))

    def kind_error(check: str, commands: Tuple[str, ...]) -> Optional[CheckResult]:
        for cmd, msg in errors.items():
            if cmd in commands or (check == "switch_counters" and PORT_COUNTER_COMMAND.match(cmd)):
                return CheckResult(check, name, "error", reason="%s: %s" % (name, msg), **_switch_wide(name))
        return None

    port_cfg = res.get("port_config") or {}
    status = res.get("status")
    lldp = res.get("lldp")
    counters = res.get("counters")
    lossless = res.get("lossless")
    status_err = kind_error("switch_port_status", STATUS_COMMANDS)
    lldp_err = kind_error("switch_lldp", LLDP_COMMANDS)
    counters_err = kind_error("switch_counters", COUNTER_COMMANDS)
    if platform not in ("eos", "onyx", "cumulus"):
        return out  # InfiniBand: the drift is all there is to compare
    for e in (status_err, lldp_err, counters_err):
        if e is not None:
            out.append(e)
    if counters is None and counters_err is None:
        out.append(CheckResult("switch_counters", name, "skipped",
                               reason="%s's counters were not read" % name, **_switch_wide(name)))
    out += _environment(name, platform, res, errors)
    lossless_problems = (lossless or {}).get("problems") or []
    if platform != "eos" and lossless is not None:
        out.append(CheckResult("switch_lossless", name, "pass" if lossless.get("ok") else "fail",
                               expected="roce lossless, PFC priority %s" % (lossless.get("expected") or {}).get(
                                   "pfc_priority"), measured="; ".join(lossless_problems) or "lossless",
                               source=SRC_LOSSLESS % (lossless.get("expected") or {}).get("pfc_priority"),
                               cause="%s: %s" % (name, "; ".join(lossless_problems)) if lossless_problems else None,
                               **_switch_wide(name)))

    for iface in structured.get("interfaces") or []:
        port = iface["name"]
        host = "%s %s" % (name, port)
        peer = _peer_of(iface, structured)
        who = "%s %s (%s)" % (name, port, _where(*peer)) if peer else "%s %s" % (name, port)
        cfg = port_cfg.get(port) or {}
        about = _on_port(name, iface)
        # MTU
        if iface.get("mtu"):
            mtu = cfg.get("mtu") or DEFAULT_MTU.get(platform)
            host_mtu = (iface.get("peer") or {}).get("host_mtu")
            ok = mtu == iface["mtu"]
            cause = None
            if not ok:
                cause = "%s: MTU %s%s, model %s" % (who, mtu, "" if cfg.get("mtu") else " (no mtu line: default)",
                                                    iface["mtu"])
                if host_mtu and mtu and not fits_port(host_mtu, mtu):
                    cause += "; the host's %d-byte frames (+%d bytes of headers) do not fit" % (host_mtu,
                                                                                               ETHERNET_OVERHEAD)
            out.append(CheckResult("switch_port_mtu", host, "pass" if ok else "fail", expected=iface["mtu"],
                                   measured=mtu, unit="bytes", source=SRC_MTU, cause=cause,
                                   details={"compare": "= "}, **about))
        # lossless, per port (EOS: per-port config lines + show priority-flow-control)
        qos = iface.get("qos")
        if qos and platform == "eos":
            prio = qos.get("pfc_priority")
            missing = []
            if cfg.get("trust") != qos.get("trust"):
                missing.append("qos trust %s (has %s)" % (qos.get("trust"), cfg.get("trust") or "none"))
            if not cfg.get("pfc"):
                missing.append("priority-flow-control on")
            if prio not in (cfg.get("pfc_priorities") or []):
                missing.append("priority-flow-control priority %s no-drop" % prio)
            shown = [p for p in lossless_problems if p.split(":")[0] in (port, port.replace("Ethernet", "Et"))]
            if lossless is None and not kind_error("x", ("show priority-flow-control",)):
                shown.append("show priority-flow-control was not read")
            problems = missing + ["show priority-flow-control: %s" % p for p in shown]
            out.append(CheckResult(
                "switch_lossless", host, "fail" if problems else "pass",
                expected="trust %s, PFC on, priority %s no-drop" % (qos.get("trust"), prio),
                measured="; ".join(problems) or "trust %s, PFC on, priority %s no-drop" % (cfg.get("trust"), prio),
                source=SRC_LOSSLESS % prio,
                cause="%s: lossless RoCE settings missing: %s" % (who, "; ".join(problems)) if problems else None,
                **about))
        # status and speed
        st = (status or {}).get(port) if status is not None else None
        if status is not None:
            want = iface.get("speed")
            if st is None:
                out.append(CheckResult("switch_port_status", host, "fail", expected="up", measured="not listed",
                                       source=SRC_STATUS, cause="%s: the port is not in the switch's interface "
                                                                "status" % who, **about))
            else:
                problems = []
                if not st.get("up"):
                    problems.append("link %s" % st.get("oper"))
                elif want and st.get("speed_gbps") is not None and abs(float(st["speed_gbps"]) - float(want)) > 0.01:
                    problems.append("speed %sG, model %sG" % (_num(st["speed_gbps"]), want))
                out.append(CheckResult(
                    "switch_port_status", host, "fail" if problems else "pass",
                    expected="up%s" % (", %sG" % want if want else ""),
                    measured="%s, %sG" % (st.get("oper"), _num(st.get("speed_gbps"))), source=SRC_STATUS,
                    cause="%s: %s" % (who, ", ".join(problems)) if problems else None, **about))
        # counters
        if counters is not None and not counters_err:
            rising = rising_counters(counters.get("delta") or {}, port)
            out.append(CheckResult(
                "switch_counters", host, "fail" if rising else "pass",
                expected="no increase (%s)" % COUNTERS_READ.get(platform, "errors, discards"),
                measured=", ".join("%s +%d" % (MEANINGS[k], n) for k, n in rising) or "no increase",
                unit="in %ss" % counters.get("interval_s"), source=SRC_COUNTERS,
                cause="%s: counters rising over %ss: %s" % (who, counters.get("interval_s"), ", ".join(
                    "%s +%d (%s)" % (MEANINGS[k], n, k) for k, n in rising)) if rising else None,
                details={"rising": dict(rising)}, **about))
        # LLDP
        if lldp is not None and peer is not None and not lldp_err:
            out.append(_lldp(name, port, peer, lldp, st, cabling, records).but(**about))
    out += _optics(name, platform, structured, res, errors)
    return out


def rising_counters(delta: Dict[str, Any], port: str) -> List[Tuple[str, int]]:
    """[(raw counter, increase)] of a port's judged counters (those ``MEANINGS`` knows) that rose, over every kind
    of counter read (errors, discards, pause, NVUE's and Onyx's interface tables)."""
    out = []
    for kind in sorted(delta):
        values = (delta.get(kind) or {}).get(port) or {}
        for key in sorted(values):
            if key in MEANINGS and isinstance(values[key], int) and values[key] > 0:
                out.append((key, values[key]))
    return out


def _optics(name: str, platform: Optional[str], structured: Dict[str, Any], res: Dict[str, Any],
            errors: Dict[str, str]) -> List[CheckResult]:
    """The transceivers' DOM checks on the model's cabled ports (optics_eval.optics_checks), an ``error`` when the
    output did not parse, ``skipped`` where the platform's optics are not read."""
    cmd = OPTICS_COMMANDS.get(platform or "")
    if cmd is None:
        if platform in NOT_READ:
            return [CheckResult("switch_optics", name, "skipped", reason=NOT_READ[platform], **_switch_wide(name))]
        return []
    if cmd in errors:
        return [CheckResult("switch_optics", name, "error", reason="%s: %s" % (name, errors[cmd]),
                            **_switch_wide(name))]
    if "optics" not in res:
        return []
    out: List[CheckResult] = []
    unread = sorted(c for c in errors if PORT_OPTICS_COMMAND.match(c))
    if unread:
        out.append(CheckResult("switch_optics", name, "error", reason="%s: %s" % (name, "; ".join(
            errors[c] for c in unread)), **_switch_wide(name)))
    dom = res.get("optics") or {}
    peers = {}
    for iface in structured.get("interfaces") or []:
        peer = _peer_of(iface, structured)
        # per-port reads (NVUE) cover the ports that were up: a port that is down is the status check's
        if peer is not None and (cmd == OPTICS_COMMANDS["eos"] or iface["name"] in dom):
            peers[iface["name"]] = _where(*peer)
    return out + oe.optics_checks(name, dom, ports=list(peers), peers=peers)


def _environment(name: str, platform: Optional[str], res: Dict[str, Any], errors: Dict[str, str]) -> List[CheckResult]:
    """PSUs, fans, temperatures (EOS) or the platform environment table (NVUE), judged by optics_eval; an ``error``
    for an output that did not parse; ``skipped`` where the platform's environment is not read (Onyx)."""
    env = res.get("environment")
    if env is None:
        if platform == "onyx":
            return [CheckResult("switch_environment", name, "skipped", reason=NOT_READ["onyx"],
                                **_switch_wide(name))]
        return []
    out: List[CheckResult] = []
    for kind, reading in sorted(env.items()):
        check, cmd = ENV_COMMANDS.get(kind, ("switch_environment", kind))
        if reading is None:
            out.append(CheckResult(check, name, "error", reason="%s: %s" % (name, errors.get(cmd, "%s not read" % cmd)),
                                   **_switch_wide(name)))
        elif kind == "power":
            out += oe.power_checks(name, reading)
        elif kind == "cooling":
            out.append(oe.cooling_check(name, reading))
        elif kind == "temperature":
            out.append(oe.temperature_check(name, reading))
        elif kind == "platform":
            out.append(oe.nvue_environment_check(name, reading))
    return out


def _num(value: Any) -> str:
    if value is None:
        return "?"
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def _matches(neigh: Dict[str, str], host: str, nic: Optional[str]) -> bool:
    if _short(neigh.get("system_name", "")) != _short(host):
        return False
    return nic is None or nic in (neigh.get("port_id"), neigh.get("port_description"))


def _seen(neigh: Dict[str, str]) -> Tuple[str, str]:
    return neigh.get("system_name", "?"), neigh.get("port_id") or neigh.get("port_description") or "?"


def _lldp(name: str, port: str, peer: Tuple[str, Optional[str]], lldp: Dict[str, Any], st: Optional[Dict[str, Any]],
          cabling: Dict[Tuple[str, str], Tuple[str, str]], records: Dict[str, Dict[str, Any]]) -> CheckResult:
    host = "%s %s" % (name, port)
    want = _where(*peer)
    neighbours = lldp.get(port) or []
    if any(_matches(n, *peer) for n in neighbours):
        return CheckResult("switch_lldp", host, "pass", expected=want, measured=want, source=SRC_LLDP)
    if not neighbours:
        if st is not None and not st.get("up"):
            return CheckResult("switch_lldp", host, "skipped", expected=want, source=SRC_LLDP,
                               reason="%s %s: the link is down (see switch_port_status)" % (name, port))
        return CheckResult("switch_lldp", host, "fail", expected=want, measured="no LLDP neighbour", source=SRC_LLDP,
                           cause="%s %s: no LLDP neighbour, model: %s (is LLDP running on %s?)" % (
                               name, port, want, peer[0]))
    seen_host, seen_nic = _seen(neighbours[0])
    measured = "%s %s" % (seen_host, seen_nic)
    cause = "%s %s: LLDP neighbour %s, model: %s" % (name, port, measured, want)
    other = cabling.get((_short(seen_host), seen_nic))
    if other is not None:
        osw, oport = other
        cause += "; the model cables %s to %s %s" % (measured, osw, oport)
        back = (((records.get(osw) or {}).get("result") or {}).get("lldp") or {}).get(oport) or []
        if peer[1] is not None and any(_matches(n, *peer) for n in back):
            cause = ("cables swapped: %s %s has %s (model: %s) and %s %s has %s (model: %s)" % (
                name, port, measured, want, osw, oport, want, measured))
    return CheckResult("switch_lldp", host, "fail", expected=want, measured=measured, source=SRC_LLDP, cause=cause)


# ---------------------------------------------------------------------------------------------- report


def _port_rows(doc: Dict[str, Any]) -> List[Tuple[str, List[List[str]]]]:
    """Per switch: rows [port, peer, link, speed, MTU, PFC, LLDP neighbour, counters delta, status]."""
    data = (doc.get("measurements") or {}).get("switches") or {}
    checks: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for c in doc.get("checks") or []:
        if str(c.get("check", "")).startswith("switch_"):
            checks.setdefault((c["host"], c["check"]), []).append(c)
    out = []
    for rec in data.get("switches") or []:
        res = rec.get("result") or {}
        rows = []
        for iface in (rec.get("structured") or {}).get("interfaces") or []:
            port = iface["name"]
            peer = _peer_of(iface, rec.get("structured") or {})
            st = (res.get("status") or {}).get(port) or {}
            cfg = (res.get("port_config") or {}).get(port) or {}
            neigh = ((res.get("lldp") or {}).get(port) or [{}])[0] if (res.get("lldp") or {}).get(port) else {}
            delta = ["%s +%d" % (k, n) for k, n in rising_counters((res.get("counters") or {}).get("delta") or {},
                                                                      port)]
            bad = sorted({c["check"].replace("switch_", "") for (h, _), cs in checks.items()
                          if h == "%s %s" % (rec["name"], port) for c in cs if c["status"] in ("fail", "error")})
            rows.append([port, _where(*peer) if peer else "", str(st.get("oper", "")),
                         "%sG" % _num(st.get("speed_gbps")) if st else "", str(cfg.get("mtu") or ""),
                         ",".join(str(p) for p in cfg.get("pfc_priorities") or []) if cfg.get("pfc") else "off",
                         " ".join(_seen(neigh)) if neigh else "", ", ".join(delta) or "0",
                         "FAIL: " + ", ".join(bad) if bad else "ok"])
        out.append((rec["name"], rows))
    return out


HEADER = ["port", "model peer", "link", "speed", "MTU", "PFC", "LLDP neighbour", "counters Δ", "checks"]


def markdown(doc: Dict[str, Any]) -> List[str]:
    lines = ["", "## Switches", ""]
    for name, rows in _port_rows(doc):
        lines += ["### %s" % name, "", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
    return lines


def html_section(doc: Dict[str, Any]) -> List[str]:
    out = ["<h2>Switches</h2>"]
    for name, rows in _port_rows(doc):
        out.append("<h3>%s</h3><table><tr>%s</tr>" % (html.escape(name), "".join(
            "<th>%s</th>" % html.escape(h) for h in HEADER)))
        for r in rows:
            cls = ' class="fail"' if r[-1] != "ok" else ""
            out.append("<tr%s>%s</tr>" % (cls, "".join("<td>%s</td>" % html.escape(c) for c in r)))
        out.append("</table>")
    return out
