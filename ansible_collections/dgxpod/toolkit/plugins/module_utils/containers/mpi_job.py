# -*- coding: utf-8 -*-
"""One MPI job across the pod's MPI containers (the NCCL and training stages launch the same way).

Pure part (stdlib and nccl_parse's line formats, tested in tests/unit/test_mpi_job.py):

- ``read_env_file``: the NCCL/MPI environment file the dgx_network role writes (/etc/dgxpod/nccl.env),
- ``mpirun_argv``: the RA's launcher line (004 / REFERENCE_FACTS "Launch"): ssh on the containers' port
  2222, ob1 PML, no openib BTL, TCP BTL and OOB on the data NIC, ``-np`` = hosts x ranks per node with
  ``--map-by ppr:<n>:node`` (one rank per GPU), every variable forwarded with ``-x NAME=value``,
- ``classify_result``: what an mpirun run tells: rc, timed out, which hosts and ranks failed and why,
  the last lines - so "it hung and told me nothing" never happens.

Runner (module_utils/common/run.py; used by library modules on the launching DGX):

- ``run_job``: ``<engine> exec <container> mpirun ...`` with a hard outer timeout; on timeout (or when
  asked) ``cleanup`` kills the job on every node: ``pkill -f <pattern>`` in the launcher's container and,
  over ssh on the containers' port, in every other node's container - each bounded, in parallel - and
  says which nodes could not be cleaned.
"""
from __future__ import annotations

import re
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.parse import RANK_LINE, TESTS_FAIL
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.job import SlurmJobError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import ARGUMENT_SPEC as SLURM_ARGUMENT_SPEC
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import start as slurm_start

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def mpi_container_argument_spec() -> Dict[str, Dict[str, Any]]:
    """The options every module that launches into the MPI containers shares (ngc_mpi_verify, pod_nccl,
    pod_train): the engine, the container and how mpirun reaches it. Documented once, in the doc fragments
    dgxpod.toolkit.mpi_container. A fresh dict each call."""
    return dict(
        engine=dict(type="str", choices=["podman", "docker"], default="podman"),
        engine_args=dict(type="list", elements="str", default=[]),
        container=dict(type="str", required=True),
        port=dict(type="int", default=2222),
        tcp_if=dict(type="str"),
    )


def mpi_job_argument_spec(targets: str, **options: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The argument spec of a module that runs one MPI job over the containers (pod_nccl, pod_train): the
    shared container options, ``targets`` (the launch targets, a required list of {node, connect}), the
    module's own ``options``, then the scheduler options (slurm_launch.ARGUMENT_SPEC)."""
    spec = mpi_container_argument_spec()
    spec[targets] = dict(type="list", elements="dict", required=True)
    spec.update(options)
    spec.update(SLURM_ARGUMENT_SPEC)
    return spec


def missing_node_or_connect(entries: Any, what: str) -> Optional[str]:
    """Why a module's list of launch targets (pod_nccl's ``targets``, pod_train's ``hosts``: dicts with ``node``,
    the inventory/Slurm name, and ``connect``, what ssh and mpirun use) cannot be used, or None."""
    if not entries:
        return "no %s" % what
    for e in entries:
        if not isinstance(e, dict) or not e.get("node") or not e.get("connect"):
            return "every entry of %s needs node and connect, got %r" % (what, e)
    return None


def module_targets(module: Any, key: str, prefix: str = "") -> Tuple[List[Dict[str, Any]], List[str], Dict[str, str]]:
    """(entries, nodes, {node: connect}) of the module option ``key`` (pod_nccl's ``targets``, pod_train's
    ``hosts``); fails the module with ``prefix`` + :func:`missing_node_or_connect`'s reason when unusable."""
    entries = module.params[key]
    bad = missing_node_or_connect(entries, key)
    if bad:
        module.fail_json(msg=prefix + bad)
    return entries, [e["node"] for e in entries], {e["node"]: e["connect"] for e in entries}


def module_slurm_start(module: Any, nodes: Sequence[str], job_name: str,
                       timeout_s: float) -> Tuple[List[str], Optional[Dict[str, Any]]]:
    """slurm_launch.start for a module (binaries looked up on the node; not required in check mode); a job
    Slurm would misread fails the module with ``scheduler=slurm: <why>``."""
    try:
        return slurm_start(module.params, nodes, job_name, timeout_s,
                           lambda b: module.get_bin_path(b, required=not module.check_mode))
    except SlurmJobError as e:
        module.fail_json(msg="scheduler=slurm: %s" % e)
        raise  # not reached: fail_json exits


# ---------------------------------------------------------------------------------------------------
# the environment


def read_env_file(text: str, source: str = "nccl.env") -> Dict[str, str]:
    """KEY=VALUE lines (docker --env-file syntax: no quoting, '#' comments, blank lines) -> dict.

    A line that is not a comment and not KEY=VALUE raises ValueError naming the file and line."""
    env: Dict[str, str] = {}
    for n, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].strip()
        name, sep, value = line.partition("=")
        if not sep or not ENV_NAME_RE.match(name.strip()):
            raise ValueError("%s line %d: expected NAME=value, got %r" % (source, n, raw[:80]))
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[name.strip()] = value
    return env


