#!/usr/bin/python3
"""NODE HEALTH STAND-INS for the pod-in-a-box simulator -- test doubles, NOT the real tools.

The simulated DGX-1 nodes share the host's kernel, CPUs and memory, have no BMC, no NVMe and no GPUs, so the real
``dmesg``, ``lscpu`` or ``/proc/meminfo`` would describe this machine, not a DGX-1 (and the real kernel log must
never be read there: it is every node's and the host's). These stand-ins play, inside simulated DGX nodes only (the
launcher ``podsim-node``; argv[0] picks the tool):

  journalctl -k -o short-iso --no-pager [--since @EPOCH]   the node's kernel log (journald's short-iso format)
  dmesg [--time-format iso]                                the same log as the ring buffer prints it
  lscpu [-J]                                               a DGX-1: 2x Xeon E5-2698 v4, 20 cores, SMT on
  numactl -H                                               2 NUMA nodes of 256 GiB
  ipmitool sel elist / sdr elist                           the BMC's event log and sensors (4 PSUs, fans, temps)
  nvme list -o json, smartctl -j -a /dev/nvmeN             a DGX-1 has no NVMe (4 SATA SSDs): an empty list
  nvbandwidth -t TEST...                                   nvbandwidth v0.8's text output for the node's 8 V100

and :func:`node_files` writes the node's ``proc/meminfo``, ``proc/swaps`` and ``proc/stat`` (btime) into the
stand-in tree (``/etc/podsim/sysfs``, the modules' ``fs_root``). The formats follow the real tools' (the printing
code cited at each renderer, and the captures in tests/unit/fixtures/node/ and fixtures/gpu/).

The node's health faults are ``node_faults`` in its /etc/podsim/hardware.json (with ``node_faults_at``, the epoch
second each was injected, which dates its kernel messages and SEL entries), set from the host with
``sim/podsim node NODE --fault K=V`` / ``--clear``:

  xid79=I          GPU I (physical index 0-7) logged Xid 79 (fell off the bus) and came back
  xid48=I          GPU I logged Xid 48 (double-bit ECC error)
  aer_hca=mlx5_N   an uncorrected (non-fatal) PCIe AER error on the HCA mlx5_N
  link_flap=mlx5_N the HCA's link went down and came back up
  dimm_missing=1   one 32 GB DIMM disabled by the BIOS: MemTotal and NUMA node 1 32 GiB short, and the SEL's
                   "Memory Device Disabled" entry naming it (CPU 2 DIMM 5)
  nvme_critical=1  an NVMe drive with a SMART critical warning (0x04, reliability degraded) appears
  psu_failed=N     power supply N (1-4) failed: its SDR state and a SEL entry say "Failure detected"
  h2d_half=I       nvbandwidth: GPU I's host-to-device copy at half its peers'

Healthy by default. The render_* functions are pure (state in, text out) and unit-tested
(tests/unit/test_sim_node_standins.py: each output parses with the toolkit's parsers, each fault changes it).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime

STANDIN_NOTE = "podsim stand-in (simulated hardware, not the real tool)"
FAULT_KEYS = ("xid79", "xid48", "aer_hca", "link_flap", "dimm_missing", "nvme_critical", "psu_failed", "h2d_half")
GIB_KB = 1024 * 1024
# DGX-1: 512 GB as 16x 32 GB LRDIMM (catalog/dgx.py); MemTotal a healthy 2-socket host shows: ~98.3 % of it
MEMTOTAL_KB = 527966528
DIMM_KB = 32 * GIB_KB
NUMA_MB = (257602, 258038)  # the two nodes' sizes numactl -H shows (as fixtures/node/numactl_H__... on 512 GB)
HCA_PCI_ID = "15b3:1013"  # ConnectX-4 (lspci -n), the DGX-1's HCA
# nvbandwidth on a DGX-1 (V100 SXM2, PCIe Gen3 x16 to the host; NVLink 2.0 at 25 GB/s per link): about 11.5 GB/s
# host<->device, ~22.6 GB/s over one NVLink, ~45 GB/s over a doubled one; no peer access without NVLink (N/A)
H2D_GBPS = 11.52
D2H_GBPS = 12.87
NVLINK_GBPS_PER_LINK = 22.6


# --------------------------------------------------------------------------- faults

def parse_faults(items: list[str]) -> dict:
    """['xid79=3', 'aer_hca=mlx5_1'] -> {'xid79': 3, 'aer_hca': 'mlx5_1'}; ValueError naming a bad one."""
    out: dict = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in FAULT_KEYS:
            raise ValueError("unknown node fault %r (KEY=VALUE, KEY one of %s)" % (item, ", ".join(FAULT_KEYS)))
        if key in ("aer_hca", "link_flap"):
            if not value.startswith("mlx5_"):
                raise ValueError("%s takes an HCA name (mlx5_0 ... mlx5_3), not %r" % (key, value))
            out[key] = value
        elif key in ("dimm_missing", "nvme_critical"):
            out[key] = value not in ("0", "false", "no")
        else:
            out[key] = int(value)
    return out


def _faults(state: dict) -> dict:
    return state.get("node_faults") or {}


def _fault_time(state: dict, key: str, now: float) -> float:
    """When a fault was injected (its kernel messages and SEL entry are dated then); ``now`` if unrecorded."""
    return float((state.get("node_faults_at") or {}).get(key, now))


# --------------------------------------------------------------------------- the kernel log

def _gpu(state: dict, index: int) -> dict:
    for g in state["gpus"]:
        if g["index"] == index:
            return g
    raise KeyError("no GPU %d" % index)


def _xid_bus(g: dict) -> str:
    """nvidia-smi's 00000000:06:00.0 as the Xid line prints it: PCI:0000:06:00 (kernel_rc.c krcReportXid)."""
    dom, bus, rest = g["pci_bus_id"].split(":")
    return "%04x:%s:%s" % (int(dom, 16), bus.lower(), rest.split(".")[0].lower())


