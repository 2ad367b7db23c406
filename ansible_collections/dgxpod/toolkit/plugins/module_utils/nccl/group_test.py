# -*- coding: utf-8 -*-
"""Group-testing localisation of slow DGX for the NCCL stage (issue 41 item 3). Pure, adaptive, stateless.

The stage's step 3 today runs every pair of DGX in N-1 round-robin rounds (module_utils/nccl/plan.pair_rounds):
139 rounds at 140 DGX. Here the runs are planned by adaptive group testing instead: ``next_runs`` takes the runs
so far and returns the next round; the caller runs it (the runs share no node, so they run at once) and asks again
until ``done``.

How a state is read (every call re-reads all the runs, so a verdict that a later run overturns is overturned):

- **Judging a run** (:func:`judge`) the way module_utils/nccl/eval.py judges pairs - relative to the median of
  comparable runs, with the expectations' ``relative_fraction_of_peers`` (0.8): the comparable runs are those at
  the pod's healthy level, the runs whose busbw is within that fraction of the fastest run; their median is the
  *reference*, and a run below ``fraction x reference`` is slow. A run that did not finish (``ok`` false) is slow,
  and so is one below ``expected`` (the absolute figure, nccl/plan.multi_node_expectation) when the caller gives it.
  A run the caller already judged (``slow``: true/false, e.g. the all-node run judged by
  nccl/plan.needs_localisation) keeps that verdict.
- **Anchor.** Relative judgement needs a run at the healthy level. While every run sits at one level and some run
  is known slow (the all-node run the caller judged slow), that level may itself be slow: the runs are then
  *unknown* - they clear no node - and the planner keeps splitting until a faster run shows the healthy level.
  ``expected`` anchors the judgement from the first run (real pods: nccl/plan.multi_node_expectation).
- **Known good**: ``known_good`` and every node of a run judged fine (under the min model a run is as fast as its
  slowest node, so a fine run has no slow node).
- **Suspect sets**: each slow run less its known-good nodes holds at least one slow DGX; the minimal ones (no other
  suspect set inside them) are split next. Of a larger set, the part no smaller set covers was not run at a finer
  level yet (its half waited for a partner, or for ``max_parallel``) and runs next. A slow run whose nodes are all
  known good is *unexplained* - the fault is between the nodes (a link, a switch), not in one of them.

How the next round is planned:

- **Split** every minimal suspect set of two or more DGX into two halves and run each half - a half of one DGX
  together with a known-good partner - so a run's speed depends on its suspects only. Both halves run in the same
  round (they share no node): the round costs one run's time, and a second slow DGX in the other half is found too.
- **Topology**: with ``topology`` saying which leaf (or rail group / scalable unit) each DGX is on, the suspects are
  ordered by group, and of the cuts that keep each half within 2^(ceil(log2 n) - 1) DGX (so the depth stays
  ceil(log2 N)) the one whose halves span the fewest groups is taken: a run's nodes stay under one leaf where
  possible; a partner is taken from the suspect's own group first.
- **Confirm**: a DGX is a *culprit* only when a run of it and one known-good partner was slow (the last split of
  a suspect set is exactly that run); a suspect left in a larger slow run gets that pair run first.
- **Stuck without partners** (no known-good DGX yet, e.g. two slow DGX at 4 DGX, one in each half): pair the
  suspects anew, avoiding pairs already run, up to :data:`REMATCH_ROUNDS` rounds of pairs in all; then the suspects
  that remain are *undecided* (named as suspects, never as culprits).
- **Showing the healthy level** (relative judgement only): before it ends, the level called healthy must show in a
  pair judged fine, and the fine runs must not all hold one same DGX; else one *reference pair* of known-good DGX
  from two different fine runs runs (in the last round when it has room), and every run is judged again.
- **Pod-wide**: no DGX fine, no two levels among the runs and :data:`POD_WIDE_SETS` disjoint suspect sets all slow
  (every quarter of the pod below the expectation alike): the cause is not a node (a fabric setting, the
  expectation) - the planner stops (``pod_wide``) instead of splitting every DGX down to pairs.

Runs for d slow DGX: at most 2 per level of the split, ceil(log2 N) levels - 2 x ceil(log2 N) runs in
ceil(log2 N) rounds for one slow DGX, plus the reference pair under relative judgement (16 DGX: 8 or 9 runs in 4
rounds; the issue's bound is ceil(2 log2 16) + 2 = 10); O(d log N) for d. A healthy pod (the all-node run passed)
needs none. Against the round-robin pairs (nccl/plan.pair_rounds, N-1 rounds of N/2 pairs; N odd: N rounds),
measured by tests/unit/test_nccl_group_test.py's simulated pods (20 seeds, the most seen):

    DGX    round-robin pairs       group testing, 1 slow DGX: rounds (runs)   issue bound, runs
           rounds (runs)           with the expectation    relative only      ceil(2 log2 N) + 2
    4      3 (6)                   2 (4)                   3 (5)              6
    16     15 (120)                4 (8)                   4 (9)              10
    30     29 (435)                5 (10)                  5 (11)             12
    140    139 (9,730)             8 (16)                  8 (17)             17
    1,000  999 (499,500)           10 (20)                 10 (21)            22

Limits: relative judgement cannot tell a level that every run shares from the healthy one - 3 slow DGX of 4 (every
pair holds one) need the expectation and one DGX known good; the planner then names nobody it cannot prove.

:func:`plan_summary` gives the report the runs planned (the bound) and used. :func:`expected_runs` is the count
the plan-only predictor (scripts/plan_perf.py) uses.
"""
from __future__ import annotations

