# -*- coding: utf-8 -*-
"""Evaluation of the checkpoint stage (playbooks/validate_checkpoint.yml, library/pod_checkpoint.py; issue 44 items
1 and 3). Pure functions.

Large-model training writes a checkpoint from every rank at once to the shared storage, and a restart reads it back;
datasets of many small files are bound by metadata operations. The stage measures both on every DGX at once. The
record (``pod_stages.checkpoint``): ``settings`` {shard_bytes, ranks_per_node, meta_files, checkpoint_bytes},
``hosts`` {DGX: {write, read, metadata: the module's answer (ranks [{rank, dir, bytes, seconds, ok, error,
mismatch}], timed_out) or None, error}}, ``mounts`` {DGX: {mount path: {ip, storage_host, storage_nic, fabric}}}.

Checks (docs/validation.md "Checkpoint writes and metadata"):

- ``ckpt_write`` / ``ckpt_read`` per DGX: its ranks' bytes over the slowest rank's time (MB/s, decimal), relative
  to the median of the other DGX (``expectations.checkpoint.relative_fraction_of_peers``, 0.8) - a slow node or its
  own path;
- ``ckpt_write_storage`` / ``ckpt_read_storage`` per storage node: the ranks that wrote (read) through a mount of
  that storage node, their bytes over their slowest time, relative to the median of the other storage nodes - the
  storage node that limits the checkpoint, named with its address and the mounts that reach it;
- ``ckpt_integrity`` per DGX: every block read back is the block written (a short or changed file named with the
  offset);
- ``ckpt_time`` (the pod): the time every DGX took to write the whole checkpoint, and the aggregate rate; against
  ``expectations.checkpoint.max_seconds`` when the pod sets one, else reported;
- ``meta_create``, ``meta_stat``, ``meta_read``, ``meta_remove`` per DGX: files per second of each mdtest-like
  step, relative to the median of the other DGX (``metadata_fraction_of_peers``, 0.5: small-file rates are
  noisier).

A failed or unfinished rank is a ``fail`` naming the rank, its mount and the error; a DGX without a reading is
``result.check.no_result``.
"""
from __future__ import annotations

import statistics
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_STATE, NODE_PERF, POD_PERF,
                                                                                  CheckResult, Subject, at_least,
                                                                                  compare, expectation, no_result)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import mount_of

# the stage's check names (some are built per phase or step below)
CHECKS = ("ckpt_write", "ckpt_read", "ckpt_write_storage", "ckpt_read_storage", "ckpt_integrity", "ckpt_time",
          "meta_create", "meta_stat", "meta_read", "meta_remove")
PHASES = ("write", "read")
META_STEPS = ("create", "stat", "read", "remove")
SRC_RELATIVE = "toolkit rule: x the median of the others (one slow node or path stands out)"


def _exp(exp: Mapping[str, Any], key: str, default: Any) -> Tuple[Any, str]:
    return expectation(dict(exp or {}), "checkpoint", key, default)


def _rate(ranks: List[Mapping[str, Any]]) -> Optional[float]:
    """MB/s (decimal) of ranks that ran at once: their bytes over the slowest one's time."""
    secs = [float(r["seconds"]) for r in ranks if r.get("seconds")]
    total = sum(int(r.get("bytes") or 0) for r in ranks)
    if not ranks or not secs or max(secs) <= 0:
        return None
    return round(total / 1e6 / max(secs), 2)


def _others_median(values: Mapping[str, Optional[float]], me: str) -> Optional[float]:
    vals = [v for k, v in values.items() if k != me and v is not None]
    return statistics.median(vals) if vals else None


def _rank_problems(ans: Mapping[str, Any], mounts: Mapping[str, Any]) -> List[str]:
    """Each rank of a DGX's answer that did not finish: its rank, mount, storage node and error."""
    out = []
    for r in ans.get("ranks") or []:
        if not r.get("ok"):
            mount, info = mount_of(mounts, str(r.get("dir") or ""))
            out.append("rank %s through %s%s: %s" % (r.get("rank"), mount or r.get("dir"),
                                                      " (%s)" % info.get("storage_host") if info else "",
                                                      r.get("error") or "no result"))
    return out


def _relative(check: str, subjects: Mapping[str, Optional[float]], frac: float, src: str, unit: str,
              about, why) -> List[CheckResult]:
    out = []
    for name, v in sorted(subjects.items()):
        med = _others_median(subjects, name)
        expected = round(med * frac, 2) if med is not None else None
        out.append(at_least(check, name, v, expected, unit, "%s x %s" % (frac, src), why(name, v, med),
                            median_of_others=med).but(**about(name)))
    return out


def _storage_about(addr: Mapping[str, set]):
    """What a storage node's check is about: the node and its addresses, the pod's storage."""
    def about(n: str) -> Dict[str, Any]:
        return {"subject": Subject(node=n, address=", ".join(sorted(addr.get(n) or [])) or None, storage=True),
                "category": NODE_PERF}
    return about


