#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read a DGX's node health - the kernel log of a window, the host inventory and the BMC (read-only)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: dgx_node_health
short_description: Read a DGX's kernel log, host inventory and BMC for validation (read-only)
description:
  - Reads the kernel log of a window (C(journalctl -k -o short-iso --no-pager --since @<epoch>) when journalctl is
    installed and keeps the kernel log, else C(dmesg --time-format iso)), the boot time (C(proc/stat) btime, which
    places C([secs]) stamps), the GPUs' PCI bus ids (C(nvidia-smi --query-gpu=index,pci.bus_id
    --format=csv,noheader)) and the HCAs' (sysfs C(sys/class/infiniband/*/device) and its C(net/)), so an event
    names the GPU index or C(mlx5_N) and netdev it is about.
  - Reads the host inventory and the BMC - C(lscpu -J), C(proc/meminfo), C(proc/swaps), C(numactl -H),
    C(nvme list -o json), C(smartctl -j -a /dev/nvmeN) per NVMe controller, C(df -P -B1 -l), C(uname -r),
    C(ipmitool sel elist) and C(ipmitool sdr elist) - each tool with a time limit.
  - Parses everything with module_utils/node/kernel_log.py, inventory_parse.py and bmc_parse.py and returns
    C(dgx_node). A tool that is not installed, fails, times out or prints what its parser refuses is that reading's
    entry in C(dgx_node.errors), with the tool's or the parser's words; the evaluation (module_utils/node/eval.py)
    skips or fails that check naming why - never a pass.
  - Changes nothing (check mode is supported and behaves the same). Evaluation happens on the controller
    (docs/validation.md "Node health").
