#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: one pass of the training job across the pod's MPI containers (mpirun, bounded)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_train
short_description: Run the training stage's DDP job (one pass, or cold then warm in one job) across every DGX
description:
  - Runs on the launching DGX. Starts C(dgxpod_train.py) (shipped into every MPI container by the
    C(pod_training) role) with the shared launcher C(module_utils/containers/mpi_job.py) - C(mpirun) from this
    node's container into every container over ssh on the containers' port, I(ranks_per_node) ranks per
    node, the environment forwarded with C(-x) - under a hard I(timeout) after which every rank on every
    node is killed.
  - Rank r reads the dataset through I(data_dirs)[r mod N] (004's round robin over the data mounts).
  - Reads every rank's C(DGXPOD_TRAIN) line (C(module_utils/training/parse.py)) and returns one pass's
    figures per node and for the pod - images/s, storage MB/s read, step time, the fraction of it spent
    waiting for data, the mounts read, the loss per step, GPU utilisation when sampled.
  - With I(passes) the job runs those passes one after another in the same ranks (one C(mpirun), one
    rendezvous, PyTorch started once) and returns each pass's figures in I(passes); a pass that failed ends the
    job, and the passes after it are not in I(passes) (they did not run).
  - A crash, a hang (timeout), a rank that did not report or output that does not parse gives
    I(ok=false) and an I(error) naming the node and the rank; with I(fail=true) the task fails.
  - Writes nothing on the storage (the job only reads the dataset).
version_added: "0.1.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.mpi_container
  - dgxpod.toolkit.slurm_launch
options:
  hosts:
    description: One entry per DGX, the launcher first - C(node) (inventory name), C(connect) (name or address
      mpirun reaches its container by), C(hostname) (what C(hostname) prints there, to name ranks by node).
    type: list
    elements: dict
    required: true
  ranks_per_node:
    description: Ranks on every node (one per GPU on real pods).
    type: int
    default: 1
  master_addr:
    description: Address of rank 0's node for C(torch.distributed) (the launcher's C(connect) if empty).
    type: str
    default: ""
  master_port:
    description: TCP port of the rendezvous.
    type: int
    default: 29533
  data_dirs:
    description: The dataset root through each data mount (as the containers see it, under /mnt).
    type: list
    elements: str
    required: true
  pass_name:
    description: Name of the one pass when I(passes) is empty.
    type: str
    default: run
  passes:
    description: Names of the passes to run one after another in one job (C([cold, warm])); each pass builds its
      model anew from the same seed and reads the same files. Empty - one pass named I(pass_name).
    type: list
    elements: str
    default: []
  job:
    description: The job's settings - C(model), C(backend), C(device), C(amp), C(batch), C(steps), C(warmup),
      C(workers), C(image_size), C(lr), C(threads), C(seed), C(gpu_util_interval), and for a user's dataset
      C(manifest) (its file list), C(format) (C(imagefolder) or C(shards)), C(classes), C(shuffle_buffer) (each
      becomes the script's C(--option)).
    type: dict
    default: {}
  env:
    description: Environment forwarded to every rank (C(-x NAME=value)).
    type: dict
    default: {}
  script:
    description: C(dgxpod_train.py) as the containers see it.
    type: str
    default: /opt/dgxpod-train/dgxpod_train.py
  python:
    description: Python interpreter in the containers.
    type: str
    default: python3
  timeout:
    description: Seconds the whole job (every pass) may take; then every rank is killed, and the pass that was
      running is an error.
    type: int
    default: 900
  fail:
    description: Fail the task when the pass did not give a result (false - return I(ok=false) and I(error)).
    type: bool
    default: true
notes:
  - Supports check mode - returns the mpirun command line without running it.
"""

EXAMPLES = r"""
- name: Cold pass of the training job
  pod_train:
    engine: docker
    container: dgxpod-mpi
    hosts:
      - {node: dgx1, connect: 10.55.66.11, hostname: dgx1}
      - {node: dgx2, connect: 10.55.66.12, hostname: dgx2}
    tcp_if: enp132s0
    ranks_per_node: 8
    data_dirs: [/mnt/isilon1/dgxpod-dataset, /mnt/isilon2/dgxpod-dataset]
    passes: [cold, warm]
    job: {model: resnet50, backend: nccl, device: cuda, amp: true, batch: 256, steps: 100, warmup: 20}
"""

RETURN = r"""
ok:
  description: Every rank reported a result of every pass.
  type: bool
  returned: always
error:
  description: Why the pass gave no result, naming the node and rank (empty when ok).
  type: str
  returned: always
failed_nodes:
  description: node -> what went wrong there.
  type: dict
  returned: always
summary:
  description: The pass's figures (module_utils/training/parse.py summarize) - nodes, images_per_s,
    mb_per_s, data_wait_fraction, step_s, losses, loss_first, loss_last, mounts_read, job.
  type: dict
  returned: when ok, without I(passes)
passes:
  description: With I(passes) - pass name -> ok, error, failed_nodes, summary (when ok), argv (the command that
    runs that pass alone); only the passes that ran, in order - none after the first that failed (when Slurm
    refused the job, the first pass with Slurm's reason). Empty without I(passes) and in check mode.
  type: dict
  returned: always
argv:
  description: The command run on the launcher (the same line started by hand gives the same job; with
    I(scheduler=slurm) behind its salloc prefix).
  type: list
  returned: always
slurm:
  description: With I(scheduler=slurm) - job_id, granted, pending, job_name, partition, error (why no allocation),
    cancelled (after a timeout); null otherwise.
  type: dict
  returned: always
seconds:
  description: Time the job took.
  type: float
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import (cleanup, module_slurm_start,
    module_targets, mpi_job_argument_spec, mpirun_argv, run_job, timeout_argv)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import settle as slurm_settle
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import wait_s as slurm_wait_s
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training.parse import parse_output, split_passes, summarize

JOB_OPTIONS = ("model", "backend", "device", "batch", "steps", "warmup", "workers", "image_size", "lr", "threads",
               "seed", "gpu_util_interval", "init_timeout", "manifest", "format", "classes", "shuffle_buffer")


def pass_names(p):
    """The passes the job runs, in order."""
    return list(p.get("passes") or []) or [p["pass_name"]]


def script_argv(p, only=None):
    """The training script's command line from the module's parameters (``only``: that one pass)."""
    job = p["job"] or {}
    master = p["master_addr"] or p["hosts"][0]["connect"]
    names = [only] if only else pass_names(p)
    which = ["--passes", ",".join(names)] if len(names) > 1 else ["--pass-name", names[0]]
    argv = [p["python"], p["script"], "--data-dirs", ",".join(p["data_dirs"])] + which + [
        "--master-addr", str(master), "--master-port", str(p["master_port"])]
    for key in JOB_OPTIONS:
        if job.get(key) is not None and job.get(key) != "":
            argv += ["--" + key.replace("_", "-"), str(job[key])]
    if job.get("amp"):
        argv.append("--amp")
    return argv


def rank_node(rank, ranks_per_node, hosts):
    """The node rank r runs on (mpirun maps ranks_per_node consecutive ranks per host, in host order)."""
    i = int(rank) // max(1, int(ranks_per_node))
    return hosts[i]["node"] if 0 <= i < len(hosts) else "?"


def explain(p, run, parsed):
    """(error text, {node: problem}) for a pass without a full result."""
    hosts, rpn = p["hosts"], p["ranks_per_node"]
    res = run.get("result") or {}
    failed = dict(res.get("failed_hosts") or {})
    parts = []
    names = {h.get("hostname") or h["node"]: h["node"] for h in hosts}
    for e in (parsed or {}).get("errors") or []:
        # the host the rank reported; mpirun's placement order is not always the -H order
        node = names.get(e.get("host")) or (rank_node(e["rank"], rpn, hosts) if isinstance(e.get("rank"), int)
                                             else e.get("host"))
        parts.append("rank %s on %s: %s" % (e.get("rank"), node, e["error"]))
        failed.setdefault(node, "rank %s: %s" % (e.get("rank"), e["error"]))
    for r, info in sorted((res.get("failed_ranks") or {}).items(), key=lambda kv: int(kv[0])):
        node = names.get(info.get("host"), info.get("host")) or rank_node(r, rpn, hosts)
        if not any(s.startswith("rank %s " % r) for s in parts):
            parts.append("rank %s on %s: %s" % (r, node, info.get("reason")))
        failed.setdefault(node, "rank %s: %s" % (r, info.get("reason")))
    if run.get("timed_out"):
        seen = {rec["rank"] for rec in (parsed or {}).get("records") or []}
        silent = [r for r in range(len(hosts) * rpn) if r not in seen]
        nodes = sorted({rank_node(r, rpn, hosts) for r in silent})
        parts.insert(0, "no result within %ds: rank(s) %s on %s never finished (killed on every node)"
                     % (p["timeout"], ",".join(map(str, silent)), ", ".join(nodes)))
        for n in nodes:
            failed.setdefault(n, "ranks did not finish within %ds" % p["timeout"])
    if not parts:
        parts.append(res.get("reason") or "mpirun exited with rc=%s" % run.get("rc"))
    left = [n for n, why in (run.get("cleanup") or {}).items() if why]
    if left:
        parts.append("could not clean up on %s" % ", ".join(sorted(left)))
    return "; ".join(parts), failed


def main():
    module = AnsibleModule(
        argument_spec=mpi_job_argument_spec(
            "hosts",
            ranks_per_node=dict(type="int", default=1),
            master_addr=dict(type="str", default=""),
            master_port=dict(type="int", default=29533),
            data_dirs=dict(type="list", elements="str", required=True),
            pass_name=dict(type="str", default="run"),
            passes=dict(type="list", elements="str", default=[]),
            job=dict(type="dict", default={}),
            env=dict(type="dict", default={}),
            script=dict(type="str", default="/opt/dgxpod-train/dgxpod_train.py"),
            python=dict(type="str", default="python3"),
            timeout=dict(type="int", default=900),
            fail=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    hosts, nodes, connect = module_targets(module, "hosts", prefix="pod_train: ")
    argv = timeout_argv(p["timeout"], mpirun_argv([h["connect"] for h in hosts], p["tcp_if"], p["port"],
                                                  command=script_argv(p), ranks_per_node=p["ranks_per_node"],
                                                  env=p["env"]))
    exec_base = [p["engine"]] + list(p["engine_args"]) + ["exec", p["container"]]
    prefix, slurm = module_slurm_start(module, nodes, "dgxpod-train-%s" % nodes[0], p["timeout"] + 30)
    names = pass_names(p)
    out = dict(changed=False, ok=False, error="", failed_nodes={}, argv=prefix + exec_base + argv, seconds=0.0,
               slurm=slurm, passes={})
    if module.check_mode:
        out["error"] = "check mode: not run"
        module.exit_json(**out)
    run = run_job(exec_base, argv, p["timeout"] + 30 + slurm_wait_s(slurm), connect,
                  hosts[0]["node"], kill_pattern="dgxpod_train.py", port=p["port"], prefix=prefix)
    refused = slurm_settle(run, nodes, slurm, module.get_bin_path)
    if refused:
        out.update(error=refused["error"], failed_nodes=refused["failed_hosts"], seconds=run.get("seconds"),
                   last_lines=(run.get("stderr") or "").strip().splitlines()[-12:])
        if len(names) > 1:  # no pass ran; the first is the one that could not start
            out["passes"] = {names[0]: {"ok": False, "error": out["error"], "failed_nodes": out["failed_nodes"],
                                        "argv": out["argv"]}}
        if p["fail"]:
            module.fail_json(msg="training pass %s: %s" % (names[0], out["error"]), **out)
        module.exit_json(**out)
    if run.get("rc") in (124, 137) and not run.get("timed_out"):  # the in-container `timeout` stopped mpirun
        run["timed_out"] = True
        run["cleanup"] = cleanup(exec_base, connect, hosts[0]["node"],
                                 "dgxpod_train.py", p["port"])
    out["seconds"] = run.get("seconds")
    results = judge(p, run, names, hosts)
    bad = [(n, r) for n, r in results.items() if not r["ok"]]
    out["ok"] = len(results) == len(names) and not bad
    for _name, r in bad:
        out["failed_nodes"].update(r["failed_nodes"])
    if len(names) > 1:
        for name, r in results.items():
            r["argv"] = prefix + exec_base + timeout_argv(p["timeout"], mpirun_argv(
                [h["connect"] for h in hosts], p["tcp_if"], p["port"], command=script_argv(p, only=name),
                ranks_per_node=p["ranks_per_node"], env=p["env"]))
        out["passes"] = results
        out["error"] = "; ".join("%s pass: %s" % (n, r["error"]) for n, r in bad)
    else:
        r = results[names[0]]
        out["error"] = r["error"]
        if r["ok"]:
            out["summary"] = r["summary"]
    if not out["ok"]:
        out["last_lines"] = ((run.get("result") or {}).get("last_lines") or [])[-12:]
        if p["fail"]:
            module.fail_json(msg="training pass %s: %s" % (bad[0][0] if bad else names[-1], out["error"]), **out)
    module.exit_json(**out)


def judge(p, run, names, hosts):
    """{pass: {ok, error, failed_nodes, summary}} for the passes that ran, in order, up to the first that failed.

    A pass is done when every rank reported it and none failed in it. The last pass also needs mpirun to have
    ended cleanly (rc 0, no timeout); an earlier pass whose every rank reported was measured to its end even when
    a later pass then crashed or hung."""
    world = len(hosts) * p["ranks_per_node"]
    node_of = {h.get("hostname") or h["node"]: h["node"] for h in hosts}
    node_of.update({h["node"]: h["node"] for h in hosts})
    clean = run.get("rc") == 0 and not run.get("timed_out")
    try:
        parts = split_passes(parse_output(run.get("stdout") or ""), names)
    except ValueError as exc:
        return {names[0]: {"ok": False, "error": str(exc), "failed_nodes": {}}}
    out = {}
    for i, name in enumerate(names):
        part = parts[name]
        reported = {r["rank"] for r in part["records"]}
        r = {"ok": False, "error": "", "failed_nodes": {}}
        if not part["errors"] and reported >= set(range(world)) and (clean or i < len(names) - 1):
            try:
                r.update(ok=True, summary=summarize(part["records"], node_of, world))
            except ValueError as exc:
                r["ok"], r["error"] = False, str(exc)
        else:
            r["error"], r["failed_nodes"] = explain(p, run, part)
        out[name] = r
        if not r["ok"]:
            break
    return out


if __name__ == "__main__":
    main()
