"""module_utils/common/run.py: the one way a module runs a tool (issue 38). A tool within its bound gives rc, stdout,
stderr, seconds and its argv; past the bound its whole process group is killed (a group that ignores SIGTERM gets
SIGKILL) and the caller is back within the bound plus the grace periods; the locale is C whatever the module's
environment says; a tool that is not there is an answer (rc 127 and why), not a traceback; the background road
(start_tool) is the same process group and locale."""
from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pod_nfs_mounts
import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import Ran, run_tool, start_tool


def _gone(pid):
    """True once ``pid`` no longer runs (exited, or a zombie nobody has reaped yet)."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_gone(pid, within=2.0):
    deadline = time.monotonic() + within
    while not _gone(pid) and time.monotonic() < deadline:  # the kill is already sent; only its delivery is waited
        os.sched_yield()
    return _gone(pid)


def test_a_tool_within_its_bound_gives_rc_stdout_stderr_seconds_and_argv():
    r = run_tool(["sh", "-c", "echo out; echo err >&2; exit 3"], 10)
    assert isinstance(r, Ran)
    assert (r.rc, r.stdout, r.stderr, r.timed_out, r.error) == (3, "out\n", "err\n", False, None)
    assert r.argv == ["sh", "-c", "echo out; echo err >&2; exit 3"] and 0 <= r.seconds < 10 and not r.ok
    assert run_tool(["true"], 10).ok
    merged = run_tool(["sh", "-c", "echo out; echo err >&2"], 10, merge_stderr=True)
    assert sorted(merged.stdout.split()) == ["err", "out"] and merged.stderr == ""
    assert run_tool(["echo", 5], 10).argv == ["echo", "5"]  # argv items as strings


def test_the_locale_is_c_whatever_the_module_environment_says(monkeypatch):
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("DGXPOD_KEEP", "kept")
    r = run_tool(["sh", "-c", 'echo "$LC_ALL $LANG $DGXPOD_KEEP $EXTRA"'], 10, env={"EXTRA": "x", "LC_ALL": "fr_FR"})
    assert r.stdout == "C C kept x\n"
    bg = start_tool(["sh", "-c", 'echo "$LC_ALL $LANG"']).finish(10)
    assert bg.stdout == "C C\n"


def test_stdin_is_empty_unless_fed_and_cwd_is_honoured(tmp_path):
    assert run_tool(["cat"], 10).stdout == ""  # /dev/null: a tool that reads stdin does not wait on the play
    assert run_tool(["cat"], 10, stdin="fed\n").stdout == "fed\n"
    assert run_tool(["pwd"], 10, cwd=str(tmp_path)).stdout.strip() == str(tmp_path)


def test_no_shell_unless_asked():
    with pytest.raises(TypeError):
        run_tool("echo hi", 10)
    assert run_tool(["echo", "$HOME;", "x"], 10).stdout == "$HOME; x\n"  # no shell: nothing expanded
    r = run_tool("echo a | tr a b", 10, shell=True)
    assert r.stdout == "b\n" and r.argv == ["/bin/sh", "-c", "echo a | tr a b"]


def test_a_bound_is_required():
    for timeout in (None, 0, -1):
        with pytest.raises(ValueError):
            run_tool(["true"], timeout)


def test_a_missing_tool_is_a_clear_answer_not_a_traceback(tmp_path):
    r = run_tool(["dgxpod-no-such-tool", "--version"], 10)
    assert (r.rc, r.stdout, r.timed_out) == (127, "", False) and not r.ok
    assert r.error == r.stderr == "cannot run dgxpod-no-such-tool: not found (not installed, or not on PATH)"
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\necho hi\n")
    r = run_tool([str(plain)], 10)
    assert r.rc == 126 and r.error.startswith("cannot run %s: Permission denied" % plain)
    r = run_tool(["true"], 10, cwd=str(tmp_path / "absent"))
    assert r.rc == 127 and str(tmp_path / "absent") in r.error
    bg = start_tool(["dgxpod-no-such-tool"])
    assert bg.pid is None and bg.poll() == 127
    assert bg.finish(1).error == "cannot run dgxpod-no-such-tool: not found (not installed, or not on PATH)"
    bg.signal(signal.SIGTERM)  # nothing to signal: no error


def test_a_tool_past_its_bound_is_killed_with_its_process_group(tmp_path):
    pidfile = tmp_path / "child"
    t0 = time.monotonic()
    r = run_tool(["sh", "-c", "sleep 60 & echo $! > %s; wait" % pidfile], 0.5, grace=2)
    assert time.monotonic() - t0 < 4
    assert r.timed_out and r.rc == -signal.SIGTERM and not r.ok and r.seconds >= 0.5
    assert _wait_gone(int(pidfile.read_text())), "the tool's child (same process group) survived the timeout"


def test_a_group_that_ignores_sigterm_gets_sigkill():
    t0 = time.monotonic()
    r = run_tool(["sh", "-c", "trap '' TERM; sleep 60 & wait; sleep 60"], 0.3, grace=0.5)
    assert r.timed_out and r.rc == -signal.SIGKILL
    assert time.monotonic() - t0 < 3


def test_output_read_before_the_kill_is_kept_when_an_escaped_process_holds_the_pipes(tmp_path):
    """salloc's step, a daemonised helper: a process that left the group keeps stdout open past the kill. The
    caller is back within the bound plus the grace periods with what was printed and the tool's own status."""
    pidfile = tmp_path / "escaped"
    t0 = time.monotonic()
    r = run_tool(["sh", "-c", "echo before; echo warn >&2; setsid sleep 30 & echo $! > %s; sleep 60" % pidfile],
                 0.5, grace=0.3)
    try:
        assert time.monotonic() - t0 < 3
        assert r.timed_out and (r.stdout, r.stderr) == ("before\n", "warn\n") and r.rc == -signal.SIGTERM
    finally:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)


