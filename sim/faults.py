"""The pod-in-a-box's fault catalogue (issue 17): faults the fault drill injects one at a time, each with the
validate.yml tags that should catch it and what the report's top finding must say.

    sim/podsim fault list                    the catalogue
    sim/podsim fault inject NAME [NODE]      inject (idempotent; NODE defaults to the fault's node)
    sim/podsim fault clear NAME [NODE]       clear it, restoring exactly the state before the inject
    sim/podsim fault clear all               clear every fault injected and not yet cleared

Every fault reuses a mechanism the simulator already has: a command inside a node (``podsim exec``: ip,
mlnx_qos, umount, podman, the node's files), ``podsim shape`` (tc), ``podsim gpu`` (the GPU stand-ins'
faults), the fake switches' CLI (``podsim switch --cli``) and fault keys, and the recorded daemons' pids
(ganesha, sshd) in the simulator's state. What a clear needs to put back (a file's text, a switch's running
config, the QoS settings, the signalled pids) is recorded at inject time in ``<state dir>/faults.json``, so
a clear is exact and a second inject does not overwrite the healthy snapshot.

Commands go through a :class:`Ctx` so the unit tests (tests/unit/test_sim_faults.py) check what each fault
would run against a fake one, without a pod.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

SIM_DIR = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(SIM_DIR)
if SIM_DIR not in sys.path:
    sys.path.insert(0, SIM_DIR)

import podmodel as pm  # noqa: E402

PODSIM = os.path.join(SIM_DIR, "podsim")
# the layers issue 17 asks the drill to cover
LAYERS = ("host-network", "roce-qos", "storage-client", "storage-server", "switch", "container", "gpu",
          "performance", "deploy-files", "reachability")
MPI_CONTAINER = "dgxpod-mpi"
NCCL_ENV = "/etc/dgxpod/nccl.env"
HOSTS = "/etc/hosts"
FSTAB = "/etc/fstab"
FSTAB_MARKERS = ("# BEGIN dgxpod nfs_client", "# END dgxpod nfs_client")  # module_utils/storage_plan.py FSTAB_*
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
    must appear in the finding's cause or summary (case-insensitive)."""

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

    def targets(self, pod: pm.Pod, node: str) -> Tuple[str, ...]:
        return tuple(self.where(pod, node)) if self.where else (node,)


# --------------------------------------------------------------------------- host networking

def _mtu(nic: str, mtu: Optional[int] = None):
    def act(ctx, node, rec):
        want = mtu if mtu is not None else pm.FABRICS[nic_of(ctx.pod(), node, nic).fabric].mtu
        ctx.run(in_node(node, "ip", "link", "set", "dev", nic, "mtu", str(want)))
    return act


def _link(nic: str, state: str):
    def act(ctx, node, rec):
        ctx.run(in_node(node, "ip", "link", "set", "dev", nic, state))
    return act


def _address(nic: str, wrong: bool):
    """Replace NIC's modelled address with a wrong one on the same subnet (wrong=True), or back (idempotent:
    the one to go is deleted if present, the one to have is added if absent)."""
    def act(ctx, node, rec):
        pod = ctx.pod()
        n = nic_of(pod, node, nic)
        plen = prefix_len(pod, n)
        good, bad = "%s/%d" % (n.address, plen), "%s/%d" % (wrong_address(n.address), plen)
        drop, add = (good, bad) if wrong else (bad, good)
        show = "ip -o -4 addr show dev %s | grep -Fqw %s" % (nic, "%s")
        ctx.run(sh(node, "%s && ip addr del %s dev %s; %s || ip addr add %s dev %s; true" % (
            show % drop, drop, nic, show % add, add, nic)))
    return act


# --------------------------------------------------------------------------- RoCE QoS (the mlnx_qos stand-in)

