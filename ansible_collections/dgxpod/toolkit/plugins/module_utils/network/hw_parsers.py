# -*- coding: utf-8 -*-
"""Parsers for the hardware tools on a DGX host (pure functions, stdlib only).

Each ``parse_*`` function takes the text a tool printed and returns plain data. They are tested against
outputs captured on real machines (tests/unit/fixtures/hw/, each with a ``.source`` note) and against the
simulator's stand-ins (sim/standins/). Input they cannot read raises ``ParseError`` (a
``ValueError``) that names the tool, the line number and the line, never an IndexError from deep inside.

Tools: ``ibdev2netdev [-v]``, ``ibv_devinfo [-v]``, ``nvidia-smi --query-gpu=... --format=csv[,noheader]
[,nounits]`` and ``nvidia-smi -L``, ``mlxconfig [-e] query``, ``mlnx_qos -i IF``, ``cma_roce_mode``,
``show_gids`` (NCCL logs: module_utils/nccl/parse.py). GID tables from sysfs
(``/sys/class/infiniband/<dev>/ports/<port>/{gids,gid_attrs/types,gid_attrs/ndevs}/<i>``) are read by
``read_sysfs_gid_table`` and the RoCEv2 IPv4 GID index is chosen by the pure ``select_roce_v2_ipv4_gid``.
"""
from __future__ import annotations

import ipaddress
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.mlx_parse import (mlxconfig_link_types,
    parse_mlnx_qos, parse_mlxconfig_query, split_mlx_value)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import (ParseError, complete_lines,
    content_lines, parse_int)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.smi_parse import (parse_nvidia_smi_list,
    parse_nvidia_smi_query)

# The nvidia-smi parsers live in smi_parse, mlxconfig/mlnx_qos in mlx_parse; callers may import them from here.
__all__ = ["ParseError", "GidResolutionError", "parse_ibdev2netdev", "parse_ibv_devinfo", "parse_nvidia_smi_list",
           "parse_nvidia_smi_query", "parse_mlxconfig_query", "mlxconfig_link_types", "split_mlx_value",
           "parse_mlnx_qos", "parse_cma_roce_mode", "parse_show_gids", "read_sysfs_gid_table",
           "select_roce_v2_ipv4_gid", "resolve_roce_v2_gid_index", "gid_ipv4", "full_gid", "gid_is_zero",
           "normalize_gid_type", "ib_port_dir"]


class GidResolutionError(ValueError):
    """The RoCEv2 GID for an address is not in a device's GID table (names device, port and address)."""


# --------------------------------------------------------------------------- ibdev2netdev

_IBDEV_PLAIN = re.compile(
    r"^(?P<dev>\S+)\s+port\s+(?P<port>\d+)\s+(?P<arrow>==>|<===>)\s*(?P<netdev>[^\s()]*)"
    r"(?:\s+\((?P<state>[^)]*)\))?(?P<rest>.*)$")
_IBDEV_VERBOSE = re.compile(
    r"^(?:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+)?(?P<dev>\S+)\s+"
    r"\((?P<devid>[^\s)]+)\s+-\s+(?P<part>[^)]*?)\s*\)\s*(?P<desc>.*?)\s*\bfw\s+(?P<fw>\S+)\s+"
    r"port\s+(?P<port>\d+)\s+\((?P<pstate>[^)]*?)\s*\)\s+==>\s*(?P<netdev>[^\s()]*)"
    r"(?:\s+\((?P<state>[^)]*)\))?(?P<rest>.*)$")


