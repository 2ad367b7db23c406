"""Group-testing localisation of slow DGX (module_utils/nccl/group_test.py, issue 41 item 3) on simulated pods.

A simulated pod: each DGX has a speed (healthy 1.0 x HEALTHY GB/s, a slow DGX 0.2-0.6 x, seeded); a run's bus
bandwidth is the min over its nodes' speeds plus seeded noise (+-4 %) - an all-reduce ring is as fast as its
slowest member. The caller loop is the NCCL stage's: the all-node run first, then next_runs until done, each
answer one round of runs that share no node.
"""
from __future__ import annotations

import math
import random

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import group_test as gt
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import pair_rounds
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod

HEALTHY = 20.0   # GB/s, the plateau of a healthy run
NOISE = 0.04


class SimPod:
    """N DGX, ``bad`` of them slow; ``run(nodes)`` is one nccl-tests run's plateau (min of speeds + noise)."""

    def __init__(self, n, d, seed, crash=()):
        self.rng = random.Random("%d:%d:%d" % (n, d, seed))
        self.nodes = ["dgx-%04d" % (i + 1) for i in range(n)]
        self.bad = set(self.rng.sample(self.nodes, d))
        self.speed = {x: HEALTHY * (self.rng.uniform(0.2, 0.6) if x in self.bad else 1.0) for x in self.nodes}
        self.crash = set(crash)
        self.runs = 0

    def run(self, nodes):
        self.runs += 1
        if self.crash & set(nodes):
            return {"nodes": list(nodes), "ok": False, "busbw": None, "error": "rank died"}
        bw = min(self.speed[x] for x in nodes) * (1 + self.rng.uniform(-NOISE, NOISE))
        return {"nodes": list(nodes), "ok": True, "busbw": round(bw, 3)}


def localise(pod, expected=None, known_good=(), topology=None, max_parallel=None, all_slow=None, limit=400):
    """The stage's loop: the all-node run (judged by the caller when ``all_slow`` is given), then rounds until done.
    Returns (state, localisation runs, rounds)."""
    first = pod.run(pod.nodes)
    if all_slow is not None:
        first["slow"] = all_slow
    results = [first]
    rounds = 0
    for _ in range(limit):
        st = gt.next_runs(pod.nodes, known_good, results, topology=topology, max_parallel=max_parallel,
                          expected=expected)
        if st["done"]:
            return st, len(results) - 1, rounds
        nodes_in_round = [n for r in st["runs"] for n in r]
        assert len(nodes_in_round) == len(set(nodes_in_round)), "a round's runs share a node"
        assert all(len(r) >= 2 for r in st["runs"])
        rounds += 1
        results += [pod.run(r) for r in st["runs"]]
    raise AssertionError("no end after %d rounds" % limit)


SIZES = (4, 16, 30, 140, 1000)
SEEDS = range(6)


def bound(n, d):
    """The issue's bound for one slow DGX, ceil(2 log2 N) + 2; d times it (O(d log N)) for d slow DGX."""
    return max(1, d) * (int(math.ceil(2 * math.log2(n))) + 2)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("d", (0, 1, 2, 3))
def test_every_slow_dgx_found_none_good_named_with_the_expectation(n, d):
    """A real pod's judgement: the expectation (0.8 x the NICs, nccl/plan.multi_node_expectation) anchors it. At 4
    DGX with 3 slow no pair holds two good DGX, so one DGX must be known good (e.g. from an earlier run)."""
    for seed in SEEDS:
        pod = SimPod(n, d, seed)
        good = sorted(set(pod.nodes) - pod.bad)[:1] if (n, d) == (4, 3) else ()
        st, runs, rounds = localise(pod, expected=0.8 * 0.9 * HEALTHY, known_good=good)
        assert {c["node"] for c in st["culprits"]} == pod.bad, (seed, pod.bad, st)
        assert not st["undecided"] and not st["unexplained"]
        assert runs <= bound(n, d), (seed, runs)
        if d == 0:
            assert runs == 0 and rounds == 0   # the all-node run passed: no localisation at all
        if d == 1:
            assert runs <= 2 * math.ceil(math.log2(n)) and rounds <= math.ceil(math.log2(n))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("d", (0, 1, 2, 3))
def test_relative_judgement_alone_as_on_the_simulator(n, d):
    """No absolute figure (the pod-in-a-box): the all-node run is slow by the caller's verdict (the stage's
    needs_localisation), every other run is judged against the median of the runs at the healthy level."""
    for seed in SEEDS:
        pod = SimPod(n, d, seed)
        st, runs, rounds = localise(pod, all_slow=d > 0)
        named = {c["node"] for c in st["culprits"]}
        assert not named - pod.bad, (seed, pod.bad, st)   # never a good DGX
        if (n, d) == (4, 3):
            continue  # every pair holds a slow DGX: no run shows the healthy level (the next test)
        assert named == pod.bad, (seed, pod.bad, st)
        assert runs <= bound(n, d) + (2 if n == 4 else 0), (seed, runs)  # 4 DGX, 2 slow: one re-pairing round
        if d == 1:  # one reference pair of known-good DGX (group_test._reference_pair), in the last round
            assert runs <= 2 * math.ceil(math.log2(n)) + 1 and rounds <= math.ceil(math.log2(n)) + (n == 4)


