"""`sim/podsim switch`: a fake switch's config, faults and CLI lines, on a state directory of its own (no root,
no server: the verb works on the state file the server reads at every line), and `down`'s reset of it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from podsimlib.common import Paths  # noqa: E402
from podsimlib.switches import reset_fake_switches  # noqa: E402

from sim.fakeswitch.cli import new_state  # noqa: E402
from sim.fakeswitch.server import write_state  # noqa: E402


@pytest.fixture
def state(tmp_path):
    sw = tmp_path / "switches"
    sw.mkdir()
    write_state(str(sw / "sim-sw1.json"), new_state("eos", "sim-sw1"))
    (sw / "ssh_host_ed25519_key").write_text("key\n")
    return tmp_path


def podsim_switch(state, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "switch", *args],
                          env=dict(os.environ, PODSIM_STATE=str(state)), capture_output=True, text=True,
                          timeout=60)


def saved(state):
    with open(state / "switches" / "sim-sw1.json") as fh:
        return json.load(fh)


def test_cli_lines_change_the_running_config_like_a_console_session(state):
    res = podsim_switch(state, "sim-sw1", "--cli", "enable", "--cli", "configure", "--cli", "interface Ethernet1/1",
                        "--cli", "mtu 1500", "--cli", "end", "--show")
    assert res.returncode == 0, res.stderr
    assert "sim-sw1(config-if-Et1/1)#mtu 1500" in res.stdout  # the prompt the line was typed at
    assert "interface Ethernet1/1\n   mtu 1500" in res.stdout  # --show after the lines
    assert ["interface Ethernet1/1", ["mtu 1500"]] in saved(state)["running"]


def test_a_rejected_cli_line_exits_1_with_the_vendor_error(state):
    res = podsim_switch(state, "sim-sw1", "--cli", "enable", "--cli", "configure", "--cli", "mtu bogus")
    assert res.returncode == 1 and "% Invalid input" in res.stdout, res.stdout


def test_faults_are_set_merged_and_cleared(state):
    assert podsim_switch(state, "sim-sw1", "--fault", "reject=^mtu 9214").returncode == 0
    assert podsim_switch(state, "sim-sw1", "--fault", "drop_after_commit=1").returncode == 0
    assert saved(state)["faults"] == {"reject": "^mtu 9214", "drop_after_commit": 1}
    res = podsim_switch(state, "sim-sw1", "--clear-faults", "--fault", "delay=0.5")
    assert res.returncode == 0 and saved(state)["faults"] == {"delay": 0.5}
    assert podsim_switch(state, "sim-sw1", "--clear-faults").returncode == 0
    assert saved(state)["faults"] == {}


@pytest.mark.parametrize("spec, says", [
    ("reject", "use KEY=VALUE"), ("explode=1", "use KEY=VALUE"), ("drop_after_lines=x", "drop_after_lines"),
    ("drop_after_commit=-1", "negative"), ("reject=^mtu [", "unterminated"),
    ("port_down=Et1/1", "expected ports"), ("swap=Ethernet1/1", "expected two ports"),
    ("port_speed=Ethernet1/1", "expected port:gbps")])
def test_bad_faults_are_refused_and_change_nothing(state, spec, says):
    res = podsim_switch(state, "sim-sw1", "--fault", spec)
    assert res.returncode == 2 and says in res.stderr, res.stderr
    assert saved(state)["faults"] == {}


def test_operational_faults_port_down_speed_swap_and_rising_counters(state):
    res = podsim_switch(state, "sim-sw1", "--fault", "port_down=Ethernet3/1", "--fault", "port_speed=Ethernet4/1:40",
                        "--fault", "swap=Ethernet1/1,Ethernet2/1", "--fault", "errors_rising=Ethernet5/1,Ethernet6/1")
    assert res.returncode == 0, res.stderr
    assert saved(state)["faults"] == {"port_down": "Ethernet3/1", "port_speed": "Ethernet4/1:40",
                                      "swap": "Ethernet1/1,Ethernet2/1", "errors_rising": "Ethernet5/1,Ethernet6/1"}


def test_the_simulator_wiring_cables_every_modelled_nic_and_the_inter_switch_link():
    import podmodel as pm
    wiring = pm.switch_wiring(pm.pod_shape(4, 2))
    assert (wiring["sim-sw1"]["Ethernet1/1"]["host"], wiring["sim-sw1"]["Ethernet1/1"]["nic"]) == ("sim-dgx1", "enp5s0")
    assert wiring["sim-sw2"]["Ethernet10/1"] == {"host": "sim-isilon2", "nic": "40gige-1", "speed": 40,
                                                 "mac": "02:53:49:50:02:01"}
    assert wiring["sim-sw1"]["Ethernet32/1"]["host"] == "sim-sw2"
    assert len(wiring["sim-sw1"]) == 4 * 2 + 2 + 2


def test_an_unknown_switch_is_named(state):
    res = podsim_switch(state, "sim-sw7", "--show")
    assert res.returncode == 1 and "no fake switch sim-sw7" in res.stderr and "sim-sw1, sim-sw2" in res.stderr


def test_down_resets_the_switches_to_factory_but_keeps_the_host_key(state):
    (state / "switches" / "ready.json").write_text("{}")
    reset_fake_switches(Paths(str(state)))
    assert sorted(os.listdir(state / "switches")) == ["ssh_host_ed25519_key"]
