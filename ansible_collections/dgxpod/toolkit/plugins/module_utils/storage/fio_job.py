# -*- coding: utf-8 -*-
"""The pure parts of library/pod_fio.py: which files and job files a phase uses, how long fio may run, what a
``stat`` and a ``find`` of the data directories say, and what one fio run's output means. The module keeps what
touches the host (processes, directories, the clock); these are unit-tested in tests/unit/test_fio_job.py."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_parse import aggregate, parse_fio
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.cmd import fio_jobfile
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import fio_files

PHASES = ("all", "layout", "read", "cleanup")
JOB_KEYS = ("bs", "ioengine", "iodepth", "direct", "size", "runtime", "ramp_time", "rate_iops")


def file_stem(prefix, hostname):
    """<prefix>.<short host name>: every file of this node starts with it (nodes may share one export)."""
    return "%s.%s" % (prefix, hostname.split(".")[0])


def job_plan(p, stem):
    """(files, {phase: job file text}) for the module's parameters ``p``: phase all lays out (unless
    ``layout`` is false) and reads, layout and read one job file each, cleanup none."""
    files = fio_files(p["directories"], p["numjobs"], prefix=stem)
    common = {k: p[k] for k in JOB_KEYS}
    phase = p["phase"]
    if phase == "all":
        jobfiles = {"read": fio_jobfile(files, "read", **common)}
        if p["layout"]:
            jobfiles["layout"] = fio_jobfile(files, "layout", **common)
    elif phase in ("layout", "read"):
        jobfiles = {phase: fio_jobfile(files, phase, **common)}
    else:
        jobfiles = {}
    return files, jobfiles


def fio_limit(timeout, runtime, ramp_time):
    """Seconds one fio run may take: ``timeout`` if set, else twice ramp and runtime plus two minutes."""
    return timeout or 2 * (ramp_time + runtime) + 120


def phases_to_run(phase, layout):
    """The fio runs of a phase, in order: all = layout (unless ``layout`` is false) then read."""
    if phase == "all":
        return (["layout"] if layout else []) + ["read"]
    return [phase]


def file_problems(paths, stat_output, expected):
    """phase=read: what is wrong with ``paths`` by ``stat -c '%s %n'``'s output: each missing one, each with fewer
    than ``expected`` bytes (None: any size is enough); [] when all are there."""
    sizes = {}
    for line in stat_output.splitlines():
        size, _, name = line.partition(" ")
        if size.isdigit():
            sizes[name] = int(size)
    problems = []
    for path in paths:
        if path not in sizes:
            problems.append("%s is missing" % path)
        elif expected is not None and sizes[path] < expected:
            problems.append("%s has %d bytes, not %d" % (path, sizes[path], expected))
    return problems


def read_problem(problems):
    """The phase=read refusal for the files ``file_problems`` found wrong (None if none)."""
    if not problems:
        return None
    more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
    return "%s%s: phase=read reads the files of a successful phase=layout, it does not lay them out" % (
        problems[0], more)


def find_pattern(stem):
    """``find -name`` pattern for the files of ``stem`` (its glob characters escaped)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in stem) + "*"


def own_files(stem, listed):
    """The paths ``find`` listed that are this stem's job files (<stem><digits>), not another prefix's."""
    return [path for path in listed if os.path.basename(path)[len(stem):].isdigit()]


def version_line(rc, stdout):
    """`fio --version` ("fio-3.33"), or "version unknown"."""
    first = (stdout or "").strip().splitlines()
    return first[0].strip() if rc == 0 and first else "version unknown"


def fio_outcome(phase, rc, stdout, stderr, timed_out, limit, host, version):
    """(parsed result, None or why the phase failed) of one fio run. Never numbers from a half-read or interim
    report: output fio cannot have finished gives an error naming the node and the fio version (``version()``,
    asked only then)."""
    try:
        parsed = parse_fio(stdout)
    except ValueError as exc:
        tail = (stderr or "").strip().splitlines()
        if rc and tail:  # fio failed and said why (bad job file, no space...): its own message
            why = "fio %s phase: %s" % (phase, tail[-1][:300])
        else:
            why = "%s: fio (%s) %s phase output cannot be read (exit %s): %s" % (host, version(), phase, rc, exc)
        parsed = {"status": "error", "error": why, "version": None, "jobs": [], "aggregate": aggregate([]),
                  "errors": [why]}
        if timed_out:
            return parsed, "fio %s phase did not finish within %ds (killed)" % (phase, limit)
        return parsed, why
    if timed_out:
        return parsed, "fio %s phase did not finish within %ds (killed)" % (phase, limit)
    if parsed["status"] != "ok":
        detail = parsed["error"]
        if not parsed["jobs"]:
            detail = ((stderr or "").strip().splitlines() or ["fio exited %s" % rc])[-1]
        return parsed, "fio %s phase: %s" % (phase, detail)
    return parsed, None
