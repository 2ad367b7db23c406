#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read an InfiniBand fabric from a DGX with infiniband-diags - the subnet manager each HCA port
sees, every link's state, width and speed, and the cabling (read-only)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_ib_fabric
short_description: Read the InfiniBand fabric from a DGX (sminfo, iblinkinfo, ibnetdiscover; read-only)
description:
  - For every HCA port of the host's NICs on the InfiniBand fabrics runs C(sminfo -C <hca> -P <port>) (the master
    subnet manager that port's SM LID names) and reads the port's partition key table (sysfs
    C(sys/class/infiniband/<hca>/ports/<port>/pkeys/)).
  - "With I(discover), for every fabric runs, through that fabric's HCA port, C(iblinkinfo -C <hca> -P <port>) (every
    port of every node - state, physical state, width, lane rate, the peer) and C(ibnetdiscover -C <hca> -P <port>)
    (the topology - which node and port is on which switch port, with GUIDs). Fabrics that are one subnet (switches
    joined by inter-switch links) are discovered once: a fabric whose HCA's node GUID (sysfs C(node_guid)) is
    already in an earlier topology reuses it (C(same_as))."
  - Parses with module_utils/network/ib_parse.py. A tool that is not installed, fails, times out or prints what its
    parser refuses is that reading's entry in C(errors) with the tool's or the parser's words; the evaluation
    (module_utils/network/ib_stage.py) reports it as an error naming the tool - never a pass. C(sminfo) answering
    that no SM is reachable is a reading (C(sminfo.error)), not an error.
  - Changes nothing (check mode is supported and behaves the same).
options:
  nics:
    description:
      - The host's NICs as the pod model lists them (C(nics)); those on a fabric of I(fabrics) are read, each as
        port 1 of its C(rdma_device) (module_utils/network/ib_stage.ports_of_nics).
    type: list
    elements: dict
    required: true
  fabrics:
    description: The names of the pod's InfiniBand fabrics (C(pod.fabrics[]) of C(kind) infiniband).
    type: list
    elements: str
    required: true
  discover:
    description: Run C(iblinkinfo) and C(ibnetdiscover) once per fabric this host has a NIC on (one DGX per pod
      does).
    type: bool
    default: false
  tool_timeout:
    description: Seconds each tool may run (C(ibnetdiscover) of a large fabric takes seconds per hundred nodes).
    type: int
    default: 60
  sysfs_root:
    description: Directory holding the C(sys/) tree (C(/) on real hosts; the simulator's inventory points it at its
      stand-in tree, C(dgx_network_sysfs_root)).
    type: path
    default: /
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Ask every HCA port of the IB fabrics for its subnet manager; this DGX also discovers the fabric
  pod_ib_fabric:
    nics: "{{ nics }}"
    fabrics: "{{ pod.fabrics | selectattr('kind', 'equalto', 'infiniband') | map(attribute='name') | list }}"
    discover: "{{ inventory_hostname == groups['dgx'][0] }}"
"""

RETURN = r"""
ib:
  description: The parsed readings, in the shape module_utils/network/ib_stage.py reads.
  returned: always
  type: dict
  contains:
    ports:
      description: "[{fabric, nic, hca, port, sminfo (parse_sminfo's value or null), pkeys (['0xffff', ...] or
        null), errors {sminfo|pkeys: why}}] per HCA port read."
      type: list
      elements: dict
    discovery:
      description: "{fabric: {hca, port, node_guid, iblinkinfo (parse_iblinkinfo's list or null), ibnetdiscover
        (parse_ibnetdiscover's value or null), same_as (the fabric whose reading this one shares, or null), errors
        {tool: why}}}; empty without I(discover)."
      type: dict
    elapsed:
      description: Seconds the module ran.
      type: float
