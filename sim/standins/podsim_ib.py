#!/usr/bin/python3
"""INFINIBAND-DIAGS STAND-INS for the pod-in-a-box simulator -- test doubles, NOT the real tools.

The simulator has no InfiniBand. These stand-ins play ``sminfo``, ``iblinkinfo`` and ``ibnetdiscover`` (rdma-core
infiniband-diags; the launchers ``sim/standins/{sminfo,iblinkinfo,ibnetdiscover}`` call :func:`main`) inside a
simulated DGX, printing the real tools' formats - the printf formats of rdma-core ``infiniband-diags/sminfo.c``
(``main``), ``iblinkinfo.c`` (``print_node_header``, ``print_port``: ``(%3s %18s %6s/%8s)``), ``ibnetdiscover.c``
(``out_switch``, ``out_ca``, ``out_switch_port``, ``out_ca_port``) and libibmad ``dump.c`` (the width, lane-rate and
state words), as in tests/unit/fixtures/fabric/ - from a *fabric map*: which HCA port is on which switch port, the
GUIDs, LIDs, widths and speeds, and the subnet manager.

The map (:func:`fabric_map`) is built from the pod model on the host (every NIC on a fabric of kind infiniband cabled
to a managed IB switch; the port number by the catalogue's rule, passed in) and kept in the node's stand-in state
(``/etc/podsim/hardware.json``, key ``ib_fabric``; override the file with PODSIM_HW_STATE), with the fabric's faults
(key ``ib_faults``, set with ``sim/podsim ib --fault K=V`` / ``--clear`` on every DGX alike):

  swap=NODE:HCA,NODE:HCA   the two HCA ports' cables swapped (each is on the other's switch port)
  width=NODE:HCA:1X        that HCA's link trained at 1X ("Could be 4X")
  speed=NODE:HCA:EDR       that HCA's link trained at a lower speed ("Could be" the modelled one)
  no_sm=1                  no subnet manager answers (sminfo: iberror; the links stay Active, as when the SM dies)
  two_sm=1                 the second switch runs a master SM too: the HCAs cabled to it see it as master

The render_* functions are pure (map and faults in, text out) and unit-tested with the toolkit's own parsers
(tests/unit/test_sim_ib_standins.py); the parsers are tested against real outputs, not only against these.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

STANDIN_NOTE = "podsim stand-in (simulated InfiniBand, not the real tool)"
STATE_PATH = "/etc/podsim/hardware.json"
FAULT_KEYS = ("swap", "width", "speed", "no_sm", "two_sm")
# libibmad dump.c: the lane rate each generation's active speed prints as (iblinkinfo)
LANE_RATE = {"SDR": "2.5 Gbps", "DDR": "5.0 Gbps", "QDR": "10.0 Gbps", "FDR": "14.0625 Gbps",
             "EDR": "25.78125 Gbps", "HDR": "53.125 Gbps", "NDR": "106.25 Gbps", "XDR": "212.5 Gbps"}
SPEEDS = ("SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR")
# PCI device ids (ibnetdiscover's devid=) of the modelled parts
DEVID = {"QM8700": "0xcf08", "QM9700": "0xd2f0", "SB7700": "0xcb20", "SB7800": "0xcb20", "ConnectX": "0x101b"}
SWITCH_OUI = 0x98039B0300000000
HCA_OUI = 0x0C42A10300000000


def _guid(base: int, name: str) -> str:
    return "0x%016x" % (base | (zlib.crc32(name.encode()) & 0xFFFFFFFF))


# --------------------------------------------------------------------------- the fabric map

def fabric_map(model: Dict[str, Any], port_number: Callable[[str, str], Optional[int]],
               link_of: Callable[[str, Any], Optional[Tuple[str, str]]]) -> Dict[str, Any]:
    """The fabric map of a pod model ({"pod", "hosts": {name: {"groups", "vars"}}}): ``port_number(model, port)``
    and ``link_of(model, nic_speed)`` are the catalogue's (catalog.switches.ib_port_number / ib_link of the switch
    model, given by the caller so that this file stays stdlib only). Inter-switch links are the switch ports
    described ``ISL to <other switch>``, paired in port order."""
    pod = model.get("pod") or {}
    ib = {f["name"] for f in pod.get("fabrics") or [] if f.get("kind") == "infiniband"}
    hosts = model.get("hosts") or {}
    switches: Dict[str, Dict[str, Any]] = {}
    lid = 1
    for name in sorted(hosts):
        sw = (hosts[name].get("vars") or {}).get("switch") or {}
        if "switches" in (hosts[name].get("groups") or []) and sw.get("platform") == "mlnx-ib":
            switches[name] = {"guid": str(sw.get("guid") or _guid(SWITCH_OUI, name)).lower(), "lid": lid,
                              "model": sw.get("model"), "desc": "MF0;%s:M%s/U1" % (name, sw.get("model")),
                              "ports": max(n for n in (port_number(sw.get("model"), p) for p in
                                                       _all_ports(sw)) if n) if _all_ports(sw) else 0}
            lid += 1
    hcas: Dict[str, Dict[str, Any]] = {}
    links: List[Dict[str, Any]] = []
    for name in sorted(hosts):
        for nic in (hosts[name].get("vars") or {}).get("nics") or []:
            sw = switches.get(nic.get("switch"))
            if nic.get("fabric") not in ib or sw is None:
                continue
            number = port_number(sw["model"], nic.get("switch_port"))
            if number is None:
                continue
            hca = nic.get("rdma_device") or nic.get("name")
            key = "%s %s" % (name, hca)
            hcas[key] = {"node": name, "hca": hca, "guid": str(nic.get("port_guid") or _guid(HCA_OUI, key)).lower(),
                         "lid": lid, "desc": key, "fabric": nic.get("fabric")}
            lid += 1
            width, speed = link_of(sw["model"], nic.get("speed")) or ("4X", "EDR")
            sw["ports"] = max(sw["ports"], number)
            links.append({"switch": nic["switch"], "port": number, "hca": key, "width": width, "speed": speed})
    isls = []
    for a in sorted(switches):
        for b in sorted(switches):
            if a >= b:
                continue
            pa = _isl_ports(hosts[a], b, switches[a]["model"], port_number)
            pb = _isl_ports(hosts[b], a, switches[b]["model"], port_number)
            for x, y in zip(pa, pb, strict=False):  # the fewer ends of the two lists pair up
                width, speed = link_of(switches[a]["model"], None) or ("4X", "EDR")
                isls.append({"a": a, "a_port": x, "b": b, "b_port": y, "width": width, "speed": speed})
    return {"switches": switches, "hcas": hcas, "links": links, "isls": isls,
            "sm": sorted(switches)[0] if switches else None}


def _all_ports(sw: Dict[str, Any]) -> List[str]:
    return list((sw.get("ports") or {}).keys())


def _isl_ports(host: Dict[str, Any], other: str, model: str, port_number) -> List[int]:
    ports = ((host.get("vars") or {}).get("switch") or {}).get("ports") or {}
    out = [port_number(model, p) for p, cfg in ports.items()
           if isinstance(cfg, dict) and str(cfg.get("description") or "").strip() == "ISL to %s" % other]
    return sorted(n for n in out if n)


# --------------------------------------------------------------------------- faults

def parse_faults(items: List[str]) -> Dict[str, Any]:
    """['swap=a:mlx5_0,b:mlx5_0', 'width=a:mlx5_1:1X', 'no_sm=1'] -> the ib_faults dict; ValueError naming a bad one."""
    out: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in FAULT_KEYS:
            raise ValueError("unknown IB fault %r (KEY=VALUE, KEY one of %s)" % (item, ", ".join(FAULT_KEYS)))
        if key == "swap":
            ends = [e.replace(":", " ", 1) for e in value.split(",")]
            if len(ends) != 2 or any(" " not in e for e in ends):
                raise ValueError("swap=NODE:HCA,NODE:HCA, not %r" % value)
            out[key] = ends
        elif key in ("width", "speed"):
            node, _, rest = value.partition(":")
            hca, _, what = rest.partition(":")
            if not (node and hca and what):
                raise ValueError("%s=NODE:HCA:VALUE, not %r" % (key, value))
            if key == "width" and what.upper().rstrip("X") not in ("1", "2", "4", "8", "12"):
                raise ValueError("width %r is not 1X, 2X, 4X, 8X or 12X" % what)
            if key == "speed" and what.upper() not in SPEEDS:
                raise ValueError("speed %r is not one of %s" % (what, ", ".join(SPEEDS)))
            out.setdefault(key, {})["%s %s" % (node, hca)] = what.upper()
        else:
            out[key] = value not in ("0", "false", "no")
    return out


def _links(fmap: Dict[str, Any], faults: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The links as they are with the faults: a swap exchanges two HCAs' switch ports; width/speed change a link
    (keeping what it could be)."""
    links = [dict(lk, could_width=None, could_speed=None) for lk in fmap.get("links") or []]
    swap = faults.get("swap")
    if swap:
        ends = [next((lk for lk in links if lk["hca"] == e), None) for e in swap]
        if all(ends):
            ends[0]["hca"], ends[1]["hca"] = ends[1]["hca"], ends[0]["hca"]
    for lk in links:
        w = (faults.get("width") or {}).get(lk["hca"])
        if w and w != lk["width"]:
            lk["could_width"], lk["width"] = lk["width"], w
        s = (faults.get("speed") or {}).get(lk["hca"])
        if s and s != lk["speed"]:
            lk["could_speed"], lk["speed"] = lk["speed"], s
    return links


