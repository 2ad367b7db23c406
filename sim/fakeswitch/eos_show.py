# -*- coding: utf-8 -*-
"""The fake EOS switch's operational ``show ... | json`` commands (used by the switch validation stage).

Answered from the switch's state (a JSON-able dict, see cli.py):

- ``state["running"]``: the running config (speed, shutdown per port);
- ``state["wiring"]``: what is cabled to each port, written by ``sim/podsim up`` from the pod model (or by a
  test): ``{"Ethernet1/1": {"host": "sim-dgx1", "nic": "enp5s0", "speed": 100, "mac": "02:53:..."}}``. The
  LLDP neighbour of a port is its wired host (system name) and NIC (port id: the interface name, as lldpd
  on the host sends it with ``portidsubtype ifname``);
- ``state["counters"]``: error/discard/PFC counters per port (all 0 until a fault makes them rise);
- faults (``state["faults"]``, set with ``sim/podsim switch SWITCH --fault K=V``):
  ``port_down=P[,P]`` (the link is down: notconnect, no LLDP neighbour), ``port_speed=P:GBPS[,P:GBPS]``
  (the link came up at another speed), ``swap=P1,P2`` (the cables of two ports are swapped: each sees the
  other's neighbour), ``errors_rising=P[,P]``, ``discards_rising=P[,P]``, ``pause_rising=P[,P]`` (every
  read of the counter adds to it, so two reads show a delta), ``optic_rx_low=P[,P]`` (the port's module reads
  -14.2 dBm on every lane, below its -12.5 dBm low alarm), ``psu_failed=N`` (PSU N ``powerLoss``),
  ``fan_failed=LABEL`` (fan ``1/1`` ... ``4/1``, or ``PowerSupply1/1``: ``failed``).

Healthy by default: every wired port has a 100GBASE-SR4 module with its DOM inside its thresholds, two PSUs ``ok``,
four fan trays ``ok``, the temperature sensors well below their overheat thresholds (the layouts of
tests/unit/fixtures/fabric/eos_*__anta_tests_*.txt).

The JSON keys are those of EOS's ``| json`` output (see tests/unit/fixtures/switch/SOURCES.md). A test double.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

try:
    from .oper import bump, link, natural, ports_of
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from oper import bump, link, natural, ports_of  # type: ignore

COMMANDS = ("show interfaces status", "show lldp neighbors detail", "show interfaces counters errors",
            "show interfaces counters discards", "show priority-flow-control counters",
            "show interfaces transceiver dom thresholds", "show system environment power",
            "show system environment cooling", "show system environment temperature")
RISE = {"errors_rising": {"inErrors": 7, "fcsErrors": 7}, "discards_rising": {"outDiscards": 11},
        "pause_rising": {"rxFrames": 1000, "txFrames": 0}}
ZERO = {"inErrors": 0, "frameTooLongs": 0, "outErrors": 0, "frameTooShorts": 0, "fcsErrors": 0,
        "alignmentErrors": 0, "symbolErrors": 0, "inDiscards": 0, "outDiscards": 0, "rxFrames": 0, "txFrames": 0}


def _ethernet_ports(state: Dict[str, Any]) -> List[str]:
    """Every Ethernet port the switch knows: configured or wired (sorted naturally)."""
    names = {line.split(None, 1)[1] for line, children in state.get("running") or []
             if children is not None and line.startswith("interface Ethernet")}
    names |= set((state.get("wiring") or {}).keys())
    return sorted(names, key=natural)


def _section(state: Dict[str, Any], port: str) -> List[str]:
    return next((children or [] for line, children in state.get("running") or []
                 if line == "interface " + port), [])


def _link(state: Dict[str, Any], port: str) -> Dict[str, Any]:
    section = _section(state, port)
    configured = next((re.match(r"speed (?:forced )?(\d+)g", c) for c in section if c.startswith("speed")), None)
    out = link(state, port, "shutdown" in section, float(configured.group(1)) if configured else None)
    out["status"] = {"up": "connected", "down": "notconnect", "disabled": "disabled"}[out["state"]]
    out["description"] = next((c.split(None, 1)[1] for c in section if c.startswith("description ")), "")
    return out


def interfaces_status(state: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for port in _ethernet_ports(state):
        lnk = _link(state, port)
        routed = "no switchport" in _section(state, port)
        out[port] = {
            "vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"} if routed else
            {"interfaceMode": "bridged", "vlanId": 1, "interfaceForwardingModel": "bridged"},
            "bandwidth": int(lnk["gbps"] * 1e9), "interfaceType": "%dGBASE-CR4" % int(lnk["gbps"]),
            "description": lnk["description"], "autoNegotiateActive": False, "duplex": "duplexFull",
            "linkStatus": lnk["status"], "lineProtocolStatus": "up" if lnk["status"] == "connected" else "down"}
    return {"interfaceStatuses": out}


def lldp_neighbors_detail(state: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for port in _ethernet_ports(state):
        lnk = _link(state, port)
        info = []
        if lnk["peer"]:
            peer = lnk["peer"]
            info.append({"chassisIdType": "macAddress", "chassisId": _eos_mac(peer.get("mac")),
                         "systemName": peer["host"], "ttl": 120,
                         "neighborInterfaceInfo": {"interfaceIdType": "interfaceName",
                                                   "interfaceId": '"%s"' % peer["nic"], "interfaceId_v2": peer["nic"],
                                                   "interfaceDescription": peer.get("description", peer["nic"])}})
        out[port] = {"lldpNeighborInfo": info}
    return {"lldpNeighbors": out}


def _eos_mac(mac: Any) -> str:
    digits = re.sub(r"[^0-9a-f]", "", str(mac or "").lower()).ljust(12, "0")[:12]
    return ".".join(digits[i:i + 4] for i in (0, 4, 8))


def _counters(state: Dict[str, Any], kind: str) -> Dict[str, Dict[str, int]]:
    """The counters after this read: ports named by a rising fault of ``kind`` go up."""
    return bump(state, _ethernet_ports(state), {kind: RISE[kind]}, ZERO)


# a healthy 100GBASE-SR4 module: (unit, lanes, value, lowAlarm, lowWarn, highWarn, highAlarm) per DOM parameter
DOM = {"rxPower": ("dBm", 4, -2.4, -12.5, -9.5, 3.5, 5.5), "txPower": ("dBm", 4, -1.1, -10.5, -7.5, 3.5, 5.5),
       "txBias": ("mA", 4, 7.8, 2.0, 3.0, 12.0, 13.0), "temperature": ("C", 0, 33.5, -5.0, 0.0, 70.0, 75.0),
       "voltage": ("V", 0, 3.29, 2.9, 3.0, 3.6, 3.7)}
RX_LOW = -14.2  # optic_rx_low: below the low alarm (a dirty fibre, a failing far-end optic)


def dom_thresholds(state: Dict[str, Any]) -> Dict[str, Any]:
    """``show interfaces transceiver dom thresholds``: a module on every wired port, none on the others."""
    low = ports_of((state.get("faults") or {}).get("optic_rx_low"))
    wired = state.get("wiring") or {}
    out = {}
    for i, port in enumerate(_ethernet_ports(state)):
        entry: Dict[str, Any] = {"displayName": port}
        if port in wired:
            params = {}
            for name, (unit, lanes, value, la, lw, hw, ha) in DOM.items():
                if name == "rxPower" and port in low:
                    value = RX_LOW
                chans = {str(n): round(value - 0.05 * n, 3) for n in range(1, lanes + 1)} if lanes else {"-": value}
                params[name] = {"unit": unit, "channels": chans, "threshold": {
                    "lowAlarm": la, "lowAlarmOverridden": False, "lowWarn": lw, "lowWarnOverridden": False,
                    "highWarn": hw, "highWarnOverridden": False, "highAlarm": ha, "highAlarmOverridden": False}}
            entry.update({"vendorSn": "FAKE%04d" % (i + 1), "mediaType": "100GBASE-SR4", "parameters": params})
        out[port] = entry
    return {"interfaces": out}


def environment_power(state: Dict[str, Any]) -> Dict[str, Any]:
    """``show system environment power``: two PWR-500AC-F, ``ok`` unless ``psu_failed`` names one."""
    failed = ports_of((state.get("faults") or {}).get("psu_failed"))
    out = {}
    for n in ("1", "2"):
        lost = n in failed
        out[n] = {"outputPower": 0.0 if lost else 117.375, "modelName": "PWR-500AC-F", "capacity": 500.0,
                  "tempSensors": {"TempSensorP%s/%d" % (n, s): {"status": "ok", "temperature": 0.0 if lost else 39.0}
                                  for s in (1, 2, 3)},
                  "fans": {"FanP%s/1" % n: {"status": "ok", "speed": 33}},
                  "state": "powerLoss" if lost else "ok", "inputCurrent": 0.0 if lost else 0.57,
                  "dominant": False, "inputVoltage": 0.0 if lost else 230.0, "outputCurrent": 0.0 if lost else 9.7,
                  "managed": True}
    return {"powerSupplies": out}


def _fan(label: str, failed: List[str]) -> Dict[str, Any]:
    bad = label in failed
    return {"status": "failed" if bad else "ok", "uptime": 1682498923.93, "maxSpeed": 17500,
            "lastSpeedStableChangeTime": 1682498975.01, "configuredSpeed": 30, "actualSpeed": 0 if bad else 29,
            "speedHwOverride": False, "speedStable": not bad, "label": label}


def environment_cooling(state: Dict[str, Any]) -> Dict[str, Any]:
    """``show system environment cooling``: two PSU fans and four fan trays of one fan, ``ok`` unless
    ``fan_failed`` names one (``1/1`` ... ``4/1``, ``PowerSupply1/1``)."""
    failed = ports_of((state.get("faults") or {}).get("fan_failed"))
    psus = [{"status": "ok", "fans": [_fan("PowerSupply%d/1" % n, failed)], "speed": 30, "label": "PowerSupply%d" % n}
            for n in (1, 2)]
    trays = [{"status": "failed" if "%d/1" % n in failed else "ok", "fans": [_fan("%d/1" % n, failed)], "speed": 30,
              "label": "%d" % n} for n in (1, 2, 3, 4)]
    return {"defaultZones": False, "numCoolingZones": [], "coolingMode": "automatic", "ambientTemperature": 24.5,
            "shutdownOnInsufficientFans": True, "airflowDirection": "frontToBackAirflow", "overrideFanSpeed": 0,
            "powerSupplySlots": psus, "fanTraySlots": trays, "minFanSpeed": 0, "currentZones": 1,
            "configuredZones": 0, "systemStatus": "coolingOk"}


def environment_temperature(state: Dict[str, Any]) -> Dict[str, Any]:  # noqa: ARG001 - always healthy
    """``show system environment temperature``: the CPU and switch-card sensors and a PSU's, all ``ok``."""
    return {"systemStatus": "temperatureOk", "ambientThreshold": 45, "tempSensors": [
        {"name": "TempSensor1", "description": "Cpu temp sensor", "overheatThreshold": 90.0,
         "criticalThreshold": 95.0, "hwStatus": "ok", "currentTemperature": 52.8},
        {"name": "TempSensor2", "description": "Switch card temp sensor", "overheatThreshold": 75.0,
         "criticalThreshold": 85.0, "hwStatus": "ok", "currentTemperature": 45.9}],
        "powerSupplySlots": [{"relPos": "1", "entPhysicalClass": "PowerSupply", "tempSensors": [
            {"name": "TempSensorP1/1", "description": "Hotspot", "overheatThreshold": 95.0, "criticalThreshold": 100.0,
             "targetTemperature": 80.0, "hwStatus": "ok", "currentTemperature": 54.0}]}],
        "cardSlots": []}


