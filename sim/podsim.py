#!/usr/bin/env python3
"""podsim -- the pod-in-a-box: a simulated DGX pod on one Linux machine.

    podsim up [--nodes N] [--storage M] [--shape-proportional]   build / repair / resize the pod
    podsim down [--purge]                                        remove everything it created
    podsim status [--json]                                       what runs; exit 0 only if healthy
    podsim exec NODE -- CMD...                                   run CMD inside a node
    podsim shape NODE NIC (--rate 40gbit | --clear)              tc TBF on a node's link
    podsim switch SWITCH [--show] [--fault K=V]... [--clear-faults] [--cli LINE]...
                                                                 a fake switch: config, faults, CLI lines
    podsim fault list | inject NAME [NODE] | clear NAME [NODE] | clear all
                                                                 the fault drill's catalogue (sim/faults.py)
    podsim inventory [--nodes N] [--storage M]                   print the inventory (no root needed)

Nodes are network namespaces (netns `sim-dgx1`...), each with private mount + UTS namespaces held by
an anchor process; NICs are veth pairs whose host ends sit on one Linux bridge per fabric.  See
docs/simulator.md.  Safety: only 198.18.0.0/15 addresses, no default route in any node, nothing
written to the host's /etc, only recorded processes (and processes inside the simulator's own
namespaces) are ever signalled.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

SIM_DIR = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(SIM_DIR)
sys.path.insert(0, SIM_DIR)

import podmodel as pm  # noqa: E402

sys.path.insert(0, os.path.join(SIM_DIR, "standins"))
import podsim_gpu  # noqa: E402
import podsim_hw  # noqa: E402

NODE_INIT = os.path.join(SIM_DIR, "node-init.sh")
STATE_VERSION = 1
IFS_EXPORT = "/ifs"


def state_dir() -> str:
    return os.path.abspath(os.environ.get("PODSIM_STATE", os.path.join(SIM_DIR, ".state")))


def inventory_path() -> str:
    return os.environ.get("PODSIM_INVENTORY", os.path.join(REPO, "inventories", "sim", "hosts.yml"))


class Paths:
    def __init__(self, root: str):
        self.root = root
        self.state = os.path.join(root, "state.json")
        self.lock = os.path.join(root, "lock")
        self.key = os.path.join(root, "id_ed25519")
        self.known_hosts = os.path.join(root, "known_hosts")
        self.ifs = os.path.join(root, "ifs")
        self.keys = os.path.join(root, "keys")  # per-node host keys, kept across down
        self.nodes = os.path.join(root, "nodes")  # per-node runtime dirs, removed by down

    def node(self, name: str) -> str:
        return os.path.join(self.nodes, name)

    def hostkey(self, name: str) -> str:
        return os.path.join(self.keys, name, "ssh_host_ed25519_key")


def log(msg: str) -> None:
    print("podsim: " + msg, flush=True)


def die(msg: str, code: int = 1) -> None:
    print("podsim: error: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def run(cmd: list[str], check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, input=input, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, (p.stderr or p.stdout).strip()))
    return p


def ip_json(args: list[str]) -> list:
    p = run(["ip", "-j"] + args, check=False)
    if p.returncode != 0 or not p.stdout.strip():
        return []
    return json.loads(p.stdout)


# --------------------------------------------------------------------------- processes

def proc_starttime(pid: int) -> int | None:
    """Start time (clock ticks since boot) of a live, non-zombie process, else None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except (OSError, TypeError):
        return None
    fields = data[data.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def ns_inode(pid: int, kind: str) -> int | None:
    try:
        return os.stat("/proc/%d/ns/%s" % (pid, kind)).st_ino
    except OSError:
        return None


def record(pid: int | None) -> dict | None:
    """A process record: pid + start time, so a recycled PID is never mistaken for ours."""
    if not pid:
        return None
    st = proc_starttime(pid)
    return {"pid": pid, "start": st} if st is not None else None


def alive(rec: dict | None) -> bool:
    return bool(rec) and proc_starttime(rec["pid"]) == rec["start"]


def signal_recorded(recs: list[dict], timeout: float = 1.0) -> list[dict]:
    """TERM the recorded processes still alive, KILL them after timeout; returns the survivors."""
    live = [r for r in recs if alive(r)]
    for r in live:
        try:
            os.kill(r["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + timeout
    while time.time() < deadline and any(alive(r) for r in live):
        time.sleep(0.05)
    for r in live:
        if alive(r):
            try:
                os.kill(r["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.time() + 2
    while time.time() < deadline and any(alive(r) for r in live):
        time.sleep(0.05)
    return [r for r in live if alive(r)]


def _is_node_mnt_ns(pid: int, nodes_dir: str) -> bool:
    """True if pid's mount namespace is a simulator node's: it has a node's /etc overlay mounted."""
    try:
        with open("/proc/%d/mountinfo" % pid) as f:
            return any(" podsim-etc " in line and "upperdir=%s/" % nodes_dir in line for line in f)
    except OSError:
        return False


def is_sim_netns(name: str) -> bool:
    return name.startswith(pm.NODE_PREFIX) or name.startswith(pm.STORAGE_PREFIX)


def netns_is_ours(st: State, name: str) -> bool:
    """The named namespace is the one this state recorded (same inode)."""
    rec = st.members.get(name, {}).get("netns_ino")
    try:
        return rec is not None and os.stat("/run/netns/" + name).st_ino == rec
    except OSError:
        return False


def foreign_namespaces(st: State) -> dict[str, list[str]]:
    """Node-named namespaces that this state did not create and in which processes run
    (another checkout's pod, or one whose state was lost): never touched, reported."""
    out = {}
    for name in sorted(netns_list()):
        if is_sim_netns(name) and not netns_is_ours(st, name):
            procs = run(["ip", "netns", "pids", name], check=False).stdout.split()
            if procs:
                out[name] = procs
    return out


def describe_foreign(foreign: dict[str, list[str]]) -> str:
    owners = sorted({owner_state_dir(p) or "unknown state" for p in foreign.values()})
    return ("namespaces %s run processes this state did not record (pod of %s); stop that pod with "
            "`PODSIM_STATE=<its state dir> podsim down` (or its checkout's sim/podsim down) first"
            % (", ".join(foreign), ", ".join(owners)))


def owner_state_dir(pids: list[str]) -> str | None:
    """The state directory of the podsim that built the node these processes run in (from the
    upperdir of the node's /etc overlay), or None."""
    for pid in pids:
        try:
            with open("/proc/%s/mountinfo" % pid) as f:
                for line in f:
                    if " podsim-etc " in line and "upperdir=" in line:
                        upper = line.split("upperdir=", 1)[1].split(",", 1)[0]
                        return os.path.dirname(os.path.dirname(os.path.dirname(upper)))
        except OSError:
            continue
    return None


def procs_in_namespaces(mnt_inodes: set[int], net_inodes: set[int], paths: Paths) -> list[dict]:
    """Processes living inside the simulator's own node namespaces (started there by sshd sessions,
    Ansible, tests...): nothing else runs in those namespaces.  A recorded namespace inode is only
    trusted after checking that it is still ours (inode numbers are reused once a namespace is gone):
    a mount namespace must have a node's /etc overlay mounted, a network namespace must still be the
    one bound at /run/netns/<node>.  Host processes are never matched."""
    found = []
    host_mnt, host_net = ns_inode(os.getpid(), "mnt"), ns_inode(os.getpid(), "net")
    bound = set()
    for name in netns_list():
        try:
            bound.add(os.stat("/run/netns/" + name).st_ino)
        except OSError:
            pass
    net_ok = (net_inodes & bound) - {host_net}
    mnt_ok: dict[int, bool] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        m, n = ns_inode(pid, "mnt"), ns_inode(pid, "net")
        ours = n in net_ok
        if not ours and m in mnt_inodes and m != host_mnt:
            if m not in mnt_ok:
                mnt_ok[m] = _is_node_mnt_ns(pid, paths.nodes)
            ours = mnt_ok[m]
        if ours:
            rec = record(pid)
            if rec:
                found.append(rec)
    return found


# --------------------------------------------------------------------------- state

class State:
    def __init__(self, paths: Paths):
        self.paths = paths
        self.data: dict = {"version": STATE_VERSION, "nodes": 0, "storage": 0, "members": {}, "shapes": {},
                           "shape_proportional": False}
        if os.path.exists(paths.state):
            with open(paths.state) as f:
                self.data = json.load(f)

    @property
    def members(self) -> dict:
        return self.data["members"]

    def save(self) -> None:
        os.makedirs(self.paths.root, exist_ok=True)
        tmp = self.paths.state + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.paths.state)


class Lock:
    def __init__(self, paths: Paths):
        os.makedirs(paths.root, exist_ok=True)
        self.f = open(paths.lock, "w")

    def __enter__(self):
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            die("another podsim command holds %s" % self.f.name)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


# --------------------------------------------------------------------------- files inside nodes

SSHD_CONFIG = """\
# sshd of a simulated pod node (podsim); key-only root login, host key pinned by the controller.
Port 22
ListenAddress 0.0.0.0
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile .ssh/authorized_keys
PidFile none
UseDNS no
PrintMotd no
X11Forwarding no
MaxStartups 200:30:400
MaxSessions 100
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def container_confs(graphroot: str) -> dict[str, str]:
    """/etc/containers/{storage,containers}.conf of a DGX node: rootful podman with the node's own
    container store (graphroot on disk under the node's state dir, runroot and tmp_dir on the node's
    private /run) that also reads the host's store, where sim/image/build.sh imported the stand-in
    image - so no node pulls or loads an image. cgroupfs + file events: the nodes run no systemd."""
    storage = (
        "# podsim: container storage of this simulated node (see sim/podsim.py container_confs)\n"
        "[storage]\n"
        'driver = "overlay"\n'
        'graphroot = "%s"\n'
        'runroot = "/run/containers/storage"\n'
        "[storage.options]\n"
        'additionalimagestores = ["/var/lib/containers/storage"]\n' % graphroot)
    containers = (
        "# podsim: podman engine settings of this simulated node\n"
        "[engine]\n"
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        'events_logfile_path = "/run/libpod/events.log"\n'
        'tmp_dir = "/run/libpod"\n')
    return {"storage.conf": storage, "containers.conf": containers}


def ganesha_conf(export_dir: str) -> str:
    return """\
# nfs-ganesha of a simulated storage node (podsim): the Isilon F800 node stand-in.
# Every storage node exports the same host directory as /ifs (Isilon's single namespace).
NFS_CORE_PARAM {
    Protocols = 3, 4;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    NFS_Port = 2049;
    Mount_Path_Pseudo = true;
}
NFSV4 {
    Graceless = true;
    RecoveryRoot = /run/ganesha/recovery;
    Only_Numeric_Owners = true;
}
MDCACHE {
    Entries_HWMark = 100000;
}
EXPORT_DEFAULTS {
    Attr_Expiration_Time = 0;
}
EXPORT {
    Export_Id = 1;
    Path = "%s";
    Pseudo = "%s";
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    Protocols = 3, 4;
    Transports = TCP;
    FSAL {
        Name = VFS;
    }
}
NFS_KRB5 {
    Active_krb5 = false;
}
LOG {
    Default_Log_Level = EVENT;
}
""" % (export_dir, IFS_EXPORT)


def hosts_file(name: str) -> str:
    return ("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "ff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n" % name)


def nfs_python() -> str:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def _write(path: str, text: str, mode: int = 0o644, only_if_missing: bool = False) -> None:
    if only_if_missing and os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def _whiteout(path: str) -> None:
    """Hide a lower (host) file in the node's overlay: an overlayfs whiteout is a 0/0 char device."""
    if not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))


def _opaque_dir(path: str, mode: int) -> None:
    """A directory in the upper layer that hides the host's directory of the same name."""
    os.makedirs(path, exist_ok=True)
    os.chmod(path, mode)
    os.setxattr(path, "trusted.overlay.opaque", b"y")


def prepare_node_dir(paths: Paths, node: pm.Node, pubkey: str) -> None:
    """(Re)create the node's upper layers and the files the simulator owns inside the node."""
    nd = paths.node(node.name)
    for layer, lower in (("etc", "/etc"), ("root", "/root")):
        for sub in ("upper", "work"):
            d = os.path.join(nd, "%s.%s" % (layer, sub))
            os.makedirs(d, exist_ok=True)
        os.chmod(os.path.join(nd, layer + ".upper"), stat.S_IMODE(os.stat(lower).st_mode))
    etc = os.path.join(nd, "etc.upper")
    root = os.path.join(nd, "root.upper")
    _write(os.path.join(etc, "hostname"), node.name + "\n", only_if_missing=True)
    _write(os.path.join(etc, "hosts"), hosts_file(node.name), only_if_missing=True)
    # ssh host key: generated once per node and kept (the controller pins it in known_hosts)
    for f in os.listdir("/etc/ssh"):
        if f.startswith("ssh_host_") and not f.startswith("ssh_host_ed25519_key"):
            _whiteout(os.path.join(etc, "ssh", f))
    for suffix, mode in (("", 0o600), (".pub", 0o644)):
        with open(paths.hostkey(node.name) + suffix) as f:
            _write(os.path.join(etc, "ssh", "ssh_host_ed25519_key" + suffix), f.read(), mode)
    _write(os.path.join(etc, "podsim", "sshd_config"), SSHD_CONFIG)
    ident = {"simulated": True, "simulator": "podsim", "node": node.name, "role": node.role,
             "nics": [{"name": n.name, "fabric": n.fabric, "address": n.address} for n in node.nics]}
    _write(os.path.join(etc, "podsim", "node.json"), json.dumps(ident, indent=1) + "\n")
    # for the FUSE NFS client stand-in (sim/standins/podsim-nfs): the Python that has libnfs + fusepy
    _write(os.path.join(etc, "podsim", "env"), "PODSIM_PYTHON=%s\nPODSIM_SIM=%s\n" % (nfs_python(), SIM_DIR))
    if node.role == "dgx":
        _write(os.path.join(etc, "podsim", "hardware.json"),
               json.dumps(podsim_hw.default_state(node.name, node.index), indent=1, sort_keys=True) + "\n",
               only_if_missing=True)
        # stand-in sysfs (RDMA devices, GID tables) at /etc/podsim/sysfs inside the node: the hardware-facts
        # module reads it with sysfs_root=/etc/podsim/sysfs, as it reads /sys on a real DGX
        with open(os.path.join(etc, "podsim", "hardware.json")) as f:
            hw_state = json.load(f)
        podsim_hw.write_fake_sysfs(os.path.join(etc, "podsim", "sysfs"), hw_state,
                                   {n.name: [n.address] for n in node.nics if n.address})
        # stand-in /proc/modules and HCA PCIe links for the GPU health module (sim/standins/podsim_gpu.py)
        podsim_gpu.write_node_files(os.path.join(etc, "podsim", "sysfs"), hw_state)
        graphroot = os.path.join(nd, "containers")
        os.makedirs(graphroot, mode=0o700, exist_ok=True)
        for fname, text in container_confs(graphroot).items():
            _write(os.path.join(etc, "containers", fname), text)
    else:
        _write(os.path.join(etc, "podsim", "ganesha.conf"), ganesha_conf(paths.ifs))
    # /root/.ssh: the node's own (opaque: the host's /root/.ssh is not visible in nodes)
    ssh_dir = os.path.join(root, ".ssh")
    if not os.path.isdir(ssh_dir):
        _opaque_dir(ssh_dir, 0o700)
    ak = os.path.join(ssh_dir, "authorized_keys")
    existing = open(ak).read() if os.path.exists(ak) else ""
    if pubkey.strip() not in existing:
        _write(ak, existing + pubkey.strip() + "\n", 0o600)


# --------------------------------------------------------------------------- keys

def ensure_keys(paths: Paths, nodes: list[pm.Node]) -> str:
    os.makedirs(paths.root, exist_ok=True)
    if not os.path.exists(paths.key):
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "podsim-controller", "-f", paths.key])
    for n in nodes:
        hk = paths.hostkey(n.name)
        if not os.path.exists(hk):
            os.makedirs(os.path.dirname(hk), exist_ok=True)
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "root@" + n.name, "-f", hk])
    with open(paths.key + ".pub") as f:
        return f.read()


