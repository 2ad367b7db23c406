# -*- coding: utf-8 -*-
"""Parser for NVIDIA nvbandwidth's output, text and ``--json`` (pure functions, stdlib only; issue 39 item 5).

nvbandwidth (github.com/NVIDIA/nvbandwidth) measures copies between the host and each GPU and between GPU pairs
and prints one matrix per measurement. How it prints, from its source (v0.2 - v0.8):

- a header: ``nvbandwidth Version: v0.8``, ``Built from Git version: ...``, ``CUDA Runtime Version: 12060``,
  ``CUDA Driver Version: ...``, ``Driver Version: 560.35.05`` (output.cpp ``addVersionInfo``,
  ``addCudaAndDriverInfo``), then ``Device 0: NVIDIA A100-SXM4-40GB (00000000:99:00)`` per GPU (``printGPUs``;
  no bus id before v0.5; v0.8 prints the host name on a line of its own before them);
- per test case ``Running <name>.`` (``addTestcase``), then one matrix per measurement
  (inline_common.h ``operator<<(PeerValueMatrix)``): a description line ``memcpy CE CPU(row) -> GPU(column)
  bandwidth (GB/s)`` (testcases_ce.cpp / testcases_sm.cpp; ``memory latency SM ... (ns)`` for the latency tests),
  a header of column indexes, one row per row index with ``%10.2f`` values or ``N/A`` (a GPU and itself), a blank
  line and ``SUM <key> <sum>`` (``&&&& PERF <key> <sum><unit>`` with --perfFormatter). The bidirectional
  device-to-device tests print three matrices (keys ``<name>_read1``/``_read2``/``_total`` or ``_write...``);
- a test that cannot run on this system: ``Waiving <name>.`` (v0.2-v0.4) or ``Waived: `` (v0.5+, the name is
  not printed); a test that failed: ``Error: <message>`` (``setTestcaseStatusAndAddIfNeeded``), an unknown test
  ``ERROR: Testcase <id> not found!``;
- a fatal error ends the run (error_handling.h): ``[CUDA_ERROR_...] ... in expression ...``, ``NVML_ERROR:
  [...] in expression ...``, ``ASSERT in expression ...`` (a copy whose data did not verify prints ``Invalid value
  when checking the pattern`` before it) - refused naming the test it stopped in;
- v0.6 and later end every run with ``NOTE: The reported results may not reflect the full capabilities of the
  platform.`` and ``Performance can vary with software drivers, hardware clocks, and system topology.``
  (``printInfo``, printed first before v0.6): their absence from a v0.6+ output means the output was cut.

``--json`` (v0.5+, json_output.cpp): ``{"nvbandwidth": {"version", "git_version", "CUDA Runtime Version",
"Driver Version", "GPU Device list", "testcases": [{"name", "status": Passed|Waived|Error|Not Found|Running,
"bandwidth_description", "bandwidth_matrix": [[ "12.3964" | "N/A", ...]], "sum", "error"}], "error",
"warning"}}``. The three matrices of a bidirectional device-to-device test are appended to one
``bandwidth_matrix`` (3 x n rows; the description and sum are the last one's): they are split back here.

Both give :func:`parse_nvbandwidth`'s one shape. Lines the tool prints as free text (NOTEs, warnings, an unknown
line) are kept in ``messages``; anything that does not read as the format (a row of the wrong width, a value
that is not a number, a SUM that is not the matrix's sum, a cut-off output) raises
:class:`common.parse_util.ParseError` naming the line. Fixtures: tests/unit/fixtures/gpu/nvbandwidth__*.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError, complete_lines

__all__ = ["parse_nvbandwidth", "matrix_direction"]

TOOL = "nvbandwidth"

# "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "memcpy SM GPU(row) <-> GPU(column) Read1 bandwidth
# (GB/s)", "memcpy local GPU(column) bandwidth (GB/s)", "memory latency SM CPU(row) <-> GPU(column) (ns)",
# "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s) " (json keeps a trailing space).
_DESC = re.compile(r"^(?P<what>memcpy|memory latency|multicast|\w+(?: \w+)?)\s+(?P<engine>CE|SM|local|\w+)?\s*"
                   r"(?:(?P<rows>CPU|GPU)\(row\)\s*(?P<dir><->|->|<-)\s*)?(?P<cols>CPU|GPU)\(column\)\s*"
                   r"(?:(?P<variant>(?!bandwidth\b)\w+)\s+)?(?:bandwidth\s*)?\((?P<unit>[^)]+)\)\s*$")
_SUM = re.compile(r"^(?:SUM|&&&& PERF)\s+(?P<key>\S+)\s+(?P<sum>[-+0-9.eE]+|nan|inf)\s*(?P<unit>\S*)\s*$")
_DEVICE = re.compile(r"^Device (?P<index>\d+): (?P<name>.+?)(?: \((?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:"
                     r"[0-9a-fA-F]{2}(?:\.[0-9a-fA-F])?)\))?$")
_HEADER_KEYS = {"nvbandwidth Version": "version", "Built from Git version": "git_version",
                "CUDA Runtime Version": "cuda_runtime", "CUDA Driver Version": "cuda_driver",
                "Driver Version": "driver"}
_FATAL = re.compile(r"^(?:\[\w+\] .* in expression |NVML_ERROR: \[.*\] in expression |ASSERT in expression )")
_END_NOTE = "NOTE: The reported results may not reflect the full capabilities of the platform."
_END_NOTE_2 = "Performance can vary with software drivers, hardware clocks, and system topology."
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def matrix_direction(matrix: Dict[str, Any]) -> Optional[str]:
    """What a matrix measures, from its description: ``h2d`` (CPU(row) -> GPU(column)), ``d2h`` (CPU(row) <-
    GPU(column)), ``h2d_bidir``/``d2h_bidir`` is not told apart by the description (both print ``<->``: the test
    name says it), ``d2d`` (GPU(row) -> or <- GPU(column), data from the row GPU to the column GPU for ``->``),
    ``d2d_bidir`` (GPU <-> GPU), ``local`` (one GPU's own memory) or None (a latency in ns, another kind)."""
    if matrix.get("unit") != "GB/s":
        return None
    rows, cols, arrow = matrix.get("rows"), matrix.get("columns"), matrix.get("direction")
    if rows == "CPU" and cols == "GPU":
        return {"->": "h2d", "<-": "d2h", "<->": "host_bidir"}.get(arrow)
    if rows == "GPU" and cols == "GPU":
        return {"->": "d2d", "<-": "d2d", "<->": "d2d_bidir"}.get(arrow)
    if rows is None and cols == "GPU":
        return "local"
    return None


# --------------------------------------------------------------------------- shared pieces

def _description(desc: str, line_no: Optional[int] = None) -> Dict[str, Any]:
    m = _DESC.match(desc.strip())
    if not m:
        raise ParseError(TOOL, "expected a matrix description like 'memcpy CE CPU(row) -> GPU(column) bandwidth "
                         "(GB/s)'", line_no, desc)
    return {"description": desc.strip(), "engine": m.group("engine"), "rows": m.group("rows"),
            "columns": m.group("cols"), "direction": m.group("dir"), "variant": m.group("variant"),
            "unit": m.group("unit").strip()}


def _value(text: str, line_no: Optional[int], line: Optional[str]) -> Optional[float]:
    """A matrix cell: a number, or None for ``N/A`` (no measurement: a GPU and itself, a pair without access)."""
    if text.upper() == "N/A":
        return None
    if not _NUMBER.match(text):
        raise ParseError(TOOL, "expected a number or N/A in the matrix, got %r" % text, line_no, line)
    return float(text)


def _check_shape(mx: Dict[str, Any], line_no: Optional[int], line: Optional[str]) -> None:
    """A GPU x GPU matrix is square; a CPU-row matrix has a row per CPU (nvbandwidth prints one). Fewer rows than
    a GPU x GPU matrix needs is an output cut inside the matrix."""
    values = mx["values"]
    if not values:
        raise ParseError(TOOL, "matrix %r has no rows" % mx["description"], line_no, line)
    if mx.get("rows") == "GPU" and len(values) != len(values[0]):
        raise ParseError(TOOL, "matrix %r has %d rows for %d GPU columns (cut off?)" % (
            mx["description"], len(values), len(values[0])), line_no, line)


def _check_sum(mx: Dict[str, Any], line_no: Optional[int], line: Optional[str]) -> None:
    """The printed SUM is the sum of the printed cells (each rounded to 2 decimals; N/A counts 0)."""
    total = sum(v for row in mx["values"] for v in row if v is not None)
    cells = sum(len(row) for row in mx["values"])
    if mx.get("sum") is not None and abs(total - mx["sum"]) > 0.006 * cells + 0.02 + 1e-6 * abs(total):
        raise ParseError(TOOL, "SUM %s is %s but the matrix adds up to %.2f (a row or value lost?)" % (
            mx.get("key"), mx["sum"], total), line_no, line)


def _version_tuple(version: Optional[str]) -> Tuple[int, ...]:
    nums = re.findall(r"\d+", version or "")
    return tuple(int(n) for n in nums[:3]) if nums else ()


# --------------------------------------------------------------------------- text

def _parse_text(text: str) -> Dict[str, Any]:
    numbered = complete_lines(TOOL, text)
    out: Dict[str, Any] = {"format": "text", "version": None, "git_version": None, "cuda_runtime": None,
                           "cuda_driver": None, "driver": None, "devices": [], "tests": [], "messages": []}
    current: Optional[Dict[str, Any]] = None  # the test case being read
    pending: Optional[Dict[str, Any]] = None  # a matrix waiting for its SUM line
    ended = False
    i = 0
    while i < len(numbered):
        no, line = numbered[i]
        s = line.strip()
        i += 1
        if not s:
            continue
        if _FATAL.match(s):
            where = ("in test %s" % current["name"]) if current else "before any test"
            raise ParseError(TOOL, "the tool failed %s" % where, no, line)
        key, sep, value = s.partition(": ")
        if sep and key in _HEADER_KEYS and out[_HEADER_KEYS[key]] is None:
            out[_HEADER_KEYS[key]] = value.strip()
            continue
        if s.rstrip(":") in _HEADER_KEYS and out[_HEADER_KEYS[s.rstrip(":")]] is None:  # "Built from Git version:"
            out[_HEADER_KEYS[s.rstrip(":")]] = ""
            continue
        m = _DEVICE.match(s)
        if m and not out["tests"]:
            out["devices"].append({"index": int(m.group("index")), "name": m.group("name").strip(),
                                   "bus_id": m.group("bus")})
            continue
        m = _SUM.match(s)
        if m:
            if pending is None:
                raise ParseError(TOOL, "a SUM line without its matrix", no, line)
            pending["key"] = m.group("key")
            pending["sum"] = float(m.group("sum"))
            _check_sum(pending, no, line)
            pending = None
            continue
        if pending is not None and out["version"]:
            raise ParseError(TOOL, "expected the SUM line of matrix %r" % pending["description"], no, line)
        pending = None
        if s.startswith("Running ") and s.endswith("."):
            current = {"name": s[len("Running "):-1].strip(), "status": "passed", "error": None, "matrices": []}
            out["tests"].append(current)
            continue
        if s.startswith("Waiving ") and s.endswith("."):  # v0.2-v0.4
            out["tests"].append({"name": s[len("Waiving "):-1].strip(), "status": "waived", "error": None,
                                 "matrices": []})
            current = None
            continue
        if s in ("Waived:", "Waived") or s.startswith("Waived: "):  # v0.5+: the name is not printed
            out["tests"].append({"name": None, "status": "waived", "error": s.partition(":")[2].strip() or None,
                                 "matrices": []})
            current = None
            continue
        if s.startswith("Error: ") and current is not None:
            current["status"], current["error"] = "error", s[len("Error: "):].strip()
            current = None
            continue
        if s.startswith("ERROR: "):
            name = re.search(r"Testcase (?:index )?(\S+?) (?:not found|out of bound)", s)
            out["tests"].append({"name": name.group(1) if name else None, "status": "error",
                                 "error": s[len("ERROR: "):].strip(), "matrices": []})
            current = None
            continue
        if _DESC.match(s):
            mx = _description(s, no)
            mx.update({"key": None, "sum": None})
            i, mx["values"], mx["row_labels"], mx["column_labels"] = _read_matrix(numbered, i)
            _check_shape(mx, no, line)
            if current is None:  # a matrix with no "Running" line before it (a fragment)
                current = {"name": None, "status": "passed", "error": None, "matrices": []}
                out["tests"].append(current)
            current["matrices"].append(mx)
            pending = mx
            continue
        if s == _END_NOTE_2 and out["messages"] and out["messages"][-1] == _END_NOTE:
            ended = True
        out["messages"].append(s)
    if pending is not None and out["version"]:
        raise ParseError(TOOL, "the output ends before the SUM line of matrix %r (cut off?)" % pending["description"],
                         numbered[-1][0] if numbered else None, numbered[-1][1] if numbered else None)
    _finish_text(out, numbered, ended)
    return out


def _read_matrix(numbered: List[Tuple[int, str]], i: int) -> Tuple[int, List[List[Optional[float]]], List[str],
                                                                    List[str]]:
    """The header line of column labels at ``numbered[i]`` and the rows up to the first blank line: (next index,
    values, row labels, column labels)."""
    if i >= len(numbered) or not numbered[i][1].strip():
        no, line = numbered[i - 1]
        raise ParseError(TOOL, "a matrix description without its matrix (cut off?)", no, line)
    no, header = numbered[i]
    columns = header.split()
    if not all(c.isdigit() for c in columns):
        raise ParseError(TOOL, "expected the matrix's column indexes", no, header)
    i += 1
    values: List[List[Optional[float]]] = []
    rows: List[str] = []
    while i < len(numbered) and numbered[i][1].strip():
        no, line = numbered[i]
        cells = line.split()
        if len(cells) != len(columns) + 1 or not cells[0].isdigit():
            raise ParseError(TOOL, "expected a row index and %d values" % len(columns), no, line)
        rows.append(cells[0])
        values.append([_value(c, no, line) for c in cells[1:]])
        i += 1
    if not values:
        raise ParseError(TOOL, "a matrix header without rows (cut off?)", no, header)
    return i, values, rows, columns


def _finish_text(out: Dict[str, Any], numbered: List[Tuple[int, str]], ended: bool) -> None:
    """Refuse an output that reads as cut: a test case started and never given a matrix or a status, or a v0.6+
    run without its closing NOTE. Refuse an output that is no nvbandwidth output at all."""
    last_no, last = numbered[-1] if numbered else (None, None)
    for t in out["tests"]:
        if t["status"] == "passed" and not t["matrices"]:
            raise ParseError(TOOL, "test %s was started but printed no result (cut off?)" % t["name"], last_no, last)
    if not out["tests"]:  # every run prints a result, a waiver or an error for each test it was given
        raise ParseError(TOOL, "expected nvbandwidth's test results ('Running <test>.' and its matrices, "
                         "'Waived', 'Error'); %s" % ("the output ends after its header (cut off?)" if out["version"]
                                                    else "this is no nvbandwidth output"),
                         last_no, last)
    if out["version"] and _version_tuple(out["version"]) >= (0, 6) and not ended:
        raise ParseError(TOOL, "the output of %s ends without its closing NOTE (cut off?)" % out["version"],
                         last_no, last)


# --------------------------------------------------------------------------- json

_STATUS = {"passed": "passed", "waived": "waived", "error": "error", "not found": "error", "running": "running"}


def _parse_json(text: str, start: int) -> Dict[str, Any]:
    prefix = text[:start]
    try:
        doc, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        line = prefix.count("\n") + getattr(exc, "lineno", 1)
        raise ParseError(TOOL, "not valid JSON (%s)" % exc, line) from None
    suffix = text[end:]
    if not text.endswith(("\n", "\r")):  # the tool ends the document with a newline (toStyledString, endl)
        raise ParseError(TOOL, "the last line has no newline (output cut off?)", text.count("\n") + 1,
                         text.splitlines()[-1])
    root = doc.get("nvbandwidth") if isinstance(doc, dict) else None
    if not isinstance(root, dict):
        raise ParseError(TOOL, "expected {\"nvbandwidth\": {...}} (nvbandwidth --json)")
    if root.get("error"):
        raise ParseError(TOOL, "the tool reported an error instead of its output: %r" % root["error"])
    if not isinstance(root.get("testcases"), list):
        raise ParseError(TOOL, "expected nvbandwidth.testcases to be a list")
    out: Dict[str, Any] = {"format": "json", "version": root.get("version"), "git_version": root.get("git_version"),
                           "cuda_runtime": _str(root.get("CUDA Runtime Version")), "cuda_driver": None,
                           "driver": _str(root.get("Driver Version")), "devices": _json_devices(root),
                           "tests": [], "messages": [line.strip() for line in (prefix + "\n" + suffix).splitlines()
                                                     if line.strip()]}
    if root.get("warning"):
        out["messages"].append(str(root["warning"]))
    for n, tc in enumerate(root["testcases"]):
        out["tests"].append(_json_test(tc, n))
    return out


def _str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _json_devices(root: Dict[str, Any]) -> List[Dict[str, Any]]:
    """``GPU Device list``: ["0: NVIDIA H100 80GB HBM3 (00000000:18:00): (host)", ...]."""
    out = []
    for entry in root.get("GPU Device list") or []:
        m = re.match(r"^(\d+): (.+?)(?: \(([0-9a-fA-F:.]+)\))?(?:: \(.*\))?$", str(entry))
        if m:
            out.append({"index": int(m.group(1)), "name": m.group(2), "bus_id": m.group(3)})
    return out


def _json_test(tc: Any, n: int) -> Dict[str, Any]:
    if not isinstance(tc, dict) or not isinstance(tc.get("name"), str) or not isinstance(tc.get("status"), str):
        raise ParseError(TOOL, "testcase %d has no name or status: %r" % (n, tc))
    status = _STATUS.get(tc["status"].strip().lower())
    if status is None:
        raise ParseError(TOOL, "testcase %s: unknown status %r" % (tc["name"], tc["status"]))
    test = {"name": tc["name"], "status": status, "error": tc.get("error"), "matrices": []}
    if status == "running":  # the run stopped inside this test (json_output.cpp sets Passed with the matrix)
        test["status"], test["error"] = "error", tc.get("error") or "the run stopped inside this test"
    if "bandwidth_matrix" not in tc:
        if status == "passed":
            raise ParseError(TOOL, "testcase %s passed but has no bandwidth_matrix" % tc["name"])
        return test
    rows = tc["bandwidth_matrix"]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        raise ParseError(TOOL, "testcase %s: bandwidth_matrix is not a list of rows" % tc["name"])
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ParseError(TOOL, "testcase %s: rows of different widths in bandwidth_matrix" % tc["name"])
    values = [[_value(str(c).strip(), None, None) for c in r] for r in rows]
    base = _description(str(tc.get("bandwidth_description") or ""))
    chunks = [values]
    if base["rows"] == "GPU" and len(values) == 3 * width and width > 0:
        # a bidirectional device-to-device test: its three matrices appended to one (json_output.cpp)
        chunks = [values[k * width:(k + 1) * width] for k in range(3)]
    names = _bidir_keys(tc["name"]) if len(chunks) == 3 else [tc["name"]]
    for k, chunk in enumerate(chunks):
        mx = dict(base, key=names[k], values=chunk, row_labels=[str(r) for r in range(len(chunk))],
                  column_labels=[str(c) for c in range(width)], sum=None)
        if len(chunks) == 3:
            mx["variant"] = names[k].rsplit("_", 1)[1].capitalize()
        _check_shape(mx, None, None)
        test["matrices"].append(mx)
    if isinstance(tc.get("sum"), (int, float)) and not isinstance(tc.get("sum"), bool):
        test["matrices"][-1]["sum"] = float(tc["sum"])
        _check_sum(test["matrices"][-1], None, None)
    return test


def _bidir_keys(name: str) -> List[str]:
    """The keys nvbandwidth gives the three matrices of a bidirectional device-to-device test
    (testcases_ce.cpp / testcases_sm.cpp): <name>_read1, _read2, _total or _write1, _write2, _total."""
    kind = "write" if "write" in name else "read"
    return ["%s_%s1" % (name, kind), "%s_%s2" % (name, kind), "%s_total" % name]


# --------------------------------------------------------------------------- entry

def parse_nvbandwidth(text: str) -> Dict[str, Any]:
    """nvbandwidth's output (text, or ``--json``) -> {format, version, git_version, cuda_runtime, cuda_driver,
    driver, devices: [{index, name, bus_id}], tests: [{name, status: passed|waived|error, error, matrices:
    [{key, description, engine, rows, columns, direction, variant, unit, values: [[GB/s or None]], row_labels,
    column_labels, sum}]}], messages: [free text the tool printed]}.

    ``name`` is None for a test whose name the tool did not print (``Waived:`` of v0.5+, a matrix without its
    ``Running`` line); the matrix's SUM ``key`` names it then. Lines before and after a JSON document (warnings)
    are kept as messages. See the module docstring for the formats and what is refused."""
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    if not text.strip():
        raise ParseError(TOOL, "no output")
    start = _json_start(text)
    if start is not None:
        return _parse_json(text, start)
    return _parse_text(text)


def _json_start(text: str) -> Optional[int]:
    """Where a JSON document starts: the first line that is ``{`` alone or starts with ``{"nvbandwidth"`` (lines
    before it are warnings the tool or its loader printed), else None (a text output)."""
    offset = 0
    for line in text.splitlines(True):
        s = line.strip()
        if s == "{" or s.startswith('{"nvbandwidth"') or s.startswith('{ "nvbandwidth"'):
            return offset + line.index("{")
        offset += len(line)
    return None
