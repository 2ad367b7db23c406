# -*- coding: utf-8 -*-
"""iperf3 schedules that scale to SuperPOD sizes, plan checks, predicted durations and outlier localisation.
Pure functions (issue 19, item 3; docs/validation.md "Schedules at scale").

Schedules (``pod_perf_schedule``):

- ``all_pairs``: module_utils/perf/plan.iperf_plan as it always was - every pair of DGX on every data fabric
  (N-1 rounds, the circle-method tournament), then every DGX x every iperf3-capable storage node (max(D, S)
  rounds). Exact, but O(N) rounds of the RA's 300 s: 139 rounds (about 12 h) for 140 DGX.
- ``matchings``: ``k`` rounds per fabric, each a perfect matching of the DGX NICs on that fabric (N odd: one
  NIC sits out, a different one each round), so every DGX link on every fabric is measured in every round (all
  but one when N is odd) and each NIC meets ``k`` *distinct* peers - a slow NIC fails against all of them while
  each of its peers passes its other tests, so the outlier stands out against known-good nodes.
  ``k = max(3, ceil(log2 N))`` (8 rounds for 140 DGX, 10 for 1,000), never more than the tournament has.
  The matchings are ``k`` rounds evenly spaced in the circle-method tournament of the NICs in an order shuffled
  with a fixed seed per fabric: reproducible, peers spread over the pod (not the neighbours in the inventory,
  who often share a leaf switch), and distinct by construction. DGX<->storage: ``storage_rounds`` (default 3)
  rounds evenly spaced in the Latin square of ``all_pairs``; each storage NIC meets that many distinct DGX, the
  DGX taking turns evenly (every DGX when D <= S x rounds). The DGX side of every storage fabric is covered by
  the matchings on that fabric anyway.
- ``auto`` (the default): ``all_pairs`` up to ``pod_perf_all_pairs_max`` DGX (16), ``matchings`` beyond.

Invariants of every plan (``check_plan``): no NIC in two tests of one round (a host may take part on several
fabrics at once, through different NICs, as ``all_pairs`` always did), a port at most once per server host per
round, rounds numbered 1..n, unique test ids.

``localise``: from which tests fell short, the suspects and follow-up rounds that pit each suspect NIC against
NICs that passed every test (known-good), so ``verdict`` can name the outlier after they ran.
"""
from __future__ import annotations

import math
import random
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_launch import check_plan, round_seconds
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import (bipartite_rounds, DATA_TRAFFIC,
    iperf_plan, iperf_test, round_robin)

SCHEDULES = ("auto", "all_pairs", "matchings")
ALL_PAIRS_MAX = 16        # auto: all pairs up to this many DGX (15 rounds x 300 s = 78 min at 16 DGX, full profile)
MIN_MATCHINGS = 3         # a NIC meets at least 3 distinct peers: one slow peer cannot make it look slow
STORAGE_ROUNDS = 3        # matchings: DGX<->storage rounds; each storage NIC meets 3 distinct DGX
SEED = 19                 # the matchings' shuffle (per fabric: "<seed>:<fabric>"), fixed so plans are reproducible

# The launcher of issue 19 item 2 (playbooks/validate_perf.yml, module_utils/perf/iperf_launch.py): every host gets its
# part of the whole schedule up front; round r starts (r - 1) x round_seconds(duration, omit, gap) after a common
# start, so a round costs its test plus a 0.5 s gap (pod_perf_iperf_gap: 3 s, then 1 s on 2026-11-25, 0.5 s since
# each round has ports of its own, perf/plan.round_ports). Once per schedule: the
# start margin (pod_perf_iperf_start_margin, 3 s + 0.1 s a host; 4 s + 0.1 s until 2026-11-25) and the plays'
# parallel tasks (start servers, launch the clients, wait, stop, record: LAUNCH_TASKS tasks over the hosts, forks at
# a time, about 2.6 s an SSH round, the launch figure issue 19 measured). On the 4-DGX simulator this gives
# 7 x 5.5 + 3.6 + 13 = 55 s for the quick network test (docs/validation.md).
GAP_S = 0.5
START_MARGIN_S = 3.0      # roles/pod_perf/defaults: pod_perf_iperf_start_margin = 3 s + 0.1 s a host
LAUNCH_TASKS = 5
SSH_S = 2.6
FORKS = 50                # ansible.cfg
# Before item 2 the controller launched a round's tests one by one (delegate_to loops): four calls per test
# (server start, client launch - reserved as 3 s by start_at -, async_status, server stop) of ~2.6 s each.
SERIAL_S_PER_TEST = 2.6 + 3.0 + 2.6 + 2.6
# roles/pod_perf/tasks/fio.yml: every node lays out its files once, all at once, before step 1 (FIO_LAYOUT_S); a
# step then reads for ramp_time + runtime plus FIO_OVERHEAD_S (its launch, common start, wait and clean-up: about
# 6 s a step measured on the 4-DGX pod-in-a-box).
FIO_LAYOUT_S = 30.0
FIO_OVERHEAD_S = 5.0      # per fio step


