"""nvbandwidth's output (module_utils/gpu/bandwidth_parse.py) and the GPU copy-bandwidth checks
(module_utils/gpu/bandwidth_eval.py), issue 39 item 5.

Fixtures: tests/unit/fixtures/gpu/nvbandwidth__* (sources in nvbandwidth__SOURCES.md): public issue pastes of
nvbandwidth v0.2, v0.7 and v0.8, the README's examples, and the JSON DCGM's nvbandwidth plugin tests with."""
from __future__ import annotations

import copy
import json
import os

import pytest
import test_parser_contract as contract
from hypothesis import given
from hypothesis import strategies as st
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import bandwidth_eval as bw
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_parse import (matrix_direction,
                                                                                         parse_nvbandwidth)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_PERF

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gpu")
# v0.6+ prints these two lines last (output.cpp Output::printInfo): added to the issue-50 paste, which left them out
END_NOTE = ("NOTE: The reported results may not reflect the full capabilities of the platform.\n"
            "Performance can vary with software drivers, hardware clocks, and system topology.\n")


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


GOOD = ["nvbandwidth__issue42_v0.8_a100_h2d_sm.txt", "nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt",
        "nvbandwidth__issue13_v0.2_waiving.txt", "nvbandwidth__readme_v0.8_d2d_write_ce.txt",
        "nvbandwidth__readme_v0.8_h2d_ce.txt", "nvbandwidth__readme_v0.8_h2d_bidir_ce.txt",
        "nvbandwidth__dcgm_tests_v0.5_json.json", "nvbandwidth__dcgm_tests_v0.5_json_warnings.json"]


# --------------------------------------------------------------------------- the text output

def test_v0_8_header_device_and_one_test():
    d = parse_nvbandwidth(fx("nvbandwidth__issue42_v0.8_a100_h2d_sm.txt"))
    assert (d["format"], d["version"], d["git_version"], d["cuda_runtime"], d["driver"]) == (
        "text", "v0.8", "v0.8", "12060", "560.35.05")
    assert d["devices"] == [{"index": 0, "name": "NVIDIA A100-SXM4-40GB", "bus_id": "00000000:99:00"}]
    (t,) = d["tests"]
    assert (t["name"], t["status"], t["error"]) == ("host_to_device_memcpy_sm", "passed", None)
    (mx,) = t["matrices"]
    assert (mx["engine"], mx["rows"], mx["direction"], mx["columns"], mx["unit"]) == ("SM", "CPU", "->", "GPU", "GB/s")
    assert (mx["values"], mx["key"], mx["sum"]) == ([[25.13]], "host_to_device_memcpy_sm", 25.13)
    assert matrix_direction(mx) == "h2d"
    assert d["messages"][0].startswith("NOTE: The reported results")


def test_v0_2_eight_gpus_host_copies_and_the_note_at_the_start():
    d = parse_nvbandwidth(fx("nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt"))
    assert d["version"] == "v0.2" and len(d["devices"]) == 8 and d["devices"][7]["bus_id"] is None
    h2d, d2h = d["tests"]
    assert h2d["matrices"][0]["values"] == [[25.50, 24.26, 23.90, 26.30, 26.28, 26.38, 26.09, 26.31]]
    assert matrix_direction(d2h["matrices"][0]) == "d2h" and d2h["matrices"][0]["sum"] == 214.28
    assert "NOTE: This tool reports current measured bandwidth on your system." in d["messages"]


def test_a_waived_test_v0_2_names_it():
    d = parse_nvbandwidth(fx("nvbandwidth__issue13_v0.2_waiving.txt"))
    assert d["tests"] == [{"name": "device_to_device_memcpy_write_ce", "status": "waived", "error": None,
                           "matrices": []}]


def test_readme_fragments_without_header_or_sum():
    d = parse_nvbandwidth(fx("nvbandwidth__readme_v0.8_d2d_write_ce.txt"))
    (mx,) = d["tests"][0]["matrices"]
    assert d["version"] is None and mx["sum"] is None and len(mx["values"]) == 8
    assert (mx["rows"], mx["direction"], mx["columns"]) == ("GPU", "<-", "GPU") and matrix_direction(mx) == "d2d"
    assert mx["values"][6][0] == 274.89 and mx["values"][3][3] == 0.0
    bidir = parse_nvbandwidth(fx("nvbandwidth__readme_v0.8_h2d_bidir_ce.txt"))["tests"][0]["matrices"][0]
    assert bidir["direction"] == "<->" and matrix_direction(bidir) == "host_bidir"


