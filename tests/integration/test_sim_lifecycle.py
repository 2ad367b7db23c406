"""Pod-in-a-box lifecycle: up -> status -> ssh (pinned keys) -> jumbo frames -> NFS -> idempotent up ->
repair -> resize -> down, and nothing of the simulator is left.  Needs root (CI runs as root).

If a pod is already up when this test starts, it is torn down for the test and brought back up with
the same size afterwards (node-local state such as converged /etc files is reset by that).
"""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PODSIM = os.path.join(ROOT, "sim", "podsim")
STATE = os.environ.get("PODSIM_STATE", os.path.join(ROOT, "sim", ".state"))

import podmodel as pm  # noqa: E402

pytestmark = [
    pytest.mark.integration,
    pytest.mark.long,  # builds, resizes and removes pods of its own: `make test-long`
    pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root"),
    pytest.mark.skipif(not shutil.which("ip") or not os.path.exists("/usr/sbin/sshd"),
                       reason="simulator packages missing (scripts/setup.sh)"),
]


def podsim(*args, check=True, env=None):
    p = subprocess.run([PODSIM, *args], capture_output=True, text=True, env=env, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError("podsim %s failed (%d):\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def in_node(node, *cmd, check=True):
    p = subprocess.run([PODSIM, "exec", node, "--", *cmd], capture_output=True, text=True, timeout=60)
    if check and p.returncode != 0:
        raise AssertionError("%s: %s failed (%d): %s%s" % (node, " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def ssh(addr, *cmd):
    return subprocess.run(
        ["ssh", "-i", os.path.join(STATE, "id_ed25519"), "-o", "IdentitiesOnly=yes",
         "-o", "UserKnownHostsFile=" + os.path.join(STATE, "known_hosts"), "-o", "StrictHostKeyChecking=yes",
         "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "root@" + addr, *cmd],
        capture_output=True, text=True, timeout=60)


def state():
    with open(os.path.join(STATE, "state.json")) as f:
        return json.load(f)


def pids(st):
    return {(n, k): m[k]["pid"] for n, m in st["members"].items() for k in ("anchor", "sshd", "rpcbind", "ganesha")
            if m.get(k)}


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rindex(")") + 2] not in "ZX"


def leftovers(recorded_pids, ns_inodes):
    left = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    left += [line for line in netns.splitlines() if line.startswith(("sim-dgx", "sim-isilon"))]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    left += [w.split(":")[1].strip() for w in links.splitlines()
             if w.split(":")[1].strip().split("@")[0].startswith((pm.BRIDGE_PREFIX, pm.VETH_PREFIX))]
    with open("/proc/mounts") as f:
        left += [line for line in f if "/run/netns/sim-" in line or "podsim-" in line.split()[0]]
    left += ["pid %d" % p for p in recorded_pids if alive(p)]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat("/proc/%s/ns/mnt" % d).st_ino in ns_inodes:
                    left.append("pid %s inside a node namespace" % d)
            except OSError:
                pass
    return left


@pytest.fixture(scope="module")
def fresh_pod(tmp_path_factory):
    """Start from no pod (remember one that was up), restore it afterwards."""
    before = None
    if os.path.exists(os.path.join(STATE, "state.json")) and state().get("members"):
        before = (state()["nodes"], state()["storage"])
        podsim("down")
    env = dict(os.environ, PODSIM_INVENTORY=str(tmp_path_factory.mktemp("inv") / "hosts.yml"))
    yield env
    podsim("down", check=False)
    if before:
        podsim("up", "--nodes", str(before[0]), "--storage", str(before[1]))


def test_lifecycle(fresh_pod):
    env = fresh_pod
    etc_before = {f: open(os.path.join("/etc", f)).read() for f in ("hostname", "hosts") if os.path.exists("/etc/" + f)}

    t0 = time.time()
    out = podsim("up", env=env).stdout
    t_up = time.time() - t0
    assert "pod up: 4 DGX + 2 storage nodes" in out
    assert t_up < 30, "up took %.1f s" % t_up
    with open(env["PODSIM_INVENTORY"]) as f:
        assert f.read() == pm.render_inventory(pm.pod_shape(4, 2))

    # status: every node healthy
    st = json.loads(podsim("status", "--json").stdout)
    assert st["healthy"], st
    assert sorted(st["nodes"]) == ["sim-dgx1", "sim-dgx2", "sim-dgx3", "sim-dgx4", "sim-isilon1", "sim-isilon2"]
    assert all(n["ganesha"] and n["rpcbind"] for n in st["nodes"].values() if n["role"] == "storage")
    pod = pm.pod_shape(4, 2)

    # ssh into every node with the controller key and the pinned host keys
    for node in pod.all_nodes:
        p = ssh(node.mgmt_address, "hostname; cat /etc/podsim/node.json; ip route show default")
        assert p.returncode == 0, (node.name, p.stderr)
        lines = p.stdout.splitlines()
        assert lines[0] == node.name
        assert json.loads("\n".join(lines[1:]))["simulated"] is True
        assert "default" not in p.stdout, "%s has a default route" % node.name

    # Ansible reaches every DGX and storage node through the committed inventory (pinned host keys)
    ansible = os.path.join(ROOT, ".venv", "bin", "ansible")
    if os.path.exists(ansible):
        p = subprocess.run([ansible, "-i", os.path.join(ROOT, "inventories", "sim"), "dgx:storage", "-m", "ping"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="True"))
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.count("SUCCESS") == 6, p.stdout

    # jumbo frames end to end on every data fabric, 1500 on mgmt
    d1, d2 = pod.dgx[0], pod.dgx[1]
    for nic in d2.nics:
        if nic.fabric != "mgmt":
            in_node(d1.name, "ping", "-M", "do", "-s", "8972", "-c", "1", "-W", "2", nic.address)
    in_node(d1.name, "ping", "-M", "do", "-s", "1472", "-c", "1", "-W", "2", d2.mgmt_address)
    assert in_node(d1.name, "ping", "-M", "do", "-s", "8972", "-c", "1", "-W", "1", d2.mgmt_address,
                   check=False).returncode != 0
    # nothing outside the pod is routable from a node (a route lookup only: nothing is sent)
    for node in (d1, pod.storage_nodes[0]):
        p = in_node(node.name, "ip", "route", "get", "203.0.113.1", check=False)
        assert p.returncode != 0 and "unreachable" in p.stderr, (node.name, p.stdout)

    # NFS (nfs-ganesha) reachable from a DGX node on every storage address
    for s in pod.storage_nodes:
        for nic in s.nics:
            in_node(d1.name, "/usr/bin/python3", "-c",
                    "import socket; socket.create_connection(('%s', 2049), timeout=3)" % nic.address)
    rpc = in_node(pod.storage_nodes[0].name, "rpcinfo", "-p").stdout
    assert "nfs" in rpc and "mountd" in rpc and "nlockmgr" not in rpc

    # a real NFS mount through the FUSE NFS client stand-in: written on dgx1 via isilon1 (data-66),
    # read on dgx2 via isilon2 (data-5, NFSv4): one namespace, like Isilon's
    s1, s2 = pod.storage_nodes
    data66 = next(n.address for n in s1.nics if n.fabric == "data-66")
    data5 = next(n.address for n in s2.nics if n.fabric == "data-5")
    name = "lifecycle-%d.txt" % os.getpid()
    in_node(d1.name, "sh", "-c", "mkdir -p /mnt/isilon1 && mount -t fuse.podsim-nfs nfs://%s/ifs /mnt/isilon1 && "
            "echo written-on-dgx1 > /mnt/isilon1/%s" % (data66, name))
    in_node(d2.name, "sh", "-c", "mkdir -p /mnt/isilon1 && mount -t fuse 'podsim-nfs#nfs://%s/ifs' -o vers=4 "
            "/mnt/isilon1" % data5)
    assert in_node(d2.name, "cat", "/mnt/isilon1/" + name).stdout == "written-on-dgx1\n"
    mounts = in_node(d2.name, "cat", "/proc/mounts").stdout
    assert "nfs://%s/ifs /mnt/isilon1 fuse.podsim-nfs rw" % data5 in mounts
    assert os.path.exists(os.path.join(STATE, "ifs", name))
    assert "/mnt/isilon1" not in open("/proc/mounts").read(), "a node's mount leaked to the host"
    in_node(d1.name, "rm", "/mnt/isilon1/" + name)
    assert in_node(d2.name, "ls", "/mnt/isilon1").stdout.split().count(name) == 0
    in_node(d2.name, "umount", "/mnt/isilon1")   # d1's mount is left for `down` to clean

    # per-node /etc: a file written in one node is not seen by another node nor by the host
    in_node(d1.name, "sh", "-c", "echo x > /etc/podsim-lifecycle-test")
    assert in_node(d2.name, "test", "-e", "/etc/podsim-lifecycle-test", check=False).returncode != 0
    assert not os.path.exists("/etc/podsim-lifecycle-test")

    # hardware stand-ins inside DGX nodes only
    gpus = in_node(d1.name, "nvidia-smi", "-L").stdout.splitlines()
    assert len(gpus) == 8 and "Tesla V100-SXM2-32GB" in gpus[0]
    assert in_node(d1.name, "ibdev2netdev").stdout.splitlines()[0] == "mlx5_0 port 1 ==> enp5s0 (Up)"
    in_node(d1.name, "mlnx_qos", "-i", "enp5s0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0")
    assert "Priority trust state: dscp" in in_node(d1.name, "mlnx_qos", "-i", "enp5s0").stdout
    assert "Priority trust state: pcp" in in_node(d2.name, "mlnx_qos", "-i", "enp5s0").stdout
    assert not os.path.exists("/usr/local/sbin/nvidia-smi")
    assert in_node(pod.storage_nodes[0].name, "sh", "-c", "command -v nvidia-smi", check=False).returncode != 0

    # a second up changes nothing
    before = pids(state())
    out = podsim("up", env=env).stdout
    assert "0 change(s)" in out, out
    assert pids(state()) == before

    # up repairs: a dead sshd is restarted, a downed link is brought back
    os.kill(before[("sim-dgx3", "sshd")], signal.SIGKILL)
    in_node("sim-dgx4", "ip", "link", "set", "enp12s0", "down")
    time.sleep(0.2)
    assert podsim("status", check=False).returncode != 0
    out = podsim("up", env=env).stdout
    assert "restarted sshd on sim-dgx3" in out and "repaired sim-dgx4 links" in out
    assert podsim("status", check=False).returncode == 0
    assert ssh("198.18.67.13", "true").returncode == 0

    # tc shaping hook
    podsim("shape", "sim-dgx1", "enp5s0", "--rate", "500mbit")
    assert "tbf" in subprocess.run(["tc", "qdisc", "show", "dev", "psv-d1-5"], capture_output=True, text=True).stdout
    podsim("shape", "sim-dgx1", "enp5s0", "--clear")
    assert "tbf" not in subprocess.run(["tc", "qdisc", "show", "dev", "psv-d1-5"],
                                       capture_output=True, text=True).stdout

    # resize: add a node, then remove it again
    out = podsim("up", "--nodes", "5", env=env).stdout
    assert "created sim-dgx5" in out
    assert ssh("198.18.67.15", "hostname").stdout.strip() == "sim-dgx5"
    out = podsim("up", env=env).stdout
    assert "removed sim-dgx5" in out
    assert "sim-dgx5" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout

    # a stray process started inside a node (like an iperf3 server) does not survive down
    subprocess.Popen([PODSIM, "exec", "sim-dgx2", "--", "sleep", "600"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    st = state()
    recorded = list(pids(st).values())
    ns = {m["mntns"] for m in st["members"].values()}

    t0 = time.time()
    p = podsim("down", check=False)
    t_down = time.time() - t0
    assert p.returncode == 0, p.stdout + p.stderr
    assert t_down < 30
    assert leftovers(recorded, ns) == []
    assert not os.path.exists(os.path.join(STATE, "state.json"))
    assert not os.path.exists("/etc/netns")
    for f, text in etc_before.items():
        assert open(os.path.join("/etc", f)).read() == text
    assert podsim("status", check=False).returncode != 0
    print("\nup %.2f s, down %.2f s (4 DGX + 2 storage)" % (t_up, t_down))