def test_three_slow_of_four_without_an_anchor_names_nobody():
    """4 DGX, 3 slow, no expectation and no known-good DGX: every run holds a slow DGX, so no run can show what
    healthy is - the planner stops with the suspects undecided and names no culprit it cannot prove."""
    for seed in SEEDS:
        pod = SimPod(4, 3, seed)
        st, runs, _ = localise(pod, all_slow=True)
        assert not {c["node"] for c in st["culprits"]} - pod.bad
        assert st["done"] and runs <= 8


def test_sixteen_dgx_one_slow_within_the_issue_bound():
    """Issue 41 "Done when": 16 DGX, one slow -> at most ceil(2 log2 16) + 2 = 10 localisation runs (9 here, in 4
    rounds: 8 of the split and the reference pair of the relative judgement), against 15 rounds of 120 pairs."""
    for seed in range(20):
        pod = SimPod(16, 1, seed)
        st, runs, rounds = localise(pod, all_slow=True)
        assert [c["node"] for c in st["culprits"]] == sorted(pod.bad)
        assert runs <= 10 and rounds <= 4
    assert len(pair_rounds(pod.nodes)) == 15 and gt.pair_rounds_cost(16) == {"rounds": 15, "runs": 120}


def test_the_docstring_table():
    """group_test's table (1 slow DGX, the most rounds and runs over 20 seeds) is what these pods measure."""
    table = {4: ((2, 4), (3, 5)), 16: ((4, 8), (4, 9)), 30: ((5, 10), (5, 11)), 140: ((8, 16), (8, 17)),
             1000: ((10, 20), (10, 21))}
    for n, (anchored, relative) in table.items():
        seen = [[], []]
        for seed in range(20):
            st, runs, rounds = localise(SimPod(n, 1, seed), expected=0.72 * HEALTHY)
            seen[0].append((rounds, runs))
            st, runs, rounds = localise(SimPod(n, 1, seed), all_slow=True)
            seen[1].append((rounds, runs))
        assert tuple(max(r for r, _ in s) for s in seen) == (anchored[0], relative[0])
        assert tuple(max(u for _, u in s) for s in seen) == (anchored[1], relative[1])
        assert anchored[1] == gt.expected_runs(n, 1) and relative[1] == gt.expected_runs(n, 1, relative=True)
        if n <= 140:  # the tournament of 1,000 DGX is half a million pairs
            assert gt.pair_rounds_cost(n)["rounds"] == len(pair_rounds(["x%d" % i for i in range(n)]))
        assert relative[1] <= math.ceil(2 * math.log2(n)) + 2


def test_healthy_pod_needs_none():
    pod = SimPod(140, 0, 1)
    st, runs, rounds = localise(pod)          # no verdict from the caller: a lone run is judged healthy
    assert st["done"] and runs == 0 and st["culprits"] == [] and st["suspects"] == []
    st, runs, _ = localise(SimPod(140, 0, 2), all_slow=False)
    assert st["done"] and runs == 0


def test_no_result_plans_the_all_node_run():
    st = gt.next_runs(["a", "b", "c"], [], [])
    assert st["runs"] == [["a", "b", "c"]] and not st["done"]


def test_a_crashing_dgx_is_found_like_a_slow_one():
    pod = SimPod(30, 0, 3, crash={"dgx-0017"})
    st, runs, _ = localise(pod)
    assert [c["node"] for c in st["culprits"]] == ["dgx-0017"] and runs <= bound(30, 1)
    assert "did not finish" in st["culprits"][0]["why"]


def test_a_slow_link_not_a_node_is_unexplained():
    """The all-node run is slow but every half is fine: the fault is between the DGX (a spine link), not in one."""
    nodes = ["n%d" % i for i in range(8)]
    results = [{"nodes": nodes, "ok": True, "busbw": 10.0, "slow": True},
               {"nodes": nodes[:4], "ok": True, "busbw": 20.0}, {"nodes": nodes[4:], "ok": True, "busbw": 19.6}]
    st = gt.next_runs(nodes, [], results, expected=16.0)
    assert st["done"] and st["culprits"] == [] and st["unexplained"][0]["nodes"] == nodes
    # judged relatively, the healthy level is first shown by a pair of known-good DGX from the two halves
    st = gt.next_runs(nodes, [], results)
    assert st["runs"] == [["n0", "n4"]] and not st["done"]
    st = gt.next_runs(nodes, [], results + [{"nodes": ["n0", "n4"], "ok": True, "busbw": 19.8}])
    assert st["done"] and st["culprits"] == [] and st["unexplained"][0]["nodes"] == nodes


