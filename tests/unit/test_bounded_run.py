"""module_utils/common/bounded_run.py: the one bounded-subprocess helper (library/pod_fio.py,
library/pod_nfs_mounts.py). A command past its bound is killed with its whole process group (a mount helper's or
fio's children too), a group that ignores SIGTERM gets SIGKILL, and the caller is back within the bound plus the
grace periods."""
from __future__ import annotations

import os
import signal
import time

import pod_nfs_mounts
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.bounded_run import call_bounded, run_bounded


def _gone(pid):
    """True once ``pid`` no longer runs (exited, or a zombie nobody has reaped yet)."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_command_within_its_bound_gives_its_output():
    r = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], 10)
    assert (r.rc, r.out, r.err, r.timed_out) == (3, "out\n", "err\n", False)
    merged = run_bounded(["sh", "-c", "echo out; echo err >&2"], 10, merge_stderr=True)
    assert sorted(merged.out.split()) == ["err", "out"] and merged.err == ""
    assert run_bounded(["sh", "-c", "echo $LC_ALL"], 10).out == "C\n"


def test_a_command_past_its_bound_is_killed_with_its_process_group(tmp_path):
    pidfile = tmp_path / "child"
    t0 = time.monotonic()
    r = run_bounded(["sh", "-c", "sleep 60 & echo $! > %s; wait" % pidfile], 0.5, grace=2)
    assert time.monotonic() - t0 < 4
    assert r.timed_out and r.rc == -signal.SIGTERM
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while not _gone(child) and time.monotonic() < deadline:  # the kill is already sent; only its delivery is waited
        os.sched_yield()
    assert _gone(child), "the command's child (same process group) survived the timeout"


def test_a_group_that_ignores_sigterm_gets_sigkill(tmp_path):
    t0 = time.monotonic()
    r = run_bounded(["sh", "-c", "trap '' TERM; sleep 60 & wait; sleep 60"], 0.3, grace=0.5)
    assert r.timed_out and r.rc == -signal.SIGKILL
    assert time.monotonic() - t0 < 3


def test_pod_nfs_mounts_reports_a_timeout_as_before():
    assert pod_nfs_mounts.run_bounded(["sh", "-c", "echo mounted; echo warn >&2"], 10)[0] == 0
    rc, msg = pod_nfs_mounts.run_bounded(["sleep", "60"], 0.3)
    assert (rc, msg) == (-1, "did not finish within 0.3s (killed)")


class _Interrupted(Exception):
    pass


def test_an_interrupted_caller_takes_the_group_down_with_it(tmp_path):
    """library/pod_dataset.py raises from its SIGTERM handler: the command's group must not outlive the module."""
    pidfile = tmp_path / "child"

    def _raise(signum, frame):
        raise _Interrupted()

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        run_bounded(["sh", "-c", "sleep 60 & echo $! > %s; wait" % pidfile], 30)
        raise AssertionError("the interruption did not propagate")
    except _Interrupted:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while not _gone(child) and time.monotonic() < deadline:
        os.sched_yield()
    assert _gone(child)


# call_bounded: a Python function in a forked child (pod_nfs_verify's file operations)

def _hang_on(fd):
    os.read(fd, 1)  # blocks: nobody writes


def test_a_function_within_its_bound_gives_its_text_or_its_error():
    assert call_bounded(lambda a, b: a + b, (2, 3), 10) == (True, "5", False)
    assert call_bounded(lambda: None, (), 10) == (True, "", False)
    r = call_bounded(lambda: open("/nonexistent/dir/x"), (), 10)
    assert not r.ok and not r.timed_out and r.out.startswith("FileNotFoundError: ")
    big = "x" * 300000  # more than one pipe buffer
    assert call_bounded(lambda: big, (), 10).out == big


def test_a_function_past_its_bound_is_killed_and_the_caller_is_back(tmp_path):
    rfd, wfd = os.pipe()
    try:
        t0 = time.monotonic()
        r = call_bounded(_hang_on, (rfd,), 0.3, grace=2)
        assert time.monotonic() - t0 < 2.5
        assert r == (False, "did not finish within 0.3s", True)
    finally:
        os.close(rfd)
        os.close(wfd)


def test_a_child_that_dies_without_answering_is_a_failure_not_a_hang():
    t0 = time.monotonic()
    r = call_bounded(lambda: os._exit(7), (), 10)
    assert not r.ok and not r.timed_out and "died before it answered" in r.out
    assert time.monotonic() - t0 < 5


def test_calls_from_many_threads_do_not_wait_on_each_other():
    """Each child holds the write ends of pipes its siblings' threads opened meanwhile: the framing, not
    end-of-file, ends a call, so a fast call is not held up by a slow sibling."""
    from concurrent.futures import ThreadPoolExecutor
    rfd, wfd = os.pipe()
    try:
        with ThreadPoolExecutor(8) as pool:
            slow = pool.submit(call_bounded, _hang_on, (rfd,), 1.5, 1)
            t0 = time.monotonic()
            fast = list(pool.map(lambda i: call_bounded(lambda: i * i, (), 10), range(20)))
            assert time.monotonic() - t0 < 2.5
            assert [f.out for f in fast] == [str(i * i) for i in range(20)]
            assert slow.result().timed_out
    finally:
        os.close(rfd)
        os.close(wfd)
