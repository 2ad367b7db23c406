# -*- coding: utf-8 -*-
"""A validation job as a Slurm batch job (issue 20: the NCCL and training stages through Slurm). Pure, stdlib.

* :func:`sbatch_argv` builds ``sbatch --wait --parsable -N <n> -w <nodes> -p <partition> --exclusive -o <file>
  [-J <name>] [-t <minutes>] [--gres=gpu:<g>] --wrap <command>`` for a launch command (the argv the stage runs
  today, e.g. ``podman exec mpi-dgx timeout 605 mpirun -H ... all_reduce_perf ...``). Slurm allocates exactly
  those DGX, whole (``--exclusive``: no other job shares them while NCCL measures), runs the command once on the
  allocation's first node (the batch host: the first of the nodes in slurm.conf's order), writes its stdout and
  stderr to the output file there, and ``--wait`` makes sbatch return the command's exit code.
* :func:`parse_sbatch` reads what ``sbatch --parsable`` printed (``<job id>[;<cluster>]``) and
  :func:`sbatch_outcome` tells a job that ran (and its exit code) from a submission Slurm refused.
* :func:`salloc_argv` is the prefix that allocates the DGX and runs the launch command on the launcher itself
  (the NCCL stage's path: the output comes back as today); :func:`salloc_outcome` reads salloc's own lines.
* :func:`parse_scontrol_job` reads ``scontrol show job -o <id>`` (JobState, ExitCode, Reason, NodeList,
  BatchHost): after ``--wait`` it says whether the job COMPLETED, FAILED, hit its TIMEOUT or was CANCELLED.

Proven against a real slurmctld/slurmd in tests/unit/test_slurm_daemons.py (docs/slurm.md).
"""
from __future__ import annotations

import math
import re
import shlex
from typing import Any, Dict, Optional, Sequence, Union

from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.parse import node_states, parse_sinfo

NODE_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")  # one Slurm node name: no ',' (a list), no '/' (a file)
PARTITION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")
JOB_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class SlurmJobError(ValueError):
    """An argument sbatch would misread (a node list that looks like a file, an empty command, ...)."""


def sbatch_argv(command: Union[Sequence[str], str], nodes: Sequence[str], partition: str, output: str,
                job_name: str = "dgxpod", time_limit_s: Optional[float] = None, gpus_per_node: Optional[int] = None,
                exclusive: bool = True, sbatch: str = "sbatch") -> list:
    """The sbatch argv that runs ``command`` (an argv, shell-quoted into ``--wrap``, or a shell string) on
    exactly ``nodes`` in ``partition`` and waits for it.

    ``time_limit_s``: Slurm's limit (``-t``, whole minutes, rounded up, at least 1) - give it the stage's own
    timeout plus a margin so Slurm ends a hung job and frees the DGX. ``gpus_per_node``: ``--gres=gpu:<n>``
    (the job then owns the GPUs in Slurm's accounting; the MPI containers do not read CUDA_VISIBLE_DEVICES).
    ``output``: absolute path on the batch host (sbatch's filename pattern: ``%j`` is the job id)."""
    nodes = _checked_allocation(nodes, partition, job_name)
    if not str(output).startswith("/"):
        raise SlurmJobError("output %r: give an absolute path (slurmd writes it on the batch host)" % (output,))
    text = command if isinstance(command, str) else shlex.join([str(a) for a in command])
    if not text.strip():
        raise SlurmJobError("empty command")
    argv = [sbatch, "--wait", "--parsable", "-N", str(len(nodes)), "-w", ",".join(nodes), "-p", str(partition)]
    if exclusive:
        argv.append("--exclusive")
    argv += ["-o", str(output), "-J", job_name]
    return argv + _limits(time_limit_s, gpus_per_node) + ["--wrap", text]


def _checked_allocation(nodes: Sequence[str], partition: str, job_name: str) -> list:
    """The node names as strings, once each; raises on what sbatch/salloc would misread."""
    nodes = [str(n) for n in nodes]
    if not nodes:
        raise SlurmJobError("no nodes to allocate")
    bad = [n for n in nodes if not NODE_RE.match(n)]
    if bad:
        raise SlurmJobError("not Slurm node names: %s" % ", ".join(repr(b) for b in bad))
    if len(set(nodes)) != len(nodes):
        raise SlurmJobError("a node is listed twice: %s" % ", ".join(nodes))
    if not PARTITION_RE.match(str(partition)):
        raise SlurmJobError("partition %r: use letters, digits, '_', '-', '.'" % (partition,))
    if not JOB_NAME_RE.match(job_name):
        raise SlurmJobError("job name %r: use letters, digits, '_', '-', '.'" % (job_name,))
    return nodes


def _limits(time_limit_s: Optional[float], gpus_per_node: Optional[int]) -> list:
    argv = []
    if time_limit_s is not None:
        argv += ["-t", str(max(1, int(math.ceil(float(time_limit_s) / 60.0))))]
    if gpus_per_node:
        argv.append("--gres=gpu:%d" % int(gpus_per_node))
    return argv