"""

import os
import shutil
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_status
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import ib_port_dir, read_sysfs
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_parse import (guid, parse_ibnetdiscover,
    parse_iblinkinfo, parse_sminfo)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_stage import ports_of_nics

SMINFO_NO_SM_RC = (0, 255)  # sminfo exits non-zero (IBEXIT: 255) when no SM answers; its words are the reading


def run_parsed(run, which, argv, parser, timeout, ok_rc=(0,)):
    """(parsed value, None) or (None, why): ``argv`` run with ``run(argv, timeout)`` -> (rc, out, err), parsed by
    ``parser``. Missing tool, exit status outside ``ok_rc``, a time-out, or a ParseError are the why."""
    if which(argv[0]) is None:
        return None, "%s is not installed (infiniband-diags)" % argv[0]
    rc, out, err = run(argv, timeout)
    if rc is None:
        return None, "%s: %s" % (" ".join(argv), err)
    text = out if out.strip() or rc == 0 else ""
    if rc not in ok_rc and not text:
        return None, "%s exited %s: %s" % (" ".join(argv), rc, (err or "").strip()[-400:] or "no output")
    try:
        # sminfo prints "no SM" on stderr (iberror); the parser reads both
        return parser(text if argv[0] != "sminfo" else (out + err)), None
    except ParseError as exc:
        return None, str(exc)


def read_pkeys(sysfs_root, hca, port):
    """The non-zero entries of the port's P_Key table (sysfs ``pkeys/<index>``), lower case, or None (no table)."""
    pdir = os.path.join(ib_port_dir(sysfs_root, hca, port), "pkeys")
    if not os.path.isdir(pdir):
        return None
    keys = []
    for name in sorted((n for n in os.listdir(pdir) if n.isdigit()), key=int):
        value = read_sysfs(os.path.join(pdir, name))
        if value and int(value, 16) & 0x7FFF:
            keys.append(value.lower())
    return keys


def node_guid(sysfs_root, hca):
    """The HCA's node GUID from sysfs (``0c42:a103:00a1:b2c3`` -> ``0x0c42a10300a1b2c3``), or None."""
    text = read_sysfs(os.path.join(sysfs_root, "sys", "class", "infiniband", hca, "node_guid"))
    try:
        return guid(text.replace(":", "")) if text else None
    except ValueError:
        return None


def _ca_port(entry):
    return ["-C", str(entry["hca"]), "-P", str(int(entry.get("port") or 1))]


def gather(run, which, ports, discover=False, tool_timeout=60, sysfs_root="/"):
    """Everything the module returns, with ``run(argv, timeout)`` -> (rc, out, err) and ``which(name)`` injected
    (unit-testable)."""
    start = time.monotonic()
    out_ports = []
    for p in ports:
        entry = {"fabric": p.get("fabric"), "nic": p.get("nic"), "hca": p.get("hca"), "port": int(p.get("port") or 1),
                 "sminfo": None, "pkeys": None, "errors": {}}
        value, why = run_parsed(run, which, ["sminfo"] + _ca_port(p), parse_sminfo, tool_timeout, SMINFO_NO_SM_RC)
        entry["sminfo"] = value
        if why:
            entry["errors"]["sminfo"] = why
        entry["pkeys"] = read_pkeys(sysfs_root, str(p.get("hca")), entry["port"])
        if entry["pkeys"] is None:
            entry["errors"]["pkeys"] = "no P_Key table in sysfs for %s port %s" % (p.get("hca"), entry["port"])
        out_ports.append(entry)
    discovery = {}
    if discover:
        for p in ports:
            fabric = p.get("fabric")
            if fabric in discovery:
                continue
            me = node_guid(sysfs_root, str(p.get("hca")))
            d = {"hca": p.get("hca"), "port": int(p.get("port") or 1), "node_guid": me, "iblinkinfo": None,
                 "ibnetdiscover": None, "same_as": None, "errors": {}}
            seen = next((f for f, other in discovery.items() if me and other.get("ibnetdiscover") and any(
                n.get("guid") == me for n in other["ibnetdiscover"].get("nodes") or ())), None)
            if seen:
                d.update(iblinkinfo=discovery[seen]["iblinkinfo"], ibnetdiscover=discovery[seen]["ibnetdiscover"],
                         same_as=seen)
            else:
                for tool, parser in (("iblinkinfo", parse_iblinkinfo), ("ibnetdiscover", parse_ibnetdiscover)):
                    value, why = run_parsed(run, which, [tool] + _ca_port(p), parser, tool_timeout)
                    d[tool] = value
                    if why:
                        d["errors"][tool] = why
            discovery[fabric] = d
    return {"ports": out_ports, "discovery": discovery, "elapsed": round(time.monotonic() - start, 2)}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nics=dict(type="list", elements="dict", required=True),
            fabrics=dict(type="list", elements="str", required=True),
            discover=dict(type="bool", default=False),
            tool_timeout=dict(type="int", default=60),
            sysfs_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    ports = ports_of_nics(p["nics"], p["fabrics"])
    module.exit_json(changed=False, ib=gather(run_status, shutil.which, ports, p["discover"], p["tool_timeout"],
                                              p["sysfs_root"]))


if __name__ == "__main__":
    main()
