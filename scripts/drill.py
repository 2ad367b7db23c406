#!/usr/bin/env python3
"""The fault drill (issue 17): on a converged pod-in-a-box, inject each catalogued fault in turn (sim/faults/),
run the narrowest validate.yml tags that should catch it, check that the report's top finding names the node
and the cause, clear it, and check that the healthy pod passes before (a full state-only run), between (the
fault's narrow tags again after its clear) and after (a full state-only run; a false alarm is a drill
failure). Prints a table and, for a whole drill, writes it to docs/validation.md (between the drill
markers).

    sudo make drill                                   (= .venv/bin/python scripts/drill.py)
    scripts/drill.py --list
    scripts/drill.py --only nic_mtu,switch_port_mtu   (docs/validation.md is left alone)

Needs root and a pod that is up and converged (sim/podsim up; ansible-playbook site.yml). Exit 0 only if
every fault was found and every healthy run passed.

How a fault counts as found: results.json's ``findings`` (most important first) - findings[0].host is the
fault's node (or the storage node / switch it is on, optionally followed by a port or NIC), one of the
fault's check names is findings[0].root.check or among findings[0].explains, and one of its keywords is in
findings[0].cause or summary. A report without ``findings`` (before the root-cause findings land) is judged
by the FALLBACK rule, labelled as such in the table: some failed or error check with one of the fault's
check names is about that host.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sim"))

import faults as fl  # noqa: E402

RESULTS = os.path.join(REPO, "results", "pod-in-a-box", "latest", "results.json")
DOC = os.path.join(REPO, "docs", "validation.md")
BEGIN, END = "<!-- drill:begin -->", "<!-- drill:end -->"
# benchmark/job tags: run only when a fault asks for them
EXPENSIVE = ("iperf", "fio", "nccl", "training", "checkpoint")
STATE_ONLY = ["--skip-tags", ",".join(EXPENSIVE)]
PLAYBOOK_TIMEOUT = 900  # s; a validate.yml run that takes longer counts as a failed run (rc 124)
# The preflight (the pod model's schema and cross-checks, on the controller) runs in the full state-only runs
# that open and close the drill; the narrow runs between skip it (--skip-tags preflight): no fault touches
# the inventory, so each narrow run would check the same model again (about 1-2 s of every run).
PREFLIGHT = "preflight"


# --------------------------------------------------------------------------- judging a report (pure)

@dataclass
class Verdict:
    ok: bool
    how: str            # "findings" | "fallback" | "healthy"
    top: str            # what the report put first (or what it failed)
    why: str = ""       # what did not match, when not ok


def host_matches(host: Optional[str], targets: Sequence[str]) -> bool:
    """A finding's host names the target: the target itself, or the target then a port/NIC
    ("sim-sw2 Ethernet3/1", "sim-dgx3 enp132s0")."""
    host = (host or "").strip()
    return any(host == t or host.startswith(t + " ") or host.startswith(t + ":") for t in targets)


def check_about(host: Optional[str], targets: Sequence[str]) -> bool:
    """Fallback rule: a check's host is about the target, also as one end of a pair ("a<->b")."""
    return any(host_matches(end.strip(), targets) for end in (host or "").split("<->"))


def _text(*parts: Any) -> str:
    return " ".join(str(p) for p in parts if p)


def judge_fault(results: Dict[str, Any], targets: Sequence[str], checks: Sequence[str],
                keywords: Sequence[str], single: bool = False) -> Verdict:
    """Did the report find the fault? See the module docstring for the rule."""
    findings = results.get("findings")
    if findings is not None:
        if not findings:
            return Verdict(False, "findings", "(no findings)", "the report has no finding")
        top = findings[0]
        named = {(top.get("root") or {}).get("check")} | {e.get("check") for e in top.get("explains") or []}
        text = _text(top.get("cause"), top.get("summary"))
        shown = "%s: %s" % (top.get("host"), top.get("summary") or top.get("cause") or "")
        why = []
        if not host_matches(top.get("host"), targets):
            why.append("top finding is about %s, not %s" % (top.get("host"), " or ".join(targets)))
        if not named & set(checks):
            why.append("top finding explains %s, none of %s" % (sorted(n for n in named if n) or "nothing",
                                                                 ", ".join(checks)))
        if not any(k.lower() in text.lower() for k in keywords):
            why.append("none of %s in its cause" % ", ".join(repr(k) for k in keywords))
        if single and len(findings) > 1:
            why.append("%d findings, not one (also: %s)" % (len(findings), "; ".join(
                str(f.get("summary") or f.get("cause"))[:120] for f in findings[1:3])))
        return Verdict(not why, "findings", shown, "; ".join(why))
    bad = [c for c in results.get("checks") or [] if c.get("status") in ("fail", "error")]
    hits = [c for c in bad if c.get("check") in checks and check_about(c.get("host"), targets)]
    if hits:
        c = hits[0]
        return Verdict(True, "fallback", "%s %s: %s" % (c["check"], c["host"], c.get("cause") or c.get("reason") or ""))
    first = bad[0] if bad else None
    return Verdict(False, "fallback", "%s %s: %s" % (first["check"], first["host"], first.get("cause") or
                                                     first.get("reason") or "") if first else "(nothing failed)",
                   "no failed %s check about %s" % ("/".join(checks), " or ".join(targets)))


