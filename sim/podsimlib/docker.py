"""A Docker engine in every simulated DGX (`podsim up --engine docker`), as DGX OS runs dockerd on a real DGX.

One dockerd per DGX node, started inside the node's network + mount + UTS namespaces (nsenter of its
anchor), so everything it keeps at its default paths is the node's own: the API socket
/run/docker.sock, the exec-root /run/docker and its managed containerd live on the node's private /run
tmpfs, and the node's `docker` CLI (a login, Ansible) talks to its own daemon with no option. Only the
data-root is on disk: <state>/docker/<node> (kept across `down`, so the next `up` need not load the image
again). The daemon touches no host network: --bridge=none, --iptables=false, --ip6tables=false (the MPI
containers use --network=host, the node's namespace). The simulator's image (sim/image/build.sh, in the
host's podman store) is saved once to <state>/docker/<image id>.tar and `docker load`ed into every node
that lacks it, all nodes at once. docs/docker.md has the measurements."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import time

import podmodel as pm

from .common import Paths, log, run
from .containers import remove_containers
from .procs import alive, nsenter_cmd, record, signal_recorded

ENGINES = ("podman", "docker")
IMAGE = "localhost/dgxpod-sim-ngc:latest"
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0  # dockerd stops its containers (--shutdown-timeout 2) and its containerd on TERM


def docker_root(paths: Paths) -> str:
    return os.path.join(paths.root, "docker")


def data_root(paths: Paths, node: str) -> str:
    return os.path.join(docker_root(paths), node)


def dockerd_argv(data_dir: str) -> list[str]:
    """dockerd of one node: its own data-root; exec-root, pid file and socket at their defaults, which are
    on the node's private /run; no bridge, no iptables/ip6tables rules (the host network is not touched)."""
    return ["dockerd", "--data-root", data_dir, "--iptables=false", "--ip6tables=false", "--bridge=none",
            "--shutdown-timeout", "2", "--log-level", "warn"]


def engine_of(st_data: dict, wanted: str | None) -> str:
    """The pod's engine: the one asked for, else the one recorded, else podman."""
    engine = wanted or st_data.get("engine") or "podman"
    if engine not in ENGINES:
        raise ValueError("unknown engine %r (one of %s)" % (engine, ", ".join(ENGINES)))
    return engine


def start_dockerd(paths: Paths, node: str, anchor_pid: int) -> dict | None:
    """Start dockerd inside a running node (a stale pid file of a dead one is removed first)."""
    os.makedirs(data_root(paths, node), exist_ok=True)
    run(nsenter_cmd(anchor_pid, ["rm", "-f", "/run/docker.pid"]), check=False)
    logf = open(os.path.join(paths.node(node), "dockerd.log"), "a")
    # nsenter execs dockerd in place (no fork for -n -m -u), so the child's PID is dockerd's
    p = subprocess.Popen(nsenter_cmd(anchor_pid, dockerd_argv(data_root(paths, node))), stdin=subprocess.DEVNULL,
                         stdout=logf, stderr=logf, start_new_session=True, close_fds=True)
    time.sleep(0.1)
    return record(p.pid)


def wait_ready(anchors: dict[str, int], timeout: float = READY_TIMEOUT) -> list[str]:
    """Wait until every node's `docker version` answers (its daemon is up); returns the nodes that never did."""
    pending = dict(anchors)
    deadline = time.time() + timeout
    while pending and time.time() < deadline:
        for name, pid in list(pending.items()):
            p = subprocess.run(nsenter_cmd(pid, ["docker", "version", "--format", "{{.Server.Version}}"]),
                               capture_output=True, text=True)
            if p.returncode == 0:
                del pending[name]
        if pending:
            time.sleep(0.2)
    return sorted(pending)


def image_id() -> str:
    """ID of the simulator's image in the host's podman store (sim/image/build.sh made it)."""
    p = run(["podman", "image", "inspect", "--format", "{{.Id}}", IMAGE], check=False)
    if p.returncode != 0:
        raise RuntimeError("%s is not in the host's podman store: run sim/image/build.sh (scripts/setup.sh)" % IMAGE)
    return p.stdout.strip()


def image_archive(paths: Paths) -> str:
    """`podman save` of the image once per image ID (older archives removed)."""
    iid = image_id()
    d = docker_root(paths)
    os.makedirs(d, exist_ok=True)
    tar = os.path.join(d, "sim-ngc-%s.tar" % iid[:16])
    if not os.path.exists(tar):
        for old in glob.glob(os.path.join(d, "sim-ngc-*.tar")):
            os.unlink(old)
        t0 = time.time()
        run(["podman", "save", "--format", "docker-archive", "-o", tar + ".part", IMAGE])
        os.replace(tar + ".part", tar)
        log("saved %s to %s (%.1f s)" % (IMAGE, os.path.relpath(tar), time.time() - t0))
    return tar


