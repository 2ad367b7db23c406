# -*- coding: utf-8 -*-
"""Evaluation of the performance measurements against the RA profile's expectations, and the results document
(:func:`build_results`). Pure functions. iperf is evaluated here; fio and the storage sizing in storage/fio_eval.py
(re-exported here).

Every check is a :class:`checks.CheckResult` (``iperf_checks``, ``fio_checks``, ``sizing_checks``; the
``evaluate_*`` functions give their results.json entries): ``check``, ``host``, ``status``
(pass | fail | skipped | error), ``expected``, ``measured``, ``unit``, ``source`` and, when not pass,
``cause`` (what is likely wrong, naming host and NIC) or ``reason`` (why it could not run). Their entries keep
the key order they had before CheckResult existed (``layout``; docs/results.md).

Two kinds of checks (docs/validation.md):

- **absolute** (``iperf``, ``fio_read``, ``fio_scaling``, ``storage_sizing``): the measurement against a
  figure derived from the model (port rates, link counts, storage nodes) and the RA profile. On a
  simulated pod these are ``skipped`` with the reason "simulated": the simulator's numbers say nothing
  about DGX hardware and are never compared with the RA's figures.
- **relative** (``iperf_relative``, ``fio_relative``): each link against the median of the links that
  share no host with it on the same fabric; each node against the median node of its fio step. They run
  on real and simulated pods alike, and find the one slow cable, port or node.
"""
from __future__ import annotations

from statistics import median
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.checks import (ERROR_LAYOUT, SIMULATED_REASON,
    CheckResult, apply_simulated_policy, apply_simulated_policy_to_dicts, expectation, layout_tail, link_text,
    pass_fail)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_eval import (MBPS_PER_GBPS, evaluate_fio,
    evaluate_sizing, fio_checks, node_capacity, sizing, sizing_checks)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages, resolve_missing
# deep_merge and plain_copy moved to pod/profile.py (issue 38), re-exported here
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge, plain_copy  # noqa: F401

__all__ = ["MBPS_PER_GBPS", "SIMULATED_REASON", "build_results", "deep_merge", "evaluate_fio", "evaluate_iperf",
           "evaluate_sizing", "fio_checks", "iperf_checks", "node_capacity", "sizing", "sizing_checks"]

# results.json key order of the iperf checks (CheckResult.layout): as written before CheckResult existed
_IPERF_HEAD = ("host", "hosts", "fabric", "kind", "round", "test", "client", "client_nic", "server", "server_nic",
               "reverse", "unit", "attempts", "confirm")
_IPERF_EXTRA = ("retransmits", "host_cpu_percent", "remote_cpu_percent")


def _relative(exp: Dict[str, Any], section: str) -> Tuple[float, str]:
    """The relative threshold (a pod that is noisier than real NICs - the simulator's veths on shared cores -
    overrides it in its inventory, pod.validation.expectations)."""
    return expectation(exp, section, "relative_fraction_of_peers", 0.8)