def _peer_msg(lk: Dict[str, Any]) -> str:
    """get_max_msg's "Could be" words (ibdiag_common.c), as "(%s %s)" prints them."""
    width = "Could be %s" % lk["could_width"] if lk.get("could_width") else ""
    speed = "Could be %s" % LANE_RATE[lk["could_speed"]] if lk.get("could_speed") else ""
    return "(%s %s)" % (width, speed)


# --------------------------------------------------------------------------- renderers (pure)

def render_sminfo(fmap: Dict[str, Any], faults: Dict[str, Any], hca_key: str) -> Tuple[str, str, int]:
    """(stdout, stderr, exit status) of ``sminfo -C <hca> -P 1`` on the HCA ``"<node> <hca>"``."""
    if faults.get("no_sm") or not fmap.get("sm"):
        return "", "sminfo: iberror: [%d] main: failed: query\n" % 4242, 255
    if hca_key not in (fmap.get("hcas") or {}):
        return "", "ibwarn: [4242] mad_rpc_open_port: can't open UMAD port (%s)\n" % hca_key, 255
    sm = fmap["sm"]
    if faults.get("two_sm"):
        link = next((lk for lk in _links(fmap, faults) if lk["hca"] == hca_key), None)
        if link and link["switch"] != sm:
            sm = link["switch"]
    sw = fmap["switches"][sm]
    return ("sminfo: sm lid %d sm guid %s, activity count %d priority %d state %d SMINFO_MASTER\n" % (
        sw["lid"], sw["guid"], 7311 + sw["lid"], 15, 3), "", 0)


