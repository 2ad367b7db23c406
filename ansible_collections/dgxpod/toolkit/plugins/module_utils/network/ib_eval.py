# -*- coding: utf-8 -*-
"""The InfiniBand fabric checks (pure): the subnet manager, every modelled link's state, width and speed, and the
cabling, from what ``module_utils/network/ib_parse.py`` read (``sminfo``, ``iblinkinfo``, ``ibnetdiscover``) and the
modelled cabling.

The model's cabling is a list of links ``{node, hca, port, switch, switch_port, width, speed}`` (``width`` ``4X``,
``speed`` ``HDR``...). A fabric node is named by the model in this order: its GUID when the model gives one
(``switches: {name: {"guid"}}``, ``hcas: {node: {hca: guid}}``), else its node description - a switch's contains
its name (``MF0;leaf1:MQM8700/U1``), an HCA's is ``"<host> <hca>"`` (rdma-ndd's default node description).

Checks (stage network):

- ``ib_sm``: exactly one master subnet manager, seen the same from every HCA that asked (``sminfo`` per HCA port):
  none answering, or two different masters (a split subnet), fails (category pod_state, Subject(fabric=)).
- ``ib_link`` per modelled link: the switch port Active / LinkUp at the model's width and speed; a link trained
  at 1X or at a lower speed fails naming both ends (category port_state, Subject(switch=, port=); problems name the
  switch port and the HCA, node_state Subject(node=, hca=)).
- ``ib_cabling`` per modelled link: the switch port's peer is the modelled HCA port; a swapped cable names both
  ends and where the modelled HCA really is.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_parse import SPEEDS, guid
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE, PORT_STATE,
    CheckResult, Problem, Subject, compare)

__all__ = ["sm_check", "link_checks", "cabling_checks", "switch_names", "evaluate_fabric", "normalize_width",
           "normalize_speed"]

SOURCE_SM = "IBTA Vol. 1 14.4 (one master SM per subnet); the pod model's fabric"
SOURCE_MODEL = "the pod model's cabling"


def normalize_width(value: Any) -> Optional[str]:
    """``4``, ``"4x"``, ``"4X"`` -> ``"4X"``; None stays None."""
    if value is None:
        return None
    m = re.match(r"^(\d+)\s*[xX]?$", str(value).strip())
    if not m:
        raise ValueError("not a link width: %r" % (value,))
    return m.group(1) + "X"


def normalize_speed(value: Any) -> Optional[str]:
    """``"hdr"`` -> ``"HDR"``; one of ib_parse.SPEEDS."""
    if value is None:
        return None
    s = str(value).strip().upper()
    if s not in SPEEDS:
        raise ValueError("not an InfiniBand speed: %r (one of %s)" % (value, ", ".join(SPEEDS)))
    return s


def _guid_or_none(value: Any) -> Optional[str]:
    try:
        return guid(str(value)) if value else None
    except ValueError:
        return None


class _Names:
    """Names fabric nodes with the model's switch and (node, hca) names."""

    def __init__(self, switches: Optional[Mapping[str, Mapping[str, Any]]],
                 hcas: Optional[Mapping[str, Mapping[str, Any]]], cabling: Iterable[Mapping[str, Any]]):
        self.switches = sorted({str(c["switch"]) for c in cabling} | set(switches or {}), key=len, reverse=True)
        self.switch_guids = {g: name for name, info in (switches or {}).items()
                             for g in [_guid_or_none((info or {}).get("guid"))] if g}
        self.hca_guids = {g: (node, hca) for node, per in (hcas or {}).items() for hca, value in (per or {}).items()
                          for g in [_guid_or_none(value)] if g}
        self.hcas = {(str(c["node"]), str(c["hca"])) for c in cabling}

    def switch(self, node_guid: Optional[str], desc: Optional[str]) -> Optional[str]:
        if node_guid and node_guid in self.switch_guids:
            return self.switch_guids[node_guid]
        if self.switch_guids and node_guid:
            return None  # the model names its switches by GUID: a description does not override that
        for name in self.switches:
            if desc and re.search(r"(^|[;:\s])%s($|[:\s/])" % re.escape(name), desc):
                return name
        return None

    def hca(self, guids: Iterable[Optional[str]], desc: Optional[str]) -> Optional[Tuple[str, str]]:
        for g in guids:
            if g and g in self.hca_guids:
                return self.hca_guids[g]
        words = (desc or "").split()
        if len(words) >= 2 and (words[0], words[-1]) in self.hcas:
            return words[0], words[-1]
        if len(words) >= 2:
            short = words[0].split(".")[0]
            for node, hca in self.hcas:
                if node.split(".")[0] == short and hca == words[-1]:
                    return node, hca
        return None