def parse_ibdev2netdev(text: str) -> List[Dict[str, Any]]:
    """``ibdev2netdev`` and ``ibdev2netdev -v`` (MLNX_OFED / mlnx-tools), one dict per RDMA port::

        {"rdma_device": "mlx5_0", "port": 1, "netdev": "enp5s0", "state": "Up"}      # plain
        + {"pci": "0000:02:00.0", "device_id": "MT4115", "part": "MT1523X04353",      # -v adds
           "description": "CX456A - ConnectX-4 QSFP", "fw": "12.23.1020", "port_state": "ACTIVE"}

    ``state`` is the netdev's carrier (Up/Down; None in the old ``<===>`` style); ``port_state`` the IB port
    state. Blank lines are skipped; any other line that does not parse raises ParseError."""
    out = []
    for n, line, s in content_lines("ibdev2netdev", text):
        m = _IBDEV_VERBOSE.match(s)
        if m:
            d = {"rdma_device": m["dev"], "port": int(m["port"]), "netdev": m["netdev"] or None,
                 "state": m["state"].strip() if m["state"] else None, "pci": m["pci"],
                 "device_id": m["devid"], "part": m["part"].strip() or None,
                 "description": m["desc"].strip() or None, "fw": m["fw"], "port_state": m["pstate"].strip()}
        else:
            m = _IBDEV_PLAIN.match(s)
            if not m or m["rest"].strip() and not re.match(r"^\([^()]*\)$", m["rest"].strip()) \
                    or "(" in s and s.count("(") != s.count(")"):
                raise ParseError("ibdev2netdev", "expected 'mlx5_0 port 1 ==> enp5s0 (Up)' or the -v form", n, line)
            d = {"rdma_device": m["dev"], "port": int(m["port"]), "netdev": m["netdev"] or None,
                 "state": m["state"].strip() if m["state"] else None}
        out.append(d)
    return out


# --------------------------------------------------------------------------- ibv_devinfo

_CODED = re.compile(r"^(?P<name>.*?)\s*\((?P<code>-?\d+)\)$")  # "PORT_ACTIVE (4)", "4096 (5)"
_GID_LINE = re.compile(r"^GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9a-fA-F:.]+)(?:\s*,\s*(?P<type>.+))?$")
# keys ibv_devinfo prints for every port (devinfo.c print_hca_cap), in a port section only
_PORT_REQUIRED = ("state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc")
_PORT_ONLY = _PORT_REQUIRED + ("link_layer", "max_msg_sz", "port_cap_flags", "port_cap_flags2", "max_vl_num",
                               "bad_pkey_cntr", "qkey_viol_cntr", "sm_sl", "pkey_tbl_len", "gid_tbl_len",
                               "subnet_timeout", "init_type_reply", "active_width", "active_speed", "phys_state")
_DEVICE_ONLY = ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id", "hw_ver",
                "board_id", "phys_port_cnt")
_PORT_NUMERIC = ("max_mtu", "active_mtu")
_PORT_CODED = ("state", "phys_state", "max_mtu", "active_mtu", "active_width", "active_speed")


def gid_ipv4(gid: str) -> Optional[str]:
    """The IPv4 address of an IPv4-mapped GID (``::ffff:a.b.c.d``, e.g. 0000:...:ffff:c612:050b), else None."""
    try:
        addr = ipaddress.IPv6Address(gid.strip())
    except ValueError:
        return None
    return str(addr.ipv4_mapped) if addr.ipv4_mapped is not None else None


def full_gid(gid: str) -> str:
    """Any IPv6 text form of a GID -> the kernel's full form ``0000:0000:0000:0000:0000:ffff:0a37:05e7``
    (what sysfs and ibv_devinfo before rdma-core 29 print). ValueError when it is not an IPv6 address."""
    return ipaddress.IPv6Address(gid.strip()).exploded.lower()


def gid_is_zero(gid: str) -> bool:
    try:
        return int(ipaddress.IPv6Address(gid.strip())) == 0
    except ValueError:
        return False


def normalize_gid_type(text: Optional[str]) -> Optional[str]:
    """'RoCE v2' / 'RoCE V2' / 'v2' -> 'RoCE v2'; 'IB/RoCE v1' / 'RoCE v1' / 'v1' -> 'RoCE v1'; 'IB' -> 'IB'."""
    if text is None:
        return None
    t = text.strip().lower().replace(" ", "")
    if t in ("rocev2", "v2", "roce_v2", "roceudpencap"):
        return "RoCE v2"
    if t in ("ib/rocev1", "rocev1", "v1", "roce_v1"):
        return "RoCE v1"
    if t == "ib":
        return "IB"
    return text.strip()