def kernel_messages(state: dict, boot: float, now: float) -> list[tuple[float, str]]:
    """The node's kernel messages, (epoch, text) in time order: the boot's (the NVIDIA driver loading, each HCA's
    link up) and each fault's. Texts as the kernel prints them (sources at each line)."""
    msgs: list[tuple[float, str]] = []
    # nv.c: "NVRM: loading %s" with the driver's id string (418.67's, as its module prints it)
    msgs.append((boot + 9.1, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s  Sat Apr  6 03:07:24 CDT 2019"
                 % state.get("driver_version", "418.67")))
    for k, (_dev, h) in enumerate(sorted(state["hcas"].items())):
        # mlx5e_update_carrier -> netdev_info: "<drv> <bdf> <netdev>: Link up" (fixture cubecos_733)
        msgs.append((boot + 14.0 + k * 0.2, "mlx5_core %s %s: Link up" % (h["pci"], h["netdev"])))
    f = _faults(state)
    for key, xid, text in (("xid79", 79, "GPU has fallen off the bus."),
                           ("xid48", 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the "
                                         "framebuffer at physAddr 0x7fdf0de80 partition 5, subpartition 1")):
        if key in f:
            g = _gpu(state, f[key])
            t = _fault_time(state, key, now)
            bus = _xid_bus(g)
            # kernel_rc.c _krcLogUuidOnce and krcReportXid; osinit.c "GPU has fallen off the bus" (fixture gpud xid79)
            msgs.append((t, "NVRM: GPU at PCI:%s: %s" % (bus, g["uuid"])))
            msgs.append((t, "NVRM: GPU Board Serial Number: %s" % g["serial"]))
            msgs.append((t + 0.01, "NVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, %s" % (bus, xid, text)))
            if xid == 79:
                msgs.append((t + 0.02, "NVRM: GPU %s.0: GPU has fallen off the bus." % bus))
    if "aer_hca" in f and f["aer_hca"] in state["hcas"]:
        h = state["hcas"][f["aer_hca"]]
        t = _fault_time(state, "aer_hca", now)
        # drivers/pci/pcie/aer.c: the root port's "<severity> error received: <bdf>", then the device's
        # aer_print_error lines (the form of fixtures raspberry_pi_pcie_64 and test_kernel_log's Non-Fatal line)
        msgs += [(t, "pcieport 0000:00:02.0: AER: Uncorrected (Non-Fatal) error received: %s" % h["pci"]),
                 (t, "mlx5_core %s: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, "
                     "(Requester ID)" % h["pci"]),
                 (t, "mlx5_core %s: AER:   device [%s] error status/mask=00004000/00000000" % (h["pci"], HCA_PCI_ID)),
                 (t, "mlx5_core %s: AER:    [14] CmpltTO                (First)" % h["pci"])]
    if "link_flap" in f and f["link_flap"] in state["hcas"]:
        h = state["hcas"][f["link_flap"]]
        t = _fault_time(state, "link_flap", now)
        msgs += [(t - 60.0, "mlx5_core %s %s: Link up" % (h["pci"], h["netdev"])),
                 (t, "mlx5_core %s %s: Link down" % (h["pci"], h["netdev"])),
                 (t + 4.2, "mlx5_core %s %s: Link up" % (h["pci"], h["netdev"]))]
    return sorted(msgs, key=lambda m: m[0])