def _port_name(c: Mapping[str, Any]) -> str:
    """The switch port as the model names it (``port_name``, e.g. ``1/2/1``), else the IB port number."""
    return str(c.get("port_name") or c["switch_port"])


def _port_text(c: Mapping[str, Any]) -> str:
    """``qm9700-1 port 1/2/1 (IB port 3)``: the model's port name and, where it differs, the number the fabric
    tools print."""
    name = _port_name(c)
    same = name in (str(c["switch_port"]), "1/%s" % c["switch_port"])  # QM8700's 1/N is IB port N: said once
    return "%s port %s%s" % (c["switch"], name, "" if same else " (IB port %s)" % c["switch_port"])


def _link_name(c: Mapping[str, Any]) -> str:
    return "%s <-> %s %s port %s" % (_port_text(c), c["node"], c["hca"], c.get("port", 1))


def _both_ends(c: Mapping[str, Any], text: str) -> Tuple[Problem, Problem]:
    return (Problem("%s: %s" % (_port_text(c), text), PORT_STATE,
                    Subject(switch=str(c["switch"]), port=_port_name(c), node=str(c["node"]),
                            hca=str(c["hca"]))),
            Problem("%s %s port %s: %s" % (c["node"], c["hca"], c.get("port", 1), text), NODE_STATE,
                    Subject(node=str(c["node"]), hca=str(c["hca"]))))


def _some(items: List[str], n: int = 3) -> str:
    """``a, b, c and 5 more``: a long list of HCA ports said briefly (the details keep them all)."""
    return ", ".join(items[:n]) + (" and %d more" % (len(items) - n) if len(items) > n else "")


def sm_check(fabric: str, readings: Iterable[Mapping[str, Any]],
             sm_names: Optional[Mapping[str, str]] = None) -> CheckResult:
    """``ib_sm`` from ``[{"node", "hca", "reading": parse_sminfo(...)}]``: exactly one master, the same from every
    HCA. ``measured``: the number of distinct masters seen. ``sm_names``: {SM GUID: the switch (or host) it runs
    on}, to name a master by more than its GUID. HCA ports that see no master while others do are the problems
    (node_state: those HCAs are cut off); when none sees one, or two masters split the subnet, the fault is the
    subnet's (no problems of a node)."""
    readings = list(readings)
    host = "fabric %s" % fabric
    subject = Subject(fabric=fabric)
    if not readings:
        return CheckResult("ib_sm", host, "error", reason="no sminfo reading for this fabric", subject=subject,
                           category=POD_STATE)
    masters: Dict[str, List[str]] = {}
    silent: List[Tuple[str, str]] = []
    not_master: List[Tuple[str, str]] = []
    lids: Dict[str, Any] = {}
    for r in readings:
        who = "%s %s" % (r.get("node"), r.get("hca"))
        rd = r.get("reading") or {}
        if rd.get("error") or not rd.get("guid"):
            silent.append((who, str(rd.get("error") or "no answer")))
        elif rd.get("master"):
            masters.setdefault(rd["guid"], []).append(who)
            lids[rd["guid"]] = rd.get("lid")
        else:
            not_master.append((who, "sees SM %s in state %s" % (rd.get("guid"), rd.get("state"))))

    def sm_name(g: str) -> str:
        on = (sm_names or {}).get(g)
        return "%s (lid %s%s)" % (g, lids.get(g), ", on %s" % on if on else "")

    details = dict(compare("="), masters={g: w for g, w in masters.items()},
                   no_master=["%s (%s)" % w for w in silent + not_master])
    problems = []
    if len(masters) > 1:
        cause = "%d master subnet managers on fabric %s (a split subnet): %s" % (
            len(masters), fabric, "; ".join("%s seen by %s" % (sm_name(g), _some(w))
                                            for g, w in sorted(masters.items())))
    elif not masters:
        words = sorted({why for _, why in silent + not_master})
        cause = "no master subnet manager answered on fabric %s: none of the %d HCA ports asked sees one (%s)" % (
            fabric, len(readings), "; ".join(words[:3]))
    elif silent or not_master:
        cause = "fabric %s has master SM %s, but %s" % (
            fabric, sm_name(next(iter(masters))), "; ".join("%s: %s" % w for w in silent + not_master))
        for who, why in silent + not_master:
            node, _, hca = who.partition(" ")
            problems.append(Problem("%s: %s" % (who, why), NODE_STATE, Subject(node=node, hca=hca or None,
                                                                              fabric=fabric)))
    else:
        cause = None
    ok = cause is None
    return CheckResult("ib_sm", host, "pass" if ok else "fail", expected=1, measured=len(masters), unit="master SMs",
                       source=SOURCE_SM, cause=cause if not ok else None, subject=subject, category=POD_STATE,
                       problems=tuple(problems), details=details)


