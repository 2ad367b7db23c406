# -*- coding: utf-8 -*-
"""Parsers for NCCL and nccl-tests output. Pure functions, stdlib only.

- ``parse_nccl_tests``: the text nccl-tests prints (all_reduce_perf, all_gather_perf, ...), every released
  layout, read from its own column header: before v2.13 ``size count type [redop] [root] time algbw busbw
  error`` (error = max delta, e.g. ``2e-07``), from v2.13 ``size count type redop root ... #wrong`` (a
  count), ``N/A`` with ``-c 0``; ``cputime`` for ``time`` with -C 1 (v2.13.4+), the per-iteration columns
  ``i_min i_max i_p99 i_cv%`` after each place with -I 1 (v2.19.2+), a trailing ``timestamp`` with -S 1; the
  footer (``# Out of bounds values : N OK|FAILED``, ``# Avg bus bandwidth : X``, newer ``# Collective test
  concluded: <prog>``, and the bare ncclGetLastError() line v2.13.4 - v2.17.2 print after it); NCCL
  INFO/WARN lines interleaved with the table (NCCL_DEBUG=INFO writes to the same stdout, sometimes in the
  middle of a row; NCCL 2.26+ WARN lines start with a timestamp) and other stderr lines are set aside; ANSI
  codes and Open MPI/MPICH rank tags are dropped. Two runs in one output (nccl-tests without MPI=1 under
  mpirun) are refused. A run that stops before the footer raises ValueError naming the ranks and hosts
  that reported the error (``NCCL WARN``, ``Test NCCL failure``, ``Test failure``, ``Test timeout``, Open
  MPI's ``exited on signal``).
- ``parse_nccl_tests_json``: the ``-J file.json`` output of nccl-tests >= v2.19 (same result shape).
- ``parse_nccl_transport``: what an ``NCCL_DEBUG=INFO`` log says about the transports NCCL chose, NCCL
  2.4 - 2.30 (``Channel ... via NET/IB/0/GDRDMA``, ``GDRDMA(PCI)``, PXN ``NET/IB/0(8)``, plugins
  ``NET/IBext_v8``, ``NET/Socket``, ``P2P/IPC``, ``SHM/direct``, ``NET/IB : Using [0]mlx5_0:1/RoCE``,
  ``Using network IB|Socket``, the QP line with its GID index - also 2.30's ``NET/IB: ncclIbConnect: NCCL
  Dev 0 IbDev 0 Port 1 qp_num .. mtu .. GID 3 (..)`` -, ``GPU Direct RDMA Enabled|Disabled for HCA``), and
  the simulator's nccl-tests stand-in, which says ``backend: cpu``.
Sources of every fixture: docs/hardware-facts.md.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import ParseError


# terminal colour/cursor codes (a captured tty, kubectl/srun wrappers), Open MPI's --tag-output prefix
# "[jobid,rank]<stdout>:" and MPICH's -prepend-rank "[rank] " (put before every chunk a rank writes, so also in
# the middle of a line: "...  sum      -1[0] host:pid:tid [0] NCCL INFO ...") are not part of what the tools printed
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_MPI_TAG = re.compile(r"^(?:\[\d+,\d+\]<(?:stdout|stderr)>:|\[\d+\] )")


def _lines(text: str) -> List[Tuple[int, str]]:
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    return [(i, _MPI_TAG.sub("", _ANSI.sub("", line)).rstrip()) for i, line in enumerate(text.splitlines(), 1)]


# NCCL's log prefix: "host:pid:tid [cudaDev] NCCL INFO|WARN ..." (older NCCL: no tid); WARN carries "file:line",
# from NCCL 2.26 a "[%F %T] " timestamp first (NCCL_DEBUG_TIMESTAMP_LEVELS, default WARN), and in newer NCCL
# "file:line (function)" (src/debug.cc)
_NCCL_ANY = re.compile(r"(?:\[\d+\] )?(?:\[\d{4}-\d\d-\d\d[^\]]*\]\s*)?"
                       r"(?P<host>[^\s:\[\]#]+):(?P<pid>\d+):(?:(?P<tid>\d+):?)?\s*\[(?P<cudadev>-?\d+)\]\s*"
                       r"(?:\S+:\d+\s+(?:\([^)\s]*\)\s+)?)?NCCL (?P<level>INFO|WARN|ABORT)\b")

# --------------------------------------------------------------------------- nccl-tests text

# a row fragment's last number glued to an NCCL line's host name (no space between them)
_GLUED = re.compile(r"^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|N/A)(?=[A-Za-z][^\s:]*:\d+:)")
_HDR_PARAMS = re.compile(
    r"^#\s*nThread\s+(?P<nthread>\d+)\s+nGpus\s+(?P<ngpus>\d+)\s+minBytes\s+(?P<minbytes>\d+)\s+maxBytes\s+"
    r"(?P<maxbytes>\d+)\s+step:\s*(?P<step>\d+)\((?P<stepkind>factor|bytes)\)\s+warmup iters:\s*(?P<warmup>\d+)"
    r"\s+iters:\s*(?P<iters>\d+)(?:\s+agg iters:\s*(?P<agg>\d+))?\s+validation:\s*(?P<validation>\d+)"
    r"(?:\s+graph:\s*(?P<graph>\d+))?")
# nccl-tests' "# Rank N ... on HOST device D [bus] name" and "HOST: Test NCCL|CUDA failure" lines
# (module_utils/containers/mpi_job.py reads them too, from a run of any program)
RANK_LINE = re.compile(r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+"
                        r"(?P<host>\S+)\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*)$")
_VERSION = re.compile(r"^#\s*nccl-tests version\s+(?P<v>\S+)(?:\s+nccl-headers=(?P<h>\d+))?"
                      r"(?:\s+nccl-library=(?P<lib>\d+))?")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s+(?P<ok>OK|FAILED)")
# %g of the average: glibc prints "nan"/"-nan" (no size was run: 0/0) and "inf"
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<bw>[-+]?(?:nan|inf)|[-+0-9.eE]+)\s*(?P<check>OK|FAILED)?\s*$")
_CONCLUDED = re.compile(r"^#\s*Collective test (?P<what>starting|concluded):\s*(?P<prog>\S+)")
# "'%s / %s'": ncclGetErrorString / ncclGetLastError, the latter may hold quotes ("Cuda failure 'out of memory'")
TESTS_FAIL = re.compile(r"^(?P<host>[^\s:]+):\s*Test (?P<kind>NCCL|CUDA) failure (?P<where>\S+)\s*'?(?P<msg>.*?)'?\s*$")
# TESTCHECK: " .. HOST pid N: Test failure file:line" (v2.10+), " .. HOST: Test failure file:line" before
_TESTS_FAIL2 = re.compile(r"^\s*\.\.\s*(?P<host>[^\s:]+)(?: pid (?P<pid>\d+))?: Test failure (?P<where>\S+)")
# Open MPI (stderr, when it is merged in): "mpirun noticed that process rank 3 with PID 0 on node H exited on
# signal 9 (Killed)."
_MPI_SIGNAL = re.compile(r"process rank (?P<rank>\d+) with PID \d+ on node (?P<host>[^\s,]+) exited on signal "
                         r"(?P<sig>\d+)(?: \((?P<name>[^)]*)\))?")
_TESTS_TIMEOUT = re.compile(r"^(?P<host>[^\s:]+):\s*Test timeout \((?P<s>\d+)s\)")
_STANDIN = re.compile(r"^#\s*nccl-tests stand-in \(backend: (?P<backend>\w+)")
_TIME_COLS = ("time", "cputime")
_ITER_COLS = ("i_min", "i_max", "i_p99", "i_cv%")
# a line that holds a result row after other text ("size count type"): set aside it would lose the row
_ROWISH = re.compile(r"(?:^|\s)\d+\s+\d+\s+[a-z][a-z0-9]*(?:\s|$)")
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


def _num(tool: str, s: str, n: int, line: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise ParseError(tool, "expected a number, got %r" % s, n, line) from None


def _split_nccl(lines: List[Tuple[int, str]]):
    """Split NCCL INFO/WARN text out of the nccl-tests table. Yields (n, table_text) and collects the NCCL
    lines; a row cut by an INFO line (printed by another thread between the row's two halves) is joined."""
    table: List[Tuple[int, str]] = []
    nccl: List[Tuple[int, str]] = []
    pending = ""
    pending_n = 0
    for n, line in lines:
        m = _NCCL_ANY.search(line)
        if m:
            start = m.start()
            glued = _GLUED.match(line[start:]) if start > 0 else None
            if glued:
                # "...  sum      -1host:pid:tid [0] NCCL INFO": the row's last number is glued to the host
                start += glued.end(1)
            before = line[:start]
            nccl.append((n, line[start:]))
            if before.strip():
                pending += before
                pending_n = pending_n or n
            continue
        if pending:
            table.append((pending_n, pending + line))
            pending, pending_n = "", 0
        else:
            table.append((n, line))
    if pending:
        table.append((pending_n, pending))
    return table, nccl


def _columns(tool: str, n: int, line: str) -> Dict[str, Any]:
    """The layout a column header announces: the leading columns (size count type [redop] [root]), then the
    out-of-place and the in-place group, each ``time|cputime algbw busbw error|#wrong`` (``cputime`` with -C 1,
    v2.13.4+) and, with -I 1 (v2.19.2+), ``i_min i_max i_p99 i_cv%``; a last ``timestamp`` column with -S 1
    (two words in the rows, "%Y-%m-%d %H:%M:%S"). A column it does not know is refused: it would shift the rest."""
    words = line.lstrip("#").split()
    times = [i for i, w in enumerate(words) if w in _TIME_COLS]
    if not times or "size" not in words:
        raise ParseError(tool, "expected the column header 'size count type ... time algbw busbw'", n, line)
    lead = words[:times[0]]
    tail = words[times[-1]:]
    stamp = 0
    if tail and tail[-1] == "timestamp":
        stamp, tail = 2, tail[:-1]
    groups = [words[times[0]:times[1]], tail] if len(times) == 2 else [words[times[0]:]]
    for g in groups:
        if g[1:3] != ["algbw", "busbw"] or len(g) < 4 or g[3] not in ("error", "#wrong"):
            raise ParseError(tool, "expected 'time algbw busbw error|#wrong' after %s" % " ".join(lead), n, line)
        unknown = [w for w in g[4:] if w not in _ITER_COLS]
        if unknown:
            raise ParseError(tool, "a column this parser does not know: %r" % unknown[0], n, line)
        if g[4:] and tuple(g[4:]) != _ITER_COLS:
            raise ParseError(tool, "expected the per-iteration columns %s" % " ".join(_ITER_COLS), n, line)
    if len(times) != 2 or groups[0] != groups[1]:
        raise ParseError(tool, "expected the same out-of-place and in-place columns", n, line)
    if lead[:3] != ["size", "count", "type"] or any(c not in ("redop", "root") for c in lead[3:]):
        raise ParseError(tool, "expected the columns to start 'size count type [redop] [root]'", n, line)
    return {"lead": lead, "group": groups[0], "errcol": groups[0][3], "time": groups[0][0], "stamp": stamp}


def _place(tool: str, vals: List[str], errcol: str, n: int, line: str) -> Dict[str, Any]:
    t, alg, bus, err = vals[:4]
    out = {"time_us": _num(tool, t, n, line), "algbw": _num(tool, alg, n, line), "busbw": _num(tool, bus, n, line)}
    if err == "N/A":
        out["wrong"] = None
        out["error"] = None
    elif errcol == "#wrong":
        w = _num(tool, err, n, line)
        if not 0 <= w < float("inf") or w != int(w):   # nan, inf, negative or a fraction: not a count
            raise ParseError(tool, "expected a count of wrong elements, got %r" % err, n, line)
        out["wrong"] = int(w)
        out["error"] = None
    else:   # before v2.13: the maximum delta against the expected values
        out["wrong"] = None
        out["error"] = _num(tool, err, n, line)
    if len(vals) > 4:   # -I 1: min, max, 99th percentile of the per-iteration times (us), their variation (%)
        i_min, i_max, i_p99, i_cv = (_num(tool, v, n, line) for v in vals[4:])
        out["per_iter"] = {"min_us": i_min, "max_us": i_max, "p99_us": i_p99, "cv_pct": i_cv}
    return out


def abort_reasons(text: str, rank_hosts: Optional[Dict[int, str]] = None) -> List[Dict[str, Any]]:
    """What a run that stopped says about why: [{"host", "ranks", "what"}] from NCCL WARN lines,
    nccl-tests' ``Test NCCL|CUDA failure`` / ``Test failure`` / ``Test timeout`` lines and Open MPI's
    ``process rank N ... on node H exited on signal S`` (stderr merged in), in order."""
    by_host: Dict[str, List[int]] = {}
    for r, h in sorted((rank_hosts or {}).items()):
        by_host.setdefault(h, []).append(r)
    out: List[Dict[str, Any]] = []
    for _n, line in _lines(text):
        m = _NCCL_ANY.search(line)
        what = None
        host = None
        if m and m["level"] in ("WARN", "ABORT"):
            host, what = m["host"], "NCCL %s %s" % (m["level"], line[m.end():].strip())
        else:
            for rx, fmt in ((TESTS_FAIL, "Test %(kind)s failure %(where)s %(msg)s"),
                            (_TESTS_FAIL2, "Test failure %(where)s"),
                            (_TESTS_TIMEOUT, "Test timeout (%(s)ss)")):
                t = rx.match(line.strip())
                if t:
                    host, what = t["host"], (fmt % t.groupdict()).strip()
                    break
        sig = _MPI_SIGNAL.search(line) if not what else None
        if sig:
            name = " (%s)" % sig["name"] if sig["name"] else ""
            out.append({"host": sig["host"], "ranks": [int(sig["rank"])], "what": "exited on signal %s%s"
                        % (sig["sig"], name)})
            continue
        if what:
            ranks = by_host.get(host) or by_host.get(host.split(".")[0]) or []
            out.append({"host": host, "ranks": ranks, "what": what})
    return out


def parse_nccl_tests(text: str, tool: str = "nccl-tests") -> Dict[str, Any]:
    """One nccl-tests run's stdout (NCCL INFO lines may be mixed in).

    Returns {"program", "version", "backend" ('cpu' for the simulator's stand-in, else None), "params"
    {nthread, ngpus, minbytes, maxbytes, step, step_kind, warmup_iters, iters, agg_iters, validation, graph},
    "ranks": [{rank, group, pid, host, device, bus, name}], "layout": "#wrong" | "error", "columns",
    "time_column": "time" | "cputime" (-C 1: time_us is the CPU time),
    "rows": [{size, count, type, redop, root, "out_of_place": {time_us, algbw, busbw, wrong, error[, per_iter
    {min_us, max_us, p99_us, cv_pct} with -I 1]}, "in_place": {...}[, "timestamp" with -S 1]}],
    "footer": {out_of_bounds, out_of_bounds_ok, avg_busbw, avg_check, concluded}}.
    Lines that are not the tool's (MPI banners, stderr, "NCCL version ...") are set aside, unless a result
    row hides in one. ValueError (ParseError) for anything it cannot read, for two runs in one output, and
    when the footer is missing: then the message names the ranks/hosts that reported an error (NCCL WARN,
    Test ... failure, Test timeout)."""
    lines = _lines(text)
    table, _nccl = _split_nccl(lines)
    params: Dict[str, Any] = {}
    ranks: List[Dict[str, Any]] = []
    rows: List[Dict[str, Any]] = []
    footer: Dict[str, Any] = {}
    lead: Optional[List[str]] = None
    layout: Dict[str, Any] = {}
    headless: List[Tuple[int, str]] = []
    errcol = ""
    two_runs = ("a second nccl-tests run in the same output (several processes each ran their own test: "
                "nccl-tests built without MPI=1 but started by mpirun/srun? or several runs captured together)")
    version = None
    program = None
    backend = None
    for n, line in table:
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = _HDR_PARAMS.match(s)
            if m:
                if params or lead is not None:
                    raise ParseError(tool, two_runs, n, line)
                g = m.groupdict()
                params = {"nthread": int(g["nthread"]), "ngpus": int(g["ngpus"]), "minbytes": int(g["minbytes"]),
                          "maxbytes": int(g["maxbytes"]), "step": int(g["step"]), "step_kind": g["stepkind"],
                          "warmup_iters": int(g["warmup"]), "iters": int(g["iters"]),
                          "agg_iters": int(g["agg"]) if g["agg"] else None, "validation": int(g["validation"]),
                          "graph": int(g["graph"]) if g["graph"] else None}
                continue
            m = RANK_LINE.match(s)
            if m:
                if lead is not None or any(r["rank"] == int(m["rank"]) for r in ranks):
                    raise ParseError(tool, two_runs, n, line)
                ranks.append({"rank": int(m["rank"]), "group": int(m["group"]) if m["group"] else None,
                              "pid": int(m["pid"]), "host": m["host"], "device": int(m["device"]),
                              "bus": m["bus"], "name": m["name"].strip()})
                continue
            words = s.lstrip("#").split()
            if words[:1] == ["size"]:
                if lead is not None:
                    raise ParseError(tool, two_runs, n, line)
                layout = _columns(tool, n, s)
                lead, errcol = layout["lead"], layout["errcol"]
                continue
            m = _VERSION.match(s)
            if m:
                version = m["v"]
                continue
            m = _STANDIN.match(s)
            if m:
                backend = m["backend"]
                continue
            m = _OOB.match(s)
            if m:
                footer["out_of_bounds"] = int(m["n"])
                footer["out_of_bounds_ok"] = m["ok"] == "OK"
                continue
            m = _AVG.match(s)
            if m:
                footer["avg_busbw"] = _num(tool, m["bw"], n, line)
                footer["avg_check"] = m["check"]
                if n == lines[-1][0] and not text.endswith(("\n", "\r")):
                    # nccl-tests prints "#" after it: without a newline the number may be cut ("2.88" of "2.8873")
                    raise ParseError(tool, "the last line has no newline (output cut off?)", n, line)
                continue
            if s.startswith("# Avg bus bandwidth") or s.startswith("# Out of bounds values"):
                raise ParseError(tool, "cannot read this footer line", n, line)
            m = _CONCLUDED.match(s)
            if m:
                program = m["prog"]
                if m["what"] == "concluded":
                    footer["concluded"] = True
                continue
            continue    # other comments (Using devices, Reducing maxBytes, Blocking Enabled ...)
        if lead is None:
            if re.match(r"^\d+\s+\d+\s+\S+", s):
                headless.append((n, line))   # a capture that starts below the header (or a cut log)
            continue    # text before the table (mpirun/nccl-tests warnings, "Writing JSON output to ...")
        words = s.split()
        if not re.match(r"^-?\d", s):
            # not a row: stderr merged in (Open MPI banners, "NCCL version ...", " .. host: Test failure"), or
            # what v2.13.4 - v2.17.2 print after the footer (ncclGetLastError()); a row inside it is refused
            if _ROWISH.search(s):
                raise ParseError(tool, "a result row with other text before it", n, line)
            continue
        if "out_of_bounds" in footer and "avg_busbw" in footer:
            raise ParseError(tool, "a result row after the footer", n, line)
        if not (words[0].isdigit() and words[1:2] and words[1].isdigit()):
            raise ParseError(tool, "expected a result row (%s ...)" % " ".join(lead), n, line)
        k = len(lead)
        g = len(layout["group"])
        want = k + 2 * g + layout["stamp"]
        if len(words) != want:
            if len(words) < want:
                raise ParseError(tool, "row cut short: %d fields, expected %d (did the run stop here?)"
                                 % (len(words), want), n, line)
            raise ParseError(tool, "%d fields, expected %d (text glued to the row?)" % (len(words), want), n, line)
        row: Dict[str, Any] = {"size": int(words[0]), "count": int(words[1]), "type": words[2],
                               "redop": None, "root": None}
        for i, col in enumerate(lead[3:], 3):
            if col == "redop":
                row["redop"] = words[i]
            elif col == "root":    # "%6i"
                if not re.match(r"^-?\d+$", words[i]):
                    raise ParseError(tool, "expected the root rank, got %r" % words[i], n, line)
                row["root"] = int(words[i])
        row["out_of_place"] = _place(tool, words[k:k + g], errcol, n, line)
        row["in_place"] = _place(tool, words[k + g:k + 2 * g], errcol, n, line)
        if layout["stamp"]:
            stamp = " ".join(words[k + 2 * g:])
            if not _STAMP.match(stamp):
                raise ParseError(tool, "expected a timestamp 'YYYY-mm-dd HH:MM:SS', got %r" % stamp, n, line)
            row["timestamp"] = stamp
        rows.append(row)
    if "out_of_bounds" not in footer or "avg_busbw" not in footer:
        rank_host = {r["rank"]: r["host"] for r in ranks}
        why = abort_reasons(text, rank_host)
        if why:
            detail = "; ".join("%s (rank%s %s): %s" % (w["host"], "s" if len(w["ranks"]) != 1 else "",
                                                       ",".join(str(r) for r in w["ranks"]) or "?", w["what"])
                               for w in why[:6])
        elif not params and not rows and not headless:
            raise ParseError(tool, "no nccl-tests output (no '# nThread' header, no rows, no footer)")
        else:
            detail = "no error line either (killed, or the output was cut)"
        raise ParseError(tool, "run stopped before the footer ('# Out of bounds values', '# Avg bus bandwidth')"
                         " after %d result row(s): %s" % (len(rows) + len(headless), detail))
    if headless:
        raise ParseError(tool, "a result row before the column header", headless[0][0], headless[0][1])
    if lead is None:
        raise ParseError(tool, "footer without a column header")
    footer.setdefault("concluded", False)
    return {"program": program, "version": version, "backend": backend, "params": params, "ranks": ranks,
            "layout": errcol, "columns": lead, "time_column": layout["time"], "rows": rows, "footer": footer}


def _json_bool(v: Any) -> bool:
    """nccl-tests' jsonBool writes the strings "true"/"false" (util.cu); accept real booleans too."""
    if isinstance(v, str):
        return v.strip().lower() == "true"
    return bool(v)


def parse_nccl_tests_json(text: str, tool: str = "nccl-tests JSON") -> Dict[str, Any]:
    """The ``-J`` JSON file of nccl-tests >= v2.19 -> the same shape as ``parse_nccl_tests``."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        if re.search(r"[:\[,]\s*-?inf\b", text):   # jsonDouble prints an infinite value with %lf: "inf"
            raise ParseError(tool, "not JSON: a bare 'inf' value (an infinite bandwidth or time)") from None
        raise ParseError(tool, "not JSON (%s); an unfinished file means the run stopped" % e) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ParseError(tool, "expected an object with a 'results' list")
    cfg = doc.get("config") or {}
    devices = cfg.get("devices") or [] if isinstance(cfg, dict) else None
    if not isinstance(devices, list) or not all(isinstance(d, dict) for d in devices):
        raise ParseError(tool, "expected 'config' to be an object with a 'devices' list of objects")
    ranks = [{"rank": d.get("rank"), "group": d.get("group"), "pid": d.get("pid"), "host": d.get("hostname"),
              "device": d.get("device"), "bus": d.get("device_hex"), "name": d.get("device_info")}
             for d in devices]
    rows = []
    time_col = None
    for i, r in enumerate(doc.get("results") or []):
        try:
            row = {"size": int(r["size"]), "count": int(r["count"]), "type": r["type"], "redop": r.get("redop"),
                   "root": int(str(r.get("root")).strip()) if str(r.get("root", "")).strip().lstrip("-").isdigit()
                   else r.get("root")}
            for key in ("out_of_place", "in_place"):
                p = r.get(key)
                if p is None:
                    row[key] = None
                    continue
                t = p.get("time", p.get("cpu_time"))   # -C 1 writes "cpu_time"
                time_col = time_col or ("cputime" if "cpu_time" in p and "time" not in p else "time")
                if p.get("nwrong") is not None and (float(p["nwrong"]) < 0 or float(p["nwrong"]) % 1):
                    raise ValueError("nwrong %r is not a count" % p["nwrong"])
                row[key] = {"time_us": float(t), "algbw": float(p["alg_bw"]), "busbw": float(p["bus_bw"]),
                            "wrong": None if p.get("nwrong") is None else int(float(p["nwrong"])), "error": None}
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise ParseError(tool, "result %d: missing or bad field (%s: %s)" % (i, type(e).__name__, e)) from None
        rows.append(row)
    oob = doc.get("out_of_bounds")
    avg = doc.get("average_bus_bandwidth")
    if oob is None or avg is None:
        # a run that fails still closes the file (jsonOutputFinalize): valid JSON without the footer
        raise ParseError(tool, "no 'out_of_bounds' / 'average_bus_bandwidth' (the run stopped before the end)")
    try:
        footer = {"out_of_bounds": int(oob["count"]), "out_of_bounds_ok": _json_bool(oob.get("okay")),
                  "avg_busbw": float(avg["bandwidth"]),
                  "avg_check": None if avg.get("okay") in (None, "unchecked")
                  else ("OK" if _json_bool(avg.get("okay")) else "FAILED"),
                  "concluded": True}
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise ParseError(tool, "bad 'out_of_bounds' / 'average_bus_bandwidth' (%s: %s)"
                         % (type(e).__name__, e)) from None
    params = {"nthread": cfg.get("nthreads"), "ngpus": cfg.get("ngpus"), "minbytes": cfg.get("minimum_bytes"),
              "maxbytes": cfg.get("maximum_bytes"),
              "step": cfg.get("step_factor", cfg.get("step_bytes")),
              "step_kind": "factor" if "step_factor" in cfg else "bytes", "warmup_iters": cfg.get("warmup_iters"),
              "iters": cfg.get("iterations"), "agg_iters": cfg.get("aggregated_iterations"),
              "validation": cfg.get("validation"), "graph": cfg.get("graph")}
    return {"program": None, "version": None, "backend": None, "params": params, "ranks": ranks,
            "layout": "json", "columns": ["size", "count", "type", "redop", "root"], "time_column": time_col or "time",
            "rows": rows, "footer": footer}


# --------------------------------------------------------------------------- NCCL INFO: transports

_NCCL_PREFIX = re.compile(r"(?:(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<cudadev>\d+)\]\s+)?NCCL INFO\s+")
_NCCL_CONN = re.compile(
    r"^(?:(?:Channel|Ring)\s+(?P<channel>\d+)(?:/\d+)?\s*:\s*)?(?P<src>\d+)(?:\[(?P<srcdev>[0-9a-fA-F]+)\])?\s*->\s*"
    r"(?P<dst>\d+)(?:\[(?P<dstdev>[0-9a-fA-F]+)\])?(?:\s*\[(?P<dir>send|receive)\])?\s+via\s+(?P<via>\S+)")
_NCCL_NET_USING = re.compile(r"^NET/(?P<net>IB|Socket)\s*:\s*Using\s+(?P<rest>.*)$")
_NCCL_IB_DEV = re.compile(r"\[(?P<idx>\d+)\](?P<dev>[^:\s\[\]]+):(?P<port>\d+)/(?P<link>\w+)")
_NCCL_SOCK_DEV = re.compile(r"\[(?P<idx>\d+)\](?P<if>[^:\s\[\]]+):(?P<addr>[^<\s]+)<\d+>")
_NCCL_OOB = re.compile(r"OOB\s+(?P<if>[^:\s]+):(?P<addr>[^<\s]+)<\d+>")
# NCCL <= 2.2x: "NET/IB: Dev 0 Port 1 qpn 123 mtu 5 ... GID 3 (..)"; 2.30: "NET/IB: ncclIbConnect: NCCL Dev 0
# IbDev 0 Port 1 qp_num 123 mtu 5 GID 3 (..)" (NCCL MergedDev with more than 2 devices); IB: "... LID 5 ..."
_NCCL_QP = re.compile(r"^NET/IB\s*:\s*(?:\w+:\s*)?(?:NCCL\s+(?:Merged)?)?Dev\s+(?P<dev>\d+)"
                      r"(?:\s+IbDev\s+(?P<ibdev>\d+))?.*?\bPort\s+(?P<port>\d+).*?\bmtu\s+(?P<mtu>\d+)"
                      r"(?:.*?\bGID\s+(?P<gid>\d+)|.*?\bLID\s+(?P<lid>\d+))")
_NCCL_GDR_HCA = re.compile(r"^NET/\S+\s*:\s*GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA (?P<idx>\d+)"
                           r"(?:\s+'(?P<dev>[^']*)'?)?")
_STANDIN_INFO = re.compile(r"backend:\s*(?P<backend>\w+)(?:\s+transport:\s*(?P<transport>.*))?$")


def _nccl_via(via: str) -> Tuple[str, Optional[int], List[str], Optional[int]]:
    """'NET/IB/3/GDRDMA' -> ('NET/IB', 3, ['GDRDMA'], None); 'NET/IB/0(8)/GDRDMA(PCI)' -> ('NET/IB', 0,
    ['GDRDMA(PCI)'], 8) (PXN through rank 8); 'P2P/IPC/read' -> ('P2P/IPC', None, ['read'], None)."""
    parts = [p for p in via.split("/") if p]
    if len(parts) < 2:
        return via, None, [], None
    transport = parts[0] + "/" + parts[1]
    rest = parts[2:]
    dev = proxy = None
    m = re.match(r"^(\d+)(?:\((\d+)\))?$", rest[0]) if parts[0] == "NET" and rest else None
    if m:
        dev = int(m[1])
        proxy = int(m[2]) if m[2] else None
        rest = rest[1:]
    return transport, dev, rest, proxy


def parse_nccl_transport(text: str) -> Dict[str, Any]:
    """What an ``NCCL_DEBUG=INFO`` log says about the transports NCCL chose.

    Returns {"connections": [{"host", "channel", "src_rank", "dst_rank", "direction", "via",
    "transport" ("NET/IB", "NET/Socket", "P2P/IPC", "SHM/direct", ...), "net_dev", "proxy_rank", "gdr",
    "gdr_mode" ('PCI' for GDRDMA(PCI), else None)}],
    "summary": {"NET/IB/GDRDMA": n, "NET/IB": n, "NET/Socket": n, "P2P/IPC": n, ...},
    "net_ib": [{"host", "devices": [{"index", "device", "port", "link_layer"}], "oob_if", "oob_address",
    "relaxed_ordering"}], "net_socket": [{"host", "interfaces": [{"index", "if", "address"}]}],
    "networks": ["IB"|"Socket"...], "ib_no_device": bool, "gid_index_env": int|None,
    "qps": [{"host", "net_dev", "ib_dev", "port", "mtu_code", "gid_index", "lid"}],
    "gdr_hca": [{"host", "index", "device", "enabled"}], "backend": 'cpu' (the simulator's stand-in) or None,
    "backend_transports": [...], "socket_fallback": bool, "gdr_everywhere": bool}.

    A line with 'NCCL INFO' and ' via ' that is not a connection line, or a log without any 'NCCL INFO'
    line, raises ParseError (was NCCL_DEBUG=INFO set?)."""
    tool = "NCCL log"
    conns: List[Dict[str, Any]] = []
    net_ib: List[Dict[str, Any]] = []
    net_sock: List[Dict[str, Any]] = []
    networks: List[str] = []
    qps: List[Dict[str, Any]] = []
    gdr_hca: List[Dict[str, Any]] = []
    gid_env = None
    no_ib = False
    seen_info = False
    backend = None
    backend_transports: List[str] = []
    for n, line in _lines(text):
        m = _NCCL_PREFIX.search(line)
        if not m:
            continue
        seen_info = True
        host = m["host"]
        msg = line[m.end():].strip()
        c = _NCCL_CONN.match(msg)
        if c:
            transport, dev, flags, proxy = _nccl_via(c["via"])
            gdr_flag = next((f for f in flags if f.startswith("GDRDMA")), None)
            mode = re.match(r"^GDRDMA\((\w+)\)$", gdr_flag) if gdr_flag else None
            conns.append({"host": host, "channel": int(c["channel"]) if c["channel"] else None,
                          "src_rank": int(c["src"]), "dst_rank": int(c["dst"]), "direction": c["dir"],
                          "via": c["via"], "transport": transport, "net_dev": dev, "proxy_rank": proxy,
                          "gdr": gdr_flag is not None, "gdr_mode": mode[1] if mode else None})
            continue
        if " via " in " " + msg and "->" in msg:
            raise ParseError(tool, "cannot read this connection line", n, line)
        u = _NCCL_NET_USING.match(msg)
        if u:
            rest = u["rest"]
            if u["net"] == "IB":
                devs = [{"index": int(d["idx"]), "device": d["dev"], "port": int(d["port"]),
                         "link_layer": d["link"]} for d in _NCCL_IB_DEV.finditer(rest)]
                if not devs:
                    raise ParseError(tool, "'NET/IB : Using' without any '[n]dev:port/LINK' entry", n, line)
                oob = _NCCL_OOB.search(rest)
                net_ib.append({"host": host, "devices": devs, "oob_if": oob["if"] if oob else None,
                               "oob_address": oob["addr"] if oob else None, "relaxed_ordering": "[RO]" in rest})
            else:
                ifs = [{"index": int(d["idx"]), "if": d["if"], "address": d["addr"]}
                       for d in _NCCL_SOCK_DEV.finditer(rest)]
                net_sock.append({"host": host, "interfaces": ifs})
            continue
        if re.match(r"^NET/IB\s*:\s*No device found", msg):
            no_ib = True
            continue
        g = re.match(r"^NCCL_IB_GID_INDEX set by environment to (\d+)", msg)
        if g:
            gid_env = int(g[1])
            continue
        w = re.match(r"^Using network (\S+)", msg)
        if w:
            if w[1] not in networks:
                networks.append(w[1])
            continue
        q = _NCCL_QP.match(msg)
        if q:
            qps.append({"host": host, "net_dev": int(q["dev"]),
                        "ib_dev": int(q["ibdev"]) if q["ibdev"] else None, "port": int(q["port"]),
                        "mtu_code": int(q["mtu"]), "gid_index": int(q["gid"]) if q["gid"] else None,
                        "lid": int(q["lid"]) if q["lid"] else None})
            continue
        h = _NCCL_GDR_HCA.match(msg)
        if h:
            gdr_hca.append({"host": host, "index": int(h["idx"]), "device": h["dev"],
                            "enabled": h["state"] == "Enabled"})
            continue
        b = _STANDIN_INFO.search(msg) if "stand-in" in msg else None
        if b:
            backend = b["backend"]
            if b["transport"] and b["transport"].strip() not in backend_transports:
                backend_transports.append(b["transport"].strip())
    if not seen_info:
        raise ParseError(tool, "no 'NCCL INFO' lines (run with NCCL_DEBUG=INFO)")
    summary: Dict[str, int] = {}
    for c in conns:
        key = c["transport"] + ("/GDRDMA" if c["gdr"] else "")
        summary[key] = summary.get(key, 0) + 1
    net = [c for c in conns if c["transport"].startswith("NET/")]
    return {"connections": conns, "summary": dict(sorted(summary.items())), "net_ib": net_ib,
            "net_socket": net_sock, "networks": networks, "ib_no_device": no_ib, "gid_index_env": gid_env,
            "qps": qps, "gdr_hca": gdr_hca, "backend": backend, "backend_transports": backend_transports,
            "socket_fallback": any(c["transport"] == "NET/Socket" for c in conns),
            "gdr_everywhere": bool(net) and all(c["gdr"] for c in net)}


def transport_facts(parsed: Dict[str, Any], max_connections: int = 64) -> Dict[str, Any]:
    """The short form the stage records: summary, networks, IB devices per host, GID indexes, GDR per HCA,
    fallback flags, backend; and at most ``max_connections`` inter-node connection lines (NET/*)."""
    ib_devs = sorted({d["device"] for e in parsed["net_ib"] for d in e["devices"]})
    hosts_ib = {}
    for e in parsed["net_ib"]:
        if e["host"]:
            hosts_ib[e["host"]] = sorted({d["device"] for d in e["devices"]})
    net = [c for c in parsed["connections"] if c["transport"].startswith("NET/")]
    return {"summary": parsed["summary"], "networks": parsed["networks"], "ib_devices": ib_devs,
            "ib_devices_by_host": hosts_ib, "ib_no_device": parsed["ib_no_device"],
            "gid_indexes": sorted({q["gid_index"] for q in parsed["qps"] if q["gid_index"] is not None}),
            "gid_index_env": parsed["gid_index_env"],
            "gdr_disabled_hcas": sorted({"%s:%s" % (h["host"], h["device"] or h["index"])
                                         for h in parsed["gdr_hca"] if not h["enabled"]}),
            "socket_fallback": parsed["socket_fallback"], "gdr_everywhere": parsed["gdr_everywhere"],
            "net_connections": len(net), "backend": parsed["backend"],
            "backend_transports": parsed["backend_transports"],
            "net_sample": [{k: c[k] for k in ("host", "src_rank", "dst_rank", "via")} for c in net[:max_connections]]}
