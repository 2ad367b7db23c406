# -*- coding: utf-8 -*-
"""The RDMA stage (registered in module_utils/report/stages.py): perftest per rail link, against the port rate and
against the rail's other links, and a broken RDMA path named with its HCA. Pure functions.

Record (playbooks/validate_rdma.yml through playbooks/tasks/record_stage.yml): ``pod_stages.rdma = {"run": the
procedure, "tests": [...]}``, each test a planned pair (network/rdma_plan.py: client/server host, NIC, HCA, address,
fabric = the rail, ``link_gbps``) + ``status`` (ok | failed | error), ``reason`` and per tool (``bw``, ``lat``)
the client's and the server's run (``result``: network/perftest_parse.parse_perftest's dict).

Checks per pair (``host`` ``client<->server``; subject Subject(node, nic, hca, peer, peer_nic, fabric)):

- ``rdma_path``: both perftest runs completed. ``fail`` when perftest reported a failure, with its words. An HCA
  whose every pair fails (two or more) while its peers pass with others is the broken one: the check is then that
  node's state (NODE_STATE) with the HCA as its problem, so the finding names the node, NIC and HCA; otherwise
  the pair (LINK_PERF). ``error`` when a host did not answer or a run could not start.
- ``rdma_bw`` (absolute): ``ib_write_bw``'s average against ``bw_fraction_of_port_rate`` x the slower end's port
  rate (model ``nics[].speed``). Skipped on a simulated pod ("simulated"), as every hardware figure.
- ``rdma_bw_relative``: against ``bw_relative_fraction_of_peers`` x the median of the same rail's links that share
  no host with it; a NIC low in most of its pairs fails all of them (the iperf3 stage's rule, perf/iperf_eval.py
  ``relative_ratios``/``slow_nics``, reused: one slow HCA among its peers is what this finds on any pod).
- ``rdma_lat`` (relative): the latency run's typical (median) one-way latency at most ``lat_max_of_peers`` x the
  median of the same rail's links that share no host; a NIC slow in most of its pairs fails all of them. No
  absolute latency limit: no source gives one per ConnectX generation and switch.

All LINK_PERF but a broken HCA's ``rdma_path``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_eval import relative_ratios, slow_nics
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (LINK_PERF, NODE_STATE, CheckResult,
    Problem, Subject, compare, expectation, pass_fail)

__all__ = ["CHECKS", "bw_gbps", "lat_usec", "broken_hcas", "rdma_checks", "evaluate", "markdown"]

CHECKS = ("rdma_path", "rdma_bw", "rdma_bw_relative", "rdma_lat")
SECTION = "rdma"

Endpoint = Tuple[str, str, str]  # (host, nic, fabric)


def _pct(x: float) -> str:
    return "%d%%" % round(100 * x)


def _last_row(t: Mapping[str, Any], tool: str) -> Optional[Dict[str, Any]]:
    """The client's last results row of ``tool`` (the server's when the client printed none)."""
    runs = t.get(tool) or {}
    for side in ("client", "server"):
        res = (runs.get(side) or {}).get("result") or {}
        rows = res.get("rows") or []
        if rows and res.get("ok", True):
            return rows[-1]
    return None


def bw_gbps(t: Mapping[str, Any]) -> Optional[float]:
    """ib_write_bw's average bandwidth of a test in Gb/s, or None (not ok, no row)."""
    if t.get("status") != "ok":
        return None
    row = _last_row(t, "bw")
    return None if row is None else row.get("bw_average_gbps")


def lat_usec(t: Mapping[str, Any]) -> Optional[float]:
    """The latency run's typical (median) latency in usec (the average where no typical is printed), or None."""
    if t.get("status") != "ok":
        return None
    row = _last_row(t, "lat")
    if row is None:
        return None
    value = row.get("t_typical", row.get("t_avg"))
    return float(value) if value is not None else None


def _endpoint(t: Mapping[str, Any], side: str) -> Endpoint:
    return (t[side], t[side + "_nic"], t["fabric"])


def _hca(t: Mapping[str, Any], ep: Endpoint) -> Optional[str]:
    side = "client" if _endpoint(t, "client") == ep else "server"
    return t.get(side + "_hca")


