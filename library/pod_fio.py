#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: the RA's fio read job on this host's data directories; parsed result; files always removed
(phase=all), or one phase of it (layout / read at a common start_at / cleanup) for a multi-node barrier."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_fio
short_description: Run the RA's fio read test over the data mounts of one node and return the parsed result
description:
  - Runs the job of 004 appendix "iPerf and FIO" (C(fio1.job)) - C(rw=read), C(bs=1024KiB),
    C(ioengine=libaio), C(direct=1), C(iodepth=32), C(numjobs) = GPUs per host, C(kb_base=1000) - with one
    file per job spread round-robin over I(directories) (job i uses directory i mod len(directories)).
  - Two phases - a layout phase writes the files (C(rw=write), reported as I(layout)), then the read phase
    reads them for I(runtime) seconds after I(ramp_time) (C(time_based)); the read result is I(result).
  - With I(phase=all) (the default) one call runs both. Several nodes started one after another then read
    at different times (each layout ends when it ends), so a playbook measuring nodes together runs
    I(phase=layout) on all of them, waits, then I(phase=read) on all of them with one common I(start_at),
    and I(phase=cleanup) on every node whose read did not succeed (roles/pod_perf/tasks/fio_step.yml).
  - The files (named after the host, so nodes sharing an export never collide) and the job files are
    B(always removed), also after a failure or a timeout - except after a successful I(phase=layout), which
    keeps them for I(phase=read), and after a successful I(phase=read) with I(keep), which keeps them for a
    later step's I(phase=layout) with I(reuse) (a node taking part in steps 1..N writes its files once, not N
    times). Every step is bounded - a directory that does
    not answer (storage node down) is reported within I(probe_timeout) seconds, fio is killed after
    I(timeout) seconds, the wait for I(start_at) lasts at most 600 seconds.
  - A missing fio, an unreachable directory, a fio job error or a timeout give I(status=error) with a
    I(reason), not a task failure (unless I(fail_on_error)), so the playbook records it and goes on.
  - Check mode runs nothing and returns the job files that would run.
