"""module_utils/containers/mpi_job.py: the shared mpirun line, the env file, the result classifier, the runner."""
from __future__ import annotations

import sys

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import mpi_job as mj


def test_mpirun_argv_one_rank_per_node_is_the_ra_line():
    a = mj.mpirun_argv(["n1", "n2"], "enp132s0", 2222)
    s = " ".join(a)
    assert a[:4] == ["mpirun", "--allow-run-as-root", "-np", "2"]
    assert "-H n1,n2" in s and "-map-by node" in s and "-mca plm_rsh_args -p 2222" in s
    assert "-mca btl_tcp_if_include enp132s0" in s and "-mca oob_tcp_if_include enp132s0" in s
    assert "-mca pml ob1" in s and "-mca btl ^openib" in s and a[-1] == "hostname"


def test_mpirun_argv_ranks_per_node_env_and_command():
    a = mj.mpirun_argv(["a", "b", "c"], None, 2222, ranks_per_node=8,
                       env={"NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "INFO"}, forward=["PATH"],
                       command=["/opt/all_reduce_perf", "-b", "8"])
    s = " ".join(a)
    assert a[a.index("-np") + 1] == "24" and a[a.index("-H") + 1] == "a:8,b:8,c:8"
    assert a[a.index("-map-by") + 1] == "ppr:8:node" and "btl_tcp_if_include" not in s
    # sorted -x NAME=value, then -x NAME, then the command last
    xs = [a[i + 1] for i, v in enumerate(a) if v == "-x"]
    assert xs == ["NCCL_DEBUG=INFO", "NCCL_IB_HCA=mlx5", "PATH"]
    assert a[-3:] == ["/opt/all_reduce_perf", "-b", "8"]


def test_mpirun_argv_rejects_nonsense():
    with pytest.raises(ValueError):
        mj.mpirun_argv([], None)
    with pytest.raises(ValueError):
        mj.mpirun_argv(["a"], None, ranks_per_node=0)
    with pytest.raises(ValueError):
        mj.mpirun_argv(["a"], None, env={"BAD NAME": "x"})


def test_read_env_file_the_roles_template_and_errors():
    text = ("# managed - dgx_network role, pod sim\n# NCCL/MPI environment for sim-dgx1\n\n"
            "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_SOCKET_IFNAME=^docker0\nNCCL_IB_GID_INDEX=3\n")
    env = mj.read_env_file(text)
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_SOCKET_IFNAME": "^docker0",
                   "NCCL_IB_GID_INDEX": "3"}
    with pytest.raises(ValueError, match="line 2"):
        mj.read_env_file("A=1\nnot a pair\n", "/etc/dgxpod/nccl.env")


def test_forward_env_later_wins_and_none_drops():
    assert mj.forward_env({"A": 1, "B": "x"}, {"B": "y", "A": None}) == {"B": "y"}


HOSTS = {"sim-dgx1": "198.18.1.1", "sim-dgx2": "198.18.1.2", "sim-dgx3": "198.18.1.3"}


def test_classify_ok():
    r = mj.classify_result(0, "#  Rank  0 Group  0 Pid   1 on   sim-dgx1 device  0 [0x00] cpu\n", "", hosts=HOSTS)
    assert r["ok"] and r["reason"] == "" and r["failed_hosts"] == {} and r["ranks_seen"] == {"0": "sim-dgx1"}


def test_classify_stopped_sshd_names_the_node_by_its_address():
    # Open MPI 4.1 when one node's sshd (port 2222) is down
    err = ("ssh: connect to host 198.18.1.3 port 2222: Connection refused\n"
           "--------------------------------------------------------------------------\n"
           "ORTE was unable to reliably start one or more daemons.\n"
           "This usually is caused by:\n")
    r = mj.classify_result(255, "", err, hosts=HOSTS)
    assert not r["ok"] and r["failed_hosts"] == {"sim-dgx3": "ssh: Connection refused"}
    assert "sim-dgx3" in r["reason"]


def test_classify_rank_killed_and_first_failing_process():
    out = ("#  Rank  0 Group  0 Pid  11 on   sim-dgx1 device  0 [0x00] cpu\n"
           "#  Rank  1 Group  0 Pid  12 on   sim-dgx2 device  0 [0x00] cpu\n")
    err = ("mpirun noticed that process rank 1 with PID 12 on node sim-dgx2 exited on signal 9 (Killed).\n")
    r = mj.classify_result(137, out, err, hosts=HOSTS)
    assert r["failed_ranks"] == {"1": {"host": "sim-dgx2", "reason": "exited on Killed"}}
    assert list(r["failed_hosts"]) == ["sim-dgx2"]
    err2 = ("Primary job  terminated normally, but 1 process returned\na non-zero exit code.\n"
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n\n"
            "  Process name: [[4242,1],1]\n  Exit code:    3\n")
    r = mj.classify_result(3, out, err2, hosts=HOSTS)
    assert r["failed_ranks"]["1"] == {"host": "sim-dgx2", "reason": "exited with code 3"}
    assert r["failed_hosts"] == {"sim-dgx2": "rank 1 exited with code 3"}


