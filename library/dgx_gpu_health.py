#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read a DGX's GPU and node health (nvidia-smi, DCGM, peer-memory module, HCAs), read-only."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: dgx_gpu_health
short_description: Read a DGX's GPU and node health for validation (read-only)
description:
  - Runs C(nvidia-smi -q -x), C(nvidia-smi nvlink -s), C(nvidia-smi nvlink -e) (at the start and again at the
    end, so rising error counters show), C(nvidia-smi topo -m), and C(dcgmi diag -r <dcgm_level> -j) when
    C(dcgmi) is installed, each with a time limit. Reads the loaded kernel modules (C(/proc/modules), for the
    GPUDirect RDMA peer-memory module C(nvidia_peermem) or C(nv_peer_mem)), the HCAs' firmware and PCIe link
    (sysfs), the OFED/DOCA version (C(ofed_info -s)) and, on NVSwitch systems, whether
    C(nvidia-fabricmanager) is active.
  - Parses everything with module_utils/gpu/parse.py (dcgmi with module_utils/gpu/dcgm_parse.py) and returns
    C(dgx_gpu) - a result to register, not a fact, so it does not join the fact cache of every later task and
    run (18 KB a DGX that Ansible copied for each of its tasks; C(ansible_facts.dgx_gpu) until 2026-11-25).
    A tool that fails, times out or prints something unreadable is listed in
    C(dgx_gpu.errors) with its own message (the evaluation reports it as an error naming the node and the
    tool); it is never passed silently.
  - Changes nothing (check mode is supported and behaves the same). Evaluation happens on the controller
    (module_utils/gpu/eval.py, docs/validation.md "GPU and node health").
options:
  dcgm_level:
    description:
      - C(dcgmi diag) run level (1 quick, 2 medium, 3 long, 4 extra long). 0 skips DCGM.
      - "DCGM User Guide, Run Levels and Tests: r1 seconds, r2 < 2 mins, r3 < 30 mins, r4 1-2 hours."
    type: int
    default: 1
    choices: [0, 1, 2, 3, 4]
  dcgm_timeout:
    description:
      - Seconds C(dcgmi diag) may run before it is reported as timed out.
      - When not given, sized from the level's documented duration and the GPU count nvidia-smi reported
        (module_utils/gpu/dcgm_plan.py C(dcgm_timeout); level 3 on 8 GPUs is 2820 s, level 4 10920 s).
        C(playbooks/validate_gpu.yml) passes the same figure for the DGX model (C(gpu_dcgm_timeout) filter;
        C(-e gpu_dcgm_timeout=N) overrides it).
    type: int
  nvbandwidth:
    description:
      - Also measure copy bandwidth under load with NVIDIA's C(nvbandwidth) (host to device and device to host per
        GPU, GPU to GPU over NVLink; C(nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce
        device_to_device_memcpy_read_ce)), parsed by module_utils/gpu/bandwidth_parse.py and judged by
        module_utils/gpu/bandwidth_eval.py. It loads every GPU for a minute or more, so it is off unless asked for.
    type: bool
    default: false
  nvbandwidth_timeout:
    description: Seconds C(nvbandwidth) may run.
    type: int
    default: 900
  tool_timeout:
    description: Seconds each nvidia-smi call and the other tools may run.
    type: int
    default: 60
  fs_root:
    description:
      - Directory holding the C(proc/modules) and C(sys/) trees to read. C(/) on real hosts; the simulator's
        inventory points it at the stand-in tree it writes (C(dgx_network_sysfs_root)).
    type: path
    default: /
  nvswitch:
    description: The DGX model has NVSwitches (DGX-2, DGX A100, DGX H100), so the fabric manager must run.
    type: bool
    default: false
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Read GPU health (quick DCGM level)
  dgx_gpu_health:
    dcgm_level: 1
    nvswitch: "{{ dgx_model | gpu_nvswitch }}"  # the hardware catalogue (module_utils/catalog/dgx.py)
    fs_root: "{{ dgx_network_sysfs_root | default('/') }}"

- name: Read GPU health with DCGM's extra-long level (1-2 hours; the time limit follows from the level)
  dgx_gpu_health:
    dcgm_level: 4
    nvswitch: "{{ dgx_model | gpu_nvswitch }}"