def choose(n_dgx: int, schedule: str = "auto", all_pairs_max: int = ALL_PAIRS_MAX) -> str:
    """The schedule that runs: ``auto`` -> ``all_pairs`` up to ``all_pairs_max`` DGX, ``matchings`` beyond."""
    if schedule not in SCHEDULES:
        raise ValueError("pod_perf_schedule must be one of %s, not %r" % ("|".join(SCHEDULES), schedule))
    if schedule == "auto":
        return "all_pairs" if n_dgx <= int(all_pairs_max) else "matchings"
    return schedule


def matching_count(n: int, rounds: Optional[int] = None) -> int:
    """Rounds of matchings for ``n`` NICs: ``rounds`` or max(3, ceil(log2 n)), at most the tournament's."""
    if n < 2:
        return 0
    available = n - 1 if n % 2 == 0 else n
    want = int(rounds) if rounds else max(MIN_MATCHINGS, int(math.ceil(math.log2(n))))
    return max(1, min(want, available))


def spread(items: Sequence[Any], k: int) -> List[Any]:
    """``k`` items evenly spaced in ``items`` (all of them when k >= len)."""
    n = len(items)
    if k >= n:
        return list(items)
    return [items[(i * n) // k] for i in range(k)]


def dgx_matchings(nics: Sequence[Any], fabric: str, rounds: Optional[int] = None,
                  seed: Any = SEED) -> List[List[Tuple[Any, Any]]]:
    """``matching_count`` rounds of disjoint pairs of ``nics``, every NIC once per round (N odd: all but one,
    a different one each round), no pair twice."""
    order = list(nics)
    random.Random("%s:%s" % (seed, fabric)).shuffle(order)
    return spread(round_robin(order), matching_count(len(order), rounds))


def storage_sample(dgx_nics: Sequence[Any], storage_nics: Sequence[Any], rounds: int = STORAGE_ROUNDS
                   ) -> List[List[Tuple[Any, Any]]]:
    """``rounds`` rows evenly spaced in the DGX x storage Latin square: no NIC twice in a round, each storage NIC
    meets distinct DGX, the DGX take turns (row r holds the DGX r, r-1, ... r-S+1, so spaced rows hold
    different DGX while S x rounds <= D)."""
    return spread(bipartite_rounds(dgx_nics, storage_nics), max(0, int(rounds)))


def schedule_plan(hosts: Dict[str, Dict[str, Any]], dgx: Sequence[str], storage: Sequence[str],
                  fabrics: Sequence[Dict[str, Any]], schedule: str = "auto", all_pairs_max: int = ALL_PAIRS_MAX,
                  rounds: Optional[int] = None, storage_rounds: int = STORAGE_ROUNDS, seed: Any = SEED,
                  base_port: int = 5201, storage_iperf: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """The iperf3 plan of the chosen schedule, in perf_plan.iperf_plan's format (``all_pairs``: exactly its
    output). Raises ValueError if the plan breaks an invariant (``check_plan``)."""
    name = choose(len(dgx), schedule, all_pairs_max)
    if name == "all_pairs":
        plan = iperf_plan(hosts, dgx, storage, fabrics, base_port, storage_iperf)
    else:
        plan = iperf_plan(hosts, dgx, storage, fabrics, base_port, storage_iperf,
                          dgx_rounds=lambda nics, fabric: dgx_matchings(nics, fabric, rounds, seed),
                          storage_rounds=lambda d, s, fabric: storage_sample(d, s, storage_rounds))
    problems = check_plan(plan)
    if problems:
        raise ValueError("iperf3 plan (%s) breaks its invariants: %s" % (name, "; ".join(problems[:5])))
    return plan


def summary(plan: Sequence[Dict[str, Any]], hosts: Dict[str, Dict[str, Any]], dgx: Sequence[str],
            fabrics: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Rounds and tests per kind, and per data fabric: DGX NICs on it, the fewest of them measured in one
    dgx-dgx round, and the fewest / most distinct peers a DGX NIC meets."""
    kinds: Dict[str, Dict[str, int]] = {}
    for r in plan:
        k = kinds.setdefault(r["kind"], {"rounds": 0, "tests": 0})
        k["rounds"] += 1
        k["tests"] += len(r["tests"])
    per_fabric = {}
    dgx_set = set(dgx)
    for fab in fabrics:
        if not set(fab.get("carries") or []) & set(DATA_TRAFFIC):
            continue
        name = fab["name"]
        on = sorted(h for h in dgx if any(n.get("fabric") == name and n.get("address")
                                          for n in (hosts.get(h) or {}).get("nics") or []))
        peers: Dict[str, set] = {h: set() for h in on}
        per_round = []
        storage_tests = 0
        for r in plan:
            tests = [t for t in r["tests"] if t["fabric"] == name]
            if r["kind"] == "dgx-dgx":
                seen = set()
                for t in tests:
                    seen |= {t["client"], t["server"]}
                    peers[t["client"]].add(t["server"])
                    peers[t["server"]].add(t["client"])
                per_round.append(len(seen & dgx_set))
            else:
                storage_tests += len(tests)
        counts = [len(p) for p in peers.values()]
        per_fabric[name] = {"dgx_nics": len(on), "dgx_rounds": len(per_round),
                            "min_covered_per_round": min(per_round) if per_round else 0,
                            "min_peers": min(counts) if counts else 0, "max_peers": max(counts) if counts else 0,
                            "storage_tests": storage_tests}
    return {"rounds": len(plan), "tests": sum(len(r["tests"]) for r in plan), "kinds": kinds,
            "fabrics": per_fabric}


def fio_step_seconds(run: Dict[str, Any]) -> float:
    """One fio step of a run profile (profiles/*.yml perf_runs.<name>): ramp_time + runtime + FIO_OVERHEAD_S (the
    files were laid out before step 1)."""
    fio = run.get("fio") or {}
    return float(fio.get("ramp_time") or 0) + float(fio.get("runtime") or 0) + FIO_OVERHEAD_S


def fio_seconds(run: Dict[str, Any], steps: int) -> float:
    """``steps`` fio steps: one layout of every node's files (FIO_LAYOUT_S), then ``fio_step_seconds`` a step."""
    return FIO_LAYOUT_S + steps * fio_step_seconds(run) if steps > 0 else 0.0


def network_setup_seconds(hosts: int, forks: int = FORKS) -> float:
    """Once per schedule: the start margin (START_MARGIN_S + 0.1 s a host, roles/pod_perf
    pod_perf_iperf_start_margin) and LAUNCH_TASKS parallel tasks over ``hosts``."""
    if hosts <= 0:
        return 0.0
    return START_MARGIN_S + 0.1 * hosts + LAUNCH_TASKS * math.ceil(hosts / float(max(1, forks))) * SSH_S


def predict_seconds(plan: Sequence[Dict[str, Any]], run: Dict[str, Any], fio_steps: int = 0, gap: float = GAP_S,
                    forks: int = FORKS, per_test: float = 0.0) -> float:
    """Predicted seconds of a plan under a run profile (profiles/*.yml ``perf_runs.full`` / ``quick``): every
    round round_seconds(duration, omit, gap) of module_utils/perf/iperf_launch.py, plus ``network_setup_seconds`` for
    the hosts of the plan, plus ``per_test`` seconds a test when a round's tests are launched one by one
    (``SERIAL_S_PER_TEST``, the launcher before issue 19 item 2; 0 now), plus ``fio_steps`` fio steps
    (``fio_seconds``: one layout, then ``fio_step_seconds`` a step)."""
    iperf = run.get("iperf") or {}
    hosts = {t[k] for r in plan for t in r["tests"] for k in ("client", "server")}
    tests = sum(len(r["tests"]) for r in plan)
    network = (len(plan) * round_seconds(float(iperf.get("duration") or 0), float(iperf.get("omit") or 0), gap)
               + network_setup_seconds(len(hosts), forks) + per_test * tests)
    return network + fio_seconds(run, fio_steps)


# ------------------------------------------------------------------------------------------------ localisation

def _endpoints(t: Dict[str, Any]) -> List[Tuple[Tuple[str, str, str], Dict[str, Any]]]:
    out = []
    for side in ("client", "server"):
        role = "storage" if side == "server" and t.get("kind") == "dgx-storage" else "dgx"
        out.append(((t[side], t[side + "_nic"], t["fabric"]),
                    {"host": t[side], "nic": t[side + "_nic"], "address": t[side + "_address"],
                     "speed": t.get(side + "_speed_gbps"), "role": role}))
    return out


def localise(plan: Sequence[Dict[str, Any]], failed: Iterable[str], peers: int = 2,
             base_port: int = 5201) -> Dict[str, Any]:
    """Suspects and follow-up rounds after ``plan`` ran and the tests whose ids are in ``failed`` fell short.

    A NIC is suspect when one of its tests failed, unless every failure it had was with a peer that failed most
    of its own tests and a larger share than this NIC did (that peer explains it). Known-good: NICs that took
    part and failed nothing. Each suspect gets ``peers`` follow-up tests against distinct known-good DGX NICs of
    its fabric (ones it has not met yet first; storage NICs serve a known-good DGX client in reverse mode, as in
    the plan), scheduled in rounds with the plan's invariants. Returns {"suspects": [{host, nic, fabric, role,
    failed, tests, peers}], "rounds": [{"round", "kind": "localise", "tests"}], "unresolved": [suspects with no
    known-good peer]}."""
    failed = set(failed)
    info: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    stats: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    fabric_order: List[str] = []
    for r in plan:
        for t in r["tests"]:
            if t["fabric"] not in fabric_order:
                fabric_order.append(t["fabric"])
            (a, ai), (b, bi) = _endpoints(t)
            for me, other, meta in ((a, b, ai), (b, a, bi)):
                info.setdefault(me, meta)
                s = stats.setdefault(me, {"tests": 0, "failed": 0, "met": set(), "failed_with": set()})
                s["tests"] += 1
                s["met"].add(other)
                if t.get("id") in failed:
                    s["failed"] += 1
                    s["failed_with"].add(other)

    def share(ep):
        return stats[ep]["failed"] / float(stats[ep]["tests"])

    def explains(o, ep):  # o failed most of its tests, and a larger share than ep did
        return share(o) >= 0.5 and share(o) > share(ep)

    suspects = [ep for ep, s in sorted(stats.items()) if s["failed"]
                and not all(explains(o, ep) for o in s["failed_with"])]
    suspects.sort(key=lambda ep: (-share(ep), -stats[ep]["failed"], ep))
    good = {ep for ep, s in stats.items() if s["tests"] and not s["failed"] and info[ep]["role"] == "dgx"}
    rounds: List[Dict[str, Any]] = []
    busy: List[set] = []
    ports: List[set] = []
    unresolved = []
    used: Dict[Tuple[str, str, str], int] = {}
    for ep in suspects:
        fabric = ep[2]
        candidates = sorted((g for g in good if g[2] == fabric and g[0] != ep[0]),
                            key=lambda g: (g in stats[ep]["met"], used.get(g, 0), g))
        if not candidates:
            unresolved.append(ep)
            continue
        chosen = 0
        for g in candidates:
            if chosen >= peers:
                break
            if info[ep]["role"] == "storage":
                client, server, reverse, kind = info[g], info[ep], True, "dgx-storage"
            elif chosen % 2 == 0:
                client, server, reverse, kind = info[ep], info[g], False, "dgx-dgx"
            else:
                client, server, reverse, kind = info[g], info[ep], False, "dgx-dgx"
            port = base_port + fabric_order.index(fabric)
            i = 0
            while i < len(rounds) and (ep[:2] in busy[i] or g[:2] in busy[i] or (server["host"], port) in ports[i]):
                i += 1
            if i == len(rounds):
                rounds.append({"kind": "localise", "tests": []})
                busy.append(set())
                ports.append(set())
            t = iperf_test(kind, fabric, client, server, port, reverse=reverse)
            t["suspect"] = "%s:%s" % ep[:2]
            rounds[i]["tests"].append(t)
            busy[i] |= {ep[:2], g[:2]}
            ports[i].add((server["host"], port))
            used[g] = used.get(g, 0) + 1
            chosen += 1
    for i, r in enumerate(rounds, 1):
        r["round"] = i
        for t in r["tests"]:
            t["round"] = i
            t["id"] = "l%d:%s:%s-%s" % (i, t["fabric"], t["client"], t["server"])
    return {"suspects": [dict(host=ep[0], nic=ep[1], fabric=ep[2], role=info[ep]["role"],
                              failed=stats[ep]["failed"], tests=stats[ep]["tests"],
                              peers=sorted(o[0] for o in stats[ep]["met"])) for ep in suspects],
            "rounds": rounds,
            "unresolved": [dict(host=ep[0], nic=ep[1], fabric=ep[2]) for ep in unresolved]}


def verdict(followup: Sequence[Dict[str, Any]], failed: Iterable[str]) -> Dict[str, str]:
    """After the follow-up rounds of ``localise`` ran: "host:nic" -> "outlier" (short against every known-good
    peer), "cleared" (fine against all of them: the fault was its first peer or the path between them) or
    "mixed"."""
    failed = set(failed)
    seen: Dict[str, List[bool]] = {}
    for r in followup:
        for t in r["tests"]:
            seen.setdefault(t["suspect"], []).append(t["id"] in failed)
    return {s: "outlier" if all(v) else "cleared" if not any(v) else "mixed" for s, v in sorted(seen.items())}


def iperf_storage_hosts(storage: Sequence[str], hostvars: Dict[str, Dict[str, Any]]) -> List[str]:
    """Storage hosts that can run iperf3: storage_node.iperf3 true, or the simulator's nfs-ganesha nodes."""
    out = []
    for h in storage:
        node = (hostvars.get(h) or {}).get("storage_node") or {}
        if node.get("iperf3", node.get("platform") == "nfs-ganesha"):
            out.append(h)
    return out