def test_classify_nccl_warn_and_lost_daemon():
    err = ("sim-dgx2:4711:4711 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.3 with error 12\n"
           "ORTE has lost communication with a remote daemon.\n\n"
           "  HNP daemon   : [[1,0],0] on node sim-dgx1\n  Remote daemon: [[1,0],2] on node sim-dgx3\n")
    r = mj.classify_result(1, "", err, hosts=HOSTS)
    assert r["failed_hosts"]["sim-dgx2"].startswith("NCCL WARN NET/IB")
    assert r["failed_hosts"]["sim-dgx3"] == "lost contact with its MPI daemon"


@pytest.mark.parametrize("line,node,reason", [
    ("ssh: Could not resolve hostname sim-dgx4: Name or service not known", "sim-dgx4",
     "ssh: Could not resolve hostname sim-dgx4: Name or service not known"),
    ("ssh: connect to host sim-dgx2 port 2222: No route to host", "sim-dgx2", "ssh: No route to host"),
    ("sim-dgx3: Permission denied (publickey).", "sim-dgx3", "ssh: key rejected"),
    ("  Remote daemon: [[1,0],2] on node 198.18.1.3", "sim-dgx3", "lost contact with its MPI daemon"),
    ("   sim-dgx1:99:101 [3] NCCL WARN Cuda failure 'out of memory'", "sim-dgx1",
     "NCCL WARN Cuda failure 'out of memory'"),
    ("sim-dgx2: Test NCCL failure common.cu:1285 'internal error'", "sim-dgx2",
     "NCCL failure common.cu:1285 internal error"),
    ("   sim-dgx4: Test CUDA failure common.cu:892 'out of memory'", "sim-dgx4",
     "CUDA failure common.cu:892 out of memory"),
])
def test_classify_each_kind_of_line_that_names_a_node(line, node, reason):
    r = mj.classify_result(1, "", line + "\n", hosts=HOSTS)
    assert r["failed_hosts"] == {node: reason}


def test_classify_a_line_counts_once_and_the_first_reason_of_a_node_stays():
    # a signal line sets the rank and the node; a later line on the same node keeps the first reason
    err = ("mpirun noticed that process rank 2 with PID 7 on node sim-dgx3 exited on signal 11 (Segmentation fault).\n"
           "sim-dgx3:7:7 [0] NCCL WARN Net : Connection closed by remote peer\n")
    r = mj.classify_result(139, "", err, hosts=HOSTS)
    assert r["failed_ranks"] == {"2": {"host": "sim-dgx3", "reason": "exited on Segmentation fault"}}
    assert r["failed_hosts"] == {"sim-dgx3": "rank 2 exited on Segmentation fault"}


def test_classify_timeout_names_silent_nodes():
    out = ("#  Rank  0 Group  0 Pid  11 on   sim-dgx1 device  0 [0x00] cpu\n"
           "#  Rank  1 Group  0 Pid  12 on   sim-dgx2 device  0 [0x00] cpu\n")
    r = mj.classify_result(None, out, "", timed_out=True, hosts=HOSTS, timeout=60)
    assert not r["ok"] and r["timed_out"] and "60s" in r["reason"]
    assert r["failed_hosts"] == {"sim-dgx3": "no rank reported before the timeout"}
    r = mj.classify_result(0, "", "", timed_out=True, hosts=HOSTS, timeout=60)
    assert not r["ok"]


def test_cleanup_argvs_local_and_over_ssh():
    c = mj.cleanup_argvs(["podman", "exec", "dgxpod-mpi"], {"a": "a", "b": "10.0.0.2"}, "a", "/opt/x y", 2222)
    assert c["a"][:3] == ["podman", "exec", "dgxpod-mpi"] and c["a"][3:5] == ["sh", "-c"]
    assert "pkill -KILL -f '[/]opt/x y'" in c["a"][5]
    assert c["b"][3:6] == ["ssh", "-p", "2222"] and c["b"][-2] == "10.0.0.2" and "pkill" in c["b"][-1]


