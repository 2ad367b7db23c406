"""Slurm for real, outside the simulator (issue 20): munged + slurmctld + slurmd on this machine with a
slurm.conf/gres.conf written by module_utils/slurm/conf.py for a one-DGX pod, then sinfo shows the node idle,
srun runs on it with its GPUs, the pod_slurm module (through ansible) drains it with a reason and resumes it,
and the parsers read what the real commands print.

Needs root and Debian's slurm-wlm + munge (``apt-get install slurm-wlm munge``); skipped with that reason
otherwise (CI does not install them). Everything runs in a temporary directory on free ports with its
own munge socket and key, so a Slurm or munge already on the machine is not touched; every daemon started is
stopped at the end. No systemd: the daemons are started directly, as roles/slurm does.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from inventory_util import ROOT
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import conf as slurm_conf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import parse as slurm_parse

NEEDED = ("munged", "slurmctld", "slurmd", "sinfo", "srun", "scontrol")
MISSING = [b for b in NEEDED if not shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")]
pytestmark = pytest.mark.skipif(
    bool(MISSING) or os.geteuid() != 0,
    reason="needs root and slurm-wlm + munge installed (apt-get install slurm-wlm munge); missing: %s"
    % (", ".join(MISSING) or "root"))
NODE = "DGX1-1"


def _wait(what, predicate, timeout=30.0):
    """Poll ``predicate`` until true (daemons start asynchronously); fail naming ``what``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out waiting for %s" % what)


def _run(cmd, env, timeout=60, check=True):
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, "%s: rc %d\n%s%s" % (" ".join(cmd), res.returncode, res.stdout, res.stderr)
    return res


