# -*- coding: utf-8 -*-
"""Root-cause findings (issue 17): one finding per fault, with the failed checks it explains. Pure.

One fault fails many checks: a DGX NIC at MTU 1500 fails its own network check and every other node's
pings towards it; a frozen storage node fails every DGX's mounts through it; a slow NIC fails each pair
it is in. :func:`build_findings` groups the failed and errored checks of a run under the fault that
explains them, in this order (each check goes to the first rule that claims it):

1. **a node that does not answer** (its checks are ``error`` because it was unreachable): explains every
   check on it and every pair, ping or mount towards it;
2. **a host-state fault** on a node: a NIC's MTU, link, address, QoS/PFC, a missing NIC, or the switch
   port that NIC is cabled to (MTU, PFC, down, LLDP) -> one finding per node and NIC, explaining the
   checks that involve that NIC (pings to its address, iperf pairs with it, mounts through it); a fault of
   the node without a NIC (a GPU, the hostname) explains the node's own checks;
3. **a remote node that does not answer** while its clients have no fault of their own: most DGX fail
   their mounts or pings to the addresses of one node (a frozen storage node) -> "sim-isilon2 does not
   answer (addresses ...)", explaining those checks and the storage measurements;
4. **a slow endpoint**: a node low in several performance tests of any kind (iperf DGX<->DGX and
   DGX<->storage, fio, NCCL pairs, training) whose partners are fine elsewhere -> named as the culprit;
5. everything else: one finding per check.

A finding: ``{id, host, subject, cause, status, root, explains, summary}`` (docs/results.md). ``explains``
lists every check of the finding, the root included: every failed or errored check is in exactly one
finding. Order: most checks explained first, then errors before fails, then by host.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import (JOB_PERF, JOB_STATE,
    LINK_PERF, POD_PERF, PORT_STATE, Facts, Index, analyse, device_fault, involved, pod_index, subject, why)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import PERF_CATEGORIES, REACH

__all__ = ["build_findings", "pod_index", "finding_line", "with_findings"]
SCHEMA_VERSION = 5  # results.json with findings, subjects and categories (docs/results.md)
PROBLEM = ("fail", "error")


class _Draft:
    def __init__(self, host: str, subject: str, cause: str, root: Optional[int], rank: int) -> None:
        self.host, self.subject, self.cause, self.root, self.rank = host, subject, cause, root, rank
        self.members: List[int] = [] if root is None else [root]
        self.node = host  # the node the explained pings went to


def build_findings(results: Sequence[Mapping[str, Any]], pod_index: Optional[Mapping[str, Any]] = None
                   ) -> List[Dict[str, Any]]:
    """The findings of a run from its check results (results.json ``checks``) and the pod index."""
    idx = Index(pod_index)
    bad = [i for i, c in enumerate(results) if c.get("status") in PROBLEM]
    facts = {i: analyse(results[i], idx) for i in bad}
    # a job a stage did not start because checks it depends on had failed (details.blocked_by): it goes where
    # those checks go, after the rules below have placed them (issue 46), not to a rule of its own
    blocked = [i for i in bad if results[i].get("blocked_by")]
    bad = [i for i in bad if i not in blocked]
    claimed: Dict[int, _Draft] = {}
    drafts: List[_Draft] = []

    def claim(d: _Draft, members: Sequence[int]) -> None:
        for i in members:
            if i not in claimed:
                claimed[i] = d
                if i not in d.members:
                    d.members.append(i)
        if d not in drafts:
            drafts.append(d)

    has_local = {i for i in bad if facts[i].local}
    down = _down_nodes(results, bad, facts)
    # 1. nodes that do not answer
    for node in sorted(down, key=lambda n: -len(down[n])):
        root = down[node][0]
        d = _Draft(node, node, _down_cause(node, results, down[node]), root, 0)
        claim(d, [i for i in bad if i not in claimed and (i in down[node] or (
            i not in has_local and node in facts[i].nodes))])
    # 2. host-state faults, grouped by node and NIC
    groups: Dict[Tuple[str, Optional[str]], List[Tuple[int, str, Optional[str]]]] = {}
    for i in bad:
        if i in claimed:
            continue
        for node, nic, cause, port in facts[i].local:
            groups.setdefault((node, nic), []).append((i, cause, port))
    gpu = {k for k, g in groups.items() if any(device_fault(results[i]) for i, _, _ in g)}
    order = sorted(groups, key=lambda k: (-len(_state_candidates(k, bad, facts, claimed, has_local, results,
                                                                 k in gpu)), k[0], k[1] or ""))
    for node, nic in order:
        own = [g for g in groups[(node, nic)] if g[0] not in claimed]
        if not own:
            continue
        port = next((p for _, _, p in own if p), None) or (idx.switch_port(node, nic) if nic else None)
        where = " ".join(x for x in (node, nic) if x)
        host, subject = node, where + (" (%s)" % port if port else "")
        if port and results[own[0][0]].get("category") == PORT_STATE:  # the fault is on the switch
            host, subject = port.split(" ")[0], "%s (%s)" % (port, where)
        causes = _unique(c[len(port) + 2:] if host != node and c.startswith(port + ": ") else c for _, c, _ in own)
        d = _Draft(host, subject, "; ".join(causes), own[0][0], 1)
        d.node = node
        claim(d, [g[0] for g in own] + _state_candidates((node, nic), bad, facts, claimed, has_local, results,
                                                         (node, nic) in gpu))
    # 3. a remote node most clients cannot reach
    for node, members, addrs, clients, causes in _unanswering(bad, facts, claimed, has_local, idx, results):
        who = node if node not in addrs else "the node at"
        where = "address%s %s" % ("es" if len(addrs) > 1 else "", ", ".join(addrs))
        if causes:
            text = "%s (%s): %s - %d DGX (%s) see it and none of them has a fault of its own" % (
                who, where, "; ".join(causes), len(clients), ", ".join(clients))
        else:
            text = "%s does not answer (%s): %d DGX (%s) fail through it and none of them has a fault of its own" % (
                who, where, len(clients), ", ".join(clients))
        d = _Draft(node, node, text, None, 2)
        claim(d, members)
    # 4. a slow endpoint
    for node, members in _slow_endpoints(results, bad, facts, claimed, idx):
        nics = sorted({e[1] for i in members for e in facts[i].endpoints if e[0] == node and e[1]})
        subject = "%s %s" % (node, nics[0]) if len(nics) == 1 else node
        kinds = _unique(_kind(results[i]) for i in members)
        alone = [i for i in members if results[i].get("category") == JOB_PERF
                 and subject_of(results[i], "step") == "single" and subject_of(results[i], "node") == node]
        if alone:  # slow on its own too: not its links (issue 46)
            cause = ("%s is low in %d performance test(s) (%s), its run on its own included (%s): the node itself is "
                     "slow, not its links - check its GPUs (clocks, throttling, NVLink: the gpu stage, nvidia-smi -q, "
                     "dcgmi diag), its CPU load and its GPU/NIC affinity" % (
                         subject, len(members), ", ".join(kinds), ", ".join(_unique(
                             str(results[i].get("check")) for i in alone))))
        else:
            cause = ("%s is low in %d performance test(s) (%s) while its partners pass elsewhere: check its cable, "
                     "the switch port speed and error counters, its MTU and any rate limit on it"
                     % (subject, len(members), ", ".join(kinds)))
        d = _Draft(node, subject, cause, None, 3)
        claim(d, members)
    # 5. a measurement the pod as a whole misses (most of its entries fail, no one node stands out)
    for name, members, decided in _pod_wide(results, bad, claimed):
        first = why(results[members[0]])
        d = _Draft("pod", "pod %s" % name, "%d of %d %s checks fail and no node or link stands out: the pod as a "
                   "whole is below the expectation (first: %s)" % (len(members), decided, name, first), None, 4)
        claim(d, members)
    # the blocked jobs: under the finding of the first check that blocked them
    where = {(str(results[i].get("check")), str(results[i].get("host"))): d for i, d in claimed.items()}
    for i in blocked:
        d = next((where[(str(b.get("check")), str(b.get("host")))] for b in results[i]["blocked_by"]
                  if isinstance(b, Mapping) and (str(b.get("check")), str(b.get("host"))) in where), None)
        if d is not None:
            claim(d, [i])
    bad = sorted(bad + blocked)
    # 6. the rest: one each (checks of one host failing for the very same reason together)
    # - one multi-node job failing on each of its nodes with the same error: one finding for the job, not one per
    #   node repeating it (issue 46)
    same: Dict[Tuple[str, str], _Draft] = {}
    for i in bad:
        if i not in claimed:
            c = results[i]
            job = c.get("category") == JOB_STATE and len(subject_of(c, "nodes") or ()) > 1
            key = ("job %s" % c.get("check") if job else str(c.get("host")), why(c))
            if key in same:
                claim(same[key], [i])
                continue
            host = "pod" if job else key[0]
            label = ("%s (the job on %s)" % (c.get("check"), ", ".join(subject_of(c, "nodes") or ())) if job
                     else "%s %s" % (c.get("host"), c.get("check")))
            same[key] = _Draft(host, label, key[1], i, 5)
            claim(same[key], [i])
    return _finish(drafts, results)


def subject_of(c: Mapping[str, Any], key: str) -> Any:
    """One field of a check's subject (None when it has none)."""
    return subject(c).get(key)