def test_run_job_times_out_and_cleans_every_node(tmp_path):
    # the "engine" is a shell that logs what it was asked to run: the job sleeps past the timeout,
    # then every node gets its pkill
    log = tmp_path / "log"
    fake = tmp_path / "engine"
    fake.write_text("#!/bin/sh\necho \"$*\" >> %s\n[ \"$3\" = mpirun ] && exec sleep 30\nexit 0\n" % log)
    fake.chmod(0o755)
    res = mj.run_job([str(fake), "exec", "ctr"], ["mpirun", "-np", "2", "/opt/bench"], timeout=0.5,
                     hosts={"a": "a", "b": "b"}, launcher="a", kill_pattern="/opt/bench", cleanup_timeout=5)
    assert res["timed_out"] and res["rc"] is None and res["cleanup"] == {"a": "", "b": ""}
    seen = log.read_text()
    assert "pkill -KILL -f '[m]pirun .*/opt/bench'" in seen and "ssh -p 2222" in seen
    assert not res["result"]["ok"]


def test_self_safe_pattern_matches_the_job_not_the_shell():
    import re
    pat = mj.self_safe_pattern("/opt/bench")
    assert re.search(pat, "/opt/bench -b 8") and not re.search(pat, "sh -c pkill -KILL -f " + pat)


def test_run_job_plain_success():
    res = mj.run_job([sys.executable, "-c", "import sys; print('hi'); sys.exit(0)", "--"], [], timeout=20,
                     hosts={"a": "a"}, launcher="a", kill_pattern="x")
    assert res["rc"] == 0 and not res["timed_out"] and res["cleanup"] == {} and res["result"]["ok"]


def test_launch_targets_need_node_and_connect():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import missing_node_or_connect
    assert missing_node_or_connect([{"node": "DGX1-1", "connect": "10.0.0.1"}], "targets") is None
    assert missing_node_or_connect([], "hosts") == "no hosts"
    assert "needs node and connect" in missing_node_or_connect([{"node": "DGX1-1"}], "targets")
    assert "needs node and connect" in missing_node_or_connect(["DGX1-1"], "targets")


class _FakeModule:
    """What module_targets/module_slurm_start use of an AnsibleModule; fail_json raises as exit would."""

    def __init__(self, params, check_mode=False):
        self.params, self.check_mode = params, check_mode

    def fail_json(self, **kw):
        raise SystemExit(kw["msg"])

    def get_bin_path(self, name, required=False):
        return "/usr/bin/" + name


def test_module_targets_splits_entries_or_fails_the_module_with_the_prefix():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import module_targets
    entries = [{"node": "DGX1-1", "connect": "10.0.0.1"}, {"node": "DGX1-2", "connect": "10.0.0.2"}]
    got = module_targets(_FakeModule({"hosts": entries}), "hosts")
    assert got == (entries, ["DGX1-1", "DGX1-2"], {"DGX1-1": "10.0.0.1", "DGX1-2": "10.0.0.2"})
    with pytest.raises(SystemExit, match="^pod_train: no hosts$"):
        module_targets(_FakeModule({"hosts": []}), "hosts", prefix="pod_train: ")


def test_module_slurm_start_without_slurm_and_with_a_name_slurm_would_misread():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import module_slurm_start
    assert module_slurm_start(_FakeModule({"scheduler": "none"}), ["DGX1-1"], "job", 60) == ([], None)
    params = {"scheduler": "slurm", "slurm_partition": "dgx", "slurm_wait": 5, "slurm_job_name": None,
              "slurm_gpus_per_node": 0, "slurm_conf": None}
    prefix, slurm = module_slurm_start(_FakeModule(params), ["DGX1-1"], "dgxpod-nccl-DGX1-1", 60)
    assert prefix[0] == "/usr/bin/salloc" and slurm["job_name"] == "dgxpod-nccl-DGX1-1"
    with pytest.raises(SystemExit, match="^scheduler=slurm: "):
        module_slurm_start(_FakeModule(params), ["bad node,x"], "job", 60)


def test_mpi_job_argument_spec_orders_container_targets_own_then_scheduler_options():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import mpi_job_argument_spec
    spec = mpi_job_argument_spec("targets", timeout=dict(type="int", default=600))
    keys = list(spec)
    assert keys[:6] == ["engine", "engine_args", "container", "port", "tcp_if", "targets"]
    assert spec["targets"] == {"type": "list", "elements": "dict", "required": True}
    assert keys[6] == "timeout" and keys[-1] == "slurm_conf" and "scheduler" in keys
