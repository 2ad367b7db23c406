"""The pod-in-a-box's fault catalogue (issue 17): faults the fault drill injects one at a time, each with the
validate.yml tags that should catch it and what the report's top finding must say.

    sim/podsim fault list                    the catalogue
    sim/podsim fault inject NAME [NODE]      inject (idempotent; NODE defaults to the fault's node)
    sim/podsim fault clear NAME [NODE]       clear it, restoring exactly the state before the inject
    sim/podsim fault clear all               clear every fault injected and not yet cleared

Every fault reuses a mechanism the simulator already has: a command inside a node (``podsim exec``: ip,
mlnx_qos, umount, podman, the node's files), ``podsim shape`` (tc), ``podsim gpu`` and ``podsim node`` (the GPU
and node health stand-ins' faults), the fake switches' CLI (``podsim switch --cli``) and fault keys, and the
recorded daemons' pids (ganesha, sshd) in the simulator's state. What a clear needs to put back (a file's text, a
switch's running config, the QoS settings, the signalled pids) is recorded at inject time in ``<state
dir>/faults.json``, so a clear is exact and a second inject does not overwrite the healthy snapshot.

Commands go through a :class:`Ctx` so the unit tests (tests/unit/test_sim_faults.py) check what each fault
would run against a fake one, without a pod.

The package: this file is the catalogue (CATALOGUE, one row per fault) and what `podsim fault` does with it
(inject, clear, clear all, list); ``base.py`` what a fault is (Fault), how its commands run (Ctx) and the argv
builders; ``mechanisms.py`` how each kind of fault is injected and cleared, layer by layer.
"""
from __future__ import annotations

import sys
from typing import Dict, List, Optional, Tuple

from .base import MPI_CONTAINER, PFC_PRIORITY, PODSIM, Ctx, Fault, in_node, podsim, wrong_address
from .mechanisms import (_address, _continue_daemon, _deploy, _file_restore, _fstab_inject, _ganesha_restart,
                         _ganesha_stop, _gpu, _hca_counters_rising, _hosts_inject, _hosts_stale_inject, _link, _mtu,
                         _nccl_env_inject, _every_dgx, _ib_fault, _neighbour_port, _node,
                         _on_switch, _qos_clear, _qos_inject, _rdma_hca, _signal_daemon, _sshd_freeze, _switch_cli,
                         _switch_fault, _switch_restore, _umount, cabled_port, fstab_with_changed_option,
                         hosts_with_changed_entry)

# what the drill (scripts/drill.py) and the unit tests use besides the catalogue's own functions
__all__ = ["BY_NAME", "CATALOGUE", "IB_FAULTS", "IB_LAYER", "LAYERS", "PFC_PRIORITY", "PODSIM", "Ctx", "Fault", "clear",
           "clear_all",
           "fstab_with_changed_option", "get", "hosts_with_changed_entry", "inject", "listing", "main",
           "wrong_address"]


# the layers issue 17 asks the drill to cover
LAYERS = ("host-network", "roce-qos", "storage-client", "storage-server", "switch", "container", "gpu",
          "performance", "deploy-files", "reachability", "node")


# --------------------------------------------------------------------------- the catalogue

