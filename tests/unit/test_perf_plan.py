"""Schedules: the round-robin tournament (property tests), storage rounds, fio steps, ETA."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.cmd import (fio_jobfile, fio_size_bytes,
    iperf_client_argv, is_our_iperf_server, listening_ports)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import (bipartite_rounds, eta_seconds, fio_files,
    fio_steps, format_eta, iperf_plan, perf_context, progress_line, round_robin)
from perf_sample import sim_model


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=40))
def test_round_robin_every_pair_once_no_host_twice(n):
    hosts = ["h%d" % i for i in range(n)]
    rounds = round_robin(hosts)
    pairs = [frozenset(p) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    assert set(pairs) == {frozenset(p) for p in itertools.combinations(hosts, 2)}
    for r in rounds:
        played = [h for p in r for h in p]
        assert len(played) == len(set(played))
        assert len(r) == n // 2
    assert len(rounds) == (0 if n < 2 else (n - 1 if n % 2 == 0 else n))


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=12), st.integers(min_value=0, max_value=12))
def test_bipartite_every_pair_once_no_host_twice(d, s):
    left, right = ["d%d" % i for i in range(d)], ["s%d" % j for j in range(s)]
    rounds = bipartite_rounds(left, right)
    pairs = [p for r in rounds for p in r]
    assert sorted(pairs) == sorted(itertools.product(left, right))
    for r in rounds:
        assert len({a for a, _ in r}) == len(r) == len({b for _, b in r})
    assert len(rounds) == (max(d, s) if d and s else 0)


def test_sim_plan_covers_every_fabric_and_ports_are_unique_per_server():
    pod, hosts, groups = sim_model()
    plan = iperf_plan(hosts, groups["dgx"], groups["storage"], pod["fabrics"])
    dgx_rounds = [r for r in plan if r["kind"] == "dgx-dgx"]
    assert len(dgx_rounds) == 3  # N-1 for 4 DGX, all four data fabrics in parallel
    data = {f["name"] for f in pod["fabrics"] if "compute" in f["carries"]}
    for fabric in data:
        pairs = {frozenset((t["client"], t["server"])) for r in dgx_rounds for t in r["tests"] if t["fabric"] == fabric}
        assert len(pairs) == 6
    for r in plan:
        used = [(t["server"], t["port"]) for t in r["tests"]]
        assert len(used) == len(set(used))
        nics = [(t[s], t[s + "_nic"]) for t in r["tests"] for s in ("client", "server")]
        assert len(nics) == len(set(nics))  # no NIC in two tests of a round
    st_tests = [t for r in plan if r["kind"] == "dgx-storage" for t in r["tests"]]
    assert all(t["reverse"] and t["link_gbps"] == 40 and t["server"].startswith("sim-isilon") for t in st_tests)
    assert len(st_tests) == 4 * 2 * 2  # 4 DGX x 2 storage nodes x 2 storage fabrics
    assert [r["round"] for r in plan] == list(range(1, len(plan) + 1))
    # every round has ports of its own (plan.round_ports): no server (address, port) serves two tests of the
    # schedule, so a round never waits for a server still busy with the previous one
    served = [(t["server_address"], t["port"]) for r in plan for t in r["tests"]]
    assert len(served) == len(set(served))
    fabrics = sorted({t["fabric"] for r in plan for t in r["tests"]})
    for i, r in enumerate(plan):
        assert all(5201 + i * len(fabrics) <= t["port"] < 5201 + (i + 1) * len(fabrics) for t in r["tests"])
    assert iperf_plan(hosts, groups["dgx"], groups["storage"], pod["fabrics"], storage_iperf=[]) == dgx_rounds


def test_perf_context_from_the_model():
    pod, hosts, groups = sim_model()
    ctx = perf_context(hosts, groups["dgx"], groups["storage"], pod["fabrics"], 16)
    assert ctx["nodes"]["sim-dgx1"] == {"storage_link_gbps": 200.0, "mounts": 16, "gpus": 8}
    assert ctx["storage"] == {"nodes": 2, "link_gbps": 160.0}
    assert ctx["sizing"]["gpus"] == 32


def test_fio_steps_and_files():
    hosts = ["h%d" % i for i in range(10)]
    assert [len(s) for s in fio_steps(hosts)] == list(range(1, 11))
    assert [len(s) for s in fio_steps(hosts, "doubling")] == [1, 2, 4, 8, 10]
    assert [len(s) for s in fio_steps(hosts, "single-and-all")] == [1, 10]
    thin = fio_steps(hosts, max_steps=4)
    assert len(thin) == 4 and len(thin[0]) == 1 and len(thin[-1]) == 10
    assert fio_steps([]) == []
    files = fio_files(["/a", "/b", "/c"], 8)
    assert [f["directory"] for f in files] == ["/a", "/b", "/c"] * 2 + ["/a", "/b"]
    assert len({f["filename"] for f in files}) == 8


def test_fio_jobfile_is_the_ra_job():
    files = fio_files(["/mnt/isilon1/fio", "/mnt/isilon2/fio"], 2)
    text = fio_jobfile(files, "read", size="64GiB", runtime=600, ramp_time=60, rate_iops=83)
    for line in ("rw=read", "bs=1024KiB", "ioengine=libaio", "direct=1", "iodepth=32", "kb_base=1000",
                 "time_based=1", "runtime=600", "ramp_time=60", "rate_iops=83", "directory=/mnt/isilon2/fio"):
        assert line in text.splitlines(), line
    layout = fio_jobfile(files, "layout")
    assert "rw=write" in layout and "time_based=1" not in layout
    assert fio_size_bytes("64GiB") == 64 * 2 ** 30 and fio_size_bytes("512MiB") == 2 ** 29
    assert fio_size_bytes("4096") == 4096
    # what fio-3.33 writes with kb_base=1000 (the job's): IEC forms binary, the others decimal
    assert fio_size_bytes("16MiB") == 16777216 and fio_size_bytes("16M") == fio_size_bytes("16mb") == 16000000
    assert fio_size_bytes("64GiB") == 64 * 2 ** 30 and fio_size_bytes("10000000") == 10000000
    assert fio_size_bytes("16M", kb_base=1024) == 16777216 and fio_size_bytes("50%") is None


def test_iperf_helpers():
    argv = iperf_client_argv("iperf3", "10.0.0.2", 5202, "10.0.0.1", 2, 300, reverse=True, length="65536")
    assert argv == ["iperf3", "-c", "10.0.0.2", "-p", "5202", "-P", "2", "-t", "300", "-J", "-B", "10.0.0.1", "-R",
                    "-l", "65536"]
    assert is_our_iperf_server(["timeout", "-k", "5", "900", "/usr/bin/iperf3", "-s", "-1", "-p", "5202"], 5202)
    assert not is_our_iperf_server(["/usr/bin/iperf3", "-s", "-p", "5203"], 5202)
    assert not is_our_iperf_server(["/usr/bin/iperf3", "-c", "x", "-p", "5202"], 5202)
    tcp = ("  sl  local_address rem_address   st\n"
           "   0: 0100007F:1451 00000000:0000 0A 00000000:00000000\n"
           "   1: 0100007F:1452 0100007F:9C40 01 00000000:00000000\n")
    assert listening_ports(tcp) == [5201]


def test_eta():
    assert eta_seconds(3, 10, 4, 20, overhead=5) == 3 * 15 + 4 * 25
    assert format_eta(59) == "59s" and format_eta(61) == "1m01s" and format_eta(3700) == "1h01m"
    assert progress_line("network round", 2, 3, 75, "dgx-dgx") == "network round 2/3 (dgx-dgx), about 1m15s left"