"""

RETURN = r"""
dgx_gpu:
  description: The parsed tool outputs.
  returned: always
  type: dict
  contains:
    smi:
      description: C(nvidia-smi -q -x) parsed (driver, CUDA, per GPU name, bus id, ECC, retired pages,
        remapped rows, PCIe, throttle reasons, temperatures); null when it failed.
      type: dict
    nvlink:
      description: "C(nvidia-smi nvlink -s): {gpu: {name, uuid, links: {link: GB/s or null (inactive)}}}."
      type: dict
    nvlink_errors:
      description: The two reads of C(nvidia-smi nvlink -e) (start and end of the module's run).
      type: list
      elements: dict
    topo:
      description: C(nvidia-smi topo -m) parsed (matrix, CPU/NUMA affinity, GPU<->NIC).
      type: dict
    dcgm:
      description: "{present, level, timeout (seconds it was given), result (parsed dcgmi diag -j) or null, error}."
      type: dict
    modules:
      description: "{peermem: loaded peer-memory module or null, nvidia: bool, error}."
      type: dict
    hcas:
      description: Per RDMA device its PCI address, firmware, board id, PCIe width and max width, and its netdev.
      type: dict
    ofed:
      description: OFED/DOCA version from C(ofed_info -s), or null.
      type: str
    fabric_manager:
      description: "{required, state} of nvidia-fabricmanager (state null when not required)."
      type: dict
    nvbandwidth:
      description: "{result (parsed nvbandwidth output) or null, error}; only when I(nvbandwidth) is true."
      type: dict
    errors:
      description: Every tool that failed, as {tool, error}.
      type: list
      elements: dict
    elapsed:
      description: Seconds the module ran.
      type: float
"""

import os
import shutil
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_status
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_parse import parse_nvbandwidth
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_parse import parse_dcgmi_diag
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_plan import dcgm_timeout as planned_timeout
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.parse import (GpuParseError, parse_nvlink_errors,
    parse_nvlink_status, parse_proc_modules, parse_smi_xml, parse_topo_matrix, peermem_module)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import read_sysfs


def _jsonable(value):
    """Dict keys as strings (GPU and link indexes), as JSON will make them anyway."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _netdev(pdir):
    """The HCA's network interface, so a fault of the HCA names its NIC: the first entry of its PCI function's
    ``net/`` (None without one)."""
    net = os.path.join(pdir, "net")
    names = sorted(os.listdir(net)) if os.path.isdir(net) else []
    return names[0] if names else None


NVBANDWIDTH_TESTS = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "device_to_device_memcpy_read_ce")


def read_nvbandwidth(run, which, timeout):
    """{result, error} of ``nvbandwidth -t <NVBANDWIDTH_TESTS>`` (text output: every version prints it; --json
    came with v0.5). A run that fails, times out or prints what the parser refuses (a cut or garbled output) is an
    error with the tool's or the parser's words."""
    if which("nvbandwidth") is None:
        return {"result": None, "error": "nvbandwidth is not installed"}
    rc, out, err = run(["nvbandwidth", "-t"] + list(NVBANDWIDTH_TESTS), timeout)
    if rc is None:
        return {"result": None, "error": err}
    if rc != 0:  # a fatal error (error_handling.h) is printed on stderr and ends the run with exit 1
        return {"result": None, "error": "exit %s: %s" % (rc, (err or out).strip()[-500:])}
    try:
        return {"result": parse_nvbandwidth(out), "error": None}
    except ValueError as exc:
        return {"result": None, "error": str(exc)}