def write_known_hosts(paths: Paths, nodes: list[pm.Node]) -> None:
    lines = []
    for n in nodes:
        with open(paths.hostkey(n.name) + ".pub") as f:
            kt, key = f.read().split()[:2]
        names = [n.name] + [nic.address for nic in n.nics]
        lines.append("%s %s %s\n" % (",".join(names), kt, key))
    _write(paths.known_hosts, "".join(lines), 0o644)


# --------------------------------------------------------------------------- network

def host_end_mac(node: pm.Node, nic: pm.Nic) -> str:
    return "06" + nic.mac[2:]


def ensure_bridges(actions: list[str]) -> None:
    links = {link["ifname"]: link for link in ip_json(["link", "show", "type", "bridge"])}
    cmds = []
    for k, fab in enumerate(pm.FABRICS.values()):
        br = fab.bridge
        mtu = fab.mtu if fab.name == "mgmt" else pm.SWITCH_PORT_MTU
        if br not in links:
            # fixed MAC (else the bridge takes its lowest port's); the extra MTU step marks the MTU as
            # set by the user, so ports with a larger MTU do not raise the bridge's own MTU later.
            cmds += ["link add %s address 06:53:49:ff:00:%02x type bridge stp_state 0 forward_delay 0 "
                     "mcast_snooping 0" % (br, k),
                     "link set %s addrgenmode none" % br,
                     "link set %s mtu 1280" % br]
            actions.append("created bridge %s" % br)
        if br not in links or links[br].get("mtu") != mtu or "UP" not in links[br].get("flags", []):
            cmds += ["link set %s mtu %d up" % (br, mtu)]
            if br in links:
                actions.append("fixed bridge %s (mtu/up)" % br)
    if cmds:
        run(["ip", "-batch", "-"], input="\n".join(cmds) + "\n")
    want = "%s/%d" % (pm.CONTROLLER_ADDRESS, pm.MGMT_PREFIX_LEN)
    have = ip_json(["-4", "addr", "show", "dev", pm.FABRICS["mgmt"].bridge])
    addrs = {"%s/%s" % (a["local"], a["prefixlen"]) for i in have for a in i.get("addr_info", [])}
    if want not in addrs:
        run(["ip", "addr", "add", want, "dev", pm.FABRICS["mgmt"].bridge])
        actions.append("controller address %s on %s" % (want, pm.FABRICS["mgmt"].bridge))