def _as_link(t: Mapping[str, Any], value: Optional[float]) -> Dict[str, Any]:
    """A test in the iperf3 stage's record shape, carrying ``value`` as its rate: perf/iperf_eval.py's peer rules
    read it (the same fabric = the same rail, links sharing no host)."""
    return {"kind": "rdma", "fabric": t["fabric"], "client": t["client"], "server": t["server"],
            "client_nic": t["client_nic"], "server_nic": t["server_nic"],
            "status": "ok" if value else "error", "result": {"received_bps": value * 1e9} if value else {}}


def _own_words(t: Mapping[str, Any], ep: Endpoint) -> Optional[str]:
    """What perftest said on ``ep``'s own side of a failed test (its first failed run's reason), else the test's
    reason."""
    side = "client" if _endpoint(t, "client") == ep else "server"
    words = [(t.get(tool) or {}).get(side, {}).get("reason") for tool in ("bw", "lat")]
    return next((w for w in words if w), None) or t.get("reason")


def broken_hcas(tests: Sequence[Mapping[str, Any]]) -> Dict[Endpoint, Dict[str, Any]]:
    """{endpoint: {"failed", "pairs", "words", "hca"}} for every endpoint whose every pair (two or more) failed with a
    perftest failure: its HCA's RDMA path is broken (a peer that fails with it only passes with its other peers)."""
    per: Dict[Endpoint, List[Mapping[str, Any]]] = {}
    for t in tests:
        if t.get("status") in ("ok", "failed"):
            for side in ("client", "server"):
                per.setdefault(_endpoint(t, side), []).append(t)
    out = {}
    for ep, mine in per.items():
        failed = [t for t in mine if t.get("status") == "failed"]
        if len(failed) >= 2 and len(failed) == len(mine):
            out[ep] = {"failed": len(failed), "pairs": len(mine), "words": _own_words(failed[0], ep),
                       "hca": _hca(failed[0], ep)}
    return out


def _subject(t: Mapping[str, Any]) -> Subject:
    return Subject(node=t["client"], nic=t["client_nic"], hca=t.get("client_hca"), peer=t["server"],
                   peer_nic=t["server_nic"], fabric=t["fabric"])


def _link(t: Mapping[str, Any]) -> str:
    return "%s %s (%s) -> %s %s (%s) on rail %s" % (t["client"], t["client_nic"], t.get("client_hca"), t["server"],
                                                    t["server_nic"], t.get("server_hca"), t["fabric"])


def _path_check(t: Mapping[str, Any], broken: Dict[Endpoint, Dict[str, Any]], base: Dict[str, Any]) -> CheckResult:
    host = "%s<->%s" % (t["client"], t["server"])
    status = t.get("status")
    if status == "ok":
        return CheckResult("rdma_path", host, "pass", details=dict(base), subject=_subject(t), category=LINK_PERF)
    if status != "failed":
        return CheckResult("rdma_path", host, "error", reason="%s: %s" % (_link(t), t.get("reason") or "no result"),
                           details=dict(base), subject=_subject(t), category=LINK_PERF,
                           unreachable=bool(t.get("unreachable")))
    named = [ep for ep in (_endpoint(t, "client"), _endpoint(t, "server")) if ep in broken]
    cause = "%s: RDMA failed - %s" % (_link(t), t.get("reason"))
    if not named:
        return CheckResult("rdma_path", host, "fail", cause=cause + " (only this pair: check the path between them)",
                           details=dict(base), subject=_subject(t), category=LINK_PERF)
    problems = []
    for ep in named:
        b = broken[ep]
        problems.append(Problem(
            "%s %s (HCA %s, rail %s): RDMA fails with every peer (%d of %d pairs)" % (ep[0], ep[1], b["hca"], ep[2],
                                                                                  b["failed"], b["pairs"]),
            NODE_STATE, Subject(node=ep[0], nic=ep[1], hca=b["hca"], fabric=ep[2]),
            cause="RDMA broken on HCA %s (rail %s): every perftest pair through it fails (%d of %d) while its peers "
                  "pass with others - %s; check the HCA (ibv_devinfo, its port state and GID table, the RoCE/PFC "
                  "settings, dmesg) - TCP over the NIC may still work" % (b["hca"], ep[2], b["failed"], b["pairs"],
                                                                            b["words"])))
    ep = named[0]
    return CheckResult("rdma_path", host, "fail", cause=cause, details=dict(base), category=NODE_STATE,
                       subject=Subject(node=ep[0], nic=ep[1], hca=broken[ep]["hca"], peer=t["server"] if ep[0] ==
                                       t["client"] else t["client"], fabric=ep[2]), problems=tuple(problems))


