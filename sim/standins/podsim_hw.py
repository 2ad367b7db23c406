#!/usr/bin/python3
"""HARDWARE STAND-INS for the pod-in-a-box simulator -- test doubles, NOT the real tools.

One file on purpose (~800 lines): the seven tools are symlinks to its launcher podsim-hw, which imports it so
that its compiled form in __pycache__ runs (argv[0] picks the tool); the directory is bind-mounted
as one directory into each simulated node, sharing one state file and its helpers; a package would have to
be importable from every node's private mount namespace, for no gain in clarity.

The simulator has no GPUs and no ConnectX adapters.  These stand-ins play `nvidia-smi`, `ibdev2netdev`,
`ibv_devinfo`, `mlxconfig`, `mlnx_qos`, `cma_roce_mode` and `ofed_info` inside simulated DGX nodes only: the
simulator bind-mounts this directory over /usr/local/sbin in each DGX node's private mount namespace
(they are never installed on the host).  Each tool is a symlink to this file; argv[0] picks the tool.

They print the real tools' output formats (NVIDIA driver 418 era, as on the 004 DGX-1 pod; mlnx_qos in
the format of the node's OFED release, "ofed" in the state, by default the current MLNX_OFED 24.10),
reading per-node state from /etc/podsim/hardware.json (inside the node's /etc overlay;
override with PODSIM_HW_STATE), and they change that state when a setting is applied:
`mlxconfig -d mlx5_0 -y set LINK_TYPE_P1=2`, `mlnx_qos -i enp5s0 --trust dscp --pfc 0,0,0,1,0,0,0,0`,
`cma_roce_mode -d mlx5_0 -p 1 -m 2`.  Link state and MTU come from the node's real veth NICs
(/sys/class/net), so a downed link shows as Down / PORT_DOWN.

The render_* functions are pure (state in, text out) and unit-tested (tests/unit/test_sim_standins.py).
Parsers of the real outputs must be tested against real captured outputs, not only against these.

Why one file of this size: every tool name is a symlink to it and the tools share one state file and its
locking, so the node's hardware is one consistent model (issue 13's file-size rule, stated here).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

STATE_PATH = "/etc/podsim/hardware.json"
STANDIN_NOTE = "podsim stand-in (simulated hardware, not the real tool)"

# DGX-1: eight V100 SXM2 on these PCI buses; four single-port ConnectX-4 (MCX455A) adapters.
DGX1_GPU_BUSES = ("06", "07", "0A", "0B", "85", "86", "89", "8A")
DGX1_HCAS = (
    # rdma device, netdev, PCI address
    ("mlx5_0", "enp5s0", "0000:05:00.0"),
    ("mlx5_1", "enp12s0", "0000:0c:00.0"),
    ("mlx5_2", "enp132s0", "0000:84:00.0"),
    ("mlx5_3", "enp139s0", "0000:8b:00.0"),
)
LINK_TYPES = {1: "IB", 2: "ETH", 3: "VPI"}
BOOLS = {0: "False", 1: "True"}
# mlxconfig parameters the stand-in knows: name -> value names (None: plain integer)
MLXCONFIG_PARAMS = {
    "LINK_TYPE_P1": LINK_TYPES,
    "SRIOV_EN": BOOLS,
    "NUM_OF_VFS": None,
    "ROCE_CC_PRIO_MASK_P1": None,
}
ROCE_MODES = {1: "IB/RoCE v1", 2: "RoCE v2"}


# --------------------------------------------------------------------------- state

def default_state(node: str, index: int = 1) -> dict:
    """Factory state of one simulated DGX-1: 8 GPUs, 4 HCAs already in Ethernet mode (as 004's
    ibv_devinfo shows), QoS and RoCE mode at their factory defaults (trust pcp, no PFC, RoCE v1),
    so that the roles have something to configure."""
    gpus = []
    for i, bus in enumerate(DGX1_GPU_BUSES):
        gpus.append({
            "index": i,
            "name": "Tesla V100-SXM2-32GB",
            "uuid": "GPU-%s" % uuid.uuid5(uuid.NAMESPACE_DNS, "%s.gpu%d.podsim" % (node, i)),
            "serial": "03231%02d%05d" % (index % 100, i),
            "pci_bus_id": "00000000:%s:00.0" % bus,
            "memory_total_mib": 32480,
            "power_limit_w": 300,
        })
    hcas = {}
    qos = {}
    for k, (dev, netdev, pci) in enumerate(DGX1_HCAS):
        mac = [0x50, 0x6B, 0x4B, index & 0xFF, 0xCE, 0xF0 + k]
        guid = "%02x%02x:%02x03:00%02x:%02x%02x" % tuple(mac)
        hcas[dev] = {
            "netdev": netdev,
            "pci": pci,
            "fw_ver": "12.18.1000",
            "node_guid": guid,
            "vendor_part_id": 4115,
            "board_id": "MT_2180110032",
            "part_number": "MCX455A-ECA_Ax",
            "serial": "MT1652K%05d" % (index * 10 + k),
            "mlxconfig": {"LINK_TYPE_P1": {"current": 2, "next_boot": 2},
                          "SRIOV_EN": {"current": 0, "next_boot": 0},
                          "NUM_OF_VFS": {"current": 0, "next_boot": 0},
                          "ROCE_CC_PRIO_MASK_P1": {"current": 255, "next_boot": 255}},
            "roce_mode": 1,
        }
        qos[netdev] = {"trust": "pcp", "pfc": [0] * 8, "cable_len": 7}
    return {"podsim_standin": True, "node": node, "driver_version": "418.67", "cuda_version": "10.1",
            "ofed": OFED_DEFAULT, "gpus": gpus, "hcas": hcas, "qos": qos}


def hca_for(state: dict, name: str) -> tuple[str, dict]:
    """Look an HCA up by RDMA device name, netdev name or PCI address (mlxconfig -d accepts all)."""
    for dev, h in sorted(state["hcas"].items()):
        if name in (dev, h["netdev"], h["pci"], h["pci"][5:]):
            return dev, h
    raise KeyError(name)


# --------------------------------------------------------------------------- nvidia-smi

def render_nvidia_smi(state: dict, now: float | None = None) -> str:
    t = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))
    drv, cuda = state["driver_version"], state["cuda_version"]
    bar = "+" + "-" * 77 + "+"
    sep = "+-------------------------------+----------------------+----------------------+"
    lines = [
        t + " " * 7,
        bar,
        "| NVIDIA-SMI %-13sDriver Version: %-13sCUDA Version: %-9s|" % (drv, drv, cuda),
        "|-------------------------------+----------------------+----------------------+",
        "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
        "|===============================+======================+======================|",
    ]
    for g in state["gpus"]:
        name = g["name"] if len(g["name"]) <= 18 else g["name"][:15] + "..."
        lines.append("|%4d  %-18s  %-3s  |%17s %3s |%21s |" % (g["index"], name, "On", g["pci_bus_id"], "Off", "0"))
        lines.append("| %3s %4dC %5s %5dW / %3dW |%7dMiB / %5dMiB |%7d%%%13s |" % (
            "N/A", 34 + g["index"] % 4, "P0", 43 + g["index"] % 3, g["power_limit_w"], 0,
            g["memory_total_mib"], 0, "Default"))
        lines.append(sep)
    lines += [
        " " * 79,
        bar,
        "| Processes:                                                       GPU Memory |",
        "|  GPU       PID   Type   Process name                             Usage      |",
        "|=============================================================================|",
        "|  No running processes found                                                 |",
        bar,
    ]
    return "\n".join(lines) + "\n"


def render_nvidia_smi_list(state: dict) -> str:
    return "".join("GPU %d: %s (UUID: %s)\n" % (g["index"], g["name"], g["uuid"]) for g in state["gpus"])


# field -> (header, unit, value getter)
_GPU_FIELDS = {
    "index": ("index", None, lambda s, g: g["index"]),
    "name": ("name", None, lambda s, g: g["name"]),
    "gpu_name": ("name", None, lambda s, g: g["name"]),
    "uuid": ("uuid", None, lambda s, g: g["uuid"]),
    "gpu_uuid": ("uuid", None, lambda s, g: g["uuid"]),
    "serial": ("serial", None, lambda s, g: g["serial"]),
    "pci.bus_id": ("pci.bus_id", None, lambda s, g: g["pci_bus_id"]),
    "gpu_bus_id": ("pci.bus_id", None, lambda s, g: g["pci_bus_id"]),
    "driver_version": ("driver_version", None, lambda s, g: s["driver_version"]),
    "count": ("count", None, lambda s, g: len(s["gpus"])),
    "memory.total": ("memory.total", "MiB", lambda s, g: g["memory_total_mib"]),
    "memory.used": ("memory.used", "MiB", lambda s, g: 0),
    "memory.free": ("memory.free", "MiB", lambda s, g: g["memory_total_mib"]),
    "temperature.gpu": ("temperature.gpu", None, lambda s, g: 34 + g["index"] % 4),
    "utilization.gpu": ("utilization.gpu", "%", lambda s, g: 0),
    "power.draw": ("power.draw", "W", lambda s, g: "%.2f" % (43 + g["index"] % 3)),
    "power.limit": ("power.limit", "W", lambda s, g: "%.2f" % g["power_limit_w"]),
    "persistence_mode": ("persistence_mode", None, lambda s, g: "Enabled"),
    "ecc.mode.current": ("ecc.mode.current", None, lambda s, g: "Enabled"),
}


def render_query_gpu(state: dict, fields: list[str], noheader: bool = False, nounits: bool = False) -> str:
    """`nvidia-smi --query-gpu=a,b --format=csv[,noheader][,nounits]`."""
    for f in fields:
        if f not in _GPU_FIELDS:
            raise KeyError(f)
    out = []
    if not noheader:
        heads = []
        for f in fields:
            head, unit, _ = _GPU_FIELDS[f]
            heads.append(head if (unit is None or nounits) else "%s [%s]" % (head, unit))
        out.append(", ".join(heads))
    for g in state["gpus"]:
        vals = []
        for f in fields:
            _, unit, get = _GPU_FIELDS[f]
            v = str(get(state, g))
            if unit and not nounits:
                v = v + unit if unit == "%" else "%s %s" % (v, unit)
            vals.append(v)
        out.append(", ".join(vals))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- RDMA tools

def _ib_mtu(netdev_mtu: int) -> tuple[int, int]:
    """RoCE active MTU: the largest IB MTU that fits in the netdev MTU (minus RoCE headers)."""
    best = (256, 1)
    for code, size in ((1, 256), (2, 512), (3, 1024), (4, 2048), (5, 4096)):
        if size + 96 <= netdev_mtu:
            best = (size, code)
    return best


def render_ibdev2netdev(state: dict, links: dict[str, tuple[bool, int]], verbose: bool = False) -> str:
    """`ibdev2netdev [-v]`; links: netdev -> (up, mtu) as read from /sys/class/net."""
    out = []
    for dev, h in sorted(state["hcas"].items()):
        up = links.get(h["netdev"], (False, 0))[0]
        if verbose:
            out.append("%s %s (MT%d - %s) CX455A - ConnectX-4 QSFP28 fw %s port 1 (%s) ==> %s (%s)" % (
                h["pci"], dev, h["vendor_part_id"], h["serial"], h["fw_ver"],
                "ACTIVE" if up else "DOWN", h["netdev"], "Up" if up else "Down"))
        else:
            out.append("%s port 1 ==> %s (%s)" % (dev, h["netdev"], "Up" if up else "Down"))
    return "\n".join(out) + "\n"


def _roce_gids(mac_guid: str, addresses: list[str]) -> list[str]:
    """GID table entries: link-local (from the GUID) then one IPv4-mapped GID per address, each
    listed for RoCE v1 and v2 (what rdma-core 20+ prints with -v)."""
    g = mac_guid.replace(":", "")
    ll = "fe80:0000:0000:0000:%s:%s:%s:%s" % (g[0:4], g[4:8], g[8:12], g[12:16])
    gids = [ll + ", RoCE v1", ll + ", RoCE v2"]
    for a in addresses:
        o = [int(x) for x in a.split(".")]
        v4 = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(o)
        gids += [v4 + ", RoCE v1", v4 + ", RoCE v2"]
    return gids


def render_ibv_devinfo(state: dict, links: dict[str, tuple[bool, int]], device: str | None = None,
                       verbose: bool = False, addresses: dict[str, list[str]] | None = None) -> str:
    """`ibv_devinfo [-d DEV] [-v]` (rdma-core layout, tabs as the real tool prints them)."""
    addresses = addresses or {}
    out = []
    devs = sorted(state["hcas"]) if device is None else [hca_for(state, device)[0]]
    for dev in devs:
        h = state["hcas"][dev]
        up, mtu = links.get(h["netdev"], (False, 0))
        link_type = h["mlxconfig"]["LINK_TYPE_P1"]["current"]
        layer = "Ethernet" if link_type == 2 else "InfiniBand"
        act_size, act_code = _ib_mtu(mtu) if layer == "Ethernet" else (4096, 5)
        out += [
            "hca_id:\t%s" % dev,
            "\ttransport:\t\t\tInfiniBand (0)",
            "\tfw_ver:\t\t\t\t%s" % h["fw_ver"],
            "\tnode_guid:\t\t\t%s" % h["node_guid"],
            "\tsys_image_guid:\t\t\t%s" % h["node_guid"],
            "\tvendor_id:\t\t\t0x02c9",
            "\tvendor_part_id:\t\t\t%d" % h["vendor_part_id"],
            "\thw_ver:\t\t\t\t0x0",
            "\tboard_id:\t\t\t%s" % h["board_id"],
            "\tphys_port_cnt:\t\t\t1",
        ]
        if verbose:
            out += [
                "\tmax_mr_size:\t\t\t0xffffffffffffffff",
                "\tpage_size_cap:\t\t\t0xfffffffffffff000",
                "\tmax_qp:\t\t\t\t262144",
                "\tmax_qp_wr:\t\t\t32768",
                "\tdevice_cap_flags:\t\t0xe97e1c36",
                "\tmax_sge:\t\t\t30",
                "\tmax_cq:\t\t\t\t16777216",
                "\tmax_cqe:\t\t\t4194303",
                "\tmax_mr:\t\t\t\t16777216",
                "\tmax_pd:\t\t\t\t16777216",
                "\tatomic_cap:\t\t\tATOMIC_HCA (1)",
            ]
        out += [
            "\t\tport:\t1",
            "\t\t\tstate:\t\t\t%s" % ("PORT_ACTIVE (4)" if up else "PORT_DOWN (1)"),
            "\t\t\tmax_mtu:\t\t4096 (5)",
            "\t\t\tactive_mtu:\t\t%d (%d)" % (act_size, act_code),
            "\t\t\tsm_lid:\t\t\t0",
            "\t\t\tport_lid:\t\t0",
            "\t\t\tport_lmc:\t\t0x00",
            "\t\t\tlink_layer:\t\t%s" % layer,
        ]
        if verbose:
            out += [
                "\t\t\tmax_msg_sz:\t\t0x40000000",
                "\t\t\tport_cap_flags:\t\t0x04010000",
                "\t\t\tmax_vl_num:\t\tinvalid value (0)",
                "\t\t\tbad_pkey_cntr:\t\t0x0",
                "\t\t\tqkey_viol_cntr:\t\t0x0",
                "\t\t\tsm_sl:\t\t\t0",
                "\t\t\tpkey_tbl_len:\t\t1",
                "\t\t\tgid_tbl_len:\t\t256",
                "\t\t\tsubnet_timeout:\t\t0",
                "\t\t\tinit_type_reply:\t0",
                "\t\t\tactive_width:\t\t4X (2)",
                "\t\t\tactive_speed:\t\t25.0 Gbps (32)",
                "\t\t\tphys_state:\t\t%s" % ("LINK_UP (5)" if up else "DISABLED (3)"),
            ]
            for n, gid in enumerate(_roce_gids(h["node_guid"], addresses.get(h["netdev"], []))):
                out.append("\t\t\tGID[%3d]:\t\t%s" % (n, gid))
        out.append("")
    return "\n".join(out) + "\n"


def _mlx_value(param: str, value: int) -> str:
    names = MLXCONFIG_PARAMS.get(param)
    return "%s(%d)" % (names[value], value) if names and value in names else str(value)


def parse_mlx_value(param: str, text: str) -> int:
    """`2`, `ETH`, `eth`, `ETH(2)`, `True` -> int; ValueError if the parameter does not take it."""
    names = MLXCONFIG_PARAMS.get(param)
    t = text.strip()
    if "(" in t and t.endswith(")"):
        t = t[t.index("(") + 1:-1]
    if t.isdigit():
        v = int(t)
        if names and v not in names:
            raise ValueError(text)
        return v
    if names:
        for v, n in names.items():
            if n.lower() == t.lower():
                return v
    raise ValueError(text)


def _mlx_header(h: dict, device: str) -> list[str]:
    return [
        "",
        "Device #1:",
        "----------",
        "",
        "Device type:    ConnectX4       ",
        "Name:           %-16s" % h["part_number"],
        "Description:    ConnectX-4 VPI adapter card; EDR IB (100Gb/s) and 100GbE; single-port QSFP28; "
        "PCIe3.0 x16; ROHS R6",
        "Device:         %-16s" % device,
        "",
    ]


def render_mlxconfig_query(state: dict, device: str, params: list[str] | None = None) -> str:
    """`mlxconfig -d DEV q [PARAM...]` (the 'Next Boot' column, as mlxconfig prints without -e)."""
    _, h = hca_for(state, device)
    names = params or sorted(h["mlxconfig"])
    out = _mlx_header(h, device) + ["Configurations:" + " " * 30 + "Next Boot"]
    for p in names:
        out.append("         %-36s%-16s" % (p, _mlx_value(p, h["mlxconfig"][p]["next_boot"])))
    return "\n".join(out) + "\n"


def render_mlxconfig_set(state: dict, device: str, changes: dict[str, int], assume_yes: bool) -> str:
    """The table `mlxconfig -d DEV [-y] set P=V` prints before applying (state not yet changed)."""
    _, h = hca_for(state, device)
    out = _mlx_header(h, device) + ["Configurations:" + " " * 30 + "Next Boot       New"]
    for p, v in changes.items():
        out.append("         %-36s%-16s%-16s" % (p, _mlx_value(p, h["mlxconfig"][p]["next_boot"]), _mlx_value(p, v)))
    out += ["", " Apply new Configuration? (y/n) [n] :" + (" y" if assume_yes else "")]
    return "\n".join(out) + ("\n" if assume_yes else "")


# the OFED release a simulated node runs (per node: "ofed" in /etc/podsim/hardware.json); it picks the
# mlnx_qos format and is what the ofed_info stand-in prints
OFED_DEFAULT = "MLNX_OFED_LINUX-24.10-1.1.4.0"


def ofed_release(state: dict) -> tuple[int, int]:
    """(major, minor) of the node's OFED ("MLNX_OFED_LINUX-5.8-3.0.7.0" -> (5, 8), "OFED-internal-25.01-..."
    -> (25, 1)); the default release when the state names none."""
    text = str(state.get("ofed") or OFED_DEFAULT)
    for part in text.replace("_", "-").split("-"):
        bits = part.split(".")
        if len(bits) >= 2 and bits[0].isdigit() and bits[1].isdigit():
            return int(bits[0]), int(bits[1])
    raise ValueError("no release number in the OFED version %r" % text)


def render_mlnx_qos(state: dict, netdev: str) -> str:
    """`mlnx_qos -i IF` in the format of the node's OFED (mlnx-tools pretty_print at that release): before
    5.2 the eight buffer sizes only; 5.2 - 23.04 `total_size=N` after them and the TCs in python3 dict
    order (tc 1 first); 23.07 and later (DOCA-OFED included) `max_buffer_size=N` and sorted TCs."""
    q = state["qos"][netdev]
    release = ofed_release(state)
    out = ["DCBX mode: OS controlled", "Priority trust state: %s" % q["trust"]]
    if q["trust"] == "dscp":
        out.append("dscp2prio mapping:")
        for prio in range(8):
            dscps = ",".join("%02d" % d for d in range(prio * 8 + 7, prio * 8 - 1, -1))
            out.append("\tprio:%d dscp:%s," % (prio, dscps))
    lossless = [p for p in range(8) if q["pfc"][p]]
    buffers = [1 if q["pfc"][p] else 0 for p in range(8)]
    sizes = ",".join(["130944", "130944" if lossless else "0"] + ["0"] * 6) + ","
    if release >= (23, 7):
        sizes += "max_buffer_size=262016"
    elif release >= (5, 2):
        sizes += "total_size=262016"
    if release < (5, 2):
        out.append("default priority:")
    out += [
        "Receive buffer size (bytes): %s" % sizes,
        "Cable len: %d" % q["cable_len"],
        "PFC configuration:",
        "\tpriority    " + "".join("%-4d" % p for p in range(8)).rstrip(),
        "\tenabled     " + "".join("%-4d" % v for v in q["pfc"]),
        "\tbuffer      " + "".join("%-4d" % v for v in buffers),
    ]
    prio_tc = [1, 0, 2, 3, 4, 5, 6, 7]
    tc2up: dict[int, list[int]] = {}
    for prio, tc in enumerate(prio_tc):
        tc2up.setdefault(tc, []).append(prio)
    for tc in (sorted(tc2up) if release >= (23, 7) or release < (5, 2) else tc2up):
        out.append("tc: %d ratelimit: unlimited, tsa: vendor" % tc)
        out += ["\t priority:  %d" % prio for prio in tc2up[tc]]
    return "\n".join(out) + "\n"


def render_cma_roce_mode(mode: int) -> str:
    return ROCE_MODES[mode] + "\n"


# --------------------------------------------------------------------------- fake sysfs tree

FAKE_GID_TABLE_LEN = 16  # real ConnectX ports have 256 slots; 16 is plenty for a simulated node
GID_TYPE_NAMES = {"RoCE v1": "IB/RoCE v1", "RoCE v2": "RoCE v2"}  # what the kernel prints in gid_attrs/types


def fake_sysfs_files(state: dict, addresses: dict[str, list[str]],
                     table_len: int = FAKE_GID_TABLE_LEN) -> dict[str, str]:
    """The files of a fake ``/sys`` for this node's HCAs: relative path -> content (pure).

    Per HCA ``mlx5_N`` (port 1), like a real ConnectX in Ethernet (RoCE) mode: ``ports/1/gids/<i>`` for
    ``i < table_len`` (empty slots all-zero), ``ports/1/gid_attrs/types/<i>`` ("IB/RoCE v1" / "RoCE v2") and
    ``gid_attrs/ndevs/<i>`` (the netdev) for populated slots only - a real kernel refuses to read the type
    of an empty slot. Slots 0/1 are the link-local GID (v1/v2), then v1/v2 per IPv4 address of the netdev
    (``addresses[netdev]``), so one address gives the usual 2/3. Also ``ports/1/link_layer`` (from the
    *current* LINK_TYPE_P1), ``fw_ver``, ``node_guid`` and the PCI device directory with ``net/<netdev>``.
    Port state is not written: it changes at run time and the stand-ins' tools report it live. The port counters and
    ``ports/1/rate`` are :func:`fake_counter_files` (written only where missing)."""
    files: dict[str, str] = {}
    zero = ":".join(["0000"] * 8)
    for dev, h in sorted(state["hcas"].items()):
        base = "sys/class/infiniband/%s" % dev
        port = base + "/ports/1"
        files[base + "/fw_ver"] = h["fw_ver"] + "\n"
        files[base + "/node_guid"] = h["node_guid"] + "\n"
        layer = "Ethernet" if h["mlxconfig"]["LINK_TYPE_P1"]["current"] == 2 else "InfiniBand"
        files[port + "/link_layer"] = layer + "\n"
        entries = _roce_gids(h["node_guid"], list(addresses.get(h["netdev"], []))) if layer == "Ethernet" else []
        if len(entries) > table_len:
            raise ValueError("%s: %d GIDs do not fit a %d-slot table" % (dev, len(entries), table_len))
        for i in range(table_len):
            if i < len(entries):
                gid, gtype = entries[i].split(", ")
                files["%s/gids/%d" % (port, i)] = gid + "\n"
                files["%s/gid_attrs/types/%d" % (port, i)] = GID_TYPE_NAMES[gtype] + "\n"
                files["%s/gid_attrs/ndevs/%d" % (port, i)] = h["netdev"] + "\n"
            else:
                files["%s/gids/%d" % (port, i)] = zero + "\n"
        pci_dir = "sys/bus/pci/devices/%s" % h["pci"]
        files[pci_dir + "/net/%s/.podsim" % h["netdev"]] = ""  # directory marker (sysfs lists netdevs here)
        files[pci_dir + "/infiniband/%s/.podsim" % dev] = ""
    return files


# The port counters of a ConnectX in RoCE mode, by the names a real mlx5 port has (prometheus/procfs's sysfs
# fixture of mlx5_0, testdata/fixtures.ttar; leptonai/gpud PR 943, a ConnectX-7; tests/unit/fixtures/fabric/):
# ``ports/1/counters/`` (IBTA PortCounters / PortCountersExtended) and ``ports/1/hw_counters/`` (mlx5's own).
FAKE_PORT_COUNTERS = (
    "VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
    "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets", "port_rcv_constraint_errors",
    "port_rcv_data", "port_rcv_errors", "port_rcv_packets", "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors", "port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards",
    "port_xmit_packets", "port_xmit_wait", "symbol_error", "unicast_rcv_packets", "unicast_xmit_packets")
FAKE_HW_COUNTERS = (
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "out_of_buffer",
    "out_of_sequence", "packet_seq_err", "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
    "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error",
    "resp_remote_access_errors", "rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart",
    "roce_slow_restart_cnps", "roce_slow_restart_trans", "rx_atomic_requests", "rx_dct_connect", "rx_read_requests",
    "rx_write_requests")
# ports/<p>/rate as the kernel prints it (drivers/infiniband/core/sysfs.c rate_show: "%d%s Gb/sec (%dX%s)"); a
# ConnectX-4 at 100GbE reports 4X EDR
FAKE_PORT_RATE = "100 Gb/sec (4X EDR)"
# hw_counters/lifespan is the driver's refresh period in ms (10 in the procfs fixture), not a count
FAKE_COUNTER_START = {"lifespan": 10}


def fake_counter_files(state: dict) -> dict[str, str]:
    """The port counter files of every HCA (port 1): relative path -> the healthy value, 0 (``lifespan`` 10) -
    a healthy port whose counters do not rise -, and the port's ``rate`` (:data:`FAKE_PORT_RATE`) (pure).
    :func:`write_fake_counters` writes them only where they are missing: a fault's ticker (podsim-hca-ticker)
    raises the counters while the validation runs, and a re-run of ``podsim up`` must not set them back under it."""
    files: dict[str, str] = {}
    for dev in sorted(state["hcas"]):
        port = "sys/class/infiniband/%s/ports/1" % dev
        files[port + "/rate"] = FAKE_PORT_RATE + "\n"
        for sub, names in (("counters", FAKE_PORT_COUNTERS), ("hw_counters", FAKE_HW_COUNTERS)):
            for name in names:
                files["%s/%s/%s" % (port, sub, name)] = "%d\n" % FAKE_COUNTER_START.get(name, 0)
    return files


def fake_sysfs_links(state: dict, live_class_net: str = "/sys/class/net") -> dict[str, str]:
    """Symlinks of the fake tree: relative path -> target (pure). ``infiniband/<dev>/device`` points at the
    PCI device directory as on a real host; ``sys/class/net`` points at the node's live ``/sys/class/net``
    so kernel MTU and operstate read through the fake root are the real (veth) values."""
    links = {"sys/class/net": live_class_net}
    for dev, h in sorted(state["hcas"].items()):
        links["sys/class/infiniband/%s/device" % dev] = "../../../bus/pci/devices/%s" % h["pci"]
    return links


def write_fake_sysfs(root: str, state: dict, addresses: dict[str, list[str]],
                     live_class_net: str = "/sys/class/net") -> list[str]:
    """Write (or bring up to date) the fake sysfs tree under ``root`` (e.g. the node's
    ``/etc/podsim/sysfs``): ``root/sys/class/infiniband/mlx5_N/...`` from ``fake_sysfs_files`` and the
    links from ``fake_sysfs_links``. Idempotent: only files whose content differs are rewritten, GID files
    of the simulated HCAs that are no longer wanted are removed; the port counters are written only where missing
    (:func:`write_fake_counters`). Returns the relative paths it changed."""
    changed = write_fake_counters(root, state)
    files = fake_sysfs_files(state, addresses)
    for rel, text in sorted(files.items()):
        path = os.path.join(root, rel)
        try:
            with open(path) as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        changed.append(rel)
    for rel, target in sorted(fake_sysfs_links(state, live_class_net).items()):
        path = os.path.join(root, rel)
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.remove(path)
        os.symlink(target, path)
        changed.append(rel)
    for dev in state["hcas"]:  # stale entries (an address removed from the model)
        pdir = os.path.join(root, "sys/class/infiniband", dev, "ports/1")
        for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
            d = os.path.join(pdir, sub)
            for name in os.listdir(d) if os.path.isdir(d) else []:
                rel = os.path.relpath(os.path.join(d, name), root)
                if rel not in files:
                    os.remove(os.path.join(d, name))
                    changed.append(rel)
    return changed


def counter_tmp_path(path: str) -> str:
    """Where a counter file's new value is written before it replaces the file: beside the ``counters/`` directory
    (``ports/1/.<dir>.<name>.podsim-tmp``), so a reader listing ``counters/`` never meets a temporary file."""
    d, name = os.path.split(path)
    return os.path.join(os.path.dirname(d), ".%s.%s.podsim-tmp" % (os.path.basename(d), name))


def write_fake_counters(root: str, state: dict) -> list[str]:
    """Write the port counter files and rates (:func:`fake_counter_files`) under ``root`` that do not exist yet; one
    that exists keeps its value (a fault's ticker may be raising it). Returns the relative paths it wrote. ``podsim
    up`` calls it for every DGX (step 'HCA counter stand-in files'), so a node built before the counters existed gets
    them without a rebuild."""
    written = []
    for rel, text in sorted(fake_counter_files(state).items()):
        path = os.path.join(root, rel)
        if os.path.exists(path):
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = counter_tmp_path(path)
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        written.append(rel)
    return written


# --------------------------------------------------------------------------- runtime (impure)

def state_path() -> str:
    return os.environ.get("PODSIM_HW_STATE", STATE_PATH)


def load_state() -> dict:
    with open(state_path()) as f:
        return json.load(f)


def save_state(state: dict) -> None:
    path = state_path()
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def read_links(state: dict, sysfs: str = "/sys/class/net") -> dict[str, tuple[bool, int]]:
    links = {}
    for h in state["hcas"].values():
        nd = h["netdev"]
        try:
            with open(os.path.join(sysfs, nd, "operstate")) as f:
                up = f.read().strip() in ("up", "unknown")
            with open(os.path.join(sysfs, nd, "mtu")) as f:
                mtu = int(f.read())
        except OSError:
            up, mtu = False, 0
        links[nd] = (up, mtu)
    return links


def read_addresses(state: dict) -> dict[str, list[str]]:
    import subprocess
    out = {}
    for h in state["hcas"].values():
        try:
            txt = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", h["netdev"]],
                                 capture_output=True, text=True, check=False).stdout
        except OSError:
            txt = ""
        out[h["netdev"]] = [w.split()[3].split("/")[0] for w in txt.splitlines() if len(w.split()) > 3]
    return out


def _err(msg: str, code: int = 1) -> int:
    sys.stderr.write(msg.rstrip("\n") + "\n")
    return code


def main_nvidia_smi(args: list[str], state: dict) -> int:
    import podsim_gpu  # -q -x, nvlink, topo and the injected GPU faults (sim/standins/podsim_gpu.py)
    if args and args[0] in ("-q", "-x", "nvlink", "topo"):
        return podsim_gpu.main_nvidia_smi(args, state, save_state)
    state = podsim_gpu.effective_state(state)
    if not args:
        sys.stdout.write(render_nvidia_smi(state))
        return 0
    if args[0] in ("-L", "--list-gpus"):
        sys.stdout.write(render_nvidia_smi_list(state))
        return 0
    query, fmt = None, None
    it = iter(args)
    for a in it:
        if a.startswith("--query-gpu="):
            query = a.split("=", 1)[1]
        elif a == "--query-gpu":
            query = next(it, "")
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a == "--format":
            fmt = next(it, "")
        else:
            return _err("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
                        "(%s: option %r not simulated)" % (STANDIN_NOTE, a), 2)
    if query is None or fmt is None or "csv" not in fmt.split(","):
        return _err("Missing --query-gpu or --format=csv. (%s)" % STANDIN_NOTE, 2)
    flags = fmt.split(",")
    fields = [f.strip() for f in query.split(",") if f.strip()]
    try:
        sys.stdout.write(render_query_gpu(state, fields, "noheader" in flags, "nounits" in flags))
    except KeyError as e:
        return _err('Field "%s" is not a valid field to query.' % e.args[0], 2)
    return 0


def main_ibdev2netdev(args: list[str], state: dict) -> int:
    sys.stdout.write(render_ibdev2netdev(state, read_links(state), verbose="-v" in args))
    return 0


def main_ibv_devinfo(args: list[str], state: dict) -> int:
    device, verbose = None, False
    it = iter(args)
    for a in it:
        if a in ("-d", "--ib-dev"):
            device = next(it, None)
        elif a.startswith("--ib-dev="):
            device = a.split("=", 1)[1]
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-i", "--ib-port"):
            next(it, None)
        elif a == "-l" or a == "--list":
            n = len(state["hcas"])
            sys.stdout.write("%d HCA%s found:\n" % (n, "s" if n != 1 else "")
                             + "".join("\t%s\n" % d for d in sorted(state["hcas"])))
            return 0
    try:
        sys.stdout.write(render_ibv_devinfo(state, read_links(state), device, verbose,
                                            read_addresses(state) if verbose else None))
    except KeyError:
        return _err("IB device '%s' wasn't found" % device, 255)
    return 0


def main_mlxconfig(args: list[str], state: dict) -> int:
    device, yes, rest = None, False, []
    it = iter(args)
    for a in it:
        if a in ("-d", "--dev"):
            device = next(it, None)
        elif a in ("-y", "--yes"):
            yes = True
        elif a in ("-e", "--enable_verbosity"):
            pass
        else:
            rest.append(a)
    if not device:
        return _err("-E- Device is not specified (%s)" % STANDIN_NOTE, 1)
    try:
        dev, h = hca_for(state, device)
    except KeyError:
        return _err("-E- Failed to open device: %s. No such file or directory" % device)
    if not rest or rest[0] in ("q", "query"):
        params = rest[1:]
        bad = [p for p in params if p not in h["mlxconfig"]]
        if bad:
            return _err("-E- The Device doesn't support %s parameter" % bad[0])
        sys.stdout.write(render_mlxconfig_query(state, device, params))
        return 0
    if rest[0] in ("s", "set"):
        changes = {}
        for kv in rest[1:]:
            if "=" not in kv:
                return _err("-E- Failed to parse the configuration: %s" % kv)
            k, v = kv.split("=", 1)
            if k not in h["mlxconfig"]:
                return _err("-E- The Device doesn't support %s parameter" % k)
            try:
                changes[k] = parse_mlx_value(k, v)
            except ValueError:
                return _err("-E- Unknown value %s for parameter %s" % (v, k))
        if not changes:
            return _err("-E- No parameters to set")
        sys.stdout.write(render_mlxconfig_set(state, device, changes, yes))
        if not yes:
            sys.stdout.flush()
            answer = sys.stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                sys.stdout.write("Aborted by user\n")
                return 1
        for k, v in changes.items():
            h["mlxconfig"][k]["next_boot"] = v
        save_state(state)
        sys.stdout.write("Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
        return 0
    return _err("-E- Unknown command: %s (%s)" % (rest[0], STANDIN_NOTE))


def main_mlnx_qos(args: list[str], state: dict) -> int:
    iface, trust, pfc, cable = None, None, None, None
    it = iter(args)
    for a in it:
        if a in ("-i", "--interface"):
            iface = next(it, None)
        elif a == "--trust":
            trust = next(it, None)
        elif a.startswith("--trust="):
            trust = a.split("=", 1)[1]
        elif a in ("-f", "--pfc"):
            pfc = next(it, None)
        elif a.startswith("--pfc="):
            pfc = a.split("=", 1)[1]
        elif a == "--cable_len":
            cable = next(it, None)
        else:
            return _err("mlnx_qos: option %s not simulated (%s)" % (a, STANDIN_NOTE), 2)
    if not iface:
        return _err("Usage: mlnx_qos -i <interface> [options]", 2)
    if iface not in state["qos"]:
        return _err("Netlink error: interface %s has no DCB support" % iface)
    q = state["qos"][iface]
    if trust is not None:
        if trust not in ("pcp", "dscp"):
            return _err("Invalid trust state: %s" % trust, 2)
        q["trust"] = trust
    if pfc is not None:
        vals = pfc.split(",")
        if len(vals) != 8 or any(v not in ("0", "1") for v in vals):
            return _err("pfc: expected 8 comma-separated values of 0 or 1, got %s" % pfc, 2)
        q["pfc"] = [int(v) for v in vals]
    if cable is not None:
        q["cable_len"] = int(cable)
    if trust is not None or pfc is not None or cable is not None:
        save_state(state)
    sys.stdout.write(render_mlnx_qos(state, iface))
    return 0


def main_ofed_info(args: list[str], state: dict) -> int:
    """`ofed_info -s` prints the release and a colon (`MLNX_OFED_LINUX-24.10-1.1.4.0:`)."""
    if args not in (["-s"], ["-n"]):
        return _err("ofed_info: only -s and -n are simulated (%s)" % STANDIN_NOTE, 2)
    version = str(state.get("ofed") or OFED_DEFAULT)
    if args == ["-n"]:
        sys.stdout.write("%d.%d\n" % ofed_release(state))
    else:
        sys.stdout.write(version + ":\n")
    return 0


def main_cma_roce_mode(args: list[str], state: dict) -> int:
    device, port, mode = None, "1", None
    it = iter(args)
    for a in it:
        if a == "-d":
            device = next(it, None)
        elif a == "-p":
            port = next(it, None)
        elif a == "-m":
            mode = next(it, None)
        else:
            return _err("Usage: cma_roce_mode -d <dev> -p <port> [-m <1|2>]", 1)
    if not device or port != "1":
        return _err("Usage: cma_roce_mode -d <dev> -p <port> [-m <1|2>]", 1)
    try:
        dev, h = hca_for(state, device)
    except KeyError:
        return _err("Device %s not found" % device)
    if mode is not None:
        if mode not in ("1", "2"):
            return _err("Usage: cma_roce_mode -d <dev> -p <port> [-m <1|2>]", 1)
        h["roce_mode"] = int(mode)
        save_state(state)
    sys.stdout.write(render_cma_roce_mode(h["roce_mode"]))
    return 0


TOOLS = {
    "nvidia-smi": main_nvidia_smi,
    "ibdev2netdev": main_ibdev2netdev,
    "ibv_devinfo": main_ibv_devinfo,
    "mlxconfig": main_mlxconfig,
    "mlnx_qos": main_mlnx_qos,
    "cma_roce_mode": main_cma_roce_mode,
    "ofed_info": main_ofed_info,
}


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    if tool not in TOOLS:
        return _err("%s: call me as one of %s" % (STANDIN_NOTE, ", ".join(sorted(TOOLS))), 2)
    try:
        state = load_state()
    except OSError:
        if tool == "nvidia-smi":
            return _err("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                        "Make sure that the latest NVIDIA driver is installed and running.", 9)
        return _err("%s: no devices found" % tool, 1)
    return TOOLS[tool](argv[1:], state)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