def nodes_without_image(anchors: dict[str, int]) -> list[str]:
    return sorted(name for name, pid in anchors.items()
                  if subprocess.run(nsenter_cmd(pid, ["docker", "image", "inspect", IMAGE]),
                                    capture_output=True).returncode != 0)


def load_image(paths: Paths, anchors: dict[str, int]) -> list[str]:
    """`docker load` the image in every given node at once; returns the failures."""
    tar = image_archive(paths)
    t0 = time.time()
    procs = {name: subprocess.Popen(nsenter_cmd(pid, ["docker", "load", "-q", "-i", tar]), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, pid in anchors.items()}
    bad = []
    for name, p in procs.items():
        out, err = p.communicate()
        if p.returncode != 0:
            bad.append("%s: docker load failed (rc %d): %s" % (name, p.returncode, (err or out).strip()[-300:]))
    log("loaded %s into %d node(s) in %.1f s" % (IMAGE, len(procs), time.time() - t0))
    return bad


def podman_containers(paths: Paths, node: str) -> bool:
    """Whether the node's podman store (sim/podsimlib/containers.py) holds any container."""
    try:
        with open(os.path.join(paths.node(node), "containers", "overlay-containers", "containers.json")) as f:
            return f.read().strip() not in ("", "[]")
    except OSError:
        return False


def stop_dockerds(members: dict[str, dict]) -> list[str]:
    """Remove every container of each node's dockerd (all nodes at once: the data-root is kept across
    `down`, and a kept `--restart unless-stopped` container would start again with the next dockerd),
    then TERM the dockerds (each stops its containerd). Returns what survived."""
    live = {name: m for name, m in members.items() if alive(m.get("dockerd")) and alive(m.get("anchor"))}
    procs = [subprocess.Popen(nsenter_cmd(m["anchor"]["pid"], ["sh", "-c", "docker ps -aq | xargs -r docker rm -f"]),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for m in live.values()]
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
    recs = [m["dockerd"] for m in members.values() if isinstance(m.get("dockerd"), dict)]
    left = signal_recorded(recs, timeout=STOP_TIMEOUT)
    for m in members.values():
        if isinstance(m.get("dockerd"), dict) and m["dockerd"] not in left:
            m.pop("dockerd")
    return ["dockerd pid %d" % r["pid"] for r in left]


def ensure_engines(st, paths: Paths, pod: pm.Pod, engine: str, rebuilt: set[str], actions: list[str]) -> None:
    """docker: a running dockerd with the simulator's image in every DGX; podman: no dockerd left running."""
    dgx = {n.name: st.members[n.name] for n in pod.dgx}
    if engine != "docker":
        running = {k: m for k, m in dgx.items() if alive(m.get("dockerd"))}
        left = stop_dockerds(dgx)
        if left:
            raise RuntimeError("could not stop %s" % ", ".join(left))
        actions += ["stopped dockerd on %s" % k for k in sorted(running)]
        return
    if not shutil.which("dockerd") or not shutil.which("docker"):
        raise RuntimeError("--engine docker needs Debian's docker.io (dockerd, docker): run scripts/setup.sh")
    if st.data.get("engine", "podman") != "docker":
        # a podman pod switched to docker: its MPI containers hold port 2222 on the node's network
        gone = [k for k in dgx if podman_containers(paths, k)]
        for problem in remove_containers({k: dgx[k]["anchor"] for k in gone}, paths):
            raise RuntimeError(problem)
        actions += ["removed the podman containers of %s" % k for k in gone]
    t0 = time.time()
    started = []
    for name, m in dgx.items():
        if not alive(m.get("dockerd")):
            m["dockerd"] = start_dockerd(paths, name, m["anchor"]["pid"])
            started.append(name)
            again = name not in rebuilt and st.data.get("engine") == "docker"  # it ran and died
            actions.append("%s dockerd on %s" % ("restarted" if again else "started", name))
    st.save()
    anchors = {name: m["anchor"]["pid"] for name, m in dgx.items()}
    late = wait_ready(anchors)
    if late:
        raise RuntimeError("dockerd not answering after %d s on %s (see %s/nodes/<node>/dockerd.log)"
                           % (READY_TIMEOUT, ", ".join(late), paths.root))
    if started:
        log("dockerd up in %d node(s) in %.1f s" % (len(started), time.time() - t0))
    need = nodes_without_image(anchors)
    if need:
        bad = load_image(paths, {k: anchors[k] for k in need})
        if bad:
            raise RuntimeError("; ".join(bad))
        actions += ["loaded %s into %s" % (IMAGE, name) for name in need]


def engines_step(up) -> None:
    """The MPI containers' engine: podman (default), or with --engine docker a dockerd + the image in every DGX."""
    engine = engine_of(up.st.data, up.args.engine)
    ensure_engines(up.st, up.paths, up.pod, engine, {n.name for n in up.rebuild}, up.actions)
    up.st.data["engine"] = engine
    up.st.save()