def _free_ports(n):
    """``n`` TCP ports nothing listens on now. Each xdist worker that runs a test of this file starts its own
    cluster (the fixture is per module and worker): on fixed ports the second one's slurmctld could not bind and
    its tests timed out waiting for it (seen in CI, -n 2)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("slurm"))
    ctld_port, slurmd_port = _free_ports(2)
    for sub in ("state", "spool", "log", "run", "dev", "munge"):
        os.makedirs(os.path.join(d, sub))
    for i in range(2):  # stand-in GPU device files (NVIDIA's major 195), as roles/slurm makes in the simulator
        os.mknod(os.path.join(d, "dev", "nvidia%d" % i), 0o600 | 0o020000, os.makedev(195, i))
    sock = os.path.join(d, "munge", "munge.socket")
    key = os.path.join(d, "munge", "munge.key")
    with open(key, "wb") as fh:
        fh.write(os.urandom(128))
    os.chmod(key, 0o600)
    os.chmod(os.path.join(d, "munge"), 0o700)
    sbin = "/usr/sbin:/usr/bin:" + os.environ.get("PATH", "")
    env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"), PATH=sbin)
    hw = slurm_parse.parse_slurmd_c(_run(["slurmd", "-C"], env).stdout)
    plan = slurm_conf.slurm_plan(
        {"controller": socket.gethostname(), "partition": "dgx", "state_dir": d + "/state", "spool_dir": d + "/spool",
         "log_dir": d + "/log", "run_dir": d + "/run", "user": "root", "slurmctld_port": ctld_port,
         "slurmd_port": slurmd_port, "munge_socket": sock},
        "pod-in-a-box", {"name": socket.gethostname(), "address": "127.0.0.1"},
        [{"name": NODE, "address": "127.0.0.1", "gpus": 2, "gpu_device_prefix": d + "/dev/nvidia"}], {NODE: hw})
    with open(os.path.join(d, "slurm.conf"), "w") as fh:
        fh.write(slurm_conf.render_slurm_conf(plan))
    with open(os.path.join(d, "gres.conf"), "w") as fh:
        fh.write(slurm_conf.render_gres_conf(plan))
    pids = []
    try:
        _run(["munged", "--force", "--socket", sock, "--key-file", key, "--pid-file", d + "/munge/munged.pid",
              "--log-file", d + "/log/munged.log", "--seed-file", d + "/munge/seed"], env)
        pids.append(d + "/munge/munged.pid")
        _run(["slurmctld"], env)
        pids.append(d + "/run/slurmctld.pid")
        _wait("slurmctld to answer", lambda: _run(["scontrol", "ping"], env, check=False).stdout.count("UP"))
        _run(["slurmd", "-N", NODE], env)
        pids.append(d + "/run/slurmd.pid")
        yield {"dir": d, "env": env, "plan": plan}
    finally:
        for pidfile in reversed(pids):
            try:
                with open(pidfile) as fh:
                    pid = int(fh.read().strip())
                os.kill(pid, signal.SIGTERM)
                _wait("pid %d to exit" % pid, lambda pid=pid: _gone(pid), timeout=20)
            except (OSError, ValueError):
                pass


def _gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split()[2] == "Z"  # a zombie has exited
    except OSError:
        return True


def _states(env):
    return slurm_parse.node_states(slurm_parse.parse_sinfo(
        _run(["sinfo", "-N", "-h", "-o", "%N|%t|%E"], env).stdout))


def _module(env, args):
    cfg = dict(env, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    res = _run([os.path.join(ROOT, ".venv", "bin", "ansible"), "localhost", "-c", "local", "-o", "-m", "pod_slurm",
                "-a", json.dumps(args)], cfg, timeout=120, check=False)
    text = res.stdout
    assert " | " in text, res.stdout + res.stderr
    verdict, _, body = text.partition(" => ")
    return verdict, json.loads(body)


def test_the_node_comes_up_idle_and_runs_jobs_with_its_gpus(cluster):
    env = cluster["env"]
    _wait("%s idle in sinfo" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    assert _run(["srun", "-N1", "hostname"], env).stdout.strip() == socket.gethostname()
    assert _run(["srun", "--gres=gpu:2", "printenv", "CUDA_VISIBLE_DEVICES"], env).stdout.strip() == "0,1"
    node = slurm_parse.parse_scontrol_nodes(_run(["scontrol", "show", "node", "-o", NODE], env).stdout)[0]
    assert node["fields"]["Gres"] == "gpu:2" and node["fields"]["NodeAddr"] == "127.0.0.1"


def test_pod_slurm_drains_with_the_reason_and_resumes(cluster):
    env = cluster["env"]
    _wait("%s idle" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    conf = {"slurm_conf": env["SLURM_CONF"], "bin_dir": "/usr/bin"}
    reason = "dgxpod nccl_busbw: DGX1-1 at 40% of its peers"
    verdict, out = _module(env, dict(conf, action="state", dgx=[NODE]))
    assert "SUCCESS" in verdict and out["nodes"][NODE]["state"] == "idle" and out["unhealthy"] == {}
    assert [(c["check"], c["host"], c["status"]) for c in out["checks"]] == [("slurm_node", NODE, "pass")]
    verdict, out = _module(env, dict(conf, action="drain", drain=[{"node": NODE, "reason": reason}]))
    assert "CHANGED" in verdict and out["drained"] == [NODE]
    assert _states(env)[NODE] == {"state": "drained", "drain": True, "responding": True, "reason": reason}
    verdict, out = _module(env, dict(conf, action="drain", drain=[{"node": NODE, "reason": reason}], dgx=[NODE]))
    assert "SUCCESS" in verdict and out["drained"] == []            # idempotent
    assert out["checks"][0]["status"] == "fail" and out["checks"][0]["cause"] == "drained in Slurm: " + reason
    assert out["unhealthy"][NODE]["reason"] == reason
    verdict, out = _module(env, dict(conf, action="resume"))
    assert "CHANGED" in verdict and out["resumed"] == [NODE]
    _wait("%s idle again" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    verdict, out = _module(env, dict(conf, action="resume"))
    assert "SUCCESS" in verdict and out["resumed"] == []


def test_resume_leaves_an_administrators_drain_alone(cluster):
    env = cluster["env"]
    _run(["scontrol", "update", "nodename=" + NODE, "state=drain", "reason=disk replacement"], env)
    try:
        verdict, out = _module(env, {"slurm_conf": env["SLURM_CONF"], "bin_dir": "/usr/bin", "action": "resume"})
        assert out["resumed"] == [] and _states(env)[NODE]["reason"] == "disk replacement"
    finally:
        _run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env)


def test_validate_slurm_stage_and_drain_failed_against_the_real_slurmctld(cluster, tmp_path):
    """validate.yml's slurm stage, report and --drain-failed plays (test_slurm_validate's wrapper, validate.yml's
    order) on a Slurm pod whose DGX is this machine's slurmd: the slurm checks pass while idle; a failed check on
    the DGX drains it with the check and cause as the reason; the next run reports it drained and does not drain
    it again on its own check; an administrator's drain is kept."""
    from test_slurm_validate import inject, run_validate, write_pod
    env = cluster["env"]
    _wait("%s idle" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    pod = write_pod(tmp_path, {"scheduler": "slurm", "slurm": {"controller": NODE, "partition": "dgx"}}, node=NODE)
    conf = ["-e", "slurm_conf_path=" + env["SLURM_CONF"]]

    res, doc = run_validate(pod, "--tags", "slurm", *conf, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert [(c["check"], c["host"], c["status"]) for c in doc["checks"] if c["check"].startswith("slurm")] == [
        ("slurm_controller", NODE, "pass"), ("slurm_node", NODE, "pass")]
    report = (pod["results"] / "report.md").read_text()
    assert "## Slurm (controller %s, partition dgx)" % NODE in report and "| %s | idle |  |" % NODE in report
    assert "slurm_node" in (pod["results"] / "junit.xml").read_text()

    try:
        res, doc = run_validate(pod, "--tags", "slurm", "-e", "pod_drain_failed=true", *inject("hostname dgx-wrong"),
                                *conf, env=env)
        (tmp_path / "drain_run.txt").write_text(res.stdout)  # kept with the test's files (docs/slurm.md quotes it)
        assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-2000:]  # drained, then the verdict
        reason = _states(env)[NODE]["reason"]
        assert _states(env)[NODE]["drain"] and reason.startswith("dgxpod identity: ") and "dgx-wrong" in reason
        tail = res.stdout[res.stdout.index("TASK [What was drained and what was not]"):]
        assert "drained:" in tail and reason in tail and "1 check(s) failed" in tail

        res, doc = run_validate(pod, "--tags", "slurm", "-e", "pod_drain_failed=true", *conf, env=env)
        node = next(c for c in doc["checks"] if c["check"] == "slurm_node")
        assert node["status"] == "fail" and node["cause"] == "drained in Slurm: " + reason
        assert "is Slurm's own state, reported and not drained on" in res.stdout and "changed: [localhost" not in \
            res.stdout.split("TASK [Drain them")[-1].split("TASK [What was")[0]
        assert _states(env)[NODE]["reason"] == reason

        _run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env)
        _run(["scontrol", "update", "nodename=" + NODE, "state=drain", "reason=disk replacement"], env)
        res, _ = run_validate(pod, "--tags", "slurm", "-e", "pod_drain_failed=true", *inject("hostname dgx-wrong"),
                              *conf, env=env)
        assert _states(env)[NODE]["reason"] == "disk replacement"
        assert "kept_an_administrators_drain" in res.stdout and "disk replacement" in res.stdout
    finally:
        _run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env, check=False)