options:
  window_hours:
    description: The kernel-log window when I(since) is not given, in hours back from now.
    type: int
    default: 24
  since:
    description:
      - Start of the kernel-log window, epoch seconds (for example the time of the node's last validation).
        Overrides I(window_hours).
    type: int
  tool_timeout:
    description: Seconds each tool may run (C(ipmitool sel elist) walks the whole event log, so keep it generous).
    type: int
    default: 60
  fs_root:
    description:
      - Directory holding the C(proc/) files (C(stat), C(meminfo), C(swaps)) and the C(sys/) tree to read. C(/) on
        real hosts; the simulator's inventory points it at the stand-in tree it writes (C(dgx_network_sysfs_root)),
        as for dgx_gpu_health and dgx_hw_facts.
    type: path
    default: /
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Read node health (the kernel log of the last day, the inventory and the BMC)
  dgx_node_health:
    window_hours: 24
    fs_root: "{{ dgx_network_sysfs_root | default('/') }}"

- name: Read node health since the last validation of the node
  dgx_node_health:
    since: 1764300000
"""

RETURN = r"""
dgx_node:
  description: The parsed readings, in the shapes module_utils/node/kernel_eval.py and inventory_eval.py read.
  returned: always
  type: dict
  contains:
    kernel_log:
      description: "parse_kernel_log's value ({events, lines, kernel_lines, unrecognised, formats}); null when the
        kernel log could not be read (errors.kernel_log says why)."
      type: dict
    kernel_log_source:
      description: The command the kernel log came from (journalctl or dmesg), or null.
      type: str
    since:
      description: The window's start, epoch seconds.
      type: float
    until:
      description: The window's end (when the module ran), epoch seconds.
      type: float
    boot_time:
      description: The boot time from proc/stat btime (epoch seconds), or null.
      type: int
    gpus:
      description: "[{index, bus_id}] from nvidia-smi; null when it could not be read."
      type: list
      elements: dict
    hcas:
      description: "[{hca (mlx5_N), bus_id, netdev}] from sysfs."
      type: list
      elements: dict
    readings:
      description: "Per reading its parsed value or null: lscpu, meminfo, numactl, swaps, nvme_list, smartctl
        ({nvmeN: ...}), df, uname_r, bios (the DMI BIOS version, for a pin), sel, sdr."
      type: dict
    errors:
      description: Per reading that could not be read, why (tool missing, exit status and its words, parser error).
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
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.smi_parse import parse_nvidia_smi_query
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import read_sysfs
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.bmc_parse import parse_sdr_elist, parse_sel_elist
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.inventory_parse import (
    nvme_drives, parse_df, parse_lscpu, parse_meminfo, parse_numactl_hardware, parse_nvme_list, parse_smartctl_nvme,
    parse_swaps, parse_uname_r)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import bus_id, parse_kernel_log

GPU_QUERY = ["nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"]
# nvme-cli 1.x prints this on stdout (exit 0) instead of a JSON document when there is no NVMe device
# (nvme-cli nvme.c list(): fprintf(stdout, "No NVMe devices detected.\n")); 2.x prints {"Devices": []}
NO_NVME = "No NVMe devices detected."
# smartctl's exit status bits 0 and 1 (command line, device open) mean no health log was read; the others say
# what the log holds (smartctl(8) EXIT STATUS), so its JSON is read
SMARTCTL_NO_READ = 0x03


def _words(rc, out, err):
    """A failed run as the report says it: the exit status and the tool's last words."""
    return "exit %s: %s" % (rc, (err or out or "").strip()[-500:]) if rc is not None else (err or "did not run")


def boot_time(fs_root):
    """The epoch second the node booted (``btime`` of proc/stat), or None when it cannot be read."""
    text = read_sysfs(os.path.join(fs_root, "proc/stat")) or ""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "btime" and parts[1].isdigit():
            return int(parts[1])
    return None


def read_kernel_log(run, which, since, boot, timeout):
    """(parsed, source, error) of the kernel log since ``since``: journalctl's kernel messages of the window when
    journalctl is installed and has a journal, else the ring buffer (``dmesg --time-format iso``, every message
    since boot; the evaluator keeps the window). A log the parser refuses (cut off, garbled) is an error."""
    attempts = []
    if which("journalctl"):
        rc, out, err = run(["journalctl", "-k", "-o", "short-iso", "--no-pager", "--since", "@%d" % int(since)],
                           timeout)
        # no journal at all (journald not keeping one, a container): journalctl says so and reads nothing
        if rc == 0 and "No journal files were found" not in (out + err):
            return _parsed(out, boot, "journalctl")
        attempts.append("journalctl: %s" % _words(rc, out, err))
    if which("dmesg"):
        rc, out, err = run(["dmesg", "--time-format", "iso"], timeout)
        if rc == 0:
            return _parsed(out, boot, "dmesg")
        attempts.append("dmesg: %s" % _words(rc, out, err))
    else:
        attempts.append("dmesg is not installed")
    return None, None, "; ".join(attempts)


def _parsed(text, boot, source):
    try:
        return parse_kernel_log(text, boot_time=boot), source, None
    except ParseError as exc:
        return None, source, "%s: %s" % (source, exc)


def read_gpus(run, which, timeout):
    """([{index, bus_id}], error) from nvidia-smi's query: what maps an Xid or AER bus id to a GPU index."""
    if which("nvidia-smi") is None:
        return None, "nvidia-smi is not installed"
    rc, out, err = run(GPU_QUERY, timeout)
    if rc != 0:
        return None, _words(rc, out, err)
    try:
        rows = parse_nvidia_smi_query(out, ["index", "pci.bus_id"])
    except ParseError as exc:
        return None, str(exc)
    return [{"index": r["index"], "bus_id": bus_id(str(r["pci.bus_id"])) or r["pci.bus_id"]} for r in rows], None


def read_hcas(fs_root):
    """[{hca, bus_id, netdev}] of every RDMA device in sysfs (``class/infiniband/<dev>/device`` -> the PCI function,
    its ``net/`` the netdev): what maps an mlx5 or AER bus id to ``mlx5_N`` and its NIC."""
    out = []
    ib = os.path.join(fs_root, "sys/class/infiniband")
    for dev in sorted(os.listdir(ib)) if os.path.isdir(ib) else []:
        pci = os.path.basename(os.path.realpath(os.path.join(ib, dev, "device")))
        net = os.path.join(fs_root, "sys/bus/pci/devices", pci, "net")
        if not os.path.isdir(net):
            net = os.path.join(ib, dev, "device", "net")
        names = sorted(os.listdir(net)) if os.path.isdir(net) else []
        out.append({"hca": dev, "bus_id": bus_id(pci) or pci, "netdev": names[0] if names else None})
    return out


class _Readings:
    """The inventory readings and their errors, filled one tool at a time."""

    def __init__(self, run, which, timeout):
        self.run, self.which, self.timeout = run, which, timeout
        self.values, self.errors = {}, {}

    def tool(self, name, cmd, parser, ok=lambda rc: rc == 0, preread=None):
        """Run ``cmd`` and keep ``parser(stdout)`` as reading ``name``; a missing tool, a failed run or a refused
        output is the reading's error. ``preread(rc, out, err)`` may answer first (a tool's 'nothing here')."""
        self.values[name] = None
        if self.which(cmd[0]) is None:
            self.errors[name] = "%s is not installed" % cmd[0]
            return None
        rc, out, err = self.run(cmd, self.timeout)
        if preread is not None:
            early = preread(rc, out, err)
            if early is not None:
                self.values[name] = early
                return early
        if rc is None or not ok(rc):
            self.errors[name] = "%s: %s" % (" ".join(cmd), _words(rc, out, err))
            return None
        return self.parse(name, parser, out)

    def file(self, name, path, parser):
        """Keep ``parser(text of path)`` as reading ``name`` (a proc file)."""
        self.values[name] = None
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError as exc:
            self.errors[name] = "cannot read %s: %s" % (path, exc.strerror or exc)
            return None
        return self.parse(name, parser, text)

    def parse(self, name, parser, text):
        try:
            self.values[name] = parser(text)
        except ParseError as exc:
            self.errors[name] = str(exc)
        return self.values[name]


def _no_nvme(rc, out, err):
    return [] if rc == 0 and out.strip() == NO_NVME else None


def read_smart(readings, drives):
    """``smartctl -j -a /dev/<controller>`` of every NVMe drive: {controller: parsed}; a drive smartctl could not
    read is listed in errors.smartctl (the NVMe check is skipped for it, never passed)."""
    if not drives:
        readings.values["smartctl"] = {}
        return
    if readings.which("smartctl") is None:
        readings.values["smartctl"] = None
        readings.errors["smartctl"] = "smartctl is not installed"
        return
    smart, failed = {}, []
    for d in drives:
        ctrl = d.get("controller") or d["device"]
        rc, out, err = readings.run(["smartctl", "-j", "-a", "/dev/%s" % ctrl], readings.timeout)
        if rc is None or rc & SMARTCTL_NO_READ and not out.strip():
            failed.append("/dev/%s: %s" % (ctrl, _words(rc, out, err)))
            continue
        try:
            smart[ctrl] = parse_smartctl_nvme(out)
        except ParseError as exc:
            failed.append("/dev/%s: %s" % (ctrl, exc))
    readings.values["smartctl"] = smart
    if failed:
        readings.errors["smartctl"] = "; ".join(failed)


def _one_line(text):
    """The one value of a sysfs file (the DMI BIOS version): its first line, stripped; an empty file is refused."""
    value = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not value:
        raise ParseError("sys/class/dmi/id/bios_version", "the file is empty")
    return value


def gather(run, which, fs_root="/", window_hours=24, since=None, tool_timeout=60, now=None):
    """Everything the module returns, with ``run(cmd, timeout)`` and ``which(name)`` injected (unit-testable);
    ``now`` the window's end (epoch seconds, default the clock)."""
    start = time.monotonic()
    until = float(now if now is not None else time.time())
    since = float(since) if since is not None else until - 3600.0 * float(window_hours)
    boot = boot_time(fs_root)
    errors = {}
    kernel, source, kerr = read_kernel_log(run, which, since, boot, tool_timeout)
    if kerr:
        errors["kernel_log"] = kerr
    gpus, gerr = read_gpus(run, which, tool_timeout)
    if gerr:
        errors["gpus"] = gerr
    r = _Readings(run, which, tool_timeout)
    r.tool("lscpu", ["lscpu", "-J"], parse_lscpu)
    r.file("meminfo", os.path.join(fs_root, "proc/meminfo"), parse_meminfo)
    r.file("swaps", os.path.join(fs_root, "proc/swaps"), parse_swaps)
    r.tool("numactl", ["numactl", "-H"], parse_numactl_hardware)
    namespaces = r.tool("nvme_list", ["nvme", "list", "-o", "json"], parse_nvme_list, preread=_no_nvme)
    if namespaces is None:
        r.values["smartctl"] = None
        r.errors["smartctl"] = "no NVMe list to read SMART from (%s)" % r.errors.get("nvme_list", "nvme list failed")
    else:
        read_smart(r, nvme_drives(namespaces))
    # -l: local filesystems only - a hung NFS mount would hold df (and / and the RAID are local)
    r.tool("df", ["df", "-P", "-B1", "-l"], parse_df, ok=lambda rc: rc in (0, 1))
    r.tool("uname_r", ["uname", "-r"], parse_uname_r)
    bios = os.path.join(fs_root, "sys/class/dmi/id/bios_version")
    if os.path.exists(bios):  # no DMI (a VM, the simulator): no reading and no error - a BIOS pin says "not read"
        r.file("bios", bios, _one_line)
    r.tool("sel", ["ipmitool", "sel", "elist"], parse_sel_elist)
    r.tool("sdr", ["ipmitool", "sdr", "elist"], parse_sdr_elist)
    errors.update(r.errors)
    return {"kernel_log": kernel, "kernel_log_source": source, "since": since, "until": until, "boot_time": boot,
            "gpus": gpus, "hcas": read_hcas(fs_root), "readings": r.values, "errors": errors,
            "elapsed": round(time.monotonic() - start, 2)}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            window_hours=dict(type="int", default=24),
            since=dict(type="int"),
            tool_timeout=dict(type="int", default=60),
            fs_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p["window_hours"] <= 0 and p["since"] is None:
        module.fail_json(msg="window_hours must be above 0 (or give since)")
    facts = gather(run_status, shutil.which, p["fs_root"], p["window_hours"], p["since"], p["tool_timeout"])
    module.exit_json(changed=False, dgx_node=facts)


if __name__ == "__main__":
    main()
