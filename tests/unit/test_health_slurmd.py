"""dgxpod-health run by a real slurmd as its HealthCheckProgram (outside the simulator): munged + slurmctld + slurmd on
this machine with a slurm.conf written by module_utils/slurm/conf.py whose HealthCheck lines name the zipapp the Slurm
role builds (through a two-line wrapper that points it at this test's configuration and slurm.conf - slurmd starts
the program with a bare environment, no arguments). This machine has no GPUs, so the program's GPU reading fails:
slurmd's periodic run drains the node with ``dgxpod-health: <that problem>``; told to ignore those checks it finds the
node healthy and resumes it; an administrator's drain is left as it is, healthy or not.

Needs root and Debian's slurm-wlm + munge, as tests/unit/test_slurm_daemons.py (skipped otherwise, with the reason).
Everything runs in a temporary directory on free ports with its own munge socket and key; every daemon is stopped."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import conf as slurm_conf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import parse as slurm_parse

from inventory_util import ROOT

NEEDED = ("munged", "slurmctld", "slurmd", "scontrol")
MISSING = [b for b in NEEDED if not shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")]
PYTHON = "/usr/bin/python3"
pytestmark = pytest.mark.skipif(
    bool(MISSING) or os.geteuid() != 0 or not os.path.exists(PYTHON),
    reason="needs root, %s and slurm-wlm + munge (apt-get install slurm-wlm munge); missing: %s"
    % (PYTHON, ", ".join(MISSING) or "root or python3"))
NODE = "DGX1-1"
INTERVAL = 2  # HealthCheckInterval: slurmctld asks slurmd to run the program about this often


def wait_for(what, predicate, timeout=90.0):
    """Poll ``predicate`` until it returns something true (the daemons act asynchronously); fail naming ``what``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out waiting for %s" % what)


def run(cmd, env, check=True, timeout=60):
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, "%s: rc %d\n%s%s" % (" ".join(cmd), res.returncode, res.stdout, res.stderr)
    return res


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def exited(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split()[2] == "Z"
    except OSError:
        return True


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("slurmhc"))
    ports = free_ports(2)
    for sub in ("state", "spool", "log", "run", "dev", "munge", "health"):
        os.makedirs(os.path.join(d, sub))
    for i in range(2):  # stand-in GPU device files, as roles/slurm makes where there are none
        os.mknod(os.path.join(d, "dev", "nvidia%d" % i), 0o600 | 0o020000, os.makedev(195, i))
    sock, key = os.path.join(d, "munge", "munge.socket"), os.path.join(d, "munge", "munge.key")
    with open(key, "wb") as fh:
        fh.write(os.urandom(128))
    os.chmod(key, 0o600)
    os.chmod(os.path.join(d, "munge"), 0o700)
    conf = os.path.join(d, "slurm.conf")
    env = dict(os.environ, SLURM_CONF=conf, PATH="/usr/sbin:/usr/bin:" + os.environ.get("PATH", ""))
    app = os.path.join(d, "dgxpod-health")
    run([sys.executable, os.path.join(ROOT, "roles", "slurm", "files", "dgxpod_health_build.py"), "--root", ROOT,
         "--out", app, "--python", PYTHON], env)
    config = os.path.join(d, "health.json")
    write_config(config, d, ignore=[])
    wrapper = os.path.join(d, "hc")
    with open(wrapper, "w") as fh:  # slurmd runs HealthCheckProgram bare: no arguments, no SLURM_CONF
        fh.write("#!/bin/sh\nSLURM_CONF=%s exec %s --config %s\n" % (conf, app, config))
    os.chmod(wrapper, 0o755)
    hw = slurm_parse.parse_slurmd_c(run(["slurmd", "-C"], env).stdout)
    plan = slurm_conf.slurm_plan(
        {"controller": socket.gethostname(), "partition": "dgx", "state_dir": d + "/state", "spool_dir": d + "/spool",
         "log_dir": d + "/log", "run_dir": d + "/run", "user": "root", "slurmctld_port": ports[0],
         "slurmd_port": ports[1], "munge_socket": sock, "health_program": wrapper, "health_interval": INTERVAL,
         "health_node_state": "ANY"},
        "pod-in-a-box", {"name": socket.gethostname(), "address": "127.0.0.1"},
        [{"name": NODE, "address": "127.0.0.1", "gpus": 2, "gpu_device_prefix": d + "/dev/nvidia"}], {NODE: hw})
    with open(conf, "w") as fh:
        fh.write(slurm_conf.render_slurm_conf(plan))
    with open(os.path.join(d, "gres.conf"), "w") as fh:
        fh.write(slurm_conf.render_gres_conf(plan))
    pids = []
    try:
        run(["munged", "--force", "--socket", sock, "--key-file", key, "--pid-file", d + "/munge/munged.pid",
             "--log-file", d + "/log/munged.log", "--seed-file", d + "/munge/seed"], env)
        pids.append(d + "/munge/munged.pid")
        run(["slurmctld"], env)
        pids.append(d + "/run/slurmctld.pid")
        wait_for("slurmctld to answer", lambda: run(["scontrol", "ping"], env, check=False).stdout.count("UP"), 30)
        run(["slurmd", "-N", NODE], env)
        pids.append(d + "/run/slurmd.pid")
        yield {"dir": d, "env": env, "config": config, "outcome": os.path.join(d, "health", "health-%s.json" % NODE)}
    finally:
        for pidfile in reversed(pids):
            try:
                with open(pidfile) as fh:
                    pid = int(fh.read().strip())
                os.kill(pid, signal.SIGTERM)
                wait_for("pid %d to exit" % pid, lambda pid=pid: exited(pid), timeout=20)
            except (OSError, ValueError):
                pass