def _switch_ports_linkinfo(linkinfo: Iterable[Mapping[str, Any]], names: _Names) -> Dict[Tuple[str, int], Mapping]:
    out: Dict[Tuple[str, int], Mapping[str, Any]] = {}
    for p in linkinfo or ():
        if p.get("node_type") not in ("Switch", None):
            continue
        name = names.switch(p.get("node_guid") or (p.get("port_guid") if p.get("node_type") is None else None),
                            p.get("node_desc"))
        if name:
            out[(name, int(p["port"]))] = p
    return out


def _switch_ports_topology(topology: Optional[Mapping[str, Any]], names: _Names) -> Dict[Tuple[str, int], Mapping]:
    out: Dict[Tuple[str, int], Mapping[str, Any]] = {}
    for node in (topology or {}).get("nodes") or ():
        if node.get("type") != "Switch":
            continue
        name = names.switch(node.get("guid"), node.get("desc"))
        if not name:
            continue
        for link in node.get("links") or ():
            out[(name, int(link["port"]))] = dict(link, state="Active", phys_state="LinkUp")
    return out


def _seen_switches(linkinfo, topology, names: _Names) -> set:
    return {k[0] for k in _switch_ports_linkinfo(linkinfo, names)} | {k[0] for k in
                                                                    _switch_ports_topology(topology, names)}


