"""podsim -- the pod-in-a-box: a simulated DGX pod on one Linux machine.

    podsim up [--nodes N] [--storage M] [--shape-proportional] [--engine podman|docker] [--scheduler slurm]
                                                                 build / repair / resize the pod
    podsim down [--purge]                                        remove everything it created
    podsim status [--json]                                       what runs; exit 0 only if healthy
    podsim exec NODE -- CMD...                                   run CMD inside a node
    podsim shape NODE NIC (--rate 40gbit | --clear)              tc TBF on a node's link
    podsim cpu NODE (--limit CPUS | --clear)                      a slow DGX: cap its MPI container's CPU
    podsim switch SWITCH [--show] [--fault K=V]... [--clear-faults] [--cli LINE]...
                                                                 a fake switch: config, faults, CLI lines
    podsim node NODE [--fault K=V]... [--clear]                  a DGX's node health faults (kernel log, BMC, ...)
    podsim fault list | inject NAME [NODE] | clear NAME [NODE] | clear all
                                                                 the fault drill's catalogue (sim/faults/)
    podsim inventory [--nodes N] [--storage M] [--engine E] [--scheduler S]
                                                                 print the inventory (no root needed)

Nodes are network namespaces (netns `sim-dgx1`...), each with private mount + UTS namespaces held by
an anchor process; NICs are veth pairs whose host ends sit on one Linux bridge per fabric.  See
docs/simulator.md.  Safety: only 198.18.0.0/15 addresses, no default route in any node, nothing
written to the host's /etc, only recorded processes (and processes inside the simulator's own
namespaces) are ever signalled.
"""

from __future__ import annotations

import argparse

import podmodel as pm
import podsim_gpu
import podsim_ib
import podsim_node

from .common import die
from .down import cmd_down
from .ib import cmd_ib
from .slurm import SCHEDULERS
from .switches import SWITCH_FAULTS
from .up import cmd_up
from .verbs import (cmd_cpu, cmd_exec, cmd_fault, cmd_gpu, cmd_inventory, cmd_node, cmd_shape, cmd_status,
                    cmd_switch)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="podsim", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("up", help="build, repair or resize the pod, then write the inventory")
    p.add_argument("--nodes", type=int, default=pm.DEFAULT_NODES)
    p.add_argument("--storage", type=int, default=pm.DEFAULT_STORAGE)
    p.add_argument("--shape-proportional", action="store_true",
                   help="shape data links 10 Gbit/s (DGX 100G ports) vs 4 Gbit/s (storage 40G ports)")
    p.add_argument("--engine", choices=("podman", "docker"), default=None,
                   help="the MPI containers' engine (default: the recorded one, else podman); docker starts a "
                        "dockerd in every DGX (sim/podsimlib/docker.py)")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="none",
                   help="slurm: the inventory asks for Slurm on the DGX (site.yml deploys it; docs/slurm.md)")
    p.set_defaults(func=cmd_up)
    p = sub.add_parser("down", help="remove everything the simulator created")
    p.add_argument("--purge", action="store_true", help="also delete keys, known_hosts and /ifs data")
    p.set_defaults(func=cmd_down)
    p = sub.add_parser("status", help="health of every node; exit 0 only if all healthy")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser("exec", help="run a command inside a node")
    p.add_argument("node")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_exec)
    p = sub.add_parser("shape", help="tc TBF on a node's link (fault injection)")
    p.add_argument("node")
    p.add_argument("nic")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rate", help="e.g. 40gbit, 500mbit")
    g.add_argument("--clear", action="store_true")
    p.set_defaults(func=cmd_shape)
    p = sub.add_parser("cpu", help="a slow DGX: cap its MPI container's CPU (cgroup CFS quota)")
    p.add_argument("node")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--limit", type=float, metavar="CPUS", help="e.g. 0.1 (a tenth of one core for all its ranks)")
    g.add_argument("--clear", action="store_true")
    p.add_argument("--container", default="dgxpod-mpi", help="the MPI container (default dgxpod-mpi)")
    p.set_defaults(func=cmd_cpu)
    p = sub.add_parser("switch", help="a fake switch: show its config, inject faults, type CLI lines")
    p.add_argument("switch", help="sim-sw1, sim-sw2")
    p.add_argument("--show", action="store_true", help="print the running config (after --cli lines)")
    p.add_argument("--fault", action="append", metavar="KEY=VALUE",
                   help="set a fault (kept until --clear-faults): %s" % ", ".join(SWITCH_FAULTS))
    p.add_argument("--clear-faults", action="store_true", help="clear every fault (before any --fault)")
    p.add_argument("--cli", action="append", metavar="LINE",
                   help="a CLI line, in order (start with enable / configure); exit 1 if the switch rejects one")
    p.set_defaults(func=cmd_switch)
    p = sub.add_parser("gpu", help="a simulated DGX's GPUs: inject or clear faults, print the faults set")
    p.add_argument("node")
    p.add_argument("--fault", action="append", metavar="KEY=VALUE",
                   help="set a fault (kept until --clear): %s" % ", ".join(podsim_gpu.FAULT_KEYS))
    p.add_argument("--clear", action="store_true", help="clear every GPU fault (before any --fault)")
    p.set_defaults(func=cmd_gpu)
    p = sub.add_parser("node", help="a simulated DGX's node health (kernel log, BMC, memory, NVMe, nvbandwidth): "
                                    "inject or clear faults, print the faults set")
    p.add_argument("node")
    p.add_argument("--fault", action="append", metavar="KEY=VALUE",
                   help="set a fault (kept until --clear): %s" % ", ".join(podsim_node.FAULT_KEYS))
    p.add_argument("--clear", action="store_true", help="clear every node fault (before any --fault)")
    p.set_defaults(func=cmd_node)
    p = sub.add_parser("ib", help="the infiniband-diags stand-ins' fabric (declared to the stand-ins only): write or "
                                  "remove its map on every DGX, inject or clear fabric faults, print the faults set")
    p.add_argument("--map", action="store_true", help="write the fabric map (the RDMA data fabrics as HDR rails)")
    p.add_argument("--unmap", action="store_true", help="remove the map and the faults")
    p.add_argument("--fault", action="append", metavar="KEY=VALUE",
                   help="set a fault (kept until --clear): %s" % ", ".join(podsim_ib.FAULT_KEYS))
    p.add_argument("--clear", action="store_true", help="clear every fabric fault (before any --fault)")
    p.set_defaults(func=cmd_ib)
    p = sub.add_parser("fault", help="the fault drill's catalogue: list, inject or clear a fault (sim/faults/)")
    p.add_argument("action", choices=("list", "inject", "clear"))
    p.add_argument("name", nargs="?", help="a fault from `fault list` (clear: or all)")
    p.add_argument("node", nargs="?", help="the node (default: the fault's own)")
    p.set_defaults(func=cmd_fault)
    p = sub.add_parser("inventory", help="print the inventory for a size (no root needed)")
    p.add_argument("--nodes", type=int, default=pm.DEFAULT_NODES)
    p.add_argument("--storage", type=int, default=pm.DEFAULT_STORAGE)
    p.add_argument("--engine", choices=("podman", "docker"), default="podman")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="none")
    p.set_defaults(func=cmd_inventory)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except RuntimeError as e:
        die(str(e))
    return 1
