# -*- coding: utf-8 -*-
"""A command with a time bound: run in its own process group, the whole group killed when the bound passes.

Used by the modules that run commands which can hang on a sick host (mount and umount on a dead NFS server, fio,
stat, rm on a stuck mount). A command's children (mount.nfs, fio's job processes) die with it. A process stuck in
the kernel (uninterruptible sleep on a dead NFS server) may not die even to SIGKILL: after the grace period it is
abandoned (``rc`` None) rather than waited for.

``call_bounded`` is the same bound for a Python function: it runs in a forked child (no new interpreter to start,
which is what a file operation on a healthy mount costs most - issue 19: 16 DGX verifying their NFS mounts at once
spent seconds starting Pythons), and a child stuck on a dead server is killed or abandoned the same way.
"""
from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import time
from collections import namedtuple

Bounded = namedtuple("Bounded", "rc out err timed_out")
Called = namedtuple("Called", "ok out timed_out")
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


def _child(fn, args, wfd):
    """In the forked child: run ``fn``, write its text (or the error) to ``wfd``, exit without cleanup handlers."""
    code = 0
    try:
        out = fn(*args)
        text = "" if out is None else str(out)
    except BaseException as exc:  # noqa: BLE001 - any failure is the answer, reported to the parent
        code, text = 1, "%s: %s" % (type(exc).__name__, exc)
    try:
        body = text.encode("utf-8", "replace")
        # framed (length, status): a sibling forked meanwhile by another thread may hold this pipe's write end
        # open too, so the parent cannot wait for end-of-file
        data = struct.pack("!QB", len(body), code) + body
        while data:
            data = data[os.write(wfd, data):]
    finally:
        os._exit(code)


def _reap(pid, grace):
    """Exit status of ``pid`` within ``grace`` seconds (polled, never blocking), None if it does not exit."""
    deadline = time.monotonic() + grace
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def call_bounded(fn, args=(), timeout=20.0, grace=GRACE):
    """Run ``fn(*args)`` in a forked child for at most ``timeout`` seconds: ``Called(ok, out, timed_out)``.

    ``out`` is ``str(fn(...))`` ("" for None) when it returned, ``"<Exception>: <message>"`` when it raised (``ok``
    False). Past the bound the child gets SIGKILL; one stuck in the kernel is abandoned after ``grace`` seconds
    (left to init), never waited for. ``fn`` must not need locks other threads may hold (logging, imports): it runs
    in a copy of the calling thread only. Safe to call from several threads at once."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(rfd)
        _child(fn, args, wfd)
    os.close(wfd)
    buf, deadline, head = b"", time.monotonic() + timeout, struct.calcsize("!QB")
    poller = select.poll()  # not select(): a long-lived interpreter (Mitogen) may hold descriptors past 1024
    poller.register(rfd, select.POLLIN)
    try:
        while len(buf) < head or len(buf) < head + struct.unpack("!QB", buf[:head])[0]:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):  # past the bound
                os.kill(pid, signal.SIGKILL)
                _reap(pid, grace)
                return Called(False, "did not finish within %ss" % timeout, True)
            data = os.read(rfd, 65536)
            if not data:  # end of file before a whole answer: the child died (killed, crashed)
                return Called(False, "died before it answered (wait status %s)" % _reap(pid, grace), False)
            buf += data
    finally:
        os.close(rfd)
    _reap(pid, grace)
    size, code = struct.unpack("!QB", buf[:head])
    return Called(code == 0, buf[head:head + size].decode("utf-8", "replace").strip(), False)