def _storage_why(addr: Mapping[str, set], where: Mapping[str, set], verb: str, frac: float):
    def why(n: str, v: Optional[float], med: Optional[float]) -> str:
        return ("storage node %s (%s) limits the checkpoint: the ranks that %s through it (%s) reached %.1f MB/s, "
                "below %s x the other storage nodes' median (%.1f MB/s)"
                % (n, ", ".join(sorted(addr.get(n) or [])) or "?", verb, ", ".join(sorted(where.get(n) or [])),
                   v or 0, frac, med or 0))
    return why


def evaluate(m: Dict[str, Any], exp: Dict[str, Any], ctx: Dict[str, Any]) -> List[CheckResult]:  # noqa: ARG001
    hosts: Mapping[str, Any] = m.get("hosts") or {}
    mounts: Mapping[str, Mapping[str, Any]] = m.get("mounts") or {}
    settings = m.get("settings") or {}
    frac, frac_src = _exp(exp, "relative_fraction_of_peers", 0.8)
    mfrac, mfrac_src = _exp(exp, "metadata_fraction_of_peers", 0.5)
    src = SRC_RELATIVE if frac_src == "toolkit default" else frac_src
    msrc = SRC_RELATIVE if mfrac_src == "toolkit default" else mfrac_src
    out: List[CheckResult] = []
    ok_hosts: Dict[str, Dict[str, Any]] = {}
    for host in sorted(hosts):
        h = hosts[host]
        if not h:
            out.append(no_result("ckpt_write", host, category=NODE_PERF))
            continue
        if h.get("error"):
            out.append(CheckResult("ckpt_write", host, "error", reason=str(h["error"]),
                                   subject=Subject(node=host, storage=True), category=NODE_PERF))
            continue
        ok_hosts[host] = h
    addr: Dict[str, set] = {}  # each storage node's addresses the DGX mount
    for host in ok_hosts:
        for info in (mounts.get(host) or {}).values():
            if isinstance(info, dict) and info.get("storage_host"):
                addr.setdefault(info["storage_host"], set()).add(str(info.get("ip")))
    for phase in PHASES:
        per_dgx: Dict[str, Optional[float]] = {}
        per_storage: Dict[str, List[Mapping[str, Any]]] = {}
        where: Dict[str, set] = {}
        for host, h in sorted(ok_hosts.items()):
            ans = h.get(phase) or {}
            bad = _rank_problems(ans, mounts.get(host) or {}) if ans else ["no %s result" % phase]
            if bad:
                out.append(CheckResult("ckpt_" + phase, host, "fail", expected="every rank done", measured=None,
                                       unit="MB/s", source="the checkpoint must be written and read back",
                                       cause="%s: checkpoint %s failed - %s" % (host, phase, "; ".join(bad)),
                                       subject=Subject(node=host, storage=True), category=NODE_PERF))
                continue
            per_dgx[host] = _rate(ans.get("ranks") or [])
            for r in ans.get("ranks") or []:
                mount, info = mount_of(mounts.get(host) or {}, str(r.get("dir") or ""))
                sh = info.get("storage_host") or mount or str(r.get("dir"))
                per_storage.setdefault(sh, []).append(r)
                where.setdefault(sh, set()).add("%s %s" % (host, mount or r.get("dir")))
        verb = "wrote" if phase == "write" else "read back"
        out += _relative(
            "ckpt_" + phase, per_dgx, float(frac), src, "MB/s",
            lambda n: {"subject": Subject(node=n, storage=True), "category": NODE_PERF},
            lambda n, v, med, verb=verb: "%s %s its checkpoint shards at %.1f MB/s, below %s x the other DGX' median "
            "(%.1f MB/s): the node or its path to the storage" % (n, verb, v or 0, frac, med or 0))
        rates = {sh: _rate(rs) for sh, rs in per_storage.items()}
        if len(rates) >= 2:
            out += _relative("ckpt_%s_storage" % phase, rates, float(frac), src, "MB/s",
                             _storage_about(addr), _storage_why(addr, where, verb, frac))
    # integrity of what was read back
    for host, h in sorted(ok_hosts.items()):
        ranks = (h.get("read") or {}).get("ranks") or []
        if not ranks or not all(r.get("ok") for r in ranks):
            continue
        wrong = [r for r in ranks if r.get("mismatch") is not None]
        out.append(CheckResult(
            "ckpt_integrity", host, "fail" if wrong else "pass", expected=0, measured=len(wrong),
            unit="shards not as written", source="every byte read back is the byte written",
            cause="; ".join("%s: read back %s of %s bytes, first difference at byte %s" % (
                r.get("path"), r.get("bytes"), r.get("expected_bytes"), r.get("mismatch")) for r in wrong) or None,
            details=compare("="), subject=Subject(node=host, path=(wrong[0].get("path") if wrong else None),
                                                  storage=True), category=JOB_STATE))
    # the whole checkpoint: how long every DGX took together
    writes = [r for h in ok_hosts.values() for r in ((h.get("write") or {}).get("ranks") or [])]
    if writes and all(r.get("ok") for r in writes) and len(ok_hosts) == len(hosts):
        secs = max(float(r.get("seconds") or 0) for r in writes)
        total = sum(int(r.get("bytes") or 0) for r in writes)
        limit, lsrc = _exp(exp, "max_seconds", None)
        about = {"subject": Subject(nodes=tuple(sorted(ok_hosts)), storage=True), "category": POD_PERF}
        detail = dict(compare("<="), bytes=total, mb_per_s=round(total / 1e6 / secs, 2) if secs > 0 else None,
                      checkpoint_bytes=settings.get("checkpoint_bytes"))
        if limit is None:
            out.append(CheckResult("ckpt_time", "pod", "pass", measured=round(secs, 2), unit="s",
                                   source="reported (a pod sets expectations.checkpoint.max_seconds)",
                                   details=dict(detail, note="%.1f GB from %d DGX in %.1f s (%.0f MB/s)" % (
                                       total / 1e9, len(ok_hosts), secs, detail["mb_per_s"] or 0)), **about))
        else:
            ok = secs <= float(limit)
            out.append(CheckResult("ckpt_time", "pod", "pass" if ok else "fail", expected=float(limit),
                                   measured=round(secs, 2), unit="s", source=lsrc, details=detail,
                                   cause=None if ok else "the checkpoint (%.1f GB from %d DGX) took %.1f s, more than "
                                   "%s s" % (total / 1e9, len(ok_hosts), secs, limit), **about))
    # small files: the metadata steps
    for step in META_STEPS:
        rates: Dict[str, Optional[float]] = {}
        for host, h in sorted(ok_hosts.items()):
            ans = h.get("metadata")
            if ans is None:
                continue
            bad = _rank_problems(ans, mounts.get(host) or {})
            if bad:
                if step == META_STEPS[0]:
                    out.append(CheckResult("meta_" + step, host, "fail", expected="every rank done", unit="files/s",
                                           source="the small-file test must finish",
                                           cause="%s: the small-file test failed - %s" % (host, "; ".join(bad)),
                                           subject=Subject(node=host, storage=True), category=NODE_PERF))
                continue
            ranks = ans.get("ranks") or []
            secs = max(float((r.get("steps") or {}).get(step) or 0) for r in ranks) if ranks else 0
            files = sum(int(r.get("files") or 0) for r in ranks)
            rates[host] = round(files / secs, 1) if secs > 0 else None
        out += _relative(
            "meta_" + step, rates, float(mfrac), msrc, "files/s",
            lambda n: {"subject": Subject(node=n, storage=True), "category": NODE_PERF},
            lambda n, v, med, step=step: "%s: %s of small files at %.0f files/s, below %s x the other DGX' median "
            "(%.0f files/s)" % (n, step, v or 0, mfrac, med or 0))
    return out


