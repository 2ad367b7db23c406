#!/usr/bin/python3
"""GPU HEALTH STAND-INS for the pod-in-a-box simulator -- test doubles, NOT the real tools.

The simulator has no GPUs, no DCGM and no OFED. These stand-ins play, inside simulated DGX-1 nodes only,
``nvidia-smi -q -x``, ``nvidia-smi nvlink -s`` / ``-e``, ``nvidia-smi topo -m`` (called through the
``nvidia-smi`` stand-in of podsim_hw.py), ``dcgmi diag -r N [-j]`` (a symlink to this
file). They print the real tools' formats of the 004 pod's era (driver 418, DCGM 2.x) from
the node's state (/etc/podsim/hardware.json, the ``gpus`` list of podsim_hw.py) and its injected faults
(``gpu_faults`` in the same file, set from the host with ``sim/podsim gpu NODE --fault K=V`` / ``--clear``):

  missing_gpu=I        GPU I is gone from every nvidia-smi output (fell off the bus)
  ecc=I                GPU I: 2 volatile double-bit ECC errors and a pending page retirement
  nvlink_down=I[:L]    GPU I: NVLink L (default 0) inactive
  nvlink_errors=I      GPU I: link 0 replay counter rises at every read
  pcie_x8=I            GPU I: PCIe link trained at x8
  persistence_off=I    GPU I: persistence mode disabled
  throttle=I           GPU I: HW thermal slowdown active
  no_peermem=1         nvidia_peermem missing from /proc/modules (the stand-in's copy)
  driver=VERSION       the node reports this driver version (a mixed pod)

The render_* functions are pure (state in, text out) and unit-tested (tests/unit/test_sim_gpu_standins.py);
parsers are tested against real captures, not only against these.
"""

from __future__ import annotations

import json
import os
import sys

STANDIN_NOTE = "podsim stand-in (simulated hardware, not the real tool)"
# DGX-1 with V100: the hybrid cube-mesh (NVIDIA DGX-1 with Tesla V100 System Architecture white paper): each
# GPU has 6 NVLink 2.0 links to 4 peers, two of them doubled. (peer, links) per GPU in link order.
DGX1_NVLINK = {
    0: ((3, 2), (4, 2), (1, 1), (2, 1)),
    1: ((2, 2), (5, 2), (0, 1), (3, 1)),
    2: ((1, 2), (3, 2), (0, 1), (6, 1)),
    3: ((0, 2), (2, 2), (1, 1), (7, 1)),
    4: ((0, 2), (7, 2), (5, 1), (6, 1)),
    5: ((1, 2), (6, 2), (4, 1), (7, 1)),
    6: ((5, 2), (7, 2), (2, 1), (4, 1)),
    7: ((4, 2), (6, 2), (3, 1), (5, 1)),
}
NVLINK_GBPS = "25.781"
PROC_MODULES = (
    ("nvidia_peermem", "16384", "0", "-"),
    ("nvidia_uvm", "1089536", "0", "-"),
    ("nvidia_drm", "57344", "0", "-"),
    ("nvidia_modeset", "1208320", "1", "nvidia_drm,"),
    ("nvidia", "35274752", "120", "nvidia_peermem,nvidia_uvm,nvidia_modeset,"),
    ("mlx5_ib", "327680", "0", "-"),
    ("ib_core", "368640", "9", "rdma_ucm,ib_ipoib,nvidia_peermem,mlx5_ib,"),
    ("mlx5_core", "1216512", "1", "mlx5_ib,"),
)
FAULT_KEYS = ("missing_gpu", "ecc", "nvlink_down", "nvlink_errors", "pcie_x8", "persistence_off", "throttle",
              "no_peermem", "driver")


# --------------------------------------------------------------------------- faults

def parse_faults(items: list[str]) -> dict:
    """['ecc=3', 'nvlink_down=2:1'] -> {'ecc': 3, 'nvlink_down': [2, 1]}; ValueError naming a bad one."""
    out: dict = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in FAULT_KEYS:
            raise ValueError("unknown GPU fault %r (KEY=VALUE, KEY one of %s)" % (item, ", ".join(FAULT_KEYS)))
        if key == "driver":
            out[key] = value
        elif key == "nvlink_down":
            gpu, _, link = value.partition(":")
            out[key] = [int(gpu), int(link or 0)]
        elif key == "no_peermem":
            out[key] = value not in ("0", "false", "no")
        else:
            out[key] = int(value)
    return out