def _catalogue() -> Tuple[Fault, ...]:
    sw_mtu = _switch_cli("enp132s0", "mtu 1500")
    sw_pfc = _switch_cli("enp139s0", "no priority-flow-control")
    down_i, down_c = _switch_fault("enp12s0", "port_down", lambda pod, node: cabled_port(pod, node, "enp12s0")[1])
    swap_i, swap_c = _switch_fault("enp5s0", "swap", lambda pod, node: "%s,%s" % (
        cabled_port(pod, node, "enp5s0")[1], _neighbour_port(pod, node, "enp5s0")))
    rx_i, rx_c = _switch_fault("enp132s0", "optic_rx_low", lambda pod, node: cabled_port(pod, node, "enp132s0")[1])
    psu_i, psu_c = _switch_fault("enp5s0", "psu_failed", lambda pod, node: "2")
    fan_i, fan_c = _switch_fault("enp5s0", "fan_failed", lambda pod, node: "3/1")
    gpu_missing = _gpu("missing_gpu", "7")
    gpu_ecc = _gpu("ecc", "2")
    gpu_nvlink = _gpu("nvlink_down", "3:4")
    gpu_driver = _gpu("driver", "418.87.01")
    gpu_unpinned = _gpu("driver", "410.104")
    h2d_half = _node("h2d_half", "5")
    # node health (issue 39 item 7): the stand-ins' kernel log, BMC, memory and NVMe (sim/standins/podsim_node.py)
    xid79, xid48 = _node("xid79", "3"), _node("xid48", "2")
    aer, flap = _node("aer_hca", "mlx5_1"), _node("link_flap", "mlx5_2")
    dimm, nvme, psu = _node("dimm_missing", "1"), _node("nvme_critical", "1"), _node("psu_failed", "2")
    # issue 40 item 2: HCA port counters rising during the validation (a ticker in the node raises the stand-in sysfs)
    hca_symbols = _hca_counters_rising("mlx5_1", {"counters/symbol_error": 20})
    # (the 8-bit link_downed reaches 255, where it stops counting, after 4 min: the drill's runs of the network tag
    # read the counters 3-4 s apart; a longer run with the fault in place sees it saturated, an error)
    hca_flap = _hca_counters_rising("mlx5_3", {"counters/link_downed": 1, "counters/link_error_recovery": 1})
    return (
        Fault("nic_mtu", "host-network", "sim-dgx3", "data NIC enp132s0 at MTU 1500 (model 9000)",
              ("network",), ("network",), ("mtu",), _mtu("enp132s0", 1500), _mtu("enp132s0")),
        Fault("nic_down", "host-network", "sim-dgx2", "data NIC enp12s0 link down",
              ("network",), ("network",), ("down",), _link("enp12s0", "down"), _link("enp12s0", "up")),
        Fault("nic_address", "host-network", "sim-dgx4", "data NIC enp5s0 with a wrong address (+/-100)",
              ("network",), ("network",), ("address",), _address("enp5s0", True), _address("enp5s0", False)),
        Fault("qos_trust_pcp", "roce-qos", "sim-dgx4", "enp139s0 QoS trust pcp (model dscp)",
              ("network",), ("network",), ("trust",), _qos_inject("enp139s0", trust="pcp"), _qos_clear("enp139s0")),
        Fault("qos_pfc_off", "roce-qos", "sim-dgx1", "enp139s0 PFC off on every priority (model: priority 3)",
              ("network",), ("network",), ("pfc",), _qos_inject("enp139s0", pfc="0,0,0,0,0,0,0,0"),
              _qos_clear("enp139s0")),
        Fault("mount_missing", "storage-client", "sim-dgx3", "data mount /mnt/isilon3 unmounted",
              ("storage",), ("nfs_mounts",), ("not mounted",), _umount("/mnt/isilon3"),
              _deploy("playbooks/storage.yml")),
        Fault("storage_frozen", "storage-server", "sim-isilon2", "the storage node's NFS server frozen (SIGSTOP)",
              ("storage",), ("nfs_mounts",), ("answer", "frozen", "timed out", "timeout", "not responding"),
              _signal_daemon("ganesha", "STOP"), _continue_daemon("ganesha"),
              where=lambda pod, node: (node,)),
        Fault("storage_stopped", "storage-server", "sim-isilon1", "the storage node's NFS server stopped",
              ("storage",), ("nfs_mounts",), ("answer", "refused", "2049", "stopped", "down", "timed out"),
              _ganesha_stop, _ganesha_restart),
        Fault("switch_port_mtu", "switch", "sim-dgx3", "MTU 1500 on the switch port of enp132s0 (model 9214)",
              ("switches",), ("switch_port_mtu",), ("mtu",), sw_mtu, _switch_restore, where=_on_switch("enp132s0")),
        Fault("switch_pfc_removed", "switch", "sim-dgx2", "PFC lines removed from the switch port of enp139s0",
              ("switches",), ("switch_lossless",), ("priority-flow-control", "pfc"), sw_pfc, _switch_restore,
              where=_on_switch("enp139s0")),
        Fault("switch_port_down", "switch", "sim-dgx4", "the switch port of enp12s0 down",
              ("switches",), ("switch_port_status", "switch_lldp"), ("down", "notconnect", "disabled"),
              down_i, down_c, where=_on_switch("enp12s0")),
        Fault("switch_cable_swap", "switch", "sim-dgx1", "enp5s0's cable swapped with the next DGX's",
              ("switches",), ("switch_lldp",), ("swapped",), swap_i, swap_c, where=_on_switch("enp5s0")),
        Fault("switch_optic_rx_low", "switch", "sim-dgx2", "the optic of enp132s0's switch port receives too little "
              "light (Rx power below the module's low alarm)", ("switches",), ("switch_optic_rx_power",),
              ("rx power",), rx_i, rx_c, where=_on_switch("enp132s0")),
        Fault("switch_psu_failed", "switch", "sim-dgx1", "power supply 2 of enp5s0's switch lost its input",
              ("switches",), ("switch_psu",), ("psu", "powerloss"), psu_i, psu_c, where=_on_switch("enp5s0")),
        Fault("switch_fan_failed", "switch", "sim-dgx1", "fan 3/1 of enp5s0's switch failed",
              ("switches",), ("switch_fans",), ("fan",), fan_i, fan_c, where=_on_switch("enp5s0")),
        Fault("mpi_container_stopped", "container", "sim-dgx3", "the MPI container stopped",
              ("containers",), ("mpi_containers",), ("container",),
              lambda ctx, node, rec: ctx.run(in_node(node, "podman", "stop", "--time", "1", MPI_CONTAINER)),
              lambda ctx, node, rec: ctx.run(in_node(node, "podman", "start", MPI_CONTAINER))),
        Fault("gpu_missing", "gpu", "sim-dgx1", "GPU 7 fell off the bus (stand-in)",
              ("gpu",), ("gpu_count",), ("missing", "expected 8"), gpu_missing[0], gpu_missing[1]),
        Fault("gpu_ecc", "gpu", "sim-dgx2", "GPU 2 with double-bit ECC errors (stand-in)",
              ("gpu",), ("gpu_ecc", "gpu_memory_retirement", "gpu_dcgm_diag"), ("ecc",), gpu_ecc[0], gpu_ecc[1]),
        Fault("gpu_nvlink_down", "gpu", "sim-dgx3", "GPU 3 NVLink 4 inactive (stand-in)",
              ("gpu",), ("gpu_nvlink",), ("inactive", "nvlink"), gpu_nvlink[0], gpu_nvlink[1]),
        Fault("gpu_driver_odd", "gpu", "sim-dgx4", "one DGX on another driver (418.87.01, the others 418.67; "
              "stand-in)", ("gpu",), ("gpu_driver_consistent",), ("418.87.01",), gpu_driver[0], gpu_driver[1]),
        Fault("slow_nic", "performance", "sim-dgx2", "enp12s0 shaped to 1 Gbit/s",
              ("iperf",), ("iperf_relative",), ("enp12s0",),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp12s0", "--rate", "1gbit")),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp12s0", "--clear"))),
        Fault("slow_storage", "performance", "sim-isilon2", "the storage node's 40gige-1 shaped to 1 Gbit/s",
              ("iperf",), ("iperf_relative", "fio_relative"), ("40gige-1", "sim-isilon2"),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "40gige-1", "--rate", "1gbit")),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "40gige-1", "--clear"))),
        # the checkpoint stage (issue 44): every DGX writes through every storage node (the round robin), so a slow
        # storage link slows every DGX alike and only the storage node's own check names it
        Fault("ckpt_storage_slow", "performance", "sim-isilon2", "the storage node's 40gige-1 shaped to 20 Mbit/s "
              "(checkpoint writes and read-back)", ("checkpoint",), ("ckpt_write_storage", "ckpt_read_storage"),
              ("sim-isilon2", "limits the checkpoint"),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "40gige-1", "--rate", "20mbit")),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "40gige-1", "--clear"))),
        Fault("hosts_entry_changed", "deploy-files", "sim-dgx2", "the /etc/hosts line of the next DGX has a "
              "wrong address", ("drift",), ("drift_hosts",), ("/etc/hosts", "hosts"),
              _hosts_inject, _file_restore),
        Fault("nccl_env_deleted", "deploy-files", "sim-dgx4", "/etc/dgxpod/nccl.env deleted",
              ("drift",), ("drift_nccl_env",), ("nccl.env",), _nccl_env_inject, _file_restore),
        Fault("fstab_option_changed", "deploy-files", "sim-dgx3", "/etc/fstab: the managed line of /mnt/isilon2 "
              "edited by hand (rsize=65536)", ("drift",), ("drift_fstab",), ("/etc/fstab", "fstab"),
              _fstab_inject, _file_restore),
        Fault("dgx_unreachable", "reachability", "sim-dgx4", "sshd frozen (SIGSTOP), open sessions ended",
              ("identity",), ("identity",), ("does not answer", "unreachable", "timed out", "timeout"),
              _sshd_freeze, _continue_daemon("sshd")),
        # issue 39: GPU copy bandwidth (nvbandwidth stand-in, the GPU stage's option) and a pinned driver
        Fault("gpu_h2d_half", "gpu", "sim-dgx4", "GPU 5's host-to-device copy at half its peers' (nvbandwidth "
              "stand-in)", ("gpu",), ("gpu_bandwidth_h2d_peers",), ("host-to-device",), h2d_half[0], h2d_half[1],
              extra_vars=("gpu_nvbandwidth=true",)),
        Fault("gpu_driver_unpinned", "gpu", "sim-dgx1", "every DGX on driver 410.104, outside the sim pod's pin "
              "'418.' (all alike: the consistency check cannot see it; stand-in)", ("gpu",), ("version_pin_driver",),
              ("outside the pin",), _every_dgx(gpu_unpinned[0]), _every_dgx(gpu_unpinned[1])),
        # issue 46: causes that named the wrong thing
        Fault("hosts_stale_line", "host-network", "sim-dgx2", "a stale /etc/hosts line above the managed block maps "
              "the next DGX to a wrong address (the block itself is right)", ("network",), ("network",),
              ("resolves to",), _hosts_stale_inject, _file_restore),
        Fault("storage_port_mtu", "storage-server", "sim-isilon2", "the storage node's data port 40gige-1 at MTU "
              "1500 (fabric 9000): full-size frames dropped, small ones pass", ("network", "storage"),
              ("network", "nfs_mounts"), ("full-MTU",), _mtu("40gige-1", 1500), _mtu("40gige-1"),
              where=lambda pod, node: (node,)),
        Fault("slow_node", "performance", "sim-dgx2", "the DGX's MPI container capped to 0.05 CPU: slow in every "
              "NCCL run, its run alone included", ("nccl",), ("nccl_relative", "nccl_busbw"), ("node itself",),
              lambda ctx, node, rec: ctx.run(podsim("cpu", node, "--limit", "0.05")),
              lambda ctx, node, rec: ctx.run(podsim("cpu", node, "--clear"))),
        Fault("nic_mtu_jobs", "host-network", "sim-dgx3", "data NIC enp132s0 at MTU 1500 under the NCCL and training "
              "jobs too: they do not start, and the one finding explains them", ("network", "nccl", "training"),
              ("network",), ("mtu",), _mtu("enp132s0", 1500), _mtu("enp132s0"), single=True),
        Fault("storage_frozen_jobs", "storage-server", "sim-isilon2", "the storage node's NFS server frozen under "
              "the training job too: it does not start, and the one finding explains it", ("storage", "training"),
              ("nfs_mounts",), ("answer", "frozen", "timed out", "timeout", "not responding"),
              _signal_daemon("ganesha", "STOP"), _continue_daemon("ganesha"), where=lambda pod, node: (node,),
              single=True),
        Fault("node_xid79", "node", "sim-dgx1", "GPU 3 logged Xid 79 (fell off the bus) and came back (kernel log "
              "stand-in)", ("node",), ("kernel_xid",), ("xid 79", "fallen off the bus"), xid79[0], xid79[1]),
        Fault("node_xid48", "node", "sim-dgx2", "GPU 2 logged Xid 48, a double-bit ECC error (kernel log stand-in)",
              ("node",), ("kernel_xid",), ("xid 48", "double bit"), xid48[0], xid48[1]),
        Fault("node_aer_hca", "node", "sim-dgx3", "an uncorrected PCIe AER error on HCA mlx5_1 (enp12s0; kernel log "
              "stand-in)", ("node",), ("kernel_aer",), ("aer",), aer[0], aer[1]),
        Fault("node_link_flap", "node", "sim-dgx4", "HCA mlx5_2's link (enp132s0) went down and came back up "
              "(kernel log stand-in)", ("node",), ("kernel_link_flap",), ("went down",), flap[0], flap[1]),
        # host_memory compares with the catalogue's installed memory (absolute: skipped on the simulator), so on
        # the pod-in-a-box the SEL's "Memory Device Disabled" entry (bmc_sel) is what names the DIMM
        Fault("node_dimm_missing", "node", "sim-dgx2", "a 32 GB DIMM disabled by the BIOS: MemTotal and NUMA node 1 "
              "32 GiB short, SEL 'Memory Device Disabled' (meminfo, numactl and ipmitool stand-ins)", ("node",),
              ("host_memory", "bmc_sel"), ("dimm",), dimm[0], dimm[1]),
        Fault("node_nvme_critical", "node", "sim-dgx3", "an NVMe drive with a SMART critical warning (nvme and "
              "smartctl stand-ins; a DGX-1 has none, so its count fails too)", ("node",), ("host_nvme",),
              ("critical warning",), nvme[0], nvme[1]),
        Fault("node_psu_failed", "node", "sim-dgx1", "power supply PSU2 failed (ipmitool stand-in: SDR state and SEL "
              "entries)", ("node",), ("bmc_sensors", "bmc_sel"), ("psu2", "power supply"), psu[0], psu[1]),
        # issue 40 item 1: RDMA per rail (the perftest stand-ins move real bytes over the rail's simulated link)
        Fault("rdma_rail_slow", "performance", "sim-dgx1", "enp139s0 (HCA mlx5_3, rail data-139) shaped to 500 Mbit/s: "
              "one rail slow with every peer", ("rdma",), ("rdma_bw_relative",), ("enp139s0",),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp139s0", "--rate", "500mbit")),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp139s0", "--clear"))),
        Fault("rdma_hca_broken", "host-network", "sim-dgx3", "HCA mlx5_1 (enp12s0) cannot move its QPs to RTR: every "
              "RDMA run through it fails while TCP over enp12s0 works (perftest stand-in)", ("rdma",), ("rdma_path",),
              ("mlx5_1",), _rdma_hca("mlx5_1", "rtr"), _rdma_hca("mlx5_1", None)),
        Fault("hca_symbol_errors", "host-network", "sim-dgx2", "HCA mlx5_1 (enp12s0) counts symbol errors, 20 a "
              "second, while the validation runs (a bad cable or optic; counter ticker in the stand-in sysfs)",
              ("network",), ("hca_symbol_error",), ("symbol errors",), *hca_symbols),
        Fault("hca_link_flap", "host-network", "sim-dgx3", "HCA mlx5_3 (enp139s0)'s link goes down and retrains every "
              "second while the validation runs (link_downed and link_error_recovery rising; counter ticker)",
              ("network",), ("hca_link_downed", "hca_link_error_recovery"), ("flapping",), *hca_flap),
    )