def link_checks(cabling: Iterable[Mapping[str, Any]], linkinfo: Optional[Iterable[Mapping[str, Any]]] = None,
                topology: Optional[Mapping[str, Any]] = None,
                switches: Optional[Mapping[str, Mapping[str, Any]]] = None,
                hcas: Optional[Mapping[str, Mapping[str, Any]]] = None) -> List[CheckResult]:
    """``ib_link`` per modelled link, from ``iblinkinfo`` (every port, down ones too) or, without it, from
    ``ibnetdiscover`` (which lists only the links that are up: a missing one is down)."""
    cabling = list(cabling)
    names = _Names(switches, hcas, cabling)
    ports = _switch_ports_linkinfo(linkinfo, names) if linkinfo is not None else _switch_ports_topology(topology,
                                                                                                      names)
    seen = _seen_switches(linkinfo, topology, names)
    out = []
    for c in cabling:
        sw, sp = str(c["switch"]), int(c["switch_port"])
        host = "%s port %s" % (sw, _port_name(c))
        subject = Subject(switch=sw, port=_port_name(c), node=str(c["node"]), hca=str(c["hca"]))
        want = "%s %s Active" % (normalize_width(c.get("width")) or "?", normalize_speed(c.get("speed")) or "?")
        common = dict(subject=subject, category=PORT_STATE, source=SOURCE_MODEL, expected=want,
                      details=dict(compare("="), link=_link_name(c)))
        if sw not in seen:
            out.append(CheckResult("ib_link", host, "error", reason="switch %s is not in the fabric as read "
                                   "(not discovered, or its GUID/description does not name it)" % sw, **common))
            continue
        p = ports.get((sw, sp))
        if p is None or p.get("state") != "Active" or p.get("phys_state") != "LinkUp":
            state = "absent from ibnetdiscover (down)" if p is None else "%s/%s" % (p.get("state"),
                                                                                   p.get("phys_state"))
            text = "link down: %s" % state
            out.append(CheckResult("ib_link", host, "fail", measured=state, cause="%s: %s" % (_link_name(c), text),
                                   problems=_both_ends(c, text), **common))
            continue
        width, speed = p.get("width"), p.get("speed")
        wrong = []
        if c.get("width") is not None and width != normalize_width(c.get("width")):
            wrong.append("width %s (model %s%s)" % (width, normalize_width(c.get("width")),
                                                   ", could be %s" % p["could_be_width"]
                                                   if p.get("could_be_width") else ""))
        if c.get("speed") is not None and speed != normalize_speed(c.get("speed")):
            wrong.append("speed %s (model %s%s)" % (speed, normalize_speed(c.get("speed")),
                                                   ", could be %s" % p["could_be_speed"]
                                                   if p.get("could_be_speed") else ""))
        measured = "%s %s %s" % (width, speed, p.get("state"))
        if wrong:
            text = "trained at " + ", ".join(wrong)
            out.append(CheckResult("ib_link", host, "fail", measured=measured, cause="%s: %s" % (_link_name(c), text),
                                   problems=_both_ends(c, text), **common))
        else:
            out.append(CheckResult("ib_link", host, "pass", measured=measured, **common))
    return out


def _peers(linkinfo, topology, names: _Names) -> Dict[Tuple[str, int], Optional[Tuple[str, str, int, str]]]:
    """(switch, port) -> (node, hca, hca port, description) of what is cabled there, or None (down/nothing);
    from ibnetdiscover when given, else iblinkinfo."""
    out: Dict[Tuple[str, int], Optional[Tuple[str, str, int, str]]] = {}
    if topology is not None:
        ports = _switch_ports_topology(topology, names)
        for key, link in ports.items():
            who = names.hca([link.get("peer_guid"), link.get("peer_port_guid")], link.get("peer_desc"))
            out[key] = (who[0], who[1], int(link["peer_port"]), link.get("peer_desc") or "") if who else (
                None, None, int(link["peer_port"]), link.get("peer_desc") or link.get("peer_guid") or "?")
        return out
    for key, p in _switch_ports_linkinfo(linkinfo, names).items():
        if p.get("peer_port") is None:
            out[key] = None
            continue
        who = names.hca([p.get("peer_guid")], p.get("peer_desc"))
        out[key] = (who[0], who[1], int(p["peer_port"]), p.get("peer_desc") or "") if who else (
            None, None, int(p["peer_port"]), p.get("peer_desc") or "?")
    return out


