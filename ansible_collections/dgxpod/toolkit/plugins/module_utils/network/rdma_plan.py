# -*- coding: utf-8 -*-
"""The RDMA stage's plan: perftest pairs per rail, each host's part of the whole schedule, and the records the report
reads (issue 40 item 1). Pure functions.

A *rail* is a fabric that carries compute traffic (the RAs' rail-optimised compute fabrics: one HCA per DGX per rail,
the same HCA index on every DGX). The pairs are the iperf3 stage's: module_utils/perf/plan.iperf_plan's DGX
tournament on each rail (every pair, N-1 rounds; all rails side by side, so round i of every rail runs at once on
different HCAs), or the matchings of module_utils/perf/schedule.py on big pods - only DGX, no storage nodes, and only
NICs the model gives an ``rdma_device``.

How a plan runs (library/pod_rdma.py, playbooks/validate_rdma.yml), the iperf3 stage's shape: every host gets its
part of the whole schedule once (:func:`host_parts`) and runs it in one task, all hosts at once; round ``r`` starts
``(r - 1) x round_seconds`` after a common start. In a round each test runs ``ib_write_bw`` (bandwidth) and then the
latency tool on the same pair; the server of a test starts at the round's start, its client ``CLIENT_DELAY_S``
later (perftest's server serves one client and exits: a server per test and tool). Launch cost: a few SSH calls per
host for the whole schedule, whatever the number of pairs.

:func:`records` turns what the hosts returned into one record per planned test (plan fields + status, reason, the
client's and the server's parsed perftest output), naming a host that did not answer (``unreachable``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_launch import check_plan
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import iperf_plan

__all__ = ["BASE_PORT", "CLIENT_DELAY_S", "rails", "rdma_plan", "round_seconds", "schedule_seconds", "host_parts",
           "records"]

BASE_PORT = 18515          # perftest's default port (perftest_parameters.h DEF_PORT)
CLIENT_DELAY_S = 1.0       # a test's client starts this long after its server (the server must listen first)
CONNECT_RETRY_S = 5.0      # a client whose server does not listen yet retries this long ("Couldn't connect")
GAP_S = 1.0                # per tool: the exchange before and after the timed part, and the hosts' clock skew


def rails(fabrics: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The fabrics RDMA is measured on: those carrying compute traffic (the rails)."""
    return [f for f in fabrics if "compute" in (f.get("carries") or [])]


def _nic(hosts: Dict[str, Dict[str, Any]], host: str, name: str) -> Dict[str, Any]:
    return next((n for n in (hosts.get(host) or {}).get("nics") or [] if n.get("name") == name), {})


def rdma_plan(hosts: Dict[str, Dict[str, Any]], dgx: Sequence[str], fabrics: Sequence[Dict[str, Any]],
              base_port: int = BASE_PORT, dgx_rounds: Any = None) -> List[Dict[str, Any]]:
    """Rounds of perftest pairs on every rail: [{"round", "kind": "rdma", "tests": [...]}], each test the iperf3
    plan's fields (client/server host, NIC, address, speeds, ``link_gbps``, fabric, round, id) plus each end's
    ``client_hca``/``server_hca`` (the model's ``rdma_device``), the fabric's ``link_layer`` (``ethernet``: RoCE,
    ``infiniband``) and two ports: ``port`` for the bandwidth run, ``lat_port`` for the latency run. ``hosts``:
    {host: {nics: [...]}} (the model's). DGX NICs without an ``rdma_device`` take no part. ``dgx_rounds``: as
    iperf_plan's (the matchings of perf/schedule.py on big pods)."""
    on_rails = rails(fabrics)
    kinds = {f["name"]: f.get("kind") or "ethernet" for f in on_rails}
    rdma_hosts = {h: {"nics": [n for n in (hosts.get(h) or {}).get("nics") or [] if n.get("rdma_device")]}
                  for h in dgx}
    kw = {"dgx_rounds": dgx_rounds} if dgx_rounds is not None else {}
    plan = iperf_plan(rdma_hosts, list(dgx), [], on_rails, int(base_port), storage_iperf=[], **kw)
    ports = max((t["port"] for r in plan for t in r["tests"]), default=int(base_port)) - int(base_port) + 1
    for r in plan:
        r["kind"] = "rdma"
        for t in r["tests"]:
            t["kind"] = "rdma"
            t["id"] = t["id"].replace("r%d:" % r["round"], "rdma%d:" % r["round"], 1)
            t["client_hca"] = _nic(hosts, t["client"], t["client_nic"]).get("rdma_device")
            t["server_hca"] = _nic(hosts, t["server"], t["server_nic"]).get("rdma_device")
            t["link_layer"] = kinds.get(t["fabric"], "ethernet")
            t["lat_port"] = t["port"] + ports  # after every bandwidth port: no server serves two runs at once
    return plan