def parse_ibv_devinfo(text: str) -> List[Dict[str, Any]]:
    """``ibv_devinfo [-v] [-d DEV]`` (rdma-core / MLNX_OFED), one dict per device::

        {"hca_id": "mlx5_3", "fw_ver": "12.18.1000", "vendor_part_id": 4115, "board_id": "MT_2180110032",
         "phys_port_cnt": 1, ..., "ports": {1: {"state": "PORT_ACTIVE", "state_code": 4,
         "max_mtu": 4096, "max_mtu_code": 5, "active_mtu": 4096, "active_mtu_code": 5,
         "link_layer": "Ethernet", ..., "gids": [{"index": 0, "gid": "fe80:...", "type": "RoCE v1",
         "ipv4": None}, ...]}}}

    Coded values ``NAME (n)`` give ``key`` (NAME, or the number for MTUs) and ``key_code`` (n). Flag
    lists under ``device_cap_flags`` are kept as lists. ``No IB devices found`` gives []."""
    tool = "ibv_devinfo"
    devices: List[Dict[str, Any]] = []
    dev: Optional[Dict[str, Any]] = None
    port: Optional[Dict[str, Any]] = None
    last_key: Optional[Tuple[Dict[str, Any], str]] = None
    for n, line, s in content_lines(tool, text):
        if s.lower().startswith("no ib devices found"):
            continue
        g = _GID_LINE.match(s.lstrip("*"))
        if g:
            if port is None:
                raise ParseError(tool, "GID entry outside a 'port:' section", n, line)
            try:
                gid = full_gid(g["gid"])
            except ValueError:
                raise ParseError(tool, "expected a GID (IPv6 form, full or compressed)", n, line) from None
            index = int(g["index"])
            if any(x["index"] == index for x in port.get("gids", [])):
                raise ParseError(tool, "GID index %d listed twice in one port" % index, n, line)
            port.setdefault("gids", []).append({
                "index": index, "gid": gid, "type": normalize_gid_type(g["type"]),
                "ipv4": gid_ipv4(gid)})
            continue
        if ":" not in s:
            # continuation of a flag list (device_cap_flags: 0x...\n BAD_PKEY_CNTR ...)
            if last_key is None:
                raise ParseError(tool, "expected 'key: value'", n, line)
            holder, key = last_key
            holder.setdefault(key + "_list", []).append(s)
            continue
        key, _, value = s.partition(":")
        key, value = key.strip(), value.strip()
        if key == "hca_id":
            if not value:
                raise ParseError(tool, "'hca_id:' without a device name", n, line)
            _devinfo_check_device(dev, n)
            dev = {"hca_id": value, "ports": {}}
            devices.append(dev)
            port, last_key = None, None
            continue
        if dev is None:
            raise ParseError(tool, "line before the first 'hca_id:' line", n, line)
        if key == "port":
            num = parse_int(tool, value, n, line)
            if num in dev["ports"]:
                raise ParseError(tool, "port %d listed twice for %s" % (num, dev["hca_id"]), n, line)
            _devinfo_check_port(dev, port, n)
            port = {"port": num}
            dev["ports"][num] = port
            last_key = None
            continue
        if key == "Device ports" and not value:
            continue  # header some versions print before the ports
        holder = port if port is not None else dev
        if port is None and key in _PORT_ONLY:
            raise ParseError(tool, "port attribute %r before any 'port:' line" % key, n, line)
        if port is not None and key in _DEVICE_ONLY:
            raise ParseError(tool, "device attribute %r inside a port section" % key, n, line)
        if key in holder and key in _PORT_ONLY + _DEVICE_ONLY:
            raise ParseError(tool, "%r given twice" % key, n, line)
        m = _CODED.match(value)
        if key in _PORT_CODED and m:
            name, code = m["name"], int(m["code"])
            if key in _PORT_NUMERIC:
                holder[key] = parse_int(tool, name, n, line)
            else:
                holder[key] = name
            holder[key + "_code"] = code
        elif key in _PORT_NUMERIC:
            holder[key] = parse_int(tool, value, n, line)
        elif key in ("vendor_part_id", "phys_port_cnt", "gid_tbl_len", "pkey_tbl_len", "sm_lid", "port_lid"):
            holder[key] = parse_int(tool, value, n, line)
        else:
            holder[key] = value
        last_key = (holder, key)
    _devinfo_check_device(dev, None)
    return devices


def _devinfo_check_port(dev: Optional[Dict[str, Any]], port: Optional[Dict[str, Any]], line_no: Optional[int]) -> None:
    """A port section must hold every attribute ibv_devinfo always prints (else the output was cut off)."""
    if dev is None or port is None:
        return
    missing = [k for k in _PORT_REQUIRED if k not in port]
    if missing:
        raise ParseError("ibv_devinfo", "%s port %d has no %s (output cut off?)"
                         % (dev["hca_id"], port["port"], ", ".join(missing)), line_no)


def _devinfo_check_device(dev: Optional[Dict[str, Any]], line_no: Optional[int]) -> None:
    if dev is None:
        return
    if not dev["ports"]:
        raise ParseError("ibv_devinfo", "device %s has no 'port:' section (output cut off?)" % dev["hca_id"], line_no)
    _devinfo_check_port(dev, dev["ports"][max(dev["ports"])], line_no)


