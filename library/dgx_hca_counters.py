#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read every HCA port's counters from sysfs, with the time, rate and netdev (read-only)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: dgx_hca_counters
short_description: Read the port counters of every HCA of a DGX from sysfs (read-only, no verdict)
description:
  - For every RDMA device under C(<sysfs_root>/sys/class/infiniband) and each of its ports, reads the files of
    C(ports/<p>/counters/) (the IBTA PortCounters and PortCountersExtended the kernel reads from the port's PMA -
    C(symbol_error), C(link_downed), C(link_error_recovery), C(port_rcv_errors), ...) and C(ports/<p>/hw_counters/)
    (the driver's own; mlx5's RoCE counters C(out_of_sequence), C(local_ack_timeout_err), ...), the port's C(rate)
    (C(100 Gb/sec (4X EDR))), C(state), C(link_layer) and the netdev (C(gid_attrs/ndevs/0), else the PCI device's
    C(net/)).
  - Returns the files' text as read, with the wall-clock time of the read - raw readings, no verdict. The validation
    reads them once before its stages and once after (playbooks/validate_counters_start.yml,
    playbooks/validate_counters.yml); module_utils/network/counters_eval.py parses both
    (network/hca_counters.py C(parse_sysfs_counters)) and judges what rose in between.
  - A file that cannot be read is C(null) in the reading (the evaluation skips that counter, saying so); a device
    without a PMA answers C(N/A (no PMA)), which the parser reads as not provided.
  - Changes nothing (check mode is supported and behaves the same). Needs no root (the counter files are
    world-readable).
options:
  sysfs_root:
    description:
      - Directory that holds the C(sys/) tree to read. C(/) on real hosts; the simulator's inventory points it at
        the stand-in tree it writes in every DGX node (C(dgx_network_sysfs_root), as for dgx_hw_facts).
    type: path
    default: /
  devices:
    description: Read only these RDMA devices (C(mlx5_0), ...); default every device found.
    type: list
    elements: str
    default: []
notes:
  - Supports check mode - the module only reads.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Read the HCA port counters (the start of the window)
  dgx_hca_counters:
    sysfs_root: "{{ dgx_network_sysfs_root | default('/') }}"
  register: counters_start

- name: Only the compute HCAs
  dgx_hca_counters:
    devices: [mlx5_0, mlx5_1, mlx5_2, mlx5_3]
"""

RETURN = r"""
hca_counters:
  description: The reading.
  returned: always
  type: dict
  contains:
    time:
      description: Wall-clock time (epoch seconds) when the read began.
      type: float
    elapsed:
      description: Seconds the read took.
      type: float
    sysfs_root:
      description: The sysfs root that was read.
      type: str
    ports:
      description:
        - One entry per HCA port, keyed C(<device>/<port>). C(counters) maps C(counters/<name>) and
          C(hw_counters/<name>) to the file's text as read (C(null) where the file could not be read); C(rate),
          C(state), C(link_layer) are the files' text, stripped (C(null) when absent); C(errors) lists what could
          not be read (a counters directory that is not there).
      type: dict
      sample:
        mlx5_0/1:
          hca: mlx5_0
          port: 1
          netdev: enp5s0
          rate: 100 Gb/sec (4X EDR)
          state: "4: ACTIVE"
          link_layer: Ethernet
          counters: {"counters/symbol_error": "0\n", "counters/link_downed": "0\n",
                     "hw_counters/out_of_sequence": "0\n"}
          errors: []
    notes:
      description: What the reading lacks (no RDMA device found).
      type: list
      elements: str
"""

import glob
import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import read_sysfs

COUNTER_DIRS = ("counters", "hw_counters")


def read_counter_dir(port_dir, sub):
    """``{"<sub>/<name>": text or None}`` of one counters directory (text as read; None: the file could not be
    read - a counter the kernel refuses). Names starting with a dot are no counters (an editor's or a writer's
    temporary file). None when the directory is not there."""
    d = os.path.join(port_dir, sub)
    if not os.path.isdir(d):
        return None
    out = {}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if name.startswith(".") or not os.path.isfile(path):
            continue
        try:
            with open(path) as fh:
                out["%s/%s" % (sub, name)] = fh.read()
        except OSError:
            out["%s/%s" % (sub, name)] = None
    return out


def port_netdev(dev_dir, port_dir, port):
    """The port's netdev: the kernel's ``gid_attrs/ndevs/0`` (RoCE), else the PCI device's ``net/`` (the port's
    index among them, as dgx_hw_facts does), else None (an IB port has none)."""
    nd = read_sysfs(os.path.join(port_dir, "gid_attrs", "ndevs", "0"))
    if nd:
        return nd
    nets = sorted(os.path.basename(p) for p in glob.glob(os.path.join(dev_dir, "device", "net", "*")))
    return nets[port - 1] if 0 < port <= len(nets) else None


def read_port(dev, dev_dir, port):
    """One port's reading (see RETURN ``ports``)."""
    pdir = os.path.join(dev_dir, "ports", str(port))
    counters, errors = {}, []
    for sub in COUNTER_DIRS:
        got = read_counter_dir(pdir, sub)
        if got is None:
            errors.append("%s/ports/%d/%s: not there" % (dev, port, sub))
        else:
            counters.update(got)
    return {"hca": dev, "port": port, "netdev": port_netdev(dev_dir, pdir, port),
            "rate": read_sysfs(os.path.join(pdir, "rate")), "state": read_sysfs(os.path.join(pdir, "state")),
            "link_layer": read_sysfs(os.path.join(pdir, "link_layer")), "counters": counters, "errors": errors}


def gather(sysfs_root="/", devices=None, clock=time.time):
    """The module's ``hca_counters``: every port of every RDMA device (or of ``devices``) under ``sysfs_root``,
    with the time the read began (``clock()``, injected for tests)."""
    started = clock()
    t0 = time.monotonic()
    ib = os.path.join(sysfs_root, "sys", "class", "infiniband")
    ports, notes = {}, []
    for dev_dir in sorted(glob.glob(os.path.join(ib, "*"))):
        dev = os.path.basename(dev_dir)
        if devices and dev not in devices:
            continue
        for pdir in sorted(glob.glob(os.path.join(dev_dir, "ports", "*"))):
            name = os.path.basename(pdir)
            if name.isdigit():
                ports["%s/%s" % (dev, name)] = read_port(dev, dev_dir, int(name))
    if not ports:
        notes.append("no RDMA device port found under %s%s" % (
            ib, " among %s" % ", ".join(devices) if devices else ""))
    for dev in devices or []:
        if not any(p["hca"] == dev for p in ports.values()):
            notes.append("%s: no such RDMA device under %s" % (dev, ib))
    return {"time": started, "elapsed": round(time.monotonic() - t0, 3), "sysfs_root": sysfs_root, "ports": ports,
            "notes": notes}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/"),
            devices=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not os.path.isdir(p["sysfs_root"]):
        module.fail_json(msg="sysfs_root %s is not a directory" % p["sysfs_root"])
    module.exit_json(changed=False, hca_counters=gather(p["sysfs_root"], p["devices"]))


if __name__ == "__main__":
    main()
