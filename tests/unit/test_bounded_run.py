"""module_utils/common/bounded_run.py: call_bounded, a Python function with a time bound in a forked child
(library/pod_nfs_verify.py's file operations). A child past its bound is killed and the caller is back; a child that
dies without answering is a failure, not a hang. Tools (commands) run through module_utils/common/run.py:
tests/unit/test_run_tool.py."""
from __future__ import annotations

import os
import time

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.bounded_run import call_bounded


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