def salloc_argv(nodes: Sequence[str], partition: str, job_name: str = "dgxpod", time_limit_s: Optional[float] = None,
                wait_s: Optional[int] = None, gpus_per_node: Optional[int] = None, exclusive: bool = True,
                salloc: str = "salloc") -> list:
    """The ``salloc`` prefix that allocates exactly ``nodes`` (whole, ``--exclusive``) and then runs the command
    that follows it HERE, on the submitting host - the launching DGX, one of the nodes - with the command's
    stdout, stderr and exit code passed straight through (measured on Slurm 22.05.8:
    tests/unit/test_slurm_daemons.py). That is why the NCCL stage uses salloc and not sbatch: sbatch runs its
    script on the allocation's first node in slurm.conf's order, which is not always the launcher of a pair,
    and leaves the output in a file there.

    ``wait_s``: ``--immediate=<s>``, give up when Slurm has not allocated the nodes within that many seconds (a
    drained or busy DGX), instead of waiting for ever; salloc then exits 1 with Slurm's reason on stderr
    (:func:`salloc_outcome`). ``time_limit_s``: Slurm's limit (``-t``, minutes rounded up): the stage's timeout
    plus a margin, so Slurm frees the DGX even if the launcher dies."""
    nodes = _checked_allocation(nodes, partition, job_name)
    argv = [salloc, "-N", str(len(nodes)), "-w", ",".join(nodes), "-p", str(partition)]
    if exclusive:
        argv.append("--exclusive")
    argv += ["-J", job_name]
    if wait_s is not None:
        argv.append("--immediate=%d" % max(1, int(wait_s)))
    return argv + _limits(time_limit_s, gpus_per_node)


_SALLOC_GRANTED = re.compile(r"^salloc: Granted job allocation (\d+)", re.M)
_SALLOC_PENDING = re.compile(r"^salloc: Pending job allocation (\d+)", re.M)
_SALLOC_PROGRESS = re.compile(r"salloc: (Pending job|job \d+ queued|Job allocation|Relinquishing|Granted)")


def salloc_outcome(rc: Optional[int], stderr: str, timed_out: bool = False) -> Dict[str, Any]:
    """What salloc's own lines on stderr (``salloc: ...``; the command's lines are left alone) say about the
    allocation: {granted, job_id, pending (it had to wait), error} - ``error`` is None when the nodes were
    allocated (the command's own result is judged by its caller), else why not: Slurm's error lines and its
    wait reason (``Required node not available (down, drained or reserved)``), or that the stage's timeout
    ended the wait. ``rc`` is salloc's exit code (the command's when granted); None when it was killed."""
    text = stderr or ""
    granted = _SALLOC_GRANTED.search(text)
    pending = _SALLOC_PENDING.search(text)
    job_id = int((granted or pending).group(1)) if (granted or pending) else None
    out: Dict[str, Any] = {"granted": granted is not None, "job_id": job_id, "pending": pending is not None,
                           "error": None}
    if granted:
        return out
    lines = [ln.strip() for ln in text.splitlines() if ln.startswith("salloc: ")]
    errors = [ln[len("salloc: error: "):] for ln in lines if ln.startswith("salloc: error: ")]
    waits = [ln[len("salloc: "):] for ln in lines
             if not ln.startswith("salloc: error: ") and not _SALLOC_PROGRESS.match(ln)]
    parts = errors + waits
    if timed_out:
        parts.append("no allocation before the stage's timeout")
    out["error"] = "; ".join(parts) or (text.strip()[-300:] or "salloc exited %s without an allocation" % rc)
    return out


def parse_sbatch(stdout: str) -> Optional[Dict[str, Any]]:
    """``<job id>[;<cluster>]`` (sbatch --parsable; the first such line) -> {job_id, cluster}, or None."""
    for line in (stdout or "").splitlines():
        m = re.match(r"^\s*(\d+)(?:;(\S+))?\s*$", line)
        if m:
            return {"job_id": int(m.group(1)), "cluster": m.group(2)}
    return None