def effective_state(state: dict) -> dict:
    """The state the tools report: faults applied (pure; ``state`` is not changed)."""
    f = state.get("gpu_faults") or {}
    s = dict(state)
    gpus = [dict(g) for g in state["gpus"]]
    if "missing_gpu" in f:
        gpus = [g for g in gpus if g["index"] != f["missing_gpu"]]
        for new, g in enumerate(gpus):  # nvidia-smi numbers the GPUs it sees
            g["index"] = new
    s["gpus"] = gpus
    if f.get("driver"):
        s["driver_version"] = f["driver"]
    return s


def _fault_on(state: dict, key: str, gpu: dict) -> bool:
    """Faults name the GPU by its original (physical) index: the one in the node's factory state."""
    f = state.get("gpu_faults") or {}
    want = f.get(key)
    if isinstance(want, list):
        want = want[0]
    return want is not None and gpu.get("phys", gpu["index"]) == want


def _with_phys(state: dict) -> dict:
    out = dict(state)
    out["gpus"] = [dict(g, phys=g["index"]) for g in state["gpus"]]
    return effective_state(out)


# --------------------------------------------------------------------------- nvidia-smi -q -x

def _ecc_block(n: int) -> str:
    parts = ["<device_memory>%d</device_memory>" % n, "<register_file>0</register_file>",
             "<l1_cache>0</l1_cache>", "<l2_cache>0</l2_cache>", "<texture_memory>N/A</texture_memory>",
             "<texture_shm>N/A</texture_shm>", "<cbu>N/A</cbu>", "<total>%d</total>" % n]
    return "".join("\t\t\t\t\t" + p + "\n" for p in parts)


