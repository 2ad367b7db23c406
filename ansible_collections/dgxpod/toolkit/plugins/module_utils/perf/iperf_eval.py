# -*- coding: utf-8 -*-
"""The iperf3 stage (registered in module_utils/report/stages.py): every link against the port rate and against
its peers, and the report's pair-throughput heatmaps. Pure functions.

Record (playbooks/validate_perf.yml through playbooks/tasks/record_stage.yml): ``pod_stages.iperf = {"run":
{profile, params}, "tests": [...]}``, each test the plan's fields (perf/plan.py iperf_plan) + status, reason,
result (perf/iperf_launch.py) and, after a second look, attempts and confirm (perf/iperf_confirm.py).

Two checks per test, both LINK_PERF (subject: the client and its NIC, the server and its NIC, the fabric;
``host`` ``client<->server``):

- ``iperf`` (absolute): the measurement against ``tcp_fraction_of_port_rate`` x the slower end's port rate from
  the model. On a simulated pod ``skipped`` ("simulated"): the simulator's numbers say nothing about DGX hardware.
- ``iperf_relative`` (relative): each link against the median of the links that share no host with it on the
  same fabric; a NIC slow in most of its pairs fails all of them. Runs on real and simulated pods alike and finds
  the one slow cable, port or NIC.
"""
from __future__ import annotations

from html import escape
from statistics import median
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from xml.sax.saxutils import quoteattr

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.report_text import fmt_number
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (LINK_PERF, CheckResult, Subject,
    expectation, link_text, pass_fail)


def relative_fraction(exp: Dict[str, Any]) -> Tuple[float, str]:
    """The relative threshold (a pod that is noisier than real NICs - the simulator's veths on shared cores -
    overrides it in its inventory, pod.validation.expectations)."""
    return expectation(exp, "network", "relative_fraction_of_peers", 0.8)


def _pct(x: float) -> str:
    return "%d%%" % round(100 * x)


def endpoint(t: Dict[str, Any], side: str) -> Tuple[str, str, str]:
    return (t[side], t[side + "_nic"], t["fabric"])


def test_gbps(t: Dict[str, Any]) -> Optional[float]:
    res = t.get("result") or {}
    bps = res.get("received_bps") if res.get("received_bps") is not None else res.get("sent_bps")
    return None if bps is None or t.get("status") != "ok" else bps / 1e9


def _pair_name(t: Dict[str, Any]) -> str:
    return "%s<->%s" % (t["client"], t["server"])


def relative_ratios(tests: Sequence[Dict[str, Any]]) -> Dict[int, Tuple[Optional[float], int]]:
    """{index: (measured / median of peers, number of peers)} for tests that produced a number.

    Peers of a link: the links of the same fabric and kind that share no host with it (a slow NIC then
    never drags down its own reference). Fewer than one peer -> fall back to all other links; none -> None."""
    out: Dict[int, Tuple[Optional[float], int]] = {}
    vals = {i: test_gbps(t) for i, t in enumerate(tests)}
    for i, t in enumerate(tests):
        if vals[i] is None:
            continue
        same = [j for j, u in enumerate(tests) if j != i and vals[j] is not None
                and u["fabric"] == t["fabric"] and u.get("kind") == t.get("kind")]
        hosts = {t["client"], t["server"]}
        peers = [j for j in same if not ({tests[j]["client"], tests[j]["server"]} & hosts)] or same
        if not peers:
            out[i] = (None, 0)
            continue
        ref = median(vals[j] for j in peers)
        out[i] = (vals[i] / ref if ref > 0 else None, len(peers))
    return out


def suspects(tests: Sequence[Dict[str, Any]], ratios: Dict[int, Tuple[Optional[float], int]],
             threshold: float) -> Dict[Tuple[str, str, str], float]:
    """Endpoints (host, nic, fabric) whose links are low in most of their tests: {endpoint: median ratio}."""
    per: Dict[Tuple[str, str, str], List[float]] = {}
    for i, (ratio, _) in ratios.items():
        if ratio is None:
            continue
        for side in ("client", "server"):
            per.setdefault(endpoint(tests[i], side), []).append(ratio)
    return {ep: median(r) for ep, r in per.items() if len(r) >= 2 and median(r) < threshold}