def write_config(path, d, ignore):
    """The program's configuration as roles/slurm writes it (tasks/health.yml), for this test's node and state."""
    with open(path + ".tmp", "w") as fh:
        json.dump({"node": NODE, "dgx_model": "dgx1", "nvswitch": False, "fs_root": "/",
                   "state_dir": os.path.join(d, "health"), "window_hours": 1, "tool_timeout": 10,
                   "scontrol": "scontrol", "ignore": ignore, "context": {"simulated": True}, "expectations": {}}, fh)
    os.replace(path + ".tmp", path)


def state(env):
    rows = slurm_parse.parse_scontrol_nodes(run(["scontrol", "show", "node", "-o", NODE], env).stdout)
    return rows[0]


def outcome(cluster):
    try:
        with open(cluster["outcome"]) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def runs_after(cluster, stamp):
    """The program's outcome once slurmd has run it after ``stamp`` (the file's mtime)."""
    path = cluster["outcome"]
    return outcome(cluster) if os.path.exists(path) and os.path.getmtime(path) > stamp else None


def test_slurmd_runs_it_and_it_drains_its_node_then_resumes_only_its_own_drain(cluster):
    env = cluster["env"]
    drained = wait_for("slurmd's health program to drain the node",
                       lambda: (lambda s: s if s["drain"] and (s["reason"] or "").startswith("dgxpod-health: ")
                                else None)(state(env)))
    first = outcome(cluster)
    assert first["action"] in ("drain", "none") and first["problems"]
    assert drained["reason"].startswith("dgxpod-health: " + first["problems"][0].split(":")[0])
    failing = sorted({r["check"] for r in first["results"] if r["status"] in ("fail", "error")})

    write_config(cluster["config"], cluster["dir"], ignore=failing)  # what fails here is accepted: healthy
    resumed = wait_for("the program to resume its own drain", lambda: (lambda s: s if not s["drain"] else None)(
        state(env)))
    assert resumed["reason"] is None

    run(["scontrol", "update", "nodename=%s" % NODE, "state=drain", "reason=disk replacement"], env)
    stamp = time.time()
    healthy_run = wait_for("a healthy run after the admin drain", lambda: runs_after(cluster, stamp))
    assert healthy_run["action"] == "none" and "someone else" in healthy_run["why"]
    assert state(env)["reason"] == "disk replacement" and state(env)["drain"]

    write_config(cluster["config"], cluster["dir"], ignore=[])  # failing again: the admin's reason still stands
    stamp = time.time()
    failing_run = wait_for("a failing run after the admin drain",
                           lambda: (lambda o: o if o and o["problems"] else None)(runs_after(cluster, stamp)))
    assert failing_run["action"] == "none"
    assert state(env)["reason"] == "disk replacement"
    run(["scontrol", "update", "nodename=%s" % NODE, "state=resume"], env)
