#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: run nccl-tests (all_reduce_perf, ...) across the pod's MPI containers, return parsed rows."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_nccl
short_description: Run nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf) across the MPI containers
description:
  - Runs on the launching DGX. From inside its MPI container (C(<engine> exec <container>)) it starts
    C(mpirun) across the I(targets)' containers over ssh on the containers' port (the mesh of the
    ngc_container role), one rank per GPU (C(-np) = targets x I(ranks_per_node), C(--map-by
    ppr:<n>:node)), with the RA's MCA flags and the NCCL environment of I(env_file) forwarded with C(-x),
    plus C(NCCL_DEBUG=INFO) and C(NCCL_DEBUG_SUBSYS=INIT,NET) so the transport lines are printed.
    The command line is built by C(module_utils/containers/mpi_job.py), shared with the training stage.
  - The program is C(<tests_dir>/<collective>_perf) - nccl-tests' binary in the image, or the pod-in-a-box's
    CPU stand-in when the inventory points I(tests_dir) at it (no simulator logic here).
  - Every target's container sshd is probed first (bounded); a node that does not answer is named and
    nothing is launched. The run has a hard outer I(timeout); on timeout every rank on every node is
    killed (C(pkill -f) the program, in each container, bounded) and the result names the nodes and ranks
    it heard from and those it did not.
  - Returns the nccl-tests rows (C(module_utils/nccl/parse.py), every released layout), the footer, the
    transport facts of the NCCL INFO lines, which ranks ran on which host, and I(ok). A hang, a crash or an
    unreadable output is I(ok=false) with I(error) naming hosts/ranks - not a task failure (unless
    I(fail_on_error)), so the stage records it and validate.yml goes on.
  - Check mode runs nothing and returns the command line.
version_added: "0.3.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.mpi_container
  - dgxpod.toolkit.slurm_launch
options:
  targets:
    description:
      - One entry per DGX taking part, the launcher (this host) first - C(node) (inventory name), C(connect)
        (the name or address ssh and mpirun use).
    type: list
    elements: dict
    required: true
  ranks_per_node:
    description: Ranks on every node (one per GPU).
    type: int
    default: 8
  collective:
    description: Which test.
    type: str
    choices: [all_reduce, all_gather, reduce_scatter]
    default: all_reduce
  tests_dir:
    description: Directory with the nccl-tests binaries inside the container.
    type: str
    default: /opt/nccl-tests/build
  min_bytes:
    description: Smallest message (C(-b)), nccl-tests size syntax (C(8), C(1M), C(8G)).
    type: str
    default: 8M
  max_bytes:
    description: Largest message (C(-e)).
    type: str
    default: 8G
  step_factor:
    description: Size multiplier between steps (C(-f)).
    type: int
    default: 2
  iters:
    description: Timed iterations per size (C(-n)).
    type: int
    default: 20
  warmup_iters:
    description: Warm-up iterations (C(-w)).
    type: int
    default: 5
  check:
    description: Check the results (C(-c 1)); false prints N/A in the #wrong column.
    type: bool
    default: true
  datatype:
    description: C(-d).
    type: str
    default: float
  op:
    description: C(-o).
    type: str
    default: sum
  tests_timeout:
    description: nccl-tests' own per-operation time limit in seconds (C(-T), newer nccl-tests); 0 - not passed.
    type: int
    default: 0
  timeout:
    description: Hard outer limit in seconds for the whole run (then every rank is killed).
    type: int
    default: 600
  probe_timeout:
    description: Seconds per ssh probe of a target's container.
    type: int
    default: 15
  env_file:
    description: The NCCL/MPI environment file on this host (dgx_network role); its variables are forwarded.
    type: path
    default: /etc/dgxpod/nccl.env
  env:
    description: More variables to forward (win over I(env_file)); C(NCCL_DEBUG)/C(NCCL_DEBUG_SUBSYS) default
      to C(INFO)/C(INIT,NET).
    type: dict
    default: {}
  mpirun_extra:
    description: Extra mpirun arguments.
    type: list
    elements: str
    default: []
  start_at:
    description:
      - Start mpirun at this moment (seconds since the epoch; the controller sets one for every launcher of a step
        or round, so runs that are compared with each other overlap as planned). The containers are probed
        first; the wait lasts at most 600 seconds. Unset - start at once.
      - A run that still starts more than 2 seconds late returns I(late_by).
    type: float
  fail_on_error:
    description: Fail the task when the run did not give a complete result.
    type: bool
    default: false
