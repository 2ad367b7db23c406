# -*- coding: utf-8 -*-
"""Parsers for the Mellanox/NVIDIA adapter tools ``mlxconfig [-e] query`` and ``mlnx_qos -i IF`` (pure
functions, stdlib only; tested as hw_parsers is: tests/unit/test_hw_parsers.py).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import (ParseError, complete_lines,
    parse_int)


# --------------------------------------------------------------------------- mlxconfig

_MLX_VALUE = re.compile(r"^(?P<name>.*?)\((?P<value>-?\d+)\)$")
_MLX_COLUMNS = ("Default", "Current", "Next Boot", "New")


def split_mlx_value(text: Optional[str]) -> Tuple[Optional[str], Optional[int]]:
    """'ETH(2)' -> ('ETH', 2); 'True(1)' -> ('True', 1); '8' -> (None, 8); None -> (None, None)."""
    if text is None:
        return None, None
    t = text.strip()
    m = _MLX_VALUE.match(t)
    if m:
        return m["name"] or None, int(m["value"])
    if re.match(r"^-?\d+$", t):
        return None, int(t)
    return t, None


def parse_mlxconfig_query(text: str) -> List[Dict[str, Any]]:
    """``mlxconfig -d DEV [-e] query [PARAMS]`` (also the table ``set`` prints), one dict per device::

        {"device": "/dev/mst/mt4115_pciconf0", "device_type": "ConnectX4", "name": ..., "description": ...,
         "columns": ["Default", "Current", "Next Boot"],
         "params": {"LINK_TYPE_P1": {"default": "ETH(2)", "current": "ETH(2)", "next_boot": "ETH(2)",
                                     "modified": False}}}

    Column names come from the ``Configurations:`` header; a query printed without column names (old MFT)
    has one value, taken as ``next_boot``. ``-E-`` error lines raise ParseError with mlxconfig's message."""
    tool = "mlxconfig"
    devices: List[Dict[str, Any]] = []
    dev: Optional[Dict[str, Any]] = None
    in_conf = False
    for n, line in complete_lines(tool, text):
        s = line.strip()
        if not s or set(s) == {"-"} or s == "...":
            continue
        if s.startswith("-E-"):
            raise ParseError(tool, "mlxconfig reported an error", n, line)
        if s.startswith(("-I-", "-W-", "Apply new Configuration", "Applying", "The '*'", "Aborted")):
            in_conf = False if s.startswith("Apply") else in_conf
            continue
        if re.match(r"^Device\s*#?\d+:?$", s):
            dev = {"device": None, "device_type": None, "name": None, "description": None,
                   "columns": [], "params": {}}
            devices.append(dev)
            in_conf = False
            continue
        if s.startswith("Configurations:"):
            if dev is None:
                dev = {"device": None, "device_type": None, "name": None, "description": None,
                       "columns": [], "params": {}}
                devices.append(dev)
            rest = s[len("Configurations:"):].strip()
            cols = []
            while rest:
                for c in _MLX_COLUMNS:
                    if rest.startswith(c):
                        cols.append(c)
                        rest = rest[len(c):].strip()
                        break
                else:
                    raise ParseError(tool, "unknown column in the Configurations header", n, line)
            dev["columns"] = cols
            in_conf = True
            continue
        if not in_conf:
            key, sep, value = s.partition(":")
            if not sep or dev is None:
                raise ParseError(tool, "expected 'Device #1:', a 'Name: value' header line or "
                                 "'Configurations:'", n, line)
            k = key.strip().lower()
            if k in ("device", "pci device"):
                dev["device"] = value.strip()
            elif k == "device type":
                dev["device_type"] = value.strip()
            elif k in ("name", "description"):
                dev[k] = value.strip()
            continue
        tokens = s.split()
        modified = tokens[0] == "*"
        if modified:
            tokens = tokens[1:]
        if len(tokens) < 2 or not re.match(r"^[A-Za-z][A-Za-z0-9_]*(\[[0-9.]+\])?$", tokens[0]):
            raise ParseError(tool, "expected 'PARAMETER value...' in the Configurations table", n, line)
        name, values = tokens[0], tokens[1:]
        cols = dev["columns"] or ["Next Boot"]
        if len(values) != len(cols):
            raise ParseError(tool, "%d value(s) for %d column(s) (%s)" % (len(values), len(cols), ", ".join(cols)),
                             n, line)
        entry: Dict[str, Any] = {c.lower().replace(" ", "_"): v for c, v in zip(cols, values)}  # noqa: B905
        entry["modified"] = modified
        dev["params"][name] = entry
    if not devices or not any(d["params"] for d in devices):
        raise ParseError(tool, "no 'Configurations:' table found")
    return devices