# --------------------------------------------------------------------------- cma_roce_mode

# cma_roce_mode's own messages before it exits 1 (Mellanox/mlnx-tools sbin/cma_roce_mode): no mode follows them
_CMA_FATAL = re.compile(r"^(You must be root to run this|Failed to mount configfs|Module rdma_cm is not loaded.*|"
                        r"Failed to create configuration for .*|Device \S+ port \S+ does not exist)$")


def parse_cma_roce_mode(text: str) -> Dict[str, Any]:
    """``cma_roce_mode -d DEV -p PORT [-m 1|2]`` prints the rdma_cm default RoCE mode (the content of
    configfs ``rdma_cm/<dev>/ports/<port>/default_roce_mode``, the kernel's ``IB/RoCE v1`` / ``RoCE v2``):
    {"mode": "RoCE v2", "version": 2, "messages": []}.

    The script goes on after a failed step, so with stderr in the output other lines come with the mode: with
    ``-m`` on a port that does not take the mode the kernel refuses the write (bash: ``cma_roce_mode: line 111:
    echo: write error: Invalid argument``) and ``cat`` then prints the mode still in force; also ``modprobe``,
    ``mkdir``/``rmdir`` or ``sudo`` lines. Those are kept in ``messages`` and the one mode line is read (it is
    the mode in force, not necessarily the one asked for). Refused: no mode line (the tool's message is named),
    two mode lines, or one of the script's own exit-1 messages (``You must be root to run this``, ``Device X
    port N does not exist``, ...): nothing after those is from this run."""
    tool = "cma_roce_mode"
    lines = [(n, line) for n, line in complete_lines(tool, text) if line.strip()]
    if not lines:
        raise ParseError(tool, "empty output")
    modes, messages = [], []
    for n, line in lines:
        mode = normalize_gid_type(line)
        if mode in ("RoCE v2", "RoCE v1"):
            modes.append((n, line, mode))
            continue
        if _CMA_FATAL.match(line.strip()):
            raise ParseError(tool, "cma_roce_mode failed (it exits 1 after this message; no mode is from this run)",
                             n, line)
        messages.append(line.strip())
    if not modes:
        n, line = lines[0]
        raise ParseError(tool, "expected 'RoCE v2' or 'IB/RoCE v1' (the tool's message may say why)", n, line)
    if len(modes) > 1:
        raise ParseError(tool, "%d mode lines (first on line %d): one run prints one" % (len(modes), modes[0][0]),
                         modes[1][0], modes[1][1])
    mode = modes[0][2]
    return {"mode": mode, "version": 2 if mode == "RoCE v2" else 1, "messages": messages}


# --------------------------------------------------------------------------- show_gids

def parse_show_gids(text: str) -> List[Dict[str, Any]]:
    """``show_gids [DEV]`` (MLNX_OFED): [{"device", "port", "index", "gid", "ipv4", "type", "netdev"}]."""
    tool = "show_gids"
    out = []
    if not text.strip():
        raise ParseError(tool, "empty output (show_gids prints a header and n_gids_found=N even with no GID)")
    for n, line in complete_lines(tool, text):
        s = line.strip()
        if not s or s.startswith(("DEV", "---")):
            continue
        if s.startswith("n_gids_found="):
            found = parse_int(tool, s.split("=", 1)[1], n, line)
            if found != len(out):
                raise ParseError(tool, "n_gids_found=%d but %d rows" % (found, len(out)), n, line)
            continue
        tok = s.split()
        if len(tok) < 5:
            raise ParseError(tool, "expected 'DEV PORT INDEX GID [IPv4] VER [DEV]'", n, line)
        dev, port, index, gid = tok[:4]
        rest = tok[4:]
        ipv4 = None
        if rest and re.match(r"^\d+\.\d+\.\d+\.\d+$", rest[0]):
            ipv4 = rest.pop(0)
        if not rest or rest[0] not in ("v1", "v2"):
            raise ParseError(tool, "expected the RoCE version v1/v2", n, line)
        ver = rest.pop(0)
        out.append({"device": dev, "port": parse_int(tool, port, n, line), "index": parse_int(tool, index, n, line),
                    "gid": gid.lower(), "ipv4": ipv4, "type": normalize_gid_type(ver),
                    "netdev": rest[0] if rest else None})
    return out