def show(state: Dict[str, Any], command: str) -> Optional[str]:
    """The JSON text of ``<command> | json``, or None for a command this module does not answer. May change
    ``state["counters"]`` (the caller saves the state)."""
    m = re.match(r"^(.*?)\s*\|\s*json$", command)
    if not m or m.group(1) not in COMMANDS:
        return None
    cmd = m.group(1)
    if cmd == "show interfaces status":
        data = interfaces_status(state)
    elif cmd == "show lldp neighbors detail":
        data = lldp_neighbors_detail(state)
    elif cmd == "show interfaces transceiver dom thresholds":
        data = dom_thresholds(state)
    elif cmd == "show system environment power":
        data = environment_power(state)
    elif cmd == "show system environment cooling":
        data = environment_cooling(state)
    elif cmd == "show system environment temperature":
        data = environment_temperature(state)
    elif cmd == "show interfaces counters errors":
        c = _counters(state, "errors_rising")
        data = {"interfaceErrorCounters": {p: {k: v.get(k, 0) for k in ("inErrors", "frameTooLongs", "outErrors",
                                                                          "frameTooShorts", "fcsErrors",
                                                                          "alignmentErrors", "symbolErrors")}
                                           for p, v in c.items()}}
    elif cmd == "show interfaces counters discards":
        c = _counters(state, "discards_rising")
        data = {"inDiscardsTotal": sum(v.get("inDiscards", 0) for v in c.values()),
                "interfaces": {p: {"outDiscards": v.get("outDiscards", 0), "inDiscards": v.get("inDiscards", 0)}
                               for p, v in c.items()},
                "outDiscardsTotal": sum(v.get("outDiscards", 0) for v in c.values())}
    else:
        c = _counters(state, "pause_rising")
        data = {"interfaceCounters": {p: {"rxFrames": v.get("rxFrames", 0), "txFrames": v.get("txFrames", 0)}
                                      for p, v in c.items()}}
    return json.dumps(data, indent=2, sort_keys=True)
