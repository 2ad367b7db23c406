# -*- coding: utf-8 -*-
"""The fake Cumulus (NVUE) switch's operational show commands (the switch validation stage reads them):
``nv show interface`` and ``nv show interface lldp``, in the table layouts of
tests/unit/fixtures/switch/nvue_show_interface*.txt, ``nv show interface --view counters`` and ``nv show interface
<port> counters qos pfc-stats`` (tests/unit/fixtures/switch/nvue_show_interface_view_counters__*.txt,
nvue_show_interface_counters_qos_pfc_stats__*.txt) and ``nv show platform environment``
(tests/unit/fixtures/fabric/nvos_platform_environment__*.txt), from the applied config (``link mtu|speed|state``),
the cabling and the operational faults (oper.py: ``errors_rising`` adds RX_ERR, ``discards_rising`` TX_DRP,
``pause_rising`` rx-pause-frames on switch priority 3, ``fan_failed=FAN1/1`` turns that fan's row ``fail`` - the
word a failed row has on a real switch was not found in a public output), and ``nv show interface <port> transceiver
thresholds`` for a wired port (the layout of tests/unit/fixtures/switch/nvue_show_interface_transceiver_thresholds__*;
``optic_rx_low`` puts every lane's Rx power at -14.20 dBm, below the -13.31 dBm low alarm). A test double."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

try:
    from .oper import bump, link, natural, ports_of
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from oper import bump, link, natural, ports_of  # type: ignore

RISE = {"errors_rising": {"RX_ERR": 7}, "discards_rising": {"TX_DRP": 11}}
PAUSE = {"pause_rising": {"rx-pause-frames/3": 1000}}
VIEW = ("RX_OK", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_ERR", "TX_DRP", "TX_OVR")
# nv show platform environment rows (the fixture's names and types, fewer of them)
ENVIRONMENT = [("ASIC", "temperature"), ("Ambient-Fan-Side-Temp", "temperature"), ("CPU-Pack-Temp", "temperature")] + \
    [(name, kind) for n in range(1, 5) for name, kind in (("FAN%d" % n, "led"), ("FAN%d/1" % n, "fan"),
                                                          ("FAN%d/2" % n, "fan"))] + \
    [("HSC-VinDC-In", "voltage"), ("HSC-VinDC-Out", "voltage"), ("PDB-1-Conv-In-1", "voltage")]


def _settings(applied: List[List[str]]) -> Dict[str, Dict[str, str]]:
    out: Dict[str, Dict[str, str]] = {}
    for t in applied:
        if t[:1] == ["interface"] and len(t) == 5 and t[2] == "link":
            out.setdefault(t[1], {})[t[3]] = t[4]
    return out


def _table(columns: List[str], widths: List[int], rows: List[List[str]]) -> str:
    fmt = "  ".join("%%-%ds" % w for w in widths)
    lines = [fmt % tuple(columns), fmt % tuple("-" * w for w in widths)]
    lines += [(fmt % tuple(r)).rstrip() for r in rows]
    return "\n".join(lines)


def _ports(state: Dict[str, Any], applied: List[List[str]]) -> List[str]:
    ports = sorted(set(_settings(applied)) | set((state.get("wiring") or {}).keys()), key=natural)
    return [p for p in ports if p.startswith("swp")]


def counters_view(state: Dict[str, Any], applied: List[List[str]]) -> str:
    """``nv show interface --view counters``: eth0, lo and the swp ports (each read moves the counters a rising
    fault names)."""
    ports = _ports(state, applied)
    counters = bump(state, ports, RISE, {k: 0 for k in VIEW})
    rows = [["eth0", "1500", "946", "0", "0", "0", "299", "0", "0", "0", "BMRU"],
            ["lo", "65536", "651", "0", "0", "0", "651", "0", "0", "0", "LRU"]]
    settings = _settings(applied)
    for port in ports:
        c = counters[port]
        rows.append([port, settings.get(port, {}).get("mtu", "9216")] + [str(c.get(k, 0)) for k in VIEW] +
                    ["BMsRU"])
    return _table(["Interface", "MTU"] + list(VIEW) + ["Flg"], [14, 5, 5, 6, 6, 6, 5, 6, 6, 6, 5], rows)


def pfc_stats(state: Dict[str, Any], port: str) -> str:
    """``nv show interface <port> counters qos pfc-stats`` (``pause_rising`` adds to priority 3's rx-pause-frames)."""
    counters = bump(state, [port], PAUSE, {})
    c = counters[port]
    rows = [[str(p), str(c.get("rx-pause-frames/%d" % p, 0)), "0", str(c.get("tx-pause-frames/%d" % p, 0)), "0"]
            for p in range(8)]
    return _table(["switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames", "tx-pause-duration"],
                  [15, 15, 17, 15, 17], rows)


def platform_environment(state: Dict[str, Any]) -> str:
    """``nv show platform environment``: every row ``ok`` (LEDs ``off``) unless ``fan_failed`` names a fan."""
    failed = ports_of((state.get("faults") or {}).get("fan_failed"))
    rows = [[name, kind, "off" if kind == "led" else "fail" if name in failed else "ok"] for name, kind in ENVIRONMENT]
    return _table(["Name", "Type", "State"], [31, 11, 5], rows)


# the fixture's module: (parameter, unit, lanes, value, high alarm, high warn, low warn, low alarm)
TRANSCEIVER = [("temperature", "C", 0, 42.74, 80.0, 70.0, 0.0, -10.0),
               ("voltage", "V", 0, 3.2862, 3.5, 3.465, 3.135, 3.1),
               ("rx-power", "dBm", 4, -0.64, 5.4, 2.4, -10.3, -13.31),
               ("tx-power", "dBm", 4, -0.48, 5.4, 2.4, -8.4, -11.4),
               ("tx-bias-current", "mA", 4, 6.75, 8.5, 8.0, 6.0, 5.492)]
DECIMALS = {"V": 4, "mA": 3}  # as the real output prints them (2 otherwise)


def transceiver_thresholds(state: Dict[str, Any], port: str) -> str:
    """``nv show interface <port> transceiver thresholds`` of a wired port's module."""
    low = port in ports_of((state.get("faults") or {}).get("optic_rx_low"))
    lines = ["%-21s%-6s%-15s%-17s%-16s%-16s%-16s%s" % ("", "Ch", "Value", "High Alarm", "High Warn", "Low Warn",
                                                        "Low Alarm", "Alt Value"),
             "%-42s%-17s%-16s%-16s%s" % ("", "Threshold", "Threshold", "Threshold", "Threshold"), "-" * 120]
    for name, unit, lanes, value, ha, hw, lw, la in TRANSCEIVER:
        for i, ch in enumerate([str(n) for n in range(1, lanes + 1)] or ["-"]):
            v = -14.2 if (low and name == "rx-power") else value
            cells = ["%.*f %s" % (DECIMALS.get(unit, 2), x, unit) for x in (v, ha, hw, lw, la)]
            lines.append("%-21s%-6s%-15s %-16s%-16s%-16s%-16s" % ((name if i == 0 else ""), ch, *cells))
    return "\n".join(ln.rstrip() for ln in lines)


def show(state: Dict[str, Any], applied: List[List[str]], rest: List[str]) -> Optional[str]:
    if len(rest) == 4 and rest[0] == "interface" and rest[2:] == ["transceiver", "thresholds"]:
        return transceiver_thresholds(state, rest[1]) if rest[1] in (state.get("wiring") or {}) else \
            "Error: The requested item does not exist."
    if rest == ["interface", "--view", "counters"]:
        return counters_view(state, applied)
    if len(rest) == 5 and rest[0] == "interface" and rest[2:] == ["counters", "qos", "pfc-stats"]:
        return pfc_stats(state, rest[1]) if rest[1] in _ports(state, applied) else \
            "Error: The requested item does not exist."
    if rest == ["platform", "environment"]:
        return platform_environment(state)
    if rest not in (["interface"], ["interface", "lldp"]):
        return None
    settings = _settings(applied)
    ports = _ports(state, applied)
    rows = []
    for port in ports:
        s = settings.get(port, {})
        speed = s.get("speed", "")
        lnk = link(state, port, s.get("state") == "down",
                   float(speed[:-1]) if speed.endswith("G") and speed[:-1].isdigit() else None)
        peer = lnk["peer"] or {}
        if rest == ["interface"]:
            rows.append([port, "up" if lnk["state"] == "up" else "down", "%dG" % lnk["gbps"], s.get("mtu", "9216"),
                         "swp", peer.get("host", ""), peer.get("nic", ""), ""])
        else:
            rows.append([port, "%dG" % lnk["gbps"], "swp", peer.get("host", ""), peer.get("nic", "")])
    if rest == ["interface"]:
        return _table(["Interface", "State", "Speed", "MTU", "Type", "Remote Host", "Remote Port", "Summary"],
                      [10, 5, 5, 5, 8, 15, 15, 7], rows)
    return _table(["Interface", "Speed", "Type", "Remote Host", "Remote Port"], [9, 5, 4, 15, 17], rows)