def _qos_state(ctx, node: str, nic: str) -> dict:
    sys.path.insert(0, os.path.join(REPO, "module_utils"))
    from mlx_parse import parse_mlnx_qos  # the toolkit's own parser of the real tool's output
    q = parse_mlnx_qos(ctx.run(in_node(node, "mlnx_qos", "-i", nic)))
    return {"trust": q["trust"], "pfc": ",".join(str(v) for v in q["pfc_enabled"])}


def _qos_inject(nic: str, **settings: str):
    def act(ctx, node, rec):
        if "qos" not in rec:
            rec["qos"] = _qos_state(ctx, node, nic)
        argv = ["mlnx_qos", "-i", nic]
        for key in sorted(settings):
            argv += ["--" + key, settings[key]]
        ctx.run(in_node(node, *argv))
    return act


def _qos_clear(nic: str):
    def act(ctx, node, rec):
        q = rec.get("qos") or {"trust": "dscp", "pfc": ",".join("1" if p == PFC_PRIORITY else "0" for p in range(8))}
        ctx.run(in_node(node, "mlnx_qos", "-i", nic, "--trust", q["trust"], "--pfc", q["pfc"]))
    return act


# --------------------------------------------------------------------------- storage

def _umount(path: str):
    def act(ctx, node, rec):
        ctx.run(sh(node, f"! mountpoint -q {path} || umount {path}"))
    return act


def _deploy(playbook: str):
    """Put back what the deploy owns by running its playbook on the node (how the e2e tests heal it)."""
    def act(ctx, node, rec):
        ctx.run(["ansible-playbook", playbook, "-l", node])
    return act


def _signal_daemon(daemon: str, sig: str):
    def act(ctx, node, rec):
        ctx.run(["kill", "-" + sig, str(recorded_pid(ctx, node, daemon))])
    return act


def _continue_daemon(daemon: str):
    def act(ctx, node, rec):
        try:
            pid = recorded_pid(ctx, node, daemon)
        except RuntimeError:
            return  # not running: nothing frozen to continue (podsim up restarts a dead one)
        ctx.run(["kill", "-CONT", str(pid)])
    return act


def _ganesha_stop(ctx, node, rec):
    try:
        pid = recorded_pid(ctx, node, "ganesha")
    except RuntimeError:
        return  # stopped already (an inject again)
    ctx.run(["kill", "-TERM", str(pid)])


def _ganesha_restart(ctx, node, rec):
    nodes, storage = pod_size(ctx)
    ctx.run(podsim("up", "--nodes", str(nodes), "--storage", str(storage)))  # restarts the recorded daemon
    ctx.run(["ansible-playbook", "playbooks/storage.yml"])  # the DGX mounts through it, verified


# --------------------------------------------------------------------------- switches

def _peer(pod: pm.Pod, node: str) -> str:
    """The next DGX after ``node`` (the last one's is the first)."""
    names = [d.name for d in pod.dgx]
    if node not in names:
        raise ValueError("%s is not a DGX of the pod (%s)" % (node, ", ".join(names)))
    return names[(names.index(node) + 1) % len(names)]


def cabled_port(pod: pm.Pod, node: str, nic: str) -> Tuple[str, str]:
    n = nic_of(pod, node, nic)
    if not n.switch:
        raise ValueError("%s %s is not cabled to a switch" % (node, nic))
    return n.switch, n.switch_port


def _neighbour_port(pod: pm.Pod, node: str, nic: str) -> str:
    """The port of the next DGX's same NIC on the same switch (the other end of a swapped cable)."""
    sw, _ = cabled_port(pod, node, nic)
    osw, oport = cabled_port(pod, _peer(pod, node), nic)
    if osw != sw:
        raise ValueError("%s and %s have their %s on different switches: no cable to swap" % (
            node, _peer(pod, node), nic))
    return oport