def check_host_routes() -> None:
    """Refuse to run if the host already routes a simulator subnet somewhere else."""
    ours = {f.bridge for f in pm.FABRICS.values()}
    for r in ip_json(["-4", "route", "show"]):
        dst = r.get("dst", "")
        if dst.startswith("198.18.") or dst.startswith("198.19."):
            if r.get("dev") not in ours:
                die("the host already routes %s via %s; the simulator needs 198.18.0.0/15 for itself"
                    % (dst, r.get("dev")))


def netns_list() -> set[str]:
    return {n["name"] for n in ip_json(["netns", "list"])}


def node_link_problems(node: pm.Node, host_links: dict) -> tuple[list[str], list[str], list[str]]:
    """Compare a node's links with the model: (problems, host-side ip commands, node-side ip commands)."""
    problems, host_cmds, node_cmds = [], [], []
    node_links = {link["ifname"]: link for link in ip_json(["-n", node.name, "addr", "show"])}
    if "lo" in node_links and "UP" not in node_links["lo"].get("flags", []):
        problems.append("lo down")
        node_cmds.append("link set lo up")
    for nic in node.nics:
        hl, nl = host_links.get(nic.host_end), node_links.get(nic.name)
        if hl is None or nl is None:
            problems.append("%s missing" % nic.name)
            if hl is not None:
                host_cmds.append("link del %s" % nic.host_end)
            if nl is not None:
                node_cmds.append("link del %s" % nic.name)
            host_cmds.append("link add %s address %s mtu %d type veth peer name %s address %s mtu %d netns %s" % (
                nic.host_end, host_end_mac(node, nic), pm.SWITCH_PORT_MTU, nic.name, nic.mac, nic.mtu, node.name))
            host_cmds += ["link set %s addrgenmode none" % nic.host_end,
                          "link set %s master %s up" % (nic.host_end, nic.bridge)]
            node_cmds += ["addr add %s/24 dev %s" % (nic.address, nic.name), "link set %s up" % nic.name]
            continue
        if hl.get("master") != nic.bridge or "UP" not in hl.get("flags", []):
            problems.append("%s not on %s" % (nic.host_end, nic.bridge))
            host_cmds.append("link set %s master %s up" % (nic.host_end, nic.bridge))
        if nl.get("mtu") != nic.mtu:
            problems.append("%s mtu %s" % (nic.name, nl.get("mtu")))
            node_cmds.append("link set %s mtu %d" % (nic.name, nic.mtu))
        if "UP" not in nl.get("flags", []):
            problems.append("%s down" % nic.name)
            node_cmds.append("link set %s up" % nic.name)
        addrs = {a.get("local") for a in nl.get("addr_info", []) if a.get("family") == "inet"}
        if nic.address not in addrs:
            problems.append("%s lacks %s" % (nic.name, nic.address))
            node_cmds.append("addr add %s/24 dev %s" % (nic.address, nic.name))
    return problems, host_cmds, node_cmds


