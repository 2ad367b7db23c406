"""module_utils/nccl/parse.py against real outputs (tests/unit/fixtures/nccl, each with a .source note):
nccl-tests tables of both layouts, aborted runs, the -J JSON file, and NCCL INFO transport lines."""
from __future__ import annotations

import os

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl import parse as ncp
from inventory_util import ROOT
from refusal import assert_refused

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "nccl")


def fixture(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_every_fixture_names_its_source_and_two_origins_per_kind():
    files = sorted(f for f in os.listdir(FIX) if not f.endswith(".source"))
    for f in files:
        text = open(os.path.join(FIX, f + ".source")).read()
        assert text.startswith("Source:") and len(text) > 60, f
    kinds = {"nccl_log": 2, "nccl_tests": 2}
    for kind, want in kinds.items():
        origins = {f.split("__")[1] for f in files if f.startswith(kind + "__")}
        assert len(origins) >= want, (kind, origins)
    old = [f for f in files if f.startswith("nccl_tests__") and f.endswith("_old.txt")]
    new = [f for f in files if f.startswith("nccl_tests__") and f.endswith("_new.txt")]
    assert len({f.split("__")[1].split("_")[0] for f in old}) >= 1 and len(old) >= 3 and len(new) >= 2


# --------------------------------------------------------------------------- nccl-tests, old layout (error)

def test_old_layout_all_reduce_dgx2():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__wohlbier_dgx2_all_reduce_old.txt"))
    assert r["layout"] == "error" and r["columns"] == ["size", "count", "type", "redop"]
    assert r["params"]["ngpus"] == 12 and r["params"]["agg_iters"] is None and r["params"]["validation"] == 1
    assert len(r["ranks"]) == 12 and r["ranks"][11] == {"rank": 11, "group": None, "pid": 88131, "host": "seville",
                                                        "device": 11, "bus": "0xe7", "name": "Tesla V100-SXM3-32GB"}
    last = r["rows"][-1]
    assert last["size"] == 8589934592 and last["redop"] == "sum" and last["root"] is None
    assert last["out_of_place"] == {"time_us": 127453.0, "algbw": 67.40, "busbw": 123.56, "wrong": None,
                                    "error": 2e-07}
    assert r["footer"] == {"out_of_bounds": 0, "out_of_bounds_ok": True, "avg_busbw": 42.5578,
                           "avg_check": None, "concluded": False}


def test_old_layout_all_gather_without_redop_and_failed_bounds():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__wohlbier_dgx2_all_gather_old.txt"))
    assert r["columns"] == ["size", "count", "type"] and r["rows"][0]["redop"] is None
    assert r["rows"][-1]["in_place"]["error"] == 1.0 and r["rows"][-1]["size"] == 8589934560
    assert r["footer"]["out_of_bounds"] == 4 and not r["footer"]["out_of_bounds_ok"]


def test_old_layout_broadcast_root_column():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__wohlbier_dgx2_broadcast_old.txt"))
    assert r["columns"] == ["size", "count", "type", "root"] and r["rows"][0]["root"] == 0


def test_old_layout_na_row_then_cut():
    with pytest.raises(ncp.ParseError) as e:
        ncp.parse_nccl_tests(fixture("nccl_tests__nccl_tests_82_broadcast_na_old.txt"))
    msg = str(e.value)
    # the harmless "Failed to open libibverbs" WARNs are named with their host and rank
    assert "stopped before the footer" in msg and "after 1 result row(s)" in msg
    assert "v100-gpu-1 (rank 0): NCCL WARN" in msg and "v100-gpu-5 (rank 1)" in msg


# --------------------------------------------------------------------------- nccl-tests, #wrong layout

def test_new_layout_two_nodes_h100():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__a3mega_ztan_h100_new.txt"))
    assert r["layout"] == "#wrong" and r["columns"] == ["size", "count", "type", "redop", "root"]
    assert r["params"]["agg_iters"] == 1 and r["params"]["graph"] == 0
    assert {x["host"] for x in r["ranks"]} == {"ztan-mig-235z", "ztan-mig-gq73"} and r["ranks"][8]["group"] == 0
    big = r["rows"][-1]
    assert big["size"] == 8589934592 and big["root"] == -1
    assert big["out_of_place"] == {"time_us": 47535.0, "algbw": 180.71, "busbw": 338.82, "wrong": 0, "error": None}
    assert big["in_place"]["busbw"] == 337.35
    assert r["footer"]["avg_busbw"] == 70.742 and len(r["rows"]) == 31


def test_new_layout_pasted_from_the_header_on():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__nccl_tests_252_ring_new.txt"))
    assert r["params"] == {} and r["ranks"] == [] and len(r["rows"]) == 5
    assert [x["in_place"]["busbw"] for x in r["rows"]] == [97.09, 97.54, 95.49, 94.32, 94.80]


def test_new_layout_no_check_is_na():
    r = ncp.parse_nccl_tests(fixture("nccl_tests__src_v2_13_no_check.txt"))
    assert r["params"]["validation"] == 0 and r["ranks"][1]["host"] == "node-b" and r["ranks"][1]["group"] is None
    assert all(x["out_of_place"]["wrong"] is None and x["in_place"]["wrong"] is None for x in r["rows"])


def test_info_lines_inside_the_table_and_inside_a_row():
    text = fixture("nccl_tests__a3mega_ztan_h100_new.txt")
    lines = text.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("8388608 "))
    row = lines[i]
    cut = row.index("  571.9")
    info = "ztan-mig-235z:6899:6950 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"
    lines[i:i + 1] = [row[:cut] + info, "ztan-mig-gq73:6733:6800 [0] NCCL INFO Connected all rings", row[cut:]]
    r = ncp.parse_nccl_tests("\n".join(lines) + "\n")
    got = next(x for x in r["rows"] if x["size"] == 8388608)
    assert got["out_of_place"]["time_us"] == 571.9 and got["in_place"]["busbw"] == 27.91 and len(r["rows"]) == 31