def _switch_cli(nic: str, *lines: str):
    """Type config lines on the port cabled to NODE's NIC, as a person at the switch's console would; the
    running config before is kept for the clear."""
    def act(ctx, node, rec):
        sw, port = cabled_port(ctx.pod(), node, nic)
        if "running" not in rec:
            rec["switch"], rec["running"] = sw, ctx.switch_state(sw)["running"]
        argv = podsim("switch", sw, "--cli", "enable", "--cli", "configure", "--cli", "interface " + port)
        for line in lines:
            argv += ["--cli", line]
        ctx.run(argv + ["--cli", "end"])
    return act


def _switch_restore(ctx, node, rec):
    if "running" in rec:
        state = ctx.switch_state(rec["switch"])
        state["running"] = rec["running"]
        ctx.save_switch_state(rec["switch"], state)


def _switch_fault(nic: str, key: str, value: Callable[[pm.Pod, str], str]):
    def inject(ctx, node, rec):
        pod = ctx.pod()
        sw, _ = cabled_port(pod, node, nic)
        state = ctx.switch_state(sw)
        faults = dict(state.get("faults") or {})
        if "had" not in rec:
            rec["switch"], rec["had"] = sw, {key: faults[key]} if key in faults else {}
        faults[key] = value(pod, node)
        state["faults"] = faults
        ctx.save_switch_state(sw, state)

    def clear(ctx, node, rec):
        sw = rec.get("switch") or cabled_port(ctx.pod(), node, nic)[0]
        state = ctx.switch_state(sw)
        faults = dict(state.get("faults") or {})
        faults.pop(key, None)
        faults.update(rec.get("had") or {})
        state["faults"] = faults
        ctx.save_switch_state(sw, state)
    return inject, clear


def _on_switch(nic: str):
    return lambda pod, node: (cabled_port(pod, node, nic)[0],)


# --------------------------------------------------------------------------- GPUs (the stand-ins' faults)

def _gpu_args(faults: dict) -> List[str]:
    out = []
    for key in sorted(faults):
        v = faults[key]
        v = "%d:%d" % tuple(v) if isinstance(v, list) else ("1" if v is True else str(v))
        out += ["--fault", "%s=%s" % (key, v)]
    return out


def _gpu(key: str, value: str):
    def inject(ctx, node, rec):
        ctx.run(podsim("gpu", node, "--fault", "%s=%s" % (key, value)))

    def clear(ctx, node, rec):
        current = json.loads(ctx.run(podsim("gpu", node)) or "{}")
        current.pop(key, None)
        ctx.run(podsim("gpu", node, "--clear", *_gpu_args(current)))
    return inject, clear


# --------------------------------------------------------------------------- files the deploy writes

def _file_keep(ctx, node: str, path: str, rec: dict) -> None:
    if "file" not in rec:
        out = ctx.run(sh(node, f"if [ -e {path} ]; then stat -c %a {path}; cat {path}; else echo absent; fi"))
        mode, _, text = out.partition("\n")
        rec["file"] = {"path": path, "mode": mode.strip(), "text": text}


def _file_restore(ctx, node, rec):
    f = rec.get("file")
    if not f:
        return
    if f["mode"] == "absent":
        ctx.run(in_node(node, "rm", "-f", f["path"]))
        return
    # cat > keeps the inode (and the overlay's ownership); chmod puts the mode back
    ctx.run(sh(node, "cat > {p} && chmod {m} {p}".format(p=f["path"], m=f["mode"])), input=f["text"])


def hosts_with_changed_entry(text: str, name: str) -> str:
    """/etc/hosts with the address of the line naming ``name`` changed (the others as they are)."""
    out = []
    for line in text.splitlines(True):
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and name in words[1:] and "." in words[0]:
            line = line.replace(words[0], wrong_address(words[0]), 1)
        out.append(line)
    return "".join(out)


def _hosts_inject(ctx, node, rec):
    _file_keep(ctx, node, HOSTS, rec)
    new = hosts_with_changed_entry(rec["file"]["text"], _peer(ctx.pod(), node))
    ctx.run(sh(node, "cat > %s" % HOSTS), input=new)