import math
import re
from statistics import median
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import multi_node_expectation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import expectation

__all__ = ["DEFAULT_FRACTION", "REMATCH_ROUNDS", "expected_rounds", "expected_runs", "judge", "judge_settings",
           "leaf_groups", "next_runs", "pair_rounds_cost", "plan_summary"]

DEFAULT_FRACTION = 0.8   # expectations.nccl.relative_fraction_of_peers, as module_utils/nccl/eval.py reads it
REMATCH_ROUNDS = 3       # rounds of pairs of suspects (n/2 pairs each) tried while no DGX is known good
POD_WIDE_SETS = 4        # this many disjoint suspect sets, all slow at one level and no DGX fine: a pod-wide cause


# --------------------------------------------------------------------------------------------- the settings

def judge_settings(expectations: Optional[Dict[str, Any]], topology: Optional[Dict[str, Any]] = None,
                   simulated: bool = False) -> Dict[str, Any]:
    """{fraction, expected}: the relative fraction (``expectations.nccl.relative_fraction_of_peers``, read as
    nccl/eval.py reads it) and the absolute busbw a multi-node run should reach (nccl/plan.multi_node_expectation
    of ``multi_node_fraction_of_nics``; None without a topology, and on a simulated pod, whose CPU/veth numbers are
    no DGX figure - as nccl/plan.needs_localisation)."""
    exp = expectations or {}
    fraction = expectation(exp, "nccl", "relative_fraction_of_peers", DEFAULT_FRACTION)[0]
    nic_fraction = expectation(exp, "nccl", "multi_node_fraction_of_nics", 0.8)[0]
    expected = None if simulated or not topology else multi_node_expectation(topology, nic_fraction)
    return {"fraction": float(fraction if fraction is not None else DEFAULT_FRACTION), "expected": expected}


# --------------------------------------------------------------------------------------------- the topology

def leaf_groups(pod: Pod, dgx: Sequence[str]) -> Dict[str, str]:
    """{DGX: its leaf group}: the switches its compute-fabric NICs are cabled to (``nics[].switch``), joined. DGX of
    one scalable unit share their rail leaves, so they share a group; a DGX whose NICs name no switch is left out
    (the planner then treats it as a group of its own)."""
    compute = {f.name for f in pod.fabrics_carrying("compute")}
    out = {}
    for name in dgx:
        host = pod.hosts.get(name)
        switches = sorted({n.switch for n in (host.nics if host is not None else ()) if n.fabric.name in compute
                           and n.switch})
        if switches:
            out[name] = "+".join(switches)
    return out