def sbatch_outcome(rc: int, stdout: str, stderr: str, shown: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """What ``sbatch --wait --parsable`` told: ``submitted`` (a job id was printed), ``job_id``, ``rc`` (with
    ``--wait``: the job's exit code, 1 if a signal ended it), ``state``, ``ok``, and ``error`` - Slurm's own
    line (``sbatch: error: ...``) when the submission was refused, or why the job did not complete.

    ``shown``: :func:`parse_scontrol_job` of the job after sbatch returned. Pass it: measured on Slurm 22.05.8,
    a job cancelled while it was still pending (a drained DGX, scancel at the stage's timeout) makes
    ``sbatch --wait`` return 0 with nothing run; only JobState=CANCELLED tells. ``ok`` needs COMPLETED then."""
    job = parse_sbatch(stdout)
    errors = [ln.strip() for ln in (stderr or "").splitlines() if "error" in ln.lower()]
    state = (shown or {}).get("state")
    out: Dict[str, Any] = {"submitted": job is not None, "job_id": job["job_id"] if job else None, "rc": rc,
                           "state": state, "ok": job is not None and rc == 0 and state in (None, "COMPLETED"),
                           "error": None}
    if job is None:
        out["error"] = "; ".join(errors) or (stderr or "").strip()[-300:] or "sbatch printed no job id (rc %s)" % rc
    elif state not in (None, "COMPLETED"):
        out["error"] = "job %d %s (exit code %s%s)" % (job["job_id"], state, rc, ", reason %s" % shown["reason"]
                                                       if shown.get("reason") else "")
    elif rc != 0:
        out["error"] = "job %d ended with exit code %d%s" % (job["job_id"], rc,
                                                              (": " + "; ".join(errors)) if errors else "")
    return out


_JOB_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z_:/]*)=")


def parse_scontrol_job(text: str) -> Dict[str, Any]:
    """``scontrol show job -o <id>`` (one line of ``Key=Value``; Command=/WorkDir= and others may hold
    spaces) -> {job_id, state, exit_code, signal, reason, nodes, batch_host, fields}."""
    line = next((ln for ln in (text or "").splitlines() if ln.startswith("JobId=")), None)
    if line is None:
        raise ValueError("no JobId= line in scontrol show job output")
    marks = [(m.start(1), m.end(), m.group(1)) for m in _JOB_FIELD.finditer(line)]
    fields: Dict[str, str] = {}
    for i, (_start, value_start, key) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(line)
        fields.setdefault(key, line[value_start:end].strip())
    code, _, sig = (fields.get("ExitCode") or "0:0").partition(":")
    reason = fields.get("Reason")
    return {"job_id": int(fields["JobId"]), "state": (fields.get("JobState") or "UNKNOWN").upper(),
            "exit_code": int(code) if code.isdigit() else None, "signal": int(sig) if sig.isdigit() else None,
            "reason": None if reason in (None, "None", "(null)") else reason, "nodes": fields.get("NodeList"),
            "batch_host": fields.get("BatchHost"), "fields": fields}


def squeue_argv(job_name: str, squeue: str = "squeue") -> list:
    """``squeue -h -n <name> -o '%i|%T|%r'``: the jobs of that name, their state and why they wait."""
    return [squeue, "-h", "-n", job_name, "-o", "%i|%T|%r"]


def parse_squeue(text: str) -> list:
    """``squeue -h -o '%i|%T|%r'`` -> [{job_id, state, reason}] (reason None when 'None')."""
    out = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        parts = line.strip().split("|", 2)
        if len(parts) < 2 or not parts[0].isdigit():
            raise ValueError("not squeue -o '%%i|%%T|%%r' output: %r" % line)
        reason = parts[2] if len(parts) > 2 else None
        out.append({"job_id": int(parts[0]), "state": parts[1].upper(),
                    "reason": None if reason in (None, "", "None") else reason})
    return out


def scancel_argv(job_name: str, scancel: str = "scancel") -> list:
    """``scancel --name <name>``: ends a job that waits or hangs past the stage's timeout. By name, not id:
    ``sbatch --wait --parsable`` printing to a pipe may not flush the id before it exits."""
    if not JOB_NAME_RE.match(job_name):
        raise SlurmJobError("job name %r: use letters, digits, '_', '-', '.'" % (job_name,))
    return [scancel, "--name", job_name]


def sinfo_nodes_argv(nodes: Sequence[str], sinfo: str = "sinfo") -> list:
    """``sinfo -N -h -n <nodes> -o '%N|%t|%E'``: the state and reason of just those nodes."""
    return [sinfo, "-N", "-h", "-n", ",".join(str(n) for n in nodes), "-o", "%N|%t|%E"]


def allocation_blame(nodes: Sequence[str], sinfo_text: str) -> Dict[str, str]:
    """node -> why Slurm could not give it to the job, from :func:`sinfo_nodes_argv`'s output: a node Slurm does
    not list, or one that is down, drained, failing, not responding or allocated to another job. Empty when
    every node was idle (then the partition, a limit or the wait itself is to blame, and salloc said so)."""
    states = node_states(parse_sinfo(sinfo_text))
    out: Dict[str, str] = {}
    for n in nodes:
        st = states.get(n)
        if st is None:
            out[n] = "not a node of this Slurm cluster"
            continue
        what = st["state"] + ("" if st["responding"] else ", not responding")
        if st["drain"] or not st["responding"] or st["state"] not in ("idle",):
            out[n] = "%s in Slurm%s" % (what, ": " + st["reason"] if st.get("reason") else "")
    return out