def _unique(items: Any) -> List[str]:
    out: List[str] = []
    for x in items:
        if x and x not in out:
            out.append(x)
    return out


def _down_nodes(results: Sequence[Mapping[str, Any]], bad: List[int], facts: Dict[int, Facts]
                ) -> Dict[str, List[int]]:
    """{node: its own errored checks} for nodes whose checks could not run because the node did not answer."""
    out: Dict[str, List[int]] = {}
    for i in bad:
        c = results[i]
        if c.get("status") == "error" and facts[i].unanswered and facts[i].nodes == {str(c.get("host"))}:
            out.setdefault(str(c["host"]), []).append(i)
    # a node that took part in a passing measurement did answer (its checks failed before they recorded)
    for c in results:
        if out and c.get("status") == "pass" and c.get("category") in PERF_CATEGORIES:
            for n in involved(c):
                out.pop(n, None)
    return out


def _down_cause(node: str, results: Sequence[Mapping[str, Any]], own: List[int]) -> str:
    answered = [c for c in results if subject(c).get("node") == node and c.get("status") in ("pass", "fail")]
    text = "%s does not answer: %s" % (node, results[own[0]].get("reason"))
    if answered:
        text += " (%d of its checks ran before it stopped answering)" % len(answered)
    return text


def _state_candidates(key: Tuple[str, Optional[str]], bad: List[int], facts: Dict[int, Facts],
                      claimed: Mapping[int, Any], has_local: Set[int], results: Sequence[Mapping[str, Any]],
                      gpu: bool = False) -> List[int]:
    """Checks a fault of ``node`` (``nic``) explains: with a NIC, those involving that NIC (pings to its
    address, pairs and mounts through it) or the node as a whole; without one, the node's own checks, and
    for a GPU fault also the NCCL and training checks the node takes part in."""
    node, nic = key
    out = []
    for i in bad:
        if i in claimed or i in has_local:
            continue
        ends = facts[i].endpoints
        if nic is not None and ((node, nic) in ends or (node, None) in ends):
            out.append(i)
        elif nic is None and (facts[i].nodes == {node} or (
                gpu and node in facts[i].nodes and results[i].get("category") in (JOB_PERF, JOB_STATE))):
            out.append(i)
    return out