def _link_str(width: str, speed: str) -> str:
    return "(%3s %18s %6s/%8s)" % (width, LANE_RATE[speed], "Active", "LinkUp")


def render_iblinkinfo(fmap: Dict[str, Any], faults: Dict[str, Any]) -> str:
    """``iblinkinfo`` (default mode): every switch with its ports, then every CA (print_node_header,
    print_port)."""
    switches, hcas = fmap.get("switches") or {}, fmap.get("hcas") or {}
    links = _links(fmap, faults)
    by_port = {(lk["switch"], lk["port"]): lk for lk in links}
    isl = {}
    for i in fmap.get("isls") or []:
        isl[(i["a"], i["a_port"])] = (i["b"], i["b_port"], i)
        isl[(i["b"], i["b_port"])] = (i["a"], i["a_port"], i)
    out = []
    for name in sorted(switches):
        sw = switches[name]
        out.append("Switch: %s %s:\n" % (sw["guid"], sw["desc"]))
        for port in range(1, int(sw["ports"]) + 1):
            lk = by_port.get((name, port))
            if lk:
                h = hcas[lk["hca"]]
                out.append("      %6d %4d[%2s] ==%s==>  %6d %4d[%2s] \"%s\" %s\n" % (
                    sw["lid"], port, "", _link_str(lk["width"], lk["speed"]), h["lid"], 1, "", h["desc"],
                    _peer_msg(lk)))
            elif (name, port) in isl:
                other, oport, i = isl[(name, port)]
                out.append("      %6d %4d[%2s] ==%s==>  %6d %4d[%2s] \"%s\" ( )\n" % (
                    sw["lid"], port, "", _link_str(i["width"], i["speed"]), switches[other]["lid"], oport, "",
                    switches[other]["desc"]))
            else:
                out.append("      %6d %4d[%2s] ==(              %6s/%8s)==>  %s" % (
                    sw["lid"], port, "", "Down", "Polling", "           [  ] \"\" ( )\n"))
    for key in sorted(hcas):
        h = hcas[key]
        lk = next((x for x in links if x["hca"] == key), None)
        out.append("CA: %s:\n" % h["desc"])
        if lk is None:
            out.append("      %s %6d %4d[%2s] ==(              %6s/%8s)==>  %s" % (
                h["guid"], h["lid"], 1, "", "Down", "Polling", "           [  ] \"\" ( )\n"))
            continue
        sw = switches[lk["switch"]]
        out.append("      %s %6d %4d[%2s] ==%s==>  %6d %4d[%2s] \"%s\" %s\n" % (
            h["guid"], h["lid"], 1, "", _link_str(lk["width"], lk["speed"]), sw["lid"], lk["port"], "", sw["desc"],
            _peer_msg(lk)))
    return "".join(out)