# --------------------------------------------------------------------------- GIDs from sysfs

def read_sysfs(path: str) -> Optional[str]:
    """A sysfs (or /proc) file's text, stripped, or None when it is absent or unreadable (the kernel answers
    EINVAL for gid_attrs/types/<i> of an empty GID slot). dgx_hw_facts and dgx_gpu_health read sysfs with it."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def ib_port_dir(sysfs_root: str, device: str, port: int) -> str:
    return os.path.join(sysfs_root, "sys", "class", "infiniband", device, "ports", str(port))


def read_sysfs_gid_table(sysfs_root: str, device: str, port: int = 1) -> List[Dict[str, Any]]:
    """The populated entries of a port's GID table under ``<sysfs_root>/sys/class/infiniband/<device>/
    ports/<port>/``: [{"index", "gid", "type" ("RoCE v2"/"RoCE v1"/"IB"/None), "netdev", "ipv4"}], by index.
    All-zero GIDs (empty slots) are skipped. FileNotFoundError if the device/port has no ``gids`` dir."""
    pdir = ib_port_dir(sysfs_root, device, port)
    gdir = os.path.join(pdir, "gids")
    if not os.path.isdir(gdir):
        raise FileNotFoundError("no GID table at %s (device %s port %d)" % (gdir, device, port))
    out = []
    for name in sorted((x for x in os.listdir(gdir) if x.isdigit()), key=int):
        gid = read_sysfs(os.path.join(gdir, name))
        if gid is None or gid_is_zero(gid):
            continue
        out.append({"index": int(name), "gid": gid.lower(),
                    "type": normalize_gid_type(read_sysfs(os.path.join(pdir, "gid_attrs", "types", name))),
                    "netdev": read_sysfs(os.path.join(pdir, "gid_attrs", "ndevs", name)) or None,
                    "ipv4": gid_ipv4(gid)})
    return out


def select_roce_v2_ipv4_gid(gids: List[Dict[str, Any]], ipv4: Optional[str], device: str = "?",
                            port: int = 1, netdev: Optional[str] = None) -> int:
    """Index of the RoCE v2 GID that carries ``ipv4`` (an IPv4-mapped GID ::ffff:a.b.c.d of type RoCE v2).

    ``ipv4`` None: the one RoCE v2 IPv4 GID of the port (error if there are none or several). ``netdev``
    (optional) must match the GID's ndev when the table records it (a VLAN or macvlan on the same port
    gets its own GIDs). Raises GidResolutionError naming device, port, address and what the table holds."""
    cands = [g for g in gids if g.get("type") == "RoCE v2" and g.get("ipv4")
             and (ipv4 is None or g["ipv4"] == ipv4)]
    if netdev:
        own = [g for g in cands if not g.get("netdev") or g["netdev"] == netdev]
        if own:
            cands = own
    if len(cands) == 1 or (ipv4 is not None and cands):
        return min(g["index"] for g in cands)

    def show(g):
        return "%d=%s (%s%s)" % (g["index"], g.get("ipv4") or g["gid"], g.get("type") or "type unknown",
                                 ", " + g["netdev"] if g.get("netdev") else "")
    held = "; ".join(show(g) for g in gids) or "no populated GIDs"
    if ipv4 is None and cands:
        raise GidResolutionError("%s port %d has %d RoCE v2 IPv4 GIDs (%s); name the address to choose one"
                                 % (device, port, len(cands), held))
    what = "no RoCE v2 GID for %s" % ipv4 if ipv4 else "no RoCE v2 IPv4 GID"
    hint = (" - is %s configured on %s, and is the port in Ethernet (RoCE) mode?"
            % (ipv4, netdev or "the device's netdev")) if ipv4 else ""
    raise GidResolutionError("%s: %s on port %d; the GID table holds: %s%s" % (device, what, port, held, hint))


def resolve_roce_v2_gid_index(sysfs_root: str, device: str, ipv4: Optional[str], port: int = 1,
                              netdev: Optional[str] = None) -> int:
    """``select_roce_v2_ipv4_gid`` on the table read from sysfs; a missing table is a GidResolutionError."""
    try:
        gids = read_sysfs_gid_table(sysfs_root, device, port)
    except FileNotFoundError as e:
        raise GidResolutionError("%s: %s" % (device, e)) from None
    return select_roce_v2_ipv4_gid(gids, ipv4, device, port, netdev)