def fstab_with_changed_option(text: str, mount_point: str, option: str, value: str) -> str:
    """/etc/fstab with one option of the managed line of ``mount_point`` set to ``value`` (as an admin
    would edit it by hand); lines outside the nfs_client block and the other mounts stay as they are.
    ValueError when the block has no line for that mount point (nothing to change: the fault would not
    be injected)."""
    out, inside, done = [], False, False
    for line in text.splitlines(True):
        if line.startswith(FSTAB_MARKERS[0]):
            inside = True
        elif line.startswith(FSTAB_MARKERS[1]):
            inside = False
        words = line.split()
        if inside and len(words) >= 4 and words[1] == mount_point and not done:
            opts = words[3].split(",")
            names = [o.split("=", 1)[0] for o in opts]
            if option in names:  # changed in place, as an edit by hand would
                opts[names.index(option)] = "%s=%s" % (option, value)
            else:
                opts.append("%s=%s" % (option, value))
            words[3] = ",".join(opts)
            line = " ".join(words) + "\n"
            done = True
        out.append(line)
    if not done:
        raise ValueError("%s: no managed line for %s between %s and %s" % (FSTAB, mount_point, *FSTAB_MARKERS))
    return "".join(out)


def _fstab_inject(ctx, node, rec):
    _file_keep(ctx, node, FSTAB, rec)
    new = fstab_with_changed_option(rec["file"]["text"], "/mnt/isilon2", "rsize", "65536")
    ctx.run(sh(node, "cat > %s" % FSTAB), input=new)


def _nccl_env_inject(ctx, node, rec):
    _file_keep(ctx, node, NCCL_ENV, rec)
    ctx.run(in_node(node, "rm", "-f", NCCL_ENV))


# --------------------------------------------------------------------------- an unreachable DGX

def _sshd_freeze(ctx, node, rec):
    """Freeze the node's sshd (the recorded listener, SIGSTOP) and end its open sessions (Ansible's
    ControlPersist masters would otherwise go on working through them): new connections hang, as on a hung
    node. The MPI container's sshd is not touched."""
    pid = recorded_pid(ctx, node, "sshd")
    ctx.run(["kill", "-STOP", str(pid)])
    children = ctx.run(["ps", "-o", "pid=", "--ppid", str(pid)], check=False).split()
    if children:
        ctx.run(["kill", "-TERM"] + children, check=False)


# --------------------------------------------------------------------------- the catalogue

def _catalogue() -> Tuple[Fault, ...]:
    sw_mtu = _switch_cli("enp132s0", "mtu 1500")
    sw_pfc = _switch_cli("enp139s0", "no priority-flow-control")
    down_i, down_c = _switch_fault("enp12s0", "port_down", lambda pod, node: cabled_port(pod, node, "enp12s0")[1])
    swap_i, swap_c = _switch_fault("enp5s0", "swap", lambda pod, node: "%s,%s" % (
        cabled_port(pod, node, "enp5s0")[1], _neighbour_port(pod, node, "enp5s0")))
    gpu_missing = _gpu("missing_gpu", "7")
    gpu_ecc = _gpu("ecc", "2")
    gpu_nvlink = _gpu("nvlink_down", "3:4")
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
        Fault("slow_nic", "performance", "sim-dgx2", "enp12s0 shaped to 1 Gbit/s",
              ("iperf",), ("iperf_relative",), ("enp12s0",),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp12s0", "--rate", "1gbit")),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "enp12s0", "--clear"))),
        Fault("slow_storage", "performance", "sim-isilon2", "the storage node's 40gige-1 shaped to 1 Gbit/s",
              ("iperf",), ("iperf_relative", "fio_relative"), ("40gige-1", "sim-isilon2"),
              lambda ctx, node, rec: ctx.run(podsim("shape", node, "40gige-1", "--rate", "1gbit")),
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
    )


CATALOGUE: Tuple[Fault, ...] = _catalogue()
BY_NAME: Dict[str, Fault] = {f.name: f for f in CATALOGUE}


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
    for f in CATALOGUE:
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