def judge_healthy(results: Dict[str, Any], rc: int) -> Verdict:
    """A healthy run: nothing failed or errored, no finding, and ansible-playbook exited 0."""
    bad = [c for c in results.get("checks") or [] if c.get("status") in ("fail", "error")]
    findings = results.get("findings") or []
    if not bad and not findings and rc == 0:
        n = sum(1 for c in results.get("checks") or [] if c.get("status") == "pass")
        return Verdict(True, "healthy", "%d checks passed" % n)
    if findings:
        top = "%s: %s" % (findings[0].get("host"), findings[0].get("summary") or findings[0].get("cause"))
    elif bad:
        top = "%s %s: %s" % (bad[0]["check"], bad[0]["host"], bad[0].get("cause") or bad[0].get("reason") or "")
    else:
        top = "ansible-playbook exited %d" % rc
    return Verdict(False, "healthy", top, "false alarm: %d failed/error check(s), %d finding(s), rc %d"
                   % (len(bad), len(findings), rc))


def validate_args(tags: Iterable[str], preflight: bool = False, extra_vars: Iterable[str] = ()) -> List[str]:
    """validate.yml arguments for a set of tags: the tags, and the expensive stages they do not ask for
    skipped (``--tags network`` would otherwise run the iperf3 rounds too). No tags: state-only, all stages.
    ``preflight`` False skips the pod-model preflight (the drill's narrow runs; see PREFLIGHT)."""
    tags = list(tags)
    skip = [t for t in EXPENSIVE if t not in tags] + ([] if preflight else [PREFLIGHT])
    out = ["ansible-playbook", "validate.yml", "-i", "inventories/sim"]
    if tags:
        out += ["--tags", ",".join(tags)]
    for v in extra_vars:  # a fault's stage option (Fault.extra_vars)
        out += ["-e", v]
    return out + (["--skip-tags", ",".join(skip)] if skip else [])


def state_only_covers(tags: Iterable[str]) -> bool:
    """Does a full state-only run (the drill's last) run every stage these tags select? Not when they ask for
    a benchmark/job stage, which state-only skips."""
    return not set(tags) & set(EXPENSIVE)


def plan(selected: Sequence[fl.Fault]) -> List[tuple]:
    """The drill's runs in order: ("healthy", label, tags, preflight, extra_vars) and ("fault", fault). A full
    state-only run (with the preflight) before and after; each fault followed by its narrow tags on the healthy
    pod, with the fault's own stage options (``Fault.extra_vars``: the healthy run must run the same checks the
    fault's run did, e.g. nvbandwidth), except the last fault when the closing state-only run covers its tags
    and it has no options of its own."""
    steps: List[tuple] = [("healthy", "before", (), True, ())]
    for i, f in enumerate(selected, 1):
        steps.append(("fault", f))
        extra = tuple(getattr(f, "extra_vars", ()) or ())
        if i < len(selected) or not state_only_covers(f.tags) or extra:
            steps.append(("healthy", "after " + f.name, tuple(f.tags), False, extra))
    return steps + [("healthy", "after", (), True, ())]


# --------------------------------------------------------------------------- the table (pure)

@dataclass
class Row:
    fault: str
    node: str
    tags: str
    found: str          # yes | yes (fallback) | NO | ok | FALSE ALARM | ERROR
    top: str
    seconds: float
    why: str = ""
    phases: str = ""    # a fault's seconds: inject / validate.yml / clear

    @property
    def good(self) -> bool:
        return self.found in ("yes", "yes (fallback)", "ok")


