# -*- coding: utf-8 -*-
"""The switch platforms the pod model knows: per model its platform (the OS the toolkit talks to), its port names,
the port speed, the largest MTU, with the vendor documents; and which QSFP lanes a port takes."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

# The switch operating systems the toolkit renders and reads: Arista EOS, NVIDIA Onyx (MLNX-OS), NVIDIA Cumulus
# Linux (NVUE), and the managed InfiniBand switches (MLNX-OS for IB; nothing is pushed to them).
PLATFORMS = ("eos", "onyx", "cumulus", "mlnx-ib")


@dataclass(frozen=True)
class SwitchModel:
    platform: str
    ports: Tuple[str, ...]
    top_speed: int  # Gb/s: the fastest a port runs (a breakout lane runs a quarter of it)
    max_mtu: Optional[int]  # the largest port MTU (the frame: catalog.mtu); None for InfiniBand switches
    source: str
    ib_speed: Optional[str] = None  # InfiniBand switches: the IBTA generation a port runs at (4X lanes), else None


def _qsfp_ports(prefix: str, count: int, lanes: int, sep: str = "/") -> List[str]:
    ports = []
    for n in range(1, count + 1):
        ports.extend("%s%d%s%d" % (prefix, n, sep, lane) for lane in range(1, lanes + 1))
    return ports


def _cumulus_ports(count: int) -> List[str]:
    ports = []
    for n in range(1, count + 1):
        ports.append("swp%d" % n)
        ports.extend("swp%ds%d" % (n, lane) for lane in range(4))
    return ports


def _quantum2_ports(cages: int) -> List[str]:
    """A Quantum-2 switch's NDR ports: two per OSFP cage, 1/<cage>/1 and 1/<cage>/2 (64 ports on 32 cages)."""
    return ["1/%d/%d" % (cage, port) for cage in range(1, cages + 1) for port in (1, 2)]


def _onyx_ports(count: int) -> List[str]:
    ports = []
    for n in range(1, count + 1):
        ports.append("1/%d" % n)
        ports.extend("1/%d/%d" % (n, lane) for lane in range(1, 5))
    return ports


SWITCH_MODELS: Dict[str, SwitchModel] = {
    "7060CX2-32S": SwitchModel(
        "eos", tuple(_qsfp_ports("Ethernet", 32, 4) + ["Ethernet33", "Ethernet34"]), 100, 9214,
        "Arista 7060CX2-32S data sheet: 32x QSFP100 + 2x SFP+; 004 uses it as the data switch"),
    "7260CX3-64": SwitchModel(
        "eos", tuple(_qsfp_ports("Ethernet", 64, 4) + ["Ethernet65", "Ethernet66"]), 100, 9214,
        "Arista 7260CX3-64 data sheet: 64x QSFP100 + 2x SFP+"),
    "SN3700V": SwitchModel(
        "cumulus", tuple(_cumulus_ports(32)), 200, 9216,
        "NVIDIA SN3700: 32x QSFP56 200GbE; 001 runs it with Cumulus Linux"),
    "SN4600C": SwitchModel(
        "cumulus", tuple(_cumulus_ports(64)), 100, 9216,
        "NVIDIA Spectrum-2 SN4600C: 64x QSFP28 100GbE (4x 25GbE breakout), Cumulus Linux, MTU up to 9216 as the "
        "other Spectrum switches; the DGX BasePOD RA (B200/H200/H100) uses it as the management and storage fabric"),
    "SN2700": SwitchModel(
        "onyx", tuple(_onyx_ports(32)), 100, 9216, "NVIDIA SN2700: 32x QSFP28 100GbE, Onyx"),
    "QM8700": SwitchModel(
        "mlnx-ib", tuple("1/%d" % n for n in range(1, 41)), 200, None,
        "NVIDIA QM8700: 40x HDR 200Gb/s InfiniBand; 001 compute fabric", "HDR"),
    "QM9700": SwitchModel(
        "mlnx-ib", tuple(_quantum2_ports(32)), 400, None,
        "NVIDIA Quantum-2 QM9700: 64x NDR 400Gb/s InfiniBand on 32 OSFP cages (two ports per cage, 1/<cage>/1 and "
        "1/<cage>/2), managed (MLNX-OS, subnet manager on board); the DGX BasePOD and SuperPOD H100/H200/B200 "
        "compute fabric", "NDR"),
    "SB7700": SwitchModel(
        "mlnx-ib", tuple("1/%d" % n for n in range(1, 37)), 100, None,
        "Mellanox SB7700: 36x EDR 100Gb/s InfiniBand (managed); 000/003", "EDR"),
    "SB7800": SwitchModel(
        "mlnx-ib", tuple("1/%d" % n for n in range(1, 37)), 100, None,
        "Mellanox SB7800: 36x EDR 100Gb/s InfiniBand (managed); 000/003", "EDR"),
}


def switch_model(name: Any) -> Optional[SwitchModel]:
    """The catalogue entry of a switch model, or None."""
    return SWITCH_MODELS.get(name) if isinstance(name, str) else None