def round_seconds(bw_duration: float, lat_seconds: float, gap: float = GAP_S) -> float:
    """One round: the client's delay, the bandwidth run (perftest -D), the latency run, a gap after each."""
    return CLIENT_DELAY_S + float(bw_duration) + float(gap) + CLIENT_DELAY_S + float(lat_seconds) + float(gap)


def schedule_seconds(plan: Sequence[Dict[str, Any]], seconds_per_round: float) -> float:
    """From the common start until the last round is due to end."""
    return len(plan) * float(seconds_per_round)


def host_parts(plan: Sequence[Dict[str, Any]], seconds_per_round: float, bw_duration: float
               ) -> Dict[str, Dict[str, Any]]:
    """{host: {"tests": [...]}}: every run a host takes part in, in a stable order. Per test and tool (``bw``,
    ``lat``) the server side ``{id, tool, side: server, hca, port, address (its own), peer, peer_address,
    link_layer, offset}`` and the client side (the same with ``side: client``, ``offset`` ``CLIENT_DELAY_S``
    later): the latency run of a round starts after its bandwidth run. Raises ValueError when the plan breaks its
    invariants (a NIC twice in a round, a port twice on one server in a round)."""
    problems = check_plan(plan)
    if problems:
        raise ValueError("the RDMA plan breaks its invariants: %s" % "; ".join(problems))
    out: Dict[str, Dict[str, Any]] = {}
    lat_start = CLIENT_DELAY_S + float(bw_duration) + GAP_S
    for index, r in enumerate(plan):
        base = index * float(seconds_per_round)
        for t in r["tests"]:
            for tool, port, start in (("bw", t["port"], 0.0), ("lat", t["lat_port"], lat_start)):
                for side, delay in (("server", 0.0), ("client", CLIENT_DELAY_S)):
                    other = "client" if side == "server" else "server"
                    out.setdefault(t[side], {"tests": []})["tests"].append({
                        "id": t["id"], "tool": tool, "side": side, "hca": t[side + "_hca"], "port": int(port),
                        "address": t[side + "_address"], "peer": t[other], "peer_address": t[other + "_address"],
                        "link_layer": t.get("link_layer") or "ethernet",
                        "offset": round(base + start + delay, 3)})
    return dict(sorted(out.items()))


def _unreachable(res: Any) -> bool:
    return isinstance(res, dict) and bool(res.get("unreachable"))


def _runs(res: Any) -> Dict[tuple, Dict[str, Any]]:
    return {(r.get("id"), r.get("tool"), r.get("side")): r for r in (res or {}).get("tests") or []
            if isinstance(r, dict)}


def records(plan: Sequence[Dict[str, Any]], results: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One record per planned test: the test's fields + ``status`` (ok | failed | error), ``reason`` and, per tool
    (``bw``, ``lat``), ``{"client": run, "server": run}`` - each run what pod_rdma returned for it (``status``,
    ``reason``, ``result``: perftest's output parsed by network/perftest_parse.parse_perftest, ``cmd``).

    ``failed``: perftest ran and reported a failure (its words in ``reason``: the RDMA path is broken); ``error``:
    a host did not answer or a run could not start (``unreachable`` when a host did not answer). ``results``:
    {host: what its pod_rdma task returned, or None when it never ran}."""
    out = []
    for r in plan:
        for t in r["tests"]:
            rec: Dict[str, Any] = dict(t)
            down = [h for h in (t["client"], t["server"]) if not isinstance(results.get(h), dict)
                    or _unreachable(results.get(h))]
            if down:
                h = down[0]
                msg = (results.get(h) or {}).get("msg") if isinstance(results.get(h), dict) else None
                rec.update(status="error", unreachable=True, bw={}, lat={},
                           reason="%s did not answer%s" % (h, (": %s" % msg) if msg else ""))
                out.append(rec)
                continue
            failed: List[str] = []
            errors: List[str] = []
            for tool in ("bw", "lat"):
                runs = {side: _runs(results[t[side]]).get((t["id"], tool, side)) for side in ("client", "server")}
                rec[tool] = {side: run or {} for side, run in runs.items()}
                for side, run in runs.items():
                    host = t[side]
                    if not run:
                        errors.append("%s: the %s %s run did not report (%s)" % (
                            host, tool, side, (results[host] or {}).get("msg") or "not run"))
                    elif run.get("status") == "failed":
                        failed.append("%s %s (%s): %s" % (host, t[side + "_hca"], side, run.get("reason")))
                    elif run.get("status") != "ok":
                        errors.append("%s %s %s: %s" % (host, tool, side, run.get("reason") or run.get("status")))
            if failed:
                rec.update(status="failed", reason="; ".join(dict.fromkeys(failed)))
            elif errors:
                rec.update(status="error", reason="; ".join(errors))
            else:
                rec.update(status="ok", reason=None)
            out.append(rec)
    return out