def _slow_text(t: Mapping[str, Any], bad: Dict[Endpoint, float], what: str) -> str:
    named = [ep for ep in (_endpoint(t, "client"), _endpoint(t, "server")) if ep in bad]
    if named:
        eps = "; ".join("%s %s (HCA %s: its pairs run at %s of their peers)" % (ep[0], ep[1], _hca(t, ep),
                                                                               _pct(bad[ep])) for ep in named)
        return ("%s: %s is slow with every peer on its rail: check its cable, the switch port speed and errors, "
                "the PFC/ECN settings and the HCA's PCIe link" % (what, eps))
    return "%s: only this pair is slow: check the path between them (switch ports, inter-switch links)" % what


def rdma_checks(tests: Sequence[Mapping[str, Any]], exp: Dict[str, Any]) -> List[CheckResult]:
    """The four checks of every planned pair (see the module docstring)."""
    frac, frac_src = expectation(exp, SECTION, "bw_fraction_of_port_rate", 0.9)
    rel, rel_src = expectation(exp, SECTION, "bw_relative_fraction_of_peers", 0.8)
    lat_max, lat_src = expectation(exp, SECTION, "lat_max_of_peers", 1.5)
    gbps = [bw_gbps(t) for t in tests]
    lats = [lat_usec(t) for t in tests]
    bw_links = [_as_link(t, g) for t, g in zip(tests, gbps, strict=True)]
    # latency as a rate (1/usec): the same peer rules, a ratio below 1/lat_max is a slow link
    lat_links = [_as_link(t, (1.0 / v) if v else None) for t, v in zip(tests, lats, strict=True)]
    bw_ratios, lat_ratios = relative_ratios(bw_links), relative_ratios(lat_links)
    bw_bad = slow_nics(bw_links, bw_ratios, float(rel))[0]
    lat_bad = slow_nics(lat_links, lat_ratios, 1.0 / float(lat_max))[0]
    broken = broken_hcas(tests)
    out: List[CheckResult] = []
    for i, t in enumerate(tests):
        host = "%s<->%s" % (t["client"], t["server"])
        base = {"fabric": t["fabric"], "round": t.get("round"), "test": t.get("id"), "kind": "rail %s" % t["fabric"],
                "client": t["client"], "client_nic": t["client_nic"], "client_hca": t.get("client_hca"),
                "server": t["server"], "server_nic": t["server_nic"], "server_hca": t.get("server_hca")}
        out.append(_path_check(t, broken, base))
        g, lat = gbps[i], lats[i]
        if t.get("status") != "ok":
            continue  # no measurement: rdma_path says why
        subject = _subject(t)
        ends = (_endpoint(t, "client"), _endpoint(t, "server"))
        # absolute: >= fraction x the slower end's port rate
        link = t.get("link_gbps")
        src = "%s; port rates from the model (nics[].speed)" % frac_src
        if g is None:
            out.append(CheckResult("rdma_bw", host, "error", unit="Gb/s", reason="%s: ib_write_bw printed no result"
                                   % _link(t), details=dict(base), subject=subject, category=LINK_PERF))
        elif not link:
            out.append(CheckResult("rdma_bw", host, "skipped", measured=round(g, 3), unit="Gb/s", source=src,
                                   absolute=True, reason="no port speed in the model (nics[].speed)",
                                   details=dict(base), subject=subject, category=LINK_PERF))
        else:
            expected = round(float(frac) * float(link), 3)
            ok = g >= expected
            out.append(CheckResult("rdma_bw", host, pass_fail(ok), expected=expected, measured=round(g, 3),
                                   unit="Gb/s", source=src, absolute=True, details=dict(base), subject=subject,
                                   category=LINK_PERF, cause=None if ok else _slow_text(
                                       t, bw_bad, "%s at %.1f Gb/s = %s of the %s Gb/s port rate"
                                       % (_link(t), g, _pct(g / float(link)), link))))
        # relative: >= rel x the median of the rail's links sharing no host
        ratio, peers = bw_ratios.get(i, (None, 0))
        if g is None or ratio is None:
            out.append(CheckResult("rdma_bw_relative", host, "skipped", measured=None if g is None else round(g, 3),
                                   unit="Gb/s", source=rel_src, reason="no other link on rail %s to compare with"
                                   % t["fabric"], details=dict(base, peers=peers), subject=subject,
                                   category=LINK_PERF))
        else:
            ref = g / ratio
            ok = ratio >= float(rel) and not any(ep in bw_bad for ep in ends)
            out.append(CheckResult("rdma_bw_relative", host, pass_fail(ok), expected=round(float(rel) * ref, 3),
                                   measured=round(g, 3), unit="Gb/s", source=rel_src,
                                   details=dict(base, peers=peers, ratio=round(ratio, 3)), subject=subject,
                                   category=LINK_PERF, cause=None if ok else _slow_text(
                                       t, bw_bad, "%s at %s of the median of %d comparable links on its rail "
                                       "(%.2f Gb/s)" % (_link(t), _pct(ratio), peers, ref))))
        # latency: <= lat_max x the median of the rail's links sharing no host
        lratio, lpeers = lat_ratios.get(i, (None, 0))
        if lat is None or lratio is None:
            out.append(CheckResult("rdma_lat", host, "skipped", measured=lat, unit="usec", source=lat_src,
                                   reason="no latency measured" if lat is None else
                                   "no other link on rail %s to compare with" % t["fabric"],
                                   details=dict(base, **compare("<="), peers=lpeers), subject=subject,
                                   category=LINK_PERF))
        else:
            ref_lat = lat * lratio
            expected = round(float(lat_max) * ref_lat, 3)
            ok = lat <= expected and not any(ep in lat_bad for ep in ends)
            out.append(CheckResult("rdma_lat", host, pass_fail(ok), expected=expected, measured=round(lat, 3),
                                   unit="usec", source=lat_src,
                                   details=dict(base, **compare("<="), peers=lpeers, ratio=round(lat / ref_lat, 3)),
                                   subject=subject, category=LINK_PERF, cause=None if ok else _slow_text(
                                       t, {ep: 1.0 / r for ep, r in lat_bad.items()},
                                       "%s: latency %.2f usec = %.1fx the median of %d comparable links on its rail "
                                       "(%.2f usec)" % (_link(t), lat, lat / ref_lat, lpeers, ref_lat))))
    return out


