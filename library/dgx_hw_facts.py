#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: discover a DGX host's RDMA NICs, their RoCEv2 GID index, and its GPUs (read-only)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: dgx_hw_facts
short_description: Discover RDMA NICs (link layer, state, MTU, GIDs, RoCEv2 GID index) and GPUs of a DGX
description:
  - Runs the hardware tools present on the host - C(ibdev2netdev), C(ibv_devinfo), C(nvidia-smi),
    C(mlxconfig), C(mlnx_qos), C(cma_roce_mode) - skips the absent ones (saying so in C(notes) and
    C(dgx_hw.tools)), reads sysfs, and returns C(ansible_facts.dgx_hw).
  - For every RDMA port it reports the netdev, port state, link layer, active RoCE/IB MTU, kernel MTU,
    the populated GID table (from C(<sysfs_root>/sys/class/infiniband/<dev>/ports/<port>/gids/*) and
    C(gid_attrs/types/*)) and, on Ethernet (RoCE) ports, the index of the RoCE v2 GID that carries the
    port's IPv4 address - resolved from the table, never assumed to be 3.
  - Also publishes C(ansible_facts.dgx_hw_gid_indexes) (RDMA device -> RoCEv2 IPv4 GID index), the form
    the NCCL environment derivation takes.
  - Parsers live in module_utils/network/hw_parsers.py; see docs/hardware-facts.md.
version_added: "0.1.0"
options:
  sysfs_root:
    description:
      - Directory that holds the C(sys/) tree to read (C(<sysfs_root>/sys/class/infiniband),
        C(<sysfs_root>/sys/class/net)). C(/) on real hosts; the simulator's inventory points it at the stand-in
        tree it writes in every DGX node (C(dgx_network_sysfs_root)).
    type: path
    default: /
  addresses:
    description:
      - "IPv4 address per netdev (for example C(enp5s0) -> C(10.55.5.231); a C(/prefix) is ignored), normally
        the pod model's. When a netdev is named here, its RoCEv2 GID must carry that address; if it does not,
        the module fails naming device, netdev and address (unless I(fail_on_missing_gid=false))."
      - Netdevs not named here get the port's single RoCE v2 IPv4 GID, or none (with a note) when there is
        no such GID or more than one.
    type: dict
    default: {}
  netdevs:
    description: Report only these netdevs (default every RDMA port found).
    type: list
    elements: str
    default: []
  gather:
    description:
      - What to collect. C(nics) (ibdev2netdev, ibv_devinfo, sysfs, GIDs) and C(gpus) (nvidia-smi) are
        cheap; C(mlxconfig) (port mode, current and next boot) takes about a second per adapter;
        C(qos) runs C(mlnx_qos -i IF) per Ethernet port; C(roce_mode) runs C(cma_roce_mode) per RoCE port.
    type: list
    elements: str
    choices: [nics, gpus, mlxconfig, qos, roce_mode]
    default: [nics, gpus, mlxconfig, qos, roce_mode]
  fail_on_missing_gid:
    description: Fail when a netdev named in I(addresses) has no RoCEv2 GID for its address.
    type: bool
    default: true
  fail_on_unreadable:
    description:
      - Fail when a tool that is present ran but printed something its parser cannot read (a format this
        toolkit does not know, or a cut-off output). The message names the host, the command, the tool
        version seen (C(ofed_info -s) for the MLNX_OFED / DOCA-OFED tools and its rdma-core,
        C(mlxconfig --version), C(nvidia-smi --version); "version unknown" when that cannot be asked) and
        the parser's error (line and what was expected).
      - With C(false) the failures are listed in C(dgx_hw.unreadable) and the NIC gets C(qos_error) /
        C(roce_mode_error) instead of a value, so a role can refuse to act on it; the facts are never
        guessed.
    type: bool
    default: true
  tool_timeout:
    description:
      - Seconds one tool (C(ibdev2netdev), C(nvidia-smi), C(mlxconfig), ...) may take; one still running then
        is killed with its process group and counts as a tool that failed (exit 124, timed out).
    type: int
    default: 60
notes:
  - Supports check mode - the module only reads. C(cma_roce_mode) without C(-m) only prints the mode,
    but like the tool always does it creates and removes its C(rdma_cm/<dev>) configfs directory.
  - Run with become; C(mlxconfig), C(mlnx_qos) and C(cma_roce_mode) need root.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Gather DGX hardware facts, checking every data NIC has a RoCEv2 GID for its model address
  dgx_hw_facts:
    sysfs_root: "{{ dgx_network_sysfs_root }}"
    addresses: "{{ nics | selectattr('rdma_device', 'defined') | items2dict(key_name='name', value_name='address') }}"
  become: true

- name: Use the GID index
  ansible.builtin.debug:
    msg: "NCCL_IB_GID_INDEX for {{ item.key }} is {{ item.value }}"
  loop: "{{ dgx_hw_gid_indexes | dict2items }}"

- name: GPUs only
  dgx_hw_facts:
    gather: [gpus]
"""

RETURN = r"""
ansible_facts:
  description: C(dgx_hw) and C(dgx_hw_gid_indexes).
  returned: always
  type: dict
  contains:
    dgx_hw:
      description: What the host has.
      type: dict
      contains:
        nics:
          description:
            - Per netdev (or C(<rdma_device>/<port>) when a port has no netdev).
            - C(qos) also has C(unsupported) (the features mlnx_qos could not read - C(trust), C(buffers),
              C(ratelimit), ...; an unsupported trust reads C(trust=null)) and C(notices) (mlnx_qos's own lines,
              "Priority trust state is not supported on your system", the lldpad warning) when it printed any.
            - C(qos_failed) / C(roce_mode_failed) - mlnx_qos / cma_roce_mode exited non-zero on this NIC - "exit 1"
              and what it said ("ETS features are not supported on your system", "Device mlx5_9 port 1 does not
              exist"); the NIC then has no C(qos) / C(roce_mode).
            - C(roce_mode_messages) - lines cma_roce_mode printed besides the mode (a refused write, "line 111
              echo write error Invalid argument"); the mode read is the one in force.
          type: dict
          sample:
            enp5s0:
              rdma_device: mlx5_0
              port: 1
              pci: "0000:05:00.0"
              state: Up
              port_state: PORT_ACTIVE
              link_layer: Ethernet
              active_mtu: 4096
              max_mtu: 4096
              kernel_mtu: 9000
              operstate: up
              ipv4: 10.55.5.231
              gids:
                - {index: 0, gid: "fe80:0000:0000:0000:526b:4bff:fe01:cef0", type: RoCE v1, ipv4: null,
                   netdev: enp5s0}
                - {index: 3, gid: "0000:0000:0000:0000:0000:ffff:0a37:05e7", type: RoCE v2,
                   ipv4: 10.55.5.231, netdev: enp5s0}
              roce_v2_ipv4_gid_index: 3
              gid_error: null
              link_type: {current: ETH, next_boot: ETH}
              qos: {trust: dscp, pfc_priorities: [3], pfc_enabled: [0, 0, 0, 1, 0, 0, 0, 0]}
              roce_mode: RoCE v2
        gpus:
          description: One entry per GPU (C(nvidia-smi --query-gpu)); C(memory_total_mib) in MiB.
          type: list
          elements: dict
          sample:
            - {index: 0, name: Tesla V100-SXM2-32GB, uuid: GPU-..., serial: "0323117000000",
               pci_bus_id: "00000000:06:00.0", memory_total_mib: 32480, driver_version: "418.67"}
        tools:
          description: C(present) or C(absent) per tool.
          type: dict
          sample: {ibdev2netdev: present, ibv_devinfo: present, nvidia-smi: absent}
        tool_errors:
          description: Tool runs that failed or printed something unreadable (tool -> message).
          type: dict
        unreadable:
          description: Tool outputs the parsers refused (the module fails on them unless
            I(fail_on_unreadable=false)).
          type: list
          elements: dict
          sample:
            - {tool: mlnx_qos, command: mlnx_qos -i enp5s0, version: MLNX_OFED_LINUX-24.10-1.1.4.0,
               error: "mlnx_qos output line 12: expected 8 receive buffer sizes, got 7: '...'"}
        sysfs_root:
          description: The sysfs root that was read.
          type: str
    dgx_hw_gid_indexes:
      description: RDMA device -> RoCEv2 IPv4 GID index, for RoCE ports where it was resolved.
      type: dict
      sample: {mlx5_0: 3, mlx5_1: 3}
notes:
  description: What was skipped or could not be determined, one readable line each.
  returned: always
  type: list
  elements: str
gid_errors:
  description: On failure, one line per netdev whose model address has no RoCEv2 GID.
  returned: failed
  type: list
  elements: str
unreadable:
  description: On failure with I(fail_on_unreadable), the tool outputs that could not be read
    (tool, command, version, error).
  returned: failed
  type: list
  elements: dict
"""

import glob
import os
import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import (GidResolutionError,
    mlxconfig_link_types, parse_cma_roce_mode, parse_ibdev2netdev, parse_ibv_devinfo, parse_mlnx_qos,
    parse_mlxconfig_query, parse_nvidia_smi_query, read_sysfs, read_sysfs_gid_table, select_roce_v2_ipv4_gid)

TOOLS = ("ibdev2netdev", "ibv_devinfo", "nvidia-smi", "mlxconfig", "mlnx_qos", "cma_roce_mode")
# how the version of each tool is asked for when its output could not be read (name, args)
VERSION_COMMANDS = {
    "ibdev2netdev": ("ofed_info", ["-s"]), "mlnx_qos": ("ofed_info", ["-s"]),
    "cma_roce_mode": ("ofed_info", ["-s"]), "ibv_devinfo": ("ofed_info", ["-s"]),
    "mlxconfig": ("mlxconfig", ["--version"]), "nvidia-smi": ("nvidia-smi", ["--version"]),
}
GPU_FIELDS = ("index", "name", "uuid", "serial", "pci.bus_id", "memory.total", "driver_version")
GPU_KEYS = {"pci.bus_id": "pci_bus_id", "memory.total": "memory_total_mib"}
ALL_GATHER = ("nics", "gpus", "mlxconfig", "qos", "roce_mode")
UNREADABLE = object()  # a tool ran but its output could not be read (never mistaken for "no value")


def _int_or_none(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def sysfs_ports(sysfs_root):
    """[(rdma_device, port, netdev or None, pci or None)] from <root>/sys/class/infiniband (no tools)."""
    out = []
    ib = os.path.join(sysfs_root, "sys", "class", "infiniband")
    for ddir in sorted(glob.glob(os.path.join(ib, "*"))):
        dev = os.path.basename(ddir)
        pci = None
        if os.path.exists(os.path.join(ddir, "device")):
            pci = os.path.basename(os.path.realpath(os.path.join(ddir, "device")))
        nets = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ddir, "device", "net", "*")))
        for pdir in sorted(glob.glob(os.path.join(ddir, "ports", "*"))):
            port = _int_or_none(os.path.basename(pdir))
            if port is None:
                continue
            netdev = read_sysfs(os.path.join(pdir, "gid_attrs", "ndevs", "0")) or (nets[port - 1] if len(nets) >= port
                                                                              else None)
            out.append((dev, port, netdev, pci))
    return out


def gather_facts(run, which, sysfs_root="/", addresses=None, netdevs=None, gather=ALL_GATHER):
    """Collect the facts. ``run(argv) -> (rc, stdout, stderr)`` and ``which(tool) -> path | None`` are
    injected so tests can drive this with the simulator's stand-ins. Returns (dgx_hw, gid_indexes, notes,
    gid_errors)."""
    addresses = {k: str(v).split("/")[0] for k, v in (addresses or {}).items() if v}
    paths = {t: which(t) for t in TOOLS}
    tools = {t: "present" if p else "absent" for t, p in paths.items()}
    notes, errors, gid_errors, unreadable = [], {}, [], []
    versions = {}

    def version_of(name):
        """The version line of a tool (or its OFED), asked only when its output could not be read."""
        if name not in versions:
            vname, vargs = VERSION_COMMANDS.get(name, (name, ["--version"]))
            vpath = paths.get(vname) or which(vname)
            text = None
            if vpath:
                rc, out, err = run([vpath] + vargs)
                lines = [x.strip() for x in (out or err or "").splitlines() if x.strip()]
                text = lines[0].rstrip(":") if rc == 0 and lines else None
            versions[name] = text or "version unknown (%s %s %s)" % (
                vname, " ".join(vargs), "failed" if vpath else "absent")
        return versions[name]

    failed = {}  # "tool args" -> what a tool that exited non-zero said (tool_said), for the NIC it was about

    def tool(name, args, parser, *pargs):
        """Run a present tool and parse its stdout; None (and a note) when it fails or is unreadable."""
        if not paths[name]:
            return None
        rc, out, err = run([paths[name]] + list(args))
        if rc != 0:
            msg = (err or out or "").strip().splitlines()
            key = "%s %s" % (name, " ".join(args))
            errors[key] = "exit %d: %s" % (rc, msg[0] if msg else "no output")
            failed[key] = "exit %d: %s" % (rc, "; ".join(tool_said(out, err)) or "no output")
            return None
        try:
            return parser(out, *pargs)
        except ValueError as e:  # ParseError, or any other refusal of the output
            cmd = " ".join([name] + list(args))
            errors["%s %s" % (name, " ".join(args))] = str(e)
            unreadable.append({"tool": name, "command": cmd, "version": version_of(name), "error": str(e)})
            return UNREADABLE

    nics = {}
    if "nics" in gather:
        ports = []
        mapping = tool("ibdev2netdev", [], parse_ibdev2netdev)
        if mapping is not None and mapping is not UNREADABLE:
            for m in mapping:
                ports.append({"rdma_device": m["rdma_device"], "port": m["port"], "netdev": m["netdev"],
                              "state": m["state"]})
        else:
            if not paths["ibdev2netdev"]:
                notes.append("ibdev2netdev absent: RDMA device -> netdev mapping read from sysfs")
            for dev, port, netdev, _ in sysfs_ports(sysfs_root):
                ports.append({"rdma_device": dev, "port": port, "netdev": netdev, "state": None})
        pcis = {dev: pci for dev, _, _, pci in sysfs_ports(sysfs_root)}
        devinfo = {}
        parsed = tool("ibv_devinfo", [], parse_ibv_devinfo)
        if parsed is not None and parsed is not UNREADABLE:
            devinfo = {d["hca_id"]: d for d in parsed}
        elif not paths["ibv_devinfo"]:
            notes.append("ibv_devinfo absent: port state and link layer read from sysfs, active_mtu unknown")
        for p in ports:
            dev, port, netdev = p["rdma_device"], p["port"], p["netdev"]
            if netdevs and netdev not in netdevs:
                continue
            pdir = os.path.join(sysfs_root, "sys", "class", "infiniband", dev, "ports", str(port))
            info = (devinfo.get(dev) or {}).get("ports", {}).get(port, {})
            sys_state = read_sysfs(os.path.join(pdir, "state"))  # "4: ACTIVE"
            nic = {
                "rdma_device": dev, "port": port, "pci": pcis.get(dev), "state": p["state"],
                "port_state": info.get("state") or (("PORT_" + sys_state.split(":")[-1].strip())
                                                    if sys_state else None),
                "link_layer": info.get("link_layer") or read_sysfs(os.path.join(pdir, "link_layer")),
                "active_mtu": info.get("active_mtu"), "max_mtu": info.get("max_mtu"),
                "kernel_mtu": None, "operstate": None, "ipv4": addresses.get(netdev) if netdev else None,
                "gids": [], "roce_v2_ipv4_gid_index": None, "gid_error": None,
            }
            if netdev:
                ndir = os.path.join(sysfs_root, "sys", "class", "net", netdev)
                nic["kernel_mtu"] = _int_or_none(read_sysfs(os.path.join(ndir, "mtu")))
                nic["operstate"] = read_sysfs(os.path.join(ndir, "operstate"))
            try:
                nic["gids"] = read_sysfs_gid_table(sysfs_root, dev, port)
            except FileNotFoundError as e:
                notes.append("%s port %d: %s" % (dev, port, e))
            if nic["link_layer"] == "Ethernet":
                want = addresses.get(netdev) if netdev else None
                try:
                    nic["roce_v2_ipv4_gid_index"] = select_roce_v2_ipv4_gid(nic["gids"], want, dev, port, netdev)
                except GidResolutionError as e:
                    nic["gid_error"] = str(e)
                    if want:
                        gid_errors.append("%s: %s" % (netdev, e))
                    else:
                        notes.append(str(e))
            nics[netdev or "%s/%d" % (dev, port)] = nic
        if not ports:
            notes.append("no RDMA device found (neither ibdev2netdev nor %s/sys/class/infiniband list one)"
                         % sysfs_root.rstrip("/"))

    if "mlxconfig" in gather and paths["mlxconfig"]:
        for dev in sorted({n["rdma_device"] for n in nics.values()}):
            target = next((n["pci"] for n in nics.values() if n["rdma_device"] == dev and n["pci"]), dev)
            parsed = tool("mlxconfig", ["-d", target, "-e", "q"], parse_mlxconfig_query)
            if parsed is UNREADABLE:
                for n in nics.values():
                    if n["rdma_device"] == dev:
                        n["link_type_error"] = errors["mlxconfig -d %s -e q" % target]
                continue
            if not parsed:
                continue
            types = mlxconfig_link_types(parsed[0])
            for n in nics.values():
                if n["rdma_device"] == dev and n["port"] in types:
                    t = types[n["port"]]
                    n["link_type"] = {"current": t["current"], "next_boot": t["next_boot"]}
    elif "mlxconfig" in gather:
        notes.append("mlxconfig absent (MFT/mstflint not installed): port mode (LINK_TYPE) not reported")

    if "qos" in gather and paths["mlnx_qos"]:
        for netdev, n in nics.items():
            if n["link_layer"] == "Ethernet" and n["rdma_device"] and netdev != "%s/%d" % (n["rdma_device"], n["port"]):
                q = tool("mlnx_qos", ["-i", netdev], parse_mlnx_qos)
                if q is UNREADABLE:
                    n["qos_error"] = errors["mlnx_qos -i %s" % netdev]
                elif q:
                    n["qos"] = qos_fact(q)
                elif "mlnx_qos -i %s" % netdev in failed:
                    n["qos_failed"] = failed["mlnx_qos -i %s" % netdev]
    elif "qos" in gather:
        notes.append("mlnx_qos absent: trust state and PFC not reported")

    if "roce_mode" in gather and paths["cma_roce_mode"]:
        for n in nics.values():
            if n["link_layer"] == "Ethernet":
                key = "cma_roce_mode -d %s -p %d" % (n["rdma_device"], n["port"])
                m = tool("cma_roce_mode", ["-d", n["rdma_device"], "-p", str(n["port"])], parse_cma_roce_mode)
                if m is UNREADABLE:
                    n["roce_mode_error"] = errors[key]
                elif m:
                    n["roce_mode"] = m["mode"]
                    if m["messages"]:
                        n["roce_mode_messages"] = list(m["messages"])
                elif key in failed:
                    n["roce_mode_failed"] = failed[key]
    elif "roce_mode" in gather:
        notes.append("cma_roce_mode absent: RDMA-CM default RoCE mode not reported")

    gpus = []
    if "gpus" in gather:
        if paths["nvidia-smi"]:
            rows = tool("nvidia-smi", ["--query-gpu=" + ",".join(GPU_FIELDS), "--format=csv,noheader,nounits"],
                        parse_nvidia_smi_query, GPU_FIELDS)
            for r in rows if rows and rows is not UNREADABLE else []:
                gpus.append({GPU_KEYS.get(k, k): v for k, v in r.items()})
        else:
            notes.append("nvidia-smi absent: no GPU facts")

    for k, v in errors.items():
        notes.append("%s failed: %s" % (k, v))
    gid_indexes = {n["rdma_device"]: n["roce_v2_ipv4_gid_index"] for n in nics.values()
                   if n["roce_v2_ipv4_gid_index"] is not None and n["port"] == 1}
    dgx_hw = {"nics": nics, "gpus": gpus, "tools": tools, "tool_errors": errors, "unreadable": unreadable,
              "sysfs_root": sysfs_root}
    return dgx_hw, gid_indexes, notes, gid_errors


def tool_said(out, err, limit=4):
    """What a tool that exited non-zero said, for the NIC it was about: its stdout lines (mlnx_qos and
    cma_roce_mode print their own messages there: 'ETS features are not supported on your system', 'Device mlx5_9
    port 1 does not exist'), else stderr's (of a Python traceback its last line, the exception); at most
    ``limit`` lines, so a long output stays one readable line."""
    lines = [x.strip() for x in (out or "").splitlines() if x.strip()]
    if not lines:
        lines = [x.strip() for x in (err or "").splitlines() if x.strip()]
        if lines and lines[0].startswith("Traceback"):
            lines = lines[-1:]
    return lines[:limit] + (["(%d more lines)" % (len(lines) - limit)] if len(lines) > limit else [])


def qos_fact(q):
    """A NIC's ``qos`` fact from parse_mlnx_qos: trust, the PFC priorities and row, and - only when mlnx_qos printed
    notices - ``unsupported`` (the features it could not read: trust, buffers, ratelimit, ...) and ``notices`` (its
    own lines: '... is not supported on your system', the lldpad warning), so the check can say what the tool said
    instead of calling an unreadable trust state absent."""
    fact = {"trust": q["trust"], "pfc_priorities": q["pfc_priorities"], "pfc_enabled": q["pfc_enabled"]}
    if q.get("unsupported"):
        fact["unsupported"] = list(q["unsupported"])
    if q.get("notices"):
        fact["notices"] = list(q["notices"])
    return fact


def unreadable_message(host, unreadable):
    """One line per tool output that could not be read: host, command, version seen, the parser's error."""
    return "%s: %d tool output(s) could not be read, nothing was concluded from them: %s" % (
        host, len(unreadable), "; ".join("%s (%s): %s" % (u["command"], u["version"], u["error"])
                                         for u in unreadable))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/"),
            addresses=dict(type="dict", default={}),
            netdevs=dict(type="list", elements="str", default=[]),
            gather=dict(type="list", elements="str", choices=list(ALL_GATHER), default=list(ALL_GATHER)),
            fail_on_missing_gid=dict(type="bool", default=True),
            fail_on_unreadable=dict(type="bool", default=True),
            tool_timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not os.path.isdir(p["sysfs_root"]):
        module.fail_json(msg="sysfs_root %s is not a directory" % p["sysfs_root"])

    def run(argv):
        """(rc, stdout, stderr) (common/run.py: bounded, LC_ALL=C); a tool past tool_timeout is rc 124."""
        r = run_tool(argv, p["tool_timeout"])
        if r.timed_out:
            return 124, r.stdout, "timed out after %ds (killed)" % p["tool_timeout"]
        return r.rc, r.stdout, r.stderr

    def which(name):
        return module.get_bin_path(name, required=False)

    dgx_hw, gid_indexes, notes, gid_errors = gather_facts(
        run, which, p["sysfs_root"], p["addresses"], p["netdevs"], p["gather"])
    facts = {"dgx_hw": dgx_hw, "dgx_hw_gid_indexes": gid_indexes}
    if dgx_hw["unreadable"] and p["fail_on_unreadable"]:
        module.fail_json(msg=unreadable_message(platform.node(), dgx_hw["unreadable"]),
                         unreadable=dgx_hw["unreadable"], notes=notes, dgx_hw=dgx_hw)
    if gid_errors and p["fail_on_missing_gid"]:
        module.fail_json(msg="%d NIC(s) have no RoCEv2 GID for their model address; NCCL over RoCE cannot "
                         "use them. Check the address and that the port is in Ethernet mode."
                         % len(gid_errors), gid_errors=gid_errors, notes=notes, dgx_hw=dgx_hw)
    module.exit_json(changed=False, ansible_facts=facts, notes=notes)


if __name__ == "__main__":
    main()