def test_a_validation_job_through_sbatch_wait_wrap(cluster, tmp_path):
    """module_utils/slurm/job.py's argv on the real slurmd: the job runs on the DGX it names, its output file is
    written, sbatch --wait returns the command's exit code, and scontrol show job tells COMPLETED / FAILED
    (parsed; TIMEOUT: the long test below); a node Slurm does not know is a refused submission with Slurm's error. With
    SLURM_GOLDEN_REGEN=1 the scontrol outputs are saved as fixtures for test_slurm_job.py."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import job as slurm_job
    env = cluster["env"]
    _wait("%s idle" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    os.chmod(str(tmp_path), 0o755)
    regen = os.environ.get("SLURM_GOLDEN_REGEN") == "1"
    fixtures = os.path.join(ROOT, "tests", "unit", "fixtures", "slurm")

    def job(command, name, **kw):
        out = str(tmp_path / (name + "-%j.out"))
        res = _run(slurm_job.sbatch_argv(command, [NODE], "dgx", out, job_name=name, **kw), env, timeout=180,
                   check=False)
        outcome = slurm_job.sbatch_outcome(res.returncode, res.stdout, res.stderr)
        shown = None
        if outcome["submitted"]:
            text = _run(["scontrol", "show", "job", "-o", str(outcome["job_id"])], env).stdout
            shown = slurm_job.parse_scontrol_job(text)
            outcome = slurm_job.sbatch_outcome(res.returncode, res.stdout, res.stderr, shown)
            if regen:
                with open(os.path.join(fixtures, "scontrol_job_%s.txt" % name), "w") as fh:
                    fh.write(text)
        path = out.replace("%j", str(outcome["job_id"]))
        return outcome, shown, (open(path).read() if os.path.exists(path) else None)

    outcome, shown, text = job(["sh", "-c", 'echo "on $(hostname) gpus=$CUDA_VISIBLE_DEVICES"; echo done >&2'],
                               "ok", time_limit_s=90, gpus_per_node=2)
    assert outcome["ok"] and outcome["rc"] == 0 and outcome["job_id"] > 0, outcome
    assert text == "on %s gpus=0,1\ndone\n" % socket.gethostname()  # stdout and stderr in the -o file
    assert shown["state"] == "COMPLETED" and shown["exit_code"] == 0 and shown["nodes"] == NODE
    assert shown["batch_host"] == NODE and shown["fields"]["TimeLimit"] == "00:02:00"

    outcome, shown, text = job("echo ranks lost; exit 3", "failed")
    assert not outcome["ok"] and outcome["rc"] == 3 and "exit code 3" in outcome["error"]
    assert shown["state"] == "FAILED" and shown["exit_code"] == 3 and text == "ranks lost\n"

    res = _run(slurm_job.sbatch_argv("true", ["DGX9-9"], "dgx", str(tmp_path / "x.out")), env, check=False)
    refused = slurm_job.sbatch_outcome(res.returncode, res.stdout, res.stderr)
    assert not refused["submitted"] and refused["rc"] != 0 and "sbatch: error:" in refused["error"], refused
    _wait("%s idle after the jobs" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")


@pytest.mark.long  # about 90 s of waiting for Slurm's 1-minute minimum limit; the TIMEOUT record is a fixture
def test_slurm_ends_a_hung_job_at_its_time_limit(cluster, tmp_path):
    """A hung job (``sleep 300``) with a 1-minute limit ends as TIMEOUT, and sbatch_outcome says it failed
    (tests/unit/fixtures/slurm/scontrol_job_timeout.txt, read by test_slurm_job.py, came from this run)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import job as slurm_job
    env = cluster["env"]
    _wait("%s idle" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    os.chmod(str(tmp_path), 0o755)
    out = str(tmp_path / "timeout-%j.out")
    res = _run(slurm_job.sbatch_argv("sleep 300", [NODE], "dgx", out, job_name="timeout", time_limit_s=1), env,
               timeout=180, check=False)
    outcome = slurm_job.sbatch_outcome(res.returncode, res.stdout, res.stderr)
    assert outcome["submitted"], outcome
    shown = slurm_job.parse_scontrol_job(_run(["scontrol", "show", "job", "-o", str(outcome["job_id"])], env).stdout)
    outcome = slurm_job.sbatch_outcome(res.returncode, res.stdout, res.stderr, shown)
    assert not outcome["ok"] and shown["state"] == "TIMEOUT", (outcome, shown)
    _wait("%s idle after the job" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")


def test_a_job_for_a_drained_dgx_waits_and_is_cancelled_by_name(cluster, tmp_path):
    """sbatch has no --immediate: a job naming a drained DGX (one --drain-failed drained) pends with Slurm's
    reason until the stage's own timeout; squeue names the wait and scancel --name ends it, sbatch --wait
    then returns non-zero. What the NCCL stage through Slurm must do on timeout (docs/slurm.md)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import job as slurm_job
    env = cluster["env"]
    _wait("%s idle" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
    name = "dgxpod-pending-test"
    _run(["scontrol", "update", "nodename=" + NODE, "state=drain", "reason=dgxpod test: drained"], env)
    proc = subprocess.Popen(slurm_job.sbatch_argv("true", [NODE], "dgx", str(tmp_path / "p.out"), job_name=name),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        jobs = _wait("the job to pend", lambda: slurm_job.parse_squeue(
            _run(slurm_job.squeue_argv(name), env).stdout))
        assert jobs[0]["state"] == "PENDING" and jobs[0]["reason"], jobs
        assert proc.poll() is None  # sbatch --wait is still waiting
        _run(slurm_job.scancel_argv(name), env)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0  # measured: a job cancelled while pending ends sbatch --wait with 0
        text = _run(["scontrol", "show", "job", "-o", str(jobs[0]["job_id"])], env).stdout
        if os.environ.get("SLURM_GOLDEN_REGEN") == "1":
            with open(os.path.join(ROOT, "tests", "unit", "fixtures", "slurm", "scontrol_job_cancelled.txt"),
                      "w") as fh:
                fh.write(text)
        outcome = slurm_job.sbatch_outcome(proc.returncode, out, err, slurm_job.parse_scontrol_job(text))
        assert outcome["submitted"] and outcome["job_id"] == jobs[0]["job_id"] and outcome["state"] == "CANCELLED"
        assert not outcome["ok"] and "CANCELLED" in outcome["error"], outcome
        assert _run(slurm_job.squeue_argv(name), env).stdout.strip() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
        _run(slurm_job.scancel_argv(name), env, check=False)
        _run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env, check=False)


def test_the_nccl_launch_runs_inside_an_salloc_allocation(cluster):
    """The NCCL and training stages' Slurm path (module_utils/slurm/launch.py, as library/pod_nccl and pod_train call
    it): mpi_job.run_job with start()'s salloc prefix, then settle(), against the real slurmctld/slurmd. The command
    runs here with its stdout and exit code passed through; a drained DGX is refused within --immediate with Slurm's
    reason and named from sinfo; a node Slurm does not know is Slurm's error; a hung command is killed at the stage's
    timeout and settle() cancels its job by name. SLURM_GOLDEN_REGEN=1 saves salloc's stderr for test_slurm_job.py."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import mpi_job
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import job as slurm_job
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import launch as slurm_launch
    env = cluster["env"]
    regen = os.environ.get("SLURM_GOLDEN_REGEN") == "1"
    ready = {"state": "idle", "drain": False, "responding": True, "reason": None}
    # idle AND responding: an earlier test's resume leaves the node `idle*` (not schedulable) for a while
    _wait("%s idle and responding" % NODE, lambda: _states(env).get(NODE, {}) == ready, timeout=120)
    saved = dict(os.environ)
    os.environ.update(env)  # run_job and settle inherit the environment: SLURM_CONF and PATH of the test cluster
    params = {"scheduler": "slurm", "slurm_partition": "dgx", "slurm_wait": 10, "slurm_gpus_per_node": 0,
              "slurm_job_name": None, "slurm_conf": None}
    try:
        def run(argv, name, timeout=60.0, wait=10, nodes=(NODE,)):
            prefix, slurm = slurm_launch.start(dict(params, slurm_wait=wait), list(nodes), name, timeout,
                                               shutil.which)
            assert prefix[0].endswith("salloc") and "--immediate=%d" % wait in prefix
            job = mpi_job.run_job(["env"], argv, timeout, {NODE: "localhost"}, NODE, kill_pattern="sleep 57",
                                  prefix=prefix)
            return job, slurm, slurm_launch.settle(job, list(nodes), slurm, shutil.which)

        job, slurm, refused = run(["sh", "-c", 'echo "on $(hostname) job=$SLURM_JOB_ID"; echo rank lost >&2; exit 3'],
                                  "ok")
        assert refused is None and slurm["granted"] and slurm["error"] is None and slurm["job_id"] > 0, (job, slurm)
        assert job["rc"] == 3 and job["stdout"] == "on %s job=%d\n" % (socket.gethostname(), slurm["job_id"])
        assert "rank lost" in job["stderr"] and "cancelled" not in slurm
        if regen:
            with open(os.path.join(ROOT, "tests", "unit", "fixtures", "slurm", "salloc_granted.txt"), "w") as fh:
                fh.write(job["stderr"])

        job, slurm, refused = run(["true"], "unknown", nodes=("DGX9-9",))
        assert job["rc"] == 1 and not slurm["granted"] and "Invalid node name specified" in refused["error"], refused
        assert refused["failed_hosts"] == {"DGX9-9": "not a node of this Slurm cluster"}

        _run(["scontrol", "update", "nodename=" + NODE, "state=drain", "reason=dgxpod nccl_busbw: slow"], env)
        try:
            t0 = time.monotonic()
            job, slurm, refused = run(["true"], "drained", wait=2)
            assert time.monotonic() - t0 < 20 and slurm["pending"] and refused, (job, slurm)
            assert refused["error"].startswith("Slurm did not allocate %s (partition dgx) within 2s: " % NODE)
            assert "Required node not available (down, drained or reserved)" in refused["error"], refused
            assert refused["failed_hosts"] == {NODE: "drained in Slurm: dgxpod nccl_busbw: slow"}, refused
            if regen:
                with open(os.path.join(ROOT, "tests", "unit", "fixtures", "slurm", "salloc_drained.txt"), "w") as fh:
                    fh.write(job["stderr"])
        finally:
            _run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env)
        # resumed, the node is `idle*` (not responding, not schedulable) until slurmctld pings its slurmd again:
        # seconds on a quiet machine, longer under CI's load (a 10 s wait was refused there once)
        _wait("%s idle and responding after resume" % NODE,
              lambda: _states(env).get(NODE, {}) == ready, timeout=120)

        job, slurm, refused = run(["sleep", "57"], "dgxpod-hung", timeout=25, wait=20)
        assert job["timed_out"] and slurm["granted"] and refused is None, (job, slurm)
        assert slurm["cancelled"].startswith("rc 0"), slurm  # settle() cancelled the job salloc left allocated
        _wait("the hung job to leave the queue",
              lambda: _run(slurm_job.squeue_argv("dgxpod-hung"), env).stdout.strip() == "")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _wait("%s idle after the jobs" % NODE, lambda: _states(env).get(NODE, {}).get("state") == "idle")
