"""scripts/sensitivity.py's pure parts: the peers' rate from a healthy report, the judge, the summary."""
from __future__ import annotations

import sensitivity as sens


def _iperf(client, cnic, server, snic, fabric, gbps, kind="dgx-dgx", status="ok"):
    return {"client": client, "client_nic": cnic, "server": server, "server_nic": snic, "fabric": fabric,
            "kind": kind, "status": status, "result": {"received_bps": gbps * 1e9} if status == "ok" else {}}


def test_the_peers_rate_leaves_out_the_node_and_other_fabrics_and_kinds():
    tests = [_iperf("sim-dgx1", "enp12s0", "sim-dgx2", "enp12s0", "data-12", 0.3),   # through the node: out
             _iperf("sim-dgx1", "enp12s0", "sim-dgx3", "enp12s0", "data-12", 2.0),
             _iperf("sim-dgx3", "enp12s0", "sim-dgx4", "enp12s0", "data-12", 2.4),
             _iperf("sim-dgx1", "enp12s0", "sim-dgx4", "enp12s0", "data-12", 2.2),
             _iperf("sim-dgx1", "enp5s0", "sim-dgx3", "enp5s0", "data-5", 9.0),       # other fabric: out
             _iperf("sim-dgx1", "enp12s0", "sim-isilon1", "40gige-1", "data-12", 9.0, kind="dgx-storage"),
             _iperf("sim-dgx3", "enp12s0", "sim-dgx1", "enp12s0", "data-12", 0, status="error")]
    res = {"measurements": {"iperf": {"tests": tests}}}
    assert sens.peers_rate_gbps(res, "network", "sim-dgx2", "enp12s0") == 2.2
    assert sens.peers_rate_gbps(res, "network", "sim-dgx9", "enp12s0") is None  # the NIC is in no test
    nccl = {"measurements": {"nccl": {"all": {"plateau_busbw": 0.15}}}}
    assert abs(sens.peers_rate_gbps(nccl, "nccl", "sim-dgx3", "enp132s0") - 1.2) < 1e-9


def test_found_needs_the_node_named_and_other_nodes_failing_are_false_alarms():
    named = {"findings": [{"host": "sim-dgx2", "cause": "sim-dgx2 enp12s0 is low in 3 tests", "summary": "",
                           "root": None, "explains": [{"check": "iperf_relative"}]}],
             "checks": [{"check": "iperf_relative", "host": "sim-dgx1<->sim-dgx2", "status": "fail"},
                        {"check": "iperf_relative", "host": "sim-dgx1<->sim-isilon2", "status": "fail"},
                        {"check": "nccl_relative", "host": "all (4 DGX)", "status": "fail"}]}  # includes the node
    got = sens.judge(named, "network", "sim-dgx2", "enp12s0")
    assert got["found"] and got["false_alarms"] == ["sim-dgx1<->sim-isilon2"]
    missed = {"findings": [], "checks": []}
    assert not sens.judge(missed, "network", "sim-dgx2", "enp12s0")["found"]


def test_the_mildest_slowdown_found_counts_only_below_the_first_miss():
    rows = [{"stage": "network", "fraction": f, "found": ok}
            for f, ok in ((0.8, False), (0.7, True), (0.6, False), (0.5, True), (0.4, True))]
    assert sens.smallest_found(rows, "network") == 0.5  # 0.7 found by luck above a miss does not count
    assert sens.smallest_found([{"stage": "nccl", "fraction": 0.4, "found": False}], "nccl") is None


def test_the_doc_block_is_replaced_in_place():
    text = "intro\n\n" + sens.BEGIN + "\nold\n" + sens.END + "\n\nafter\n"
    row = {"stage": "network", "node": "sim-dgx2", "nic": "enp12s0", "peers_gbps": 2.2, "fraction": 0.5,
           "mbit": 1100, "found": True, "top": "sim-dgx2: low", "false_alarms": [], "seconds": 120.0}
    new = sens.update_doc(text, sens.render([row]), "2026-11-24 02:00 UTC", "network: found down to 50 %.")
    assert new.startswith("intro\n\n" + sens.BEGIN) and new.endswith(sens.END + "\n\nafter\n")
    assert "| network | sim-dgx2 enp12s0 | 2.20 Gb/s | 50 % (1100 Mbit/s) | yes |" in new and "old" not in new
    appended = sens.update_doc("doc\n", "t\n", "now", "s")
    assert appended.endswith(sens.END + "\n") and "## Sensitivity" in appended