def markdown(doc: Dict[str, Any]) -> List[str]:
    m = (doc.get("measurements") or {}).get("checkpoint") or {}
    if not m:
        return []
    s = m.get("settings") or {}
    lines = ["", "### Checkpoint writes and metadata", "",
             "Every rank wrote %.1f MB (%d ranks per DGX, %.1f GB in all), fsync'd, then read it back after the page "
             "cache was dropped; %s small files per rank were created, stat'd, read and removed." % (
                 (s.get("shard_bytes") or 0) / 1e6, s.get("ranks_per_node") or 0,
                 (s.get("checkpoint_bytes") or 0) / 1e9, s.get("meta_files")), "",
             "| node | write MB/s | read MB/s | create/s | stat/s | read/s | remove/s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    by = {}
    for c in doc.get("checks") or []:
        if c.get("stage") == "checkpoint" and c.get("host") not in (None, "pod"):
            by.setdefault(c["host"], {})[c["check"]] = c.get("measured")
    for host, v in sorted(by.items()):
        if "ckpt_write" not in v and "ckpt_write_storage" in v:
            continue
        lines.append("| %s | %s |" % (host, " | ".join(
            "" if v.get(k) is None else str(v.get(k)) for k in ("ckpt_write", "ckpt_read", "meta_create",
                                                                 "meta_stat", "meta_read", "meta_remove"))))
    st = sorted((h, v) for h, v in by.items() if "ckpt_write_storage" in v)
    if st:
        lines += ["", "| storage node | write MB/s | read MB/s |", "|---|---:|---:|"]
        lines += ["| %s | %s | %s |" % (h, v.get("ckpt_write_storage"), v.get("ckpt_read_storage")) for h, v in st]
    return lines