def render_smi_xml(state: dict, now: str = "Mon Nov 23 03:00:00 2026") -> str:
    s = _with_phys(state)
    out = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v10.dtd">', "<nvidia_smi_log>",
           "\t<timestamp>%s</timestamp>" % now, "\t<driver_version>%s</driver_version>" % s["driver_version"],
           "\t<cuda_version>%s</cuda_version>" % s["cuda_version"],
           "\t<attached_gpus>%d</attached_gpus>" % len(s["gpus"])]
    for g in s["gpus"]:
        ecc = _fault_on(state, "ecc", g)
        width = 8 if _fault_on(state, "pcie_x8", g) else 16
        hot = _fault_on(state, "throttle", g)
        bus = g["pci_bus_id"]
        reasons = [("gpu_idle", True), ("applications_clocks_setting", False), ("sw_power_cap", False),
                   ("hw_slowdown", hot), ("hw_thermal_slowdown", hot), ("hw_power_brake_slowdown", False),
                   ("sync_boost", False), ("sw_thermal_slowdown", False), ("display_clocks_setting", False)]
        out += [
            '\t<gpu id="%s">' % bus,
            "\t\t<product_name>%s</product_name>" % g["name"],
            "\t\t<product_brand>Tesla</product_brand>",
            "\t\t<display_mode>Disabled</display_mode>",
            "\t\t<display_active>Disabled</display_active>",
            "\t\t<persistence_mode>%s</persistence_mode>" % (
                "Disabled" if _fault_on(state, "persistence_off", g) else "Enabled"),
            "\t\t<serial>%s</serial>" % g["serial"],
            "\t\t<uuid>%s</uuid>" % g["uuid"],
            "\t\t<minor_number>%d</minor_number>" % g["phys"],
            "\t\t<pci>",
            "\t\t\t<pci_bus>%s</pci_bus>" % bus[9:11],
            "\t\t\t<pci_device>00</pci_device>",
            "\t\t\t<pci_domain>0000</pci_domain>",
            "\t\t\t<pci_device_id>1DB510DE</pci_device_id>",
            "\t\t\t<pci_bus_id>%s</pci_bus_id>" % bus,
            "\t\t\t<pci_gpu_link_info>",
            "\t\t\t\t<pcie_gen>",
            "\t\t\t\t\t<max_link_gen>3</max_link_gen>",
            "\t\t\t\t\t<current_link_gen>3</current_link_gen>",
            "\t\t\t\t</pcie_gen>",
            "\t\t\t\t<link_widths>",
            "\t\t\t\t\t<max_link_width>16x</max_link_width>",
            "\t\t\t\t\t<current_link_width>%dx</current_link_width>" % width,
            "\t\t\t\t</link_widths>",
            "\t\t\t</pci_gpu_link_info>",
            "\t\t\t<replay_counter>0</replay_counter>",
            "\t\t</pci>",
            "\t\t<performance_state>P0</performance_state>",
            "\t\t<clocks_throttle_reasons>",
        ]
        out += ["\t\t\t<clocks_throttle_reason_%s>%s</clocks_throttle_reason_%s>"
                % (r, "Active" if a else "Not Active", r) for r, a in reasons]
        out += [
            "\t\t</clocks_throttle_reasons>",
            "\t\t<fb_memory_usage>",
            "\t\t\t<total>%d MiB</total>" % g["memory_total_mib"],
            "\t\t\t<used>0 MiB</used>",
            "\t\t\t<free>%d MiB</free>" % g["memory_total_mib"],
            "\t\t</fb_memory_usage>",
            "\t\t<compute_mode>Default</compute_mode>",
            "\t\t<ecc_mode>",
            "\t\t\t<current_ecc>Enabled</current_ecc>",
            "\t\t\t<pending_ecc>Enabled</pending_ecc>",
            "\t\t</ecc_mode>",
            "\t\t<ecc_errors>",
            "\t\t\t<volatile>",
            "\t\t\t\t<single_bit>", _ecc_block(0).rstrip("\n"), "\t\t\t\t</single_bit>",
            "\t\t\t\t<double_bit>", _ecc_block(2 if ecc else 0).rstrip("\n"), "\t\t\t\t</double_bit>",
            "\t\t\t</volatile>",
            "\t\t\t<aggregate>",
            "\t\t\t\t<single_bit>", _ecc_block(0).rstrip("\n"), "\t\t\t\t</single_bit>",
            "\t\t\t\t<double_bit>", _ecc_block(2 if ecc else 0).rstrip("\n"), "\t\t\t\t</double_bit>",
            "\t\t\t</aggregate>",
            "\t\t</ecc_errors>",
            "\t\t<retired_pages>",
            "\t\t\t<multiple_single_bit_retirement>",
            "\t\t\t\t<retired_count>0</retired_count>",
            "\t\t\t\t<retired_pagelist>",
            "\t\t\t\t</retired_pagelist>",
            "\t\t\t</multiple_single_bit_retirement>",
            "\t\t\t<double_bit_retirement>",
            "\t\t\t\t<retired_count>%d</retired_count>" % (1 if ecc else 0),
            "\t\t\t\t<retired_pagelist>",
            "\t\t\t\t</retired_pagelist>",
            "\t\t\t</double_bit_retirement>",
            "\t\t\t<pending_retirement>%s</pending_retirement>" % ("Yes" if ecc else "No"),
            "\t\t</retired_pages>",
            "\t\t<temperature>",
            "\t\t\t<gpu_temp>%d C</gpu_temp>" % (88 if hot else 34 + g["phys"] % 4),
            "\t\t\t<gpu_temp_max_threshold>90 C</gpu_temp_max_threshold>",
            "\t\t\t<gpu_temp_slow_threshold>87 C</gpu_temp_slow_threshold>",
            "\t\t</temperature>",
            "\t\t<power_readings>",
            "\t\t\t<power_state>P0</power_state>",
            "\t\t\t<power_management>Supported</power_management>",
            "\t\t\t<power_draw>%.2f W</power_draw>" % (43 + g["phys"] % 3),
            "\t\t\t<power_limit>%.2f W</power_limit>" % g["power_limit_w"],
            "\t\t</power_readings>",
            "\t</gpu>",
        ]
    out.append("</nvidia_smi_log>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- nvlink, topo

def _head(g: dict) -> str:
    return "GPU %d: %s (UUID: %s)" % (g["index"], g["name"], g["uuid"])


def render_nvlink_status(state: dict) -> str:
    s = _with_phys(state)
    down = (state.get("gpu_faults") or {}).get("nvlink_down")
    out = []
    for g in s["gpus"]:
        out.append(_head(g))
        for link in range(6):
            dead = down is not None and down[0] == g["phys"] and down[1] == link
            out.append("\t Link %d: %s" % (link, "<inactive>" if dead else NVLINK_GBPS + " GB/s"))
    return "\n".join(out) + "\n"


def render_nvlink_errors(state: dict) -> str:
    s = _with_phys(state)
    rising = (state.get("gpu_faults") or {}).get("nvlink_errors")
    count = int((state.get("gpu_fault_counters") or {}).get("replay", 0))
    out = []
    for g in s["gpus"]:
        out.append(_head(g))
        for link in range(6):
            replay = count if (rising == g["phys"] and link == 0) else 0
            out += ["\t Link %d: Replay Errors: %d" % (link, replay), "\t Link %d: Recovery Errors: 0" % link,
                    "\t Link %d: CRC Errors: 0" % link]
    return "\n".join(out) + "\n"


def render_topo(state: dict) -> str:
    """``nvidia-smi topo -m`` of driver 418 on a DGX-1: NIC columns named after the RDMA devices."""
    s = _with_phys(state)
    gpus = s["gpus"]
    nics = sorted(state["hcas"])
    head = "\t" + "\t".join(["GPU%d" % g["index"] for g in gpus] + nics) + "\tCPU Affinity"
    out = [head]
    for g in gpus:
        peers = dict(DGX1_NVLINK.get(g["phys"], ()))
        row = []
        for h in gpus:
            if h["phys"] == g["phys"]:
                row.append(" X ")
            elif h["phys"] in peers:
                row.append("NV%d" % peers[h["phys"]])
            else:
                row.append("SYS")
        for k, _ in enumerate(nics):
            row.append("PIX" if g["phys"] // 2 == k else ("PHB" if g["phys"] // 4 == k // 2 else "SYS"))
        out.append("GPU%d\t%s\t%s" % (g["index"], "\t".join(row), "0-19,40-59" if g["phys"] < 4 else "20-39,60-79"))
    for k, nic in enumerate(nics):
        row = [("PIX" if g["phys"] // 2 == k else ("PHB" if g["phys"] // 4 == k // 2 else "SYS")) for g in gpus]
        row += [" X " if j == k else ("PHB" if j // 2 == k // 2 else "SYS") for j in range(len(nics))]
        out.append("%s\t%s\t" % (nic, "\t".join(row)))
    out += ["", "Legend:", "", "  X    = Self",
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
            "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a "
            "NUMA node",
            "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
            "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
            "  PIX  = Connection traversing at most a single PCIe bridge",
            "  NV#  = Connection traversing a bonded set of # NVLinks", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- dcgmi diag

LEVEL1 = ("Blacklist", "NVML Library", "CUDA Main Library", "Permissions and OS-related Blocks", "Persistence Mode",
          "Environmental Variables", "Page Retirement", "Graphics Processes", "Inforom")
# The per-GPU tests: (category, JSON name, the name dcgmi's table prints, first level that runs it), in DCGM's
# plugin order (dcgm_structs.h DCGM_*_INDEX) - the JSON lists them in that order inside each category.
PER_GPU = (("Integration", "PCIe", "pcie", 2), ("Hardware", "GPU Memory", "GPU Memory", 3),
           ("Hardware", "Diagnostic", "diagnostic", 3), ("Stress", "SM Stress", "sm_stress", 3),
           ("Stress", "Targeted Stress", "targeted_stress", 3), ("Stress", "Targeted Power", "targeted_power", 3),
           ("Stress", "Memory Bandwidth", "memory_bandwidth", 3))
# DCGM 2.1 dcgm_errors.h messages (``_MSG`` then a space and ``_NEXT``, as DcgmError::SetFullError joins them)
MSG_PERSISTENCE = ("Persistence mode for GPU %d is currently disabled. The DCGM diagnostic requires peristence mode "
                   "to be enabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root.")
MSG_DBE_PENDING = ("Pending page retirements together with a DBE were detected on GPU %d. Drain the GPU and reset it "
                   "or reboot the node to resolve this issue.")
MSG_PCIE_WIDTH = ("GPU %d is running at PCI link width %dX, which is below the minimum allowed link generation of %d "
                  "(parameter '%s')")


def diag_results(state: dict, level: int) -> list:
    """[(category, name, table name, [(gpu index or None, 'Pass'|'Fail', message or '')])]: what DCGM decides
    on this node. A Deployment test has one result for the whole node (gpu None): DCGM names the GPU only in
    its message."""
    s = _with_phys(state)
    out = []
    for name in LEVEL1:
        msgs = []
        if name == "Persistence Mode":
            msgs = [MSG_PERSISTENCE % g["index"] for g in s["gpus"] if _fault_on(state, "persistence_off", g)]
        elif name == "Page Retirement":  # the ecc fault: 2 volatile DBEs and a pending retirement
            msgs = [MSG_DBE_PENDING % g["index"] for g in s["gpus"] if _fault_on(state, "ecc", g)]
        # one message per test (dcgmDiagTestResult_v2.error holds one); DCGM keeps the last one written
        out.append(("Deployment", name, name, [(None, "Fail" if msgs else "Pass", msgs[-1] if msgs else "")]))
    for cat, name, table_name, first in PER_GPU:
        if level < first:
            continue
        rows = []
        for g in s["gpus"]:
            msg = ""
            if name == "PCIe" and _fault_on(state, "pcie_x8", g):
                msg = MSG_PCIE_WIDTH % (g["index"], 8, 16, "min_pci_width")
            rows.append((g["index"], "Fail" if msg else "Pass", msg))
        out.append((cat, name, table_name, rows))
    return out


def render_dcgmi_diag(state: dict, level: int) -> str:
    """DCGM 2.1 ``dcgmi diag -r N -j`` as dcgmi/Diag.cpp (HelperJsonBuildOutput) writes it with JsonCpp's
    styled writer (keys sorted, 3-space indent, ``"key" : value``): the Deployment results carry no
    ``gpu_ids`` and a ``warnings`` string; the per-GPU tests one result per GPU (``gpu_ids`` "N"); status
    ``Pass | Fail | Skip``; categories Deployment, Integration, Hardware, Stress; no version (3.x adds one)."""
    cats: dict = {}
    for cat, name, _, rows in diag_results(state, level):
        results = []
        for gpu, status, msg in rows:
            r = {"status": status}
            if gpu is not None:
                r["gpu_ids"] = str(gpu)
            if msg:
                r["warnings"] = msg
            results.append(r)
        cats.setdefault(cat, []).append({"name": name, "results": results})
    doc = {"DCGM GPU Diagnostic": {"test_categories": [
        {"category": c, "tests": cats[c]} for c in ("Deployment", "Integration", "Hardware", "Stress") if c in cats]}}
    return json.dumps(doc, indent=3, sort_keys=True, separators=(",", " : ")) + "\n"


_ROW = "| %-25s | %-46s |\n"
_RULE = "+---------------------------+------------------------------------------------+\n"
_SECTION = {"Deployment": "|-----  Deployment  --------+------------------------------------------------|\n",
            "Integration": "+-----  Integration  -------+------------------------------------------------+\n",
            "Hardware": "+-----  Hardware  ----------+------------------------------------------------+\n",
            "Stress": "+-----  Stress  ------------+------------------------------------------------+\n"}


def _wrapped(label: str, text: str) -> str:
    """Diag::DisplayVerboseInfo: the message cut into 45-character pieces, the label on the first."""
    return "".join(_ROW % (label if pos == 0 else "", text[pos:pos + 45]) for pos in range(0, len(text), 45))


def _gpu_list(word: str, ids: list) -> str:
    return "%s - GPU%s%s" % (word, ": " if len(ids) == 1 else "s: ", ", ".join(str(i) for i in ids))


def render_dcgmi_table(state: dict, level: int) -> str:
    """DCGM 2.1 ``dcgmi diag -r N`` (no -j): the table of dcgmi/Diag.cpp. Deployment rows say Pass/Fail with
    an ``Error`` row (DCGM's message, naming the GPU); a per-GPU test says ``Pass - All`` or ``Pass - GPUs:
    0, 1, 3 ...`` and ``Fail - GPU: 2`` with a ``Warning`` row per failed GPU."""
    out = ["Successfully ran diagnostic for group.\n", _RULE, _ROW % ("Diagnostic", "Result"),
           _RULE.replace("-", "=")]
    shown = set()
    for cat, _, table_name, rows in diag_results(state, level):
        if cat not in shown:
            out.append(_SECTION[cat])
            shown.add(cat)
        if cat == "Deployment":
            _, status, msg = rows[0]
            out.append(_ROW % (table_name, status))
            if msg:
                out.append(_wrapped("Error", msg))
            continue
        passed = [g for g, st, _ in rows if st == "Pass"]
        failed = [g for g, st, _ in rows if st == "Fail"]
        if not failed:
            out.append(_ROW % (table_name, "Pass - All"))
            continue
        if not passed:
            out.append(_ROW % (table_name, "Fail - All"))
        else:
            out += [_ROW % (table_name, _gpu_list("Pass", passed)), _ROW % ("", _gpu_list("Fail", failed))]
        out += [_wrapped("Warning", msg) for _, _, msg in rows if msg]
    out.append(_RULE)
    return "".join(out)


# --------------------------------------------------------------------------- node files

def render_proc_modules(state: dict) -> str:
    skip = bool((state.get("gpu_faults") or {}).get("no_peermem"))
    lines = []
    for name, size, refs, used in PROC_MODULES:
        if skip and name == "nvidia_peermem":
            continue
        if skip:
            used = ",".join(u for u in used.split(",") if u != "nvidia_peermem") or "-"
        lines.append("%s %s %s %s Live 0x0000000000000000" % (name, size, refs, used))
    return "\n".join(lines) + "\n"


def node_files(state: dict) -> dict[str, str]:
    """Files under the node's stand-in root (/etc/podsim/sysfs): ``proc/modules`` and the HCAs' PCIe link
    attributes in ``sys/bus/pci/devices/<pci>/`` (x16 Gen3, as a ConnectX-4 in a DGX-1)."""
    files = {"proc/modules": render_proc_modules(state)}
    for dev, h in sorted(state["hcas"].items()):
        files["sys/class/infiniband/%s/board_id" % dev] = h["board_id"] + "\n"
        base = "sys/bus/pci/devices/%s/" % h["pci"]
        files[base + "current_link_width"] = "16\n"
        files[base + "max_link_width"] = "16\n"
        files[base + "current_link_speed"] = "8.0 GT/s PCIe\n"
        files[base + "max_link_speed"] = "8.0 GT/s PCIe\n"
    return files


def write_node_files(root: str, state: dict) -> None:
    """Write the files in place (same inode): ``podsim gpu`` writes them into a node's overlay upper layer
    from the host while the node has it mounted, and a renamed-over file would stay unseen in the node."""
    for rel, text in node_files(state).items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


# --------------------------------------------------------------------------- entry points

def main_nvidia_smi(args: list[str], state: dict, save) -> int:
    """The parts of nvidia-smi this file plays (called by podsim_hw.main_nvidia_smi)."""
    if args[:2] == ["-q", "-x"] or args[:2] == ["-x", "-q"]:
        sys.stdout.write(render_smi_xml(state))
        return 0
    if args[:1] == ["nvlink"] and args[1:2] in (["-s"], ["--status"]):
        sys.stdout.write(render_nvlink_status(state))
        return 0
    if args[:1] == ["nvlink"] and args[1:2] in (["-e"], ["--errorcounters"]):
        if (state.get("gpu_faults") or {}).get("nvlink_errors") is not None:
            counters = state.setdefault("gpu_fault_counters", {})
            counters["replay"] = int(counters.get("replay", 0)) + 7
            save(state)
        sys.stdout.write(render_nvlink_errors(state))
        return 0
    if args[:2] == ["topo", "-m"]:
        sys.stdout.write(render_topo(state))
        return 0
    sys.stderr.write("Invalid combination of input arguments. (%s: %s not simulated)\n" % (STANDIN_NOTE, args))
    return 2


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    import podsim_hw  # the state file and its location
    if tool != "dcgmi":  # ofed_info is podsim_hw.py's (the node's OFED release, as mlnx_qos prints it)
        sys.stderr.write("%s: call me as dcgmi\n" % STANDIN_NOTE)
        return 2
    args = argv[1:]
    if not args or args[0] != "diag" or "-r" not in args:
        sys.stderr.write("dcgmi: only 'diag -r N [-j]' is simulated (%s)\n" % STANDIN_NOTE)
        return 2
    try:
        level = int(args[args.index("-r") + 1])
        state = podsim_hw.load_state()
    except (ValueError, IndexError):
        sys.stderr.write("Error: Invalid run level\n")
        return 2
    except OSError:
        sys.stderr.write("Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n")
        return 1
    sys.stdout.write(render_dcgmi_diag(state, level) if "-j" in args else render_dcgmi_table(state, level))
    failed = any(st == "Fail" for _, _, _, rows in diag_results(state, level) for _, st, _ in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