CATALOGUE: Tuple[Fault, ...] = _catalogue()

# InfiniBand fabric faults (issue 40 item 5, layer "fabric"): faults of the infiniband-diags stand-ins' fabric
# (sim/standins/podsim_ib.py), which `sim/podsim ib --map` declares on the pod-in-a-box's RDMA data fabrics for the
# stand-ins only. The pod-in-a-box's model has no InfiniBand fabric, so `validate.yml --tags ib` skips there: these
# are not in CATALOGUE (the drill of the Ethernet pod); they are injected and cleared by name (`podsim fault inject
# ib_cable_swap`) and found by the IB stage of a pod whose model has the fabric (docs/simulator.md).
IB_LAYER = "fabric"


def _ib_catalogue() -> Tuple[Fault, ...]:
    swap = _ib_fault("swap", "sim-dgx1:mlx5_1,sim-dgx2:mlx5_1")
    narrow = _ib_fault("width", "sim-dgx3:mlx5_2:1X")
    slow = _ib_fault("speed", "sim-dgx4:mlx5_0:EDR")
    no_sm, two_sm = _ib_fault("no_sm", "1"), _ib_fault("two_sm", "1")
    return (
        Fault("ib_cable_swap", IB_LAYER, "sim-dgx1", "mlx5_1's IB cable swapped with sim-dgx2 mlx5_1's (each on the "
              "other's switch port; IB stand-ins)", ("ib",), ("ib_cabling",), ("cabled to",), *swap,
              where=lambda pod, node: ("sim-ib1",)),
        Fault("ib_link_1x", IB_LAYER, "sim-dgx3", "mlx5_2's IB link trained at 1X (model 4X HDR; IB stand-ins)",
              ("ib",), ("ib_link",), ("width 1X",), *narrow, where=lambda pod, node: ("sim-ib2",)),
        Fault("ib_link_slow", IB_LAYER, "sim-dgx4", "mlx5_0's IB link at EDR (model HDR; IB stand-ins)",
              ("ib",), ("ib_link",), ("speed EDR",), *slow, where=lambda pod, node: ("sim-ib1",)),
        Fault("ib_no_sm", IB_LAYER, "sim-dgx1", "no subnet manager answers on the IB fabric (IB stand-ins)",
              ("ib",), ("ib_sm",), ("no master subnet manager",), *no_sm, where=lambda pod, node: ("fabric",)),
        Fault("ib_two_sm", IB_LAYER, "sim-dgx1", "a second master subnet manager on sim-ib2: a split subnet (IB "
              "stand-ins)", ("ib",), ("ib_sm",), ("2 master subnet managers",), *two_sm,
              where=lambda pod, node: ("fabric",)),
    )


