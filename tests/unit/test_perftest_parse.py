"""module_utils/network/perftest_parse.py against real perftest outputs (tests/unit/fixtures/fabric/, sources in
its README.md) and the formats in perftest's source (perftest_parameters.h RESULT_FMT*/REPORT_FMT*)."""
from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refusal import assert_refused
from test_parser_contract import FAST, outcome

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.perftest_parse import (gid_from_perftest,
    parse_perftest, parse_perftest_json, to_gbps)

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")
DASHES = "-" * 87 + "\n"


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


GOOD = ["ib_write_bw__cx7_ndr_dac_guide_client_gbits.txt", "ib_read_bw__cx7_ndr_dac_guide_client_gbits.txt",
        "ib_send_bw__cx7_ndr_dac_guide_client_mib.txt", "ib_send_lat__cx7_ndr_dac_guide_client.txt",
        "ib_write_bw__dgx_spark_guide_4qp_rdma_cm.txt", "ib_write_lat__dgx_spark_guide_rdma_cm.txt"]


def test_every_perftest_fixture_is_in_the_readme():
    readme = fx("README.md")
    for f in os.listdir(FIX):
        if f.startswith("ib_"):
            assert f in readme, f


def test_write_bw_client_gbits_ndr():
    v = parse_perftest(fx("ib_write_bw__cx7_ndr_dac_guide_client_gbits.txt"))
    assert v["ok"] and v["verb"] == "write" and v["kind"] == "bw" and v["role"] == "client"
    assert v["unit"] == "Gb/sec"
    assert v["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak": 392.38, "bw_average": 392.34,
                          "msg_rate_mpps": 0.748336, "bw_peak_gbps": 392.38, "bw_average_gbps": 392.34}]
    s = v["settings"]
    assert (s["device"], s["transport_type"], s["link_type"], s["mtu"], s["number_of_qps"]) == (
        "mlx5_0", "IB", "IB", 4096, 1)
    assert s["using_enhanced_reorder"] == "OFF" and s["cqe_poll_batch"] == "Dynamic"
    assert v["local"][0]["lid"] == 1 and v["remote"][0]["lid"] == 2
    # the host's CPU-frequency warning inside the table is kept, not read as a row
    assert any(n.startswith("Conflicting CPU frequency") for n in v["notices"])


def test_read_bw_has_outstanding_reads_in_the_address_line():
    v = parse_perftest(fx("ib_read_bw__cx7_ndr_dac_guide_client_gbits.txt"))
    assert v["verb"] == "read" and v["settings"]["outstand_reads"] == 16
    assert v["local"][0]["out"] == 16 and v["rows"][0]["bw_average_gbps"] == 328.61


def test_send_bw_mib_is_converted_to_gbps():
    v = parse_perftest(fx("ib_send_bw__cx7_ndr_dac_guide_client_mib.txt"))
    assert v["unit"] == "MiB/sec" and v["verb"] == "send"
    # 46557.03 * 0x100000 bytes/s * 8 = 390.55 Gb/s: the same link as the Gb/sec runs of that host (392.34)
    assert v["rows"][0]["bw_average_gbps"] == pytest.approx(390.5487, abs=1e-3)


def test_mb_and_mib_are_the_same_factor():
    assert to_gbps(1000.0, "MB/sec") == to_gbps(1000.0, "MiB/sec") == pytest.approx(8.388608)
    assert to_gbps(100.0, "Gb/sec") == 100.0
    with pytest.raises(ValueError):
        to_gbps(1.0, "KB/sec")


def test_latency_rows():
    v = parse_perftest(fx("ib_send_lat__cx7_ndr_dac_guide_client.txt"))
    assert v["kind"] == "lat" and v["unit"] == "usec" and v["ok"]
    assert v["rows"] == [{"bytes": 2, "iterations": 1000, "t_min": 1.24, "t_max": 5.19, "t_typical": 1.27,
                          "t_avg": 1.27, "t_stdev": 0.0, "p99": 1.37, "p99_9": 5.19}]
    w = parse_perftest(fx("ib_write_lat__dgx_spark_guide_rdma_cm.txt"))
    assert w["verb"] == "write" and w["rows"][0]["p99"] == 1.57 and w["settings"]["rdma_cm_qps"] == "ON"


def test_tabs_turned_into_spaces_still_split_the_header_pairs():
    v = parse_perftest(fx("ib_write_bw__dgx_spark_guide_4qp_rdma_cm.txt"))
    assert v["settings"]["device"] == "rocep1s0f1" and v["settings"]["number_of_qps"] == 4
    assert v["settings"]["transport_type"] == "IB" and v["settings"]["dual_port"] == "OFF"
    assert len(v["local"]) == len(v["remote"]) == 4


