# -*- coding: utf-8 -*-
"""MTU facts: what a host MTU needs of a switch port, and the IPoIB limits. The one place the framing rule lives
(preflight, the switch derivation and the switches stage use these functions)."""
from __future__ import annotations

from typing import Dict

# A host MTU counts the IP packet only; the switch port MTU (EOS, Cumulus, Onyx "mtu") counts the frame: the
# Ethernet header (14 bytes: 2 MACs + EtherType) and one 802.1Q VLAN tag (4 bytes) - IEEE 802.3 / 802.1Q. The frame
# check sequence is not counted by any of the platforms in the switch catalogue.
ETHERNET_OVERHEAD = 18
# The largest IPoIB MTU per mode (Linux ipoib: datagram = the 4096-byte IB MTU less the 4-byte IPoIB header;
# connected mode up to 64 KiB - 16; NVIDIA MLNX_OFED/DOCA-OFED documentation "IP over InfiniBand").
IPOIB_MTU_MAX: Dict[str, int] = {"datagram": 4092, "connected": 65520}


def frame_bytes(host_mtu: int) -> int:
    """The switch port MTU a host MTU needs: the host's packet plus the Ethernet framing."""
    return int(host_mtu) + ETHERNET_OVERHEAD


def fits_port(host_mtu: int, port_mtu: int) -> bool:
    """Whether a host's largest frame fits a switch port of MTU ``port_mtu``."""
    return frame_bytes(host_mtu) <= int(port_mtu)


def max_host_mtu(port_mtu: int) -> int:
    """The largest host MTU a switch port of MTU ``port_mtu`` carries."""
    return int(port_mtu) - ETHERNET_OVERHEAD


def headroom(host_mtu: int, port_mtu: int) -> int:
    """Bytes a port has to spare over the host's largest frame (negative: the frame does not fit)."""
    return int(port_mtu) - frame_bytes(host_mtu)
