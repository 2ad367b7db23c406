"""What a fault is (:class:`Fault`), how its commands run (:class:`Ctx`: on the live simulator; the unit tests
use a fake with the same methods), the argv builders every mechanism uses, and the simulator's facts they share."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

SIM_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # sim/
REPO = os.path.dirname(SIM_DIR)
if SIM_DIR not in sys.path:
    sys.path.insert(0, SIM_DIR)

import podmodel as pm  # noqa: E402
PODSIM = os.path.join(SIM_DIR, "podsim")
MPI_CONTAINER = "dgxpod-mpi"
NCCL_ENV = "/etc/dgxpod/nccl.env"
HOSTS = "/etc/hosts"
FSTAB = "/etc/fstab"
FSTAB_MARKERS = ("# BEGIN dgxpod nfs_client", "# END dgxpod nfs_client")  # module_utils/storage/nfs_plan.py FSTAB_*
PFC_PRIORITY = 3  # roles/dgx_network/defaults/main.yml dgx_network_pfc_priority (the sim keeps the default)


class Ctx:
    """Runs a fault's commands on the live simulator (root). The unit tests use a fake with the same
    methods."""

    def __init__(self, state_root: Optional[str] = None, repo: str = REPO):
        self.root = os.path.abspath(state_root or os.environ.get("PODSIM_STATE", os.path.join(SIM_DIR, ".state")))
        self.repo = repo

    # --- commands
    def run(self, argv: List[str], input: Optional[str] = None, check: bool = True, timeout: float = 900) -> str:
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(self.repo, "ansible.cfg"),
                   PATH=os.path.join(self.repo, ".venv", "bin") + ":" + os.environ.get("PATH", ""))
        p = subprocess.run(argv, input=input, capture_output=True, text=True, cwd=self.repo, env=env,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), p.returncode,
                                                        (p.stderr or p.stdout).strip()[-2000:]))
        return p.stdout

    # --- the simulator's state
    @staticmethod
    def is_alive(rec: dict) -> bool:
        """The recorded process still runs (same start time: a recycled pid is never taken for it)."""
        try:
            with open("/proc/%d/stat" % int(rec["pid"])) as fh:
                data = fh.read()
        except (OSError, KeyError, TypeError, ValueError):
            return False
        fields = data[data.rindex(")") + 2:].split()
        return fields[0] not in ("Z", "X") and int(fields[19]) == rec.get("start")

    def sim_state(self) -> dict:
        with open(os.path.join(self.root, "state.json")) as fh:
            return json.load(fh)

    def pod(self) -> pm.Pod:
        st = self.sim_state()
        return pm.pod_shape(st["nodes"], st["storage"])

    def switch_state(self, switch: str) -> dict:
        with open(os.path.join(self.root, "switches", switch + ".json")) as fh:
            return json.load(fh)

    def save_switch_state(self, switch: str, state: dict) -> None:
        path = os.path.join(self.root, "switches", switch + ".json")
        tmp = path + ".fault-tmp"
        with open(tmp, "w") as fh:
            json.dump(state, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)

    # --- what clears need (faults.json: {"NAME@NODE": {...}})
    def _records_path(self) -> str:
        return os.path.join(self.root, "faults.json")

    def records(self) -> Dict[str, dict]:
        try:
            with open(self._records_path()) as fh:
                return json.load(fh)
        except FileNotFoundError:
            return {}

    def save_records(self, records: Dict[str, dict]) -> None:
        os.makedirs(self.root, exist_ok=True)
        tmp = self._records_path() + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(records, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, self._records_path())


# --------------------------------------------------------------------------- helpers (argv builders)

def podsim(*args: str) -> List[str]:
    return [PODSIM] + list(args)


def in_node(node: str, *cmd: str) -> List[str]:
    return podsim("exec", node, "--", *cmd)


def sh(node: str, script: str) -> List[str]:
    return in_node(node, "sh", "-c", script)


def nic_of(pod: pm.Pod, node: str, name: str) -> pm.Nic:
    n = next((x for x in pod.all_nodes if x.name == node), None)
    if n is None:
        raise ValueError("the pod has no node %s (it has %s)" % (node, ", ".join(x.name for x in pod.all_nodes)))
    nic = next((x for x in n.nics if x.name == name), None)
    if nic is None:
        raise ValueError("%s has no NIC %s" % (node, name))
    return nic


def prefix_len(pod: pm.Pod, nic: pm.Nic) -> int:
    return int(pm.FABRICS[nic.fabric].subnet.split("/")[1])


def wrong_address(address: str) -> str:
    """An address on the same subnet that no node uses (the simulator's DGX are .11-.40, storage .211+)."""
    a, b, c, d = address.split(".")
    return "%s.%s.%s.%d" % (a, b, c, int(d) + 100 if int(d) < 100 else int(d) - 100)


def recorded_pid(ctx, node: str, daemon: str) -> int:
    """The pid of a daemon the simulator started and recorded, if it still runs; only such pids are signalled
    (nodes share the host's pid namespace: a stale pid file could name any process)."""
    rec = (ctx.sim_state().get("members", {}).get(node) or {}).get(daemon)
    if not rec or not rec.get("pid") or not ctx.is_alive(rec):
        raise RuntimeError("no recorded %s running on %s (sim/podsim status; sim/podsim up repairs it)"
                           % (daemon, node))
    return int(rec["pid"])


def pod_size(ctx) -> Tuple[int, int]:
    st = ctx.sim_state()
    return int(st["nodes"]), int(st["storage"])


# --------------------------------------------------------------------------- the fault type

@dataclass(frozen=True)
class Fault:
    """One catalogued fault. ``inject(ctx, node, rec)`` / ``clear(ctx, node, rec)`` change the pod; ``rec`` is
    this fault's record (a dict kept in faults.json between inject and clear: what the clear puts back).
    ``where(pod, node)`` -> the host names the report's top finding may carry (the node, or the storage node
    or switch the fault is on). ``tags``: the narrowest validate.yml tags that catch it; ``checks``: check
    names of which one must be the top finding's root or among what it explains; ``keywords``: one of them
    must appear in the finding's cause or summary (case-insensitive); ``single``: it must be the only finding."""

    name: str
    layer: str
    node: str
    summary: str
    tags: Tuple[str, ...]
    checks: Tuple[str, ...]
    keywords: Tuple[str, ...]
    inject: Callable = field(repr=False, compare=False)
    clear: Callable = field(repr=False, compare=False)
    where: Optional[Callable] = field(default=None, repr=False, compare=False)
    # the report must hold this one finding only (issue 46: a fault under the multi-node jobs explains their
    # failures too - no finding of their own, no wall of repeated rank errors)
    single: bool = False
    # extra variables of the fault's validate.yml run ("gpu_nvbandwidth=true": a stage option off by default)
    extra_vars: Tuple[str, ...] = ()

    def targets(self, pod: pm.Pod, node: str) -> Tuple[str, ...]:
        return tuple(self.where(pod, node)) if self.where else (node,)