def test_info_line_glued_to_the_rows_last_number():
    # seen on the simulator: rank 0 printed "...  sum      -1" and another rank's INFO line followed with no
    # space; the "-1" belongs to the row, "sim-dgx3:..." to NCCL
    text = fixture("nccl_tests__a3mega_ztan_h100_new.txt")
    lines = text.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("1048576 "))
    row = lines[i]
    cut = row.index("-1") + 2
    lines[i:i + 1] = [row[:cut] + "sim-dgx3:18:18 [0] NCCL INFO comm stand-in rank 4 backend: cpu", row[cut:]]
    r = ncp.parse_nccl_tests("\n".join(lines) + "\n")
    got = next(x for x in r["rows"] if x["size"] == 1048576)
    assert got["root"] == -1 and got["out_of_place"]["busbw"] == 9.68 and len(r["rows"]) == 31


# --------------------------------------------------------------------------- aborted runs

def test_aborted_run_names_hosts():
    with pytest.raises(ncp.ParseError) as e:
        ncp.parse_nccl_tests(fixture("nccl_tests__nccl_tests_322_aborted.txt"))
    msg = str(e.value)
    assert "after 5 result row(s)" in msg and "HCA-128 (ranks ?): Test NCCL failure common.cu:1204" in msg
    assert "HCA-108" in msg


def test_aborted_during_init_names_host_and_ranks():
    with pytest.raises(ValueError) as e:
        ncp.parse_nccl_tests(fixture("nccl_tests__rccl_tests_50_aborted.txt"))
    assert "sharbox-ultra (ranks 0,1,2,3): Test NCCL failure common.cu:1285" in str(e.value)


def test_warn_only_output_names_the_host():
    with pytest.raises(ValueError) as e:
        ncp.parse_nccl_tests(fixture("nccl_tests__nccl_tests_15_warn.txt"))
    assert "server1 (ranks ?): NCCL WARN Net : Connection closed by remote peer" in str(e.value)


def test_abort_reasons_by_rank():
    text = fixture("nccl_tests__rccl_tests_50_aborted.txt")
    why = ncp.abort_reasons(text, {0: "sharbox-ultra", 1: "sharbox-ultra"})
    assert why[0] == {"host": "sharbox-ultra", "ranks": [0, 1],
                      "what": "Test NCCL failure common.cu:1285 internal error - please report this issue to the "
                              "NCCL developers"}
    assert why[1]["what"] == "Test failure common.cu:1161"


