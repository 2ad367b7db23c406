# -*- coding: utf-8 -*-
"""A command with a time bound: run in its own process group, the whole group killed when the bound passes.

Used by the modules that run commands which can hang on a sick host (mount and umount on a dead NFS server, fio,
stat, rm on a stuck mount). A command's children (mount.nfs, fio's job processes) die with it. A process stuck in
the kernel (uninterruptible sleep on a dead NFS server) may not die even to SIGKILL: after the grace period it is
abandoned (``rc`` None) rather than waited for.
"""
from __future__ import annotations

import os
import signal
import subprocess
from collections import namedtuple

Bounded = namedtuple("Bounded", "rc out err timed_out")
GRACE = 5.0  # seconds a signalled group gets to exit before the next signal / before it is abandoned


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except OSError:  # the group is gone already
        pass


def run_bounded(argv, timeout, merge_stderr=False, grace=GRACE):
    """Run ``argv`` (LC_ALL=C) for at most ``timeout`` seconds: ``Bounded(rc, out, err, timed_out)``.

    On timeout the process group gets SIGTERM, then SIGKILL, ``grace`` seconds apart; ``rc`` is the exit status
    if it then exited, None if it did not (abandoned). ``merge_stderr``: stderr into ``out`` (``err`` is "").
    An exception while waiting (a signal handler of the caller's raised) kills the group, then propagates."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            text=True, start_new_session=True, env=dict(os.environ, LC_ALL="C"))
    try:
        out, err = proc.communicate(timeout=timeout)
        return Bounded(proc.returncode, out or "", err or "", False)
    except subprocess.TimeoutExpired:
        pass
    except BaseException:  # the caller is interrupted (a signal handler raised): the group does not outlive it
        _signal_group(proc, signal.SIGKILL)
        raise
    for sig in (signal.SIGTERM, signal.SIGKILL):
        _signal_group(proc, sig)
        try:
            out, err = proc.communicate(timeout=grace)
            return Bounded(proc.returncode, out or "", err or "", True)
        except subprocess.TimeoutExpired:
            continue
    return Bounded(None, "", "", True)
