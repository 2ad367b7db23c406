# -*- coding: utf-8 -*-
"""dgxpod-health: the DGX's own health check, run by slurmd as ``HealthCheckProgram`` (slurm.conf
HealthCheckInterval / HealthCheckNodeState; docs/slurm.md "The health program").

It is the ``__main__`` of a zipapp the Slurm role builds on the controller (roles/slurm/files/dgxpod_health_build.py)
with everything it imports: this file, library/dgx_gpu_health.py and library/dgx_node_health.py (their ``gather``
functions read the node, as the validate stages' modules do), the collection's module_utils (the stages'
parsers and evaluators, the drain rule in module_utils/slurm/health.py) and ansible-core's ``ansible.module_utils``
(the two modules import ``AnsibleModule`` at module scope). One file, the same code the controller runs.

One run:
  1. read this DGX's GPUs (nvidia-smi -q -x, nvlink -s/-e, topo -m, /proc/modules, the HCAs; no DCGM diag, no
     nvbandwidth) and its kernel log since the last healthy run (``<state_dir>/health-<node>.last``; the first run
     looks back ``window_hours``), host inventory and BMC;
  2. judge them with module_utils/gpu/eval.py and node/eval.py (module_utils/slurm/health.py evaluate_local);
  3. drain this node in Slurm with ``dgxpod-health: <first problem>`` when a check fails or cannot read, resume it
     when healthy again only if the drain is ours (slurm/health.py decide) - an administrator's drain is never
     touched;
  4. when healthy, move the mark to the end of the window read, so a kernel event drains until it is
     acknowledged (``--acknowledge`` moves the mark to now) rather than for one interval.

Exit status: 0 healthy, 1 a problem found (whatever Slurm was told), 2 the program could not decide (bad
configuration, scontrol failed, a bug): then nothing is drained - a broken checker must not empty the partition.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback

import dgx_gpu_health
import dgx_node_health
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_status
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import health

CONFIG = "/etc/dgxpod/health.json"
# slurmd starts HealthCheckProgram with a bare environment (no PATH): the tools' usual places
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def load_config(path):
    """The role's per-node configuration (roles/slurm/tasks/health.yml: node, dgx_model, nvswitch, fs_root,
    state_dir, window_hours, tool_timeout, scontrol, ignore, pod, expectations; tests may give ``context``)."""
    with open(path) as fh:
        conf = json.load(fh)
    if not conf.get("node"):
        raise ValueError("%s names no node" % path)
    return conf


def mark_path(conf, node):
    """The file holding the end of the last healthy run's kernel-log window: per node, so a /var/lib shared by
    several nodes (the pod-in-a-box's) keeps them apart."""
    return os.path.join(conf.get("state_dir") or "/var/lib/dgxpod", "health-%s.last" % node)


def read_mark(path):
    """The epoch seconds in ``path``, or None when there is none (first run) or it is unreadable."""
    try:
        with open(path) as fh:
            return float(fh.read().strip())
    except (OSError, ValueError):
        return None


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename (a reader never sees half of it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def read_node(conf, since, run=run_status, which=shutil.which):
    """(gpu reading, node reading): the two modules' ``gather`` with the health mode's cheap options."""
    timeout = int(conf.get("tool_timeout") or 20)
    root = conf.get("fs_root") or "/"
    gpu = dgx_gpu_health.gather(run, which, root, 0, timeout, None, bool(conf.get("nvswitch")), False)
    node = dgx_node_health.gather(run, which, root, int(conf.get("window_hours") or 24), since, timeout)
    return gpu, node


def context_of(conf):
    """The evaluators' context: the configuration's ``context``, with ``simulated`` from the pod model the role
    writes (``pod.simulated``, as results.json reads it) unless the context says it."""
    ctx = dict(conf.get("context") or {})
    ctx.setdefault("simulated", (conf.get("pod") or {}).get("simulated", False))
    return ctx


def check(conf, node, run=run_status, which=shutil.which):
    """Read and judge this node: (results, problems, node reading)."""
    path = mark_path(conf, node)
    gpu, reading = read_node(conf, read_mark(path), run, which)
    recorded = health.records(node, gpu, reading, conf.get("dgx_model"))
    results = health.evaluate_local(recorded, conf.get("expectations") or {}, context_of(conf),
                                    conf.get("ignore") or ())
    return results, health.problems(results, node), reading


def main(argv=None):
    parser = argparse.ArgumentParser(prog="dgxpod-health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=CONFIG, help="the role's configuration (default %(default)s)")
    parser.add_argument("--node", help="the Slurm node name (default $SLURMD_NODENAME, else the configuration's)")
    parser.add_argument("--dry-run", action="store_true", help="check and say what it would do; change nothing")
    parser.add_argument("--acknowledge", action="store_true",
                        help="move the kernel-log mark to now (the events so far are known) and exit")
    parser.add_argument("--json", action="store_true", help="print the whole outcome as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("PATH", DEFAULT_PATH)
    try:
        conf = load_config(args.config)
        node = args.node or os.environ.get("SLURMD_NODENAME") or conf["node"]
        if args.acknowledge:
            write_atomic(mark_path(conf, node), "%d\n" % time.time())
            print("dgxpod-health %s: kernel-log mark moved to now" % node)
            return 0
        started = time.monotonic()
        results, found, reading = check(conf, node)
        if args.dry_run:
            state = None
            rc, text, err = run_status([conf.get("scontrol") or "scontrol", "show", "node", "-o", node], 30)
            if rc == 0:
                state = health.node_state(text, node)
            decision = health.decide(state, found)
            outcome = {"node": node, "action": decision["action"], "reason": decision["reason"],
                       "why": decision["why"] + " (dry run: nothing changed)",
                       "problems": [health.describe(r) for r in found],
                       "error": None if rc == 0 else "scontrol show node: exit %s: %s" % (rc, (err or text).strip())}
        else:
            outcome = health.run_once(node, found, run_status, conf.get("scontrol") or "scontrol")
        if not found and not args.dry_run:
            write_atomic(mark_path(conf, node), "%d\n" % int(reading["until"]))
        outcome["checks"] = len(results)
        outcome["elapsed"] = round(time.monotonic() - started, 2)
        write_atomic(os.path.join(conf.get("state_dir") or "/var/lib/dgxpod", "health-%s.json" % node),
                     json.dumps(dict(outcome, results=[r.to_dict() for r in results]), indent=1, default=str))
    except Exception:  # noqa: BLE001 - a broken checker says so and drains nothing
        sys.stderr.write("dgxpod-health: could not decide, nothing changed:\n%s" % traceback.format_exc())
        return 2
    if args.json:
        print(json.dumps(outcome, indent=1, default=str))
    else:
        print("dgxpod-health %s: %d checks, %d problem(s), %s%s (%s s)%s" % (
            node, outcome["checks"], len(found), outcome["action"],
            ": " + outcome["reason"] if outcome["reason"] else "", outcome["elapsed"],
            "; error: " + outcome["error"] if outcome["error"] else ""))
    if outcome["error"]:
        return 2
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
