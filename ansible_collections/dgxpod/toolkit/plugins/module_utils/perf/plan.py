# -*- coding: utf-8 -*-
"""Scheduling of the performance tests (iperf3 pairs, fio scaling steps) and time estimates. Pure functions.

- ``round_robin``: the circle-method tournament. N hosts -> N-1 rounds of N/2 pairs (N odd: N rounds,
  one host sits out each round). Every unordered pair meets exactly once; no host plays twice in a round.
- ``iperf_plan``: for every data fabric (a fabric that carries compute or storage), the DGX tournament over
  the DGX NICs on that fabric; all fabrics run their round i at the same time (different NICs), so the
  whole network test takes N-1 rounds, not F x (N-1). Then DGX<->storage rounds on storage fabrics
  (storage nodes that can run iperf3): a Latin-square schedule, max(D, S) rounds, every DGX NIC meets
  every storage NIC on its fabric once, no NIC twice in a round. Storage runs the server; the DGX client
  uses reverse mode (-R) so data flows storage -> DGX, the direction the RA measures (004 appendix).
- ``fio_steps``: 1, 2, ... N nodes at once (or doubling steps 1, 2, 4, ..., N on big pods).
- ``eta_seconds``: what is left, from test durations and a per-round overhead.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_gpus

DATA_TRAFFIC = ("compute", "storage")


def round_robin(hosts: Sequence[Any]) -> List[List[Tuple[Any, Any]]]:
    """Rounds of disjoint pairs covering every unordered pair of ``hosts`` exactly once."""
    players: List[Any] = list(hosts)
    if len(players) < 2:
        return []
    bye = object()
    if len(players) % 2:
        players.append(bye)
    n = len(players)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is bye or b is bye:
                continue
            # alternate sides so no host is always the client
            pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        players = [players[0]] + [players[-1]] + players[1:-1]
    return rounds


def bipartite_rounds(left: Sequence[Any], right: Sequence[Any]) -> List[List[Tuple[Any, Any]]]:
    """Every (l, r) once, max(len) rounds, nobody twice in a round (Latin square)."""
    m = max(len(left), len(right)) if left and right else 0
    rounds = []
    for r in range(m):
        pairs = []
        for i, a in enumerate(left):
            j = (r - i) % m
            if j < len(right):
                pairs.append((a, right[j]))
        rounds.append(pairs)
    return rounds


def _fabric_nics(hosts: Dict[str, Dict[str, Any]], names: Iterable[str], fabric: str) -> List[Dict[str, Any]]:
    out = []
    for h in names:
        for nic in (hosts.get(h) or {}).get("nics") or []:
            if nic.get("fabric") == fabric and nic.get("address"):
                out.append({"host": h, "nic": nic["name"], "address": nic["address"], "speed": nic.get("speed")})
                break  # one NIC per host per fabric in the model
    return out


def _side_by_side(kind: str, per_fabric: List[Tuple[str, List[List[Tuple[Dict[str, Any], Dict[str, Any]]]]]],
                  base_port: int, reverse: bool = False) -> List[Dict[str, Any]]:
    """Round i runs the i-th round of every fabric at once, fabric f's tests on port ``base_port`` + f."""
    rounds = []
    for i in range(max((len(r) for _, r in per_fabric), default=0)):
        rounds.append({"kind": kind, "tests": [iperf_test(kind, fab, a, b, base_port + f, reverse=reverse)
                                               for f, (fab, fab_rounds) in enumerate(per_fabric)
                                               if i < len(fab_rounds) for a, b in fab_rounds[i]]})
    return rounds


def iperf_test(kind: str, fabric: str, client: Dict[str, Any], server: Dict[str, Any], port: int,
               reverse: bool = False) -> Dict[str, Any]:
    """One iperf3 test of a round: client and server NIC entries (host, nic, address, speed), the fabric, the port
    (iperf_plan's and perf.schedule's tests are these)."""
    speeds = [s for s in (client.get("speed"), server.get("speed")) if s]
    return {"kind": kind, "fabric": fabric,
            "client": client["host"], "client_nic": client["nic"], "client_address": client["address"],
            "client_speed_gbps": client.get("speed"),
            "server": server["host"], "server_nic": server["nic"], "server_address": server["address"],
            "server_speed_gbps": server.get("speed"),
            "link_gbps": min(speeds) if speeds else None, "port": port, "reverse": reverse}