def slow_nics(tests: Sequence[Dict[str, Any]], ratios: Dict[int, Tuple[Optional[float], int]], threshold: float
              ) -> Tuple[Dict[Tuple[str, str, str], float], Dict[Any, Dict[Tuple[str, str, str], float]]]:
    """(suspects over all tests, {kind: suspects among the tests of that kind}). Per kind (dgx-dgx, dgx-storage):
    a NIC slow towards its DGX peers fails all those pairs, while its storage pairs are judged on their own
    (their peers are other storage pairs)."""
    by_kind = {kind: suspects(tests, {i: r for i, r in ratios.items() if tests[i].get("kind") == kind}, threshold)
               for kind in {t.get("kind") for t in tests}}
    return suspects(tests, ratios, threshold), by_kind


def _cause_for(t: Dict[str, Any], bad: Dict[Tuple[str, str, str], float], what: str) -> str:
    named = [ep for ep in (endpoint(t, "client"), endpoint(t, "server")) if ep in bad]
    if named:
        eps = "; ".join("%s %s (its links run at %s of their peers)" % (ep[0], ep[1], _pct(bad[ep])) for ep in named)
        return ("%s: %s is slow in all its pairs: check its cable, the switch port speed and errors, the MTU, "
                "and any rate limit (tc) on that NIC" % (what, eps))
    return ("%s: only this pair is slow (%s): check the path between them - switch ports, inter-switch links, "
            "routing (a wrong subnet sends traffic over the ISL, 004 'Tips')" % (what, link_text(t)))


def _attempts_text(t: Dict[str, Any], still_low: bool) -> str:
    """' (low in 2 of 2 runs: 0.41, 0.38 Gb/s)' for a test that ran again (module_utils/perf/iperf_confirm.py)."""
    runs = [a.get("gbps") for a in t.get("attempts") or []]
    if len(runs) < 2:
        return ""
    shown = ", ".join("-" if g is None else "%.2f" % g for g in runs)
    if still_low:
        return " (low in %d of %d runs: %s Gb/s)" % (len(runs), len(runs), shown)
    return " (re-run to confirm: %s Gb/s)" % shown


def _subject(t: Dict[str, Any]) -> Subject:
    return Subject(node=t["client"], nic=t["client_nic"], peer=t["server"], peer_nic=t["server_nic"],
                   fabric=t["fabric"])