def test_the_issue_50_paste_without_its_closing_note_is_refused_as_cut_off():
    with pytest.raises(ParseError, match="closing NOTE.*cut off"):
        parse_nvbandwidth(fx("nvbandwidth__issue50_v0.8_a6000_d2d_read_ce.txt"))


def test_na_cells_are_no_measurement_and_an_unknown_line_is_kept():
    d = parse_nvbandwidth(fx("nvbandwidth__issue50_v0.8_a6000_d2d_read_ce.txt") + "\n" + END_NOTE)
    (t,) = d["tests"]
    assert t["name"] is None  # the paste left out the "Running" line: the SUM key names the matrix
    mx = t["matrices"][0]
    assert mx["key"] == "device_to_device_memcpy_read_ce" and mx["direction"] == "->"
    assert [mx["values"][i][i] for i in range(6)] == [None] * 6 and mx["values"][0][3] == 21.95
    assert "..." in d["messages"]


def test_a_crash_is_refused_naming_the_test_it_stopped_in():
    with pytest.raises(ParseError, match="failed in test device_to_device_memcpy_read_ce.*ASSERT in expression"):
        parse_nvbandwidth(fx("nvbandwidth__issue34_v0.7_a100_assert.txt"))


def _issue15(old, new):
    """The issue-15 output with one edit (a garbled or cut output)."""
    text = fx("nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt")
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("text, words", [
    (_issue15("24.26     23.90", "24.26     12.05"), "SUM host_to_device_memcpy_ce is 205.04 but the matrix adds"),
    (_issue15("24.26     23.90", "24.26     n/a23"), "expected a number or N/A"),
    (_issue15("     26.31\n\nSUM host_to_device", "\n\nSUM host_to_device"), "expected a row index and 8 values"),
    (_issue15("\nSUM device_to_host_memcpy_ce 214.28\n", "\n"), "ends before the SUM line"),
    (_issue15("\nSUM host_to_device_memcpy_ce 205.04\n", "\n"), "expected the SUM line"),
    ("Running host_to_device_memcpy_ce.\n", "started but printed no result"),
    ("nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nCUDA Runtime Version: 12060\n",
     "ends after its header"),
    ("hello\nworld\n", "no nvbandwidth output"),
    ("[CUDA_ERROR_NO_DEVICE] no CUDA-capable device is detected in expression cuInit(0) in int main(int, char**)() : "
     "nvbandwidth.cpp:268\n", "the tool failed before any test"),
    ("NVML_ERROR: [Driver/library version mismatch] in expression nvmlInit() in int main(int, char**)() : "
     "nvbandwidth.cpp:269\n", "the tool failed"),
    (fx("nvbandwidth__readme_v0.8_d2d_write_ce.txt").rsplit("7    276.12", 1)[0], "8 GPU columns|7 rows"),
])
def test_what_is_not_a_whole_output_is_refused_naming_the_line(text, words):
    with pytest.raises(ParseError, match=words):
        parse_nvbandwidth(text)


def test_format_strings_of_the_other_statuses():
    """v0.5+ status lines, built from their format strings (output.cpp addTestcase / setTestcaseStatusAndAddIfNeeded:
    ``status << ": " << msg``; nvbandwidth.cpp runTestcase: "Testcase <id> not found!")."""
    head = "nvbandwidth Version: v0.5\nBuilt from Git version: v0.5\n\n"
    d = parse_nvbandwidth(head + "Waived: \nRunning device_to_device_memcpy_read_ce.\nError: peer access failed\n"
                          "ERROR: Testcase nosuchtest not found!\n")
    assert [(t["name"], t["status"], t["error"]) for t in d["tests"]] == [
        (None, "waived", None), ("device_to_device_memcpy_read_ce", "error", "peer access failed"),
        ("nosuchtest", "error", "Testcase nosuchtest not found!")]


# --------------------------------------------------------------------------- the JSON output