def _utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def render_journal(state: dict, boot: float, now: float, since: float | None = None) -> str:
    """``journalctl -k -o short-iso --no-pager [--since @EPOCH]``: ``<ISO time> <host> kernel: <message>`` (systemd
    output-mode short-iso, 250+: ``+00:00``), ``-- No entries --`` when the window is empty."""
    host = state.get("node", "localhost")
    lines = ["%s %s kernel: %s" % (_utc(t).strftime("%Y-%m-%dT%H:%M:%S+00:00"), host, m)
             for t, m in kernel_messages(state, boot, now) if since is None or t >= since]
    return "\n".join(lines or ["-- No entries --"]) + "\n"


def render_dmesg(state: dict, boot: float, now: float, iso: bool = True) -> str:
    """``dmesg --time-format iso`` (``2024-01-01T10:00:00,123456+00:00 msg``), or plain ``[ secs] msg``."""
    out = []
    for t, m in kernel_messages(state, boot, now):
        if iso:
            out.append("%s,%06d+00:00 %s" % (_utc(t).strftime("%Y-%m-%dT%H:%M:%S"), int((t % 1) * 1e6), m))
        else:
            out.append("[%12.6f] %s" % (max(t - boot, 0.0), m))
    return "".join(line + "\n" for line in out)


# --------------------------------------------------------------------------- host inventory

def render_lscpu_json() -> str:
    """``lscpu -J`` of a DGX-1 (util-linux 2.37+ nests children; fixtures/node/lscpu_J__xeon_gold_6430_capture)."""
    def f(field, data, children=None):
        d = {"field": field, "data": data}
        if children:
            d["children"] = children
        return d
    doc = {"lscpu": [
        f("Architecture:", "x86_64", [f("CPU op-mode(s):", "32-bit, 64-bit"),
                                      f("Address sizes:", "46 bits physical, 48 bits virtual"),
                                      f("Byte Order:", "Little Endian")]),
        f("CPU(s):", "80", [f("On-line CPU(s) list:", "0-79")]),
        f("Vendor ID:", "GenuineIntel", [f("Model name:", "Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz", [
            f("CPU family:", "6"), f("Model:", "79"), f("Thread(s) per core:", "2"), f("Core(s) per socket:", "20"),
            f("Socket(s):", "2"), f("Stepping:", "1"), f("CPU max MHz:", "3600.0000"),
            f("CPU min MHz:", "1200.0000")])]),
        f("Virtualization features:", None, [f("Virtualization:", "VT-x")]),
        f("Caches (sum of all):", None, [f("L1d:", "1.3 MiB (40 instances)"), f("L1i:", "1.3 MiB (40 instances)"),
                                         f("L2:", "10 MiB (40 instances)"), f("L3:", "100 MiB (2 instances)")]),
        f("NUMA:", None, [f("NUMA node(s):", "2"), f("NUMA node0 CPU(s):", "0-19,40-59"),
                          f("NUMA node1 CPU(s):", "20-39,60-79")]),
    ]}
    return json.dumps(doc, indent=3) + "\n"


