# -*- coding: utf-8 -*-
"""How an iperf3 plan is launched: every host runs its own part of the whole schedule (issue 19, item 2).
Pure functions.

Before, the controller launched each server and each client of a round one after another (``delegate_to``
loops, about 2.6 s an SSH launch), so a round cost seconds per test and a pod's rounds grew with its pairs.
Now each host gets, once:

- ``listen``: the servers it runs for the whole schedule, one per (address, port) it serves. They serve
  test after test (no ``-1``): the plan never has one (server address, port) in two tests of one round.
- ``tests``: its client tests, each with an ``offset`` in seconds from a common start: round ``r`` starts
  at ``(r - 1) * round_seconds``. All hosts start their parts in one parallel task; the round's tests run
  together, as before, and a round costs its duration plus a small gap.

``records`` turns what the hosts returned back into one record per planned test, the same records the
report reads (plan fields + status, reason, result), naming the host that did not answer when one did not (and
``unreachable: true`` then, which the iperf stage's error carries for the findings).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence


def round_seconds(duration: float, omit: float = 0, gap: float = 1.0) -> float:
    """One round: the test (-t duration, -O omit) plus a gap for connecting and the JSON exchange."""
    return float(duration) + float(omit) + float(gap)


def schedule_seconds(plan: Sequence[Dict[str, Any]], seconds_per_round: float) -> float:
    """From the common start until the last round's tests are due to end."""
    return len(plan) * float(seconds_per_round)


def check_plan(plan: Sequence[Dict[str, Any]]) -> List[str]:
    """What breaks the invariants of an iperf3 plan (every schedule of module_utils/perf/schedule.py, the
    second-look rounds of perf/iperf_confirm.py): a NIC in two tests of one round, a port twice on one server in one
    round, rounds not numbered 1..n, a test id twice, a test with itself."""
    out = []
    ids = set()
    for i, r in enumerate(plan, 1):
        if r.get("round") != i:
            out.append("round %s is at position %d" % (r.get("round"), i))
        nics, ports = set(), set()
        for t in r["tests"]:
            ends = [(t["client"], t["client_nic"]), (t["server"], t["server_nic"])]
            if ends[0] == ends[1]:
                out.append("round %d: %s:%s tests itself" % (i, ends[0][0], ends[0][1]))
            for end in ends:
                if end in nics:
                    out.append("round %d: NIC %s:%s in two tests" % (i, end[0], end[1]))
                nics.add(end)
            if (t["server"], t["port"]) in ports:
                out.append("round %d: port %s twice on %s" % (i, t["port"], t["server"]))
            ports.add((t["server"], t["port"]))
            if t.get("id") in ids:
                out.append("test id %s twice" % t.get("id"))
            ids.add(t.get("id"))
    return out


def host_schedules(plan: Sequence[Dict[str, Any]], seconds_per_round: float) -> Dict[str, Dict[str, Any]]:
    """{host: {"listen": [{bind, port}], "tests": [{id, server, port, bind, reverse, offset}]}} for every host
    of the plan (as server, client or both), in a stable order."""
    problems = check_plan(plan)
    if problems:  # two servers on one port, a NIC in two tests at once: the round's numbers would mean nothing
        raise ValueError("the iperf3 plan breaks its invariants: %s" % "; ".join(problems))
    out: Dict[str, Dict[str, Any]] = {}
    for index, r in enumerate(plan):
        offset = round(index * float(seconds_per_round), 3)
        for t in r["tests"]:
            srv = out.setdefault(t["server"], {"listen": [], "tests": []})
            listen = {"bind": t["server_address"], "port": int(t["port"])}
            if listen not in srv["listen"]:
                srv["listen"].append(listen)
            out.setdefault(t["client"], {"listen": [], "tests": []})["tests"].append(
                {"id": t["id"], "server": t["server_address"], "port": int(t["port"]),
                 "bind": t["client_address"], "reverse": bool(t.get("reverse")), "offset": offset})
    return dict(sorted(out.items()))


def _by_key(items: Optional[Sequence[Dict[str, Any]]], *keys: str) -> Dict[Any, Dict[str, Any]]:
    return {tuple(i.get(k) for k in keys): i for i in (items or []) if isinstance(i, dict)}


def _unreachable(res: Any) -> bool:
    return isinstance(res, dict) and bool(res.get("unreachable"))


def records(plan: Sequence[Dict[str, Any]], servers: Dict[str, Any], clients: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One record per planned test: the test's fields + status, reason, result (+ late_by).

    ``servers``/``clients``: {host: what the host's role=servers / role=clients task returned (its registered
    result, or the async_status result), or None when the host never ran it}."""
    out = []
    for r in plan:
        for t in r["tests"]:
            srv, cli = servers.get(t["server"]), clients.get(t["client"])
            rec: Dict[str, Any]
            if not isinstance(srv, dict) or _unreachable(srv):
                rec = {"status": "error", "result": {}, "unreachable": True,
                       "reason": "server host %s unreachable%s" % (
                           t["server"], (": " + str(srv.get("msg"))) if isinstance(srv, dict) and srv.get("msg")
                           else "")}
            else:
                mine = _by_key(srv.get("servers"), "bind", "port").get((t["server_address"], int(t["port"])))
                if not mine or mine.get("status") != "ok":
                    why = (mine or {}).get("reason") or srv.get("msg") or "did not start"
                    rec = {"status": "error", "result": {}, "reason": "server: %s" % why}
                elif not isinstance(cli, dict) or _unreachable(cli):
                    rec = {"status": "error", "result": {}, "unreachable": True,
                           "reason": "client host %s unreachable%s" % (
                               t["client"], (": " + str(cli.get("msg"))) if isinstance(cli, dict) and cli.get("msg")
                               else "")}
                else:
                    got = _by_key(cli.get("tests"), "id").get((t["id"],))
                    if not got or "status" not in got:
                        rec = {"status": "error", "result": {},
                               "reason": "client: %s" % (cli.get("msg") or "did not finish")}
                    else:
                        rec = {"status": got["status"], "reason": got.get("reason"), "result": got.get("result") or {}}
                        for key in ("started_at", "late_by"):
                            if got.get(key) is not None:
                                rec[key] = got[key]
            out.append(dict(t, **rec))
    return out