def gather(run, which, fs_root="/", dcgm_level=1, tool_timeout=60, dcgm_timeout=None, nvswitch=False,
           nvbandwidth=False, nvbandwidth_timeout=900):
    """Everything the module returns, with ``run(cmd, timeout)`` and ``which(name)`` injected (unit-testable).
    ``dcgm_timeout`` None: sized from the level and the GPU count nvidia-smi reported (gpu/dcgm_plan.py)."""
    start = time.monotonic()
    errors = []
    facts = {"smi": None, "nvlink": None, "nvlink_errors": [], "topo": None, "errors": errors}

    def tool(name, cmd, parser, ok_rcs=(0,)):
        if which(cmd[0]) is None:
            errors.append({"tool": name, "error": "%s is not installed" % cmd[0]})
            return None
        rc, out, err = run(cmd, tool_timeout)
        if rc is None or rc not in ok_rcs:
            errors.append({"tool": name, "error": "exit %s: %s" % (rc, (err or out).strip()[-500:])})
            return None
        try:
            return parser(out)
        except GpuParseError as exc:
            errors.append({"tool": name, "error": str(exc)})
            return None

    facts["nvlink_errors"].append(tool("nvidia-smi nvlink -e", ["nvidia-smi", "nvlink", "-e"], parse_nvlink_errors))
    facts["smi"] = tool("nvidia-smi -q -x", ["nvidia-smi", "-q", "-x"], parse_smi_xml)
    facts["nvlink"] = tool("nvidia-smi nvlink -s", ["nvidia-smi", "nvlink", "-s"], parse_nvlink_status)
    facts["topo"] = tool("nvidia-smi topo -m", ["nvidia-smi", "topo", "-m"], parse_topo_matrix)

    if dcgm_timeout is None:
        gpus = len((facts["smi"] or {}).get("gpus") or []) or None
        dcgm_timeout = planned_timeout(dcgm_level, gpus)
    dcgm = {"present": which("dcgmi") is not None, "level": dcgm_level, "timeout": dcgm_timeout, "result": None,
            "error": None}
    if dcgm["present"] and dcgm_level > 0:
        rc, out, err = run(["dcgmi", "diag", "-r", str(dcgm_level), "-j"], dcgm_timeout)
        if rc is None:
            dcgm["error"] = err
        else:
            try:  # dcgmi exits non-zero when a test fails: the JSON still says which and why
                dcgm["result"] = parse_dcgmi_diag(out)
            except GpuParseError as exc:
                dcgm["error"] = "exit %s: %s %s" % (rc, exc, err.strip()[-300:])
        if dcgm["error"]:
            errors.append({"tool": "dcgmi diag -r %d" % dcgm_level, "error": dcgm["error"]})
    elif dcgm_level == 0:
        dcgm["present"] = False
    facts["dcgm"] = dcgm

    text = read_sysfs(os.path.join(fs_root, "proc/modules"))
    if text is None:
        facts["modules"] = {"peermem": None, "nvidia": False, "error": "cannot read %s"
                            % os.path.join(fs_root, "proc/modules")}
    else:
        try:
            mods = parse_proc_modules(text)
            facts["modules"] = {"peermem": peermem_module(mods), "nvidia": "nvidia" in mods, "error": None}
        except GpuParseError as exc:
            facts["modules"] = {"peermem": None, "nvidia": False, "error": str(exc)}

    hcas = {}
    ib = os.path.join(fs_root, "sys/class/infiniband")
    for dev in sorted(os.listdir(ib)) if os.path.isdir(ib) else []:
        base = os.path.join(ib, dev)
        pci = os.path.basename(os.path.realpath(os.path.join(base, "device")))
        pdir = os.path.join(fs_root, "sys/bus/pci/devices", pci)
        width = read_sysfs(os.path.join(pdir, "current_link_width"))
        max_width = read_sysfs(os.path.join(pdir, "max_link_width"))
        hcas[dev] = {"pci": pci, "fw": read_sysfs(os.path.join(base, "fw_ver")),
                     "board_id": read_sysfs(os.path.join(base, "board_id")),
                     "width": int(width) if width and width.isdigit() else None,
                     "max_width": int(max_width) if max_width and max_width.isdigit() else None,
                     "speed": read_sysfs(os.path.join(pdir, "current_link_speed")),
                     "netdev": _netdev(pdir)}
    facts["hcas"] = hcas
    facts["ofed"] = None
    if which("ofed_info"):
        rc, out, _ = run(["ofed_info", "-s"], tool_timeout)
        if rc == 0 and out.strip():
            facts["ofed"] = out.strip().rstrip(":")
    fm = {"required": nvswitch, "state": None}
    if nvswitch:
        if which("systemctl"):
            rc, out, err = run(["systemctl", "is-active", "nvidia-fabricmanager"], tool_timeout)
            fm["state"] = (out or err).strip() or "unknown"
        else:
            fm["state"] = "unknown (no systemctl)"
    facts["fabric_manager"] = fm
    if nvbandwidth:
        facts["nvbandwidth"] = read_nvbandwidth(run, which, nvbandwidth_timeout)
        if facts["nvbandwidth"]["error"]:
            errors.append({"tool": "nvbandwidth", "error": facts["nvbandwidth"]["error"]})
    facts["nvlink_errors"].append(tool("nvidia-smi nvlink -e", ["nvidia-smi", "nvlink", "-e"], parse_nvlink_errors))
    facts["elapsed"] = round(time.monotonic() - start, 2)
    return _jsonable(facts)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dcgm_level=dict(type="int", default=1, choices=[0, 1, 2, 3, 4]),
            dcgm_timeout=dict(type="int"),
            tool_timeout=dict(type="int", default=60),
            fs_root=dict(type="path", default="/"),
            nvswitch=dict(type="bool", default=False),
            nvbandwidth=dict(type="bool", default=False),
            nvbandwidth_timeout=dict(type="int", default=900),
        ),
        supports_check_mode=True,
    )
    p = module.params
    facts = gather(run_status, shutil.which, p["fs_root"], p["dcgm_level"], p["tool_timeout"], p["dcgm_timeout"],
                   p["nvswitch"], p["nvbandwidth"], p["nvbandwidth_timeout"])
    module.exit_json(changed=False, dgx_gpu=facts)


if __name__ == "__main__":
    main()
