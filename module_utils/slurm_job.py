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
* :func:`parse_scontrol_job` reads ``scontrol show job -o <id>`` (JobState, ExitCode, Reason, NodeList,
  BatchHost): after ``--wait`` it says whether the job COMPLETED, FAILED, hit its TIMEOUT or was CANCELLED.

Proven against a real slurmctld/slurmd in tests/unit/test_slurm_daemons.py (docs/slurm.md).
"""
from __future__ import annotations

import math
import re
import shlex
from typing import Any, Dict, Optional, Sequence, Union

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
    if not str(output).startswith("/"):
        raise SlurmJobError("output %r: give an absolute path (slurmd writes it on the batch host)" % (output,))
    if not JOB_NAME_RE.match(job_name):
        raise SlurmJobError("job name %r: use letters, digits, '_', '-', '.'" % (job_name,))
    text = command if isinstance(command, str) else shlex.join([str(a) for a in command])
    if not text.strip():
        raise SlurmJobError("empty command")
    argv = [sbatch, "--wait", "--parsable", "-N", str(len(nodes)), "-w", ",".join(nodes), "-p", str(partition)]
    if exclusive:
        argv.append("--exclusive")
    argv += ["-o", str(output), "-J", job_name]
    if time_limit_s is not None:
        argv += ["-t", str(max(1, int(math.ceil(float(time_limit_s) / 60.0))))]
    if gpus_per_node:
        argv.append("--gres=gpu:%d" % int(gpus_per_node))
    return argv + ["--wrap", text]


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