class _Interrupted(Exception):
    pass


def test_an_interrupted_caller_takes_the_group_down_with_it(tmp_path):
    """library/pod_dataset.py raises from its SIGTERM handler: the tool's group must not outlive the module."""
    pidfile = tmp_path / "child"

    def _raise(signum, frame):
        raise _Interrupted()

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        run_tool(["sh", "-c", "sleep 60 & echo $! > %s; wait" % pidfile], 30)
        raise AssertionError("the interruption did not propagate")
    except _Interrupted:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _wait_gone(int(pidfile.read_text()))


def test_the_background_road_is_the_same_group_and_bound(tmp_path):
    """start_tool: a server left running (pod_iperf), or several tools waited for together (pod_fio's finds)."""
    server = start_tool(["sleep", "60"], capture=False)
    assert server.pid and server.poll() is None
    assert os.getpgid(server.pid) == server.pid  # its own process group
    server.signal(signal.SIGTERM)
    assert server.proc.wait(5) == -signal.SIGTERM
    t0 = time.monotonic()
    hung = [start_tool(["sleep", "60"]) for _ in range(3)]
    done = start_tool(["echo", "listed"])
    results = [h.finish(0.2, grace=0) for h in hung] + [done.finish(5)]
    assert time.monotonic() - t0 < 3
    assert [r.timed_out for r in results] == [True, True, True, False] and results[-1].stdout == "listed\n"
    assert all(_wait_gone(h.pid) for h in hung)


def test_tools_from_many_threads_do_not_mix_their_output():
    """pod_ping_mesh, ngc_mpi_verify and pod_nccl probe from threads (module.run_command is not thread-safe)."""
    with ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(lambda i: run_tool(["sh", "-c", "echo %d; echo e%d >&2" % (i, i)], 10), range(40)))
    assert [(r.stdout, r.stderr) for r in outs] == [("%d\n" % i, "e%d\n" % i) for i in range(40)]


def test_undecodable_output_is_replaced_not_an_error():
    assert run_tool(["printf", "a\\377b"], 10).stdout == "a\ufffdb"


def test_pod_nfs_mounts_reports_a_timeout_and_a_missing_tool_as_before():
    assert pod_nfs_mounts.run_mount(["sh", "-c", "echo mounted; echo warn >&2"], 10)[0] == 0
    rc, msg = pod_nfs_mounts.run_mount(["sleep", "60"], 0.3)
    assert (rc, msg) == (-1, "did not finish within 0.3s (killed)")
    rc, msg = pod_nfs_mounts.run_mount(["dgxpod-no-such-mount"], 10)
    assert rc == 127 and "not found" in msg