def mlxconfig_link_types(device: Dict[str, Any]) -> Dict[int, Dict[str, Any]]:
    """From one parsed mlxconfig device: {1: {"current": "ETH"|None, "next_boot": "ETH", "default": ...,
    "current_value": 2, "next_boot_value": 2}} for every LINK_TYPE_P<n> present."""
    out: Dict[int, Dict[str, Any]] = {}
    for name, entry in device["params"].items():
        m = re.match(r"^LINK_TYPE_P(\d+)$", name)
        if not m:
            continue
        d: Dict[str, Any] = {}
        for col in ("default", "current", "next_boot"):
            label, value = split_mlx_value(entry.get(col))
            d[col] = label if label is not None else ({1: "IB", 2: "ETH", 3: "VPI"}.get(value) if value else None)
            d[col + "_value"] = value
        out[int(m[1])] = d
    return out


# --------------------------------------------------------------------------- mlnx_qos

_QOS_TC = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+?),\s*tsa:\s*(ets|strict|vendor|unknown)"
                     r"(?:,\s*bw:\s*(\d+)%)?$")
# the TC line without its 'tc: N ratelimit: R, tsa: ' prefix: what pretty_print prints when the rate limits
# could not be read ('Rate limit is not supported on your system!': ratelimit[tc] raises before the prefix)
_QOS_TC_TSA_ONLY = re.compile(r"^(ets|strict|vendor|unknown)(?:,\s*bw:\s*(\d+)%)?$")
_QOS_BUFFER_KEYS = ("total_size", "max_buffer_size")  # MLNX_OFED 5.2 - 23.04 / 23.07 and later (DOCA-OFED)
# mlnx_qos's own notices when the kernel/NIC refuses a DCB read ("Priority trust state is not supported on your
# system", "Buffers commands ...", "Rate limit ...!", "ETS features ..."; "Priority trust mode" before OFED 4.2)
_QOS_NOTICE = re.compile(r"^(?P<what>[A-Za-z][A-Za-z0-9 _/-]*?) (?:is|are) not supported on your system\s*!?$")
_QOS_FEATURES = (("priority trust", "trust"), ("buffer", "buffers"), ("rate limit", "ratelimit"), ("ets", "ets"))
_QOS_ERRNO = re.compile(r"^\[Errno \d+\]")  # check_privilege() prints the OSError and exits 1


def qos_feature(notice: str) -> str:
    """'Rate limit is not supported on your system!' -> 'ratelimit' (trust, buffers, ratelimit, ets; any other
    feature by its own words, lower case)."""
    what = _QOS_NOTICE.match(notice.strip())
    words = (what["what"] if what else notice).strip().lower()
    return next((key for start, key in _QOS_FEATURES if words.startswith(start)), words)