def _groups(topology: Optional[Mapping[str, Any]], nodes: Iterable[str]) -> Dict[str, str]:
    """Each node's group from ``topology``: a {node: group} mapping, or nccl/plan.topology's dict whose
    ``nodes[node]`` carry ``leaf`` (or ``group``, ``rail_group``). A node without one is its own group."""
    nodes = list(nodes)
    table: Mapping[str, Any] = {}
    if topology:
        inner = topology.get("nodes") if isinstance(topology.get("nodes"), Mapping) else None
        table = inner if inner is not None else topology
    out = {}
    for n in nodes:
        v = table.get(n)
        if isinstance(v, Mapping):
            v = v.get("leaf", v.get("group", v.get("rail_group")))
        out[n] = str(v) if v not in (None, "") else "\0" + n
    return out


def _natural(name: str) -> List[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(name))]


# --------------------------------------------------------------------------------------------- judging

def _busbw(run: Mapping[str, Any]) -> Optional[float]:
    v = run.get("busbw")
    return None if v is None else float(v)


def judge(results: Sequence[Mapping[str, Any]], fraction: float = DEFAULT_FRACTION,
          expected: Optional[float] = None) -> Dict[str, Any]:
    """{verdicts: ['slow'|'fine'|'unknown' per run], reference, anchored, why: [text per run]}.

    The reference is the median busbw of the runs at the healthy level (within ``fraction`` of the fastest run
    that finished); a run is slow below ``fraction x reference``, below ``expected``, when it did not finish, or
    when the caller said so (``slow``: true). ``anchored``: an expectation was given, or the runs show two levels,
    or no run is known slow - else the one level seen may be a slow one and the runs not known slow are
    ``unknown``."""
    vals = [_busbw(r) for r in results if r.get("ok", True) and _busbw(r) is not None]
    top = max(vals) if vals else None
    reference = median([v for v in vals if v >= fraction * top]) if vals and top is not None and top > 0 else None
    verdicts, why = [], []
    rel_slow = False
    given_slow = False
    for r in results:
        bw = _busbw(r)
        if r.get("ok", True) and bw is not None and reference is not None and bw < fraction * reference:
            rel_slow = True   # two levels seen: the upper one is the healthy level
        if r.get("slow") is not None:
            v, w = ("slow" if r["slow"] else "fine"), "judged by the caller"
            given_slow |= bool(r["slow"]) and bool(r.get("ok", True))
        elif not r.get("ok", True):
            v, w = "slow", "did not finish: %s" % (r.get("error") or "failed")
        elif bw is None:
            v, w = "slow", "finished without a bus bandwidth"
        elif reference is not None and bw < fraction * reference:
            v, w = "slow", "%.4g GB/s < %g x the reference %.4g GB/s" % (bw, fraction, reference)
        elif expected is not None and bw < float(expected):
            v, w = "slow", "%.4g GB/s < the expected %.4g GB/s" % (bw, float(expected))
        else:
            v, w = "fine", "%.4g GB/s, at the reference's level" % bw
        verdicts.append(v)
        why.append(w)
    anchored = expected is not None or rel_slow or not given_slow
    if not anchored:
        verdicts = ["unknown" if v == "fine" and r.get("slow") is None else v
                    for v, r in zip(verdicts, results, strict=True)]
    return {"verdicts": verdicts, "reference": reference, "anchored": anchored, "why": why, "slow_levels": rel_slow}


# --------------------------------------------------------------------------------------------- planning

