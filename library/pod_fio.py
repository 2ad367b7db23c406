#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: the RA's fio read job on this host's data directories; parsed result; files always removed."""
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
  - The files (named after the host, so nodes sharing an export never collide) and the job files are
    B(always removed), also after a failure or a timeout. Every step is bounded - a directory that does
    not answer (storage node down) is reported within I(probe_timeout) seconds, fio is killed after
    I(timeout) seconds.
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
    description: Run the layout (write) phase first. Without it fio lays files out itself, unmeasured.
    type: bool
    default: true
  prefix:
    description: File name prefix; files are C(<prefix>.<host>.<job>).
    type: str
    default: podfio
  timeout:
    description: Seconds after which a phase's fio is killed (default - 2 x (ramp_time + runtime) + 120).
    type: int
  create_dirs:
    description:
      - Create missing I(directories) (one level, below an existing mount point) before the test and remove
        them afterwards when they are empty (C(rmdir); on a shared export the last node to finish does).
        Each step is bounded by I(probe_timeout), so a dead mount costs
        one probe, not a hung task.
    type: bool
    default: false
  probe_timeout:
    description: Seconds a directory has to answer C(stat) before it is reported unreachable.
    type: int
    default: 15
  fio_path:
    description: fio binary (default - found in PATH).
    type: str
  fail_on_error:
    description: Fail the task when the test could not run or a job failed.
    type: bool
    default: false
notes:
  - Supports check mode - nothing runs, no file is created; I(jobfiles) shows what would run.
  - A process blocked on an unreachable NFS server cannot always be killed; the module then gives up
    waiting after the timeout, reports the error and that the clean-up may be incomplete.
author:
  - DGX pod toolkit contributors
"""

EXAMPLES = r"""
- name: Storage read test on this DGX (quick profile)
  pod_fio:
    directories: [/mnt/isilon1/fio, /mnt/isilon2/fio, /mnt/isilon3/fio, /mnt/isilon4/fio]
    numjobs: 8
    size: 256MiB
    runtime: 10
  register: fio
"""

RETURN = r"""
status:
  description: C(ok), C(error) (see I(reason)) or C(skipped) (check mode).
  returned: always
  type: str
reason:
  description: Why the test failed to run or which jobs reported errors.
  returned: when status is error
  type: str
result:
  description: Parsed read phase (module_utils/fio_parse.py) - jobs, aggregate.read.bw_bytes, iops,
    clat_percentiles_ns, errors, version.
  returned: unless check mode
  type: dict
layout:
  description: Parsed layout (write) phase.
  returned: when layout ran
  type: dict
files:
  description: The job -> directory/file plan.
  returned: always
  type: list
  elements: dict
jobfiles:
  description: The fio job files (layout, read).
  returned: always
  type: dict
cleanup:
  description: C(ok), or what could not be removed.
  returned: unless check mode
  type: str
seconds:
  description: Wall-clock time of the whole test.
  returned: unless check mode
  type: float
"""

import os
import signal
import socket
import subprocess
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.fio_parse import parse_fio
from ansible.module_utils.perf_cmd import fio_jobfile
from ansible.module_utils.perf_plan import fio_files


def _run_bounded(argv, timeout):
    """(rc, stdout, stderr, timed_out). fio runs in its own process group, killed as a whole on timeout."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=dict(os.environ, LC_ALL="C"))
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                pass
            try:
                out, err = proc.communicate(timeout=5)
                return proc.returncode, out or "", err or "", True
            except subprocess.TimeoutExpired:
                continue
        return None, "", "", True  # stuck in the kernel (dead NFS server): abandoned


def _probe(directory, timeout):
    """None if the directory answers a stat in time, else why not (bounded even on a dead NFS mount)."""
    try:
        rc, _, err, timed_out = _run_bounded(["stat", "-c", "%F", directory], timeout)
    except OSError as exc:
        return "cannot check %s: %s" % (directory, exc)
    if timed_out:
        return "%s did not answer within %ds (storage node down or mount hung?)" % (directory, timeout)
    if rc != 0:
        return "%s: %s" % (directory, (err or "not accessible").strip())
    return None