@pytest.mark.parametrize("text,words", [
    ("hello\n", "no nccl-tests output"),
    ("#       size         count      type   redop    root     time   algbw #wrong     time\n",
     "expected 'time algbw busbw error|#wrong'"),
    ("#  size count type redop time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float sum x 0 0 0 1 0 0 0\n"
     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n", "line 2: expected a number, got 'x'"),
    ("#  size count type redop time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float sum 1 0 0 0\n",
     "row cut short"),
    ("     8   2  float  sum  1 0 0 0 1 0 0 0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n",
     "line 1: a result row before the column header"),
])
def test_nccl_tests_malformed(text, words):
    assert_refused(ncp.parse_nccl_tests, text, "nccl-tests output", words)


# --------------------------------------------------------------------------- -J JSON

def test_json_file():
    r = ncp.parse_nccl_tests_json(fixture("nccl_tests_json__src_v2_19.json"))
    assert r["layout"] == "json" and r["ranks"][1]["host"] == "node-b" and r["params"]["step_kind"] == "factor"
    assert r["rows"][1]["root"] == -1 and r["rows"][1]["in_place"]["busbw"] == 49.481
    assert r["rows"][0]["out_of_place"]["wrong"] == 0
    assert r["footer"]["out_of_bounds_ok"] is True and r["footer"]["avg_check"] is None
    bad = fixture("nccl_tests_json__src_v2_19.json").replace('"okay": "true"', '"okay": "false"')
    assert ncp.parse_nccl_tests_json(bad)["footer"]["out_of_bounds_ok"] is False


def test_json_unfinished_file_is_an_error():
    text = fixture("nccl_tests_json__src_v2_19.json")
    with pytest.raises(ncp.ParseError, match="not JSON"):
        ncp.parse_nccl_tests_json(text[: len(text) // 2])


# --------------------------------------------------------------------------- the simulator's stand-in



def test_standin_output_says_cpu():
    r = ncp.parse_nccl_tests(fixture("standin__podsim_all_reduce.txt"))
    assert r["backend"] == "cpu" and r["program"] == "all_reduce_perf" and r["footer"]["concluded"]
    t = ncp.parse_nccl_transport(fixture("standin__podsim_all_reduce.txt"))
    assert t["backend"] == "cpu" and t["connections"] == [] and not t["gdr_everywhere"]
    assert t["backend_transports"] == ["MPI TCP on enp132s0 (between nodes), shared memory (same node)"]


# --------------------------------------------------------------------------- NCCL logs (moved from test_hw_parsers.py)

def test_nccl_004_dgx1():
    r = ncp.parse_nccl_transport(fixture("nccl_log__004_dgx1.txt"))
    assert r["summary"] == {"NET/IB/GDRDMA": 1, "P2P/IPC": 1}
    net = [c for c in r["connections"] if c["transport"] == "NET/IB"]
    assert net == [{"host": "DGX1-1", "channel": None, "src_rank": 3, "dst_rank": 0, "direction": None,
                    "via": "NET/IB/3/GDRDMA", "transport": "NET/IB", "net_dev": 3, "proxy_rank": None, "gdr": True,
                    "gdr_mode": None}]
    ring = [c for c in r["connections"] if c["transport"] == "P2P/IPC"][0]
    assert ring["channel"] == 0 and (ring["src_rank"], ring["dst_rank"]) == (0, 1)
    assert r["gid_index_env"] == 3 and r["qps"][0]["gid_index"] == 3 and r["qps"][0]["mtu_code"] == 5
    assert r["gdr_everywhere"] and not r["socket_fallback"]


def test_nccl_gdrdma_channels_real():
    r = ncp.parse_nccl_transport(fixture("nccl_log__nccl_707_gdrdma.txt"))
    assert r["summary"] == {"NET/IB/GDRDMA": 12} and r["gdr_everywhere"]
    assert {c["net_dev"] for c in r["connections"]} == {0, 2, 4, 5}
    assert {c["direction"] for c in r["connections"]} == {"send", "receive"}
    assert r["connections"][0]["host"] == "10-90-43-152"


def test_nccl_net_ib_using_real():
    roce = ncp.parse_nccl_transport(fixture("nccl_log__nccl_tests_185_roce.txt"))
    assert roce["networks"] == ["IB"] and len(roce["net_ib"]) == 2
    assert roce["net_ib"][0] == {"host": "dgxh100-4", "devices": [
        {"index": 0, "device": "mlx5_10", "port": 1, "link_layer": "RoCE"},
        {"index": 1, "device": "mlx5_11", "port": 1, "link_layer": "RoCE"}],
        "oob_if": "enp220s0np0", "oob_address": "11.1.128.136", "relaxed_ordering": True}
    ib = ncp.parse_nccl_transport(fixture("nccl_log__nv_peer_memory_56_ib.txt"))
    assert ib["net_ib"][0]["devices"] == [{"index": 0, "device": "mlx5_0", "port": 1, "link_layer": "IB"}]
    assert ib["net_ib"][0]["oob_if"] == "ib0" and not ib["net_ib"][0]["relaxed_ordering"]


def test_nccl_socket_fallback_real():
    r = ncp.parse_nccl_transport(fixture("nccl_log__nccl_952_socket.txt"))
    assert r["summary"] == {"NET/Socket": 2, "P2P/IPC": 14} and r["socket_fallback"] and not r["gdr_everywhere"]
    sock = [c for c in r["connections"] if c["transport"] == "NET/Socket"]
    assert sock[0]["net_dev"] == 3 and sock[0]["direction"] == "send" and sock[0]["host"] == "<cluster_name>"
    p2p = [c for c in r["connections"] if c["transport"] == "P2P/IPC"][0]
    assert p2p["via"] == "P2P/IPC/read" and p2p["net_dev"] is None
    no_ib = ncp.parse_nccl_transport(fixture("nccl_log__nccl_1267_no_ib.txt"))
    assert no_ib["ib_no_device"] and no_ib["networks"] == ["Socket"] and no_ib["connections"] == []
    assert no_ib["net_socket"][0]["interfaces"] == [{"index": 0, "if": "ens7", "address": "10.128.0.31"}]


def test_nccl_other_transports_real():
    cumem = ncp.parse_nccl_transport(fixture("nccl_log__nccl_1538_cumem.txt"))
    assert cumem["summary"] == {"P2P/CUMEM": 5}
    nogdr = ncp.parse_nccl_transport(fixture("nccl_log__nccl_mesh_plugin_56.txt"))
    assert nogdr["summary"] == {"NET/IB": 4} and not nogdr["gdr_everywhere"] and nogdr["gid_index_env"] == 3
    assert nogdr["connections"][0]["host"] is None  # the poster cut the host name
    plugin = ncp.parse_nccl_transport(
        "hostname-test:987:1260 [7] NCCL INFO Channel 03/0 : 47[7] -> 39[7] [receive] via NET/IBext_v8/2\n"
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(4)/GDRDMA\n"
        "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    assert plugin["summary"] == {"NET/IB/GDRDMA": 1, "NET/IBext_v8": 1, "SHM/direct": 1}
    assert plugin["connections"][1]["net_dev"] == 0


@pytest.mark.parametrize("text,words", [
    ("hello\nworld\n", "no 'NCCL INFO' lines"),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> x via NET/IB/0\n", "line 1: cannot read this connection line"),
    ("h:1:2 [0] NCCL INFO NET/IB : Using ; OOB eth0:1.2.3.4<0>\n", "line 1: 'NET/IB : Using' without any"),
])
def test_nccl_malformed(text, words):
    assert_refused(ncp.parse_nccl_transport, text, "NCCL log", words)


def test_nccl_2_30_lines_and_gdrdma_pci():
    r = ncp.parse_nccl_transport(fixture("nccl_log__nccl_src_2_30.txt"))
    pci = r["connections"][0]
    assert pci["gdr"] and pci["gdr_mode"] == "PCI" and pci["net_dev"] == 0 and pci["transport"] == "NET/IB"
    assert r["connections"][1]["gdr_mode"] == "PCI" and r["connections"][1]["via"].endswith("/Shared")
    pxn = r["connections"][2]
    assert pxn["proxy_rank"] == 0 and pxn["net_dev"] == 1 and pxn["gdr_mode"] is None
    assert r["summary"] == {"NET/IB/GDRDMA": 3} and r["gdr_everywhere"]
    assert r["qps"][0] == {"host": "dgx-a", "net_dev": 0, "ib_dev": 0, "port": 1, "mtu_code": 5, "gid_index": 3,
                           "lid": None}
    assert r["qps"][1]["lid"] == 7 and r["qps"][1]["gid_index"] is None and r["qps"][1]["ib_dev"] == 2
    assert r["gdr_hca"] == [{"host": "dgx-a", "index": 0, "device": "mlx5_0", "enabled": True},
                            {"host": "dgx-a", "index": 1, "device": "mlx5_1", "enabled": False}]
    f = ncp.transport_facts(r)
    assert f["gdr_disabled_hcas"] == ["dgx-a:mlx5_1"] and f["gid_indexes"] == [3] and f["net_connections"] == 3


def test_nccl_more_real_logs():
    aks = ncp.parse_nccl_transport(fixture("nccl_log__aks_rdma_36_gdrdma.txt"))
    assert aks["summary"] == {"NET/IB/GDRDMA": 7} and aks["gdr_everywhere"]
    assert {c["net_dev"] for c in aks["connections"]} == {0, 4, 6}
    sharp = ncp.parse_nccl_transport(fixture("nccl_log__nccl_1291_ibext.txt"))
    assert sharp["networks"] == ["IBext_v8"] and sharp["net_ib"][0]["devices"] == [
        {"index": 0, "device": "mlx5_2", "port": 1, "link_layer": "IB"}] and sharp["net_ib"][0]["relaxed_ordering"]
    f = ncp.transport_facts(sharp)
    assert f["ib_devices"] == ["mlx5_2"] and f["ib_devices_by_host"] == {"gh1": ["mlx5_2"]}


# --------------------------------------------------------------------------- other versions and options

def test_per_iteration_columns_and_timestamps_v2_19():
    # -I 1 puts i_min i_max i_p99 i_cv% after each place: the in-place numbers are the 2nd group, not columns 9-12
    r = ncp.parse_nccl_tests(fixture("nccl_tests__src_v2_19_per_iter_new.txt"))
    assert r["version"] == "2.19.2" and r["program"] == "all_gather_perf" and r["footer"]["concluded"]
    assert r["time_column"] == "time" and [x["host"] for x in r["ranks"]] == ["dgx-a", "dgx-b"]
    last = r["rows"][-1]
    assert last["in_place"] == {"time_us": 117.9, "algbw": 35.58, "busbw": 17.79, "wrong": 0, "error": None,
                                "per_iter": {"min_us": 114.6, "max_us": 129.5, "p99_us": 129.0, "cv_pct": 2.7}}
    assert last["out_of_place"]["busbw"] == 17.67 and last["timestamp"] == "2026-07-03 10:15:01"
    assert r["footer"]["avg_busbw"] == 13.205


def test_cputime_header_and_last_error_after_the_footer():
    # -C 1 (v2.13.4+) names the time column "cputime"; v2.13.4 - v2.17.2 print ncclGetLastError() after the footer
    r = ncp.parse_nccl_tests(fixture("nccl_tests__src_v2_16_cputime_new.txt"))
    assert r["time_column"] == "cputime" and len(r["rows"]) == 3 and len(r["ranks"]) == 8
    assert r["rows"][2]["in_place"]["busbw"] == 226.13 and r["footer"]["avg_busbw"] == 209.317
    with pytest.raises(ncp.ParseError, match="a result row after the footer"):
        ncp.parse_nccl_tests(fixture("nccl_tests__src_v2_16_cputime_new.txt")
                             + "   268435456      67108864     float     sum      -1   2011.2  133.47  233.57      0"
                               "   2008.7  133.63  233.86      0\n")


def test_old_abort_without_pid_names_the_host():
    # before v2.10 TESTCHECK printed " .. HOST: Test failure file:line" (no pid), in the middle of the table
    with pytest.raises(ncp.ParseError) as e:
        ncp.parse_nccl_tests(fixture("nccl_tests__src_v2_9_abort_old.txt"))
    msg = str(e.value)
    assert "after 1 result row(s)" in msg and "node2 (rank 1): Test NCCL failure common.cu:393 unhandled system" in msg
    why = ncp.abort_reasons(fixture("nccl_tests__src_v2_9_abort_old.txt"), {0: "node1", 1: "node2"})
    assert [w["what"] for w in why[1:]] == ["Test failure common.cu:509", "Test failure all_gather.cu:87"]


def test_test_nccl_failure_message_with_quotes_inside():
    # NCCLCHECK (v2.13+) prints "'%s / %s'" with ncclGetLastError(), which may quote itself
    why = ncp.abort_reasons("dgx-a: Test NCCL failure common.cu:1279 'unhandled cuda error (run with NCCL_DEBUG=INFO"
                            " for details) / Cuda failure 'out of memory''\n")
    assert why[0]["what"].endswith("/ Cuda failure 'out of memory'")


def test_two_runs_in_one_output_are_refused():
    # nccl-tests without MPI=1 started by mpirun: every process runs its own test and prints its own table
    assert_refused(ncp.parse_nccl_tests, fixture("nccl_tests__nccl_tests_107_no_mpi_old.txt"), "nccl-tests output",
                   "line 4: a second nccl-tests run in the same output")
    both = (fixture("nccl_tests__wohlbier_dgx2_all_reduce_old.txt")
            + fixture("nccl_tests__wohlbier_dgx2_broadcast_old.txt"))
    assert_refused(ncp.parse_nccl_tests, both, "nccl-tests output", "a second nccl-tests run")


def _with_lines(name, start, new):
    lines = fixture(name).splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith(start))
    lines[i:i] = new
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("warn", [
    # NCCL 2.26+: "[%F %T] " before WARN lines by default (NCCL_DEBUG_TIMESTAMP_LEVELS), src/debug.cc
    "[2026-03-01 10:00:01] ztan-mig-gq73:6733:6800 [0] transport/net_ib.cc:1370 NCCL WARN NET/IB : Got async event",
    # newer NCCL: "file:line (function) NCCL WARN"
    "ztan-mig-gq73:6733:6800 [0] proxy.cc:1541 (ncclProxyProgress) NCCL WARN [Proxy Service 8] Failed to execute",
])
def test_nccl_2_26_warn_lines_inside_the_table(warn):
    text = _with_lines("nccl_tests__a3mega_ztan_h100_new.txt", "# Out of bounds", ["", warn])
    r = ncp.parse_nccl_tests(text)
    assert len(r["rows"]) == 31 and r["footer"]["avg_busbw"] == 70.742
    text = _with_lines("nccl_tests__a3mega_ztan_h100_new.txt", "1048576 ", ["", warn])
    assert len(ncp.parse_nccl_tests(text)["rows"]) == 31
    why = ncp.abort_reasons(warn + "\n", {8: "ztan-mig-gq73"})
    assert why[0]["host"] == "ztan-mig-gq73" and why[0]["ranks"] == [8] and why[0]["what"].startswith("NCCL WARN")


def test_mpich_prepend_rank_chunks():
    # NVIDIA/nccl#1453: "mpiexec -l" puts "[0] " before every chunk: "...  sum      -1[0] host:pid:tid [0] NCCL INFO"
    lines = fixture("nccl_tests__a3mega_ztan_h100_new.txt").splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("512 "))
    row = lines[i]
    cut = row.index("-1") + 2
    lines[i:i + 1] = [row[:cut] + "[0] ztan-mig-235z:6899:6899 [0] NCCL INFO 512 Bytes -> Algo 0 proto 0 time 25.2",
                      "ztan-mig-235z:6899:6899 [0] NCCL INFO 512 Bytes -> Algo 0 proto 0 time 25.2", row[cut:]]
    r = ncp.parse_nccl_tests("".join("[0] %s\n" % ln for ln in lines))
    got = next(x for x in r["rows"] if x["size"] == 512)
    assert got["root"] == -1 and got["in_place"]["busbw"] == 0.01 and len(r["rows"]) == 31 and len(r["ranks"]) == 16


def test_open_mpi_tag_output_ansi_codes_and_crlf():
    text = fixture("nccl_tests__a3mega_ztan_h100_new.txt")
    tagged = "".join("[1,0]<stdout>:\x1b[0m%s\r\n" % ln for ln in text.splitlines())
    assert ncp.parse_nccl_tests(tagged) == ncp.parse_nccl_tests(text)


def test_stderr_inside_the_table_is_set_aside_unless_a_row_hides_in_it():
    banner = ["--------------------------------------------------------------------------",
              "WARNING: There was an error initializing an OpenFabrics device.",
              "NCCL version 2.21.5+cuda12.4",
              "[ztan-mig-235z:06899] 15 more processes have sent help message help-mpi-btl-openib.txt"]
    r = ncp.parse_nccl_tests(_with_lines("nccl_tests__a3mega_ztan_h100_new.txt", "1048576 ", banner))
    assert len(r["rows"]) == 31
    lines = fixture("nccl_tests__a3mega_ztan_h100_new.txt").splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("1048576 "))
    lines[i] = "[ztan-mig-235z:06899] warning: " + lines[i]
    assert_refused(ncp.parse_nccl_tests, "\n".join(lines) + "\n", "nccl-tests output",
                   "line %d: a result row with other text before it" % (i + 1))


def test_avg_nan_and_a_cut_footer():
    text = fixture("nccl_tests__src_v2_13_no_check.txt")
    r = ncp.parse_nccl_tests(text.replace("# Avg bus bandwidth    : 2.8873", "# Avg bus bandwidth    : -nan"))
    assert r["footer"]["avg_busbw"] != r["footer"]["avg_busbw"]   # nan, as printed
    cut = text[:text.index("2.8873") + 4]
    assert_refused(ncp.parse_nccl_tests, cut, "nccl-tests output", "the last line has no newline")


@pytest.mark.parametrize("text,words", [
    ("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float sum x 0 0 0 0 0 0 0 0\n"
     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n#\n", "line 2: expected the root rank, got 'x'"),
    ("#  size count type time algbw busbw #wrong i_avg time algbw busbw #wrong i_avg\n", "does not know: 'i_avg'"),
    ("#  size count type time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float 1 0 0 0 1 0 0 0 1.5 x\n"
     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n#\n", "13 fields, expected 11 (text glued to the row?)"),
    ("#  size count type time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float 1 0 0 0.5 1 0 0 0\n"
     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n#\n", "expected a count of wrong elements, got '0.5'"),
    ("#  size count type time algbw busbw #wrong time algbw busbw #wrong\n 8 2 float 1 0 0 0 1 0 0 0\n"
     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : twelve\n#\n", "line 4: cannot read this footer line"),
])
def test_nccl_tests_malformed_more(text, words):
    assert_refused(ncp.parse_nccl_tests, text, "nccl-tests output", words)


def test_json_cputime_and_bad_footers():
    import json
    doc = json.loads(fixture("nccl_tests_json__src_v2_19.json"))
    for res in doc["results"]:
        for k in ("out_of_place", "in_place"):
            res[k]["cpu_time"] = res[k].pop("time")
    assert ncp.parse_nccl_tests_json(json.dumps(doc))["time_column"] == "cputime"
    for key, val in (("out_of_bounds", 0), ("average_bus_bandwidth", {"okay": "true"}), ("config", "x")):
        bad = dict(doc, **{key: val})
        with pytest.raises(ncp.ParseError, match="nccl-tests JSON output: "):
            ncp.parse_nccl_tests_json(json.dumps(bad))
    inf = fixture("nccl_tests_json__src_v2_19.json").replace('"alg_bw": 48.806', '"alg_bw": inf')
    assert_refused(ncp.parse_nccl_tests_json, inf, "nccl-tests JSON output", "a bare 'inf' value")
    # a run that fails still closes the file (jsonOutputFinalize): valid JSON, no footer
    stopped = {k: v for k, v in doc.items() if k not in ("out_of_bounds", "average_bus_bandwidth")}
    assert_refused(ncp.parse_nccl_tests_json, json.dumps(stopped), "nccl-tests JSON output", "stopped before the end")


def test_open_mpi_signal_line_names_rank_and_host():
    text = (fixture("nccl_tests__nccl_tests_252_ring_new.txt").split("# Out of bounds")[0]
            + "--------------------------------------------------------------------------\n"
              "mpirun noticed that process rank 9 with PID 0 on node dgx-b exited on signal 9 (Killed).\n")
    assert_refused(ncp.parse_nccl_tests, text, "nccl-tests output", "after 5 result row(s): dgx-b (rank 9): "
                   "exited on signal 9 (Killed)")


def test_transport_lines_with_timestamps_rank_prefixes_and_colours():
    r = ncp.parse_nccl_transport(
        "[1] [2026-03-01 10:00:00] dgx-b:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA"
        "\r\n"
        "[1,3]<stdout>:\x1b[32mdgx-c:1:2 [3] NCCL INFO Channel 01/0 : 3[3] -> 11[3] [send] via NET/IB/3(19)/GDRDMA"
        "\x1b[0m\n")
    assert [(c["host"], c["net_dev"], c["proxy_rank"]) for c in r["connections"]] == [("dgx-b", 0, None),
                                                                                     ("dgx-c", 3, 19)]
