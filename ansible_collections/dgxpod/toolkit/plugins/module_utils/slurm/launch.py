# -*- coding: utf-8 -*-
"""A stage's MPI job inside a Slurm allocation (issue 20), shared by library/pod_nccl and library/pod_train.

:data:`ARGUMENT_SPEC` is the modules' Slurm options (``scheduler``, ``slurm_partition``, ``slurm_wait``,
``slurm_job_name``, ``slurm_gpus_per_node``, ``slurm_conf``; documented by the doc fragment
``dgxpod.toolkit.slurm_launch``). :func:`start` turns them into the ``salloc`` prefix of the launch command
(``module_utils/slurm/job.salloc_argv``: the command still runs on the launcher, so its output is read as without
Slurm) and :func:`settle` reads what salloc said once ``mpi_job.run_job`` returned: it cancels the job by name
after a timeout and, when Slurm did not allocate the nodes, gives the error (Slurm's words) and the nodes
``sinfo`` shows unavailable. Runs subprocesses (sinfo, scancel); the decisions are slurm_job's pure functions.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.job import (allocation_blame, salloc_argv,
    salloc_outcome, scancel_argv, sinfo_nodes_argv)

ARGUMENT_SPEC = dict(
    scheduler=dict(type="str", choices=["none", "slurm"], default="none"),
    slurm_partition=dict(type="str", default="dgx"),
    slurm_wait=dict(type="int", default=120),
    slurm_job_name=dict(type="str"),
    slurm_gpus_per_node=dict(type="int", default=0),
    slurm_conf=dict(type="path"),
)
TIME_LIMIT_MARGIN_S = 60  # Slurm's -t: the stage's own timeout plus this, so Slurm frees the DGX if all else fails


def start(params: Dict[str, Any], nodes: Sequence[str], job_name: str, timeout_s: float,
          get_bin: Callable[[str], Optional[str]]) -> Tuple[List[str], Optional[Dict[str, Any]]]:
    """(salloc prefix, the result's ``slurm`` record) for ``scheduler: slurm``; ([], None) otherwise. Sets
    SLURM_CONF for the Slurm commands when ``slurm_conf`` is given. Raises slurm_job.SlurmJobError on a node,
    partition or job name Slurm would misread."""
    if params.get("scheduler") != "slurm":
        return [], None
    name = params.get("slurm_job_name") or job_name
    prefix = salloc_argv(list(nodes), params["slurm_partition"], job_name=name,
                         time_limit_s=float(timeout_s) + TIME_LIMIT_MARGIN_S, wait_s=params["slurm_wait"],
                         gpus_per_node=params.get("slurm_gpus_per_node") or None,
                         salloc=get_bin("salloc") or "salloc")
    if params.get("slurm_conf"):
        os.environ["SLURM_CONF"] = params["slurm_conf"]
    return prefix, {"job_name": name, "partition": params["slurm_partition"], "wait_s": params["slurm_wait"],
                    "job_id": None, "granted": False, "pending": False, "error": None}


def wait_s(slurm: Optional[Dict[str, Any]]) -> float:
    """Seconds the allocation may take on top of the run's own timeout (0 without Slurm)."""
    return float(slurm["wait_s"]) if slurm else 0.0


def _run(argv: List[str], timeout: float = 30) -> Tuple[Optional[int], str, str]:
    """sinfo/scancel, bounded (common/run.py: the group killed at the bound); a missing binary is rc None."""
    r = run_tool(argv, timeout)
    if r.error:
        return None, "", r.error
    return r.rc, r.stdout, r.stderr


def settle(job: Dict[str, Any], nodes: Sequence[str], slurm: Optional[Dict[str, Any]],
           get_bin: Callable[[str], Optional[str]]) -> Optional[Dict[str, Any]]:
    """After ``mpi_job.run_job`` (with :func:`start`'s prefix): fill ``slurm`` (job_id, granted, pending, error),
    ``scancel --name`` the job when the run timed out (a killed salloc leaves its job allocated), and return None
    when the nodes were allocated (the run is judged as without Slurm) or there is no Slurm (``slurm`` None), else
    {error, failed_hosts}: Slurm's words and the nodes sinfo shows drained, down, busy or unknown (none named: a
    partition, limit or Slurm-wide problem, which must not be blamed on a DGX)."""
    if slurm is None:
        return None
    alloc = salloc_outcome(job.get("rc"), job.get("stderr") or "", bool(job.get("timed_out")))
    slurm.update(job_id=alloc["job_id"], granted=alloc["granted"], pending=alloc["pending"], error=alloc["error"])
    if job.get("timed_out"):
        rc, _, err = _run(scancel_argv(slurm["job_name"], get_bin("scancel") or "scancel"))
        slurm["cancelled"] = "rc %s %s" % (rc, err.strip()[-200:])
    if alloc["granted"]:
        return None
    rc, out, _ = _run(sinfo_nodes_argv(nodes, get_bin("sinfo") or "sinfo"))
    try:
        blame = allocation_blame(nodes, out) if rc == 0 else {}
    except ValueError:
        blame = {}
    where = "; ".join("%s: %s" % (n, blame[n]) for n in nodes if n in blame)
    return {"error": "Slurm did not allocate %s (partition %s) within %ss: %s%s"
                     % (",".join(nodes), slurm["partition"], slurm["wait_s"], alloc["error"],
                        "; " + where if where else ""),
            "failed_hosts": blame}
