#!/usr/bin/env python3
"""Ansible's own cost of one task on one host on this controller, and what it bounds (issue 19).

    .venv/bin/python scripts/task_floor.py [--hosts 4 16] [--tasks 40] [--recap site-rerun.log --rerun 11.2]

Every task Ansible runs on a host costs the controller a worker fork, the task's templating and the result's
return, whatever the task does - a ``set_fact`` as much as a module. This measures that floor with nothing else in
it: a play of ``--tasks`` ``set_fact`` tasks on ``--hosts`` inventory hosts whose connection is ``local`` (no host
is contacted; ``set_fact`` runs in the controller's worker), minus the same play with no task, per host-task.
It runs with the project's ansible.cfg (the default strategy, the preloaded filters).

With a no-op ``site.yml`` re-run's recap and its wall time (``--recap``, ``--rerun``) it also prints the bound the
floor puts on issue 19's ratios (``ratio_bounds``): a no-op re-run of N DGX costs at least F + N x k x f, where k is
the host-tasks a DGX runs (ok + failed + skipped in the recap), f the floor and F the part that does not
grow with the DGX (the Ansible start, preflight, the switch plays).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.join(ROOT, ".venv", "bin")

RECAP_LINE = re.compile(r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=\d+\s+unreachable=(?P<unreachable>\d+)\s+"
                        r"failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)")


def host_tasks(output: str) -> dict:
    """Host-tasks per host from the PLAY RECAP of an ``ansible-playbook`` run: ok + failed + skipped + unreachable
    (a changed task is also counted in ok). Only the last recap of the output counts; hosts missing from it are
    absent from the result. Pure; tested against real recaps (tests/unit/test_task_floor.py)."""
    if "PLAY RECAP" not in output:
        return {}
    counts = {}
    for line in output.rsplit("PLAY RECAP", 1)[1].splitlines():
        m = RECAP_LINE.match(line.strip())
        if m:
            counts[m.group("host")] = sum(int(m.group(k)) for k in ("ok", "failed", "skipped", "unreachable"))
    return counts


def per_host_task(t_tasks: float, t_empty: float, hosts: int, tasks: int) -> float:
    """Seconds per host-task: the play with ``tasks`` tasks minus the play with none, over hosts x tasks."""
    if hosts <= 0 or tasks <= 0:
        raise ValueError("hosts and tasks must be positive")
    return max(0.0, t_tasks - t_empty) / (hosts * tasks)


def ratio_bounds(rerun_s: float, dgx: int, tasks_per_dgx: float, floor_s: float, big: int = 16) -> dict:
    """What the floor allows, from a no-op re-run of ``dgx`` DGX that took ``rerun_s`` seconds with
    ``tasks_per_dgx`` host-tasks a DGX and ``floor_s`` seconds a host-task.

    - ``per_dgx_s``: the least a DGX adds to a re-run, k x f;
    - ``fixed_s``: the most the part that does not grow with the DGX can be, rerun - dgx x k x f (the re-run's time
      above the floor is all put there, the kindest reading for the ratio);
    - ``ratio_big``: the least ``big``-DGX re-run / ``dgx``-DGX re-run the floor allows, (F + big k f) / (F + dgx k f);
    - ``max_tasks_for_2x``: the host-tasks a DGX may run for that ratio to reach 2, F / ((big - 2 dgx) f);
    - ``floor_share``: the part of the re-run that is the floor alone, dgx k f / rerun.
    Pure."""
    if rerun_s <= 0 or dgx <= 0 or floor_s <= 0 or big <= 2 * dgx:
        raise ValueError("need a positive re-run, DGX count and floor, and big > 2 x dgx")
    per_dgx = tasks_per_dgx * floor_s
    fixed = max(0.0, rerun_s - dgx * per_dgx)
    return {
        "per_dgx_s": per_dgx,
        "fixed_s": fixed,
        "ratio_big": (fixed + big * per_dgx) / (fixed + dgx * per_dgx),
        "max_tasks_for_2x": fixed / ((big - 2 * dgx) * floor_s),
        "floor_share": dgx * per_dgx / rerun_s,
    }


def _inventory(path: str, hosts: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("all:\n  hosts:\n")
        fh.writelines("    floor%d:\n" % i for i in range(hosts))
        # local: nothing is contacted; the controller's own Python for the (unused) interpreter discovery
        fh.write("  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n" % sys.executable)


def _play(path: str, tasks: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("- name: Floor\n  hosts: all\n  gather_facts: false\n  tasks:\n")
        if not tasks:
            fh.write("    - name: Nothing\n      ansible.builtin.meta: noop\n")
        for i in range(tasks):
            fh.write("    - name: Task %d\n      ansible.builtin.set_fact:\n" % i)
            fh.write("        floor_%d: \"{{ inventory_hostname }}\"\n" % i)


def playbook_env(extra: dict | None = None) -> dict:
    """The environment the measuring scripts run ansible-playbook in: the project's ansible.cfg and the venv."""
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_DEPRECATION_WARNINGS="false", PATH=VENV_BIN + ":" + os.environ.get("PATH", ""),
                **(extra or {}))