def parse_mlnx_qos(text: str) -> Dict[str, Any]:
    """``mlnx_qos -i IF`` (mlnx-tools: MLNX_OFED 4.x - 24.x, DOCA-OFED)::

        {"dcbx_mode": "OS controlled", "trust": "dscp", "pfc_enabled": [0,0,0,1,0,0,0,0],
         "pfc_priorities": [3], "pfc_buffer": [..] or None, "dscp2prio": {3: [31, ..., 24]},
         "receive_buffer_sizes": [8 sizes] or None, "receive_buffer_total": 262016 or None,
         "receive_buffer_extra": {"max_buffer_size": 262016}, "cable_len": 7,
         "tcs": [{"tc": 0, "tsa": "vendor", "bw": None, "ratelimit": "unlimited", "priorities": [1]}, ...],
         "notices": [], "unsupported": []}

    Versions: MLNX_OFED 5.2 added ``total_size=N`` after the eight buffer sizes, mlnx-tools 23.07 renamed it
    ``max_buffer_size=N`` (any other ``key=N`` is kept in ``receive_buffer_extra``). Required: the trust line,
    the PFC 'enabled' row and a TC table mapping all eight priorities (mlnx_qos always prints it last), so an
    output cut off anywhere raises ParseError instead of returning part of the state.

    Notices: what the NIC or kernel does not support, mlnx_qos says before the state ("... is not supported on
    your system"); that part of the state is then absent and everything else is read. ``notices`` holds the
    tool's lines (and the lldpad warning), ``unsupported`` the features: ``trust`` (the trust line then says
    ``none``: ``trust`` is None), ``buffers`` (no buffer line or row: None), ``ratelimit`` (the TC lines lose
    their ``tc: N ratelimit: R, tsa:`` prefix: each TC is read with ``tc`` and ``ratelimit`` None, its TSA,
    bandwidth and priorities kept), any other by its words. ``ets``: mlnx_qos reads PFC with ETS, so its PFC and
    TC lines are not the NIC's (mlnx-tools exits 1 there; before OFED 4.2 it printed defaults): refused, naming
    the notice. An ``[Errno N] ...`` line (mlnx_qos's privilege error) is refused with its text."""
    tool = "mlnx_qos"
    out: Dict[str, Any] = {"dcbx_mode": None, "trust": None, "dscp2prio": {}, "receive_buffer_sizes": None,
                           "receive_buffer_total": None, "receive_buffer_extra": {}, "cable_len": None,
                           "pfc_enabled": None, "pfc_buffer": None, "tcs": [], "notices": [], "unsupported": []}
    section = None
    seen: Dict[str, int] = {}

    def once(key: str, n: int, line: str) -> None:
        if key in seen:
            raise ParseError(tool, "%s printed twice (first on line %d)" % (key, seen[key]), n, line)
        seen[key] = n

    def unsupported(feature: str) -> None:
        if feature not in out["unsupported"]:
            out["unsupported"].append(feature)

    for n, line in complete_lines(tool, text):
        s = line.strip()
        if not s:
            continue
        low = s.lower()
        if s.startswith("*") and "warning" in low:
            out["notices"].append(s)  # '****** WARNING: lldpad service is running and may overwrite your ...'
            continue
        if _QOS_NOTICE.match(s):
            feature = qos_feature(s)
            if feature == "ets":
                raise ParseError(tool, "mlnx_qos says %r: it reads PFC and the TC table with ETS, so none of the "
                                 "NIC's PFC state is in this output" % s, n, line)
            out["notices"].append(s)
            unsupported(feature)
            continue
        if _QOS_ERRNO.match(s):
            raise ParseError(tool, "mlnx_qos reported an error (run as root?)", n, line)
        if low.startswith("dcbx mode:"):
            once("DCBX mode", n, line)
            mode = s.split(":", 1)[1].strip()
            if mode not in ("OS controlled", "Firmware controlled"):
                raise ParseError(tool, "expected 'DCBX mode: OS controlled' or 'Firmware controlled'", n, line)
            out["dcbx_mode"] = mode
        elif low.startswith("priority trust state:") or low.startswith("priority trust mode:"):
            once("Priority trust state", n, line)
            trust = s.split(":", 1)[1].strip().lower()
            if trust not in ("pcp", "dscp", "both", "none"):
                raise ParseError(tool, "expected trust state 'pcp', 'dscp' (or 'none' when not supported)", n, line)
            if trust == "none":  # mlnx_qos could not read it ('Priority trust state is not supported ...')
                unsupported("trust")
            else:
                out["trust"] = trust
        elif low.startswith("dscp2prio mapping"):
            section = "dscp2prio"
        elif low.startswith("prio:") and section == "dscp2prio":
            m = re.match(r"^prio:\s*([0-7])\s+dscp:\s*((?:\d+,)*\d*)$", s.replace(" ", "").replace("dscp:", " dscp:"))
            if not m:
                raise ParseError(tool, "expected 'prio:N dscp:a,b,c,'", n, line)
            for x in m[2].split(","):
                if x:
                    d = int(x)
                    if d > 63 or any(d in v for v in out["dscp2prio"].values()):
                        raise ParseError(tool, "DSCP %d out of range or mapped twice" % d, n, line)
                    out["dscp2prio"].setdefault(int(m[1]), []).append(d)
        elif low.startswith("receive buffer size"):
            once("Receive buffer size", n, line)
            sizes, extra = [], {}
            for item in s.split(":", 1)[1].replace(" ", "").strip(",").split(","):
                key, eq, val = item.partition("=")
                if eq:
                    if not re.match(r"^[a-z_]+$", key):
                        raise ParseError(tool, "expected 'name=number' after the buffer sizes", n, line)
                    extra[key] = parse_int(tool, val, n, line)
                elif extra:
                    raise ParseError(tool, "a buffer size after the 'name=number' fields", n, line)
                else:
                    sizes.append(parse_int(tool, item, n, line))
            if len(sizes) != 8:
                raise ParseError(tool, "expected 8 receive buffer sizes, got %d" % len(sizes), n, line)
            out["receive_buffer_sizes"], out["receive_buffer_extra"] = sizes, extra
            out["receive_buffer_total"] = next((extra[k] for k in _QOS_BUFFER_KEYS if k in extra), None)
        elif low.startswith("cable len"):
            once("Cable len", n, line)
            out["cable_len"] = parse_int(tool, s.split(":", 1)[1].strip(), n, line)
        elif low.startswith("default priority"):
            section = None
        elif low.startswith("pfc configuration"):
            once("PFC configuration", n, line)
            section = "pfc"
        elif section == "pfc" and low.split()[0] in ("priority", "enabled", "buffer"):
            words = s.split()
            once("PFC %s row" % words[0], n, line)
            vals = [parse_int(tool, w, n, line) for w in words[1:]]
            if len(vals) != 8:
                raise ParseError(tool, "expected 8 values in the PFC %r row" % words[0], n, line)
            if words[0] == "priority" and vals != list(range(8)):
                raise ParseError(tool, "expected the PFC header 'priority 0 1 2 3 4 5 6 7'", n, line)
            if words[0] == "enabled":
                if any(v not in (0, 1) for v in vals):
                    raise ParseError(tool, "PFC 'enabled' values must be 0 or 1", n, line)
                out["pfc_enabled"] = vals
            elif words[0] == "buffer":
                out["pfc_buffer"] = vals
        elif low.startswith("tc:"):
            section = "tc"
            m = _QOS_TC.match(s)
            if not m:
                raise ParseError(tool, "expected 'tc: N ratelimit: R, tsa: T[, bw: B%]'", n, line)
            if any(t["tc"] == int(m[1]) for t in out["tcs"]):
                raise ParseError(tool, "tc %s printed twice" % m[1], n, line)
            out["tcs"].append({"tc": int(m[1]), "ratelimit": m[2].strip(), "tsa": m[3],
                               "bw": int(m[4]) if m[4] else None, "priorities": []})
        elif _QOS_TC_TSA_ONLY.match(s) and "PFC enabled row" in seen:
            section = "tc"  # a TC line without its 'tc: N ratelimit: R, tsa:' prefix (rate limit not read)
            m = _QOS_TC_TSA_ONLY.match(s)
            out["tcs"].append({"tc": None, "ratelimit": None, "tsa": m[1], "bw": int(m[2]) if m[2] else None,
                               "priorities": []})
        elif low.startswith("priority:") and section == "tc" and out["tcs"]:
            for w in s.split(":", 1)[1].split():
                p = parse_int(tool, w, n, line)
                if p > 7 or any(p in t["priorities"] for t in out["tcs"]):
                    raise ParseError(tool, "priority %d out of range or in two TCs" % p, n, line)
                out["tcs"][-1]["priorities"].append(p)
        elif section in ("dscp2prio", "tc", "pfc"):
            raise ParseError(tool, "unexpected line in the %s section" % section, n, line)
        elif re.match(r"^[A-Za-z][A-Za-z0-9 ()_-]*:", s):
            continue  # a 'Name: value' line a later mlnx-tools may add; nothing read from it
        else:
            raise ParseError(tool, "expected a 'Name: value' line", n, line)
    said = (" (mlnx_qos said: %s)" % "; ".join(repr(x) for x in out["notices"])) if out["notices"] else ""
    if "Priority trust state" not in seen:
        raise ParseError(tool, "no 'Priority trust state:' line" + said)
    if out["pfc_enabled"] is None:
        raise ParseError(tool, "no PFC 'enabled' row under 'PFC configuration:'" + said)
    mapped = sorted(p for t in out["tcs"] for p in t["priorities"])
    if mapped != list(range(8)):
        raise ParseError(tool, "the TC table maps priorities %s, expected all of 0-7 (output cut off?)"
                         % (mapped or "none") + said)
    if any(t["tc"] is None for t in out["tcs"]):
        unsupported("ratelimit")  # the prefix is lost only when the rate limits could not be read
    out["pfc_priorities"] = [p for p, v in enumerate(out["pfc_enabled"]) if v]
    return out