def test_json_of_dcgms_nvbandwidth_plugin_tests():
    d = parse_nvbandwidth(fx("nvbandwidth__dcgm_tests_v0.5_json.json"))
    assert (d["format"], d["version"], d["driver"], d["cuda_runtime"]) == ("json", "v0.5", "565.02", "12070")
    by = {t["name"]: t for t in d["tests"]}
    assert len(by) == 32 and by["device_to_device_memcpy_read_ce"]["status"] == "waived"
    h2d = by["host_to_device_memcpy_ce"]["matrices"][0]
    assert (h2d["values"], matrix_direction(h2d), h2d["description"]) == (
        [[12.3964]], "h2d", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)")
    lat = by["host_device_latency_sm"]["matrices"][0]
    assert lat["unit"] == "ns" and matrix_direction(lat) is None


def test_json_warning_lines_around_the_document_are_kept_as_messages():
    d = parse_nvbandwidth(fx("nvbandwidth__dcgm_tests_v0.5_json_warnings.json"))
    assert len(d["tests"]) == 32 and d["messages"][0].startswith("WARNING: Failed to acquire log file lock")
    assert d["messages"][-1] == "WARNING: another garbage messages {{{}}}}}"


def _json_doc():
    return json.loads(fx("nvbandwidth__dcgm_tests_v0.5_json.json"))


def test_json_bidirectional_device_test_is_split_into_its_three_matrices():
    """json_output.cpp addTestcaseResults appends every matrix of a test to one bandwidth_matrix: a bidirectional
    GPU<->GPU test (three matrices: read1, read2, total) has 3 x n rows, the last description and sum. Composed
    from that code on the DCGM test document (2 GPUs, values made up)."""
    doc = _json_doc()
    rows = [["N/A", "180.5"], ["181.0", "N/A"], ["N/A", "179.5"], ["180.0", "N/A"], ["N/A", "360.0"], ["361.0", "N/A"]]
    doc["nvbandwidth"]["testcases"].append({
        "name": "device_to_device_bidirectional_memcpy_read_ce", "status": "Passed", "sum": 721.0,
        "bandwidth_description": "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s) ",
        "bandwidth_matrix": rows})
    t = parse_nvbandwidth(json.dumps(doc) + "\n")["tests"][-1]
    assert [(m["key"], m["variant"], m["values"][0][1]) for m in t["matrices"]] == [
        ("device_to_device_bidirectional_memcpy_read_ce_read1", "Read1", 180.5),
        ("device_to_device_bidirectional_memcpy_read_ce_read2", "Read2", 179.5),
        ("device_to_device_bidirectional_memcpy_read_ce_total", "Total", 360.0)]
    assert t["matrices"][-1]["sum"] == 721.0 and t["matrices"][0]["sum"] is None


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["nvbandwidth"].update(error="cuInit failed"), "reported an error.*cuInit failed"),
    (lambda d: d["nvbandwidth"]["testcases"][0].update(status="Bogus"), "unknown status"),
    (lambda d: d["nvbandwidth"]["testcases"][0].update(bandwidth_matrix=[["12.3964"], ["1", "2"]]), "widths"),
    (lambda d: d["nvbandwidth"]["testcases"][0].update(bandwidth_matrix=[["fast"]]), "expected a number"),
    (lambda d: d["nvbandwidth"]["testcases"][0].update(sum=99.0), "SUM .* is 99.0"),
    (lambda d: d["nvbandwidth"]["testcases"][0].pop("bandwidth_matrix"), "passed but has no bandwidth_matrix"),
    (lambda d: d.update(nvbandwidth=[]), "expected"),
])
def test_json_that_does_not_read_is_refused(edit, words):
    doc = _json_doc()
    edit(doc)
    with pytest.raises(ParseError, match=words):
        parse_nvbandwidth(json.dumps(doc, indent=1) + "\n")


def test_a_test_that_failed_in_json_keeps_its_error():
    doc = _json_doc()
    doc["nvbandwidth"]["testcases"][4] = {"name": "device_to_device_memcpy_read_ce", "status": "Error",
                                          "error": "Peer access is not supported"}
    t = parse_nvbandwidth(json.dumps(doc) + "\n")["tests"][4]
    assert (t["status"], t["error"]) == ("error", "Peer access is not supported")


# --------------------------------------------------------------------------- the parser contract