def _bare(g: str) -> str:
    return g[2:] if g.startswith("0x") else g


def _nd_speed(width: str, speed: str) -> str:
    return "%sx%s" % (width.rstrip("X"), speed)


def render_ibnetdiscover(fmap: Dict[str, Any], faults: Dict[str, Any], hca_key: str) -> str:
    """``ibnetdiscover`` (the topology file, not grouped) initiated from the HCA ``"<node> <hca>"``: the switches
    with their connected ports, then the CAs (dump_topology, out_switch, out_switch_port, out_ca, out_ca_port)."""
    switches, hcas = fmap.get("switches") or {}, fmap.get("hcas") or {}
    links = _links(fmap, faults)
    me = hcas.get(hca_key) or next(iter(hcas.values()), {"guid": "0x0"})
    out = ["#\n# Topology file: generated on Sun Nov 29 07:00:00 2026\n#\n",
           "# Initiated from node %016x port %016x\n" % (int(me["guid"], 16), int(me["guid"], 16))]
    for name in sorted(switches):
        sw = switches[name]
        g = _bare(sw["guid"])
        out.append("\nvendid=0x2c9\ndevid=%s\nsysimgguid=0x%x\nswitchguid=0x%x(%x)\n" % (
            DEVID.get(sw["model"], "0xcf08"), int(g, 16), int(g, 16), int(g, 16)))
        out.append("Switch\t%d \"S-%s\"\t\t# \"%s\" %s port 0 lid %d lmc %d\n" % (
            int(sw["ports"]), g, sw["desc"], "enhanced", sw["lid"], 0))
        ports = []
        for lk in links:
            if lk["switch"] == name:
                h = hcas[lk["hca"]]
                ports.append((lk["port"], "[%d]\t\"H-%s\"[%d](%s) \t\t# \"%s\" lid %d %s\n" % (
                    lk["port"], _bare(h["guid"]), 1, _bare(h["guid"]).lstrip("0"), h["desc"], h["lid"],
                    _nd_speed(lk["width"], lk["speed"]))))
        for i in fmap.get("isls") or []:
            for mine, other, oport in ((i["a"], i["b"], i["b_port"]), (i["b"], i["a"], i["a_port"])):
                if mine == name:
                    port = i["a_port"] if mine == i["a"] else i["b_port"]
                    o = switches[other]
                    ports.append((port, "[%d]\t\"S-%s\"[%d]\t\t# \"%s\" lid %d %s\n" % (
                        port, _bare(o["guid"]), oport, o["desc"], o["lid"], _nd_speed(i["width"], i["speed"]))))
        out.extend(text for _, text in sorted(ports))
    for key in sorted(hcas):
        h = hcas[key]
        g = _bare(h["guid"])
        out.append("\nvendid=0x2c9\ndevid=%s\nsysimgguid=0x%x\ncaguid=0x%x\n" % (DEVID["ConnectX"], int(g, 16),
                                                                            int(g, 16)))
        out.append("Ca\t1 \"H-%s\"\t\t# \"%s\"\n" % (g, h["desc"]))
        lk = next((x for x in links if x["hca"] == key), None)
        if lk:
            sw = switches[lk["switch"]]
            out.append("[1](%s) \t\"S-%s\"[%d]\t\t# lid %d lmc 0 \"%s\" lid %d %s\n" % (
                g.lstrip("0"), _bare(sw["guid"]), lk["port"], h["lid"], sw["desc"], sw["lid"],
                _nd_speed(lk["width"], lk["speed"])))
    return "".join(out)