def test_roce_gid_and_gid_index():
    v = parse_perftest(fx("ib_write_bw__composed_pr342_row_then_issue173_error.txt"))
    assert v["settings"]["gid_index"] == 0 and v["settings"]["link_type"] == "Ethernet"
    assert v["local"][0]["ipv4"] == "192.168.1.39" and v["remote"][0]["ipv4"] == "192.168.1.6"
    assert v["local"][0]["gid"] == "0000:0000:0000:0000:0000:ffff:c0a8:0127"
    assert gid_from_perftest("254:128:00:00:00:00:00:00:148:109:174:03:00:50:07:120") == (
        "fe80:0000:0000:0000:946d:ae03:0032:0778", None)


def test_errors_are_data_the_caller_reports():
    v = parse_perftest(fx("ib_write_bw__perftest_pr228_connect_error.txt"))
    assert not v["ok"] and v["rows"] == []
    assert v["errors"][0] == {"line_no": 1, "text": "Couldn't connect to 192.168.125.211:18515"}
    assert "Unable to init the socket connection" in v["errors"][1]["text"]
    c = parse_perftest(fx("ib_write_bw__perftest_issue173_completion_error.txt"))
    assert not c["ok"] and c["errors"][0]["text"] == "Completion with error at client"
    assert [e["text"] for e in c["errors"]][-1] == "Failed to complete run_iter_bw function successfully"


def test_a_row_then_an_error_keeps_the_row_and_is_not_ok():
    v = parse_perftest(fx("ib_write_bw__composed_pr342_row_then_issue173_error.txt"))
    assert not v["ok"] and len(v["rows"]) == 1 and v["rows"][0]["bw_average_gbps"] == 42.31
    assert "Completion with error at client" in [e["text"] for e in v["errors"]]


def test_modify_qp_error_is_an_error():
    text = fx("ib_write_bw__cx7_ndr_dac_guide_client_gbits.txt").split(" #bytes")[0]
    # perftest_resources.c: fprintf(stderr, "Failed to modify QP %d to RTR\n", qp_num); then write_bw.c's
    # " Unable to Connect the HCA's through the link"
    v = parse_perftest(text + "Failed to modify QP 74 to RTR\n Unable to Connect the HCA's through the link\n")
    assert not v["ok"] and v["errors"][0]["text"] == "Failed to modify QP 74 to RTR" and len(v["errors"]) == 2


def test_cut_outputs_are_refused():
    assert_refused(parse_perftest, fx("ib_write_bw__perftest_issue234_server_roce_cut.txt"), "perftest",
                   "no newline")
    # a cut after a whole row: the table has no closing line
    assert_refused(parse_perftest, fx("ib_write_bw__perftest_issue132_all_sizes_head.txt"), "perftest",
                   "no closing line")


def test_server_side_roce_mb_sec():
    # issue 234's server output up to its table header; the row and closing line built from REPORT_FMT
    # (" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf") and RESULT_LINE
    head = fx("ib_write_bw__perftest_issue234_server_roce_cut.txt").rsplit("\n", 1)[0] + "\n"
    row = " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n" % (65536, 664644, 0.0, 4347.82, 0.069565)
    v = parse_perftest(head + row + DASHES)
    assert v["role"] == "server" and v["ok"] and v["unit"] == "MB/sec"
    assert v["settings"]["gid_index"] == 3 and v["settings"]["link_type"] == "Ethernet"
    assert v["local"][0]["ipv4"] == "10.255.255.5" and v["remote"][0]["ipv4"] == "10.255.255.4"
    assert v["rows"][0]["bw_average_gbps"] == pytest.approx(4347.82 * 1048576 * 8 / 1e9)


def test_all_sizes_rows_in_order():
    text = fx("ib_write_bw__perftest_issue132_all_sizes_head.txt") + DASHES
    v = parse_perftest(text)
    assert [r["bytes"] for r in v["rows"]] == [2, 4, 8] and v["rows"][0]["bw_average"] == 0.042185


@pytest.mark.parametrize("name", GOOD)
def test_every_proper_line_prefix_is_refused(name):
    """A whole perftest report ends with the table's closing line: any cut before it is refused."""
    text = fx(name)
    lines = text.splitlines(keepends=True)
    for k in range(len(lines) - 1):
        kind, _ = outcome(parse_perftest, "".join(lines[:k]))
        assert kind == "error", (name, k)