def default_routes(node: str) -> list:
    return [r for r in ip_json(["-n", node, "-4", "route", "show"]) if r.get("dst") == "default"] + \
           [r for r in ip_json(["-n", node, "-6", "route", "show"]) if r.get("dst") == "default"]


# --------------------------------------------------------------------------- tc shaping

def tc_rate_bytes(rate: str) -> float:
    units = {"kbit": 1e3 / 8, "mbit": 1e6 / 8, "gbit": 1e9 / 8, "bit": 1 / 8, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
    r = rate.lower()
    for u in sorted(units, key=len, reverse=True):
        if r.endswith(u):
            return float(r[:-len(u)]) * units[u]
    return float(r) / 8


def tbf_args(rate: str) -> list[str]:
    burst = max(int(tc_rate_bytes(rate) / 250), 64 * 1024)  # at least one jiffy (HZ=250) of data
    return ["tbf", "rate", rate, "burst", str(burst), "latency", "50ms"]


def apply_shape(node: pm.Node, nic: pm.Nic, rate: str | None) -> None:
    """TBF on both ends of the veth: host end (traffic to the node), node end (traffic from it)."""
    if rate:
        run(["tc", "qdisc", "replace", "dev", nic.host_end, "root"] + tbf_args(rate))
        run(["ip", "netns", "exec", node.name, "tc", "qdisc", "replace", "dev", nic.name, "root"] + tbf_args(rate))
    else:
        run(["tc", "qdisc", "del", "dev", nic.host_end, "root"], check=False)
        run(["ip", "netns", "exec", node.name, "tc", "qdisc", "del", "dev", nic.name, "root"], check=False)


def proportional_shapes(pod: pm.Pod) -> dict[str, str]:
    """Data links shaped in the proportion of the real ports (DGX-1 100G : F800 40G), scaled to what
    veths on this machine carry: 10 Gbit/s for a 100G port, 4 Gbit/s for a 40G port."""
    shapes = {}
    for n in pod.all_nodes:
        for nic in n.nics:
            if nic.speed:
                shapes["%s/%s" % (n.name, nic.name)] = "%dgbit" % (nic.speed // 10)
    return shapes


# --------------------------------------------------------------------------- nodes

def node_health(st: State, node: pm.Node, nets: set[str]) -> dict:
    m = st.members.get(node.name, {})
    h = {"netns": node.name in nets, "anchor": alive(m.get("anchor")), "sshd": alive(m.get("sshd"))}
    if node.role == "storage":
        h["rpcbind"] = alive(m.get("rpcbind"))
        h["ganesha"] = alive(m.get("ganesha"))
    if h["anchor"] and h["netns"]:
        try:
            h["anchor"] = os.stat("/run/netns/" + node.name).st_ino == ns_inode(m["anchor"]["pid"], "net")
        except OSError:
            h["anchor"] = False
    return h


def stop_nodes(st: State, names: list[str], paths: Paths) -> list[str]:
    """Stop everything of these nodes (all at once); returns what is left (empty when clean).
    Order: recorded daemons, recorded anchors, then any other process inside the nodes' recorded
    namespaces (sessions, iperf3 servers, FUSE clients...), then the named netns and runtime dirs."""
    left = []
    ms = {name: st.members.get(name, {}) for name in names}
    for problem in remove_containers({n: m["anchor"] for n, m in ms.items()
                                      if m.get("role") == "dgx" and alive(m.get("anchor"))}, paths):
        log("warning: " + problem + " (its processes are stopped with the node)")
    daemons = [m[k] for m in ms.values() for k in ("ganesha", "rpcbind", "sshd") if isinstance(m.get(k), dict)]
    left += ["pid %d" % r["pid"] for r in signal_recorded(daemons)]
    left += ["pid %d" % r["pid"] for r in signal_recorded([m["anchor"] for m in ms.values() if m.get("anchor")])]
    mnt = {m["mntns"] for m in ms.values() if m.get("mntns")}
    net = {m["netns_ino"] for m in ms.values() if m.get("netns_ino")}
    if mnt or net:
        left += ["pid %d (inside a node)" % r["pid"] for r in signal_recorded(procs_in_namespaces(mnt, net, paths))]
    nets = netns_list()
    for name in names:
        if name in nets:
            if not netns_is_ours(st, name) and run(["ip", "netns", "pids", name], check=False).stdout.split():
                left.append("netns %s is not this pod's and has processes (not touched)" % name)
                continue
            p = run(["ip", "netns", "del", name], check=False)
            if p.returncode != 0:
                left.append("netns %s: %s" % (name, p.stderr.strip()))
    if not left:
        for name in names:
            shutil.rmtree(paths.node(name), ignore_errors=True)
            st.members.pop(name, None)
    return left


def remove_containers(anchors: dict[str, dict], paths: Paths, timeout: float = 60.0) -> list[str]:
    """`podman rm --all --force` inside each DGX node that has a container store (all nodes at once):
    the MPI containers' conmon/sshd would otherwise be killed as strays and leave the node's store
    claiming running containers. Returns what failed; the caller goes on (the namespace sweep stops
    any process left, and the store is removed with the node's directory)."""
    if not shutil.which("podman"):
        return []
    procs = {}
    for name, rec in anchors.items():
        store = os.path.join(paths.node(name), "containers")
        if not os.path.isdir(store) or not os.listdir(store):
            continue
        procs[name] = subprocess.Popen(
            nsenter_cmd(rec["pid"], ["timeout", str(int(timeout)), "podman", "rm", "--all", "--force", "--time", "2"]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    left = []
    for name, p in procs.items():
        _, err = p.communicate()
        if p.returncode != 0:
            left.append("%s: podman rm --all failed (rc %d): %s" % (name, p.returncode, err.strip()[-300:]))
    return left


def launch_anchor(paths: Paths, node: pm.Node) -> subprocess.Popen:
    nd = paths.node(node.name)
    for f in ("ready", "sshd.pid", "rpcbind.pid", "ganesha.pid"):
        try:
            os.unlink(os.path.join(nd, f))
        except FileNotFoundError:
            pass
    logf = open(os.path.join(nd, "init.log"), "a")
    return subprocess.Popen(
        ["ip", "netns", "exec", node.name, "unshare", "--mount", "--uts", "--propagation", "private",
         "/bin/sh", NODE_INIT, node.name, node.role, nd, SIM_DIR],
        stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True, close_fds=True)


def read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def nsenter_cmd(anchor_pid: int, cmd: list[str]) -> list[str]:
    return ["nsenter", "-t", str(anchor_pid), "-n", "-m", "-u", "--"] + cmd


def start_daemon(paths: Paths, node: pm.Node, anchor_pid: int, which: str) -> dict | None:
    """Restart one daemon of a running node inside its namespaces (used when only the daemon died)."""
    nd = paths.node(node.name)
    cmds = {
        "sshd": ["/usr/sbin/sshd", "-D", "-e", "-f", "/etc/podsim/sshd_config"],
        "rpcbind": ["/usr/sbin/rpcbind", "-f"],
        "ganesha": ["/usr/bin/ganesha.nfsd", "-F", "-f", "/etc/podsim/ganesha.conf", "-L",
                    os.path.join(nd, "ganesha.log"), "-p", "/run/ganesha/ganesha.pid", "-N", "NIV_EVENT"],
    }
    logf = open(os.path.join(nd, which + ".log"), "a")
    # nsenter execs the daemon in place (no fork for -n -m -u), so the child's PID is the daemon's.
    p = subprocess.Popen(nsenter_cmd(anchor_pid, cmds[which]), stdin=subprocess.DEVNULL, stdout=logf,
                         stderr=logf, start_new_session=True, close_fds=True)
    time.sleep(0.1)
    return record(p.pid)


def wait_tcp(addrs: list[tuple[str, int]], timeout: float) -> list[tuple[str, int]]:
    """Wait until every (address, port) accepts a TCP connection; returns those that never did."""
    pending = list(addrs)
    deadline = time.time() + timeout
    while pending and time.time() < deadline:
        still = []
        for a in pending:
            try:
                with socket.create_connection(a, timeout=0.5):
                    pass
            except OSError:
                still.append(a)
        pending = still
        if pending:
            time.sleep(0.05)
    return pending


# --------------------------------------------------------------------------- fake switches

FAKE_SWITCH_BASE_PORT = 8220  # sim-swN listens on 127.0.0.1:(8220 + N); inventories/sim/group_vars/switches.yml


def fake_switch_args(paths: Paths, pod: pm.Pod) -> list[str]:
    sw_dir = os.path.join(paths.root, "switches")
    args = [sys.executable, "-m", "sim.fakeswitch", "--state-dir", sw_dir, "--ready-file",
            os.path.join(sw_dir, "ready.json")]
    for name in pm.SWITCHES:
        args += ["--switch", "%s=eos:%d" % (name, FAKE_SWITCH_BASE_PORT + int(name.rsplit("sw", 1)[1]))]
    return args


def ensure_fake_switches(st: State, paths: Paths, pod: pm.Pod, actions: list[str]) -> None:
    """One fake switch SSH server process (asyncssh, sim/fakeswitch) serving every switch of the pod on
    127.0.0.1, recorded like the nodes' daemons. Its config state (the state dir's switches/) lives until
    ``down`` (reset_fake_switches)."""
    rec = st.data.get("fakeswitch")
    if alive(rec):
        write_switch_wiring(paths, pod)
        return
    os.makedirs(os.path.join(paths.root, "switches"), exist_ok=True)
    logf = open(os.path.join(paths.root, "switches", "fakeswitch.log"), "a")
    p = subprocess.Popen(fake_switch_args(paths, pod), cwd=REPO, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                         start_new_session=True, close_fds=True)
    st.data["fakeswitch"] = record(p.pid)
    ports = [("127.0.0.1", FAKE_SWITCH_BASE_PORT + int(n.rsplit("sw", 1)[1])) for n in pm.SWITCHES]
    late = wait_tcp(ports, 20)
    if late:
        die("fake switch server not listening after 20 s on %s (see %s/switches/fakeswitch.log)" % (
            ", ".join("%s:%d" % a for a in late), paths.root))
    write_switch_wiring(paths, pod)
    actions.append("started fake switches %s (pid %d)" % (", ".join(pm.SWITCHES), p.pid))


def write_switch_wiring(paths: Paths, pod: pm.Pod) -> None:
    """Tell each fake switch what is cabled to its ports (LLDP neighbours, link state): pm.switch_wiring."""
    from fakeswitch.server import set_wiring, state_path

    sw_dir = os.path.join(paths.root, "switches")
    for name, wiring in pm.switch_wiring(pod).items():
        path = state_path(sw_dir, name)
        if os.path.exists(path):
            set_wiring(path, wiring)


def reset_fake_switches(paths: Paths) -> None:
    """``down`` leaves no config behind on the switches either: their state files go (the server's host key
    stays, like the nodes' keys), so the next ``up`` starts factory-fresh switches and its first deploy
    pushes their whole config, as it does the nodes'."""
    sw_dir = os.path.join(paths.root, "switches")
    for name in pm.SWITCHES:
        for f in (name + ".json", "ready.json"):
            if os.path.exists(os.path.join(sw_dir, f)):
                os.unlink(os.path.join(sw_dir, f))


# --------------------------------------------------------------------------- verbs

def require_root() -> None:
    if os.geteuid() != 0:
        die("must run as root (network namespaces, bridges, mounts)")


def preflight(storage: int) -> None:
    need = ["ip", "unshare", "nsenter", "tc", "ssh-keygen", "/usr/sbin/sshd"]
    if storage:
        need += ["/usr/bin/ganesha.nfsd", "/usr/sbin/rpcbind"]
    missing = [c for c in need if not shutil.which(c)]
    if missing:
        die("missing tools: %s (run scripts/setup.sh)" % " ".join(missing))
    if storage and not os.path.exists("/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so") and \
            not any(os.path.exists(os.path.join(d, "ganesha", "libfsalvfs.so")) for d in ("/usr/lib", "/usr/lib64")):
        die("nfs-ganesha-vfs is not installed (run scripts/setup.sh)")


def cmd_up(args) -> int:
    require_root()
    t0 = time.time()
    try:
        pod = pm.pod_shape(args.nodes, args.storage)
    except ValueError as e:
        die(str(e), 2)
    preflight(pod.storage)
    paths = Paths(state_dir())
    actions: list[str] = []
    with Lock(paths):
        st = State(paths)
        foreign = foreign_namespaces(st)
        if foreign:
            die(describe_foreign(foreign))
        check_host_routes()
        ensure_bridges(actions)
        wanted = {n.name: n for n in pod.all_nodes}
        # nodes no longer wanted (pod resized down)
        gone = sorted(set(st.members) - set(wanted))
        if gone:
            left = stop_nodes(st, gone, paths)
            if left:
                die("could not remove %s: %s" % (", ".join(gone), ", ".join(left)))
            actions += ["removed %s" % name for name in gone]
        for name in sorted(st.data.get("shapes", {})):
            if name.split("/")[0] not in wanted:
                del st.data["shapes"][name]
        pubkey = ensure_keys(paths, list(pod.all_nodes))
        os.makedirs(paths.ifs, exist_ok=True)
        nets = netns_list()
        # 1. health of existing nodes: broken ones are rebuilt from scratch
        rebuild, launch = [], []
        for node in pod.all_nodes:
            m = st.members.get(node.name)
            if m is None and node.name not in nets:
                rebuild.append(node)
                continue
            h = node_health(st, node, nets)
            if not (h["netns"] and h["anchor"]):
                left = stop_nodes(st, [node.name], paths)
                if left:
                    die("could not clean %s before rebuilding it: %s" % (node.name, ", ".join(left)))
                actions.append("rebuilt %s (%s)" % (node.name, ", ".join(k for k, v in h.items() if not v)))
                rebuild.append(node)
        nets = netns_list()
        for node in rebuild:
            if node.name in nets:  # a stale, empty namespace of the same name (checked above)
                run(["ip", "netns", "del", node.name])
            run(["ip", "netns", "add", node.name])
            # recorded at once, so that a failed `up` leaves nothing `down` cannot find
            st.members[node.name] = {"role": node.role, "netns_ino": os.stat("/run/netns/" + node.name).st_ino}
            prepare_node_dir(paths, node, pubkey)
            if not any(a.startswith("rebuilt %s " % node.name) for a in actions):
                actions.append("created %s" % node.name)
        # 2. links (new nodes get all of theirs here; existing ones are repaired)
        host_links = {link["ifname"]: link for link in ip_json(["link", "show"])}
        host_cmds, node_cmds = [], {}
        for node in pod.all_nodes:
            problems, hc, nc = node_link_problems(node, host_links)
            if problems and node not in rebuild:
                actions.append("repaired %s links: %s" % (node.name, ", ".join(problems)))
            host_cmds += hc
            if nc:
                node_cmds[node.name] = nc
        if host_cmds:
            run(["ip", "-batch", "-"], input="\n".join(host_cmds) + "\n")
        for name, cmds in node_cmds.items():
            run(["ip", "-n", name, "-batch", "-"], input="\n".join(cmds) + "\n")
        # stale host-side veths of nodes that no longer exist
        known = {nic.host_end for n in pod.all_nodes for nic in n.nics}
        for ifname in sorted(host_links):
            if ifname.startswith(pm.VETH_PREFIX) and ifname not in known and os.path.exists("/sys/class/net/" + ifname):
                run(["ip", "link", "del", ifname], check=False)
                actions.append("removed stale link %s" % ifname)
        # 3. anchors of new nodes (all launched, then waited for together)
        for node in rebuild:
            proc = launch_anchor(paths, node)
            st.members[node.name]["anchor"] = record(proc.pid)
            launch.append((node, proc))
        st.save()
        deadline = time.time() + 20
        for node, proc in launch:
            ready = os.path.join(paths.node(node.name), "ready")
            while not os.path.exists(ready):
                if proc.poll() is not None or time.time() > deadline:
                    with open(os.path.join(paths.node(node.name), "init.log")) as f:
                        tail = f.read()[-2000:]
                    die("node %s did not start:\n%s" % (node.name, tail))
                time.sleep(0.02)
            nd = paths.node(node.name)
            m = st.members[node.name]
            for d in ("sshd", "rpcbind", "ganesha"):
                pid = read_pid(os.path.join(nd, d + ".pid"))
                if pid:
                    m[d] = record(pid)
            m["mntns"] = ns_inode(proc.pid, "mnt")
            m["netns_ino"] = ns_inode(proc.pid, "net")
        # 4. daemons that died in otherwise healthy nodes
        for node in pod.all_nodes:
            if node in rebuild:
                continue
            m = st.members[node.name]
            for d in (["sshd"] + (["rpcbind", "ganesha"] if node.role == "storage" else [])):
                if not alive(m.get(d)):
                    m[d] = start_daemon(paths, node, m["anchor"]["pid"], d)
                    actions.append("restarted %s on %s" % (d, node.name))
        # 5. shaping
        shapes = dict(st.data.get("shapes", {}))
        if args.shape_proportional:
            shapes.update(proportional_shapes(pod))
            st.data["shape_proportional"] = True
        for key, rate in sorted(shapes.items()):
            name, nicname = key.split("/")
            node = wanted[name]
            # a rebuilt node has fresh veths: re-apply its recorded shapes; new shapes are applied once
            if node in rebuild or st.data.get("shapes", {}).get(key) != rate:
                apply_shape(node, next(n for n in node.nics if n.name == nicname), rate)
                if node not in rebuild:
                    actions.append("shaped %s to %s" % (key, rate))
        st.data["shapes"] = shapes
        st.data.update({"version": STATE_VERSION, "nodes": pod.nodes, "storage": pod.storage,
                        "repo": REPO, "controller_address": pm.CONTROLLER_ADDRESS})
        st.save()
        write_known_hosts(paths, list(pod.all_nodes))
        # 6. wait until every sshd (and ganesha) answers on the mgmt/data addresses
        targets = [(n.mgmt_address, 22) for n in pod.all_nodes]
        targets += [(nic.address, 2049) for n in pod.storage_nodes for nic in n.nics if nic.fabric == "mgmt"]
        late = wait_tcp(targets, 20)
        if late:
            die("not answering after 20 s: %s (see %s/nodes/*/ *.log)" % (
                ", ".join("%s:%d" % a for a in late), paths.root))
        for n in pod.all_nodes:
            if default_routes(n.name):
                die("node %s has a default route; the simulator never adds one" % n.name)
        ensure_fake_switches(st, paths, pod, actions)
        st.save()
        inv = inventory_path()
        text = pm.render_inventory(pod)
        old = open(inv).read() if os.path.exists(inv) else None
        if old != text:
            _write(inv, text)
            actions.append("wrote %s" % os.path.relpath(inv))
    for a in actions:
        log(a)
    log("pod up: %d DGX + %d storage nodes, %d change(s), %.2f s"
        % (pod.nodes, pod.storage, len(actions), time.time() - t0))
    return 0


def leftovers(st: State | None) -> list[str]:
    left = []
    for name in sorted(netns_list()):
        if is_sim_netns(name):
            left.append("netns %s" % name)
    for link in ip_json(["link", "show"]):
        n = link["ifname"]
        if n.startswith(pm.BRIDGE_PREFIX) or n.startswith(pm.VETH_PREFIX):
            left.append("link %s" % n)
    with open("/proc/self/mounts") as f:
        for line in f:
            mp = line.split()[1]
            if mp.startswith("/run/netns/" + pm.NODE_PREFIX) or mp.startswith("/run/netns/" + pm.STORAGE_PREFIX):
                left.append("mount %s" % mp)
    if st is not None:
        mnts, nets = set(), set()
        for name, m in st.members.items():
            for k in ("anchor", "sshd", "rpcbind", "ganesha"):
                if alive(m.get(k)):
                    left.append("process %d (%s of %s)" % (m[k]["pid"], k, name))
            if m.get("mntns"):
                mnts.add(m["mntns"])
            if m.get("netns_ino"):
                nets.add(m["netns_ino"])
        for r in procs_in_namespaces(mnts, nets, st.paths):
            left.append("process %d (inside a simulator namespace)" % r["pid"])
    if os.path.isdir("/etc/netns") and any(d.startswith(pm.NETNS_PREFIX) for d in os.listdir("/etc/netns")):
        left.append("/etc/netns/%s*" % pm.NETNS_PREFIX)
    return left


def cmd_down(args) -> int:
    require_root()
    t0 = time.time()
    paths = Paths(state_dir())
    problems = []
    with Lock(paths):
        st = State(paths)
        problems += stop_nodes(st, sorted(st.members), paths)
        if st.data.get("fakeswitch"):
            problems += ["fake switch server pid %d did not stop" % r["pid"]
                         for r in signal_recorded([st.data["fakeswitch"]])]
            st.data.pop("fakeswitch", None)
        foreign = foreign_namespaces(st)
        if foreign:
            # another pod is alive: its bridges and veths are left alone too
            print("podsim: error: " + describe_foreign(foreign), file=sys.stderr)
            return 1
        for name in sorted(netns_list()):  # empty leftovers (e.g. of a lost state)
            if is_sim_netns(name):
                run(["ip", "netns", "del", name], check=False)
        for link in ip_json(["link", "show"]):
            n = link["ifname"]
            if n.startswith(pm.VETH_PREFIX) and os.path.exists("/sys/class/net/" + n):
                run(["ip", "link", "del", n], check=False)
        for link in ip_json(["link", "show"]):
            n = link["ifname"]
            if n.startswith(pm.BRIDGE_PREFIX):
                run(["ip", "link", "del", n], check=False)
        left = leftovers(st)
        if not left and not problems:
            st.members.clear()
            if os.path.exists(paths.state):
                os.unlink(paths.state)
            shutil.rmtree(paths.nodes, ignore_errors=True)
            reset_fake_switches(paths)
            if args.purge:
                shutil.rmtree(paths.root, ignore_errors=True)
        else:
            st.save()
    if left or problems:
        for p in problems + left:
            print("podsim: left over: " + p, file=sys.stderr)
        return 1
    log("pod down: nothing left (%.2f s)%s" % (time.time() - t0, "; state purged" if args.purge else ""))
    return 0


def collect_status(paths: Paths) -> dict:
    st = State(paths)
    pod = pm.pod_shape(st.data["nodes"], st.data["storage"]) if st.data.get("nodes") else None
    nets = netns_list()
    out = {"up": pod is not None, "nodes": {}, "bridges": {}, "healthy": False}
    if pod is None:
        return out
    links = {link["ifname"]: link for link in ip_json(["link", "show"])}
    for fab in pm.FABRICS.values():
        out["bridges"][fab.bridge] = fab.bridge in links and "UP" in links[fab.bridge].get("flags", [])
    for node in pod.all_nodes:
        h = node_health(st, node, nets)
        if h["netns"]:
            problems = node_link_problems(node, links)[0]
            h["links"] = not problems
            if problems:
                h["link_problems"] = problems
        else:
            h["links"] = False
        m = st.members.get(node.name, {})
        out["nodes"][node.name] = {"role": node.role, "address": node.mgmt_address,
                                   "anchor_pid": (m.get("anchor") or {}).get("pid"), **h}
    out["healthy"] = all(out["bridges"].values()) and all(
        all(v for k, v in n.items() if isinstance(v, bool)) for n in out["nodes"].values())
    out["size"] = {"nodes": pod.nodes, "storage": pod.storage}
    return out


def cmd_status(args) -> int:
    s = collect_status(Paths(state_dir()))
    if args.json:
        print(json.dumps(s, indent=1, sort_keys=True))
    elif not s["up"]:
        print("pod is down")
    else:
        print("pod-in-a-box: %d DGX + %d storage nodes, %s" % (s["size"]["nodes"], s["size"]["storage"],
                                                            "healthy" if s["healthy"] else "NOT healthy"))
        bad_br = [b for b, ok in s["bridges"].items() if not ok]
        if bad_br:
            print("  bridges down/missing: %s" % ", ".join(bad_br))
        for name, n in s["nodes"].items():
            checks = " ".join("%s=%s" % (k, "ok" if v else "FAIL") for k, v in n.items() if isinstance(v, bool))
            print("  %-13s %-15s pid %-7s %s" % (name, n["address"], n["anchor_pid"], checks))
            if n.get("link_problems"):
                print("      links: %s" % ", ".join(n["link_problems"]))
    return 0 if s["healthy"] else 1


def anchor_of(node: str) -> int:
    st = State(Paths(state_dir()))
    m = st.members.get(node)
    if not m or not alive(m.get("anchor")):
        die("node %s is not running (podsim status)" % node)
    return m["anchor"]["pid"]


def cmd_exec(args) -> int:
    require_root()
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        cmd = ["/bin/bash", "-l"]
    argv = nsenter_cmd(anchor_of(args.node), cmd)
    os.execvp(argv[0], argv)
    return 127


def cmd_shape(args) -> int:
    require_root()
    paths = Paths(state_dir())
    with Lock(paths):
        st = State(paths)
        if not st.data.get("nodes"):
            die("the pod is down")
        pod = pm.pod_shape(st.data["nodes"], st.data["storage"])
        node = next((n for n in pod.all_nodes if n.name == args.node), None)
        if node is None:
            die("no node %s" % args.node)
        nic = next((n for n in node.nics if n.name == args.nic), None)
        if nic is None:
            die("%s has no NIC %s (it has %s)" % (node.name, args.nic, ", ".join(n.name for n in node.nics)))
        key = "%s/%s" % (node.name, nic.name)
        apply_shape(node, nic, None if args.clear else args.rate)
        if args.clear:
            st.data.setdefault("shapes", {}).pop(key, None)
        else:
            st.data.setdefault("shapes", {})[key] = args.rate
        st.save()
    log("%s: %s" % (key, "shaping cleared" if args.clear else "shaped to %s (tbf, both directions)" % args.rate))
    return 0


SWITCH_FAULTS = {"reject": str, "ignore": str, "drop_after_lines": int, "drop_times": int,
                 "drop_after_commit": int, "delay": float,
                 # operational faults (sim/fakeswitch/eos_show.py): ports, comma-separated
                 "port_down": "ports", "port_speed": "port:gbps", "swap": "two ports", "errors_rising": "ports",
                 "discards_rising": "ports", "pause_rising": "ports"}
_PORT = r"Ethernet\d+(?:/\d+)*"
_PORT_FAULT = {"ports": re.compile(r"^%s(,%s)*$" % (_PORT, _PORT)),
               "port:gbps": re.compile(r"^%s:\d+(,%s:\d+)*$" % (_PORT, _PORT)),
               "two ports": re.compile(r"^%s,%s$" % (_PORT, _PORT))}


def parse_switch_faults(specs: list[str]) -> dict:
    """``--fault KEY=VALUE`` items -> the fake switch's fault dict (sim/fakeswitch/cli.py), checked."""
    faults: dict = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or key not in SWITCH_FAULTS:
            raise ValueError("bad --fault %r: use KEY=VALUE with KEY one of %s" % (spec, ", ".join(SWITCH_FAULTS)))
        kind = SWITCH_FAULTS[key]
        if isinstance(kind, str):  # a port list
            if not _PORT_FAULT[kind].match(value):
                raise ValueError("bad --fault %s=%r: expected %s, e.g. %s" % (
                    key, value, kind, {"ports": "Ethernet1/1,Ethernet2/1", "port:gbps": "Ethernet1/1:40",
                                       "two ports": "Ethernet1/1,Ethernet2/1"}[kind]))
            faults[key] = value
            continue
        try:
            faults[key] = SWITCH_FAULTS[key](value)
            if SWITCH_FAULTS[key] is str:
                re.compile(value)
            elif faults[key] < 0:
                raise ValueError("negative")
        except (ValueError, re.error) as e:
            raise ValueError("bad --fault %s=%r: %s" % (key, value, e)) from None
    return faults


def cmd_switch(args) -> int:
    """Work on one fake switch's state file (read at every line the server handles): show its running
    config, set or clear faults, or type CLI lines into it as a person on its console would (the same CLI
    code the SSH server runs, so the same grammar and errors)."""
    from fakeswitch.cli import Device
    from fakeswitch.server import load_state, state_path, write_state

    paths = Paths(state_dir())
    path = state_path(os.path.join(paths.root, "switches"), args.switch)
    if args.switch not in pm.SWITCHES or not os.path.exists(path):
        die("no fake switch %s (the pod's switches: %s; `sim/podsim up` starts them)" % (
            args.switch, ", ".join(pm.SWITCHES)))
    try:
        faults = parse_switch_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    dev = Device(load_state(path), lambda state: write_state(path, state))
    if args.clear_faults or faults:
        dev.state["faults"] = {} if args.clear_faults else dict(dev.state.get("faults") or {})
        dev.state["faults"].update(faults)
        dev.save()
        log("%s: faults %s" % (args.switch, json.dumps(dev.state["faults"], sort_keys=True)))
    bad = 0
    if args.cli:
        session = dev.session()
        for line in args.cli:
            dev.state = load_state(path)
            prompt = session.prompt()
            out, action = session.handle(line)
            print(prompt + line)
            if out:
                print(out)
            if re.search(r"^% |^Error:|command not found", out or "", re.M):
                bad += 1
            if action in ("close", "drop"):
                break
    if args.show:
        print(dev.session().handle({"cumulus": "nv config show -o commands"}.get(
            dev.platform, "show running-config"))[0])
    return 1 if bad else 0


def cmd_gpu(args) -> int:
    """Inject or clear GPU faults in a simulated DGX (the stand-ins read them at every call; see
    sim/standins/podsim_gpu.py for the keys)."""
    path = os.path.join(Paths(state_dir()).node(args.node), "etc.upper", "podsim", "hardware.json")
    if not os.path.exists(path):
        die("no simulated DGX %s (its state %s is missing; `sim/podsim up` first)" % (args.node, path))
    try:
        faults = podsim_gpu.parse_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    with open(path) as f:
        state = json.load(f)
    if args.clear or faults:
        state["gpu_faults"] = {} if args.clear else dict(state.get("gpu_faults") or {})
        state["gpu_faults"].update(faults)
        if args.clear:
            state.pop("gpu_fault_counters", None)
        _write(path, json.dumps(state, indent=1, sort_keys=True) + "\n")
        podsim_gpu.write_node_files(os.path.join(os.path.dirname(path), "sysfs"), state)
    print(json.dumps(state.get("gpu_faults") or {}, sort_keys=True))
    return 0


def cmd_fault(args) -> int:
    """The fault catalogue (sim/faults.py: what each fault does, how it is cleared, what should find it)."""
    import faults
    if args.action != "list":
        require_root()
    return faults.main(args)


def cmd_inventory(args) -> int:
    try:
        sys.stdout.write(pm.render_inventory(pm.pod_shape(args.nodes, args.storage)))
    except ValueError as e:
        die(str(e), 2)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="podsim", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("up", help="build, repair or resize the pod, then write the inventory")
    p.add_argument("--nodes", type=int, default=pm.DEFAULT_NODES)
    p.add_argument("--storage", type=int, default=pm.DEFAULT_STORAGE)
    p.add_argument("--shape-proportional", action="store_true",
                   help="shape data links 10 Gbit/s (DGX 100G ports) vs 4 Gbit/s (storage 40G ports)")
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
    p = sub.add_parser("fault", help="the fault drill's catalogue: list, inject or clear a fault (sim/faults.py)")
    p.add_argument("action", choices=("list", "inject", "clear"))
    p.add_argument("name", nargs="?", help="a fault from `fault list` (clear: or all)")
    p.add_argument("node", nargs="?", help="the node (default: the fault's own)")
    p.set_defaults(func=cmd_fault)
    p = sub.add_parser("inventory", help="print the inventory for a size (no root needed)")
    p.add_argument("--nodes", type=int, default=pm.DEFAULT_NODES)
    p.add_argument("--storage", type=int, default=pm.DEFAULT_STORAGE)
    p.set_defaults(func=cmd_inventory)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except RuntimeError as e:
        die(str(e))
    return 1


if __name__ == "__main__":
    sys.exit(main())