@pytest.mark.parametrize("name", GOOD)
def test_cut_after_any_line_is_refused_or_a_consistent_shorter_run(name):
    """contract: a cut is an error, the full value, or (no end marker: v0.2 and the README fragments) the first
    tests of the full value."""
    text = fx(name)
    full = parse_nvbandwidth(text)
    lines = text.splitlines(True)
    for k in range(len(lines)):
        kind, value = contract.outcome(parse_nvbandwidth, "".join(lines[:k]))
        if kind == "error" or value == full:
            continue
        assert full["version"] is None or full["version"] < "v0.6", (name, k)
        assert contract.consistent_prefix(value, full) and len(value["tests"]) <= len(full["tests"]), (name, k)
        assert all(t in full["tests"] for t in value["tests"]), (name, k)


@pytest.mark.parametrize("name", GOOD)
def test_cut_inside_any_line_is_refused(name):
    text = fx(name)
    full = parse_nvbandwidth(text)
    for p in range(1, len(text)):
        if text[p - 1] != "\n" and text[p - 1:p + 1].strip():
            kind, value = contract.outcome(parse_nvbandwidth, text[:p])
            assert kind == "error" or value == full, (name, p)


@contract.FAST
@given(data=st.data())
def test_noise_and_shuffled_lines_are_a_value_or_a_value_error(data):
    text = fx(data.draw(st.sampled_from(GOOD)))
    lines = text.splitlines(True)
    i, j = data.draw(st.integers(0, len(lines) - 1)), data.draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    noise = data.draw(st.one_of(st.text(max_size=40), st.binary(max_size=40).map(lambda b: b.decode("latin-1"))))
    lines.insert(data.draw(st.integers(0, len(lines))), noise + "\n")
    contract.outcome(parse_nvbandwidth, "".join(lines))


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n"])
def test_empty_output_is_refused(text):
    with pytest.raises(ParseError):
        parse_nvbandwidth(text)


# --------------------------------------------------------------------------- per GPU

def test_per_gpu_reads_the_copy_engine_tests_and_a_gpus_pair_median():
    h = bw.per_gpu(parse_nvbandwidth(fx("nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt")))
    assert h["h2d"]["test"] == "host_to_device_memcpy_ce" and h["h2d"]["gpus"][2] == 23.90
    assert h["d2h"]["gpus"][7] == 26.83 and h["d2d"] == {"test": None, "gpus": {}, "why": []}
    d = bw.per_gpu(parse_nvbandwidth(fx("nvbandwidth__readme_v0.8_d2d_write_ce.txt")))
    assert d["d2d"]["test"] == "device_to_device_memcpy_write_ce" and len(d["d2d"]["gpus"]) == 8
    assert 276.0 < d["d2d"]["gpus"][6] < 276.5  # the median of its 14 copies, not its 274.89
    j = bw.per_gpu(parse_nvbandwidth(fx("nvbandwidth__dcgm_tests_v0.5_json.json")))
    assert j["h2d"]["gpus"] == {0: 12.3964}
    assert j["d2d"]["gpus"] == {} and "device_to_device_memcpy_read_ce waived" in j["d2d"]["why"]


def test_expected_figures_come_from_the_catalogue():
    rate, src = bw.expected_gbps("dgxa100", "h2d")
    assert rate == pytest.approx(31.51, abs=0.01) and "Gen4 x16" in src and "PCI-SIG" in src
    assert bw.expected_gbps("dgxh100", "d2d")[0] == pytest.approx(18 * 26.562)
    assert bw.expected_gbps("dgx1", "d2d")[0] is None and bw.expected_gbps("dgx1", "h2d")[0] == pytest.approx(15.75,
                                                                                                          abs=0.01)
    assert bw.expected_gbps("nosuch", "h2d") == (None, "unknown dgx_model 'nosuch'")


# --------------------------------------------------------------------------- the checks

def _node(text, model="dgxa100"):
    return {"status": "ok", "dgx_model": model, "facts": {"nvbandwidth": {"result": parse_nvbandwidth(text),
                                                                          "error": None}}}


def _halve_h2d_gpu3(text):
    """The issue-15 run with GPU 3's host-to-device copy at half (26.30 -> 13.15) and the SUM it then prints."""
    return text.replace("23.90     26.30     26.28", "23.90     13.15     26.28").replace(
        "SUM host_to_device_memcpy_ce 205.04", "SUM host_to_device_memcpy_ce 191.89")