def _unanswering(bad: List[int], facts: Dict[int, Facts], claimed: Mapping[int, Any], has_local: Set[int],
                 idx: Index, results: Sequence[Mapping[str, Any]]
                 ) -> List[Tuple[str, List[int], List[str], List[str], Optional[List[str]]]]:
    towards: Dict[str, Dict[str, Any]] = {}
    for i in bad:
        if i in claimed or i in has_local:
            continue
        for (node, _nic, addr), why_not in zip(facts[i].targets, facts[i].target_causes, strict=True):
            t = towards.setdefault(node, {"checks": [], "addrs": [], "clients": [], "causes": []})
            t["causes"].append(why_not)
            t["checks"].append(i) if i not in t["checks"] else None
            t["addrs"].append(addr) if addr not in t["addrs"] else None
            client = str(results[i].get("host"))
            t["clients"].append(client) if client not in t["clients"] else None
    out = []
    dgx = len(idx.dgx)
    for node in sorted(towards, key=lambda n: (-len(towards[n]["clients"]), n)):
        t = towards[node]
        if len(t["clients"]) < (1 if dgx == 1 else 2) or 2 * len(t["clients"]) < dgx:
            continue
        members = [i for i in t["checks"] if i not in claimed]
        members += [i for i in bad if i not in claimed and i not in has_local and i not in members and (
            node in facts[i].nodes or (node in idx.storage and subject(results[i]).get("storage")))]
        # the words of the problems towards the node that give a cause of their own (a path that drops full-size
        # frames while small ones pass: the node does answer, not at full MTU - the I/O timeouts of the NFS
        # connections open over that path are the same fault); none: it does not answer
        causes = _unique(c for c in t["causes"] if c) or None
        out.append((node, members, sorted(t["addrs"]), sorted(t["clients"]), causes))
    return out