IB_FAULTS: Tuple[Fault, ...] = _ib_catalogue()
BY_NAME: Dict[str, Fault] = {f.name: f for f in CATALOGUE + IB_FAULTS}


def get(name: str) -> Fault:
    if name not in BY_NAME:
        raise KeyError("no fault %r (sim/podsim fault list): %s" % (name, ", ".join(BY_NAME)))
    return BY_NAME[name]


def key(name: str, node: str) -> str:
    return "%s@%s" % (name, node)


def inject(ctx, name: str, node: Optional[str] = None) -> str:
    """Inject a fault (again: idempotent, the first snapshot is kept). Returns the node."""
    f = get(name)
    node = node or f.node
    records = ctx.records()
    rec = records.get(key(name, node), {})
    records[key(name, node)] = rec
    ctx.save_records(records)  # recorded first: a failed inject is still cleared by `fault clear all`
    try:
        f.inject(ctx, node, rec)
    finally:
        records[key(name, node)] = rec
        ctx.save_records(records)
    return node


def clear(ctx, name: str, node: Optional[str] = None) -> str:
    """Clear a fault (not injected: its clear still puts the modelled state back, which is a no-op on a
    healthy pod). Returns the node."""
    f = get(name)
    node = node or f.node
    records = ctx.records()
    f.clear(ctx, node, records.get(key(name, node), {}))
    records.pop(key(name, node), None)
    ctx.save_records(records)
    return node


