#!/usr/bin/env python3
"""Measure what users wait for, on the pod-in-a-box, and write docs/benchmarks.md.

    .venv/bin/python scripts/benchmark.py [--nodes 4 16 30] [--linear-max 16] [--output docs/benchmarks.md]

Also the switch config generation for a 1,000-switch fabric (scripts/switch_scale.py, no network) and the
planned duration of a full validation at 4, 16, 140 and 1,000 DGX (scripts/plan_perf.py, no network).
For each pod size: sim up (cold), sim up again (idempotent), site.yml first run, site.yml re-run
(must be changed=0), switches.yml alone, validate.yml state checks only, the containers check, the whole validate.yml
(iperf3 + fio, quick profile; pods up to --full-validate-max nodes), sim down. Also the set-up
re-run and the unit tests, and, from the sizes measured, the seconds per added DGX of the re-run and the state
checks (growth_rows; issue 19 item 4: 4, 16 and 30 DGX, the simulator's largest pod).
Run as root on an otherwise idle machine; it builds and removes the simulator itself.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
sys.path.insert(0, ROOT)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import format_eta  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import task_floor  # noqa: E402


LINEAR = {"ANSIBLE_STRATEGY": "linear"}  # Ansible's own strategy; the default is mitogen_linear (ansible.cfg)
STATE_SKIP = "iperf,fio,nccl,training"  # validate.yml's state checks only
PREDICT_DGX = (4, 16, 140, 1000)  # issue 19: predicted full validation durations


LAST_CPU = {}  # the CPU seconds of the last timed step: "controller" (the command and its descendants), "machine"


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (not idle, not waiting for I/O) since boot (/proc/stat)."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / float(os.sysconf("SC_CLK_TCK"))


def cpu_note() -> str:
    """Where the last step's CPU went: the controller (ansible-playbook, its forks, Mitogen, ssh - everything it
    started and waited for) and the rest of the machine (the simulated nodes' sshd, Python and commands, the
    storage stand-ins). On a real pod the second part runs on the nodes' own CPUs, not on the controller's."""
    ctl, total = LAST_CPU.get("controller"), LAST_CPU.get("machine")
    if ctl is None or total is None:
        return ""
    return "CPU: controller %.1f s, simulated nodes and the rest %.1f s" % (ctl, max(0.0, total - ctl))


def timed(cmd, env_extra=None, **kw):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=VENV_BIN + ":" + os.environ["PATH"], **(env_extra or {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = machine_busy_seconds()
    start = time.monotonic()
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, **kw)
    elapsed = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU.update(controller=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                    machine=machine_busy_seconds() - busy)
    if res.returncode != 0:
        raise StepFailed(cmd, env_extra, res, elapsed)
    return elapsed, res.stdout


class StepFailed(Exception):
    """A measured step failed: the rows measured so far are still written, with this one marked failed."""

    def __init__(self, cmd, env_extra, res, elapsed):
        self.cmd, self.env, self.res, self.elapsed = cmd, env_extra or {}, res, elapsed
        why = [ln for ln in (res.stdout + "\n" + res.stderr).splitlines() if "Error" in ln or "ERROR" in ln]
        self.why = (why[-1].strip() if why else "exit code %d" % res.returncode)[:300].replace("|", "/")
        super().__init__("benchmark: %s failed (%d):\n%s\n%s" % (" ".join(cmd), res.returncode, res.stdout[-4000:],
                                                                 res.stderr[-2000:]))

    def row(self):
        env = " ".join("%s=%s" % kv for kv in sorted(self.env.items()))
        return ("FAILED: %s%s" % ((env + " ") if env else "", " ".join(self.cmd)), "-", self.elapsed, self.why)


def changed_total(output: str) -> int:
    return sum(int(m) for m in re.findall(r"changed=(\d+)", output.split("PLAY RECAP")[-1]))


def summary(output: str) -> str:
    """'N pass, N fail, N skipped, N error' from the report's closing message."""
    m = re.search(r"results: (\d+ pass, \d+ fail, \d+ skipped,\s+\d+ error)", output)
    return re.sub(r"\s+", " ", m.group(1)) if m else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--storage", type=int, default=2)
    ap.add_argument("--full-validate-max", type=int, default=4,
                    help="run the whole validate.yml (iperf3 + fio) only on pods up to this size")
    ap.add_argument("--skip-unit", action="store_true", help="do not time the unit tests")
    ap.add_argument("--no-linear", dest="linear", action="store_false",
                    help="do not time the re-run with Ansible's linear strategy (no Mitogen) side by side")
    ap.add_argument("--linear-max", type=int, default=16,
                    help="time the linear strategy side by side only on pods up to this size (default 16)")
    ap.add_argument("--output", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = ap.parse_args()
    podsim = os.path.join(ROOT, "sim", "podsim")
    rows = []
    t, _ = timed(["bash", "scripts/setup.sh"])
    rows.append(("set-up re-run (everything installed)", "-", t, ""))
    if not args.skip_unit:
        t, out = timed([os.path.join(VENV_BIN, "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/unit"])
        rows.append(("unit tests", "-", t, out.strip().splitlines()[-1]))
    t, out = timed(["unshare", "-n", os.path.join(VENV_BIN, "python"), "scripts/switch_scale.py",
                    "--switches", "1000"])
    per = re.search(r"both:\s+([0-9.]+) s per switch", out)
    rows.append(("switch configs: structured + rendered, 1,000 switches from one model (no push)", "-", t,
                 "%s s per switch (target <= 0.05; scripts/switch_scale.py)" % (per.group(1) if per else "?")))
    predicted(rows)
    floor = floor_rows(rows)
    timed([podsim, "down"])
    failed = None
    try:
        measure_sizes(args, podsim, rows, floor)
    except StepFailed as exc:  # keep what was measured, say which step failed and why
        failed = exc
        rows.append(exc.row())
    finally:  # leave the committed default-size inventory in place, even when a step failed
        subprocess.run([podsim, "down"], cwd=ROOT, capture_output=True)
        inv = subprocess.run([podsim, "inventory", "--nodes", "4", "--storage", "2"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        with open(os.path.join(ROOT, "inventories", "sim", "hosts.yml"), "w", encoding="utf-8") as fh:
            fh.write(inv)
    rows.extend(growth_rows(rows))
    write_report(args, rows)
    if failed:
        sys.exit(str(failed))


def predicted(rows) -> None:
    """The planned duration of a full-profile validation of the 004 pod's model scaled to 4, 16, 140 and 1,000
    DGX (scripts/plan_perf.py: no host is contacted, and unshare -n makes sure of it)."""
    for n in PREDICT_DGX:
        t, out = timed(["unshare", "-n", os.path.join(VENV_BIN, "python"), "scripts/plan_perf.py", "-i",
                        "inventories/dgxpod", "--dgx", str(n), "--json"])
        try:
            r = json.loads(out[out.index("{"):])
        except ValueError:
            rows.append(("predicted full validation (plan only)", n, t, "plan_perf.py failed: %s" % out[-200:]))
            continue
        rows.append(("predicted full validation (plan only; the seconds column is the planning time)", n, t,
                     "network %s (%s, %d rounds), fio %s (%d steps), total %s" % (
                         format_eta(r["network_s"]), r["schedule"], r["summary"]["rounds"], format_eta(r["fio_s"]),
                         r["fio_steps"], format_eta(r["total_s"]))))


FLOOR_HOSTS, FLOOR_TASKS = (4, 16), 40


def floor_rows(rows) -> float:
    """Ansible's own cost of a host-task on this controller (scripts/task_floor.py: set_facts on local hosts, no
    host contacted); returns the smaller of the two, the floor the re-run rows are read against."""
    floors = []
    for n in FLOOR_HOSTS:
        start = time.monotonic()
        r = task_floor.measure(n, FLOOR_TASKS)
        floors.append(r["floor_s"])
        rows.append(("Ansible's floor: %d set_fact tasks on local hosts (scripts/task_floor.py)" % FLOOR_TASKS, n,
                     time.monotonic() - start, "%.1f ms per host-task (%.2f s, empty play %.2f s)" % (
                         1000 * r["floor_s"], r["tasks_s"], r["empty_s"])))
    return min(floors)


def floor_note(output: str, n: int, elapsed: float, floor: float) -> str:
    """The host-tasks a DGX ran in a no-op re-run and what the floor makes of them (task_floor.ratio_bounds)."""
    counts = [c for h, c in task_floor.host_tasks(output).items() if h.startswith("sim-dgx")]
    if not counts or floor <= 0:
        return ""
    k = sum(counts) / len(counts)
    b = task_floor.ratio_bounds(elapsed, n, k, floor, big=4 * n)
    return ("%.0f host-tasks a DGX = %.2f s a DGX at the floor (%.0f %% of this run); the floor alone would let "
            "4x the DGX take %.2fx this time" % (k, b["per_dgx_s"], 100.0 * b["floor_share"], b["ratio_big"]))


def measure_sizes(args, podsim, rows, floor=0.0) -> None:
    for n in args.nodes:
        # a pod from nothing starts with no cached facts: the jsonfile cache (ansible.cfg) would otherwise hand the
        # first run an earlier pod's facts of the same host names, kept as long as runs keep rewriting them
        shutil.rmtree(os.path.join(ROOT, ".cache", "facts"), ignore_errors=True)
        t, _ = timed([podsim, "up", "--nodes", str(n), "--storage", str(args.storage)])
        rows.append(("sim up (from nothing)", n, t, ""))
        t, _ = timed([podsim, "up", "--nodes", str(n), "--storage", str(args.storage)])
        rows.append(("sim up again (idempotent)", n, t, ""))
        t, out = timed(["ansible-playbook", "site.yml"])
        first = t
        rows.append(("site.yml first run", n, t, "changed=%d; %s" % (changed_total(out), cpu_note())))
        t, out = timed(["ansible-playbook", "site.yml"])
        rows.append(("site.yml re-run", n, t, "changed=%d, %.0f %% of the first run; %s; %s" % (
            changed_total(out), 100.0 * t / first, cpu_note(), floor_note(out, n, t, floor))))
        # side by side, alternated: Mitogen (default), linear, Mitogen, linear (issue 19)
        if args.linear and n <= args.linear_max:
            for label, env in (("linear", LINEAR), ("mitogen_linear, again", {}), ("linear, again", LINEAR)):
                t, out = timed(["ansible-playbook", "site.yml"], env_extra=env)
                rows.append(("site.yml re-run (%s)" % label, n, t, "changed=%d; %s" % (changed_total(out),
                                                                                      cpu_note())))
            try:  # the fallback strategy: a failure under it is a finding for the table, not the end of the run
                t, out = timed(["ansible-playbook", "validate.yml", "--skip-tags", STATE_SKIP], env_extra=LINEAR)
                rows.append(("validate.yml state checks (linear)", n, t, summary(out)))
            except StepFailed as exc:
                rows.append(exc.row())
        t, out = timed(["ansible-playbook", "playbooks/switches.yml"])
        rows.append(("switches.yml alone, unchanged (2 fake EOS switches)", n, t, "changed=%d" % changed_total(out)))
        t, out = timed(["ansible-playbook", "validate.yml", "--skip-tags", STATE_SKIP])
        rows.append(("validate.yml --skip-tags %s (state checks)" % STATE_SKIP, n, t, "%s; %s" % (
            summary(out), cpu_note())))
        t, out = timed(["ansible-playbook", "validate.yml", "--tags", "containers"])
        rows.append(("validate.yml --tags containers (ssh + mpirun mesh)", n, t, summary(out)))
        if n <= args.full_validate_max:
            t, out = timed(["ansible-playbook", "validate.yml"], timeout=3600)
            rows.append(("validate.yml (quick profile: iperf3 rounds, fio 1..N)", n, t, summary(out)))
        t, _ = timed([podsim, "down"])
        rows.append(("sim down", n, t, ""))


GROWTH = (("site.yml re-run", "site.yml re-run"),
          ("validate.yml --skip-tags %s (state checks)" % STATE_SKIP, "validate.yml state checks"))


def growth_rows(rows) -> list:
    """Issue 19 item 4: how the no-op re-run and the state checks grow with the pod - seconds per added DGX between
    each measured size and the next (the seconds column holds that slope), and whether the growth stays linear:
    the ratio of the later slope to the earlier one (1.0 = linear; above it the cost per DGX grows with N)."""
    out = []
    for step, label in GROWTH:
        seen = sorted((n, t) for name, n, t, _ in rows if name == step and isinstance(n, int))
        slopes = []
        for (a, ta), (b, tb) in zip(seen, seen[1:], strict=False):
            slope = (tb - ta) / (b - a)
            note = "%.1f -> %.1f s" % (ta, tb)
            if slopes and slopes[-1] > 0:
                note += "; %.2fx the slope before it" % (slope / slopes[-1])
            slopes.append(slope)
            out.append(("%s: seconds per added DGX" % label, "%d->%d" % (a, b), slope, note))
    return out


BEGIN, END = "<!-- benchmark:begin -->", "<!-- benchmark:end -->"


def write_report(args, rows) -> None:
    """The measured table goes between the benchmark markers of the output file; what is around them (the
    readings, the CI budget, sections measured by hand) is kept."""
    lines = [
        BEGIN,
        "Measured by `scripts/benchmark.py` on %s (%s, %d cores), %s UTC. Wall-clock seconds; each row is one run." % (
            platform.node(), platform.platform(terse=True), os.cpu_count() or 0,
            datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")),
        "Storage nodes: %d. Re-run after changes that touch deploy or validation and commit the result." % args.storage,
        "",
        "| step | DGX nodes | seconds | notes |",
        "|---|---|---|---|",
    ]
    lines += ["| %s | %s | %.1f | %s |" % (name, n, t, note) for name, n, t, note in rows]
    lines.append(END)
    table = "\n".join(lines)
    try:
        with open(args.output, encoding="utf-8") as fh:
            old = fh.read()
    except OSError:
        old = ""
    if BEGIN in old and END in old:
        text = old[:old.index(BEGIN)] + table + old[old.index(END) + len(END):]
    else:
        text = "# Benchmarks\n\n" + table + "\n" + old.replace("# Benchmarks\n", "", 1)
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(table)


if __name__ == "__main__":
    main()