version_added: "0.2.0"
options:
  directories:
    description: Data directories (e.g. a C(fio) directory on each data mount, C(/mnt/isilon1/fio) ...). Must exist.
    type: list
    elements: path
    required: true
  phase:
    description:
      - C(all) - layout (if I(layout)), read, remove the files.
      - C(layout) - create the directories (I(create_dirs)), write the files and B(keep) them; after a failure
        its files are removed, the directories are not - every node of a step lays out at once into the same
        shared directories, and an empty one may be one another node is about to write into. The C(read) or
        C(cleanup) phase, after every node's layout, removes them when empty.
      - C(read) - the files must exist with the full I(size) (else I(status=error) naming the file; fio is
        not left to lay them out unmeasured); wait for I(start_at), read, then always remove the files and
        (I(create_dirs)) the empty directories. A successful read (or C(all)) also removes any other file of
        this I(prefix) on this host, as C(cleanup) does, so no C(cleanup) is needed after it.
      - C(cleanup) - remove this I(prefix)'s files on this host (C(<prefix>.<host>.<n>), any n) and
        (I(create_dirs)) the empty directories; nothing to remove is fine. fio is not needed.
      - The same I(directories), I(numjobs), I(size) and I(prefix) must be given to every phase.
    type: str
    choices: [all, layout, read, cleanup]
    default: all
  start_at:
    description:
      - I(phase=read) only - wall-clock time (seconds since the epoch) at which the read starts, so that
        nodes started one after another read together. Hosts need synchronised clocks (NTP). At most
        600 s of waiting; a time already past starts at once, and more than 2 s past is reported as
        I(late_by).
    type: float
  numjobs:
    description: Jobs (= files, = concurrent readers); the RA sets the number of GPUs per host.
    type: int
    default: 8
  size:
    description: Size of each job's file (C(size=)); 004 uses 64GiB (with 30 files per job), a quick profile 256MiB.
    type: str
    default: 1GiB
  runtime:
    description: Seconds of the read phase after the ramp (004 - 600).
    type: int
    default: 30
  ramp_time:
    description: Seconds read before measuring (004 - 60).
    type: int
    default: 0
  bs:
    description: Block size.
    type: str
    default: 1024KiB
  iodepth:
    description: I/O depth per job.
    type: int
    default: 32
  ioengine:
    description: fio I/O engine.
    type: str
    default: libaio
  direct:
    description: O_DIRECT (bypass the page cache); the RA uses it.
    type: bool
    default: true
  rate_iops:
    description:
      - Cap per job (004's job uses 83, about the demand of one GPU in training); unset measures
        capacity (001 §3.4).
    type: int
  layout:
    description:
      - I(phase=all) only - run the layout (write) phase first. Without it fio lays files out itself,
        unmeasured.
    type: bool
    default: true
  prefix:
    description: File name prefix; files are C(<prefix>.<host>.<job>).
    type: str
    default: podfio
  timeout:
    description: Seconds after which a phase's fio is killed (default - 2 x (ramp_time + runtime) + 120); the
      wait for I(start_at) does not count.
    type: int
  create_dirs:
    description:
      - Create missing I(directories) (one level, below an existing mount point) before the test and remove
        them afterwards when they are empty (C(rmdir); on a shared export the last node to finish does).
        I(phase=layout) creates them (and removes them only after a failure), I(phase=read) and
        I(phase=cleanup) remove them when empty.
        Each step is bounded by I(probe_timeout), so a dead mount costs
        one probe, not a hung task.
    type: bool
    default: false
  probe_timeout:
    description: Seconds a directory has to answer C(stat) before it is reported unreachable.
    type: int
    default: 15
  keep:
    description:
      - I(phase=read) only - keep the files after a successful read, for a later I(phase=layout) with
        I(reuse); a failed read still removes them. The last read of the files, or I(phase=cleanup), must
        remove them.
      - Needs I(direct) - without O_DIRECT the next read of the same files could come from this host's page
        cache instead of the storage.
    type: bool
    default: false
  reuse:
    description:
      - I(phase=layout) only - when every file this layout would write is there already with its full
        I(size) (kept by an earlier read with I(keep)), write nothing and report I(reused=true),
        C(changed=false); a missing or short file lays all of them out as usual.
      - Needs I(direct), for the reason given under I(keep).
    type: bool
    default: false
  fio_path:
    description: fio binary (default - found in PATH).
    type: str
  fail_on_error:
    description: Fail the task when the test could not run or a job failed.
    type: bool
    default: false
notes:
  - Supports check mode - nothing runs, no file is created or removed; I(jobfiles) shows what would run.
  - A process blocked on an unreachable NFS server cannot always be killed; the module then gives up
    waiting after the timeout, reports the error and that the clean-up may be incomplete.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Storage read test on this DGX (quick profile)
  pod_fio:
    directories: [/mnt/isilon1/fio, /mnt/isilon2/fio, /mnt/isilon3/fio, /mnt/isilon4/fio]
    numjobs: 8
    size: 256MiB
    runtime: 10
  register: fio

- name: Lay out the files (every node of a step, async), keep them
  pod_fio:
    directories: [/mnt/isilon1/fio, /mnt/isilon2/fio]
    numjobs: 8
    size: 256MiB
    phase: layout
    create_dirs: true

- name: Read together (every node gets the same start_at), remove the files
  pod_fio:
    directories: [/mnt/isilon1/fio, /mnt/isilon2/fio]
    numjobs: 8
    size: 256MiB
    runtime: 10
    phase: read
    start_at: "{{ fio_start_at }}"  # set once (set_fact on the controller), the same for every node
    create_dirs: true

- name: Whatever happened - remove this prefix's files and the empty test directories
  pod_fio:
    directories: [/mnt/isilon1/fio, /mnt/isilon2/fio]
    phase: cleanup
    create_dirs: true
"""

RETURN = r"""
status:
  description: C(ok), C(error) (see I(reason)) or C(skipped) (check mode).
  returned: always
  type: str
phase:
  description: The I(phase) that ran.
  returned: always
  type: str
reason:
  description: Why the test failed to run, which jobs reported errors, which file I(phase=read) found
    missing or short, or what I(phase=cleanup) could not remove.
  returned: when status is error
  type: str
result:
  description: Parsed read phase (module_utils/storage/fio_parse.py) - jobs, aggregate.read.bw_bytes, iops,
    clat_percentiles_ns, errors, version; empty when no read ran (I(phase=layout), I(phase=cleanup), errors).
  returned: unless check mode
  type: dict
layout:
  description: Parsed layout (write) phase.
  returned: when layout ran
  type: dict
reused:
  description: I(phase=layout) with I(reuse) found every file with its full size and wrote nothing.
  returned: when phase is layout and reuse is true
  type: bool
kept:
  description: I(phase=read) with I(keep) read successfully and left the files for a later step.
  returned: when phase is read, keep is true and the read succeeded
  type: bool
started_at:
  description: Wall-clock time (seconds since the epoch) at which the read phase's fio was started.
  returned: when the read phase ran
  type: float
start_slack:
  description: Seconds left until I(start_at) when the read was ready to start (files checked) - the part of the
    playbook's margin (pod_perf_fio_start_margin) the launch did not use; negative when it started late.
  returned: when phase is read and start_at was given (and the files were there)
  type: float
late_by:
  description: Seconds the read started after I(start_at), when more than 2 (the Ansible launch took longer
    than the margin the playbook allowed - this node did not read together with the others for that long).
  returned: when phase is read, start_at was given and the read started more than 2 s late
  type: float
removed:
  description: The files I(phase=cleanup) removed.
  returned: when phase is cleanup
  type: list
  elements: str
files:
  description: The job -> directory/file plan.
  returned: always
  type: list
  elements: dict
jobfiles:
  description: The fio job files (layout, read) the phase runs; empty for I(phase=cleanup).
  returned: always
  type: dict
cleanup:
  description: C(ok), or what could not be removed.
  returned: unless check mode, except after a successful I(phase=layout) or a successful I(phase=read) with
    I(keep) (their files are kept)
  type: str
seconds:
  description: Wall-clock time of the whole test.
  returned: unless check mode
  type: float
"""

import os
import socket
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool, start_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_job import (PHASES, file_problems, file_stem,
    find_pattern, fio_limit, fio_outcome, job_plan, own_files, phases_to_run, read_problem, version_line)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.cmd import fio_size_bytes

LATE_TOLERANCE = 2.0  # seconds past start_at that still count as "on time"
MAX_WAIT = 600.0  # start_at further ahead than this is waited for this long only


def _probe(directory, timeout):
    """None if the directory answers a stat in time, else why not (bounded even on a dead NFS mount)."""
    r = run_tool(["stat", "-c", "%F", directory], timeout)
    if r.error:
        return "cannot check %s: %s" % (directory, r.error)
    if r.timed_out:
        return "%s did not answer within %ds (storage node down or mount hung?)" % (directory, timeout)
    if r.rc != 0:
        return "%s: %s" % (directory, (r.stderr or "not accessible").strip())
    return None


def _cleanup(paths, timeout):
    existing = [p for p in paths if p]
    if not existing:
        return "ok"
    r = run_tool(["rm", "-f", "--"] + existing, timeout)
    if r.timed_out:
        return "incomplete: rm did not finish within %ds (storage unreachable?): %s" % (timeout, " ".join(existing))
    if r.rc != 0:
        return "incomplete: %s" % (r.stderr.strip() or "rm exited %s" % r.rc)
    return "ok"


def _check_files(files, expected, timeout):
    """phase=read: None when every file exists with at least ``expected`` bytes (None: any size), else why not,
    naming the file. One bounded stat per directory, so a dead mount is named too."""
    by_dir = {}
    for f in files:
        by_dir.setdefault(f["directory"], []).append(os.path.join(f["directory"], f["filename"]))
    problems = []
    for directory, paths in by_dir.items():
        r = run_tool(["stat", "-c", "%s %n", "--"] + paths, timeout)
        if r.error:
            return "cannot check the files in %s: %s" % (directory, r.error)
        if r.timed_out:
            return "%s did not answer within %ds (storage node down or mount hung?)" % (directory, timeout)
        problems += file_problems(paths, r.stdout, expected)
    return read_problem(problems)


def _own_files(directories, stem, timeout):
    """phase=cleanup: (files named <stem><digits> in the directories, [directories that did not answer]).
    All directories are listed at once, so a dead mount costs ``timeout`` seconds once, not per directory."""
    pattern = find_pattern(stem)
    procs = [(d, start_tool(["find", d, "-maxdepth", "1", "-type", "f", "-name", pattern, "-print"]))
             for d in dict.fromkeys(directories)]
    deadline = time.time() + timeout
    found, dead = [], []
    for d, proc in procs:
        # past the bound: the group killed at once, not waited for (a find stuck on a dead mount)
        r = proc.finish(max(0.1, deadline - time.time()), grace=0)
        if r.timed_out:
            dead.append(d)
            continue
        found += own_files(stem, r.stdout.splitlines())  # a missing directory lists nothing: nothing to remove
    return found, dead


def main():
    module = AnsibleModule(
        argument_spec=dict(
            directories=dict(type="list", elements="path", required=True),
            phase=dict(type="str", default="all", choices=list(PHASES)),
            start_at=dict(type="float"),
            numjobs=dict(type="int", default=8),
            size=dict(type="str", default="1GiB"),
            runtime=dict(type="int", default=30),
            ramp_time=dict(type="int", default=0),
            bs=dict(type="str", default="1024KiB"),
            iodepth=dict(type="int", default=32),
            ioengine=dict(type="str", default="libaio"),
            direct=dict(type="bool", default=True),
            rate_iops=dict(type="int"),
            layout=dict(type="bool", default=True),
            prefix=dict(type="str", default="podfio"),
            timeout=dict(type="int"),
            probe_timeout=dict(type="int", default=15),
            create_dirs=dict(type="bool", default=False),
            fio_path=dict(type="str"),
            fail_on_error=dict(type="bool", default=False),
            keep=dict(type="bool", default=False),
            reuse=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    phase = p["phase"]
    if not p["directories"]:
        module.fail_json(msg="directories must name at least one directory")
    if p["start_at"] is not None and phase != "read":
        module.fail_json(msg="start_at is only used with phase=read")
    if p["keep"] and phase != "read":
        module.fail_json(msg="keep is only used with phase=read")
    if p["reuse"] and phase != "layout":
        module.fail_json(msg="reuse is only used with phase=layout")
    if (p["keep"] or p["reuse"]) and not p["direct"]:
        module.fail_json(msg="keep and reuse need direct=true: without O_DIRECT a kept file could be read from "
                             "this host's page cache instead of the storage")
    stem = file_stem(p["prefix"], socket.gethostname())
    files, jobfiles = job_plan(p, stem)
    out = {"phase": phase, "files": files, "jobfiles": jobfiles}
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", **out)

    def finish(status, reason=None, changed=None, **extra):
        out.update(extra)
        out["status"] = status
        if reason:
            out["reason"] = reason
        if status == "error" and p["fail_on_error"]:
            module.fail_json(msg=reason, **out)
        if changed is None:
            changed = status != "error" or bool(out.get("layout"))
        module.exit_json(changed=changed, **out)

    started = time.time()
    targets = [os.path.join(f["directory"], f["filename"]) for f in files]
    if phase == "cleanup":
        cleanup_phase(p, stem, started, finish)
    fio = p["fio_path"] or module.get_bin_path("fio")
    if not fio or not os.access(fio, os.X_OK):
        if phase == "read":  # the files of the layout phase go anyway
            clean = _cleanup(targets, max(p["probe_timeout"], 10))
            remove_dirs(p, [])
        else:
            clean = "ok"
        finish("error", "fio is not installed on this host", result={}, cleanup=clean,
               seconds=round(time.time() - started, 1))
    created = []
    if phase != "read":
        why = prepare_dirs(p, created)
        if why:
            if remove_dirs_after(phase):
                remove_dirs(p, created)
            finish("error", why, result={}, cleanup="ok", seconds=round(time.time() - started, 1))
    if phase == "layout" and p["reuse"]:  # kept by an earlier read with keep: nothing to write
        out["reused"] = bool(files) and _check_files(files, fio_size_bytes(p["size"]), p["probe_timeout"]) is None
        if out["reused"]:
            finish("ok", changed=False, result={}, seconds=round(time.time() - started, 1))
    limit = fio_limit(p["timeout"], p["runtime"], p["ramp_time"])
    tmpdir = tempfile.mkdtemp(prefix="pod_fio.")
    reason = None
    keep = False
    try:
        if phase == "read":
            reason = _check_files(files, fio_size_bytes(p["size"]), p["probe_timeout"])
            if not reason and p["start_at"] is not None:
                slack = p["start_at"] - time.time()
                out["start_slack"] = round(slack, 2)
                time.sleep(max(0.0, min(MAX_WAIT, slack)))
                late = time.time() - p["start_at"]
                if late > LATE_TOLERANCE:
                    out["late_by"] = round(late, 1)
        phases = [] if reason else phases_to_run(phase, p["layout"])
        for name in phases:
            reason = run_fio(fio, tmpdir, name, jobfiles[name], limit, out)
            if reason:
                break
        keep = not reason and (phase == "layout" or (phase == "read" and p["keep"]))
    finally:
        if not keep:
            out["cleanup"] = _cleanup(read_leftovers(p, stem, targets, reason), max(p["probe_timeout"], 10))
        for name in os.listdir(tmpdir):
            os.remove(os.path.join(tmpdir, name))
        os.rmdir(tmpdir)
        if not keep and remove_dirs_after(phase):
            remove_dirs(p, created)
    out.setdefault("result", {})
    out["seconds"] = round(time.time() - started, 1)
    if reason:
        finish("error", reason)
    if keep and phase == "read":
        out["kept"] = True
    if out.get("cleanup", "ok") != "ok":
        finish("error", "test ran but its files were not all removed: %s" % out["cleanup"])
    finish("ok")


def read_leftovers(p, stem, targets, reason):
    """What a phase that does not keep its files removes: its own files, and after a successful read (its
    directories answered) also any other job number of this stem - what phase=cleanup would find, such as the
    files of an interrupted earlier run with more jobs - so the role needs no clean-up task after such a read."""
    if reason or p["phase"] not in ("read", "all"):
        return targets
    found, _ = _own_files(p["directories"], stem + ".", p["probe_timeout"])
    return list(dict.fromkeys(targets + found))


def prepare_dirs(p, created):
    """Probe (create_dirs - create) every directory, bounded; None, or why not. Created ones go to ``created``."""
    for d in p["directories"]:
        if p["create_dirs"]:
            why = _probe(os.path.dirname(d.rstrip("/")) or "/", p["probe_timeout"])
            if not why and _probe(d, p["probe_timeout"]):
                r = run_tool(["mkdir", "--", d], p["probe_timeout"])
                if r.timed_out:
                    why = "cannot create %s: timed out" % d
                elif r.rc == 0:
                    created.append(d)
                elif _probe(d, p["probe_timeout"]):
                    # not a failure when it exists now: every node of a step lays out at once, and on a shared
                    # namespace (one export behind every mount) another node may have made it since the probe
                    why = "cannot create %s: %s" % (d, r.stderr.strip())
        else:
            why = _probe(d, p["probe_timeout"])
        if why:
            return why
    return None


def remove_dirs_after(phase):
    """Whether a phase that ends without keeping its files removes the empty directories. Not a layout: every node
    of a step lays out at the same moment into the same directories of a shared export, and a failed node's rmdir
    found empty the directory another node had just probed and was about to write into, which made that node's
    layout fail too (seen in the three-node role test, session 19). The read and cleanup phases come after every
    node's layout (the step's barrier) and remove them."""
    return phase != "layout"


def remove_dirs(p, created, skip=()):
    # every node tries: on a shared namespace (one Isilon export behind every mount) another node may
    # have created the directory, and only the last one to finish finds it empty
    for d in reversed(p["directories"] if p["create_dirs"] else created):
        if d not in skip:
            run_tool(["rmdir", "--", d], p["probe_timeout"])


def fio_version(fio):
    """`fio --version` ("fio-3.33"), or "version unknown"."""
    r = run_tool([fio, "--version"], 10)
    return version_line(r.rc, r.stdout)


def run_fio(fio, tmpdir, phase, jobfile, limit, out):
    """One fio phase; its parsed result goes to out (read -> result, layout -> layout). None, or why it failed."""
    path = os.path.join(tmpdir, "%s.fio" % phase)
    with open(path, "w") as fh:
        fh.write(jobfile)
    if phase == "read":
        out["started_at"] = round(time.time(), 3)
    r = run_tool([fio, "--output-format=json", path], limit)
    parsed, why = fio_outcome(phase, r.rc, r.stdout, r.stderr, r.timed_out, limit, socket.gethostname().split(".")[0],
                              lambda: fio_version(fio))
    out["result" if phase == "read" else "layout"] = parsed
    return why


def cleanup_phase(p, stem, started, finish):
    """phase=cleanup: remove this prefix's files (any job number) and, with create_dirs, the empty directories."""
    found, dead = _own_files(p["directories"], stem + ".", p["probe_timeout"])
    clean = _cleanup(found, max(p["probe_timeout"], 10))
    remove_dirs(p, [], skip=dead)  # a directory that did not answer would only cost another timeout
    problems = [] if clean == "ok" else [clean]
    problems += ["%s did not answer within %ds (storage node down or mount hung?): its files, if any, are left"
                 % (d, p["probe_timeout"]) for d in dead]
    status = "error" if problems else "ok"
    finish(status, "; ".join(problems) or None, changed=bool(found), removed=found if clean == "ok" else [],
           result={}, cleanup="; ".join(problems) or "ok", seconds=round(time.time() - started, 1))


if __name__ == "__main__":
    main()