def _pod(fault=None, n=3):
    text = fx("nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt")
    d2d = fx("nvbandwidth__readme_v0.8_d2d_write_ce.txt")
    nodes = {}
    for i in range(1, n + 1):
        name = "dgx-%02d" % i
        t = fault(text) if fault and i == 2 else text
        node = _node(t)
        node["facts"]["nvbandwidth"]["result"]["tests"] += parse_nvbandwidth(d2d)["tests"]
        nodes[name] = node
    return nodes


def test_a_healthy_pod_passes_every_bandwidth_check():
    checks = bw.bandwidth_checks(_pod())
    assert {c.check for c in checks} == {"gpu_bandwidth_%s%s" % (d, p) for d in bw.DIRECTIONS for p in ("", "_peers")}
    assert all(c.status == "pass" for c in checks), [(c.check, c.host, c.cause) for c in checks if c.status != "pass"]
    assert all(c.category == NODE_PERF and c.subject.node == c.host for c in checks)
    h2d = next(c for c in checks if c.check == "gpu_bandwidth_h2d" and c.host == "dgx-01")
    assert h2d.absolute and h2d.measured == 23.90 and h2d.expected == pytest.approx(22.05, abs=0.01)
    assert "GPU 2" in h2d.details["note"]


def test_one_gpu_at_half_its_peers_h2d_fails_naming_node_and_gpu():
    checks = bw.bandwidth_checks(_pod(_halve_h2d_gpu3))
    bad = [c for c in checks if c.status == "fail"]
    assert {(c.check, c.host, c.subject.gpu) for c in bad} == {("gpu_bandwidth_h2d_peers", "dgx-02", 3),
                                                              ("gpu_bandwidth_h2d", "dgx-02", 3)}
    peers = next(c for c in bad if c.check == "gpu_bandwidth_h2d_peers")
    assert peers.measured == 13.15 and peers.subject.node == "dgx-02" and peers.category == NODE_PERF
    assert "dgx-02 GPU 3: host-to-device copy 13.15 GB/s" in peers.cause and "median" in peers.cause
    assert not peers.absolute and peers.details["peers"] == 24


def test_a_gpu_with_slow_nvlinks_fails_on_gpu_to_gpu_and_its_partners_do_not():
    def slow_gpu5(node):
        mx = node["facts"]["nvbandwidth"]["result"]["tests"][-1]["matrices"][0]
        for k in range(8):
            mx["values"][5][k] /= 2
            mx["values"][k][5] /= 2
        return node
    nodes = _pod()
    slow_gpu5(nodes["dgx-03"])
    bad = [c for c in bw.bandwidth_checks(nodes) if c.status == "fail"]
    assert {(c.check, c.host, c.subject.gpu) for c in bad} == {("gpu_bandwidth_d2d", "dgx-03", 5),
                                                              ("gpu_bandwidth_d2d_peers", "dgx-03", 5)}
    absolute = next(c for c in bad if c.check == "gpu_bandwidth_d2d")
    assert "70% of the dgxa100's 300.0 GB/s link" in absolute.cause and absolute.expected == 210.0


def test_the_cube_mesh_dgx1_has_no_gpu_to_gpu_figure_but_is_compared_with_peers():
    nodes = {k: dict(v, dgx_model="dgx1") for k, v in _pod().items()}
    checks = bw.bandwidth_checks(nodes)
    d2d = [c for c in checks if c.check == "gpu_bandwidth_d2d"]
    assert {c.status for c in d2d} == {"skipped"} and "cube-mesh" in d2d[0].reason
    assert {c.status for c in checks if c.check == "gpu_bandwidth_d2d_peers"} == {"pass"}


def test_sm_only_host_copies_are_not_held_to_the_link_figure():
    nodes = {"dgx-01": _node(fx("nvbandwidth__issue42_v0.8_a100_h2d_sm.txt"))}
    checks = {c.check: c for c in bw.bandwidth_checks(nodes)}
    assert checks["gpu_bandwidth_h2d"].status == "skipped" and "SM-copy" in checks["gpu_bandwidth_h2d"].reason
    assert checks["gpu_bandwidth_h2d_peers"].status == "pass"
    assert checks["gpu_bandwidth_d2h"].status == "skipped"