def counts(checks: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    out = {"pass": 0, "fail": 0, "skipped": 0, "error": 0}
    for c in checks:
        out[c["status"]] = out.get(c["status"], 0) + 1
    return out


def _pct(x: float) -> str:
    return "%d%%" % round(100 * x)


# ----------------------------------------------------------------------------------------------- iperf

def _endpoint(t: Dict[str, Any], side: str) -> Tuple[str, str, str]:
    return (t[side], t[side + "_nic"], t["fabric"])


def _gbps(t: Dict[str, Any]) -> Optional[float]:
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
    vals = {i: _gbps(t) for i, t in enumerate(tests)}
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
            per.setdefault(_endpoint(tests[i], side), []).append(ratio)
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
    named = [ep for ep in (_endpoint(t, "client"), _endpoint(t, "server")) if ep in bad]
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


def iperf_checks(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any]) -> List[CheckResult]:
    """Checks for iperf tests. A test: the plan's fields (perf_plan.iperf_plan) + status, reason, result.
    ``iperf`` (vs the port rate) is absolute: build_results applies the simulated policy to it."""
    frac, frac_src = expectation(exp, "network", "tcp_fraction_of_port_rate", 0.9)
    rel, rel_src = _relative(exp, "network")
    ratios = relative_ratios(tests)
    bad, bad_kind = slow_nics(tests, ratios, rel)
    checks = []
    for i, t in enumerate(tests):
        host = _pair_name(t)
        base = {"hosts": [t["client"], t["server"]], "fabric": t["fabric"],
                "kind": t.get("kind"), "round": t.get("round"), "test": t.get("id"),
                "client": t["client"], "client_nic": t["client_nic"], "server": t["server"],
                "server_nic": t["server_nic"], "reverse": bool(t.get("reverse"))}
        if t.get("attempts"):  # ran again to confirm (module_utils/perf/iperf_confirm.py): every run is shown
            base.update(attempts=t["attempts"], confirm=t.get("confirm"))
        gbps = _gbps(t)
        res = t.get("result") or {}
        extra = dict(base, retransmits=res.get("retransmits"), host_cpu_percent=res.get("host_cpu_percent"),
                     remote_cpu_percent=res.get("remote_cpu_percent"))
        if gbps is None:
            reason = t.get("reason") or (res.get("error") if isinstance(res, dict) else None) or "no result"
            for name in ("iperf", "iperf_relative"):
                checks.append(CheckResult(name, host, "error", unit="Gb/s", reason="%s: %s" % (link_text(t), reason),
                                          details=dict(base), layout=_IPERF_HEAD + ERROR_LAYOUT))
            continue
        measured = round(gbps, 3)
        # absolute: >= fraction x the slower end's port rate
        link = t.get("link_gbps")
        source = "%s; port rates from the model (nics[].speed)" % frac_src
        head = _IPERF_HEAD + _IPERF_EXTRA + ("check", "measured", "absolute", "source")
        if not link:
            a = CheckResult("iperf", host, "skipped", measured=measured, unit="Gb/s", source=source, absolute=True,
                            reason="no port speed in the model (nics[].speed)", details=dict(extra),
                            layout=head + layout_tail("skipped"))
        else:
            expected = round(frac * link, 3)
            cause = None if gbps >= expected else _cause_for(t, bad, "%s at %.1f Gb/s = %s of the %s Gb/s port rate"
                                                             % (link_text(t), gbps, _pct(gbps / link), link))
            a = CheckResult("iperf", host, pass_fail(gbps >= expected), expected=expected, measured=measured,
                            unit="Gb/s", source=source, cause=cause, absolute=True, details=dict(extra),
                            layout=head + layout_tail("pass"))
        checks.append(a)
        # relative: >= rel x median of the links sharing no host
        ratio, n_peers = ratios.get(i, (None, 0))
        head = _IPERF_HEAD + _IPERF_EXTRA + ("check", "measured", "source", "peers")
        details = dict(extra, peers=n_peers)
        if ratio is None:
            r = CheckResult("iperf_relative", host, "skipped", measured=measured, unit="Gb/s", source=rel_src,
                            reason="no other link on %s to compare with" % t["fabric"], details=details,
                            layout=head + layout_tail("skipped"))
        else:
            ref = gbps / ratio
            # a NIC slow in most of its pairs fails all of them: with few peers (4 nodes: one link shares
            # no host with a pair) a pair whose only peer was slowed too would otherwise pass
            through_bad = any(ep in bad_kind[t.get("kind")] for ep in (_endpoint(t, "client"), _endpoint(t, "server")))
            ok = ratio >= rel and not through_bad
            details["ratio"] = round(ratio, 3)
            cause = None
            if not ok:
                cause = _cause_for(t, bad, "%s at %s of the median of %d comparable links (%.1f Gb/s)%s"
                                   % (link_text(t), _pct(ratio), n_peers, ref, _attempts_text(t, True)))
            elif t.get("confirm") == "suspect":
                details["note"] = "low in its first run, normal when its round ran again%s" % _attempts_text(t, False)
            r = CheckResult("iperf_relative", host, pass_fail(ok), expected=round(rel * ref, 3), measured=measured,
                            unit="Gb/s", source=rel_src, cause=cause, details=details,
                            layout=head + layout_tail("pass", ("ratio",)))
        checks.append(r)
    return checks


