# -*- coding: utf-8 -*-
"""The one way a module runs a tool (issue 38): bounded, the whole process group killed, a fixed locale.

:func:`run_tool` runs an argv list (no shell unless ``shell=True``) for at most ``timeout`` seconds and returns a
:class:`Ran`: ``rc``, ``stdout``, ``stderr``, ``timed_out``, ``seconds``, ``argv`` and ``error``.

- The tool runs in its own session (process group); past the bound the group gets SIGTERM, then SIGKILL, ``grace``
  seconds apart, so a command's children (mount.nfs, fio's jobs, ssh under ``podman exec``) die with it. A process
  stuck in the kernel (uninterruptible sleep on a dead NFS server) may not die even to SIGKILL: after the grace it
  is abandoned (``rc`` None) rather than waited for.
- ``LC_ALL=C`` and ``LANG=C`` always (``env`` adds to or overrides the rest of the module's environment): the
  parsers read the tools' untranslated English output.
- stdin is /dev/null unless ``stdin`` gives the text to feed: a tool that asks a question fails instead of
  holding the play.
- A tool that cannot be started (not installed, not executable, a missing ``cwd``) is an answer, not an
  exception: ``rc`` 127 (not found) or 126 (cannot execute), ``error`` and ``stderr`` say which and why.
- Output is decoded as UTF-8, undecodable bytes replaced.
- An exception while waiting (a signal handler of the caller's raised: library/pod_dataset.py) kills the group,
  then propagates: the tool does not outlive the module.
- Safe from several threads at once (pod_ping_mesh, ngc_mpi_verify, pod_nccl's probes), unlike
  ``AnsibleModule.run_command``, which swaps process-wide state around each call and has no bound.

:func:`start_tool` is the same road for a tool that runs in the background or is waited for later (iperf3
servers left running after the module, several ``find`` at once): it returns a :class:`Started` to ``poll``,
``finish(timeout)`` (the same bound and kill as run_tool, giving a Ran) or ``signal``. ``run_tool`` is
``start_tool(...).finish(timeout)``.

``library/`` and ``module_utils/`` run tools only through this file (tests/unit/test_one_runner.py).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import namedtuple

GRACE = 5.0  # seconds a signalled group gets to exit before the next signal / before it is abandoned
LOCALE = {"LC_ALL": "C", "LANG": "C"}
NOT_FOUND, CANNOT_EXECUTE = 127, 126  # the shell's exit statuses for the same failures


class Ran(namedtuple("Ran", "rc stdout stderr timed_out seconds argv error")):
    """What a tool did. ``rc``: its exit status (negative: the signal that ended it; None: abandoned after the
    kill); ``timed_out``: it was still running at the bound; ``seconds``: wall time from start; ``argv``: the
    command as run; ``error``: why it could not be started (None when it ran)."""

    __slots__ = ()

    @property
    def ok(self):
        return self.rc == 0 and not self.timed_out


def _cannot_start(argv, exc):
    """(rc, message) for an OSError from Popen: 127 when the program (or cwd) does not exist, else 126."""
    name = argv[0] if argv else "?"
    if isinstance(exc, FileNotFoundError) and exc.filename in (None, name):
        return NOT_FOUND, "cannot run %s: not found (not installed, or not on PATH)" % name
    what = exc.strerror or str(exc)
    if exc.filename not in (None, name):
        what = "%s: %s" % (what, exc.filename)
    return (NOT_FOUND if isinstance(exc, FileNotFoundError) else CANNOT_EXECUTE), "cannot run %s: %s" % (name, what)


def _text(data):
    """Partial output as text (subprocess keeps it as bytes until the tool ends)."""
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def tool_env(env=None):
    """The environment a tool gets: the module's, ``env`` on top, the locale fixed last."""
    out = dict(os.environ)
    out.update({str(k): str(v) for k, v in (env or {}).items()})
    out.update(LOCALE)
    return out