def test_a_failed_run_is_an_error_naming_node_and_tool_and_a_node_without_it_gets_nothing():
    nodes = _pod(n=1)
    nodes["dgx-09"] = {"status": "ok", "dgx_model": "dgxa100",
                       "facts": {"nvbandwidth": {"result": None, "error": "nvbandwidth output line 20: the tool "
                                                 "failed in test device_to_device_memcpy_read_ce: 'ASSERT ...'"}}}
    nodes["dgx-10"] = {"status": "ok", "dgx_model": "dgxa100", "facts": {}}
    checks = bw.bandwidth_checks(nodes)
    err = [c for c in checks if c.host == "dgx-09"]
    assert len(err) == 1 and err[0].status == "error" and "dgx-09: nvbandwidth failed" in err[0].reason
    assert "device_to_device_memcpy_read_ce" in err[0].reason and err[0].subject.node == "dgx-09"
    assert not [c for c in checks if c.host == "dgx-10"]


def test_thresholds_can_be_set_for_the_pod():
    exp = {"gpu": {"bandwidth_peer_fraction": {"value": 0.99, "source": "pod: tight"}}}
    bad = [c for c in bw.bandwidth_checks(_pod(), exp) if c.status == "fail"]
    assert bad and all(c.check.endswith("_peers") and c.source == "fraction 0.99: pod: tight" for c in bad)


def test_the_gpu_stage_reports_the_bandwidth_checks():
    nodes = _pod(_halve_h2d_gpu3)
    for node in nodes.values():
        node["facts"].update(smi=None, errors=[])
    results = gpu_eval.evaluate({"level": 1, "nodes": copy.deepcopy(nodes)}, {}, {})
    assert any(c.check == "gpu_bandwidth_h2d_peers" and c.status == "fail" and c.subject.gpu == 3 for c in results)
    plain = {k: dict(v, facts={"smi": None, "errors": []}) for k, v in nodes.items()}
    assert not [c for c in gpu_eval.evaluate({"level": 1, "nodes": plain}, {}, {}) if "bandwidth" in c.check]


# --------------------------------------------------------------------------- the module

def _module_run(out, rc=0, err=""):
    import importlib
    health = importlib.import_module("dgx_gpu_health")
    calls = []

    def run(cmd, timeout):
        calls.append((cmd, timeout))
        return rc, out, err
    which = lambda tool: tool if tool == "nvbandwidth" else None  # noqa: E731
    return health.read_nvbandwidth(run, which, 900), calls


def test_the_module_runs_the_three_copy_engine_tests_and_parses_them():
    got, calls = _module_run(fx("nvbandwidth__issue15_v0.2_rtx4090_first_tests.txt"))
    assert calls == [(["nvbandwidth", "-t", "host_to_device_memcpy_ce", "device_to_host_memcpy_ce",
                       "device_to_device_memcpy_read_ce"], 900)]
    assert got["error"] is None and got["result"]["tests"][0]["name"] == "host_to_device_memcpy_ce"


def test_the_module_reports_a_crash_or_a_cut_output_as_an_error():
    text = fx("nvbandwidth__issue34_v0.7_a100_assert.txt")
    head, _, tail = text.partition("ASSERT in expression")
    got, _ = _module_run(head, rc=1, err="ASSERT in expression" + tail)
    assert got["result"] is None and got["error"].startswith("exit 1: ASSERT in expression h_errorFlag == 0")
    got, _ = _module_run(fx("nvbandwidth__issue42_v0.8_a100_h2d_sm.txt").split("NOTE:")[0])
    assert got["result"] is None and "closing NOTE" in got["error"]
    import importlib
    health = importlib.import_module("dgx_gpu_health")
    assert health.read_nvbandwidth(None, lambda tool: None, 900) == {"result": None,
                                                                     "error": "nvbandwidth is not installed"}


def test_the_literal_check_names_cover_what_is_emitted():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import bandwidth_eval
    emitted = {"gpu_bandwidth_%s%s" % (d, p) for d in ("h2d", "d2h", "d2d") for p in ("", "_peers")}
    assert set(bandwidth_eval.CHECKS) == {"gpu_bandwidth"} | emitted