notes:
  - Supports check mode (runs nothing).
"""

EXAMPLES = r"""
- name: All-reduce across every DGX, 8 ranks each
  pod_nccl:
    engine: docker
    container: dgxpod-mpi
    tcp_if: enp132s0
    ranks_per_node: 8
    min_bytes: 8M
    max_bytes: 8G
    timeout: 900
    targets:
      - {node: DGX1-1, connect: DGX1-1}
      - {node: DGX1-2, connect: DGX1-2}
  register: nccl_all
"""

RETURN = r"""
start_slack:
  description: Seconds left until I(start_at) when the run was ready to start (after the container probes) - the
    part of the controller's margin the launch did not use; negative when it started late. For sizing the margin
    (pod_nccl_start_margin) on a big pod.
  returned: when start_at was given
  type: float
late_by:
  description: Seconds mpirun started after I(start_at), when more than 2 (the probes or the launch took longer
    than the controller's margin); the run is measured all the same.
  returned: when start_at was given and the run started more than 2 s late
  type: float
ok:
  description: The run finished and its output was read completely (rows and footer).
  returned: always
  type: bool
error:
  description: Why not, naming hosts and ranks (unreachable container, timeout, crash, NCCL WARN, unreadable output).
  returned: when not ok
  type: str
failed_hosts:
  description: node -> what went wrong there.
  returned: always
  type: dict
failed_ranks:
  description: rank -> {host, reason}.
  returned: always
  type: dict
rows:
  description:
    - nccl-tests rows - size, count, type, redop, root, out_of_place and in_place
      {time_us, algbw, busbw, wrong, error}.
  returned: always
  type: list
footer:
  description: out_of_bounds, out_of_bounds_ok, avg_busbw, avg_check, concluded.
  returned: when ok
  type: dict
transport:
  description: The NCCL INFO transport facts (module_utils/nccl/parse.transport_facts), or null when none were printed.
  returned: always
  type: dict
ranks:
  description: rank -> host, as nccl-tests printed them.
  returned: always
  type: dict
nodes:
  description: The nodes of this run, in order.
  returned: always
  type: list
backend:
  description: C(cpu) for the simulator's stand-in, else null (nccl-tests with NCCL on GPUs).
  returned: always
  type: str
seconds:
  description: Wall time of the mpirun.
  returned: when run
  type: float
slurm:
  description:
    - With I(scheduler=slurm) - job_id, granted, pending (it waited), job_name, partition, error (why no
      allocation), cancelled (C(scancel) output after a timeout); null otherwise.
  returned: always
  type: dict
cmd:
  description: The command run (salloc prefix with I(scheduler=slurm), engine exec, mpirun line).
  returned: always
  type: list
cleanup:
  description: node -> '' or a problem, when the timeout cleanup ran.
  returned: always
  type: dict
last_lines:
  description: The last lines of the output (for the report when not ok).
  returned: always
  type: list
"""

import os
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import (module_slurm_start,
    module_targets, mpi_job_argument_spec, mpirun_argv, read_env_file, run_job, timeout_argv)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.parse import (ParseError, parse_nccl_tests,
    parse_nccl_transport, transport_facts)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.ngc_container import classify_ssh
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import settle as slurm_settle
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import wait_s as slurm_wait_s


LATE_TOLERANCE = 2.0  # seconds past start_at that still count as "on time" (as pod_fio's)
MAX_WAIT = 600.0  # start_at further ahead than this is waited for this long only


def _probe(exec_base, target, port, timeout):
    argv = exec_base + ["ssh", "-p", str(port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=%d" % timeout,
                        target["connect"], "true"]
    r = run_tool(argv, timeout + 5)
    rc, out, err = (None if r.error else r.rc), r.stdout, r.stderr
    if r.timed_out:
        rc, out, err = None, "", "ssh: connect: Connection timed out (no answer within %ds)" % timeout
    res = classify_ssh(target["node"], "unknown", rc, out, err, "")
    return res


def nccl_args(p):
    """The nccl-tests command line (program + flags)."""
    prog = os.path.join(p["tests_dir"], "%s_perf" % p["collective"])
    args = [prog, "-b", str(p["min_bytes"]), "-e", str(p["max_bytes"]), "-f", str(p["step_factor"]),
            "-n", str(p["iters"]), "-w", str(p["warmup_iters"]), "-c", "1" if p["check"] else "0",
            "-d", p["datatype"], "-o", p["op"], "-g", "1"]
    if p["tests_timeout"]:
        args += ["-T", str(p["tests_timeout"])]
    return prog, args


def main():
    module = AnsibleModule(
        argument_spec=mpi_job_argument_spec(
            "targets",
            ranks_per_node=dict(type="int", default=8),
            collective=dict(type="str", choices=["all_reduce", "all_gather", "reduce_scatter"],
                            default="all_reduce"),
            tests_dir=dict(type="str", default="/opt/nccl-tests/build"),
            min_bytes=dict(type="str", default="8M"),
            max_bytes=dict(type="str", default="8G"),
            step_factor=dict(type="int", default=2),
            iters=dict(type="int", default=20),
            warmup_iters=dict(type="int", default=5),
            check=dict(type="bool", default=True),
            datatype=dict(type="str", default="float"),
            op=dict(type="str", default="sum"),
            tests_timeout=dict(type="int", default=0),
            timeout=dict(type="int", default=600),
            probe_timeout=dict(type="int", default=15),
            env_file=dict(type="path", default="/etc/dgxpod/nccl.env"),
            env=dict(type="dict", default={}),
            mpirun_extra=dict(type="list", elements="str", default=[]),
            start_at=dict(type="float"),
            fail_on_error=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    targets, nodes, hosts = module_targets(module, "targets")
    env = {}
    if p["env_file"] and os.path.exists(p["env_file"]):
        try:
            with open(p["env_file"]) as f:
                env = read_env_file(f.read(), p["env_file"])
        except (OSError, ValueError) as e:
            module.fail_json(msg="cannot read %s: %s" % (p["env_file"], e))
    env.setdefault("NCCL_DEBUG", "INFO")
    env.setdefault("NCCL_DEBUG_SUBSYS", "INIT,NET")
    env.update({str(k): str(v) for k, v in (p["env"] or {}).items()})
    prog, args = nccl_args(p)
    inner = mpirun_argv([t["connect"] for t in targets], p["tcp_if"], p["port"], extra=p["mpirun_extra"],
                        command=args, ranks_per_node=p["ranks_per_node"], env=env)
    # coreutils timeout inside the container too: the job ends itself even if this exec is killed
    inner = timeout_argv(p["timeout"] + 5, inner)
    engine = module.get_bin_path(p["engine"], required=not module.check_mode) or p["engine"]
    exec_base = [engine] + p["engine_args"] + ["exec", p["container"]]
    prefix, slurm = module_slurm_start(module, nodes, "dgxpod-nccl-%s" % nodes[0], p["timeout"])
    result = {"changed": False, "ok": False, "nodes": nodes, "rows": [], "transport": None, "ranks": {},
              "failed_hosts": {}, "failed_ranks": {}, "backend": None, "cmd": prefix + exec_base + inner,
              "cleanup": {}, "last_lines": [], "slurm": slurm}
    if module.check_mode:
        result.update(ok=True, msg="check mode: not run")
        module.exit_json(**result)

    # the launcher's own container first: when it is not running, only this node is to blame
    own = run_tool(exec_base + ["true"], p["probe_timeout"] + 5)
    own_rc, own_err = own.rc, (own.stderr or own.stdout or "").strip()
    if own.timed_out:
        own_rc, own_err = None, "no answer within %ds" % p["probe_timeout"]
    if own_rc != 0:
        why = "container %s down or not answering: %s" % (p["container"], own_err[-300:])
        result.update(error="cannot run commands in %s's MPI container (%s)" % (nodes[0], why),
                      failed_hosts={nodes[0]: why})
        if p["fail_on_error"]:
            module.fail_json(msg=result["error"], **result)
        module.exit_json(**result)
    # every target's container answers on its sshd before anything is launched
    with ThreadPoolExecutor(max_workers=min(16, len(targets))) as pool:
        probes = list(pool.map(lambda t: _probe(exec_base, t, p["port"], p["probe_timeout"]), targets))
    bad = {r["node"]: "%s (%s)" % (r["reason"], r["detail"]) for r in probes if not r["ok"]}
    if bad:
        result.update(error="container sshd not reachable from %s's container: %s"
                      % (nodes[0], "; ".join("%s: %s" % (n, bad[n]) for n in sorted(bad))),
                      failed_hosts=bad)
        if p["fail_on_error"]:
            module.fail_json(msg=result["error"], **result)
        module.exit_json(**result)

    if p["start_at"] is not None:  # the common start of the step or round (after the probes, which vary)
        slack = p["start_at"] - time.time()
        result["start_slack"] = round(slack, 2)
        time.sleep(max(0.0, min(MAX_WAIT, slack)))
        late = time.time() - p["start_at"]
        if late > LATE_TOLERANCE:
            result["late_by"] = round(late, 1)
    job = run_job(exec_base, inner, float(p["timeout"]) + slurm_wait_s(slurm), hosts, nodes[0], kill_pattern=prog,
                  port=p["port"], prefix=prefix)
    cls = job["result"]
    out, err = job["stdout"] or "", job["stderr"] or ""
    refused = slurm_settle(job, nodes, slurm, module.get_bin_path)
    if refused:
        result.update(refused, seconds=job["seconds"], last_lines=err.strip().splitlines()[-10:])
        if p["fail_on_error"]:
            module.fail_json(msg=result["error"], **result)
        module.exit_json(**result)
    result.update(seconds=job["seconds"], cleanup=job["cleanup"], last_lines=cls["last_lines"],
                  ranks=cls["ranks_seen"], failed_hosts=cls["failed_hosts"], failed_ranks=cls["failed_ranks"])
    try:
        result["transport"] = transport_facts(parse_nccl_transport(out + "\n" + err))
        result["backend"] = result["transport"]["backend"]
    except ParseError:
        result["transport"] = None
    try:
        parsed = parse_nccl_tests(out)
    except ParseError as e:
        parsed = None
        perr = str(e)
    if parsed is not None:
        result["rows"] = parsed["rows"]
        result["footer"] = parsed["footer"]
        result["backend"] = parsed["backend"] or result["backend"]
        result["ranks"] = {str(r["rank"]): r["host"] for r in parsed["ranks"]} or result["ranks"]
    if cls["ok"] and parsed is not None:
        result["ok"] = True
    else:
        why = cls["reason"] if not cls["ok"] else ""
        if parsed is None:
            why = (why + "; " if why else "") + perr
        result["error"] = why or "nccl-tests did not finish"
        if not result["failed_hosts"] and parsed is None:
            # the parser names hosts from WARN/failure lines: attribute them when mpirun itself did not
            for n in nodes:
                if n in perr:
                    result["failed_hosts"][n] = perr
    if not result["ok"] and p["fail_on_error"]:
        module.fail_json(msg=result["error"], **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