def test_pod_wide_slowness_is_not_split_down_to_pairs():
    """Every DGX below the expectation by the same amount (a fabric setting): after the quarters no DGX stands out
    and the planner stops instead of running every pair."""
    pod = SimPod(140, 0, 5)
    st, runs, _ = localise(pod, expected=1.5 * HEALTHY)
    assert st["done"] and st["pod_wide"] and st["culprits"] == [] and runs <= 6


def _runs_seen(pod, **kw):
    """The localisation runs (not the all-node run) of one loop, and its answer."""
    seen = []
    orig = pod.run

    def run(nodes):
        seen.append(list(nodes))
        return orig(nodes)
    pod.run = run
    st, runs, _ = localise(pod, all_slow=True, **kw)
    assert len(seen) - 1 == runs
    return st, seen[1:]


def test_topology_keeps_runs_under_one_leaf_and_partners_from_it():
    """140 DGX on 7 leaf groups of 20 (a DGX SuperPOD scalable unit), the inventory's names interleaved over the
    groups: with the topology the confirming pair (the slow DGX and its known-good partner) is under one leaf and
    a run of up to 20 DGX spans at most 2 leaves (20 is no power of two: a cut that keeps the depth sometimes
    crosses one); without it, runs mix the leaves. The number of runs stays within the bound either way."""
    for seed in SEEDS:
        pod = SimPod(140, 1, seed)
        leaf = {x: "su%d" % (i % 7) for i, x in enumerate(pod.nodes)}
        st, seen = _runs_seen(pod, topology={"nodes": {x: {"leaf": g} for x, g in leaf.items()}})
        assert {c["node"] for c in st["culprits"]} == pod.bad and len(seen) <= bound(140, 1)
        small = [r for r in seen if len(r) <= 20]
        assert small and all(len({leaf[x] for x in r}) <= 2 for r in small), small
        assert len({leaf[x] for x in st["culprits"][0]["run"]}) == 1   # the known-good partner from its leaf
        st, blind = _runs_seen(SimPod(140, 1, seed))
        assert {c["node"] for c in st["culprits"]} == pod.bad and len(blind) <= bound(140, 1)
        assert any(len({leaf[x] for x in r}) > 2 for r in blind if len(r) <= 20)


def test_max_parallel_spreads_a_round():
    pod = SimPod(30, 2, 1)
    st, runs, rounds = localise(pod, all_slow=True, max_parallel=1)
    assert {c["node"] for c in st["culprits"]} == pod.bad and rounds == runs


def test_leaf_groups_from_the_pod_cabling():
    fabrics = [{"name": "ib0", "kind": "infiniband", "subnet": "10.0.0.0/24", "mtu": 4092, "carries": ["compute"]},
               {"name": "mgmt", "kind": "ethernet", "subnet": "10.1.0.0/24", "mtu": 1500, "carries": ["management"]}]
    hosts = {"d1": {"groups": ["dgx"], "vars": {"nics": [
                 {"name": "ib0", "fabric": "ib0", "address": "10.0.0.1", "switch": "leaf-1", "switch_port": "1"},
                 {"name": "eno1", "fabric": "mgmt", "address": "10.1.0.1", "switch": "mgmt-1", "switch_port": "1"}]}},
             "d2": {"groups": ["dgx"], "vars": {"nics": [{"name": "ib0", "fabric": "ib0", "address": "10.0.0.2"}]}}}
    pod = Pod.from_model({"pod": {"name": "p", "ra_profile": "x", "fabrics": fabrics}, "hosts": hosts})
    assert gt.leaf_groups(pod, ["d1", "d2"]) == {"d1": "leaf-1"}


def test_judge_settings_read_the_expectations_as_eval_does():
    exp = {"nccl": {"relative_fraction_of_peers": {"value": 0.7, "source": "s"},
                    "multi_node_fraction_of_nics": 0.5}}
    topo = {"nodes": {"a": {"nic_gbps": 800.0}, "b": {"nic_gbps": 800.0}}}
    assert gt.judge_settings(exp, topo) == {"fraction": 0.7, "expected": 50.0}
    assert gt.judge_settings(exp, topo, simulated=True)["expected"] is None
    assert gt.judge_settings({}) == {"fraction": 0.8, "expected": None}


def test_expected_counts_and_summary():
    assert [gt.expected_runs(n, 1) for n in SIZES] == [4, 8, 10, 16, 20]
    assert [gt.expected_rounds(n, 1) for n in SIZES] == [2, 4, 5, 8, 10]
    assert gt.expected_runs(140, 0) == 0
    pod = SimPod(16, 1, 0)
    first = pod.run(pod.nodes)
    first["slow"] = True
    results = [first]
    st = gt.next_runs(pod.nodes, [], results)
    while not st["done"]:
        results += [pod.run(r) for r in st["runs"]]
        st = gt.next_runs(pod.nodes, [], results)
    s = gt.plan_summary(pod.nodes, results, st, rounds=4)
    assert s["runs_used"] == len(results) - 1 and s["planned_one_slow"] == 10 and s["culprits"] == sorted(pod.bad)
    assert s["pairs"] == {"rounds": 15, "runs": 120}
