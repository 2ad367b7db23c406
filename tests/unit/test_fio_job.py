"""module_utils/storage/fio_job.py: the pure parts of library/pod_fio.py (its runs on localhost are in
test_perf_modules.py), against real ``stat``/``find`` output forms and the fio outputs of fixtures/perf/."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import fio_job
import pytest

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "perf")


def _read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


PARAMS = dict(directories=["/mnt/a", "/mnt/b"], numjobs=3, phase="all", layout=True, bs="1024KiB",
              ioengine="libaio", iodepth=32, direct=True, size="16MiB", runtime=30, ramp_time=0, rate_iops=None)


def test_job_plan_per_phase():
    stem = fio_job.file_stem("podfio", "dgx-3.pod.example")
    assert stem == "podfio.dgx-3"
    files, jobs = fio_job.job_plan(PARAMS, stem)
    assert [(f["directory"], f["filename"]) for f in files] == [
        ("/mnt/a", "podfio.dgx-3.0"), ("/mnt/b", "podfio.dgx-3.1"), ("/mnt/a", "podfio.dgx-3.2")]
    assert sorted(jobs) == ["layout", "read"]
    assert "rw=write" in jobs["layout"] and "rw=read" in jobs["read"] and "size=16MiB" in jobs["read"]
    assert sorted(fio_job.job_plan(dict(PARAMS, layout=False), stem)[1]) == ["read"]
    assert sorted(fio_job.job_plan(dict(PARAMS, phase="layout"), stem)[1]) == ["layout"]
    assert fio_job.job_plan(dict(PARAMS, phase="cleanup"), stem)[1] == {}
    assert fio_job.phases_to_run("all", True) == ["layout", "read"]
    assert fio_job.phases_to_run("all", False) == ["read"]
    assert fio_job.phases_to_run("read", True) == ["read"]


def test_fio_limit():
    assert fio_job.fio_limit(None, 30, 5) == 2 * 35 + 120
    assert fio_job.fio_limit(7, 30, 5) == 7


def test_read_phase_names_missing_and_short_files():
    paths = ["/mnt/a/podfio.h.0", "/mnt/a/podfio.h.1", "/mnt/a/podfio.h.2"]
    stat_out = "16777216 /mnt/a/podfio.h.0\n4096 /mnt/a/podfio.h.1\n"  # stat -c '%s %n'; .2 missing (stderr)
    problems = fio_job.file_problems(paths, stat_out, 16777216)
    assert problems == ["/mnt/a/podfio.h.1 has 4096 bytes, not 16777216", "/mnt/a/podfio.h.2 is missing"]
    assert fio_job.file_problems(paths[:2], stat_out, None) == []
    why = fio_job.read_problem(problems)
    assert why.startswith("/mnt/a/podfio.h.1 has 4096 bytes, not 16777216 (and 1 more): phase=read reads")
    assert fio_job.read_problem([]) is None


def test_cleanup_finds_only_this_stems_job_files():
    stem = "pod[1].h."
    assert fio_job.find_pattern(stem) == "pod\\[1\\].h.*"
    listed = ["/mnt/a/pod[1].h.0", "/mnt/a/pod[1].h.12", "/mnt/a/pod[1].h.0.bak", "/mnt/a/pod[1].h.x"]
    assert fio_job.own_files(stem, listed) == ["/mnt/a/pod[1].h.0", "/mnt/a/pod[1].h.12"]


def test_version_line():
    assert fio_job.version_line(0, "fio-3.33\n") == "fio-3.33"
    assert fio_job.version_line(1, "fio-3.33\n") == "version unknown"
    assert fio_job.version_line(0, "") == "version unknown"


def _never():
    raise AssertionError("the fio version is asked only when the output cannot be read")


def test_outcome_of_a_good_run():
    parsed, why = fio_job.fio_outcome("read", 0, _read("fio-3.33-debian-read-2jobs.json"), "", False, 60, "h", _never)
    assert why is None and parsed["status"] == "ok" and len(parsed["jobs"]) == 2


def test_outcome_of_a_run_past_its_limit_keeps_what_fio_said():
    parsed, why = fio_job.fio_outcome("read", -15, _read("fio-3.33-debian-read-2jobs.json"), "", True, 60, "h",
                                      _never)
    assert why == "fio read phase did not finish within 60s (killed)" and parsed["status"] == "ok"
    parsed, why = fio_job.fio_outcome("layout", None, "", "", True, 9, "h", lambda: "fio-3.33")
    assert why == "fio layout phase did not finish within 9s (killed)" and parsed["status"] == "error"


def test_outcome_of_job_errors():
    parsed, why = fio_job.fio_outcome("read", 1, _read("fio-3.33-debian-einval.json"), "", False, 60, "h", _never)
    assert why == "fio read phase: %s" % parsed["error"] and parsed["status"] == "error"


@pytest.mark.parametrize("rc, stderr, expected", [
    (1, "fio: unrecognized option\nfio: bad job file x\n", "fio read phase: fio: bad job file x"),
    (0, "", "node-1: fio (fio-3.33) read phase output cannot be read (exit 0): "),
])
def test_unreadable_output_is_an_error_never_numbers(rc, stderr, expected):
    parsed, why = fio_job.fio_outcome("read", rc, "", stderr, False, 60, "node-1", lambda: "fio-3.33")
    assert why.startswith(expected)
    assert parsed["status"] == "error" and parsed["jobs"] == [] and parsed["errors"] == [why]
    assert parsed["aggregate"]["read"]["bw_bytes"] == 0
