"""The simulator's perftest stand-ins (sim/standins/podsim_rdma.py, launched as ib_write_bw / ib_write_lat /
ib_read_lat): what they print parses with the toolkit's perftest parser as perftest's own output does, they move real
bytes between a server and a client over a netdev's address (here the loopback), and the fault of an HCA changes
their output into perftest's failure words on both sides."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import podsim_rdma as rd
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.perftest_parse import parse_perftest
from inventory_util import ROOT

LAUNCHER = os.path.join(ROOT, "sim", "standins", "ib_write_bw")


def text(lines):
    return "\n".join(lines) + "\n"


QP = {"qpn": 0x108, "psn": 0x63AD7D, "rkey": 0x17EEDF, "vaddr": 0x7F760C947000, "ipv4": "198.18.5.11"}
PEER = dict(QP, qpn=0x76, ipv4="198.18.5.12")


@pytest.mark.parametrize("gbits", [True, False])
def test_a_bandwidth_run_prints_what_perftest_prints(gbits):
    out = parse_perftest(text(rd.render_header("ib_write_bw", "client", "mlx5_0", 3)
                              + rd.render_address("local", QP, True) + rd.render_address("remote", PEER, True)
                              + rd.render_bw_table(65536, 30000, 9.8, 9.5, 0.018, gbits)))
    assert out["ok"] and out["test"] == "RDMA_Write BW Test" and out["role"] == "client"
    assert out["settings"]["device"] == "mlx5_0" and out["settings"]["gid_index"] == 3
    assert out["local"][0]["ipv4"] == "198.18.5.11" and out["remote"][0]["ipv4"] == "198.18.5.12"
    assert out["unit"] == ("Gb/sec" if gbits else "MB/sec")
    assert out["rows"][0]["bw_average_gbps"] == pytest.approx(9.5, abs=0.01)


def test_a_slow_bandwidth_row_keeps_its_digits_and_the_server_side_parses():
    out = parse_perftest(text(rd.render_header("ib_write_bw", "server", "mlx5_3", None)
                              + rd.render_address("local", QP, True) + rd.render_bw_table(65536, 9, 0.05, 0.04, 0.0,
                                                                                          True)))
    assert out["ok"] and out["rows"][0]["bw_average_gbps"] == 0.04 and "gid_index" not in out["settings"]


@pytest.mark.parametrize("tool,title", [("ib_write_lat", "RDMA_Write Latency Test"),
                                        ("ib_read_lat", "RDMA_Read Latency Test")])
def test_a_latency_run_prints_what_perftest_prints(tool, title):
    st = rd.lat_stats([3.0] * 990 + [5.0] * 9 + [40.0])
    assert (st["t_min"], st["t_typical"], st["t_max"], st["p99"], st["p99_9"]) == (3.0, 3.0, 40.0, 5.0, 40.0)
    out = parse_perftest(text(rd.render_header(tool, "client", "mlx5_1", 3) + rd.render_address("local", QP, False)
                              + rd.render_lat_table(2, 1000, st)))
    assert out["ok"] and out["test"] == title and out["kind"] == "lat"
    assert out["rows"][0]["t_typical"] == 3.0 and out["rows"][0]["iterations"] == 1000


def test_the_failures_are_perftest_s_words():
    rtr = parse_perftest(text(rd.render_header("ib_write_bw", "server", "mlx5_1", 3)
                              + rd.render_rtr_failure(4660)))
    assert not rtr["ok"] and [e["text"] for e in rtr["errors"]] == [
        "Failed to modify QP 4660 to RTR", "Unable to Connect the HCA's through the link"]
    cut = parse_perftest(text(rd.render_header("ib_write_bw", "client", "mlx5_1", 3) + [rd.EXCHANGE_FAILED]))
    assert [e["text"] for e in cut["errors"]] == ["Failed to exchange data between server and clients"]
    refused = parse_perftest(text(rd.render_connect_failure("198.18.12.13", 18515)))
    assert refused["errors"][0]["text"] == "Couldn't connect to 198.18.12.13:18515"


def test_the_options_perftest_takes():
    o = rd.parse_args("ib_write_bw", ["-d", "mlx5_2", "-p", "18600", "-D", "3", "-x", "3", "--report_gbits", "-F",
                                      "--use_cuda=1", "198.18.66.12"])
    assert (o["dev"], o["port"], o["duration"], o["gid"], o["gbits"], o["cuda"], o["server"]) == (
        "mlx5_2", 18600, 3, 3, True, "1", "198.18.66.12")
    assert rd.parse_args("ib_write_lat", [])["size"] == 2
    with pytest.raises(ValueError):
        rd.parse_args("ib_write_bw", ["-p", "x"])


# ------------------------------------------------------------------------------------------ real runs over lo

def env(tmp_path, faults=None):
    state = tmp_path / "hardware.json"
    state.write_text(json.dumps({"hcas": {"mlx5_0": {"netdev": "lo"}, "mlx5_1": {"netdev": "lo"}}}))
    f = tmp_path / "rdma_faults.json"
    f.write_text(json.dumps(faults or {}))
    return dict(os.environ, PODSIM_HW_STATE=str(state), PODSIM_RDMA_FAULTS=str(f))


def pair(tmp_path, tool, args, server_faults=None, port=None):
    """Server then client (the client once the server says it waits: it listens by then); both outputs."""
    port = port or 21000 + os.getpid() % 20000
    exe = os.path.join(os.path.dirname(LAUNCHER), tool)
    srv = subprocess.Popen([exe, "-d", "mlx5_0", "-p", str(port)] + args, env=env(tmp_path, server_faults),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in srv.stdout:
        if "Waiting for client to connect" in line:
            break
    cli = subprocess.run([exe, "-d", "mlx5_1", "-p", str(port)] + args + ["127.0.0.1"], env=env(tmp_path),
                         capture_output=True, text=True, timeout=60)
    rest = srv.communicate(timeout=60)[0]
    return parse_perftest(cli.stdout + cli.stderr), cli.returncode, parse_perftest(
        "\n************************************\n* Waiting for client to connect... *\n" + rest), srv.returncode


def test_bandwidth_is_measured_from_bytes_that_crossed_the_link(tmp_path):
    cli, rc, srv, src = pair(tmp_path, "ib_write_bw", ["-D", "1", "--report_gbits", "-x", "3"])
    assert rc == src == 0 and cli["ok"] and srv["ok"]
    assert cli["role"] == "client" and srv["role"] == "server"
    assert cli["rows"][0]["bw_average_gbps"] > 0 and cli["rows"][0] == srv["rows"][0]
    assert cli["rows"][0]["iterations"] > 0 and cli["local"][0]["ipv4"] == "127.0.0.1"


def test_latency_is_measured_from_real_ping_pongs(tmp_path):
    cli, rc, srv, src = pair(tmp_path, "ib_write_lat", ["-n", "200"])
    assert rc == src == 0 and cli["ok"] and srv["ok"]
    row = cli["rows"][0]
    assert row["iterations"] == 200 and 0 < row["t_min"] <= row["t_typical"] <= row["t_max"]


def test_a_broken_hca_fails_on_its_side_with_rtr_and_cuts_its_peer_s_exchange(tmp_path):
    cli, rc, srv, src = pair(tmp_path, "ib_write_bw", ["-D", "1", "--report_gbits"], server_faults={"mlx5_0": "rtr"})
    assert rc == src == 1 and not cli["ok"] and not srv["ok"]
    assert srv["errors"][0]["text"].startswith("Failed to modify QP ") and srv["errors"][0]["text"].endswith("RTR")
    assert [e["text"] for e in cli["errors"]] == ["Failed to exchange data between server and clients"]


def test_a_client_without_its_server_cannot_connect(tmp_path):
    p = subprocess.run([LAUNCHER, "-d", "mlx5_1", "-p", "9", "127.0.0.1"], env=env(tmp_path), capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 1 and parse_perftest(p.stdout + p.stderr)["errors"][0]["text"] == \
        "Couldn't connect to 127.0.0.1:9"


def test_an_unknown_device_is_perftest_s_error(tmp_path):
    p = subprocess.run([LAUNCHER, "-d", "mlx5_7"], env=env(tmp_path), capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "IB device mlx5_7 not found" in p.stderr
