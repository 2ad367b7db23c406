# -*- coding: utf-8 -*-
"""Preflight checks of the InfiniBand keys of the pod model (issue 40 item 3): the switches' node GUIDs
(``switch.guid``), the HCA ports' GUIDs (``nics[].port_guid``) and the fabrics' partition keys
(``pod.fabrics[].pkeys``) - what the InfiniBand fabric stage (``validate.yml --tags ib``) names fabric nodes by and
compares with.

The switch port of an IB NIC is checked with every other cabled NIC (``switch_checks.check_cabling``: a port the
model has not got - QM8700 ``1/1``..``1/40``, QM9700 ``1/1/1``..``1/32/2`` - or a port cabled twice); its IB port
number is ``catalog.switches.ib_port_number``. Each check returns a ``Finding`` whose key preflight turns into
``file:line``, with the fix.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import SWITCH_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding

__all__ = ["GUID_RE", "PKEY_RE", "check_ib"]

GUID_RE = re.compile(r"^0x[0-9a-fA-F]{16}$")
PKEY_RE = re.compile(r"^0x[0-9a-fA-F]{1,4}$")
_GUID_FIX = "write the GUID as 0x and 16 hex digits, as ibstat ('Port GUID') and ibnetdiscover print it"


def _guid_problem(value: Any) -> Optional[str]:
    """Why ``value`` is not a GUID the fabric tools print, or None."""
    if not isinstance(value, str):
        return None  # the schema check reports the type
    if not GUID_RE.match(value):
        return "%r is not a GUID (0x + 16 hex digits)" % value
    if int(value, 16) == 0:
        return "%s is the zero GUID (no device has it)" % value
    return None


def _pkey_problem(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return None
    if not PKEY_RE.match(value):
        return "%r is not a partition key (0x and up to 4 hex digits)" % value
    key = int(value, 16) & 0x7FFF
    if key == 0:
        return "%s is the invalid partition key 0x0000" % value
    return None


def check_ib(pod: Any, usable: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
             switches: Dict[str, Dict[str, Any]], any_host: Optional[str], out: List[Finding]) -> None:
    """The InfiniBand keys: GUIDs well-formed, on InfiniBand things only, and each given once in the pod;
    partition keys well-formed, once per fabric, on InfiniBand fabrics only."""
    seen: Dict[str, str] = {}  # GUID (lower case) -> where it was first given

    def once(guid: str, where: str, host: Optional[str], var: str, path: str) -> None:
        low = guid.lower()
        if low in seen:
            out.append(Finding(host, var, path, "GUID %s is given twice: also %s" % (guid, seen[low]),
                               "give each switch and HCA port its own GUID (read it with ibstat or ibnetdiscover)"))
        else:
            seen[low] = where

    for name in sorted(switches):
        sw = switches[name]
        value = sw.get("guid")
        if value is None:
            continue
        model = SWITCH_MODELS.get(sw.get("model"))
        if model is not None and model.platform != "mlnx-ib":
            out.append(Finding(name, "switch", "switch.guid", "a %s is an Ethernet switch: a GUID names an "
                               "InfiniBand switch" % sw.get("model"), "remove guid"))
            continue
        problem = _guid_problem(value)
        if problem:
            out.append(Finding(name, "switch", "switch.guid", problem, _GUID_FIX))
        elif isinstance(value, str):
            once(value, "switch %s" % name, name, "switch", "switch.guid")
    for host in sorted(usable):
        nics = (usable[host].get("vars") or {}).get("nics")
        for i, nic in enumerate(nics if isinstance(nics, list) else []):
            if not isinstance(nic, dict) or nic.get("port_guid") is None:
                continue
            path = "nics[%d].port_guid" % i
            fab = fabrics.get(nic.get("fabric"))
            if fab is not None and fab.get("kind") != "infiniband":
                out.append(Finding(host, "nics", path, "%s is on Ethernet fabric '%s': port_guid names an "
                                   "InfiniBand HCA port" % (nic.get("name"), fab["name"]), "remove port_guid"))
                continue
            problem = _guid_problem(nic["port_guid"])
            if problem:
                out.append(Finding(host, "nics", path, problem, _GUID_FIX))
            elif isinstance(nic["port_guid"], str):
                once(nic["port_guid"], "%s %s (%s)" % (host, nic.get("name"), path), host, "nics", path)
    raw = pod.get("fabrics") if isinstance(pod, dict) else None
    for i, fab in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(fab, dict) or not isinstance(fab.get("pkeys"), list):
            continue
        path = "pod.fabrics[%d].pkeys" % i
        if fab.get("kind") != "infiniband":
            out.append(Finding(any_host, "pod", path, "partition keys are InfiniBand; fabric '%s' is %s" % (
                fab.get("name"), fab.get("kind")), "remove pkeys (Ethernet isolates with VLANs)"))
            continue
        keys: Dict[int, Tuple[int, str]] = {}
        for j, value in enumerate(fab["pkeys"]):
            problem = _pkey_problem(value)
            if problem:
                out.append(Finding(any_host, "pod", "%s[%d]" % (path, j), problem,
                                   "write the 15-bit key as 0x0001..0x7fff (the default partition is 0x7fff)"))
                continue
            if not isinstance(value, str):
                continue
            key = int(value, 16) & 0x7FFF
            if key in keys:
                out.append(Finding(any_host, "pod", "%s[%d]" % (path, j), "partition key 0x%04x is listed twice "
                                   "(also pkeys[%d]: %s; the top bit is membership, not a new key)" % (
                                       key, keys[key][0], keys[key][1]), "list each partition key once"))
            else:
                keys[key] = (j, value)
