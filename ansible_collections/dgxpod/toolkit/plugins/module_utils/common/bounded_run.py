# -*- coding: utf-8 -*-
"""A Python function with a time bound: ``call_bounded`` runs it in a forked child (no new interpreter to start,
which is what a file operation on a healthy mount costs most - issue 19: 16 DGX verifying their NFS mounts at once
spent seconds starting Pythons), and a child stuck on a dead server is killed, or abandoned when it does not die
even to SIGKILL (uninterruptible sleep on a dead NFS server).

A *tool* (a command) is run the one way, ``module_utils/common/run.py`` (run_tool, start_tool): the same bound,
its whole process group killed, a fixed locale (issue 38; this file's run_bounded went there).
"""
from __future__ import annotations

import os
import select
import signal
import struct
import time
from collections import namedtuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import GRACE

Called = namedtuple("Called", "ok out timed_out")


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
