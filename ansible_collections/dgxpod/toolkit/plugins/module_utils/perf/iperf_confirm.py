# -*- coding: utf-8 -*-
"""A second look before an iperf3 pair is called slow (issue 17: find every fault, never cry wolf). Pure functions.

On shared hardware one test of a round can dip for reasons that are not the pair's: a CPU busy with something
else for a few seconds (the pod-in-a-box's 2 shared cores; a DGX running a leftover job), a burst of other
traffic on an inter-switch link. Seen in CI: on a healthy path, sim-dgx1 <-> sim-isilon2 on data-5 measured
under 55 % of its peers once, and its re-run of the same round was normal. Calling that pair slow sends an
engineer after a cable that is fine.

So, after the plan ran:

- ``to_confirm`` picks the tests that failed (``iperf_relative``; ``iperf`` against the port rate too, except on
  a simulated pod, where it is not judged) and that **no slow NIC explains**. A NIC low in most of its tests
  (perf.iperf_eval.suspects) is a consistent finding already: its tests are not run again, so a real slow NIC costs no
  extra time. What is left are lone pairs, the class of finding a single dip produces.
- ``confirm_plan`` re-runs the rounds that hold them, **whole**: the same tests side by side, as loaded as the
  first time, so the pair is compared with its peers under the same conditions (re-running it alone would give
  it the machine and flatter it). At most ``max_rounds`` rounds (``pod_perf_iperf_confirm_rounds``, 0 = never),
  the rounds with the most such tests first; the others are reported as measured once.
- ``merge`` keeps, per test, the better of its runs (a dip is the anomaly, a slow path is slow every time) and
  records every run in ``attempts``, so a pair still failing says "low in 2 of 2 runs" and one that passed on
  its second run is shown as re-run, not hidden.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_eval import (endpoint, iperf_checks,
    relative_fraction, relative_ratios, slow_nics, test_gbps)

DEFAULT_MAX_ROUNDS = 3


def _explained(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any]) -> set:
    """Indexes of tests through a NIC that is low in most of its tests (overall or among tests of its kind)."""
    overall, by_kind = slow_nics(tests, relative_ratios(tests), relative_fraction(exp)[0])
    bad = set(overall).union(*by_kind.values())
    return {i for i, t in enumerate(tests)
            if endpoint(t, "client") in bad or endpoint(t, "server") in bad}


def to_confirm(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any], simulated: bool = False) -> List[str]:
    """Ids of the failed tests that no slow NIC explains (see the module's doc), in the plan's order. None when
    more than half of the measured tests failed: a pod-wide shortfall (every link under its port rate: a wrong
    speed in the model, a fabric-wide setting) is no dip, and running rounds again would only cost time."""
    judged = ("iperf_relative",) if simulated else ("iperf_relative", "iperf")
    failed = {c.details.get("test") for c in iperf_checks(tests, exp) if c.check in judged and c.status == "fail"}
    measured = [t for t in tests if test_gbps(t) is not None]
    if len(failed) * 2 > len(measured):
        return []
    skip = _explained(tests, exp)
    return [t["id"] for i, t in enumerate(tests) if t.get("id") in failed and i not in skip]


def confirm_plan(plan: Sequence[Dict[str, Any]], ids: Sequence[str],
                 max_rounds: int = DEFAULT_MAX_ROUNDS) -> Dict[str, Any]:
    """{"rounds": the plan's rounds holding a test of ``ids``, whole, renumbered 1..k (each test keeps its id and
    gets ``first_round``), "tests": the ids re-run for confirmation, "left": the ids not re-run (over
    ``max_rounds``)}. The rounds with the most such tests go first; within the limit, the plan's order."""
    want = set(ids)
    hits = [(i, sum(1 for t in r["tests"] if t.get("id") in want)) for i, r in enumerate(plan)]
    hits = [h for h in hits if h[1]]
    chosen = sorted(i for i, _ in sorted(hits, key=lambda h: (-h[1], h[0]))[:max(0, int(max_rounds))])
    rounds, covered = [], set()
    for k, i in enumerate(chosen, 1):
        tests = []
        for t in plan[i]["tests"]:
            u = copy.deepcopy(t)
            u["first_round"], u["round"] = t.get("round", i + 1), k
            tests.append(u)
            if t.get("id") in want:
                covered.add(t["id"])
        rounds.append({"round": k, "kind": "confirm", "tests": tests})
    order = [t["id"] for r in plan for t in r["tests"] if t.get("id") in want]
    return {"rounds": rounds, "tests": [i for i in order if i in covered],
            "left": [i for i in order if i not in covered]}


def _attempt(rec: Dict[str, Any], run: int) -> Dict[str, Any]:
    g = test_gbps(rec)
    out = {"run": run, "status": rec.get("status"), "gbps": None if g is None else round(g, 3)}
    for key in ("started_at", "late_by", "reason"):
        if rec.get(key) is not None:
            out[key] = rec[key]
    return out


def merge(first: Sequence[Dict[str, Any]], second: Optional[Sequence[Dict[str, Any]]],
          confirmed: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """The first run's records with every test that ran again replaced by the better of its two runs (the higher
    rate; a run with no result never wins over one with a result). Tests that ran again carry ``attempts`` (each
    run: run, status, gbps, started_at) and ``confirm``: "suspect" for the ids in ``confirmed`` (the reason the
    round was re-run), "peer" for the others of its round. ``round`` stays the first run's."""
    again = {r["id"]: r for r in (second or []) if r.get("id") is not None}
    want = set(confirmed or [])
    out = []
    for rec in first:
        twin = again.get(rec.get("id"))
        if twin is None:
            out.append(rec)
            continue
        g1, g2 = test_gbps(rec), test_gbps(twin)
        best = twin if (g2 is not None and (g1 is None or g2 > g1)) else rec
        keep = dict(best, round=rec.get("round"))
        keep.pop("first_round", None)
        keep["attempts"] = [_attempt(rec, 1), _attempt(twin, 2)]
        keep["confirm"] = "suspect" if rec.get("id") in want else "peer"
        out.append(keep)
    return out

