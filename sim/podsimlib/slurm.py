"""Slurm on the pod-in-a-box (`podsim up --scheduler slurm`; issue 20, docs/slurm.md "On the pod-in-a-box").

The product's roles/slurm deploys it (`site.yml`); the simulator only gives each DGX what a real DGX has on its
own disk and the pod model that asks for Slurm:

- every DGX node has its own Slurm and munge state (PRIVATE_DIRS: the host's directories of the same name, with
  their owner and mode, empty, bound over them by sim/node-init.sh; /etc and /run are the node's already), so the
  four slurmd and munged keep their spool, seed and logs apart and nothing of the host's own Slurm shows through;
- the generated inventory carries `podsim_slurm` (controller: the first DGX, partition dgx), which
  inventories/sim/group_vars/all/pod.yml turns into `pod.scheduler: slurm` and `pod.slurm`. Without
  `--scheduler slurm` the inventory has no Slurm and the pod is the default one.

The packages (slurm-wlm, munge) are the host's (scripts/setup.sh installs them; the nodes share its /usr), so the
sim sets `slurm_install_packages: false` (inventories/sim/group_vars/all/slurm.yml).
"""

from __future__ import annotations

import os
import shutil

import podmodel as pm

from .common import die

SCHEDULERS = ("none", "slurm")
PARTITION = "dgx"
# Slurm's and munge's state, spool and log directories: one of each per DGX node (the host's are not used).
PRIVATE_DIRS = ("/var/lib/slurm", "/var/log/slurm", "/var/lib/munge", "/var/log/munge")
TOOLS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/sinfo", "/usr/bin/scontrol")
# Written by nodefiles.prepare_node_dir: the PRIVATE_DIRS the node has (those the host has), read by node-init.sh.
PRIVATE_LIST = "private-dirs"


def scheduler_of(args) -> str:
    return getattr(args, "scheduler", None) or "none"


def inventory_vars(pod: pm.Pod, scheduler: str) -> tuple[str, ...]:
    """The `all: vars:` lines of the generated inventory for this scheduler (none: no lines)."""
    if scheduler != "slurm":
        return ()
    return ("# podsim up --scheduler slurm: group_vars/all/pod.yml makes it pod.scheduler + pod.slurm",
            "podsim_slurm: {controller: %s, partition: %s}" % (pod.dgx[0].name, PARTITION))


def node_private_dirs(node_dir: str) -> list[str]:
    """The private directories a node was started with (its PRIVATE_LIST file; none for older nodes)."""
    try:
        with open(os.path.join(node_dir, PRIVATE_LIST)) as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def missing_for_slurm(tools: tuple[str, ...], node_dirs: dict[str, list[str]]) -> list[str]:
    """What keeps Slurm from running on this pod: programs not installed, DGX nodes without their own Slurm/munge
    directories (started before the packages were installed). Pure."""
    out = ["%s is not installed (scripts/setup.sh installs slurm-wlm and munge)" % t for t in tools]
    for name, dirs in sorted(node_dirs.items()):
        lacking = [d for d in PRIVATE_DIRS if d not in dirs]
        if lacking:
            out.append("%s has no private %s (started before slurm-wlm/munge were installed): "
                       "`podsim down` and `podsim up --scheduler slurm` rebuild it" % (name, ", ".join(lacking)))
    return out


def check(up) -> None:
    """With --scheduler slurm: Slurm and munge are installed and every DGX has its own Slurm/munge directories."""
    if scheduler_of(up.args) != "slurm":
        return
    tools = tuple(t for t in TOOLS if not shutil.which(t))
    problems = missing_for_slurm(tools, {n.name: node_private_dirs(up.paths.node(n.name)) for n in up.pod.dgx})
    if problems:
        die("--scheduler slurm: " + "; ".join(problems))