def forward_env(*envs: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """Merge environment dicts, later ones winning; values as strings; None values drop the name."""
    out: Dict[str, str] = {}
    for env in envs:
        for k, v in (env or {}).items():
            if not ENV_NAME_RE.match(str(k)):
                raise ValueError("not an environment variable name: %r" % (k,))
            if v is None:
                out.pop(str(k), None)
            else:
                out[str(k)] = str(v)
    return out


# ---------------------------------------------------------------------------------------------------
# the command line


def mpirun_argv(hosts: Sequence[str], tcp_if: Optional[str] = None, port: int = 2222,
                extra: Optional[List[str]] = None, command: Optional[List[str]] = None,
                ranks_per_node: int = 1, env: Optional[Dict[str, Any]] = None,
                forward: Iterable[str] = (), map_by: Optional[str] = None) -> List[str]:
    """The RA's launcher line (004 / REFERENCE_FACTS "Launch").

    ``hosts``: the names/addresses mpirun reaches each node's container by (ssh on ``port``);
    ``ranks_per_node``: ranks on every host (one per GPU): ``-np`` = len(hosts) x n, each host given n
    slots (``-H a:n,b:n``) and ``--map-by ppr:n:node``; with n = 1 the mapping is ``node`` (the mesh
    check's ``mpirun hostname`` line, unchanged). ``env``: forwarded as ``-x NAME=value`` (sorted);
    ``forward``: names forwarded from mpirun's own environment (``-x NAME``)."""
    hosts = [str(h) for h in hosts]
    if not hosts:
        raise ValueError("mpirun_argv: no hosts")
    n = int(ranks_per_node)
    if n < 1:
        raise ValueError("mpirun_argv: ranks_per_node must be >= 1, got %r" % ranks_per_node)
    hlist = ",".join(hosts) if n == 1 else ",".join("%s:%d" % (h, n) for h in hosts)
    argv = ["mpirun", "--allow-run-as-root", "-np", str(len(hosts) * n), "-H", hlist,
            "-map-by", map_by or ("node" if n == 1 else "ppr:%d:node" % n), "-bind-to", "none",
            "-mca", "plm_rsh_agent", "ssh", "-mca", "plm_rsh_args", "-p %d" % int(port),
            "-mca", "pml", "ob1", "-mca", "btl", "^openib"]
    if tcp_if:
        argv += ["-mca", "btl_tcp_if_include", tcp_if, "-mca", "oob_tcp_if_include", tcp_if]
    for name, value in sorted(forward_env(env).items()):
        argv += ["-x", "%s=%s" % (name, value)]
    for name in forward:
        if not ENV_NAME_RE.match(str(name)):
            raise ValueError("not an environment variable name: %r" % (name,))
        argv += ["-x", str(name)]
    argv += list(extra or [])
    argv += list(command or ["hostname"])
    return argv


def timeout_argv(seconds: float, argv: List[str], kill_after: int = 10) -> List[str]:
    """``timeout`` (coreutils) around a command run inside the container: the job stops itself even if
    the engine exec that started it is gone."""
    return ["timeout", "--kill-after=%d" % int(kill_after), "%d" % max(1, int(seconds))] + list(argv)


# ---------------------------------------------------------------------------------------------------
# what a run tells


def _noticed(m: re.Match, _line: str):
    sig = m.group(4) or "signal %s" % m.group(3)
    return m.group(2), "rank %s exited on %s" % (m.group(1), sig), (int(m.group(1)), "exited on %s" % sig)


# The lines of a run that name a failed node - Open MPI 4.x / 5.x (ssh, its daemons, a rank's signal), NCCL and
# nccl-tests - each with what it says: (node as the line names it, reason, (rank, rank's reason) or None).
# A line counts once, for the first pattern that matches it.
_NODE_LINES = (
    (re.compile(r"ssh: connect to host (\S+) port \d+: (.+)$"),
     lambda m, line: (m.group(1), "ssh: %s" % m.group(2).strip(), None)),
    (re.compile(r"ssh: (?:Could not resolve hostname (\S+?):|connect to host (\S+) .*)(.*)$"),
     lambda m, line: (m.group(1) or m.group(2), "ssh: %s" % line.split("ssh: ", 1)[1].strip(), None)),
    (re.compile(r"^(\S+?): Permission denied"), lambda m, line: (m.group(1), "ssh: key rejected", None)),
    (re.compile(r"Remote daemon:\s*\S+\s+on node\s+(\S+)"),
     lambda m, line: (m.group(1), "lost contact with its MPI daemon", None)),
    (re.compile(r"process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+)(?: \(([^)]*)\))?"), _noticed),
    (re.compile(r"^\s*(\S+?):(\d+):\d+ \[(\d+)\] NCCL WARN (.*)$"),
     lambda m, line: (m.group(1), "NCCL WARN %s" % m.group(4).strip(), None)),
    # nccl-tests' "HOST: Test NCCL failure ..." (nccl_parse's pattern), indented or not
    (re.compile(r"^\s*" + TESTS_FAIL.pattern.lstrip("^")),
     lambda m, line: (m["host"], "%s failure %s %s" % (m["kind"], m["where"], m["msg"].strip()), None)),
)
_FIRST = re.compile(r"Process name:\s*\[\[\d+,\d+\],(\d+)\]")
_EXIT_CODE = re.compile(r"Exit code:\s*(-?\d+)")
_NOT_ENOUGH = re.compile(r"not enough slots available", re.I)
_DAEMONS = re.compile(r"ORTE was unable to reliably start one or more daemons|"
                      r"PRTE has lost communication|ORTE has lost communication", re.I)


def rank_hosts(stdout: str) -> Dict[int, str]:
    """rank -> host from nccl-tests' ``#  Rank  N Group  0 Pid  P on HOST device ...`` lines."""
    lines = (RANK_LINE.match(line.strip()) for line in (stdout or "").splitlines())
    return {int(m["rank"]): m["host"] for m in lines if m}


def classify_result(rc: Optional[int], stdout: str, stderr: str, timed_out: bool = False,
                    hosts: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
                    tail: int = 12) -> Dict[str, Any]:
    """What one mpirun run tells. ``hosts``: node (inventory name) -> the name/address mpirun used for
    it (so a message naming either is attributed to the node).

    Returns ok (rc 0 and not timed out), rc, timed_out, failed_hosts {node: reason}, failed_ranks
    {rank: {"host", "reason"}}, ranks_seen {rank: host}, reason (one line) and last_lines."""
    hosts = dict(hosts or {})
    alias = {}
    for node, conn in hosts.items():
        alias[str(node)] = str(node)
        alias[str(conn)] = str(node)
        alias[str(conn).split(".")[0]] = str(node)

    def who(name: str) -> str:
        name = (name or "").strip().rstrip(":")
        return alias.get(name) or alias.get(name.split(".")[0]) or name

    failed_hosts: Dict[str, str] = {}
    failed_ranks: Dict[int, Dict[str, str]] = {}
    seen = rank_hosts(stdout)
    text = (stdout or "") + "\n" + (stderr or "")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        for pattern, says in _NODE_LINES:
            m = pattern.search(ln)
            if m:
                named, reason, rank = says(m, ln)
                node = who(named)
                if rank is not None:
                    failed_ranks[rank[0]] = {"host": node, "reason": rank[1]}
                failed_hosts.setdefault(node, reason)
                break
    # "The first process to do so was: Process name: [[j,1],R]  Exit code: C"
    m = _FIRST.search(text)
    if m:
        r = int(m.group(1))
        code = _EXIT_CODE.search(text[m.end():])
        host = seen.get(r, "")
        reason = "exited with code %s" % (code.group(1) if code else "?")
        failed_ranks.setdefault(r, {"host": who(host) if host else "", "reason": reason})
        if host:
            failed_hosts.setdefault(who(host), "rank %d %s" % (r, reason))
    ok = rc == 0 and not timed_out
    if timed_out:
        reason = "no result within %ss (outer timeout)" % (int(timeout) if timeout else "?")
        if seen and hosts:
            silent = sorted(n for n in hosts if n not in {who(h) for h in seen.values()})
            if silent:
                reason += "; never reported a rank: %s" % ", ".join(silent)
                for n in silent:
                    failed_hosts.setdefault(n, "no rank reported before the timeout")
    elif rc == 0:
        reason = ""
    elif _NOT_ENOUGH.search(text):
        reason = "mpirun: not enough slots for the requested ranks"
    elif failed_hosts:
        reason = "; ".join("%s: %s" % (h, failed_hosts[h]) for h in sorted(failed_hosts))
    elif _DAEMONS.search(text):
        reason = "mpirun could not start or lost its daemons"
    else:
        reason = "mpirun exited with rc=%s" % rc
    return {"ok": ok, "rc": rc, "timed_out": bool(timed_out), "reason": reason,
            "failed_hosts": failed_hosts if not ok else {},
            "failed_ranks": {str(k): v for k, v in sorted(failed_ranks.items())} if not ok else {},
            "ranks_seen": {str(k): who(v) for k, v in sorted(seen.items())},
            "last_lines": lines[-tail:] if tail else []}


# ---------------------------------------------------------------------------------------------------
# the runner


def _run(argv: List[str], timeout: float):
    """(rc, stdout, stderr, timed_out); rc None when it did not finish or could not start (common/run.py: past the
    bound the whole group - the engine's exec, salloc, ssh - is killed)."""
    r = run_tool(argv, timeout)
    if r.error:
        return None, "", r.error, False
    return (None if r.timed_out else r.rc), r.stdout, r.stderr, r.timed_out


def self_safe_pattern(pattern: str) -> str:
    """A ``pkill -f`` regex that matches ``pattern`` but not the shell command line carrying it (the
    first character in brackets: ``/opt/x`` -> ``[/]opt/x``), so pkill does not kill its own shell."""
    if not pattern:
        raise ValueError("empty kill pattern")
    first = pattern[0]
    return "[%s]%s" % ("\\" + first if first in "]\\^-" else first, pattern[1:])


def cleanup_argvs(exec_base: List[str], hosts: Dict[str, str], launcher: str, pattern: str, port: int = 2222,
                  connect_timeout: int = 5) -> Dict[str, List[str]]:
    """node -> the command that kills ``pattern`` (pkill -f) in that node's container: directly in the
    launcher's container, over ssh on the containers' port for every other node."""
    pk = "pkill -KILL -f %s; true" % shlex.quote(self_safe_pattern(pattern))
    out = {}
    for node, conn in hosts.items():
        if node == launcher:
            out[node] = list(exec_base) + ["sh", "-c", pk]
        else:
            out[node] = list(exec_base) + ["ssh", "-p", str(int(port)), "-o", "BatchMode=yes",
                                            "-o", "ConnectTimeout=%d" % connect_timeout, conn, pk]
    return out


def cleanup(exec_base: List[str], hosts: Dict[str, str], launcher: str, pattern: str, port: int = 2222,
            timeout: float = 20) -> Dict[str, str]:
    """Kill ``pattern`` on every node (parallel, each bounded by ``timeout``); node -> '' when done, or
    why it could not be done."""
    # the launcher's mpirun first, so it does not restart or wait for what is killed next
    mpirun_pat = shlex.quote(self_safe_pattern("mpirun .*" + pattern))
    _run(list(exec_base) + ["sh", "-c", "pkill -KILL -f %s; true" % mpirun_pat], timeout)
    cmds = cleanup_argvs(exec_base, hosts, launcher, pattern, port, connect_timeout=max(1, int(timeout / 2)))

    def one(item):
        node, argv = item
        rc, _, err, to = _run(argv, timeout)
        if to:
            return node, "cleanup timed out after %ss" % int(timeout)
        if rc not in (0,):
            return node, "cleanup failed (rc=%s): %s" % (rc, (err or "").strip().splitlines()[-1:] or "")
        return node, ""

    with ThreadPoolExecutor(max_workers=min(16, max(1, len(cmds)))) as pool:
        return dict(pool.map(one, sorted(cmds.items())))


def run_job(exec_base: List[str], argv: List[str], timeout: float, hosts: Dict[str, str], launcher: str,
            kill_pattern: str, port: int = 2222, cleanup_timeout: float = 20,
            prefix: Sequence[str] = ()) -> Dict[str, Any]:
    """Run ``prefix + exec_base + argv`` (``<engine> [args] exec <container>`` + the mpirun line; ``prefix``:
    e.g. slurm_job.salloc_argv, the allocation it runs in) with a hard outer ``timeout``. On timeout every
    node is cleaned (``cleanup``, in the containers, without the prefix) so no rank is left running.

    Returns rc, stdout, stderr, timed_out, seconds, cleanup {node: ''|problem} (empty when not needed)
    and the classification (``classify_result``) under ``result``."""
    t0 = time.monotonic()
    rc, out, err, timed_out = _run(list(prefix) + list(exec_base) + list(argv), timeout)
    seconds = time.monotonic() - t0
    cleaned: Dict[str, str] = {}
    if timed_out:
        cleaned = cleanup(exec_base, hosts, launcher, kill_pattern, port, cleanup_timeout)
    res = classify_result(rc, out, err, timed_out, hosts, timeout)
    return {"rc": rc, "stdout": out, "stderr": err, "timed_out": timed_out, "seconds": round(seconds, 3),
            "cleanup": cleaned, "result": res}