class Started:
    """A tool started by :func:`start_tool`: ``pid`` (None when it could not start), ``poll()``, ``finish``,
    ``signal``. ``proc`` is the subprocess.Popen (None when it could not start)."""

    def __init__(self, argv, proc, feed=None, error=None, rc=None):
        self.argv = list(argv)
        self.proc = proc
        self.error = error
        self._feed = feed
        self._rc = rc
        self._t0 = time.monotonic()

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None else None

    def poll(self):
        """The exit status once it ended (127/126 when it never started), else None."""
        return self.proc.poll() if self.proc is not None else self._rc

    def signal(self, sig):
        """Send ``sig`` to the tool's whole process group (nothing when it is gone already)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except OSError:  # the group is gone already
            pass

    def _ran(self, rc, out, err, timed_out):
        return Ran(rc, out or "", err or "", timed_out, round(time.monotonic() - self._t0, 3), self.argv, self.error)

    def finish(self, timeout, grace=GRACE):
        """Wait at most ``timeout`` more seconds for the tool to end and collect its output: a :class:`Ran`. Past
        the bound the group gets SIGTERM, then SIGKILL, ``grace`` seconds apart; ``rc`` is the exit status if it
        then exited, None if it did not (abandoned, never waited for). The output read until then is kept, also
        when the pipes stay open (a process that left the group still holds them)."""
        if self.proc is None:
            return self._ran(self._rc, "", self.error, False)
        feed, self._feed = self._feed, None
        try:
            out, err = self.proc.communicate(feed, timeout=max(0.0, float(timeout)))
            return self._ran(self.proc.returncode, out, err, False)
        except subprocess.TimeoutExpired as exc:
            partial = exc
        except BaseException:  # the caller is interrupted (a signal handler raised): the group does not outlive it
            self.signal(signal.SIGKILL)
            raise
        for sig in (signal.SIGTERM, signal.SIGKILL):
            self.signal(sig)
            try:
                out, err = self.proc.communicate(timeout=max(0.0, float(grace)))
                return self._ran(self.proc.returncode, out, err, True)
            except subprocess.TimeoutExpired as exc:
                partial = exc
        return self._ran(self.proc.poll(), _text(partial.output), _text(partial.stderr), True)


def start_tool(argv, stdin=None, env=None, cwd=None, shell=False, capture=True, merge_stderr=False):
    """Start ``argv`` in its own process group with the fixed locale; a :class:`Started`.

    ``stdin``: text to feed (written by ``finish``), else /dev/null. ``env``: variables on top of the module's
    environment (the locale stays C). ``shell``: ``argv`` is one string run by ``/bin/sh -c`` (only when asked).
    ``capture``: stdout and stderr to pipes read by ``finish``; False - to /dev/null (a server left running after
    the module). ``merge_stderr``: stderr into stdout (``stderr`` is "")."""
    if shell:
        if not isinstance(argv, str):
            raise TypeError("shell=True takes one command string")
        argv = ["/bin/sh", "-c", argv]
    elif isinstance(argv, (str, bytes)):
        raise TypeError("argv is a list (pass shell=True to run a string through /bin/sh)")
    argv = [str(a) for a in argv]
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    err = (subprocess.STDOUT if merge_stderr else subprocess.PIPE) if capture else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err, cwd=cwd, env=tool_env(env), start_new_session=True,
                                close_fds=True, text=True, encoding="utf-8", errors="replace")
    except OSError as exc:
        rc, why = _cannot_start(argv, exc)
        return Started(argv, None, error=why, rc=rc)
    return Started(argv, proc, feed=stdin)


def run_tool(argv, timeout, stdin=None, env=None, cwd=None, shell=False, merge_stderr=False, grace=GRACE):
    """Run ``argv`` for at most ``timeout`` seconds: a :class:`Ran` (see the module docstring and
    :func:`start_tool` for the arguments)."""
    if timeout is None or float(timeout) <= 0:
        raise ValueError("run_tool needs a bound: timeout=%r" % (timeout,))
    return start_tool(argv, stdin=stdin, env=env, cwd=cwd, shell=shell,
                      merge_stderr=merge_stderr).finish(timeout, grace)


def run_status(argv, timeout):
    """(rc, stdout, stderr) of :func:`run_tool`, the shape the health modules' ``gather(run, which, ...)`` take (their
    tests inject a fake one); rc None with the reason as stderr on a timeout or when the tool cannot be started."""
    res = run_tool(argv, timeout)
    if res.timed_out:
        return None, "", "timed out after %ds" % timeout
    if res.error:
        return None, "", res.error
    return res.rc, res.stdout, res.stderr