def _pod_wide(results: Sequence[Mapping[str, Any]], bad: List[int], claimed: Mapping[int, Any]
              ) -> List[Tuple[str, List[int], int]]:
    out = []
    names = _unique(str(results[i].get("check")) for i in bad if i not in claimed)
    for name in names:
        if not any(results[i].get("category") in PERF_CATEGORIES for i in bad if results[i].get("check") == name):
            continue
        members = [i for i in bad if i not in claimed and results[i].get("check") == name
                   and results[i].get("status") == "fail"]
        decided = sum(1 for c in results if c.get("check") == name and c.get("status") in ("pass", "fail"))
        if len(members) >= 3 and 2 * len(members) >= decided:
            out.append((name, members, decided))
    return out


def _kind(c: Mapping[str, Any]) -> str:
    """What kind of test a check is, for a slow endpoint's cause: its stage (and a link's kind, dgx-dgx or
    dgx-storage), or its name when no stage decided it."""
    what = str(c.get("stage") or c.get("check"))
    if c.get("category") == LINK_PERF and c.get("kind"):
        return "%s %s" % (what, c["kind"])
    return what


def _slow_endpoints(results: Sequence[Mapping[str, Any]], bad: List[int], facts: Dict[int, Facts],
                    claimed: Mapping[int, Any], idx: Index) -> List[Tuple[str, List[int]]]:
    """Greedy: the node in the most failed performance checks (of at most two nodes each) of the kinds the
    rest of the pod passes (fewer than half of that check's entries without the node fail); at least two.
    Its checks are explained, then the next node is looked for."""
    decided = {i: facts[i] if i in facts else analyse(c, idx) for i, c in enumerate(results)
               if c.get("status") in ("pass", "fail") and c.get("category") in PERF_CATEGORIES}
    out = []
    taken: Set[int] = set()
    while True:
        perf = [i for i in bad if i not in claimed and i not in taken and facts[i].perf
                and results[i].get("status") == "fail"]
        small = [i for i in perf if 1 <= len(facts[i].nodes) <= 2 and results[i].get("category") != POD_PERF]
        mine: Dict[str, List[int]] = {}
        for i in small:
            for n in facts[i].nodes:
                if _rest_fine(str(results[i].get("check")), n, decided, results, taken):
                    mine.setdefault(n, []).append(i)
        best = next((n for n in sorted(mine, key=lambda n: (-len(mine[n]), n)) if len(mine[n]) >= 2), None)
        if best is None:
            return out
        names = {results[i].get("check") for i in mine[best]}
        members = [i for i in perf if best in facts[i].nodes and (i in mine[best] or (
            results[i].get("check") in names and i not in small))]
        members = _one_nic(best, members, facts)
        taken.update(members)
        out.append((best, members))


def _one_nic(node: str, members: List[int], facts: Dict[int, Facts]) -> List[int]:
    """A slow NIC, not a slow node: when two or more of the node's low tests go through one NIC and no other
    NIC of it has more than one, the finding is that NIC and its tests; a lone low test on another NIC is
    left to be judged on its own (seen on the simulator: a shaped NIC's three pairs plus one storage pair at
    54% of its peers on a busy machine made the finding "the node", hiding the NIC)."""
    per: Dict[str, List[int]] = {}
    for i in members:
        for nic in sorted({e[1] for e in facts[i].endpoints if e[0] == node and e[1]}):
            per.setdefault(nic, []).append(i)
    if len(per) < 2:
        return members
    ranked = sorted(per, key=lambda n: (-len(per[n]), n))
    top, rest = ranked[0], ranked[1:]
    if len(per[top]) >= 2 and all(len(per[n]) <= 1 for n in rest):
        return [i for i in members if i in per[top]]
    return members


