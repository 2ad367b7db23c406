"""The files the simulator owns inside a node (its overlay upper layers over /etc and /root): hostname,
hosts, sshd config and pinned host key, node identity, the hardware stand-ins' state, container and NFS
server configs, root's authorized_keys; and the controller's keys and known_hosts."""

from __future__ import annotations

import json
import os
import stat
import sys

import podmodel as pm
import podsim_gpu
import podsim_hw
import podsim_node

from .common import REPO, SIM_DIR, Paths, run, write_file
from .containers import container_confs
from .slurm import PRIVATE_DIRS, PRIVATE_LIST
from .storage import ganesha_conf


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


def hosts_file(name: str) -> str:
    return ("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "ff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n" % name)


def nfs_python() -> str:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


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


def private_dirs(nd: str) -> None:
    """The node's own Slurm/munge directories (slurm.PRIVATE_DIRS the host has; empty, the host's owner and mode),
    listed in NODEDIR/private-dirs for sim/node-init.sh to bind over the host's."""
    have = []
    for d in PRIVATE_DIRS:
        if not os.path.isdir(d):
            continue
        p = os.path.join(nd, "private" + d)
        if not os.path.isdir(p):
            os.makedirs(p)
            st = os.stat(d)
            os.chown(p, st.st_uid, st.st_gid)
            os.chmod(p, stat.S_IMODE(st.st_mode))
        have.append(d)
    write_file(os.path.join(nd, PRIVATE_LIST), "".join(d + "\n" for d in have))


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
    write_file(os.path.join(etc, "hostname"), node.name + "\n", only_if_missing=True)
    write_file(os.path.join(etc, "hosts"), hosts_file(node.name), only_if_missing=True)
    # ssh host key: generated once per node and kept (the controller pins it in known_hosts)
    for f in os.listdir("/etc/ssh"):
        if f.startswith("ssh_host_") and not f.startswith("ssh_host_ed25519_key"):
            _whiteout(os.path.join(etc, "ssh", f))
    for suffix, mode in (("", 0o600), (".pub", 0o644)):
        with open(paths.hostkey(node.name) + suffix) as f:
            write_file(os.path.join(etc, "ssh", "ssh_host_ed25519_key" + suffix), f.read(), mode)
    write_file(os.path.join(etc, "podsim", "sshd_config"), SSHD_CONFIG)
    ident = {"simulated": True, "simulator": "podsim", "node": node.name, "role": node.role,
             "nics": [{"name": n.name, "fabric": n.fabric, "address": n.address} for n in node.nics]}
    write_file(os.path.join(etc, "podsim", "node.json"), json.dumps(ident, indent=1) + "\n")
    # for the FUSE NFS client stand-in (sim/standins/podsim-nfs): the Python that has libnfs + fusepy
    write_file(os.path.join(etc, "podsim", "env"), "PODSIM_PYTHON=%s\nPODSIM_SIM=%s\n" % (nfs_python(), SIM_DIR))
    if node.role == "dgx":
        write_file(os.path.join(etc, "podsim", "hardware.json"),
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
        # stand-in proc/meminfo, proc/swaps, proc/stat for the node health module (sim/standins/podsim_node.py)
        podsim_node.write_node_files(os.path.join(etc, "podsim", "sysfs"), hw_state)
        graphroot = os.path.join(nd, "containers")
        os.makedirs(graphroot, mode=0o700, exist_ok=True)
        for fname, text in container_confs(graphroot).items():
            write_file(os.path.join(etc, "containers", fname), text)
        private_dirs(nd)
    else:
        write_file(os.path.join(etc, "podsim", "ganesha.conf"), ganesha_conf(paths.ifs))
    # /root/.ssh: the node's own (opaque: the host's /root/.ssh is not visible in nodes)
    ssh_dir = os.path.join(root, ".ssh")
    if not os.path.isdir(ssh_dir):
        _opaque_dir(ssh_dir, 0o700)
    ak = os.path.join(ssh_dir, "authorized_keys")
    existing = open(ak).read() if os.path.exists(ak) else ""
    if pubkey.strip() not in existing:
        write_file(ak, existing + pubkey.strip() + "\n", 0o600)


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
    write_file(paths.known_hosts, "".join(lines), 0o644)