@pytest.mark.parametrize("name", GOOD)
@FAST
@given(data=st.data())
def test_cut_inside_a_line_is_refused_or_whole(name, data):
    text = fx(name)
    full = parse_perftest(text)
    cut = data.draw(st.integers(min_value=1, max_value=len(text) - 1))
    kind, value = outcome(parse_perftest, text[:cut])
    assert kind == "error" or value == full or not value["ok"]


@pytest.mark.parametrize("name", GOOD)
@FAST
@given(data=st.data())
def test_an_unknown_line_in_the_header_is_a_notice(name, data):
    text = fx(name)
    full = parse_perftest(text)
    lines = text.splitlines(keepends=True)
    at = data.draw(st.integers(min_value=2, max_value=5))
    extra = data.draw(st.sampled_from([" Some new perftest line\n", " Using DDP       : OFF\n"]))
    kind, value = outcome(parse_perftest, "".join(lines[:at] + [extra] + lines[at:]))
    assert kind == "ok", value
    assert value["rows"] == full["rows"] and value["unit"] == full["unit"]
    for k, v in full["settings"].items():
        assert value["settings"][k] == v


@FAST
@given(st.one_of(st.binary(max_size=300).map(lambda b: b.decode("latin-1")), st.text(max_size=300)))
def test_noise_is_a_value_or_value_error(data):
    outcome(parse_perftest, data)
    outcome(lambda t: parse_perftest_json(t, True), data)


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n", "hello\n"])
def test_nothing_there_is_refused(text):
    with pytest.raises(ValueError):
        parse_perftest(text)


def test_a_row_that_does_not_fit_the_header():
    text = fx("ib_write_bw__dgx_spark_guide_4qp_rdma_cm.txt").replace("111.71             0.213070", "111.71")
    assert_refused(parse_perftest, text, "perftest", "does not fit")


def test_two_runs_in_one_output_are_refused():
    text = fx("ib_write_lat__dgx_spark_guide_rdma_cm.txt")
    assert_refused(parse_perftest, text + text, "perftest", "second test title")


def test_latency_header_under_a_bw_title_is_refused():
    bw = fx("ib_write_bw__dgx_spark_guide_4qp_rdma_cm.txt")
    lat = fx("ib_write_lat__dgx_spark_guide_rdma_cm.txt")
    mixed = bw.split(" #bytes")[0] + " #bytes" + lat.split(" #bytes", 1)[1]
    assert_refused(parse_perftest, mixed, "perftest", "latency header under")


def test_out_json():
    v = parse_perftest_json(fx("ib_write_bw__composed_out_json_from_source.txt"), report_gbits=True)
    assert v["verb"] == "write" and v["kind"] == "bw" and v["ok"]
    assert v["rows"][0]["bw_average_gbps"] == 392.34 and v["settings"]["device"] == "mlx5_0"
    assert v["settings"]["mtu"] == 4096
    mb = parse_perftest_json(fx("ib_write_bw__composed_out_json_from_source.txt"), report_gbits=False)
    assert mb["unit"] == "MB/sec" and mb["rows"][0]["bw_average_gbps"] == pytest.approx(392.34 * 1048576 * 8 / 1e9)


def test_out_json_latency_and_refusals():
    # REPORT_FMT_LAT_JSON: MsgSize, n_iterations, t_min, t_max, t_typical, t_avg, t_stdev, percentile_99,
    # percentile_99.9 (values of the ib_send_lat fixture)
    lat = ('{\n"test_info": {\n"test": "Send_Latency_Test",\n"Device": "mlx5_0"\n},\n"results": {\n'
           '"MsgSize": 2,\n"n_iterations": 1000,\n"t_min": 1.24,\n"t_max": 5.19,\n"t_typical": 1.27,\n'
           '"t_avg": 1.27,\n"t_stdev": 0.00,\n"percentile_99": 1.37,\n"percentile_99.9": 5.19\n}\n}\n')
    v = parse_perftest_json(lat, report_gbits=False)
    assert v["kind"] == "lat" and v["rows"][0]["p99_9"] == 5.19 and v["unit"] == "usec"
    # write_bw_report_to_file with --output=bandwidth: "bw_avg": %lf,\n then "\n": a trailing comma, not JSON
    bad = '{\n"test_info": {\n"test": "RDMA_Write_BW_Test"\n},\n"results": {\n"bw_avg": 392.340000,\n\n}\n}\n'
    assert_refused(parse_perftest_json, bad, "perftest --out_json", "not JSON", True)
    assert_refused(parse_perftest_json, "", "perftest --out_json", "empty", True)
    assert_refused(parse_perftest_json, '{"test_info": {"test": "RDMA_Write_BW_Test"}, "results": {}}',
                   "perftest --out_json", "no bw_average", True)
