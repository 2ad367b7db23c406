# -*- coding: utf-8 -*-
"""Parse fio ``--output-format=json`` output into a compact result dict. Pure functions, no I/O.

Handles fio 2.0 - 2.20 (``clat``/``slat``/``lat`` in microseconds, ``bw`` in KiB/s, ``io_bytes`` in KiB),
fio 2.21 - 2.x (``io_bytes`` in bytes next to a new ``io_kbytes``, latencies still in microseconds),
fio 2.99 - 3.1 (``clat_ns``) and fio 3.2+ (``bw_bytes`` in bytes/s), JSON with text around it (``fio:
pid=...`` warnings, ``--output-format=json,normal``) and ``--status-interval`` output (one JSON report per
interval: the last one is the final report; reports of different runs concatenated are refused).
fio ``--client`` output (``client_stats``, each job with its server's ``host``/``port``, the ``All clients``
summary checked, not counted) is read too; a server whose stats are missing is refused naming why.
Tested against fio-2.2.10, fio-2.21 (written from its stat.c),
fio-3.33 (Debian 12, with and without --status-interval) and fio-3.42 outputs (tests/unit/fixtures/perf/).

Contract: fio's own job errors give ``status: "error"``; output that is not a complete fio JSON report
(empty, cut off, no jobs, a job without its read/write numbers) raises ``ValueError`` - never a result built
from part of it or from an interim report.

Result (``parse_fio``)::

    status   "ok" | "error"      (error: no usable output, or any job reported a non-zero error)
    error    text (None when ok)
    version  "fio-3.33"
    jobs     [{name, error, read: DIR, write: DIR}]
    aggregate {read: DIR, write: DIR}  bandwidths, IOPS and bytes summed over jobs; latency percentiles the
             worst (largest) over the jobs that did I/O in that direction, mean weighted by I/O count
    errors   ["job j1: error 22 (Invalid argument)"]

DIR = {bw_bytes (bytes/s), iops, io_bytes, runtime_ms, total_ios, clat_mean_ns,
       clat_percentiles_ns {"p50": ns, "p90": ..., "p99": ..., "p99.9": ...}}
"""
from __future__ import annotations

import errno
import math
import os
import re
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_parse import load_json_documents

DIRECTIONS = ("read", "write")