def evaluate_iperf(tests: Sequence[Dict[str, Any]], exp: Dict[str, Any]) -> List[Dict[str, Any]]:
    """:func:`iperf_checks` as results.json entries (before the simulated policy)."""
    return [c.to_dict() for c in iperf_checks(tests, exp)]


# --------------------------------------------------------------------------------------- the document

def build_results(base: Dict[str, Any], perf: Optional[Dict[str, Any]], expectations: Dict[str, Any],
                  stages: Optional[Dict[str, Any]] = None, run_tags: Sequence[str] = ("all",),
                  skip_tags: Sequence[str] = ()) -> Dict[str, Any]:
    """Results document schema v3 (docs/results.md) from the v1-style document the report role collects
    (pod, ra_profile, simulated, finished, checks) and the performance measurements, if any were made.

    perf = {run: {profile, params}, iperf: {tests: [...]}, fio: {steps: [...]},
            nodes: {host: {storage_link_gbps, mounts, gpus}}, storage: {nodes, link_gbps},
            sizing: {gpus, dgx, storage_nodes, workload, dataset_tb, caches_tb}}

    stages = {stage name: its recorded measurements} for the stages of module_utils/report/stages.py (NCCL, ...),
    evaluated there; run_tags/skip_tags tell a stage left out by --tags (skipped) from one that failed
    before it recorded anything (error)."""
    simulated = bool(base.get("simulated"))
    doc: Dict[str, Any] = {}
    if simulated:  # first key, so the file's second line says it
        doc["notice"] = "SIMULATED POD: numbers from the pod-in-a-box, never compared with the RA's hardware figures"
    doc["schema_version"] = 3
    for key in ("pod", "ra_profile", "simulated", "finished"):
        doc[key] = base.get(key)
    checks = resolve_missing(base.get("checks") or [], run_tags, skip_tags)
    perf = perf or {}
    measurements: Dict[str, Any] = {}
    results: List[CheckResult] = []
    tests = (perf.get("iperf") or {}).get("tests") or []
    if tests:
        results += iperf_checks(tests, expectations)
        measurements["iperf"] = {"tests": tests}
    steps = (perf.get("fio") or {}).get("steps") or []
    if steps:
        results += fio_checks(steps, perf.get("nodes") or {}, perf.get("storage") or {}, expectations)
        measurements["fio"] = {"steps": steps}
    si = perf.get("sizing")
    if si:
        size = sizing(int(si.get("gpus") or 0), int(si.get("dgx") or 0), int(si.get("storage_nodes") or 0),
                      expectations, si.get("workload"), si.get("dataset_tb"), si.get("caches_tb"))
        if steps:
            sc = sizing_checks(size, steps)
            size["measured_mbps"] = sc[0].measured
            results += sc
        doc["sizing"] = size
    # the simulated policy once, after evaluation; the per-host checks collected by the report role are dicts
    checks = apply_simulated_policy_to_dicts(checks, simulated)
    checks += [r.to_dict() for r in apply_simulated_policy(results, simulated)]
    context = {"simulated": simulated, "pod": base.get("pod"), "sizing": doc.get("sizing"),
               "nodes": perf.get("nodes") or {}}
    stage_checks, stage_measurements = evaluate_stages(stages or {}, expectations, context, run_tags, skip_tags)
    checks += stage_checks
    measurements.update(stage_measurements)
    doc["summary"] = counts(checks)
    doc["checks"] = checks
    if perf.get("run"):
        doc["run"] = perf["run"]
    if measurements:
        doc["measurements"] = measurements
    if tests or steps or si or stage_measurements:
        doc["expectations"] = expectations
    return doc