def _cleanup(paths, timeout):
    existing = [p for p in paths if p]
    if not existing:
        return "ok"
    rc, _, err, timed_out = _run_bounded(["rm", "-f", "--"] + existing, timeout)
    if timed_out:
        return "incomplete: rm did not finish within %ds (storage unreachable?): %s" % (timeout, " ".join(existing))
    if rc != 0:
        return "incomplete: %s" % (err.strip() or "rm exited %s" % rc)
    return "ok"


def main():
    module = AnsibleModule(
        argument_spec=dict(
            directories=dict(type="list", elements="path", required=True),
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
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not p["directories"]:
        module.fail_json(msg="directories must name at least one directory")
    host = socket.gethostname().split(".")[0]
    files = fio_files(p["directories"], p["numjobs"], prefix="%s.%s" % (p["prefix"], host))
    common = dict(bs=p["bs"], ioengine=p["ioengine"], iodepth=p["iodepth"], direct=p["direct"], size=p["size"],
                  runtime=p["runtime"], ramp_time=p["ramp_time"], rate_iops=p["rate_iops"])
    jobfiles = {"read": fio_jobfile(files, "read", **common)}
    if p["layout"]:
        jobfiles["layout"] = fio_jobfile(files, "layout", **common)
    out = {"files": files, "jobfiles": jobfiles}
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", **out)

    def finish(status, reason=None, **extra):
        out.update(extra)
        out["status"] = status
        if reason:
            out["reason"] = reason
        if status == "error" and p["fail_on_error"]:
            module.fail_json(msg=reason, **out)
        module.exit_json(changed=status != "error" or bool(out.get("layout")), **out)

    fio = p["fio_path"] or module.get_bin_path("fio")
    if not fio or not os.access(fio, os.X_OK):
        finish("error", "fio is not installed on this host", result={}, cleanup="ok", seconds=0.0)
    started = time.time()
    created = []

    def remove_created():
        # every node tries: on a shared namespace (one Isilon export behind every mount) another node may
        # have created the directory, and only the last one to finish finds it empty
        for d in reversed(p["directories"] if p["create_dirs"] else created):
            _run_bounded(["rmdir", "--", d], p["probe_timeout"])

    for d in p["directories"]:
        if p["create_dirs"]:
            why = _probe(os.path.dirname(d.rstrip("/")) or "/", p["probe_timeout"])
            if not why and _probe(d, p["probe_timeout"]):
                rc, _, err, timed_out = _run_bounded(["mkdir", "--", d], p["probe_timeout"])
                if timed_out or rc != 0:
                    why = "cannot create %s: %s" % (d, "timed out" if timed_out else err.strip())
                else:
                    created.append(d)
        else:
            why = _probe(d, p["probe_timeout"])
        if why:
            remove_created()
            finish("error", why, result={}, cleanup="ok", seconds=round(time.time() - started, 1))
    limit = p["timeout"] or 2 * (p["ramp_time"] + p["runtime"]) + 120
    targets = [os.path.join(f["directory"], f["filename"]) for f in files]
    tmpdir = tempfile.mkdtemp(prefix="pod_fio.")
    reason = None
    try:
        phases = (["layout"] if p["layout"] else []) + ["read"]
        for phase in phases:
            path = os.path.join(tmpdir, "%s.fio" % phase)
            with open(path, "w") as fh:
                fh.write(jobfiles[phase])
            rc, stdout, stderr, timed_out = _run_bounded([fio, "--output-format=json", path], limit)
            parsed = parse_fio(stdout)
            out["result" if phase == "read" else "layout"] = parsed
            if timed_out:
                reason = "fio %s phase did not finish within %ds (killed)" % (phase, limit)
                break
            if parsed["status"] != "ok":
                detail = parsed["error"]
                if not parsed["jobs"]:
                    detail = (stderr.strip().splitlines() or ["fio exited %s" % rc])[-1]
                reason = "fio %s phase: %s" % (phase, detail)
                break
    finally:
        out["cleanup"] = _cleanup(targets, max(p["probe_timeout"], 10))
        for name in os.listdir(tmpdir):
            os.remove(os.path.join(tmpdir, name))
        os.rmdir(tmpdir)
        remove_created()
    out.setdefault("result", {})
    out["seconds"] = round(time.time() - started, 1)
    if reason:
        finish("error", reason)
    if out["cleanup"] != "ok":
        finish("error", "test ran but its files were not all removed: %s" % out["cleanup"])
    finish("ok")


if __name__ == "__main__":
    main()
