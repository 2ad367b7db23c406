# -*- coding: utf-8 -*-
"""A switch's optics and environment, judged (pure): what ``switch/optics_parse.py`` read -> CheckResults.

- ``switch_optic_<parameter>`` (rx_power, tx_power, temperature, tx_bias, voltage) per port with DOM: every channel
  inside the module's own warning thresholds as the switch reports them (SFF-8636 / CMIS: the module carries its
  alarm and warning limits; EOS prints them in ``show interfaces transceiver dom thresholds``). Below the low or
  above the high *warning* fails (toolkit default: a validation wants margin, not just "no alarm"), and the cause
  says whether the alarm threshold is crossed too. Category port_state, ``Subject(switch=, port=)``.
- ``switch_psu`` per PSU (state ``ok``), ``switch_fans`` (every fan ``ok``), ``switch_temperature`` (every sensor
  ``ok`` and below its overheat threshold, the system status ``temperatureOk``), ``switch_environment`` (NVOS/NVUE:
  every fan, PSU and temperature row ``ok``). Category switch_state, ``Subject(switch=)``. The parts that are not ok
  are named in the cause and listed in ``details["parts"]``, not as ``problems``: the report's findings place a
  problem on its subject's node, and a switch's fan has none (the finding would name no host).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (PORT_STATE, SWITCH_STATE,
    CheckResult, Problem, Subject, compare)

__all__ = ["optics_checks", "power_checks", "cooling_check", "temperature_check", "nvue_environment_check",
           "SOURCE_DOM"]

SOURCE_DOM = ("the module's own DOM thresholds as the switch reports them (SFF-8636 / CMIS alarm and warning "
              "limits); failing at the warning level is a toolkit default")
SOURCE_ENV = "the switch's own status words and thresholds (EOS show system environment, NVUE/NVOS nv show platform)"
_UNITS = {"rx_power": "dBm", "tx_power": "dBm", "temperature": "C", "tx_bias": "mA", "voltage": "V"}
_WORDS = {"rx_power": "Rx power", "tx_power": "Tx power", "temperature": "temperature", "tx_bias": "Tx bias",
          "voltage": "supply voltage"}


def _judge(values: Mapping[str, float], thr: Mapping[str, Optional[float]]) -> Dict[str, Any]:
    """The worst channel against the low and high thresholds: {side, channel, value, limit, alarm}."""
    low_w, low_a = thr.get("lowWarn"), thr.get("lowAlarm")
    high_w, high_a = thr.get("highWarn"), thr.get("highAlarm")
    low_limit = low_w if low_w is not None else low_a
    high_limit = high_w if high_w is not None else high_a
    worst_low = min(values.items(), key=lambda kv: kv[1])
    worst_high = max(values.items(), key=lambda kv: kv[1])
    if low_limit is not None and worst_low[1] < low_limit:
        return {"side": "low", "channel": worst_low[0], "value": worst_low[1], "limit": low_limit,
                "warn": low_w, "alarm": low_a if low_a is not None and worst_low[1] < low_a else None}
    if high_limit is not None and worst_high[1] > high_limit:
        return {"side": "high", "channel": worst_high[0], "value": worst_high[1], "limit": high_limit,
                "warn": high_w, "alarm": high_a if high_a is not None and worst_high[1] > high_a else None}
    return {"side": None, "low": (worst_low, low_limit), "high": (worst_high, high_limit)}


def optics_checks(switch: str, dom: Mapping[str, Mapping[str, Any]], ports: Optional[Iterable[str]] = None,
                  peers: Optional[Mapping[str, str]] = None) -> List[CheckResult]:
    """``switch_optic_<parameter>`` per port and DOM parameter with thresholds. ``ports``: only these (the cabled
    ports of the model: an empty cage's or an unused port's Rx is no fault); a listed port the switch does not report
    is an ``error``. ``peers``: port -> what the model cables there, for the cause."""
    wanted = list(ports) if ports is not None else sorted(dom)
    out: List[CheckResult] = []
    for port in wanted:
        host = "%s %s" % (switch, port)
        subject = Subject(switch=switch, port=port)
        entry = dom.get(port)
        if entry is None:
            out.append(CheckResult("switch_optic_rx_power", host, "error", subject=subject, category=PORT_STATE,
                                   reason="%s does not report port %s in its DOM readings (no module, or not a "
                                          "port of this switch)" % (switch, port), source=SOURCE_DOM))
            continue
        peer = (peers or {}).get(port)
        for name, p in sorted((entry.get("params") or {}).items()):
            thr = p.get("thresholds") or {}
            if all(v is None for v in thr.values()):
                continue  # no limits to judge against (DOM without thresholds)
            v = _judge(p["channels"], thr)
            unit = p.get("unit") or _UNITS.get(name)
            check = "switch_optic_%s" % name
            details: Dict[str, Any] = {"channels": dict(p["channels"]), "thresholds": dict(thr),
                                       "media_type": entry.get("media_type")}
            if v["side"] is None:
                (ch, val), limit = v["low"] if v["low"][1] is not None else v["high"]
                how = ">=" if v["low"][1] is not None else "<="
                out.append(CheckResult(check, host, "pass", expected=limit, measured=val, unit=unit, source=SOURCE_DOM,
                                       subject=subject, category=PORT_STATE, details=dict(details, **compare(how))))
                continue
            word = _WORDS.get(name, name)
            side = "below" if v["side"] == "low" else "above"
            crossed = []
            if v["warn"] is not None:
                crossed.append("%s-warning %.2f" % (v["side"], v["warn"]))
            if v["alarm"] is not None:
                crossed.append("%s-alarm %.2f" % (v["side"], v["alarm"]))
            cause = "%s port %s%s: %s %s %.2f %s on lane %s, %s the module's %s threshold%s%s" % (
                switch, port, " (to %s)" % peer if peer else "", entry.get("media_type") or "module", word,
                v["value"], unit or "", v["channel"], side, " and ".join(crossed), "s" if len(crossed) > 1 else "",
                " (a dirty or damaged fibre, a failing optic, or the far end's Tx)" if name == "rx_power"
                and v["side"] == "low" else "")
            out.append(CheckResult(check, host, "fail", expected=v["limit"], measured=v["value"], unit=unit,
                                   source=SOURCE_DOM, cause=cause, subject=subject, category=PORT_STATE,
                                   details=dict(details, **compare(">=" if v["side"] == "low" else "<="))))
    return out


def power_checks(switch: str, power: Mapping[str, Mapping[str, Any]]) -> List[CheckResult]:
    """``switch_psu`` per PSU: its state ``ok`` (EOS: ``ok``; ``powerLoss``: no input power, ``failed``...)."""
    out = []
    for name, p in sorted(power.items()):
        ok = p.get("state") == "ok"
        bad_fans = {f: s for f, s in (p.get("fans") or {}).items() if s != "ok"}
        ok = ok and not bad_fans
        cause = None if ok else "%s PSU %s (%s): state %s%s" % (
            switch, name, p.get("model") or "?", p.get("state"),
            "; fans %s" % ", ".join("%s %s" % kv for kv in sorted(bad_fans.items())) if bad_fans else "")
        out.append(CheckResult("switch_psu", "%s PSU %s" % (switch, name), "pass" if ok else "fail", expected="ok",
                               measured=p.get("state"), source=SOURCE_ENV, cause=cause,
                               subject=Subject(switch=switch), category=SWITCH_STATE,
                               details=dict(compare("="), output_power=p.get("output_power"),
                                            capacity=p.get("capacity"))))
    return out


def cooling_check(switch: str, cooling: Mapping[str, Any]) -> CheckResult:
    """``switch_fans``: the system cooling status ``coolingOk`` and every fan (trays and PSUs) ``ok``."""
    bad = [f for f in cooling.get("fans") or [] if f.get("status") != "ok"]
    status_ok = cooling.get("system_status") == "coolingOk"
    problems = tuple(Problem("fan %s (slot %s): %s" % (f["label"], f["slot"], f["status"]), SWITCH_STATE,
                             Subject(switch=switch)) for f in bad)
    ok = status_ok and not bad
    cause = None if ok else "%s: %s%s" % (switch, "cooling status %s; " % cooling.get("system_status")
                                          if not status_ok else "",
                                          "; ".join(p.text for p in problems) or "")
    return CheckResult("switch_fans", switch, "pass" if ok else "fail", expected=0, measured=len(bad),
                       unit="fans not ok", source=SOURCE_ENV, cause=cause.rstrip("; ") if cause else None,
                       subject=Subject(switch=switch), category=SWITCH_STATE,
                       details=dict(compare("<="), parts=[p.text for p in problems],
                                    fans=len(cooling.get("fans") or []), system_status=cooling.get("system_status")))


def temperature_check(switch: str, temperature: Mapping[str, Any], check: str = "switch_temperature") -> CheckResult:
    """``switch_temperature`` (or ``switch_optic_temperature_sensors`` for the transceiver sensors): every sensor's
    hardware status ``ok``, no alerts, below its overheat threshold; the system status ``temperatureOk`` where
    the output has one."""
    problems = []
    for s in temperature.get("sensors") or []:
        why = []
        if s.get("hw_status") not in (None, "ok"):
            why.append("hardware status %s" % s["hw_status"])
        if s.get("overheat") is not None and s["current"] >= s["overheat"]:
            why.append("%.1f C at or above its overheat threshold %.1f C" % (s["current"], s["overheat"]))
        if s.get("alert_count"):
            why.append("%d alerts" % s["alert_count"])
        if s.get("in_alert"):
            why.append("in alert")
        if why:
            problems.append(Problem("%s (%s, %s): %s" % (s["name"], s.get("description") or "", s["where"],
                                                          ", ".join(why)), SWITCH_STATE, Subject(switch=switch)))
    status = temperature.get("system_status")
    status_ok = status in (None, "temperatureOk")
    ok = status_ok and not problems
    cause = None if ok else "%s: %s" % (switch, "; ".join(([("system status %s" % status)] if not status_ok else [])
                                                         + [p.text for p in problems]))
    return CheckResult(check, switch, "pass" if ok else "fail", expected=0, measured=len(problems),
                       unit="sensors not ok", source=SOURCE_ENV, cause=cause, subject=Subject(switch=switch),
                       category=SWITCH_STATE,
                       details=dict(compare("<="), parts=[p.text for p in problems],
                                    sensors=len(temperature.get("sensors") or []), system_status=status))


def nvue_environment_check(switch: str, rows: Iterable[Mapping[str, str]]) -> CheckResult:
    """``switch_environment`` from ``nv show platform environment``: every fan, PSU, temperature and voltage row
    ``ok`` (LED rows are indicators: not judged)."""
    rows = list(rows)
    judged = [r for r in rows if r.get("type") != "led"]
    bad = [r for r in judged if r.get("state") != "ok"]
    problems = tuple(Problem("%s %s: %s" % (r["type"], r["name"], r["state"]), SWITCH_STATE, Subject(switch=switch))
                     for r in bad)
    ok = not bad
    return CheckResult("switch_environment", switch, "pass" if ok else "fail", expected=0, measured=len(bad),
                       unit="sensors not ok", source=SOURCE_ENV,
                       cause=None if ok else "%s: %s" % (switch, "; ".join(p.text for p in problems)),
                       subject=Subject(switch=switch), category=SWITCH_STATE,
                       details=dict(compare("<="), parts=[p.text for p in problems], rows=len(judged)))
