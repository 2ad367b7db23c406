"""module_utils/slurm/job.py: the sbatch argv of a validation job through Slurm and what sbatch/scontrol say
about it (issue 20). The scontrol fixtures are real Slurm 22.05.8 output from test_slurm_daemons.py
(SLURM_GOLDEN_REGEN=1 rewrites them); the argv itself runs there against a real slurmd."""
from __future__ import annotations

import os
import shlex

import pytest

from inventory_util import ROOT
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import mpirun_argv, timeout_argv
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import job as slurm_job

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "slurm")


def _read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def test_the_nccl_launch_as_an_sbatch_job():
    inner = timeout_argv(605, mpirun_argv(["10.0.0.1", "10.0.0.2"], "enp1s0", 2222, command=[
        "/opt/nccl-tests/build/all_reduce_perf", "-b", "8M", "-e", "8G"], ranks_per_node=8,
        env={"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}))
    launch = ["podman", "exec", "mpi-dgx"] + inner
    argv = slurm_job.sbatch_argv(launch, ["DGX1-1", "DGX1-2"], "dgx", "/var/tmp/dgxpod-nccl-%j.out",
                                 job_name="dgxpod-nccl", time_limit_s=605 + 60, gpus_per_node=8)
    assert argv[:13] == ["sbatch", "--wait", "--parsable", "-N", "2", "-w", "DGX1-1,DGX1-2", "-p", "dgx",
                         "--exclusive", "-o", "/var/tmp/dgxpod-nccl-%j.out", "-J"]
    assert argv[13:19] == ["dgxpod-nccl", "-t", "12", "--gres=gpu:8", "--wrap", shlex.join(launch)]
    assert shlex.split(argv[-1]) == launch  # the shell sbatch wraps it in gets the same argv back


def test_shell_strings_limits_and_options():
    argv = slurm_job.sbatch_argv("echo a; exit 3", ["n1"], "p", "/o", exclusive=False, sbatch="/usr/bin/sbatch")
    assert argv == ["/usr/bin/sbatch", "--wait", "--parsable", "-N", "1", "-w", "n1", "-p", "p", "-o", "/o", "-J",
                    "dgxpod", "--wrap", "echo a; exit 3"]
    assert slurm_job.sbatch_argv("x", ["n1"], "p", "/o", time_limit_s=1)[-3] == "1"    # at least a minute
    assert slurm_job.sbatch_argv("x", ["n1"], "p", "/o", time_limit_s=121)[-3] == "3"  # rounded up


@pytest.mark.parametrize("kw,words", [
    ({"nodes": []}, "no nodes"),
    ({"nodes": ["DGX1-1,DGX1-2"]}, "not Slurm node names"),
    ({"nodes": ["/etc/hosts"]}, "not Slurm node names"),   # sbatch -w reads a '/' as a file of names
    ({"nodes": ["n1", "n1"]}, "listed twice"),
    ({"partition": "dgx 1"}, "partition"),
    ({"output": "out.txt"}, "absolute path"),
    ({"command": "  "}, "empty command"),
    ({"command": []}, "empty command"),
    ({"job_name": "a b"}, "job name"),
])
def test_what_sbatch_would_misread_is_refused(kw, words):
    args = dict({"command": "true", "nodes": ["n1"], "partition": "dgx", "output": "/o"}, **kw)
    with pytest.raises(slurm_job.SlurmJobError, match=words):
        slurm_job.sbatch_argv(**args)


def test_sbatch_outcomes():
    assert slurm_job.sbatch_outcome(0, "42\n", "") == {"submitted": True, "job_id": 42, "rc": 0, "state": None,
                                                       "ok": True, "error": None}
    failed = slurm_job.sbatch_outcome(3, "43;lab\n", "")
    assert failed["job_id"] == 43 and not failed["ok"] and failed["error"] == "job 43 ended with exit code 3"
    refused = slurm_job.sbatch_outcome(1, "", "sbatch: error: invalid node name specified\n")
    assert not refused["submitted"] and refused["error"] == "sbatch: error: invalid node name specified"
    assert slurm_job.parse_sbatch("Submitted batch job 7\n") is None  # not --parsable output


@pytest.mark.parametrize("name,state,code", [("ok", "COMPLETED", 0), ("failed", "FAILED", 3),
                                             ("timeout", "TIMEOUT", 0)])
def test_scontrol_show_job_real_output(name, state, code):
    job = slurm_job.parse_scontrol_job(_read("scontrol_job_%s.txt" % name))
    assert job["state"] == state and job["exit_code"] == code and job["nodes"] == "DGX1-1"
    assert job["batch_host"] == "DGX1-1" and job["job_id"] > 0 and job["fields"]["Partition"] == "dgx"
    assert job["fields"]["CPUs/Task"] == "1" and job["fields"]["NumTasks"] == "1"  # keys with '/' and ':'
    assert job["fields"]["AllocNode:Sid"].endswith(tuple("0123456789"))
    if name == "timeout":
        assert job["fields"]["TimeLimit"] == "00:01:00" and job["signal"] is not None
    with pytest.raises(ValueError):
        slurm_job.parse_scontrol_job("slurm_load_jobs error: Invalid job id specified\n")


def test_a_job_cancelled_while_pending_is_not_ok_although_sbatch_returned_0():
    shown = slurm_job.parse_scontrol_job(_read("scontrol_job_cancelled.txt"))
    assert shown["state"] == "CANCELLED"
    outcome = slurm_job.sbatch_outcome(0, "%d\n" % shown["job_id"], "", shown)
    assert outcome["rc"] == 0 and not outcome["ok"] and outcome["error"].startswith(
        "job %d CANCELLED (exit code 0" % shown["job_id"])
    done = slurm_job.parse_scontrol_job(_read("scontrol_job_ok.txt"))
    assert slurm_job.sbatch_outcome(0, "%d\n" % done["job_id"], "", done)["ok"]


def test_squeue_and_scancel():
    assert slurm_job.squeue_argv("dgxpod-nccl") == ["squeue", "-h", "-n", "dgxpod-nccl", "-o", "%i|%T|%r"]
    assert slurm_job.parse_squeue("12|PENDING|ReqNodeNotAvail, UnavailableNodes:DGX1-2\n13|RUNNING|None\n") == [
        {"job_id": 12, "state": "PENDING", "reason": "ReqNodeNotAvail, UnavailableNodes:DGX1-2"},
        {"job_id": 13, "state": "RUNNING", "reason": None}]
    assert slurm_job.parse_squeue("") == []
    with pytest.raises(ValueError):
        slurm_job.parse_squeue("JOBID PARTITION NAME\n")
    assert slurm_job.scancel_argv("dgxpod-nccl") == ["scancel", "--name", "dgxpod-nccl"]
    with pytest.raises(slurm_job.SlurmJobError):
        slurm_job.scancel_argv("a b")


def test_the_nccl_launch_inside_an_salloc_allocation():
    argv = slurm_job.salloc_argv(["DGX1-1", "DGX1-3"], "dgx", job_name="dgxpod-nccl-DGX1-1", time_limit_s=665,
                                 wait_s=120, gpus_per_node=8)
    assert argv == ["salloc", "-N", "2", "-w", "DGX1-1,DGX1-3", "-p", "dgx", "--exclusive", "-J",
                    "dgxpod-nccl-DGX1-1", "--immediate=120", "-t", "12", "--gres=gpu:8"]
    assert slurm_job.salloc_argv(["n1"], "p", exclusive=False, salloc="/usr/bin/salloc") == [
        "/usr/bin/salloc", "-N", "1", "-w", "n1", "-p", "p", "-J", "dgxpod"]
    assert "--immediate=1" in slurm_job.salloc_argv(["n1"], "p", wait_s=0)  # 0 would mean "no wait" to no one
    for kw, words in (({"nodes": ["a,b"]}, "not Slurm node names"), ({"nodes": ["n", "n"]}, "twice"),
                      ({"partition": "a b"}, "partition"), ({"job_name": "a;b"}, "job name")):
        with pytest.raises(slurm_job.SlurmJobError, match=words):
            slurm_job.salloc_argv(**dict({"nodes": ["n1"], "partition": "dgx"}, **kw))


def test_salloc_outcomes_real_output():
    granted = slurm_job.salloc_outcome(3, _read("salloc_granted.txt"))
    assert granted["granted"] and granted["error"] is None and granted["job_id"] > 0 and not granted["pending"]
    drained = slurm_job.salloc_outcome(1, _read("salloc_drained.txt"))
    assert not drained["granted"] and drained["pending"] and drained["job_id"] > 0
    assert drained["error"] == ("Unable to allocate resources: Connection timed out; "
                                "Required node not available (down, drained or reserved)")
    unknown = slurm_job.salloc_outcome(1, "salloc: error: Job submit/allocate failed: Invalid node name specified\n")
    assert unknown == {"granted": False, "job_id": None, "pending": False,
                       "error": "Job submit/allocate failed: Invalid node name specified"}
    waited = slurm_job.salloc_outcome(None, "salloc: Pending job allocation 9\nsalloc: job 9 queued and waiting "
                                      "for resources\n", timed_out=True)
    assert waited["job_id"] == 9 and waited["error"] == "no allocation before the stage's timeout"
    assert slurm_job.salloc_outcome(127, "sh: 1: salloc: not found\n")["error"] == "sh: 1: salloc: not found"


def test_allocation_blame_names_what_sinfo_shows_unavailable():
    sinfo = ("DGX1-1|idle|none\nDGX1-2|drain|dgxpod nccl_busbw: DGX1-2 at 41% of its peers\nDGX1-3|alloc|none\n"
             "DGX1-4|idle*|Not responding\n")
    nodes = ["DGX1-1", "DGX1-2", "DGX1-3", "DGX1-4", "DGX1-5"]
    assert slurm_job.allocation_blame(nodes, sinfo) == {
        "DGX1-2": "drained in Slurm: dgxpod nccl_busbw: DGX1-2 at 41% of its peers",
        "DGX1-3": "allocated in Slurm",
        "DGX1-4": "idle, not responding in Slurm: Not responding",
        "DGX1-5": "not a node of this Slurm cluster"}
    assert slurm_job.allocation_blame(["vm"], _read("sinfo_idle.txt")) == {}  # real sinfo of an idle node
    assert slurm_job.sinfo_nodes_argv(["a", "b"]) == ["sinfo", "-N", "-h", "-n", "a,b", "-o", "%N|%t|%E"]