def iperf_plan(hosts: Dict[str, Dict[str, Any]], dgx: Sequence[str], storage: Sequence[str],
               fabrics: Sequence[Dict[str, Any]], base_port: int = 5201,
               storage_iperf: Optional[Sequence[str]] = None,
               dgx_rounds: Optional[Callable[[List[Dict[str, Any]], str], List[List[Tuple[Any, Any]]]]] = None,
               storage_rounds: Optional[Callable[[List[Dict[str, Any]], List[Dict[str, Any]], str],
                                                 List[List[Tuple[Any, Any]]]]] = None) -> List[Dict[str, Any]]:
    """Rounds of iperf3 tests. ``hosts``: {host: {nics: [...]}} (the model's per-host ``nics``).

    Returns [{"round": i (1-based), "kind": "dgx-dgx" | "dgx-storage", "tests": [test, ...]}] with each test
    naming client/server host, NIC, address, modelled speeds, the slower end (``link_gbps``) and its port:
    each round has ports of its own (``round_ports``), so no server serves two rounds.

    ``dgx_rounds(nics, fabric)`` / ``storage_rounds(dgx_nics, storage_nics, fabric)`` choose the pairs of each
    round on one fabric (default: every pair, ``round_robin`` / ``bipartite_rounds``; the scaling schedules of
    module_utils/perf/schedule.py pass their own). Each round they return must use a NIC at most once."""
    if dgx_rounds is None:
        dgx_rounds = lambda nics, fabric: round_robin(nics)  # noqa: E731
    if storage_rounds is None:
        storage_rounds = lambda d, s, fabric: bipartite_rounds(d, s)  # noqa: E731
    data_fabrics = [f for f in fabrics if set(f.get("carries") or []) & set(DATA_TRAFFIC)]
    rounds = _side_by_side("dgx-dgx", [(fab["name"], dgx_rounds(_fabric_nics(hosts, dgx, fab["name"]), fab["name"]))
                                       for fab in data_fabrics], base_port)
    iperf_storage = list(storage if storage_iperf is None else storage_iperf)
    if iperf_storage:
        st_fabrics = [f for f in data_fabrics if "storage" in (f.get("carries") or [])]
        rounds += _side_by_side("dgx-storage", [
            (fab["name"], storage_rounds(_fabric_nics(hosts, dgx, fab["name"]),
                                         _fabric_nics(hosts, iperf_storage, fab["name"]), fab["name"]))
            for fab in st_fabrics], base_port, reverse=True)
    rounds = [r for r in rounds if r["tests"]]
    for i, r in enumerate(rounds, 1):
        r["round"] = i
        for t in r["tests"]:
            t["round"] = i
            t["id"] = "r%d:%s:%s-%s" % (i, t["fabric"], t["client"], t["server"])
    return round_ports(rounds, base_port)


def round_ports(rounds: List[Dict[str, Any]], base_port: int = 5201) -> List[Dict[str, Any]]:
    """Give every round ports of its own: fabric f (in order of first appearance) of the r-th round listens on
    ``base_port + (r - 1) x fabrics + f``. An iperf3 server serves one test at a time, so with one port per fabric
    for the whole schedule the next round had to wait until each server had finished the previous test's
    end-of-test exchange (30-80 ms after -t on the pod-in-a-box, a retry when a client came too early): the gap
    between rounds covered it. With a port per round a client never meets a server still busy with the previous
    round, and the gap only covers the hosts' clock skew. At most rounds x fabrics ports: 140 DGX on 4 data
    fabrics, 11 rounds of matchings: 5201..5244. Returns ``rounds``, changed in place."""
    fabrics: List[str] = []
    for r in rounds:
        for t in r["tests"]:
            if t["fabric"] not in fabrics:
                fabrics.append(t["fabric"])
    for i, r in enumerate(rounds):
        for t in r["tests"]:
            t["port"] = int(base_port) + i * max(1, len(fabrics)) + fabrics.index(t["fabric"])
    return rounds


def plan_hosts(plan: Sequence[Dict[str, Any]], role: str) -> List[str]:
    """Hosts that act as ``role`` ("client" or "server") anywhere in the plan."""
    return sorted({t[role] for r in plan for t in r["tests"]})


