"""The pod-in-a-box's HCA port counters (sim/standins/podsim_hw.py fake_counter_files / write_fake_counters, the
fault ticker sim/standins/podsim_hca_ticker.py, podsim up's step): the files have the names of a real mlx5 port in
RoCE mode (prometheus/procfs's fixture) and parse with the toolkit's parser; healthy counters stay at zero and a
re-write never resets one a fault raised; the ticker's rises are what the stage fails, on the HCA it ticks."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import dgx_hca_counters as mod  # noqa: E402  (library/)
import podsim_hca_ticker as ticker  # noqa: E402
import podsim_hw as hw  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import counters_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hca_counters import parse_sysfs_counters

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PORT = "sys/class/infiniband/%s/ports/1"


@pytest.fixture
def state():
    return hw.default_state("sim-dgx2", 2)


@pytest.fixture
def tree(tmp_path, state):
    """The stand-in tree of one DGX as podsim up writes it (/etc/podsim/sysfs in the node)."""
    root = str(tmp_path / "sysfs")
    hw.write_fake_sysfs(root, state, {h["netdev"]: ["198.18.%d.12" % k] for k, h in enumerate(state["hcas"].values())},
                        live_class_net=str(tmp_path / "net"))
    return root


def procfs_names():
    with open(os.path.join(FIX, "sysfs_counters__procfs_fixtures_mlx5_0.txt")) as f:
        return {line.split(": ")[0] for line in f.read().splitlines()}


def per_hca(files, dev):
    port = PORT % dev + "/"
    return {k[len(port):]: v for k, v in files.items() if k.startswith(port) and "counters/" in k}


def test_the_counter_files_are_a_real_mlx5_ports_and_parse_as_healthy_zeros(state):
    files = hw.fake_counter_files(state)
    for dev in state["hcas"]:
        counters = per_hca(files, dev)
        assert set(counters) == procfs_names()
        values = parse_sysfs_counters(counters)
        assert values.pop("lifespan") == 10 and set(values.values()) == {0}
        assert counters_eval.parse_port_rate(files[PORT % dev + "/rate"]) == 100.0
    assert len(files) == 4 * (len(procfs_names()) + 1)


def test_a_rewrite_never_resets_a_counter_a_fault_raised(tmp_path, tree, state):
    path = os.path.join(tree, PORT % "mlx5_1", "counters/symbol_error")
    with open(path, "w") as f:
        f.write("4242\n")
    assert hw.write_fake_sysfs(tree, state, {h["netdev"]: ["198.18.%d.12" % k] for k, h in
                                             enumerate(state["hcas"].values())},
                               live_class_net=str(tmp_path / "net")) == []
    assert hw.write_fake_counters(tree, state) == []
    with open(path) as f:
        assert f.read() == "4242\n"
    os.remove(path)  # a missing one comes back healthy
    assert hw.write_fake_counters(tree, state) == [PORT % "mlx5_1" + "/counters/symbol_error"]
    assert not [n for n in os.listdir(os.path.join(tree, PORT % "mlx5_1")) if n.endswith("podsim-tmp")]


def readings(tree, t):
    return {"hca_counters": mod.gather(tree, clock=lambda: t), "error": None, "unreachable": False}


def stage(start, end):
    return counters_eval.evaluate({"hosts": {"sim-dgx2": {"start": start, "end": end}}}, {})


def test_the_module_reads_every_stand_in_hca_and_a_healthy_window_passes(tree):
    got = mod.gather(tree)
    assert sorted(got["ports"]) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"]
    assert [p["netdev"] for _, p in sorted(got["ports"].items())] == ["enp5s0", "enp12s0", "enp132s0", "enp139s0"]
    assert {p["rate"] for p in got["ports"].values()} == {"100 Gb/sec (4X EDR)"}
    results = stage(readings(tree, 100.0), readings(tree, 160.0))
    assert results and {r.status for r in results} == {"pass"}  # every judged counter of every HCA: no false alarm
    assert {r.subject.hca for r in results} == {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}


@pytest.mark.parametrize("steps, failing, words", [
    ({"counters/symbol_error": 20}, {"hca_symbol_error"}, "symbol errors"),
    ({"counters/link_downed": 1, "counters/link_error_recovery": 1}, {"hca_link_downed", "hca_link_error_recovery"},
     "flapping link")])
def test_what_the_ticker_raises_is_found_on_its_hca_only(tree, steps, failing, words):
    port = os.path.join(tree, PORT % "mlx5_1")
    start = readings(tree, 100.0)
    for _ in range(5):
        ticker.tick(port, steps)
    bad = [r for r in stage(start, readings(tree, 105.0)) if r.status != "pass"]
    assert {r.check for r in bad} == failing and {r.host for r in bad} == {"sim-dgx2 mlx5_1 (enp12s0)"}
    assert any(words in r.cause for r in bad)


def test_the_ticker_stops_at_the_ibta_field_maximum_and_writes_no_stray_file(tree):
    port = os.path.join(tree, PORT % "mlx5_3")
    with open(os.path.join(port, "counters/link_downed"), "w") as f:
        f.write("254\n")
    assert ticker.tick(port, {"counters/link_downed": 1, "counters/port_rcv_data": 1000}) == {
        "counters/link_downed": 255, "counters/port_rcv_data": 1000}
    assert ticker.tick(port, {"counters/link_downed": 1}) == {"counters/link_downed": 255}
    assert not any(n.startswith(".") for n in os.listdir(os.path.join(port, "counters")))


@pytest.mark.parametrize("argv, message", [
    ([], "usage"), (["/p"], "usage"), (["/p", "counters/symbol_error"], "not NAME=STEP"),
    (["/p", "counters/symbol_error=x"], "not NAME=STEP"), (["/p", "../../etc/passwd=1"], "not NAME=STEP"),
    (["/p", "a=1", "--interval", "0"], "positive")])
def test_the_ticker_refuses_a_bad_command_line(argv, message):
    with pytest.raises(ValueError, match=message):
        ticker.parse_args(argv)


def test_the_ticker_launcher_refuses_a_counter_that_is_not_there(tree):
    launcher = os.path.join(ROOT, "sim", "standins", "podsim-hca-ticker")
    res = subprocess.run([sys.executable, launcher, os.path.join(tree, PORT % "mlx5_0"), "counters/no_such=1"],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 1 and "no counter counters/no_such" in res.stderr
    assert ticker.parse_args(["/p", "counters/link_downed=1", "--interval", "0.5"]) == (
        "/p", {"counters/link_downed": 1}, 0.5)


def test_up_writes_the_counters_into_a_dgx_built_before_them_and_then_changes_nothing(tmp_path, state):
    import podmodel as pm
    from podsimlib.common import Paths
    from podsimlib.up import Up, hca_counter_files

    etc = tmp_path / "nodes" / "sim-dgx1" / "etc.upper" / "podsim"
    etc.mkdir(parents=True)
    (etc / "hardware.json").write_text(json.dumps(state))
    up = Up(None, pm.pod_shape(2, 1), Paths(str(tmp_path)), None)
    hca_counter_files(up)  # sim-dgx2 has no stand-in state yet, storage nodes none
    assert up.actions == ["wrote sim-dgx1's HCA counter stand-in files"]
    written = mod.gather(str(etc / "sysfs"))["ports"]
    assert sorted(written) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"]
    assert parse_sysfs_counters(written["mlx5_0/1"]["counters"])["symbol_error"] == 0
    again = Up(None, pm.pod_shape(2, 1), Paths(str(tmp_path)), None)
    hca_counter_files(again)
    assert again.actions == []