def _num(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    if not math.isfinite(number):
        raise ValueError("fio output: a value is NaN or Infinity (%r)" % (value,))
    return number


def _obj(value: Any, where: str) -> Dict[str, Any]:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise ValueError("fio output: %s is not an object" % where)
    return value


def percentile_key(key: str) -> Optional[str]:
    """"99.900000" -> "p99.9"; fio 2.x's filler keys ("0.00") -> None."""
    try:
        value = float(key)
    except ValueError:
        return None
    if value <= 0:
        return None
    return "p%s" % ("%f" % value).rstrip("0").rstrip(".")


_REQUIRED = ("iops", "runtime", "io_bytes", "total_ios")


def _direction(block: Dict[str, Any], where: str) -> Dict[str, Any]:
    if not isinstance(block, dict):
        raise ValueError("fio output: %s is not an object" % where)
    missing = [k for k in _REQUIRED if k not in block] + ([] if "bw" in block or "bw_bytes" in block else ["bw"])
    if missing:
        raise ValueError("fio output: %s has no %s (cut off, or not fio JSON?)" % (where, ", ".join(missing)))
    for k in _REQUIRED + ("bw", "bw_bytes"):
        if k in block and (isinstance(block[k], bool) or not isinstance(block[k], (int, float))):
            raise ValueError("fio output: %s %s is not a number (%r)" % (where, k, block[k]))
    if "bw_bytes" in block:
        bw = _num(block.get("bw_bytes"))
    else:
        bw = _num(block.get("bw")) * 1024.0  # fio reports bw in KiB/s
    # io_bytes is in KiB up to fio 2.20; from 2.21 it is in bytes and io_kbytes holds the KiB
    in_bytes = "io_kbytes" in block or "bw_bytes" in block or "clat_ns" in block
    io_bytes = _num(block.get("io_bytes")) * (1.0 if in_bytes else 1024.0)
    if "clat_ns" in block:
        clat, scale = _obj(block.get("clat_ns"), where + " clat_ns"), 1.0
    else:
        clat, scale = _obj(block.get("clat"), where + " clat"), 1000.0  # fio before 2.99: usec
    pct = {}
    for key, value in _obj(clat.get("percentile"), where + " percentile").items():
        name = percentile_key(key)
        if name:
            pct[name] = _num(value) * scale
    return {"bw_bytes": bw, "iops": _num(block.get("iops")), "io_bytes": io_bytes,
            "runtime_ms": _num(block.get("runtime")), "total_ios": int(_num(block.get("total_ios"))),
            "clat_mean_ns": _num(clat.get("mean")) * scale,
            "clat_percentiles_ns": dict(sorted(pct.items(), key=lambda kv: float(kv[0][1:])))}


def _zero() -> Dict[str, Any]:
    return {"bw_bytes": 0.0, "iops": 0.0, "io_bytes": 0.0, "runtime_ms": 0.0, "total_ios": 0,
            "clat_mean_ns": 0.0, "clat_percentiles_ns": {}}


def aggregate(jobs: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Sum bandwidth/IOPS/bytes over jobs; worst percentile; I/O-weighted mean latency."""
    out = {}
    for d in DIRECTIONS:
        agg = _zero()
        weighted = 0.0
        for job in jobs:
            x = job[d]
            agg["bw_bytes"] += x["bw_bytes"]
            agg["iops"] += x["iops"]
            agg["io_bytes"] += x["io_bytes"]
            agg["total_ios"] += x["total_ios"]
            agg["runtime_ms"] = max(agg["runtime_ms"], x["runtime_ms"])
            weighted += x["clat_mean_ns"] * x["total_ios"]
            if x["total_ios"]:
                for k, v in x["clat_percentiles_ns"].items():
                    agg["clat_percentiles_ns"][k] = max(agg["clat_percentiles_ns"].get(k, 0.0), v)
        agg["clat_mean_ns"] = weighted / agg["total_ios"] if agg["total_ios"] else 0.0
        agg["clat_percentiles_ns"] = dict(sorted(agg["clat_percentiles_ns"].items(),
                                                 key=lambda kv: float(kv[0][1:])))
        out[d] = agg
    return out


def _errtext(code: int) -> str:
    try:
        return os.strerror(code) if code in errno.errorcode else "error %d" % code
    except (ValueError, OverflowError):
        return "error %d" % code


def _job_key(doc: Dict[str, Any]) -> Any:
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        return None
    return (doc.get("fio version"), [j.get("jobname") if isinstance(j, dict) else None for j in jobs])


def _job_ios(doc: Dict[str, Any]) -> List[float]:
    return [sum(_num(j.get(d, {}).get("total_ios")) for d in DIRECTIONS if isinstance(j.get(d), dict))
            if isinstance(j, dict) else 0.0 for j in doc.get("jobs") or []]


def _one_run(reports: List[Dict[str, Any]]) -> None:
    """The reports of ``--status-interval`` are one run: same fio version and job names, and no job's I/O count
    goes down. Anything else is several runs concatenated: refused, not the last one picked."""
    for prev, cur in zip(reports, reports[1:]):  # noqa: B905
        if _job_key(prev) != _job_key(cur) or any(b < a for a, b in zip(_job_ios(prev), _job_ios(cur))):  # noqa: B905
            raise ValueError("fio output holds %d reports of different runs (several fio outputs concatenated?)"
                             % len(reports))


# what fio's client prints (stdout: log_info) about a server whose stats it will not get (client.c)
_CLIENT_LOST = re.compile(r"^(client: host=(?P<host>\S+) disconnected|fio: failed to connect to (?P<to>\S+)|"
                          r"client <(?P<who>[^>]*)>: exited with error \d+)\s*$")
SUMMARY = "All clients"


def _client_messages(text: Any) -> List[str]:
    if not isinstance(text, str):
        return []
    return [line.strip() for line in text.splitlines() if _CLIENT_LOST.match(line.strip())]


def _parse_job(j: Any, i: int, where: str = "") -> Dict[str, Any]:
    if not isinstance(j, dict):
        raise ValueError("fio output: %sjob %d is not an object" % (where, i))
    err = j.get("error", 0)
    if isinstance(err, bool) or not isinstance(err, (int, float)):
        raise ValueError("fio output: %sjob %d error is not a number (%r)" % (where, i, err))
    job = {"name": j.get("jobname"), "error": int(_num(err))}
    for d in DIRECTIONS:
        job[d] = _direction(j.get(d), "%sjob %s %s" % (where, job["name"] or i, d))
    return job


def _client_stats(doc: Dict[str, Any], said: List[str], hosts: Optional[List[str]]) -> Dict[str, Any]:
    """fio ``--client`` output (client.c: ``client_stats``, one entry per job and server - ``hostname`` and
    ``port`` as given to --client - then, once every server has sent its stats, an ``All clients`` summary
    tagged with the last server's name). Refused, saying why, when a server's stats are missing: fio said so
    (``client: host=X disconnected``, ``fio: failed to connect to X``), a server in ``hosts`` has no entry, or
    several entries came without the summary (fio prints it only when all have reported); and when the summary
    is not the last entry or does not count the entries before it (reports of several runs)."""
    entries = doc.get("client_stats")
    why = (" (fio said: %s)" % "; ".join(repr(m) for m in said)) if said else ""
    if not isinstance(entries, list) or not entries:
        raise ValueError("fio client/server output has no client_stats entries: no server sent its stats%s" % why)
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("hostname"), str):
            raise ValueError("fio client/server output: client_stats entry %d has no hostname (not fio --client "
                             "output?)" % i)
    summaries = [i for i, e in enumerate(entries) if e.get("jobname") == SUMMARY]
    if said:
        raise ValueError("fio client/server output is missing a server's stats%s: the %d entries are not the "
                         "whole run" % (why, len(entries) - len(summaries)))
    if len(summaries) > 1 or (summaries and summaries[0] != len(entries) - 1):
        raise ValueError("fio client/server output: the %r summary is not the last client_stats entry (entry %d "
                         "of %d): the entries are of several reports (interim --status-interval reports or several "
                         "runs), not one run" % (SUMMARY, summaries[0], len(entries)))
    parts = entries[:-1] if summaries else entries
    if not summaries and len(parts) > 1:
        raise ValueError("fio client/server output has %d client_stats entries and no %r summary: fio prints it "
                         "once every server has sent its stats, so a server's stats are missing (it disconnected "
                         "or failed; fio's messages name it)" % (len(parts), SUMMARY))
    where = [(e["hostname"], e.get("port")) for e in parts]
    jobs = []
    for i, e in enumerate(parts):
        job = _parse_job(e, i, "%s: " % e["hostname"])
        job.update(host=e["hostname"], port=e.get("port"))
        jobs.append(job)
    if summaries:
        total = _parse_job(entries[-1], len(entries) - 1, "%s summary: " % SUMMARY)
        for d in DIRECTIONS:
            counted = sum(j[d]["total_ios"] for j in jobs)
            if total[d]["total_ios"] != counted:
                raise ValueError("fio client/server output: the %r summary counts %d %s I/Os, its entries %d: "
                                 "they are not one run" % (SUMMARY, total[d]["total_ios"], d, counted))
    servers = sorted({"%s:%s" % (h, p) if p is not None else h for h, p in where})
    missing = [h for h in hosts or [] if not any(h in (eh, "%s:%s" % (eh, ep)) for eh, ep in where)]
    if missing:
        raise ValueError("fio client/server output has no stats from %s (stats from %s only): its server did not "
                         "connect or disconnected - fio says which on stderr" % (", ".join(missing),
                                                                                ", ".join(servers)))
    errors = ["%s job %s: error %d (%s)" % (j["host"], j["name"], j["error"], _errtext(j["error"]))
              for j in jobs if j["error"]]
    res = {"status": "ok", "error": None, "version": doc.get("fio version"), "jobs": jobs,
           "aggregate": aggregate(jobs), "errors": errors, "clients": servers}
    if errors:
        res.update(status="error", error="; ".join(errors))
    return res


def parse_fio(output: Any, hosts: Optional[List[str]] = None) -> Dict[str, Any]:
    """Parse fio JSON output (text or a loaded dict); the last report when there are several
    (``--status-interval``). Raises ValueError when it is not a complete fio report.

    fio ``--client`` output (``client_stats`` instead of ``jobs``) is read the same way, each job with its
    ``host`` and ``port`` and the result with ``clients`` (``host:port`` of every server that reported); the
    ``All clients`` summary is checked, never counted. ``hosts`` (optional): the servers the run was given
    (``host`` or ``host:port`` as passed to --client); one without stats is refused - fio exits 0 when it could
    not connect to a server, and says so only on stderr."""
    said: List[str] = []
    if isinstance(output, dict):
        doc = output
    else:
        docs = load_json_documents(output)
        said = _client_messages(output)
        clients = [d for d in docs if "client_stats" in d]
        if clients:
            if len(clients) > 1 or any("jobs" in d for d in docs):
                raise ValueError("fio output holds %d reports, %d of them fio --client ones (several fio outputs "
                                 "concatenated?)" % (len([d for d in docs if "jobs" in d]) + len(clients),
                                                     len(clients)))
            return _client_stats(clients[0], said, hosts)
        reports = [d for d in docs if "jobs" in d]
        if not reports:
            raise ValueError("fio output has no JSON report with 'jobs' or 'client_stats'")
        _one_run(reports)
        doc = reports[-1]
    if "client_stats" in doc and "jobs" not in doc:
        return _client_stats(doc, said, hosts)
    raw_jobs = doc.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise ValueError("fio output has no jobs")
    jobs = []
    errors = []
    for i, j in enumerate(raw_jobs):
        job = _parse_job(j, i)
        jobs.append(job)
        if job["error"]:
            errors.append("job %s: error %d (%s)" % (job["name"], job["error"], _errtext(job["error"])))
    res = {"status": "ok", "error": None, "version": doc.get("fio version"), "jobs": jobs,
           "aggregate": aggregate(jobs), "errors": errors}
    if errors:
        res.update(status="error", error="; ".join(errors))
    return res