def _cell(text: str, width: int = 110) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 1] + "…"


def render_table(rows: Sequence[Row]) -> str:
    out = ["| fault | node | tags | found? | top finding | s | inject / validate / clear s |",
           "|---|---|---|---|---|---:|---:|"]
    for r in rows:
        top = r.top + (" — " + r.why if r.why and not r.good else "")
        out.append("| %s | %s | %s | %s | %s | %.0f | %s |" % (r.fault, r.node, r.tags, r.found, _cell(top), r.seconds,
                                                             r.phases))
    return "\n".join(out) + "\n"


def summary_line(rows: Sequence[Row], seconds: float) -> str:
    faults_ = [r for r in rows if not r.fault.startswith("(healthy")]
    healthy = [r for r in rows if r.fault.startswith("(healthy")]
    fallback = sum(1 for r in faults_ if r.found == "yes (fallback)")
    return ("%d/%d faults found%s, %d/%d healthy runs passed (false alarms: %d), %.1f min" % (
        sum(1 for r in faults_ if r.good), len(faults_),
        " (%d by the fallback rule: no findings in results.json)" % fallback if fallback else "",
        sum(1 for r in healthy if r.good), len(healthy), sum(1 for r in healthy if not r.good), seconds / 60))


def replace_section(text: str, begin: str, end: str, body: str, heading: str) -> str:
    """``text`` with what stands between the ``begin``/``end`` markers replaced by ``body``; without the markers,
    a ``heading`` section holding them and ``body`` is appended (also used by scripts/sensitivity.py)."""
    block = begin + "\n" + body + end
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        return head + block + rest.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n## %s\n\n" % heading + block + "\n"


def update_doc(text: str, table: str, when: str, summary: str) -> str:
    """docs/validation.md with the drill section (between the markers) replaced; markers appended if absent."""
    return replace_section(text, BEGIN, END, "Latest drill: %s — %s.\n\n%s" % (when, summary, table),
                           "Fault drill (`make drill`)")


# --------------------------------------------------------------------------- running it

class Drill:
    """``run(argv) -> rc`` runs a playbook; ``read_results(since)`` returns the results.json written after
    ``since`` (wall time) or raises ValueError (a run that wrote no report)."""

    def __init__(self, ctx, run: Callable[[List[str]], int], read_results: Callable[[float], Dict[str, Any]],
                 clock: Callable[[], float] = time.monotonic, say: Callable[[str], None] = print,
                 wall: Callable[[], float] = time.time):
        self.ctx, self.run, self.read_results = ctx, run, read_results
        self.clock, self.say, self.wall = clock, say, wall
        self.rows: List[Row] = []

    def healthy(self, label: str, tags: Sequence[str] = (), preflight: bool = False,
                extra_vars: Sequence[str] = ()) -> bool:
        t0, since = self.clock(), self.wall()
        rc = self.run(validate_args(tags, preflight, extra_vars))
        try:
            v = judge_healthy(self.read_results(since), rc)
        except (OSError, ValueError) as e:
            v = Verdict(False, "healthy", "no results.json (%s)" % e, "the run wrote no report")
        row = Row("(healthy %s)" % label, "all", ",".join(tags) or "state-only", "ok" if v.ok else "FALSE ALARM",
                  v.top, self.clock() - t0, v.why)
        self.rows.append(row)
        self.say(render_row(row))
        return v.ok

    def fault(self, f: fl.Fault, node: Optional[str] = None) -> bool:
        node = node or f.node
        t0 = self.clock()
        marks = [t0]  # the clock after the inject, after validate.yml, after the clear
        try:
            fl.inject(self.ctx, f.name, node)
            marks.append(self.clock())
            since = self.wall()
            rc = self.run(validate_args(f.tags, extra_vars=getattr(f, "extra_vars", ())))
            marks.append(self.clock())
            v = judge_fault(self.read_results(since), f.targets(self.ctx.pod(), node), f.checks, f.keywords,
                            f.single)
            found = ("yes" if v.how == "findings" else "yes (fallback)") if v.ok else "NO"
            if v.ok and rc == 0:
                found, v.why = "NO", "validate.yml exited 0 with the fault in place"
            row = Row(f.name, node, ",".join(f.tags), found, v.top, 0.0, v.why)
        except Exception as e:  # a fault that cannot be injected or judged is a drill failure, not a crash
            row = Row(f.name, node, ",".join(f.tags), "ERROR", "", 0.0, "%s: %s" % (type(e).__name__, e))
        finally:
            marks += [marks[-1]] * (3 - len(marks))  # an inject or a run that raised took no time of its own
            try:
                fl.clear(self.ctx, f.name, node)
            except Exception as e:
                row = Row(f.name, node, ",".join(f.tags), "ERROR", "", 0.0, "clear failed: %s" % e)
        marks.append(self.clock())
        row.seconds = marks[-1] - t0
        row.phases = " / ".join("%.0f" % (b - a) for a, b in zip(marks, marks[1:], strict=False))
        self.rows.append(row)
        self.say(render_row(row))
        return row.good

    def all(self, selected: Sequence[fl.Fault]) -> bool:
        ok = True
        for step in plan(selected):
            if step[0] == "fault":
                ok = self.fault(step[1]) and ok
            else:
                ok = self.healthy(*step[1:]) and ok
        return ok


