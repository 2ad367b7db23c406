"""playbooks/validate_switches.yml (validate.yml --tags switches) with the real ansible-playbook against a fake EOS
switch on 127.0.0.1: a copy of the pod-in-a-box inventory whose sim-sw1 points at the fake (cabled like the
simulator: sim/podmodel.switch_wiring) and whose sim-sw2 points at a closed port. The stage records
pod_stages.switches on localhost; sim-sw1 passes after the deploy, then a lowered MTU is found; sim-sw2 is error.

Every connection goes to 127.0.0.1; the inventory's 198.18.x hosts are never contacted (only the switch plays run).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest
import yaml
from inventory_util import copy_inventory
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.eval import evaluate
from test_switch_helpers import ROOT

import podmodel as pm  # noqa: E402

from sim.fakeswitch.server import FakeSwitchServer  # noqa: E402


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    base = tmp_path_factory.mktemp("swvalpod")
    server = FakeSwitchServer(str(base / "fake"))
    server.add("sim-sw1", "eos", wiring=pm.switch_wiring(pm.pod_shape(4, 2))["sim-sw1"])
    server.start()
    inv = copy_inventory("sim", str(base / "inv"))
    held = socket.socket()  # bound and never listened on while the module runs: refuses, and no other test takes it
    held.bind(("127.0.0.1", 0))
    closed = held.getsockname()[1]
    os.makedirs(os.path.join(inv, "host_vars"), exist_ok=True)
    for name, port in (("sim-sw1", server.switches["sim-sw1"]["port"]), ("sim-sw2", closed)):
        with open(os.path.join(inv, "host_vars", name + ".yml"), "w") as fh:
            yaml.safe_dump({"switch_config_connect_host": "127.0.0.1", "switch_config_connect_port": port,
                            "switch_config_known_hosts_file": server.known_hosts_path(),
                            "switch_config_connect_timeout": 3, "switch_config_validate_interval": 0,
                            "switch_config_build_dir": str(base / "build")}, fh)
    wrapper = base / "validate_switches_dump.yml"
    wrapper.write_text(yaml.safe_dump([
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_switches.yml")},
        {"name": "dump", "hosts": "localhost", "gather_facts": False, "tasks": [
            {"ansible.builtin.copy": {"content": "{{ pod_stages | to_json }}", "dest": str(base / "stages.json"),
                                      "mode": "0644"}}]}]))
    # as validate.yml runs it: the read starts right after preflight (async), the stage waits for it later
    started = base / "validate_switches_started.yml"
    started.write_text(yaml.safe_dump([
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_switches_start.yml")},
        {"name": "between", "hosts": "localhost", "gather_facts": False, "tasks": [
            {"ansible.builtin.debug": {"msg": "the node checks run here"}}]}]
        + yaml.safe_load(wrapper.read_text())))
    yield {"inv": inv, "server": server, "wrapper": str(wrapper), "started": str(started),
           "stages": base / "stages.json"}
    held.close()
    server.stop()


def ansible(pod, playbook, *args):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    return subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", pod["inv"], playbook, *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def stage_checks(pod, wrapper="wrapper"):
    res = ansible(pod, pod[wrapper])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    stages = json.loads(pod["stages"].read_text())
    return stages["switches"], [c.to_dict() for c in evaluate(stages["switches"], {}, {})], res.stdout


def test_the_stage_records_readings_passes_a_deployed_switch_and_names_an_unreachable_one(pod):
    res = ansible(pod, os.path.join(ROOT, "playbooks", "switches.yml"), "--limit", "sim-sw1")
    assert res.returncode == 0, res.stdout[-3000:]
    before = pod["server"].state("sim-sw1")["running"]
    recorded, checks, _ = stage_checks(pod)
    assert recorded["expected"] == ["sim-sw1", "sim-sw2"]
    assert pod["server"].state("sim-sw1")["running"] == before  # read-only
    problems = [c for c in checks if c["status"] in ("fail", "error")]
    assert [(c["check"], c["host"]) for c in problems] == [("switch_connect", "sim-sw2")], problems
    assert "cannot read sim-sw2" in problems[0]["reason"]
    sw1 = [c for c in checks if c["host"].startswith("sim-sw1")]
    assert len(sw1) > 40 and all(c["status"] == "pass" for c in sw1)
    rec = next(r for r in recorded["switches"] if r["name"] == "sim-sw1")
    assert "invocation" not in rec["result"] and "admin" not in json.dumps(rec)  # no module args, no password

    state = pod["server"].state("sim-sw1")
    for item in state["running"]:
        if item[0] == "interface Ethernet6/1":
            item[1] = ["mtu 1500" if c.startswith("mtu") else c for c in item[1]]
    pod["server"].set_state("sim-sw1", state)
    for wrapper in ("wrapper", "started"):
        _, checks, out = stage_checks(pod, wrapper)
        mtu = [c for c in checks if c["check"] == "switch_port_mtu" and c["status"] == "fail"]
        assert [c["host"] for c in mtu] == ["sim-sw1 Ethernet6/1"] and "sim-dgx2 enp12s0" in mtu[0]["cause"]
        assert [c["host"] for c in checks if c["status"] == "error"] == ["sim-sw2"]
        # run alone the stage starts the read itself; after validate_switches_start.yml it only waits for it
        start = out.split("TASK [switch_config : Start the read (when validate.yml did not")[1].split("TASK [")[0]
        if wrapper == "wrapper":
            assert "included:" in start and "skipping" not in start, start
        else:
            assert start.count("skipping: [sim-sw") == 2 and "included:" not in start, start
            assert out.index("the node checks run here") < out.index("Wait for the switch's readings")
            assert out.index("Start reading the switch") < out.index("the node checks run here")