def cabling_checks(cabling: Iterable[Mapping[str, Any]], linkinfo: Optional[Iterable[Mapping[str, Any]]] = None,
                   topology: Optional[Mapping[str, Any]] = None,
                   switches: Optional[Mapping[str, Mapping[str, Any]]] = None,
                   hcas: Optional[Mapping[str, Mapping[str, Any]]] = None) -> List[CheckResult]:
    """``ib_cabling`` per modelled link: which HCA port is on the modelled switch port (ibnetdiscover, else
    iblinkinfo). A port holding another HCA fails naming what is there and where the modelled HCA is instead."""
    cabling = list(cabling)
    names = _Names(switches, hcas, cabling)
    peers = _peers(linkinfo, topology, names)
    seen = _seen_switches(linkinfo, topology, names)
    where: Dict[Tuple[str, str, int], List[str]] = {}
    port_text = {(str(c["switch"]), int(c["switch_port"])): _port_text(c) for c in cabling}
    for (sw, sp), peer in peers.items():
        if peer and peer[0]:
            where.setdefault((peer[0], peer[1], peer[2]), []).append(port_text.get((sw, sp)) or
                                                                      "%s port %s" % (sw, sp))
    out = []
    for c in cabling:
        sw, sp = str(c["switch"]), int(c["switch_port"])
        node, hca, hport = str(c["node"]), str(c["hca"]), int(c.get("port", 1))
        host = "%s port %s" % (sw, _port_name(c))
        common = dict(subject=Subject(switch=sw, port=_port_name(c), node=node, hca=hca), category=PORT_STATE,
                      source=SOURCE_MODEL, expected="%s %s port %s" % (node, hca, hport),
                      details=dict(compare("="), link=_link_name(c)))
        if sw not in seen:
            out.append(CheckResult("ib_cabling", host, "error", reason="switch %s is not in the fabric as read" % sw,
                                   **common))
            continue
        peer = peers.get((sw, sp))
        if peer is None:
            out.append(CheckResult("ib_cabling", host, "error", measured="nothing (port down)",
                                   reason="%s: nothing answers on the switch port (the link is down: ib_link says "
                                          "why), so the cable cannot be checked" % _link_name(c), **common))
            continue
        pn, ph, pp, pdesc = peer
        if (pn, ph, pp) == (node, hca, hport):
            out.append(CheckResult("ib_cabling", host, "pass", measured="%s %s port %s" % (pn, ph, pp), **common))
            continue
        found = where.get((node, hca, hport)) or []
        there = "%s %s port %s" % (pn, ph, pp) if pn else "%r port %s (not in the model)" % (pdesc, pp)
        elsewhere = ("; %s %s port %s is on %s instead" % (node, hca, hport, ", ".join(found)) if found else
                     "; %s %s port %s is on no modelled switch port" % (node, hca, hport))
        text = "cabled to %s, model %s %s port %s%s" % (there, node, hca, hport, elsewhere)
        problems = list(_both_ends(c, text))
        if pn:
            problems.append(Problem("%s %s port %s: on %s port %s, model %s" % (
                pn, ph, pp, sw, sp, ", ".join(where.get((pn, ph, pp), [])) or "elsewhere"), NODE_STATE,
                Subject(node=pn, hca=ph)))
        out.append(CheckResult("ib_cabling", host, "fail", measured=there, cause="%s: %s" % (_port_text(c), text),
                               problems=tuple(problems), **common))
    return out


def switch_names(switches: Optional[Mapping[str, Mapping[str, Any]]], cabling: Iterable[Mapping[str, Any]],
                 linkinfo: Optional[Iterable[Mapping[str, Any]]] = None,
                 topology: Optional[Mapping[str, Any]] = None) -> Dict[str, str]:
    """{switch node GUID: the model's switch name} for the switches the reading shows (by GUID or description)."""
    names = _Names(switches, None, list(cabling))
    out: Dict[str, str] = {}
    for node in (topology or {}).get("nodes") or ():
        if node.get("type") == "Switch":
            name = names.switch(node.get("guid"), node.get("desc"))
            if name and node.get("guid"):
                out[node["guid"]] = name
    for p in linkinfo or ():
        if p.get("node_type") == "Switch" and p.get("node_guid") and p["node_guid"] not in out:
            name = names.switch(p.get("node_guid"), p.get("node_desc"))
            if name:
                out[p["node_guid"]] = name
    return out


def evaluate_fabric(fabric: str, cabling: Iterable[Mapping[str, Any]], sminfo: Iterable[Mapping[str, Any]],
                    linkinfo: Optional[Iterable[Mapping[str, Any]]] = None,
                    topology: Optional[Mapping[str, Any]] = None,
                    switches: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    hcas: Optional[Mapping[str, Mapping[str, Any]]] = None) -> List[CheckResult]:
    """Every IB fabric check of one fabric: ``ib_sm``, then ``ib_link`` and ``ib_cabling`` per modelled link."""
    cabling = list(cabling)
    return ([sm_check(fabric, sminfo)] + link_checks(cabling, linkinfo, topology, switches, hcas)
            + cabling_checks(cabling, linkinfo, topology, switches, hcas))