def _split(suspects: Sequence[str], groups: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """Two halves of ``suspects`` (2 or more), ordered by group then name. The cut keeps each half within
    2^(ceil(log2 n) - 1) DGX (the depth of an even split, so the number of levels stays ceil(log2 n)); among those
    cuts, the one whose halves span the fewest groups (leaves), then the one nearest the middle."""
    order = sorted(suspects, key=lambda n: (_natural(groups.get(n, "")), _natural(n)))
    n = len(order)
    cap = 1 << max(0, int(math.ceil(math.log2(n))) - 1)

    def spanned(i: int) -> int:
        return len({groups.get(x) for x in order[:i]}) + len({groups.get(x) for x in order[i:]})
    cuts = [i for i in range(max(1, n - cap), min(cap, n - 1) + 1)]
    cut = min(cuts, key=lambda i: (spanned(i), abs(2 * i - n), i))
    return order[:cut], order[cut:]


def _minimal(sets: Iterable[frozenset]) -> List[frozenset]:
    """The distinct sets that contain no other set of the family (a superset's slow DGX is explained)."""
    uniq = sorted(set(sets), key=lambda s: (len(s), sorted(s, key=_natural)))
    out: List[frozenset] = []
    for s in uniq:
        if not any(o < s for o in out):
            out.append(s)
    return out


def _disjoint_count(sets: Sequence[frozenset]) -> int:
    """How many of ``sets`` share no DGX with each other (greedily, smallest first)."""
    seen: Set[str] = set()
    count = 0
    for s in sorted(sets, key=len):
        if not seen & s:
            seen |= s
            count += 1
    return count


class _Round:
    """The runs of one round: no node in two runs; at most ``cap`` runs."""

    def __init__(self, cap: Optional[int]) -> None:
        self.runs: List[List[str]] = []
        self.busy: Set[str] = set()
        self.cap = cap

    def full(self) -> bool:
        return self.cap is not None and len(self.runs) >= self.cap

    def add(self, nodes: Sequence[str]) -> bool:
        if self.full() or self.busy & set(nodes) or len(nodes) < 2:
            return False
        self.runs.append(list(nodes))
        self.busy |= set(nodes)
        return True


def _partner(suspect: str, good: Set[str], busy: Set[str], groups: Mapping[str, str], used: Dict[str, int],
             avoid: Set[str] = frozenset()) -> Optional[str]:
    """A known-good DGX not in this round yet: the suspect's own group first, then the least used, then by name."""
    free = [g for g in good if g not in busy and g != suspect and g not in avoid]
    if not free:
        return None
    return min(free, key=lambda g: (groups.get(g) != groups.get(suspect), used.get(g, 0), _natural(g)))


def next_runs(nodes: Sequence[str], known_good: Iterable[str], results: Sequence[Mapping[str, Any]],
              topology: Optional[Mapping[str, Any]] = None, max_parallel: Optional[int] = None,
              fraction: float = DEFAULT_FRACTION, expected: Optional[float] = None) -> Dict[str, Any]:
    """The next round of localisation runs from the runs so far.

    ``nodes``: the DGX under test; ``known_good``: DGX known to be fine before (may be empty); ``results``: every
    run so far, each {nodes, busbw (the plateau, GB/s), ok, [slow]} - the all-node run first when it ran (with no
    result at all, the one run planned is the all-node run); ``topology``: {node: leaf group} or
    nccl/plan.topology's dict with ``nodes[n].leaf``; ``max_parallel``: the most runs a round may hold;
    ``fraction``/``expected``: the judgement (:func:`judge_settings`).

    Returns {runs: [[node, ...], ...] (share no node: one round), done, suspects, culprits: [{node, run, busbw,
    reference, why}], cleared, unexplained: [{nodes, busbw}], undecided: [node], reference, anchored}."""
    nodes = [str(n) for n in nodes]
    node_set = set(nodes)
    groups = _groups(topology, nodes)
    results = [r for r in results or [] if set(map(str, r.get("nodes") or [])) & node_set]
    out: Dict[str, Any] = {"runs": [], "done": False, "suspects": [], "culprits": [], "cleared": [],
                           "unexplained": [], "undecided": [], "reference": None, "anchored": True,
                           "pod_wide": False}
    if not results:
        out["runs"] = [list(nodes)] if len(nodes) >= 2 else []
        out["done"] = not out["runs"]
        return out
    j = judge(results, fraction, expected)
    out["reference"], out["anchored"] = j["reference"], j["anchored"]
    runs = [(frozenset(map(str, r.get("nodes") or [])) & node_set, r, v, w)
            for r, v, w in zip(results, j["verdicts"], j["why"], strict=True)]
    good = set(map(str, known_good or [])) & node_set
    for s, _, v, _ in runs:
        if v == "fine":
            good |= s
    slow = [(s, r, v, w) for s, r, v, w in runs if v in ("slow", "unknown")]
    open_sets: Dict[frozenset, List[Tuple[frozenset, Mapping[str, Any], str, str]]] = {}
    for s, r, v, w in slow:
        u = frozenset(s - good)
        if not u:
            if v == "slow":
                out["unexplained"].append({"nodes": sorted(s, key=_natural), "busbw": _busbw(r), "why": w})
            continue
        open_sets.setdefault(u, []).append((s, r, v, w))
    active = _minimal(open_sets)
    culprits: Dict[str, Dict[str, Any]] = {}
    to_confirm: List[str] = []
    to_split: List[frozenset] = []
    for u in active:
        if len(u) == 1:
            (c,) = tuple(u)
            pair = next(((s, r, w) for s, r, v, w in open_sets[u] if v == "slow" and len(s) == 2), None)
            if pair is not None:
                culprits[c] = {"node": c, "run": sorted(pair[0], key=_natural), "busbw": _busbw(pair[1]),
                               "reference": j["reference"], "why": pair[2]}
            else:
                to_confirm.append(c)
        else:
            to_split.append(u)
    # a larger suspect set whose slow DGX a smaller one explains may hold another: the part of it no smaller set
    # covers was not run at a finer level yet (its half was deferred for want of a partner or by max_parallel)
    to_test: List[List[str]] = []
    active_set = set(active)
    for u in open_sets:
        if u in active_set:
            continue
        rest = set(u)
        for w in open_sets:
            if w < u:
                rest -= w
        if rest:
            to_test.append(sorted(rest, key=_natural))
    if not good and _disjoint_count(active) >= POD_WIDE_SETS and not j["slow_levels"]:
        out.update(done=True, suspects=sorted({n for u in active for n in u}, key=_natural), pod_wide=True)
        out["undecided"] = out["suspects"]
        return out
    rnd = _Round(max_parallel)
    used: Dict[str, int] = {}
    needs_partner: List[str] = []

    def with_partner(c: str) -> None:
        p = _partner(c, good, rnd.busy, groups, used)
        if p is None:
            needs_partner.append(c)
        elif rnd.add([c, p]):
            used[p] = used.get(p, 0) + 1

    for c in sorted(to_confirm, key=_natural):
        if c not in rnd.busy:
            with_partner(c)
    for rest in sorted(to_test, key=lambda r: (len(r), r)):
        if len(rest) == 1:
            if rest[0] not in rnd.busy:
                with_partner(rest[0])
        else:
            rnd.add(rest)
    for u in sorted(to_split, key=lambda s: (len(s), sorted(s, key=_natural))):
        for half in _split(sorted(u), groups):
            if len(half) == 1:
                if half[0] not in rnd.busy:
                    with_partner(half[0])
            else:
                rnd.add(sorted(half, key=_natural))
    if not rnd.runs and needs_partner and not good:
        _rematch(rnd, sorted({n for u in active for n in u}, key=_natural), results, groups)
    if expected is None and slow and (not rnd.runs or needs_partner or any(len(r) == 2 for r in rnd.runs)):
        ref_pair = _reference_pair(runs, good, rnd.busy, results)
        if ref_pair:
            rnd.add(ref_pair)
    out["runs"] = rnd.runs
    out["culprits"] = [culprits[c] for c in sorted(culprits, key=_natural)]
    out["cleared"] = sorted(good & node_set, key=_natural)
    pending = sorted(({n for u in active for n in u} | {n for r in to_test for n in r}) - set(culprits),
                     key=_natural)
    out["suspects"] = pending
    out["done"] = not rnd.runs
    if out["done"]:
        out["undecided"] = pending
    return out


def _reference_pair(runs: Sequence[Tuple[frozenset, Mapping[str, Any], str, str]], good: Set[str], busy: Set[str],
                    results: Sequence[Mapping[str, Any]]) -> Optional[List[str]]:
    """Is the level the relative judgement calls healthy shown well enough to end on it? Two things can fool it
    (no run without a slow DGX yet, the slow DGX at one speed): the runs judged fine all hold one same DGX (two slow
    DGX at 4 DGX: that DGX alone may set the level), or no pair was judged fine (every large run held a slow DGX of
    about the same speed). Either way, one more run: two known-good DGX outside the fine runs' common nodes, taken
    from two different fine runs - the smallest first, the least likely to hold a slow DGX - not run together yet.
    None when the level is shown, or no such pair is left."""
    fine = [s for s, _, v, _ in runs if v == "fine"]
    if not fine:
        return None
    common = frozenset.intersection(*fine)
    if not common and any(len(s) == 2 for s in fine):
        return None
    done = {frozenset(map(str, r.get("nodes") or [])) for r in results}
    pool = good - common - busy
    order = sorted(fine, key=lambda s: (len(s), sorted(s, key=_natural)))
    for i, s in enumerate(order):
        for a in sorted(s & pool, key=_natural):
            for t in order[i + 1:] + order[:i]:
                for b in sorted((t - s) & pool, key=_natural):
                    if frozenset((a, b)) not in done:
                        return sorted([a, b], key=_natural)
    return None


def _rematch(rnd: _Round, suspects: List[str], results: Sequence[Mapping[str, Any]],
             groups: Mapping[str, str]) -> None:
    """No known-good DGX to partner a suspect with: pair the suspects anew, each with one it has not run with alone
    yet (same group first), so that a pair of two good DGX can show the healthy level. Once the pairs already run
    reach REMATCH_ROUNDS rounds' worth (n/2 pairs a round), nothing more is planned."""
    pairs_run = {frozenset(map(str, r.get("nodes") or [])) for r in results if len(r.get("nodes") or []) == 2}
    if len(pairs_run) >= REMATCH_ROUNDS * max(1, len(suspects) // 2):
        return
    for a in suspects:
        if a in rnd.busy:
            continue
        for b in sorted(suspects, key=lambda x: (groups.get(x) != groups.get(a), _natural(x))):
            if b != a and b not in rnd.busy and frozenset((a, b)) not in pairs_run:
                rnd.add([a, b])
                break


# --------------------------------------------------------------------------------------------- counts, summary

def expected_rounds(n: int, d: int = 1) -> int:
    """Rounds of localisation for ``d`` slow DGX among ``n`` once the all-node run failed: 0 for d = 0 (the
    all-node run passed: none), ceil(log2 n) for d >= 1 (the halves of every suspect set run in the same round;
    each level of the split is one round when there are enough known-good partners)."""
    if d <= 0 or n < 2:
        return 0
    return int(math.ceil(math.log2(n)))


def expected_runs(n: int, d: int = 1, relative: bool = False) -> int:
    """Runs of localisation for ``d`` slow DGX among ``n`` (the all-node run not counted): 0 for d = 0, two a level
    for each slow DGX's branch of the split - at most d x 2 x ceil(log2 n), never more than the pairs - and the
    reference pair when the judgement is relative only (no expectation: the simulator)."""
    if d <= 0 or n < 2:
        return 0
    return min(d * 2 * expected_rounds(n, d) + (1 if relative else 0), n * (n - 1) // 2)


def pair_rounds_cost(n: int) -> Dict[str, int]:
    """{rounds, runs} of the round-robin pairs (nccl/plan.pair_rounds): n - 1 rounds (n odd: n), n(n-1)/2 runs."""
    return {"rounds": (n - 1 if n % 2 == 0 else n) if n >= 2 else 0, "runs": n * (n - 1) // 2}


def plan_summary(nodes: Sequence[str], results: Sequence[Mapping[str, Any]], state: Optional[Mapping[str, Any]] = None,
                 rounds: Optional[int] = None) -> Dict[str, Any]:
    """What the report says of the localisation: {dgx, runs_used (the runs after the all-node run), rounds_used,
    planned_one_slow (the bound for one slow DGX: ceil(2 log2 N) + 2, issue 41), expected_one_slow
    (:func:`expected_runs`), pairs (what the round-robin pairs would have cost), culprits, suspects, unexplained,
    done}. ``state`` is the last :func:`next_runs` answer."""
    n = len(nodes)
    node_set = set(map(str, nodes))
    used = [r for r in results or [] if not set(map(str, r.get("nodes") or [])) >= node_set]
    st = dict(state or {})
    return {"dgx": n, "runs_used": len(used), "rounds_used": rounds,
            "planned_one_slow": int(math.ceil(2 * math.log2(n))) + 2 if n >= 2 else 0,
            "expected_one_slow": expected_runs(n, 1), "pairs": pair_rounds_cost(n),
            "culprits": [c["node"] for c in st.get("culprits") or []], "suspects": list(st.get("suspects") or []),
            "unexplained": list(st.get("unexplained") or []), "done": bool(st.get("done"))}