# QSFP cage of a switch port and the lanes it occupies: a port used whole (swp1, 1/1, or Ethernet1/1 at 40/100 Gb/s)
# takes all four lanes; a breakout lane (swp1s0, 1/1/1, Ethernet1/2) takes one.
_CUMULUS_PORT = re.compile(r"^swp(\d+)(?:s(\d+))?$")
_ONYX_PORT = re.compile(r"^1/(\d+)(?:/(\d+))?$")
_EOS_QSFP_PORT = re.compile(r"^Ethernet(\d+)/(\d+)$")


def port_lanes(model: SwitchModel, port: str, speed: Any) -> Optional[Tuple[int, frozenset]]:
    """(cage, lanes) of ``port`` on a switch model with breakout ports, else None."""
    if model.platform == "cumulus":
        m = _CUMULUS_PORT.match(port)
        if m:
            return int(m.group(1)), frozenset(range(4)) if m.group(2) is None else frozenset([int(m.group(2))])
    elif model.platform == "onyx":
        m = _ONYX_PORT.match(port)
        if m:
            return int(m.group(1)), frozenset(range(1, 5)) if m.group(2) is None else frozenset([int(m.group(2))])
    elif model.platform == "eos":
        m = _EOS_QSFP_PORT.match(port)
        if m:
            lane = int(m.group(2))
            width = 1  # speed unknown: assume one lane (no false alarm)
            if isinstance(speed, int) and not isinstance(speed, bool) and speed > 0:
                per_lane = model.top_speed // 4  # 25 Gb/s lanes on a 100G QSFP28
                width = 4 if speed == 40 else min(4, -(-speed // per_lane))
            return int(m.group(1)), frozenset(range(lane, min(lane + width, 5)))
    return None


# ------------------------------------------------------------------------------------------------ InfiniBand links
# The data rate of one lane per IBTA generation (Gb/s) and the widths a port trains at. A 4X link is 4 lanes:
# EDR 4 x 25 = 100 Gb/s, HDR 4 x 50 = 200 Gb/s (HDR100 is 2X HDR), NDR 4 x 100 = 400 Gb/s (NDR200 is 2X NDR).
# Sources: IBTA Architecture Specification Vol. 2 Release 1.4/1.5 (link widths 1X/2X/4X/8X/12X; EDR 25G, HDR 50G,
# NDR 100G per lane); NVIDIA QM8700 and QM9700 user manuals ("HDR 200Gb/s, HDR100 100Gb/s", "NDR 400Gb/s, NDR200").
IB_LANE_GBPS = {"SDR": 2, "DDR": 4, "QDR": 8, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
IB_WIDTHS = (1, 2, 4, 8, 12)
IB_SOURCE = ("IBTA Architecture Specification Vol. 2 (lane rates EDR 25, HDR 50, NDR 100 Gb/s; widths 1X/2X/4X); "
             "the switch model's port speed (module_utils/catalog/switches.py)")
_IB_PORT_1 = re.compile(r"^1/(\d+)$")
_IB_PORT_2 = re.compile(r"^1/(\d+)/([12])$")


def ib_port_number(model: SwitchModel, port: Any) -> Optional[int]:
    """The InfiniBand port number (what ``iblinkinfo``/``ibnetdiscover`` print, 1..N) of a managed IB switch's port
    as the pod model names it - MLNX-OS's interface name without ``IB``: ``1/N`` on a QM8700/SB7700/SB7800 is port
    N; ``1/C/P`` on a Quantum-2 QM9700 (two NDR ports per OSFP cage C) is port 2(C-1)+P. None when ``port`` is not a
    port of the model or the switch is not InfiniBand."""
    if model.platform != "mlnx-ib" or not isinstance(port, str) or port not in model.ports:
        return None
    m = _IB_PORT_1.match(port)
    if m:
        return int(m.group(1))
    m = _IB_PORT_2.match(port)
    return 2 * (int(m.group(1)) - 1) + int(m.group(2)) if m else None


def ib_link(model: SwitchModel, nic_speed: Any = None) -> Optional[Tuple[str, str]]:
    """(width, generation) a link to a port of IB switch ``model`` trains at: the switch's generation, 4X - or
    fewer lanes when the HCA's modelled ``speed`` (Gb/s) is less than 4 lanes (HDR100: 100 Gb/s on an HDR switch is
    2X HDR). None for an Ethernet switch, or a speed no width of the generation makes."""
    if model.platform != "mlnx-ib" or not model.ib_speed:
        return None
    lane = IB_LANE_GBPS[model.ib_speed]
    if isinstance(nic_speed, int) and not isinstance(nic_speed, bool) and 0 < nic_speed < 4 * lane:
        lanes = nic_speed // lane
        if nic_speed % lane or lanes not in IB_WIDTHS:
            return None
        return "%dX" % lanes, model.ib_speed
    return "4X", model.ib_speed