def iperf_checks(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any]) -> List[CheckResult]:
    """Checks for iperf tests (LINK_PERF: subject the client and its NIC, the server and its NIC, the fabric). A
    test: the plan's fields (perf_plan.iperf_plan) + status, reason, result (+ unreachable). ``iperf`` (vs the
    port rate) is absolute: the registry applies the simulated policy to it."""
    frac, frac_src = expectation(exp, "network", "tcp_fraction_of_port_rate", 0.9)
    rel, rel_src = relative_fraction(exp)
    ratios = relative_ratios(tests)
    bad, bad_kind = slow_nics(tests, ratios, rel)
    checks = []
    for i, t in enumerate(tests):
        host = _pair_name(t)
        subject = _subject(t)
        base = {"hosts": [t["client"], t["server"]], "fabric": t["fabric"],
                "kind": t.get("kind"), "round": t.get("round"), "test": t.get("id"),
                "client": t["client"], "client_nic": t["client_nic"], "server": t["server"],
                "server_nic": t["server_nic"], "reverse": bool(t.get("reverse"))}
        if t.get("attempts"):  # ran again to confirm (module_utils/perf/iperf_confirm.py): every run is shown
            base.update(attempts=t["attempts"], confirm=t.get("confirm"))
        gbps = test_gbps(t)
        res = t.get("result") or {}
        extra = dict(base, retransmits=res.get("retransmits"), host_cpu_percent=res.get("host_cpu_percent"),
                     remote_cpu_percent=res.get("remote_cpu_percent"))
        if gbps is None:
            reason = t.get("reason") or (res.get("error") if isinstance(res, dict) else None) or "no result"
            for name in ("iperf", "iperf_relative"):
                checks.append(CheckResult(name, host, "error", unit="Gb/s", reason="%s: %s" % (link_text(t), reason),
                                          details=dict(base), subject=subject, category=LINK_PERF,
                                          unreachable=bool(t.get("unreachable"))))
            continue
        measured = round(gbps, 3)
        # absolute: >= fraction x the slower end's port rate
        link = t.get("link_gbps")
        source = "%s; port rates from the model (nics[].speed)" % frac_src
        if not link:
            a = CheckResult("iperf", host, "skipped", measured=measured, unit="Gb/s", source=source, absolute=True,
                            reason="no port speed in the model (nics[].speed)", details=dict(extra),
                            subject=subject, category=LINK_PERF)
        else:
            expected = round(frac * link, 3)
            cause = None if gbps >= expected else _cause_for(t, bad, "%s at %.1f Gb/s = %s of the %s Gb/s port rate"
                                                             % (link_text(t), gbps, _pct(gbps / link), link))
            a = CheckResult("iperf", host, pass_fail(gbps >= expected), expected=expected, measured=measured,
                            unit="Gb/s", source=source, cause=cause, absolute=True, details=dict(extra),
                            subject=subject, category=LINK_PERF)
        checks.append(a)
        # relative: >= rel x median of the links sharing no host
        ratio, n_peers = ratios.get(i, (None, 0))
        details = dict(extra, peers=n_peers)
        if ratio is None:
            r = CheckResult("iperf_relative", host, "skipped", measured=measured, unit="Gb/s", source=rel_src,
                            reason="no other link on %s to compare with" % t["fabric"], details=details,
                            subject=subject, category=LINK_PERF)
        else:
            ref = gbps / ratio
            # a NIC slow in most of its pairs fails all of them: with few peers (4 nodes: one link shares
            # no host with a pair) a pair whose only peer was slowed too would otherwise pass
            through_bad = any(ep in bad_kind[t.get("kind")] for ep in (endpoint(t, "client"), endpoint(t, "server")))
            ok = ratio >= rel and not through_bad
            details["ratio"] = round(ratio, 3)
            cause = None
            if not ok:
                cause = _cause_for(t, bad, "%s at %s of the median of %d comparable links (%.1f Gb/s)%s"
                                   % (link_text(t), _pct(ratio), n_peers, ref, _attempts_text(t, True)))
            elif t.get("confirm") == "suspect":
                details["note"] = "low in its first run, normal when its round ran again%s" % _attempts_text(t, False)
            r = CheckResult("iperf_relative", host, pass_fail(ok), expected=round(rel * ref, 3), measured=measured,
                            unit="Gb/s", source=rel_src, cause=cause, details=details, subject=subject,
                            category=LINK_PERF)
        checks.append(r)
    return checks


def evaluate_iperf(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any]) -> List[Dict[str, Any]]:
    """:func:`iperf_checks` as results.json entries (before the simulated policy)."""
    return [c.to_dict() for c in iperf_checks(tests, exp)]


def evaluate(recorded: Mapping[str, Any], expectations: Dict[str, Any],
             context: Mapping[str, Any]) -> List[CheckResult]:
    """The iperf stage: ``recorded`` = {run: the procedure, tests: [...]} (playbooks/validate_perf.yml)."""
    return iperf_checks(list(recorded.get("tests") or []), expectations)


# ------------------------------------------------------------------------------------------ report section

def _color(ratio: Optional[float]) -> str:
    """Red (<= 0.5) to green (>= 1.0) for a ratio to the expectation."""
    if ratio is None:
        return "#e0e0e0"
    r = max(0.0, min(1.0, (ratio - 0.5) / 0.5))
    return "hsl(%d,65%%,%d%%)" % (int(120 * r), 55 + int(15 * r))