def render_row(r: Row) -> str:
    return "drill: %-24s %-12s %-10s %-15s %5.0fs%s  %s%s" % (
        r.fault, r.node, r.tags, r.found, r.seconds, " (%s)" % r.phases if r.phases else "", r.top[:120],
        "  [%s]" % r.why if r.why and not r.good else "")


def run_playbook(argv: List[str]) -> int:
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=os.path.join(REPO, ".venv", "bin") + ":" + os.environ.get("PATH", ""))
    with open(os.path.join(REPO, "build", "drill.log"), "a") as log:
        log.write("\n%s $ %s\n" % (datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S"), " ".join(argv)))
        log.flush()
        t0 = time.monotonic()
        try:
            rc = subprocess.run(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                timeout=PLAYBOOK_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            log.write("drill: killed after %d s\n" % PLAYBOOK_TIMEOUT)
            return 124
        log.write("drill: rc %d in %.1f s\n" % (rc, time.monotonic() - t0))
        return rc


def read_results(since: float) -> Dict[str, Any]:
    if os.stat(RESULTS).st_mtime < since - 1:
        raise ValueError("results.json is older than this run: validate.yml wrote no report")
    with open(RESULTS) as fh:
        return json.load(fh)


def select(only: Optional[str]) -> List[fl.Fault]:
    if not only:
        return list(fl.CATALOGUE)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in fl.BY_NAME]
    if unknown:
        raise SystemExit("drill: no fault %s (scripts/drill.py --list)" % ", ".join(unknown))
    return [fl.BY_NAME[n] for n in names]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", metavar="NAME[,NAME]", help="only these faults (docs/validation.md is not written)")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/validation.md")
    args = ap.parse_args(argv)
    if args.list:
        sys.stdout.write(fl.listing())
        return 0
    selected = select(args.only)
    if os.geteuid() != 0:
        print("drill: needs root (the simulator): sudo make drill", file=sys.stderr)
        return 2
    os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
    ctx = fl.Ctx()
    try:
        leftover = fl.clear_all(ctx)
    except (OSError, RuntimeError, ValueError) as e:
        print("drill: could not clear the faults left from an earlier run (%s): is the pod up?" % e, file=sys.stderr)
        return 2
    if leftover:
        print("drill: cleared faults left from an earlier run: %s" % ", ".join(leftover))
    status = subprocess.run([fl.PODSIM, "status"], capture_output=True, text=True)
    if status.returncode != 0:
        print("drill: the pod-in-a-box is not up and healthy (sim/podsim status):\n%s%s\nBring it up and converge "
              "it first: make sim-up && ansible-playbook site.yml" % (status.stdout, status.stderr), file=sys.stderr)
        return 2
    t0 = time.monotonic()
    drill = Drill(ctx, run_playbook, read_results)
    ok = drill.all(selected)
    seconds = time.monotonic() - t0
    table, summary = render_table(drill.rows), summary_line(drill.rows, seconds)
    print("\n" + table + "\ndrill: " + summary + "  (ansible output: build/drill.log)")
    if not args.only and not args.no_doc:
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        with open(DOC) as fh:
            text = fh.read()
        with open(DOC, "w") as fh:
            fh.write(update_doc(text, table, when, summary))
        print("drill: wrote the table to docs/validation.md")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
