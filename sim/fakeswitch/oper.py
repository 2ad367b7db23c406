# -*- coding: utf-8 -*-
"""What the fake switches' operational show commands share, whatever the vendor (eos_show.py, onyx_show.py,
nvue_show.py): the cabling (``state["wiring"]``: {port: {host, nic, speed, mac}}, written by ``sim/podsim up``
from sim/podmodel.switch_wiring or by a test) and the operational faults (``state["faults"]``):

- ``port_down=P[,P]``: the link is down (no LLDP neighbour);
- ``port_speed=P:GBPS[,P:GBPS]``: the link came up at another speed;
- ``swap=P1,P2``: the cables of two ports are swapped (each port sees the other's neighbour);
- ``errors_rising`` / ``discards_rising`` / ``pause_rising=P[,P]``: each read of that counter adds to it (EOS and
  NVUE; Onyx: errors and discards - its PFC pause counters are not answered, no public output of them was found);
- ``optic_rx_low=P[,P]``: the port's transceiver receives too little light (EOS and NVUE DOM: Rx power below the
  module's low-alarm threshold);
- ``psu_failed=N[,N]``: power supply N lost its input (EOS ``powerLoss``);
- ``fan_failed=F[,F]``: fan F failed (EOS fan label ``1/1``, NVUE ``FAN1/1``).

A test double for the pod-in-a-box; port names are the vendor's (``Ethernet1/1``, ``1/1``, ``swp1``).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional


def ports_of(value: Any) -> List[str]:
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


def natural(name: str) -> List[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def neighbour(state: Dict[str, Any], port: str) -> Optional[Dict[str, Any]]:
    """What is plugged into ``port``, after the swap fault."""
    swap = ports_of((state.get("faults") or {}).get("swap"))
    if len(swap) == 2 and port in swap:
        port = swap[1] if port == swap[0] else swap[0]
    return (state.get("wiring") or {}).get(port)


def link(state: Dict[str, Any], port: str, shutdown: bool, configured_gbps: Optional[float]) -> Dict[str, Any]:
    """{"state": "up"|"down"|"disabled", "gbps": float, "peer": wiring entry or None} for one port."""
    faults = state.get("faults") or {}
    peer = neighbour(state, port)
    speeds = dict(item.split(":", 1) for item in ports_of(faults.get("port_speed")) if ":" in item)
    if shutdown:
        status = "disabled"
    elif peer is None or port in ports_of(faults.get("port_down")):
        status = "down"
    else:
        status = "up"
    gbps = float(speeds[port]) if port in speeds else \
        float(configured_gbps) if configured_gbps else float((peer or {}).get("speed") or 100)
    return {"state": status, "gbps": gbps, "peer": peer if status == "up" else None}


def bump(state: Dict[str, Any], ports: List[str], steps: Dict[str, Dict[str, int]],
         zero: Dict[str, int]) -> Dict[str, Dict[str, int]]:
    """``state["counters"]`` after one read of a counter command: every port starts at ``zero``; a port named by a
    rising fault key of ``steps`` (fault key -> {counter: step}) gains those steps. The caller saves the state."""
    faults = state.get("faults") or {}
    counters = state.setdefault("counters", {})
    for port in ports:
        entry = counters.setdefault(port, dict(zero))
        for key, rise in steps.items():
            if port in ports_of(faults.get(key)):
                for counter, step in rise.items():
                    entry[counter] = int(entry.get(counter, 0)) + step
    return counters