def evaluate(recorded: Mapping[str, Any], expectations: Dict[str, Any], context: Mapping[str, Any]
             ) -> List[CheckResult]:
    """The RDMA stage: ``recorded`` = {run: the procedure, tests: [...]} (playbooks/validate_rdma.yml)."""
    return rdma_checks(list(recorded.get("tests") or []), expectations)


def markdown(doc: Mapping[str, Any]) -> List[str]:
    """report.md's RDMA section: per rail, each pair's bandwidth and latency (or why it has none)."""
    rows: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    for c in doc.get("checks") or []:
        if c.get("check") not in CHECKS or not c.get("fabric"):
            continue
        key = (c["fabric"], c.get("client") or "", c.get("server") or "")
        rows.setdefault(key, {})[c["check"]] = c
    if not rows:
        return []
    out = ["## RDMA per rail (perftest)", "",
           "| rail | pair | HCAs | bandwidth Gb/s | latency usec | status |", "|---|---|---|---|---|---|"]
    for (fabric, client, server), cell in sorted(rows.items()):
        path = cell.get("rdma_path") or {}
        bw = (cell.get("rdma_bw_relative") or cell.get("rdma_bw") or {}).get("measured")
        lat = (cell.get("rdma_lat") or {}).get("measured")
        bad = [n for n, c in sorted(cell.items()) if c.get("status") in ("fail", "error")]
        hcas = "%s / %s" % (path.get("client_hca") or "-", path.get("server_hca") or "-")
        out.append("| %s | %s -> %s | %s | %s | %s | %s |" % (
            fabric, client, server, hcas, "-" if bw is None else "%.2f" % bw, "-" if lat is None else "%.2f" % lat,
            ("**" + ", ".join(bad) + "**") if bad else "pass"))
    return out + [""]
