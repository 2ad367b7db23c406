"""playbooks/switches.yml + the switch_config role against three fake switches (EOS, Cumulus, Onyx) on 127.0.0.1.

A small pod inventory (simulator-style 198.18.x addresses, which are never contacted: every switch's
switch_config_connect_host is 127.0.0.1) is written to a temporary directory. The test runs the real
ansible-playbook: first push converges, the second run reports changed=0, drift on the fake shows in
--check --diff and is fixed by the next run; build files and backups are written.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest
import yaml
from test_switch_helpers import ROOT

from sim.fakeswitch.server import FakeSwitchServer  # noqa: E402

SWITCHES = {"t-eos": ("eos", "7060CX2-32S", "Ethernet1/1"), "t-cumulus": ("cumulus", "SN3700V", "swp1"),
            "t-onyx": ("onyx", "SN2700", "1/1")}
POD = {"name": "switch-test", "ra_profile": "isilon-f800-dgx1", "simulated": True, "fabrics": [
    {"name": "data-5", "kind": "ethernet", "carries": ["compute", "storage"], "subnet": "198.18.5.0/24",
     "mtu": 9000, "roce": "lossless"},
    {"name": "data-12", "kind": "ethernet", "carries": ["compute"], "subnet": "198.18.12.0/24", "mtu": 9000,
     "roce": "lossless"},
    {"name": "data-66", "kind": "ethernet", "carries": ["compute", "storage"], "subnet": "198.18.66.0/24",
     "mtu": 9000, "roce": "lossless"},
    {"name": "mgmt", "kind": "ethernet", "carries": ["management"], "subnet": "198.18.67.0/24", "mtu": 1500}]}


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    base = tmp_path_factory.mktemp("switchpod")
    server = FakeSwitchServer(str(base / "fake"))
    for name, (platform, _, _) in SWITCHES.items():
        server.add(name, platform)
    server.start()
    inv = base / "inventory"
    (inv / "group_vars" / "all").mkdir(parents=True)
    (inv / "group_vars" / "all" / "pod.yml").write_text(yaml.safe_dump({"pod": POD}))
    nics = []
    for i, (name, (_, _, port)) in enumerate(SWITCHES.items()):
        fab = POD["fabrics"][i]
        nics.append({"name": ["enp5s0", "enp12s0", "enp132s0"][i], "fabric": fab["name"],
                     "address": fab["subnet"].replace("0/24", "11"), "speed": 100, "switch": name, "switch_port": port})
    switches = {}
    for name, (platform, model, _) in SWITCHES.items():
        switches[name] = {
            "ansible_host": "198.18.67.%d" % (250 + len(switches)),
            "switch": {"platform": platform, "model": model},
            "switch_config_connect_host": "127.0.0.1",
            "switch_config_connect_port": server.switches[name]["port"],
            "switch_config_password": "cumulus" if platform == "cumulus" else "admin"}
    hosts = {"all": {"children": {
        "dgx": {"hosts": {"t-dgx1": {"ansible_host": "198.18.67.11", "dgx_model": "dgx1", "nics": nics}}},
        "switches": {"hosts": switches, "vars": {
            "switch_config_known_hosts_file": server.known_hosts_path(),
            "switch_config_allow_management_change": True,  # the fakes start without a management address
            "switch_config_build_dir": str(base / "build")}}}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    for sw in switches.values():
        assert sw["switch_config_connect_host"] == "127.0.0.1"
    yield {"inv": str(inv), "server": server, "build": base / "build"}
    server.stop()


def playbook(pod, *args):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", pod["inv"],
                          os.path.join(ROOT, "playbooks", "switches.yml"), *args],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    recap = {m.group(1): {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
             for m in re.finditer(r"^(t-\S+)\s+:\s+(.*)$", res.stdout, re.M)}
    return res, recap


def test_converge_idempotent_drift_fixed(pod):
    res, recap = playbook(pod)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert all(recap[h]["changed"] >= 1 and recap[h]["failed"] == 0 for h in SWITCHES), recap
    for name in SWITCHES:
        assert (pod["build"] / name / "structured.yml").exists()
        assert (pod["build"] / name / "running.cfg").exists()
        assert list((pod["build"] / name / "backups").glob(name + "-*.cfg")), "no backup for %s" % name

    res, recap = playbook(pod)
    assert res.returncode == 0, res.stdout[-3000:]
    assert all(recap[h]["changed"] == 0 for h in SWITCHES), recap

    # drift on the fake EOS switch: MTU of the DGX port
    server = pod["server"]
    state = server.state("t-eos")
    for item in state["running"]:
        if item[0] == "interface Ethernet1/1":
            item[1] = ["mtu 1500" if c.startswith("mtu") else c for c in item[1]]
    server.set_state("t-eos", state)
    res, recap = playbook(pod, "--check", "--diff")
    assert res.returncode == 0, res.stdout[-3000:]
    assert recap["t-eos"]["changed"] == 1 and recap["t-cumulus"]["changed"] == 0, recap
    assert "-   mtu 1500" in res.stdout and "+   mtu 9214" in res.stdout
    assert "mtu 1500" in str(server.state("t-eos")["running"])  # check mode changed nothing
    assert "admin" not in re.findall(r"password\S*", res.stdout)

    res, recap = playbook(pod)
    assert res.returncode == 0 and recap["t-eos"]["changed"] == 1, res.stdout[-3000:]
    res, recap = playbook(pod)
    assert all(recap[h]["changed"] == 0 for h in SWITCHES), recap