def run_playbook(inventory: str, play: str, env: dict, prefix: tuple = (), who: str = "task_floor") -> tuple:
    """(wall seconds, CPU seconds of ansible-playbook and its children) of one playbook run from the project root,
    started under ``prefix`` (e.g. ``("unshare", "-n")``); RuntimeError with the output's tail when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    res = subprocess.run(list(prefix) + [os.path.join(VENV_BIN, "ansible-playbook"), "-i", inventory, play],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError("%s: ansible-playbook %s failed (%d):\n%s\n%s" % (
            who, os.path.basename(play), res.returncode, res.stdout[-2000:], res.stderr[-2000:]))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(hosts: int, tasks: int, env_extra: dict | None = None) -> dict:
    """Run the empty play and the ``tasks`` play on ``hosts`` local hosts; their seconds and the floor."""
    env = playbook_env(env_extra)
    with tempfile.TemporaryDirectory(prefix="task-floor-") as tmp:
        inv, empty, full = (os.path.join(tmp, n) for n in ("hosts.yml", "empty.yml", "tasks.yml"))
        _inventory(inv, hosts)
        _play(empty, 0)
        _play(full, tasks)
        t_empty = run_playbook(inv, empty, env)[0]
        t_tasks = run_playbook(inv, full, env)[0]
    return {"hosts": hosts, "tasks": tasks, "empty_s": t_empty, "tasks_s": t_tasks,
            "floor_s": per_host_task(t_tasks, t_empty, hosts, tasks)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--recap", help="the output of a no-op site.yml re-run (for the bounds)")
    ap.add_argument("--rerun", type=float, help="that re-run's wall seconds")
    ap.add_argument("--dgx-prefix", default="sim-dgx", help="the DGX host names' prefix in the recap")
    args = ap.parse_args()
    floors = []
    for n in args.hosts:
        r = measure(n, args.tasks)
        floors.append(r["floor_s"])
        print("%d hosts x %d set_fact: %.2f s (empty play %.2f s): %.1f ms per host-task" % (
            n, args.tasks, r["tasks_s"], r["empty_s"], 1000 * r["floor_s"]))
    if args.recap and args.rerun:
        with open(args.recap, encoding="utf-8") as fh:
            counts = {h: c for h, c in host_tasks(fh.read()).items() if h.startswith(args.dgx_prefix)}
        if not counts:
            sys.exit("task_floor: no %s* host in the recap of %s" % (args.dgx_prefix, args.recap))
        k = sum(counts.values()) / len(counts)
        b = ratio_bounds(args.rerun, len(counts), k, min(floors))
        print("re-run of %d DGX, %.1f host-tasks a DGX: floor %.2f s a DGX, fixed part <= %.1f s, floor share %.0f %%; "
              "16/%d ratio >= %.2f; 2x needs <= %.1f host-tasks a DGX" % (
                  len(counts), k, b["per_dgx_s"], b["fixed_s"], 100 * b["floor_share"], len(counts), b["ratio_big"],
                  b["max_tasks_for_2x"]))


if __name__ == "__main__":
    main()