def render_numactl(state: dict) -> str:
    """``numactl -H`` (numactl.c hardware()), node 1 a DIMM short with ``dimm_missing``."""
    sizes = list(NUMA_MB)
    if _faults(state).get("dimm_missing"):
        sizes[1] -= DIMM_KB // 1024
    cpus = (list(range(0, 20)) + list(range(40, 60)), list(range(20, 40)) + list(range(60, 80)))
    out = ["available: 2 nodes (0-1)"]
    for n in (0, 1):
        out += ["node %d cpus: %s" % (n, " ".join(map(str, cpus[n]))), "node %d size: %d MB" % (n, sizes[n]),
                "node %d free: %d MB" % (n, sizes[n] * 9 // 10)]
    out += ["node distances:", "node   0   1 ", "  0:  10  21 ", "  1:  21  10 "]
    return "\n".join(out) + "\n"


def render_meminfo(state: dict) -> str:
    """``/proc/meminfo`` (fs/proc/meminfo.c; the keys of fixtures/node/meminfo__kernel_doc_proc_rst.txt)."""
    total = MEMTOTAL_KB - (DIMM_KB if _faults(state).get("dimm_missing") else 0)
    rows = [("MemTotal", total), ("MemFree", total * 9 // 10), ("MemAvailable", total * 19 // 20),
            ("Buffers", 581092), ("Cached", 5587612), ("SwapCached", 0), ("Active", 3237152), ("Inactive", 7586256),
            ("Active(anon)", 94064), ("Inactive(anon)", 4570616), ("Active(file)", 3143088),
            ("Inactive(file)", 3015640), ("Unevictable", 0), ("Mlocked", 0), ("SwapTotal", 0), ("SwapFree", 0),
            ("Dirty", 12), ("Writeback", 0), ("AnonPages", 4654780), ("Mapped", 266244), ("Shmem", 9976),
            ("KReclaimable", 517708), ("Slab", 660044), ("SReclaimable", 517708), ("SUnreclaim", 142336),
            ("KernelStack", 11168), ("PageTables", 20540), ("NFS_Unstable", 0), ("Bounce", 0), ("WritebackTmp", 0),
            ("CommitLimit", total // 2), ("Committed_AS", 7715148), ("VmallocTotal", 34359738367),
            ("VmallocUsed", 40444), ("VmallocChunk", 0), ("Percpu", 29312), ("HardwareCorrupted", 0),
            ("AnonHugePages", 4149248), ("ShmemHugePages", 0), ("ShmemPmdMapped", 0), ("FileHugePages", 0),
            ("FilePmdMapped", 0), ("HugePages_Total", None), ("HugePages_Free", None), ("HugePages_Rsvd", None),
            ("HugePages_Surp", None), ("Hugepagesize", 2048), ("Hugetlb", 0), ("DirectMap4k", 401152),
            ("DirectMap2M", 10008576), ("DirectMap1G", 526385152)]
    out = []
    for key, kb in rows:
        label = key + ":"
        out.append("%-15s %8d" % (label, 0) if kb is None else "%-15s %8d kB" % (label, kb))
    return "\n".join(out) + "\n"


SWAPS_HEADER = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"  # mm/swapfile.c swap_show(): no swap


def node_files(state: dict, boot: float) -> dict[str, str]:
    """The stand-in proc files (relative to the stand-in tree): meminfo, swaps (none, as DGX OS installs), and
    stat's btime line (the boot time the kernel log's ``[secs]`` stamps count from)."""
    return {"proc/meminfo": render_meminfo(state), "proc/swaps": SWAPS_HEADER, "proc/stat": "btime %d\n" % int(boot)}


def write_node_files(root: str, state: dict, boot: float | None = None) -> None:
    """Write the files in place (same inode: ``podsim node`` writes them into a node's overlay upper layer from the
    host while the node has it mounted, and a renamed-over file would stay unseen in the node)."""
    for rel, text in node_files(state, host_boot_time() if boot is None else boot).items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


# --------------------------------------------------------------------------- NVMe

NVME_MODEL = "SAMSUNG MZ1LB1T9HALS-00007"  # the DGX A100's M.2 OS drive; a DGX-1 has none (the fault adds one)


def render_nvme_list(state: dict) -> str:
    """``nvme list -o json`` (nvme-cli 2.x flat ``Devices``, fixtures/node/nvme_list_json__netdata_testdata_v2.3)."""
    devices = []
    if _faults(state).get("nvme_critical"):
        devices.append({"NameSpace": 1, "DevicePath": "/dev/nvme0n1", "GenericPath": "/dev/ng0n1",
                        "Firmware": "EDA7602Q", "Index": 0, "ModelNumber": NVME_MODEL,
                        "SerialNumber": "S436NA0M000001",
                        "UsedBytes": 98566144000, "MaximumLBA": 3750748848, "PhysicalSize": 1920383410176,
                        "SectorSize": 512})
    return json.dumps({"Devices": devices}, indent=2) + "\n"


def render_smartctl(state: dict, device: str, now: float) -> tuple[int, str]:
    """(exit status, ``smartctl -j -a DEVICE``): the NVMe health log (smartmontools nvmeprint.cpp keys; the shape of
    fixtures/node/smartctl_j__composed_nvmeprint_critical_warning), or smartctl's open failure (exit 2)."""
    head = {"json_format_version": [1, 0],
            "smartctl": {"version": [7, 3], "svn_revision": "5338", "platform_info": "x86_64-linux",
                         "build_info": "(local build)", "argv": ["smartctl", "-j", "-a", device]},
            "local_time": {"time_t": int(now), "asctime": _utc(now).strftime("%a %b %d %H:%M:%S %Y UTC")}}
    if not (_faults(state).get("nvme_critical") and device in ("/dev/nvme0", "/dev/nvme0n1")):
        head["smartctl"]["messages"] = [{"string": "%s: Unable to detect device type" % device, "severity": "error"}]
        head["smartctl"]["exit_status"] = 1
        return 1, json.dumps(head, indent=2) + "\n"
    head["smartctl"]["exit_status"] = 8  # bit 3: DISK FAILING
    doc = dict(head, device={"name": device, "info_name": device, "type": "nvme", "protocol": "NVMe"},
               model_name=NVME_MODEL, serial_number="S436NA0M000001", firmware_version="EDA7602Q",
               smart_support={"available": True, "enabled": True}, smart_status={"passed": False, "nvme": {"value": 4}},
               nvme_smart_health_information_log={
                   "critical_warning": 4, "temperature": 38, "available_spare": 100, "available_spare_threshold": 10,
                   "percentage_used": 3, "data_units_read": 1234567, "data_units_written": 2345678,
                   "host_reads": 34567890, "host_writes": 45678901, "controller_busy_time": 512, "power_cycles": 41,
                   "power_on_hours": 15873, "unsafe_shutdowns": 12, "media_errors": 0, "num_err_log_entries": 3,
                   "warning_temp_time": 0, "critical_comp_time": 0},
               temperature={"current": 38}, power_cycle_count=41, power_on_time={"hours": 15873})
    return 8, json.dumps(doc, indent=2) + "\n"


# --------------------------------------------------------------------------- BMC

PSUS = 4


def _sel_stamp(t: float) -> tuple[str, str]:
    """ipmitool's SEL date and time columns (ipmi_sel.c: %m/%d/%Y and %H:%M:%S, fixture sos_issue_2015)."""
    d = _utc(t)
    return d.strftime("%m/%d/%Y"), d.strftime("%H:%M:%S")


def render_sel_elist(state: dict, boot: float, now: float) -> str:
    """``ipmitool sel elist``: the log cleared at install, the power-on, and the DIMM and PSU faults' entries."""
    rows = [(boot - 3600.0, "Event Logging Disabled #0x07", "Log area reset/cleared", None),
            (boot - 120.0, "System ACPI Power State #0x0a", "S0/G0: working", None)]
    f = _faults(state)
    if f.get("dimm_missing"):
        # the BIOS took the DIMM out at POST: Memory sensor offset 04h "Memory Device Disabled" (ipmi_sel.h), with
        # the DIMM as the BMC names it in the event data (the form of fixtures/node/ipmitool_sel_elist__composed_*)
        rows.append((_fault_time(state, "dimm_missing", now), "Memory #0x87", "Memory Device Disabled",
                     "CPU 2 DIMM 5"))
    psu = f.get("psu_failed")
    if psu:
        t = _fault_time(state, "psu_failed", now)
        rows += [(t, "Power Supply PSU%d Status" % psu, "Failure detected", None),
                 (t + 1.0, "Power Supply PSU%d Status" % psu, "Power Supply AC lost", None)]
    out = []
    for n, (t, sensor, event, extra) in enumerate(sorted(rows, key=lambda r: r[0]), 1):
        date, clock = _sel_stamp(t)
        out.append("%4x | %s | %s | %s | %s | Asserted" % (n, date, clock, sensor, event) + (
            " | %s" % extra if extra else ""))
    return "\n".join(out) + "\n"


def render_sdr_elist(state: dict) -> str:
    """``ipmitool sdr elist`` (ipmi_sdr.c ipmi_sdr_print_sensor_fc, fixtures/node/ipmitool_sdr_elist__*): power
    supplies, fans, temperatures; a failed PSU's discrete state says so."""
    psu = _faults(state).get("psu_failed")
    out = []
    for n in range(1, PSUS + 1):
        states = "Presence detected" + (", Failure detected" if psu == n else "")
        out.append("%-16s | %02Xh | ok  | 10.%d | %s" % ("PSU%d Status" % n, 0x70 + n - 1, n, states))
    for n in range(1, 5):
        out.append("%-16s | %02Xh | ok  | 29.%d | %d RPM" % ("FAN%d Speed" % n, 0x30 + n - 1, n, 8400 + 120 * n))
    out.append("%-16s | 40h | ok  | 64.1 | 23 degrees C" % "Inlet Temp")
    out.append("%-16s | 41h | ok  |  3.1 | 41 degrees C" % "CPU0 Temp")
    out.append("%-16s | 42h | ok  |  3.2 | 43 degrees C" % "CPU1 Temp")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- nvbandwidth

NVBANDWIDTH_TESTS = {
    "host_to_device_memcpy_ce": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
    "device_to_host_memcpy_ce": "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
    "device_to_device_memcpy_read_ce": "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
}


def _nvlinks(a: int, b: int) -> int:
    import podsim_gpu  # the DGX-1 hybrid cube-mesh (beside this file)
    return dict(podsim_gpu.DGX1_NVLINK[a]).get(b, 0)


def _jitter(i: int, j: int = 0) -> float:
    """A small, fixed spread (a run's GPUs never read the same to the hundredth)."""
    return ((i * 7 + j * 3) % 5 - 2) * 0.03


def _matrix(header: str, rows: list[tuple[int, list[float | None]]], cols: int) -> list[str]:
    """nvbandwidth's PeerValueMatrix printing (inline_common.h): a header of column indexes, rows of %10.2f / N/A."""
    out = [header, "         " + "".join("%10d" % c for c in range(cols))]
    for r, vals in rows:
        out.append("%2d" % r + "".join("%10s" % ("N/A" if v is None else "%.2f" % v) for v in vals))
    return out


def render_nvbandwidth(state: dict, tests: list[str]) -> tuple[int, str]:
    """(exit status, nvbandwidth v0.8's text output) for ``-t TEST...`` on the node's GPUs (the form of
    fixtures/gpu/nvbandwidth__readme_v0.8_*.txt and issue42's header)."""
    gpus = sorted(state["gpus"], key=lambda g: g["index"])
    n = len(gpus)
    half = _faults(state).get("h2d_half")
    out = ["nvbandwidth Version: v0.8", "Built from Git version: v0.8", "",
           "CUDA Runtime Version: 10010", "CUDA Driver Version: 10010",
           "Driver Version: %s" % state.get("driver_version", "418.67"), ""]
    for g in gpus:
        dom, bus, rest = g["pci_bus_id"].split(":")
        out.append("Device %d: %s (%s:%s:%s)" % (g["index"], g["name"], dom, bus, rest.split(".")[0]))
    out.append("")
    for test in tests:
        if test not in NVBANDWIDTH_TESTS:
            return 1, "\n".join(out) + "\nERROR: Testcase %s not found!\n" % test
        out.append("Running %s." % test)
        if test.startswith(("host_to_device", "device_to_host")):
            base = H2D_GBPS if test.startswith("host_to_device") else D2H_GBPS
            vals: list[float | None] = []
            for g in gpus:
                v = base + _jitter(g["index"])
                if half is not None and g["index"] == half and test.startswith("host_to_device"):
                    v = v / 2
                vals.append(round(v, 2))
            rows = [(0, vals)]
        else:
            rows = []
            for a in range(n):
                row: list[float | None] = []
                for b in range(n):
                    links = _nvlinks(a, b) if a != b else 0
                    row.append(round(NVLINK_GBPS_PER_LINK * links + _jitter(a, b), 2) if links else None)
                rows.append((a, row))
        out += _matrix(NVBANDWIDTH_TESTS[test], rows, n)
        total = sum(v for _, vals in rows for v in vals if v is not None)
        out += ["", "SUM %s %.2f" % (test, total), ""]
    out += ["NOTE: The reported results may not reflect the full capabilities of the platform.",
            "Performance can vary with software drivers, hardware clocks, and system topology."]
    return 0, "\n".join(out) + "\n"


# --------------------------------------------------------------------------- runtime (impure)

def host_boot_time() -> float:
    """The machine's boot time (/proc/stat btime): the simulated nodes share its kernel, so they booted then."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _since(args: list[str]) -> float | None:
    if "--since" in args:
        value = args[args.index("--since") + 1]
        if not value.startswith("@"):
            raise ValueError("--since %s: only @EPOCH is simulated" % value)
        return float(value[1:])
    return None


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    args = argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    import podsim_hw  # the state file and its location
    import time
    try:
        state = podsim_hw.load_state()
    except OSError:
        sys.stderr.write("%s: %s: no simulated DGX here (no %s)\n" % (tool, STANDIN_NOTE, podsim_hw.state_path()))
        return 1
    now, boot = time.time(), host_boot_time()
    if tool == "journalctl":
        if "-k" not in args:
            sys.stderr.write("journalctl: only -k (the kernel log) is simulated (%s)\n" % STANDIN_NOTE)
            return 1
        try:
            sys.stdout.write(render_journal(state, boot, now, _since(args)))
        except (ValueError, IndexError) as e:
            sys.stderr.write("Failed to parse timestamp: %s\n" % e)
            return 1
        return 0
    if tool == "dmesg":
        sys.stdout.write(render_dmesg(state, boot, now, iso="iso" in args))
        return 0
    if tool == "lscpu":
        if "-J" not in args and "--json" not in args:
            sys.stderr.write("lscpu: only -J is simulated (%s)\n" % STANDIN_NOTE)
            return 1
        sys.stdout.write(render_lscpu_json())
        return 0
    if tool == "numactl":
        sys.stdout.write(render_numactl(state))
        return 0
    if tool == "ipmitool":
        if args[:2] == ["sel", "elist"]:
            sys.stdout.write(render_sel_elist(state, boot, now))
            return 0
        if args[:2] == ["sdr", "elist"]:
            sys.stdout.write(render_sdr_elist(state))
            return 0
        sys.stderr.write("ipmitool: only 'sel elist' and 'sdr elist' are simulated (%s)\n" % STANDIN_NOTE)
        return 1
    if tool == "nvme":
        if args[:1] == ["list"]:
            sys.stdout.write(render_nvme_list(state))
            return 0
        sys.stderr.write("nvme: only 'list -o json' is simulated (%s)\n" % STANDIN_NOTE)
        return 1
    if tool == "smartctl":
        rc, text = render_smartctl(state, args[-1] if args else "", now)
        sys.stdout.write(text)
        return rc
    if tool == "nvbandwidth":
        tests = [a for a in args[args.index("-t") + 1:] if not a.startswith("-")] if "-t" in args else list(
            NVBANDWIDTH_TESTS)
        rc, text = render_nvbandwidth(state, tests)
        sys.stdout.write(text)
        return rc
    sys.stderr.write("%s: call me as journalctl, dmesg, lscpu, numactl, ipmitool, nvme, smartctl or nvbandwidth\n"
                     % STANDIN_NOTE)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
