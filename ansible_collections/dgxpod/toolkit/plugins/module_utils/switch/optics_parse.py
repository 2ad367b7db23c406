# -*- coding: utf-8 -*-
"""Parsers for a switch's optics (DOM) and environment (PSUs, fans, temperatures) outputs (pure, stdlib only).

- Arista EOS (``| json``): ``show interfaces transceiver dom thresholds`` (per port and parameter: the channel
  readings and the module's own alarm/warning thresholds), ``show system environment power``, ``show system
  environment cooling``, ``show system environment temperature`` and ``... temperature transceiver`` (``show
  environment ...`` on older EOS prints the same JSON).
- NVIDIA NVOS / Cumulus NVUE: ``nv show platform environment`` (the Name / Type / State table); Cumulus NVUE
  (5.11+) ``nv show interface <port> transceiver thresholds`` (per parameter and channel: the value and the module's
  alarm/warning thresholds), read into the same shape as EOS's DOM.

Every parser returns the value or raises ``ValueError`` naming the command and what was wrong (a CLI error line,
JSON that does not parse or lacks its key, a reading that is not a number) - never a half-read value. Port names
are EOS's (``Ethernet1/1``), as switch/show_parse.py keeps them. Real outputs: tests/unit/fixtures/fabric/README.md.
NVIDIA Onyx's text ``show interfaces ethernet ... transceiver diagnostics`` / ``show power`` / ``show fan`` /
``show temperature`` are not read here: no public output of them was found to build a parser on.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.show_parse import eos_json

__all__ = ["eos_dom_thresholds", "eos_environment_power", "eos_environment_cooling", "eos_environment_temperature",
           "nvue_platform_environment", "nvue_transceiver_thresholds", "NVUE_TRANSCEIVER", "DOM_PARAMETERS"]

# EOS's DOM parameter names -> ours
DOM_PARAMETERS = {"rxPower": "rx_power", "txPower": "tx_power", "temperature": "temperature", "txBias": "tx_bias",
                  "voltage": "voltage"}
_THRESHOLDS = ("lowAlarm", "lowWarn", "highWarn", "highAlarm")


def _json(command: str, text: str, key: str) -> Dict[str, Any]:
    """The JSON object of an EOS ``| json`` output (a CLI error line refused, a trailing prompt allowed), which must
    hold ``key``."""
    body = (text or "").strip()
    first = body.splitlines()[0].strip() if body else "(empty output)"
    if re.match(r"^(%\s*\S|Error:)", first):
        raise ValueError("%s: the switch answered with an error: %r" % (command, first[:120]))
    return eos_json(command, body, key)


def _num(command: str, where: str, value: Any, allow_none: bool = False) -> Optional[float]:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s: %s is %r, expected a number" % (command, where, value))
    return float(value)


def eos_dom_thresholds(text: str) -> Dict[str, Dict[str, Any]]:
    """``show interfaces transceiver dom thresholds | json`` -> ``{port: {"media_type", "serial", "params":
    {"rx_power": {"unit": "dBm", "channels": {"1": -2.6, ...}, "thresholds": {"lowAlarm": -12.5, "lowWarn": -9.5,
    "highWarn": None, "highAlarm": None}}, ...}}}``; a port without ``parameters`` (no DOM, or no module) has
    ``params`` {}. A channel ``-`` is a module-wide reading (temperature, voltage). Unknown parameters are kept under
    their EOS name."""
    cmd = "show interfaces transceiver dom thresholds | json"
    data = _json(cmd, text, "interfaces")
    ports = data["interfaces"] or {}
    if not isinstance(ports, dict):
        raise ValueError("%s: 'interfaces' is a %s, expected an object keyed by port" % (cmd, type(ports).__name__))
    out: Dict[str, Dict[str, Any]] = {}
    for port, entry in ports.items():
        if not isinstance(entry, dict):
            raise ValueError("%s: %s is not an object" % (cmd, port))
        params: Dict[str, Any] = {}
        for name, p in (entry.get("parameters") or {}).items():
            if not isinstance(p, dict) or not isinstance(p.get("channels"), dict) or not p["channels"]:
                raise ValueError("%s: %s %s has no channels" % (cmd, port, name))
            where = "%s %s" % (port, name)
            channels = {str(ch): _num(cmd, "%s channel %s" % (where, ch), v) for ch, v in p["channels"].items()}
            thr = p.get("threshold") or {}
            if not isinstance(thr, dict):
                raise ValueError("%s: %s threshold is not an object" % (cmd, where))
            thresholds = {k: _num(cmd, "%s %s" % (where, k), thr.get(k), allow_none=True) for k in _THRESHOLDS}
            params[DOM_PARAMETERS.get(name, name)] = {"unit": p.get("unit"), "channels": channels,
                                                      "thresholds": thresholds}
        out[str(port)] = {"media_type": entry.get("mediaType"), "serial": entry.get("vendorSn"), "params": params}
    return out


def eos_environment_power(text: str) -> Dict[str, Dict[str, Any]]:
    """``show system environment power | json`` -> ``{psu: {"state" ("ok", "powerLoss", ...), "model",
    "output_power", "capacity", "fans": {name: status}, "temp_sensors": {name: status}}}``."""
    cmd = "show system environment power | json"
    data = _json(cmd, text, "powerSupplies")
    psus = data["powerSupplies"] or {}
    if not isinstance(psus, dict):
        raise ValueError("%s: 'powerSupplies' is not an object keyed by PSU" % cmd)
    out: Dict[str, Dict[str, Any]] = {}
    for name, p in psus.items():
        if not isinstance(p, dict) or not isinstance(p.get("state"), str):
            raise ValueError("%s: PSU %s has no state" % (cmd, name))
        out[str(name)] = {"state": p["state"], "model": p.get("modelName"),
                          "output_power": _num(cmd, "PSU %s outputPower" % name, p.get("outputPower"), True),
                          "capacity": _num(cmd, "PSU %s capacity" % name, p.get("capacity"), True),
                          "fans": {str(k): (v or {}).get("status") for k, v in (p.get("fans") or {}).items()},
                          "temp_sensors": {str(k): (v or {}).get("status")
                                           for k, v in (p.get("tempSensors") or {}).items()}}
    return out


def eos_environment_cooling(text: str) -> Dict[str, Any]:
    """``show system environment cooling | json`` -> ``{"system_status" ("coolingOk", ...), "ambient",
    "fans": [{"slot": "1" | "PowerSupply1", "label": "1/1", "status", "actual_speed", "configured_speed"}]}``
    (the fan trays' fans and the PSUs' fans alike)."""
    cmd = "show system environment cooling | json"
    data = _json(cmd, text, "systemStatus")
    fans: List[Dict[str, Any]] = []
    for group in ("fanTraySlots", "powerSupplySlots"):
        slots = data.get(group) or []
        if not isinstance(slots, list):
            raise ValueError("%s: %r is not a list" % (cmd, group))
        for slot in slots:
            for fan in (slot or {}).get("fans") or []:
                if not isinstance(fan, dict) or "status" not in fan or "label" not in fan:
                    raise ValueError("%s: a fan of slot %s has no label or status" % (cmd, (slot or {}).get("label")))
                fans.append({"slot": str(slot.get("label")), "label": str(fan["label"]), "status": fan["status"],
                             "tray_status": slot.get("status"),
                             "actual_speed": _num(cmd, "fan %s actualSpeed" % fan["label"], fan.get("actualSpeed"),
                                                  True),
                             "configured_speed": _num(cmd, "fan %s configuredSpeed" % fan["label"],
                                                      fan.get("configuredSpeed"), True)})
    return {"system_status": data["systemStatus"], "ambient": data.get("ambientTemperature"), "fans": fans}


def _sensor(cmd: str, s: Any, where: str) -> Dict[str, Any]:
    if not isinstance(s, dict) or "name" not in s:
        raise ValueError("%s: a sensor of %s has no name" % (cmd, where))
    name = str(s["name"])
    return {"name": name, "description": s.get("description"), "where": where,
            "current": _num(cmd, "%s currentTemperature" % name, s.get("currentTemperature")),
            "overheat": _num(cmd, "%s overheatThreshold" % name, s.get("overheatThreshold"), True),
            "critical": _num(cmd, "%s criticalThreshold" % name, s.get("criticalThreshold"), True),
            "hw_status": s.get("hwStatus"), "alert_count": s.get("alertCount"), "in_alert": s.get("inAlertState")}


def eos_environment_temperature(text: str) -> Dict[str, Any]:
    """``show system environment temperature | json`` (and ``... temperature transceiver``, whose output has no
    ``systemStatus``) -> ``{"system_status": "temperatureOk" | None, "sensors": [{"name", "description", "where"
    ("system", "PowerSupply 1", "Linecard 3", ...), "current", "overheat", "critical", "hw_status", "alert_count",
    "in_alert"}]}``."""
    cmd = "show system environment temperature | json"
    data = _json(cmd, text, "tempSensors")
    sensors = [_sensor(cmd, s, "system") for s in data.get("tempSensors") or []]
    for group in ("powerSupplySlots", "cardSlots"):
        for slot in data.get(group) or []:
            where = "%s %s" % ((slot or {}).get("entPhysicalClass") or group, (slot or {}).get("relPos"))
            sensors.extend(_sensor(cmd, s, where) for s in (slot or {}).get("tempSensors") or [])
    return {"system_status": data.get("systemStatus"), "sensors": sensors}


def nvue_platform_environment(text: str) -> List[Dict[str, str]]:
    """``nv show platform environment`` (NVOS / Cumulus NVUE text table ``Name  Type  State``) -> ``[{"name",
    "type" ("fan", "temperature", "voltage", "led", "psu"...), "state"}]``. The header and its dashes line are
    required (they give the columns); a row with another number of columns raises ValueError."""
    cmd = "nv show platform environment"
    lines = [ln.rstrip() for ln in (text or "").splitlines()]
    for ln in lines:
        if re.match(r"^\s*(%\s*\S|Error:)", ln):
            raise ValueError("%s: the switch answered with an error: %r" % (cmd, ln.strip()[:120]))
    try:
        h = next(i for i, ln in enumerate(lines) if re.match(r"^Name\s+Type\s+State\s*$", ln))
    except StopIteration:
        raise ValueError("%s: no 'Name Type State' header" % cmd) from None
    if h + 1 >= len(lines) or not re.match(r"^-+\s+-+\s+-+$", lines[h + 1]):
        raise ValueError("%s: the header has no dashes line under it" % cmd)
    out: List[Dict[str, str]] = []
    for ln in lines[h + 2:]:
        if not ln.strip() or re.match(r"^[\w.@:~()/\-]+(?: \[[^\]\n]*\])? ?[#>$]$", ln.strip()):
            continue
        cells = ln.split()
        if len(cells) != 3:
            raise ValueError("%s: a row that is not 'name type state': %r" % (cmd, ln.strip()[:120]))
        out.append({"name": cells[0], "type": cells[1], "state": cells[2]})
    if not out:
        raise ValueError("%s: a table without rows" % cmd)
    if text and not text.endswith("\n"):
        raise ValueError("%s: the last line has no newline (output cut off?)" % cmd)
    return out


NVUE_TRANSCEIVER = "nv show interface %s transceiver thresholds"
# NVUE's parameter names -> ours, with the unit each row must carry
_NVUE_PARAMS = {"temperature": ("temperature", "C"), "voltage": ("voltage", "V"), "rx-power": ("rx_power", "dBm"),
                "tx-power": ("tx_power", "dBm"), "tx-bias-current": ("tx_bias", "mA")}
_NUM = r"-?\d+(?:\.\d+)?"
_NVUE_ROW = re.compile(r"^(?P<param>[a-z][a-z-]*)?\s+(?P<ch>-|\d+)\s+" + r"\s+".join(
    r"(?P<%s>%s)\s+(?P<%s_u>[A-Za-z]+)" % (k, _NUM, k) for k in ("value", "highAlarm", "highWarn", "lowWarn",
                                                                  "lowAlarm")) + r"(?:\s+(?P<alt>\S.*?))?\s*$")


def nvue_transceiver_thresholds(text: str, port: str = "<port>") -> Dict[str, Any]:
    """``nv show interface <port> transceiver thresholds`` -> ``{"media_type": None, "serial": None, "params":
    {"rx_power": {"unit": "dBm", "channels": {"1": -0.64, ...}, "thresholds": {"lowAlarm", "lowWarn", "highWarn",
    "highAlarm"}}, "temperature": {"unit": "C", "channels": {"-": 42.74}, ...}, ...}}`` (eos_dom_thresholds' shape, so
    optics_eval judges both alike). A row continues the parameter above when its first column is empty. A row that is
    not "parameter channel value unit and four thresholds with units", a unit that is not the parameter's, an unknown
    parameter or a table without rows raises ValueError."""
    cmd = NVUE_TRANSCEIVER % port
    lines = [ln.rstrip() for ln in (text or "").splitlines()]
    for ln in lines:
        if re.match(r"^\s*(%\s*\S|Error:)", ln):
            raise ValueError("%s: the switch answered with an error: %r" % (cmd, ln.strip()[:120]))
    try:
        rule = next(i for i, ln in enumerate(lines) if re.match(r"^-{20,}$", ln.strip()))
    except StopIteration:
        raise ValueError("%s: no dashes line under the 'Ch Value High Alarm ...' header" % cmd) from None
    if not any(re.search(r"\bCh\s+Value\s+High Alarm", ln) for ln in lines[:rule]):
        raise ValueError("%s: no 'Ch  Value  High Alarm ...' header" % cmd)
    params: Dict[str, Any] = {}
    current: Optional[str] = None
    for ln in lines[rule + 1:]:
        if not ln.strip() or re.match(r"^[\w.@:~()/\-]+(?: \[[^\]\n]*\])? ?[#>$]$", ln.strip()):
            continue
        m = _NVUE_ROW.match(ln)
        if not m:
            raise ValueError("%s: cannot read the row %r (expected: parameter, channel, value and four thresholds "
                             "with units)" % (cmd, ln.strip()[:120]))
        if m.group("param"):
            current = m.group("param")
        if current is None:
            raise ValueError("%s: a channel row before any parameter: %r" % (cmd, ln.strip()[:120]))
        if current not in _NVUE_PARAMS:
            raise ValueError("%s: unknown parameter %r" % (cmd, current))
        name, unit = _NVUE_PARAMS[current]
        units = {m.group(k + "_u") for k in ("value", "highAlarm", "highWarn", "lowWarn", "lowAlarm")}
        if units != {unit}:
            raise ValueError("%s: %s channel %s has units %s, expected %s" % (cmd, current, m.group("ch"),
                                                                              "/".join(sorted(units)), unit))
        entry = params.setdefault(name, {"unit": unit, "channels": {}, "thresholds": {
            k: float(m.group(k)) for k in _THRESHOLDS}})
        if m.group("ch") in entry["channels"]:
            raise ValueError("%s: %s channel %s twice" % (cmd, current, m.group("ch")))
        entry["channels"][m.group("ch")] = float(m.group("value"))
        # the module has one threshold set per parameter: a lane with other limits is kept at its own worst
        for k in ("lowAlarm", "lowWarn"):
            entry["thresholds"][k] = max(entry["thresholds"][k], float(m.group(k)))
        for k in ("highWarn", "highAlarm"):
            entry["thresholds"][k] = min(entry["thresholds"][k], float(m.group(k)))
    if not params:
        raise ValueError("%s: a table without rows" % cmd)
    if text and not text.endswith("\n"):
        raise ValueError("%s: the last line has no newline (output cut off?)" % cmd)
    return {"media_type": None, "serial": None, "params": params}
