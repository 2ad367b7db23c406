"""roles/slurm/files/dgxpod-slurm-daemon: starts a daemon once (pid file names a live process of that name),
restarts and stops it - without systemd. Exercised on a stand-in daemon (a backgrounded sleep)."""
from __future__ import annotations

import os
import subprocess

from inventory_util import ROOT

HELPER = os.path.join(ROOT, "roles", "slurm", "files", "dgxpod-slurm-daemon")


def _helper(*args):
    env = dict(os.environ, DGXPOD_DAEMON_TRIES="10")  # give up after 1 s instead of 10
    res = subprocess.run(["sh", HELPER, *args], capture_output=True, text=True, timeout=60, env=env)
    return res.returncode, res.stdout.strip(), res.stderr.strip()


def test_start_once_restart_and_stop(tmp_path):
    pidfile = str(tmp_path / "sleep.pid")
    daemon = ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > %s" % pidfile]  # daemonizes, writes its pid
    assert _helper("status", "sleep", pidfile) == (0, "stopped", "")
    try:
        assert _helper("start", "sleep", pidfile, *daemon)[:2] == (0, "started")
        first = open(pidfile).read().strip()
        assert _helper("start", "sleep", pidfile, *daemon)[:2] == (0, "running")      # idempotent
        assert open(pidfile).read().strip() == first
        assert _helper("restart", "sleep", pidfile, *daemon)[:2] == (0, "restarted")
        second = open(pidfile).read().strip()
        assert second != first and not _alive(int(first))
    finally:
        assert _helper("stop", "sleep", pidfile)[:2] == (0, "stopped")
    assert _helper("stop", "sleep", pidfile)[:2] == (0, "absent")
    assert _helper("status", "sleep", pidfile)[1] == "stopped"


def test_a_stale_pid_file_of_another_process_is_not_running(tmp_path):
    pidfile = tmp_path / "slurmd.pid"
    pidfile.write_text(str(os.getpid()))  # a live process, but not a slurmd
    assert _helper("status", "slurmd", str(pidfile))[1] == "stopped"
    rc, out, err = _helper("start", "slurmd", str(pidfile), "true")  # the command starts nothing
    assert rc == 1 and "slurmd did not start" in err


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False