# --------------------------------------------------------------------------- the tools

def _state_path() -> str:
    return os.environ.get("PODSIM_HW_STATE", STATE_PATH)


def load_state() -> Dict[str, Any]:
    with open(_state_path()) as fh:
        return json.load(fh)


def _ca_port(args: List[str]) -> Tuple[Optional[str], int]:
    hca, port = None, 1
    for flag, value in zip(args, args[1:], strict=False):
        if flag in ("-C", "--Ca"):
            hca = value
        elif flag in ("-P", "--Port"):
            port = int(value)
    return hca, port


def main(argv: List[str]) -> int:
    tool = os.path.basename(argv[0])
    if tool not in ("sminfo", "iblinkinfo", "ibnetdiscover"):
        sys.stderr.write("%s: call me as sminfo, iblinkinfo or ibnetdiscover\n" % STANDIN_NOTE)
        return 2
    try:
        state = load_state()
    except (OSError, ValueError):
        state = {}
    fmap, faults = state.get("ib_fabric"), state.get("ib_faults") or {}
    if not fmap or not fmap.get("hcas"):
        sys.stderr.write("ibwarn: [4242] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
                         "%s: iberror: [4242] main: Failed to open '(null)' port '0'\n" % tool)
        return 255
    hca, _port = _ca_port(argv[1:])
    node = state.get("hostname") or os.uname()[1]
    key = "%s %s" % (node, hca) if hca else next((k for k in sorted(fmap["hcas"]) if k.startswith(node + " ")),
                                                   "")
    if tool == "sminfo":
        out, err, rc = render_sminfo(fmap, faults, key)
        sys.stdout.write(out)
        sys.stderr.write(err)
        return rc
    if tool == "iblinkinfo":
        sys.stdout.write(render_iblinkinfo(fmap, faults))
        return 0
    sys.stdout.write(render_ibnetdiscover(fmap, faults, key))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