def round_tasks(round_: Dict[str, Any], host: str, role: str) -> List[Dict[str, Any]]:
    """The tests ``host`` takes part in as ``role`` in one round (what a play on that host runs)."""
    return [t for t in round_["tests"] if t[role] == host]


def fio_steps(hosts: Sequence[str], mode: str = "linear", max_steps: Optional[int] = None) -> List[List[str]]:
    """Node sets for the fio scaling test: [h1], [h1, h2], ... all (linear) or 1, 2, 4, ..., N (doubling)."""
    hosts = list(hosts)
    n = len(hosts)
    if n == 0:
        return []
    if mode == "doubling":
        counts = []
        c = 1
        while c < n:
            counts.append(c)
            c *= 2
        counts.append(n)
    elif mode == "single-and-all":
        counts = [1, n] if n > 1 else [1]
    else:
        counts = list(range(1, n + 1))
    if max_steps and len(counts) > max_steps:
        # keep the first and the last, thin the middle evenly
        keep = {0, len(counts) - 1}
        step = (len(counts) - 1) / float(max_steps - 1)
        keep |= {int(round(k * step)) for k in range(max_steps)}
        counts = [counts[i] for i in sorted(keep)]
    return [hosts[:c] for c in counts]


def fio_files(dirs: Sequence[str], numjobs: int, prefix: str = "podfio") -> List[Dict[str, Any]]:
    """One file per job, round-robin over the data directories: job i -> dirs[i % len(dirs)]."""
    if not dirs:
        return []
    return [{"job": "%s%d" % (prefix, i), "directory": dirs[i % len(dirs)], "filename": "%s.%d" % (prefix, i)}
            for i in range(max(0, int(numjobs)))]


def eta_seconds(iperf_rounds_left: int, iperf_duration: float, fio_steps_left: int, fio_seconds_per_step: float,
                overhead: float = 5.0) -> float:
    """Seconds left: each iperf round takes its duration plus overhead (server start/stop, ssh); each fio
    step its layout + ramp + runtime plus overhead."""
    return (max(0, iperf_rounds_left) * (iperf_duration + overhead)
            + max(0, fio_steps_left) * (fio_seconds_per_step + overhead))


def format_eta(seconds: float) -> str:
    seconds = int(round(max(0.0, seconds)))
    if seconds >= 3600:
        return "%dh%02dm" % (seconds // 3600, (seconds % 3600) // 60)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def progress_line(kind: str, index: int, total: int, seconds_left: float, detail: str = "") -> str:
    """'network round 2/3 (dgx-dgx: 4 pairs), about 1m10s left'."""
    text = "%s %d/%d" % (kind, index, total)
    if detail:
        text += " (%s)" % detail
    return "%s, about %s left" % (text, format_eta(seconds_left))


def perf_context(hosts: Dict[str, Dict[str, Any]], dgx: Sequence[str], storage: Sequence[str],
                 fabrics: Sequence[Dict[str, Any]], data_mounts: int = 0) -> Dict[str, Any]:
    """What the evaluation needs from the model: per-DGX storage link capacity, mounts and GPUs, the
    storage side's node count and front-end link capacity, and the sizing inputs.

    hosts: {host: {nics, dgx_model, gpus}}; storage fabrics are those that carry storage."""
    st_fabrics = {f["name"] for f in fabrics if "storage" in (f.get("carries") or [])}
    nodes = {}
    total_gpus = 0
    for h in dgx:
        hv = hosts.get(h) or {}
        gpus = int(hv.get("gpus") or dgx_gpus(hv.get("dgx_model")) or 8)  # the hardware catalogue's
        total_gpus += gpus
        link = sum(float(n.get("speed") or 0) for n in hv.get("nics") or [] if n.get("fabric") in st_fabrics)
        nodes[h] = {"storage_link_gbps": link or None, "mounts": int(data_mounts or 0), "gpus": gpus}
    st_link = sum(float(n.get("speed") or 0) for h in storage for n in (hosts.get(h) or {}).get("nics") or []
                  if n.get("fabric") in st_fabrics)
    return {"nodes": nodes, "storage": {"nodes": len(storage), "link_gbps": st_link or None},
            "sizing": {"gpus": total_gpus, "dgx": len(dgx), "storage_nodes": len(storage)}}