def _line(c: Mapping[str, Any]) -> str:
    """A cell's tooltip: the check's cause or reason, or what it measured."""
    if c.get("cause") or c.get("reason"):
        return str(c.get("cause") or c.get("reason"))
    text = "measured %s Gb/s" % fmt_number(c.get("measured"))
    if c.get("expected") is not None:
        text += " (expected >= %s)" % fmt_number(c.get("expected"))
    return text


def heatmaps(doc: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """[(fabric, svg)] - pair-throughput matrix per fabric from the iperf checks of ``doc`` (results.json)."""
    by_fabric: Dict[str, Dict[Tuple[str, str], Dict[str, Any]]] = {}
    for c in doc.get("checks") or []:
        if c.get("check") not in ("iperf", "iperf_relative") or not c.get("fabric"):
            continue
        cell = by_fabric.setdefault(c["fabric"], {}).setdefault((c["client"], c["server"]), {})
        cell[c["check"]] = c
    out = []
    for fabric in sorted(by_fabric):
        cells = by_fabric[fabric]
        hosts = sorted({h for pair in cells for h in pair})
        size, pad = 64, 120
        w = pad + size * len(hosts) + 20
        h = pad + size * len(hosts) + 20
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label=%s>'
                 % (w, h, quoteattr("iperf3 pair throughput on %s (Gb/s)" % fabric)),
                 '<text x="4" y="16" font-size="13" font-weight="bold">%s (Gb/s, client row -&gt; server column)</text>'
                 % escape(fabric)]
        for i, host in enumerate(hosts):
            parts.append('<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>'
                         % (pad - 6, pad + i * size + size // 2 + 4, escape(host)))
            parts.append('<text x="%d" y="%d" font-size="11" transform="rotate(-40 %d %d)">%s</text>'
                         % (pad + i * size + 8, pad - 8, pad + i * size + 8, pad - 8, escape(host)))
        for (a, b), cell in cells.items():
            absolute, relative = cell.get("iperf") or {}, cell.get("iperf_relative") or {}
            measured = absolute.get("measured", relative.get("measured"))
            ratio = None
            if absolute.get("expected"):
                ratio = measured / (absolute["expected"] / 0.9) if measured is not None else None
            elif relative.get("ratio") is not None:
                ratio = relative["ratio"]
            status = "fail" if "fail" in (absolute.get("status"), relative.get("status")) else \
                ("error" if "error" in (absolute.get("status"), relative.get("status")) else "pass")
            x, y = pad + hosts.index(b) * size, pad + hosts.index(a) * size
            fill = "#b39ddb" if status == "error" else _color(ratio)
            stroke = ' stroke="#000" stroke-width="2"' if status == "fail" else ' stroke="#fff"'
            label = "err" if measured is None else fmt_number(measured)
            tip = "%s -> %s: %s" % (a, b, _line(absolute or relative))
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"%s><title>%s</title></rect>'
                         % (x, y, size, size, fill, stroke, escape(tip)))
            parts.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>'
                         % (x + size // 2, y + size // 2 + 4, escape(label)))
        parts.append("</svg>")
        out.append((fabric, "".join(parts)))
    return out


def html(doc: Mapping[str, Any]) -> List[str]:
    """report.html's iperf3 section: the pair-throughput heatmap of every fabric."""
    maps = heatmaps(doc)
    if not maps:
        return []
    out = ["<h2>Network: iperf3 pair throughput per fabric</h2>",
           "<p>Each cell is one test (client row, server column); colour: measured vs expected "
           "(red &le; 50%%, green &ge; 100%%%s); a black border marks a failed check.</p>"
           % ("; simulated pod: vs the median of comparable links" if doc.get("simulated") else ""),
           '<div class="plots">']
    for fabric, svg in maps:
        out.append("<figure>%s<figcaption>%s</figcaption></figure>" % (svg, escape(fabric)))
    out.append("</div>")
    return out