def _rest_fine(name: str, node: str, decided: Mapping[int, Facts], results: Sequence[Mapping[str, Any]],
               taken: Set[int]) -> bool:
    """Some, and fewer than half, of the ``name`` checks (of one or two nodes) that do not involve ``node`` fail."""
    rest = [i for i, f in decided.items() if results[i].get("check") == name and node not in f.nodes
            and i not in taken and 1 <= len(f.nodes) <= 2]
    return bool(rest) and 2 * sum(1 for i in rest if results[i].get("status") == "fail") < len(rest)


def _label(results: Sequence[Mapping[str, Any]], members: List[int], root: Optional[int], host: str) -> str:
    """'3 nodes' failed pings to sim-dgx2 and 1 nfs_mounts check' for the checks beyond the root."""
    rest = [results[i] for i in members if i != root]
    if not rest:
        return ""
    by: Dict[str, List[Mapping[str, Any]]] = {}
    for c in rest:
        by.setdefault(str(c.get("check")), []).append(c)
    parts = []
    for name, cs in by.items():
        n = len(cs)
        if all(c.get("status") == "fail" and _pings(c, host) for c in cs):
            parts.append("%d node%s failed pings to %s" % (n, "s'" if n > 1 else "'s", host))
        elif all(subject(c).get("peer") and c.get("category") in PERF_CATEGORIES for c in cs):
            parts.append("%d %s pair check%s" % (n, name, "s" if n > 1 else ""))
        else:
            parts.append("%d %s check%s" % (n, name, "s" if n > 1 else ""))
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _pings(c: Mapping[str, Any], node: str) -> bool:
    """The check is the network stage's and lists a failed ping towards ``node`` (a REACH problem): the summary
    says 'failed pings' for it."""
    return c.get("stage") == "network" and any(
        a.get("category") == REACH and node in (a.get("peer"), a.get("address"))
        for a in c.get("problem_subjects") or [] if isinstance(a, Mapping))


def _finish(drafts: List[_Draft], results: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    out = []
    for d in drafts:
        if not d.members:
            continue
        statuses = [results[i].get("status") for i in d.members]
        if d.root is not None:
            status = results[d.root]["status"]
        else:
            status = "error" if "error" in statuses else "fail"
        label = _label(results, d.members, d.root, d.node)
        explains = [{"check": results[i].get("check"), "host": results[i].get("host"),
                     "status": results[i].get("status")} for i in d.members]
        root = None if d.root is None else {"check": results[d.root].get("check"), "host": results[d.root].get("host")}
        cause = d.cause
        if cause.startswith(d.subject + ": "):
            cause = cause[len(d.subject) + 2:]
        summary = "%s: %s" % (d.subject, cause) if not cause.startswith(d.subject) else cause
        if label:
            summary += " \u2014 explains %s" % label
        out.append({"host": d.host, "subject": d.subject, "cause": cause, "status": status, "root": root,
                    "explains": explains, "summary": summary})
    out.sort(key=lambda f: (-len(f["explains"]), 0 if f["status"] == "error" else 1, str(f["host"]),
                            f["subject"]))
    for n, f in enumerate(out, 1):
        f["id"] = "F%d" % n
    return [dict([("id", f["id"])] + [(k, v) for k, v in f.items() if k != "id"]) for f in out]


def finding_line(f: Mapping[str, Any]) -> str:
    """'F1 [fail] summary (N checks)' for the closing message and the report."""
    return "%s [%s] %s (%d check%s)" % (f.get("id"), f.get("status"), f.get("summary"), len(f.get("explains") or []),
                                       "" if len(f.get("explains") or []) == 1 else "s")


def with_findings(doc: Mapping[str, Any], pod_index: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The results document (pod_eval.build_results) with its ``findings`` before the checks (schema 4)."""
    findings = build_findings(doc.get("checks") or [], pod_index)
    out: Dict[str, Any] = {}
    for key, value in doc.items():
        if key == "checks":
            out["findings"] = findings
        out[key] = value
    out.setdefault("findings", findings)
    out["schema_version"] = SCHEMA_VERSION
    return out
