"""iperf3 and fio JSON parsers against outputs of several tool versions (fixtures/perf/README.md)."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_parse import parse_fio, percentile_key
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_parse import load_json_document, parse_iperf3

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "perf")


def read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def test_every_fixture_is_cited():
    readme = read("README.md")
    for name in os.listdir(FIX):
        if name != "README.md":
            assert "`%s`" % name in readme, name


def test_iperf_3_12_loopback_two_streams():
    r = parse_iperf3(read("iperf3-3.12-debian-loopback-P2.json"))
    assert r["status"] == "ok" and r["error"] is None and r["version"] == "3.12" and r["protocol"] == "TCP"
    assert r["streams_requested"] == 2 and len(r["streams"]) == 2
    assert r["received_bps"] == pytest.approx(sum(s["received_bps"] for s in r["streams"]), rel=1e-3)
    assert r["sent_bps"] >= r["received_bps"] > 1e9
    assert r["retransmits"] == sum(s["retransmits"] for s in r["streams"])
    assert 0 < r["host_cpu_percent"] <= 100 and 0 < r["remote_cpu_percent"] <= 100
    assert r["local"].startswith("127.0.0.1:") and r["remote"] == "127.0.0.1:15201"


def test_iperf_3_9_published():
    r = parse_iperf3(read("iperf3-3.9-published-tcp.json"))
    assert r["status"] == "ok" and r["version"] == "3.9"
    assert r["received_bps"] == pytest.approx(1706646362.29) and r["sent_bps"] == pytest.approx(1707098116.14)
    assert r["retransmits"] == 540 and r["host_cpu_percent"] == pytest.approx(5.603, rel=1e-3)
    assert r["duration"] == pytest.approx(10.002443)


def test_iperf_3_1_3_udp():
    r = parse_iperf3(read("iperf3-3.1.3-published-udp.json"))
    assert r["status"] == "ok" and r["protocol"] == "UDP" and r["retransmits"] is None
    assert r["lost_percent"] == pytest.approx(0.690276) and r["jitter_ms"] == pytest.approx(0.092)
    assert r["received_bps"] == pytest.approx(834711189.017 * (1 - 0.00690276))


@pytest.mark.parametrize("name,error,version", [
    ("iperf3-3.12-debian-refused.json", "unable to connect to server: Connection refused", "3.12"),
    ("iperf3-3.16-published-control-closed.json", "control socket has closed unexpectedly", "3.16"),
])
def test_iperf_errors(name, error, version):
    r = parse_iperf3(read(name))
    assert r["status"] == "error" and r["error"] == error and r["version"] == version
    assert r["received_bps"] is None and r["streams"] == []


@pytest.mark.parametrize("text,why", [("", "empty output"), ("iperf3: error - unable to connect", "no JSON"),
                                      ('{"start": {}, "end": {}}', "no end summary"),
                                      ('{"start": {}, "end": {"sum_sent": {"bits_per_second": "fast"},'
                                       ' "sum_received": {}}}', "no numeric bits_per_second"),
                                      ('{\n "start": {"version": "iperf 3.12"},\n "end": {"sum_sent"',
                                       "line 1 is cut off")])
def test_iperf_unusable_output_raises(text, why):
    with pytest.raises(ValueError, match=why):
        parse_iperf3(text)


def test_iperf_3_12_udp_is_udp_with_receiver_loss_and_jitter():
    # 3.11+ UDP clients also write sum_sent/sum_received: the old parser took them for TCP and lost loss/jitter
    r = parse_iperf3(read("iperf3-3.12-debian-udp.json"))
    assert r["protocol"] == "UDP" and r["bidir"] is False and r["reverse"] is None and r["retransmits"] is None
    assert r["sent_bps"] == pytest.approx(200006971.69) and r["received_bps"] == pytest.approx(199981475.19)
    assert r["lost_percent"] == 0 and r["jitter_ms"] == pytest.approx(0.003735, rel=1e-3)
    assert [s["direction"] for s in r["streams"]] == ["forward"]


def test_iperf_3_12_bidir_keeps_the_two_directions_apart():
    r = parse_iperf3(read("iperf3-3.12-debian-bidir.json"))
    assert r["bidir"] is True and r["protocol"] == "TCP"
    assert r["sent_bps"] == pytest.approx(18410252957.46) and r["received_bps"] == pytest.approx(18365856583.88)
    rev = r["reverse"]
    assert rev["sent_bps"] == pytest.approx(10284677012.86) and rev["received_bps"] == pytest.approx(10239491628.53)
    assert r["received_bps"] < 2e10  # not the sum of both directions (2.86e10)
    assert [s["direction"] for s in r["streams"]] == ["forward", "reverse"]


def test_iperf_3_12_udp_bidir():
    r = parse_iperf3(read("iperf3-3.12-debian-udp-bidir.json"))
    assert r["bidir"] and r["protocol"] == "UDP"
    assert r["jitter_ms"] == pytest.approx(0.028775, rel=1e-3)
    assert r["reverse"]["jitter_ms"] == pytest.approx(0.040745, rel=1e-3)
    assert r["lost_percent"] == 0 and r["reverse"]["lost_percent"] == 0


def test_fio_status_interval_takes_the_final_report():
    r = parse_fio(read("fio-3.33-debian-status-interval.json"))
    w = r["aggregate"]["write"]
    assert r["status"] == "ok" and w["runtime_ms"] == 3001 and w["io_bytes"] == 13131317248


def test_fio_2_21_io_bytes_are_bytes():
    r = parse_fio(read("fio-2.21-stat-c-write.json"))
    w = r["aggregate"]["write"]
    assert r["version"] == "fio-2.21" and w["io_bytes"] == 4294967296  # not x1024 (io_kbytes is there)
    assert w["bw_bytes"] == 419430 * 1024 and w["total_ios"] == 4096
    assert w["io_bytes"] == pytest.approx(w["bw_bytes"] * w["runtime_ms"] / 1000, rel=1e-4)
    assert w["clat_percentiles_ns"]["p99"] == 4016 * 1000 and w["clat_mean_ns"] == pytest.approx(2440.5 * 1000)


def test_fio_3_33_two_jobs_aggregate():
    r = parse_fio(read("fio-3.33-debian-read-2jobs.json"))
    assert r["status"] == "ok" and r["version"] == "fio-3.33" and r["errors"] == []
    assert [j["name"] for j in r["jobs"]] == ["j0", "j1"]
    agg = r["aggregate"]["read"]
    assert agg["bw_bytes"] == pytest.approx(sum(j["read"]["bw_bytes"] for j in r["jobs"]))
    assert agg["iops"] == pytest.approx(sum(j["read"]["iops"] for j in r["jobs"]))
    # 1 MiB blocks: bandwidth = IOPS x 1 MiB
    assert agg["bw_bytes"] == pytest.approx(agg["iops"] * 1048576, rel=0.01)
    pct = agg["clat_percentiles_ns"]
    assert pct["p50"] <= pct["p99"] <= pct["p99.9"]
    assert pct["p99"] == max(j["read"]["clat_percentiles_ns"]["p99"] for j in r["jobs"])
    assert r["aggregate"]["write"]["bw_bytes"] == 0


def test_fio_job_error_with_text_before_json():
    text = read("fio-3.33-debian-einval.json")
    assert text.startswith("fio: pid=")
    r = parse_fio(text)
    assert r["status"] == "error" and len(r["jobs"]) == 2
    assert r["errors"] == ["job j0: error 22 (Invalid argument)", "job j1: error 22 (Invalid argument)"]


def test_fio_2_usec_kib_and_duplicate_keys():
    r = parse_fio(read("fio-2.2.10-published-write.json"))
    w = r["aggregate"]["write"]
    assert r["status"] == "ok" and r["version"] == "fio-2.2.10"
    assert w["bw_bytes"] == 62499 * 1024 and w["io_bytes"] == 37500272 * 1024
    assert w["clat_percentiles_ns"]["p99"] == 8640 * 1000  # usec -> ns
    assert w["clat_mean_ns"] == pytest.approx(8151.19 * 1000)
    assert "p0" not in w["clat_percentiles_ns"] and len(w["clat_percentiles_ns"]) == 17


def test_fio_3_42_normal_and_json_mixed():
    r = parse_fio(read("fio-3.42-published-randwrite-mixed-output.txt"))
    assert r["status"] == "ok" and r["version"] == "fio-3.42-6-g219f"
    w = r["aggregate"]["write"]
    assert w["bw_bytes"] == 5096143 and w["iops"] == pytest.approx(1244.18, rel=1e-3)
    assert w["clat_percentiles_ns"]["p99.99"] == 5537792
    assert r["aggregate"]["read"]["clat_percentiles_ns"] == {}


@pytest.mark.parametrize("text,why", [("", "empty output"), ("fio: failed parsing directory=/x\n", "no JSON"),
                                      ('{"jobs": []}', "no jobs"),
                                      ('{"jobs": [{"jobname": "j", "read": {}, "write": {}}]}', "job j read has no"),
                                      ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [', "line 1 is cut off")])
def test_fio_unusable_raises(text, why):
    with pytest.raises(ValueError, match=why):
        parse_fio(text)


def test_helpers():
    assert percentile_key("99.900000") == "p99.9" and percentile_key("50.000000") == "p50"
    assert percentile_key("0.00") is None and percentile_key("x") is None
    assert load_json_document('noise {"a": 1} tail') == {"a": 1}
    with pytest.raises(ValueError):
        load_json_document("{ broken")


# --- hardening: variants derived from the fixtures above (sources cited in each test) ---

def test_iperf_report_printed_twice_counts_once():
    # iperf 3.16 - 3.17 -J can print the same report twice (esnet/iperf issues #1688, #1716)
    text = read("iperf3-3.12-debian-loopback-P2.json")
    assert parse_iperf3(text + text) == parse_iperf3(text)


def test_iperf_two_different_reports_are_refused():
    # two runs appended to one file: neither may be picked silently
    text = read("iperf3-3.12-debian-loopback-P2.json") + read("iperf3-3.12-debian-bidir.json")
    with pytest.raises(ValueError, match="different reports"):
        parse_iperf3(text)


def test_iperf_skips_json_that_is_not_a_report():
    # a JSON line that is not the iperf3 report (e.g. a wrapper's status object) before the report
    text = read("iperf3-3.12-debian-loopback-P2.json")
    assert parse_iperf3('{"note": "warm-up"}\n' + text) == parse_iperf3(text)
    with pytest.raises(ValueError, match="no JSON object with 'start'"):
        parse_iperf3('{"event": "start", "data": {}}\n')


def test_iperf_trailing_error_text_and_leading_warning():
    # esnet/iperf#1143 (error text after the JSON), #1223 (a warning before it)
    text = read("iperf3-3.9-published-tcp.json")
    noisy = "warning: UDP block size 2048 exceeds TCP MSS 1448, may result in fragmentation / drops\n" + text + \
        "iperf3: error - unable to send control message: Broken pipe\n"
    assert parse_iperf3(noisy) == parse_iperf3(text)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_iperf_non_finite_throughput_is_refused(value):
    # Python's json accepts NaN/Infinity; a throughput like that is not a measurement (esnet/iperf#613: -nan)
    text = '{"start": {}, "end": {"sum_sent": {"bits_per_second": 1e9}, "sum_received": {"bits_per_second": %s}}}'
    with pytest.raises(ValueError, match="not finite"):
        parse_iperf3(text % value)


@pytest.mark.parametrize("path,value", [(("start", "test_start"), ["TCP"]), (("start", "connected"), {"a": 1}),
                                        (("end", "cpu_utilization_percent"), [1]),
                                        (("end", "streams"), [{"sender": [1]}])])
def test_iperf_wrong_types_raise_value_error(path, value):
    doc = json.loads(read("iperf3-3.12-debian-loopback-P2.json"))
    doc[path[0]][path[1]] = value
    with pytest.raises(ValueError, match="not an object|not a list"):
        parse_iperf3(json.dumps(doc))


def test_iperf_reverse_mode_before_3_7():
    # -R: test_start "reverse": 1 (iperf_api.c send_parameters / test_start); before 3.7 streams carry no "sender"
    doc = json.loads(read("iperf3-3.9-published-tcp.json"))
    doc["start"]["test_start"]["reverse"] = 1
    for s in doc["end"]["streams"]:
        for side in ("sender", "receiver"):
            s.get(side, {}).pop("sender", None)
    r = parse_iperf3(json.dumps(doc))
    assert r["reverse_mode"] is True and {s["direction"] for s in r["streams"]} == {"reverse"}
    assert parse_iperf3(read("iperf3-3.9-published-tcp.json"))["reverse_mode"] is False
    assert parse_iperf3(read("iperf3-3.12-debian-bidir.json"))["reverse_mode"] is False


def test_fio_reports_of_different_runs_are_refused():
    a, b = read("fio-3.33-debian-read-2jobs.json"), read("fio-3.33-debian-status-interval.json")
    with pytest.raises(ValueError, match="different runs"):
        parse_fio(a + b)  # other job names
    with pytest.raises(ValueError, match="different runs"):
        parse_fio(b + b)  # the same job starting again: its I/O count goes down
    assert parse_fio(a + a) == parse_fio(a)  # the same report twice is still one run


@pytest.mark.parametrize("mutate,why", [
    (lambda j: j["read"].update(clat_ns=[1]), "clat_ns is not an object"),
    (lambda j: j["read"]["clat_ns"].update(percentile=[1]), "percentile is not an object"),
    (lambda j: j.update(error="EIO"), "error is not a number"),
    (lambda j: j["read"].update(total_ios=float("inf")), "NaN or Infinity"),
    (lambda j: j["read"]["clat_ns"].update(mean=float("nan")), "NaN or Infinity"),
])
def test_fio_wrong_types_and_non_finite_raise_value_error(mutate, why):
    doc = json.loads(read("fio-3.33-debian-read-2jobs.json"))
    mutate(doc["jobs"][0])
    with pytest.raises(ValueError, match=why):
        parse_fio(json.dumps(doc))


# --------------------------------------------------------------------------- fio --client (client/server)

CS = "fio-3.33-debian-client-server-2hosts.txt"


def _cs_doc():
    text = read(CS)
    return text, json.loads(text[text.index("\n{") + 1:])


def test_fio_client_server_two_hosts_read():
    r = parse_fio(read(CS))
    assert r["status"] == "ok" and r["version"] == "fio-3.33"
    assert r["clients"] == ["127.0.0.1:18765", "127.0.0.2:18765"]
    assert [(j["host"], j["port"], j["read"]["total_ios"]) for j in r["jobs"]] == [
        ("127.0.0.1", 18765, 1025), ("127.0.0.2", 18765, 543)]  # the 'All clients' summary is not a job
    assert r["aggregate"]["read"]["total_ios"] == 1568 and r["aggregate"]["read"]["io_bytes"] == 1644167168
    assert parse_fio(read(CS), hosts=["127.0.0.1", "127.0.0.2:18765"])["status"] == "ok"


@pytest.mark.parametrize("name,hosts,words", [
    ("refused-fio-3.33-debian-client-server-disconnected.txt", None,
     "missing a server's stats (fio said: 'client: host=127.0.0.2 disconnected')"),
    # fio exits 0 and says 'fio: failed to connect to 127.0.0.2:18765' only on stderr: the servers given tell
    ("refused-fio-3.33-debian-client-server-connect-refused.txt", ["127.0.0.1", "127.0.0.2"],
     "no stats from 127.0.0.2 (stats from 127.0.0.1:18765 only)"),
])
def test_fio_client_server_missing_server_refused(name, hosts, words):
    with pytest.raises(ValueError) as e:
        parse_fio(read(name), hosts)
    assert words in str(e.value)


def test_fio_client_server_connect_refused_with_stderr_refused():
    text = "fio: connect: Connection refused\nfio: failed to connect to 127.0.0.2:18765\n" + read(
        "refused-fio-3.33-debian-client-server-connect-refused.txt")
    with pytest.raises(ValueError, match="fio said: 'fio: failed to connect to 127.0.0.2:18765'"):
        parse_fio(text)


def _mutated(change):
    _, doc = _cs_doc()
    change(doc)
    return json.dumps(doc)


@pytest.mark.parametrize("change,words", [
    (lambda d: d["client_stats"].insert(0, d["client_stats"].pop()), "summary is not the last"),
    (lambda d: d["client_stats"].pop(), "2 client_stats entries and no 'All clients' summary"),
    (lambda d: d["client_stats"][-1]["read"].update(total_ios=9999), "summary counts 9999 read I/Os, its entries 1568"),
    (lambda d: d.update(client_stats=[]), "no client_stats entries"),
    (lambda d: d["client_stats"][0].pop("hostname"), "entry 0 has no hostname"),
    (lambda d: d["client_stats"][1].pop("read"), "127.0.0.2: job j1 read is not an object"),
])
def test_fio_client_server_malformed(change, words):
    with pytest.raises(ValueError) as e:
        parse_fio(_mutated(change))
    assert words in str(e.value)


def test_fio_client_server_concatenated_or_mixed_refused():
    text, _ = _cs_doc()
    with pytest.raises(ValueError, match="several fio outputs concatenated"):
        parse_fio(text + text)
    with pytest.raises(ValueError, match="several fio outputs concatenated"):
        parse_fio(text + read("fio-3.33-debian-read-2jobs.json"))


def test_fio_client_server_job_error_names_the_host():
    def fail(d):
        for e in d["client_stats"][1:]:
            e["error"] = 5
    r = parse_fio(_mutated(fail))
    assert r["status"] == "error" and r["errors"] == ["127.0.0.2 job j1: error 5 (Input/output error)"]