def clear_all(ctx) -> List[str]:
    """Clear every fault injected and not yet cleared, newest first. Returns NAME@NODE of each."""
    done = []
    for k in reversed(list(ctx.records())):
        name, _, node = k.partition("@")
        clear(ctx, name, node)
        done.append(k)
    return done


def listing() -> str:
    rows = [("NAME", "LAYER", "NODE", "TAGS", "CHECKS", "WHAT")]
    for f in CATALOGUE + IB_FAULTS:  # the IB fabric's last: they need `podsim ib --map` (see IB_FAULTS)
        rows.append((f.name, f.layer, f.node, ",".join(f.tags), ",".join(f.checks),
                     f.summary))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)) + "  " + r[5] for r in rows]
    return "\n".join(lines) + "\n"


def main(args) -> int:
    """``podsim fault`` (dispatched by sim/podsimlib/verbs.py)."""
    if args.action == "list":
        sys.stdout.write(listing())
        return 0
    ctx = Ctx()
    if args.action == "clear" and args.name == "all":
        done = clear_all(ctx)
        print("podsim: fault: cleared %s" % (", ".join(done) or "nothing (no fault injected)"))
        return 0
    if not args.name:
        print("podsim: error: fault %s needs a NAME (sim/podsim fault list)" % args.action, file=sys.stderr)
        return 2
    try:
        f = get(args.name)
        node = (inject if args.action == "inject" else clear)(ctx, f.name, args.node)
    except (KeyError, ValueError) as e:
        print("podsim: error: %s" % e.args[0], file=sys.stderr)
        return 2
    print("podsim: fault %s: %s on %s (%s)" % (args.action, f.name, node, f.summary))
    return 0
