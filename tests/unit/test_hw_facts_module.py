"""library/dgx_hw_facts.py: gather_facts driven by the simulator's stand-in tools (their real CLI entry
point, sim/standins/podsim_hw.main) and the fake sysfs tree, then the module itself through Ansible."""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys

import pytest

from inventory_util import ROOT

facts = importlib.import_module("dgx_hw_facts")
hw = importlib.import_module("podsim_hw")

NICS = {"enp5s0": "198.18.5.11", "enp12s0": "198.18.12.11", "enp132s0": "198.18.66.11", "enp139s0": "198.18.139.11"}


def fake_class_net(root, links):
    """<root>/<netdev>/{mtu,operstate} like /sys/class/net."""
    for nd, (up, mtu) in links.items():
        os.makedirs(os.path.join(root, nd), exist_ok=True)
        with open(os.path.join(root, nd, "mtu"), "w") as f:
            f.write("%d\n" % mtu)
        with open(os.path.join(root, nd, "operstate"), "w") as f:
            f.write("up\n" if up else "down\n")


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A simulated DGX: stand-in state file, fake sysfs with the model addresses, live links in a dict."""
    state = hw.default_state("sim-dgx1", 1)
    path = tmp_path / "hardware.json"
    path.write_text(json.dumps(state))
    monkeypatch.setenv("PODSIM_HW_STATE", str(path))
    links = {nd: (True, 9000) for nd in NICS}
    net = str(tmp_path / "class_net")
    fake_class_net(net, links)
    root = str(tmp_path / "sysfs")
    hw.write_fake_sysfs(root, state, {nd: [a] for nd, a in NICS.items()}, live_class_net=net)
    monkeypatch.setattr(hw, "read_links", lambda st, sysfs="/sys/class/net": links)
    monkeypatch.setattr(hw, "read_addresses", lambda st: {nd: [a] for nd, a in NICS.items()})
    calls = []

    def run(argv):
        calls.append([os.path.basename(argv[0])] + argv[1:])
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = hw.main([os.path.basename(argv[0])] + argv[1:])
        return rc, out.getvalue(), err.getvalue()

    return {"root": root, "net": net, "links": links, "state_path": path, "run": run, "calls": calls}


def which_all(name):
    return "/usr/local/sbin/" + name if name in hw.TOOLS else None


def test_gather_on_the_simulator(node):
    dgx_hw, gids, notes, errors = facts.gather_facts(node["run"], which_all, node["root"], NICS)
    assert errors == [] and notes == [], notes
    assert set(dgx_hw["nics"]) == set(NICS)
    n = dgx_hw["nics"]["enp132s0"]
    assert n["rdma_device"] == "mlx5_2" and n["port"] == 1 and n["pci"] == "0000:84:00.0"
    assert (n["state"], n["port_state"], n["link_layer"]) == ("Up", "PORT_ACTIVE", "Ethernet")
    assert (n["active_mtu"], n["max_mtu"], n["kernel_mtu"], n["operstate"]) == (4096, 4096, 9000, "up")
    assert n["ipv4"] == "198.18.66.11" and n["roce_v2_ipv4_gid_index"] == 3 and n["gid_error"] is None
    assert [(g["index"], g["type"], g["ipv4"]) for g in n["gids"]] == [
        (0, "RoCE v1", None), (1, "RoCE v2", None), (2, "RoCE v1", "198.18.66.11"), (3, "RoCE v2", "198.18.66.11")]
    assert n["link_type"] == {"current": None, "next_boot": "ETH"}  # the stand-in prints only "Next Boot"
    assert n["qos"] == {"trust": "pcp", "pfc_priorities": [], "pfc_enabled": [0] * 8}
    assert n["roce_mode"] == "RoCE v1"
    assert gids == {"mlx5_0": 3, "mlx5_1": 3, "mlx5_2": 3, "mlx5_3": 3}
    assert len(dgx_hw["gpus"]) == 8
    g = dgx_hw["gpus"][0]
    assert g["name"] == "Tesla V100-SXM2-32GB" and g["memory_total_mib"] == 32480
    assert g["pci_bus_id"] == "00000000:06:00.0" and g["driver_version"] == "418.67" and g["uuid"].startswith("GPU-")
    assert set(dgx_hw["tools"].values()) == {"present"} and dgx_hw["tool_errors"] == {}
    # mlxconfig is asked by PCI address (what real MFT accepts), read-only commands only
    assert ["mlxconfig", "-d", "0000:05:00.0", "-e", "q"] in node["calls"]
    assert not any("set" in c or "-m" in c or "--trust" in c for c in node["calls"])


def test_after_the_role_configured_roce(node):
    state = json.loads(node["state_path"].read_text())
    for h in state["hcas"].values():
        h["roce_mode"] = 2
        h["mlxconfig"]["LINK_TYPE_P1"]["next_boot"] = 2
    for q in state["qos"].values():
        q.update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    node["state_path"].write_text(json.dumps(state))
    dgx_hw, _, _, _ = facts.gather_facts(node["run"], which_all, node["root"], NICS, gather=["nics", "qos",
                                                                                              "roce_mode"])
    n = dgx_hw["nics"]["enp5s0"]
    assert n["qos"]["trust"] == "dscp" and n["qos"]["pfc_priorities"] == [3] and n["roce_mode"] == "RoCE v2"
    assert "link_type" not in n and dgx_hw["gpus"] == []


def test_link_down_and_small_mtu(node):
    node["links"]["enp12s0"] = (False, 1500)
    fake_class_net(node["net"], node["links"])
    dgx_hw, _, _, _ = facts.gather_facts(node["run"], which_all, node["root"], NICS, gather=["nics"])
    n = dgx_hw["nics"]["enp12s0"]
    assert (n["state"], n["port_state"], n["active_mtu"], n["kernel_mtu"], n["operstate"]) == (
        "Down", "PORT_DOWN", 1024, 1500, "down")


def test_address_without_gid_is_reported(node):
    wrong = dict(NICS, enp139s0="10.55.139.231")
    dgx_hw, gids, notes, errors = facts.gather_facts(node["run"], which_all, node["root"], wrong, gather=["nics"])
    assert len(errors) == 1
    assert errors[0].startswith("enp139s0: mlx5_3: no RoCE v2 GID for 10.55.139.231 on port 1")
    assert "3=198.18.139.11 (RoCE v2, enp139s0)" in errors[0]
    assert dgx_hw["nics"]["enp139s0"]["roce_v2_ipv4_gid_index"] is None and "mlx5_3" not in gids
    # without a model address: the port's single RoCE v2 IPv4 GID
    _, gids, notes, errors = facts.gather_facts(node["run"], which_all, node["root"], {}, gather=["nics"])
    assert errors == [] and gids["mlx5_3"] == 3


def test_without_tools_sysfs_only(node):
    dgx_hw, gids, notes, errors = facts.gather_facts(node["run"], lambda name: None, node["root"], NICS)
    assert set(dgx_hw["tools"].values()) == {"absent"}
    n = dgx_hw["nics"]["enp5s0"]
    assert n["rdma_device"] == "mlx5_0" and n["link_layer"] == "Ethernet" and n["kernel_mtu"] == 9000
    assert n["state"] is None and n["active_mtu"] is None and n["roce_v2_ipv4_gid_index"] == 3
    assert gids["mlx5_0"] == 3 and dgx_hw["gpus"] == [] and errors == []
    text = "\n".join(notes)
    for words in ("ibdev2netdev absent", "ibv_devinfo absent", "mlxconfig absent", "mlnx_qos absent",
                  "cma_roce_mode absent", "nvidia-smi absent"):
        assert words in text
    assert node["calls"] == []


def test_failing_or_unreadable_tool_is_a_note_not_a_crash(node, monkeypatch):
    def run(argv):
        if argv[0].endswith("nvidia-smi"):
            return 9, "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
        if argv[0].endswith("ibv_devinfo"):
            return 0, "Segmentation fault\n", ""
        return node["run"](argv)

    dgx_hw, _, notes, _ = facts.gather_facts(run, which_all, node["root"], NICS, gather=["nics", "gpus"])
    errs = dgx_hw["tool_errors"]
    assert errs["nvidia-smi --query-gpu=index,name,uuid,serial,pci.bus_id,memory.total,driver_version "
                "--format=csv,noheader,nounits"].startswith("exit 9: NVIDIA-SMI has failed")
    assert "ibv_devinfo output line 1: expected 'key: value'" in errs["ibv_devinfo "]
    assert dgx_hw["gpus"] == [] and dgx_hw["nics"]["enp5s0"]["link_layer"] == "Ethernet"  # sysfs fallback
    assert any(n.startswith("nvidia-smi --query-gpu") for n in notes)


def cut_qos(node, netdev="enp5s0", drop=3):
    """A run() whose `mlnx_qos -i NETDEV` output is cut off (its last lines missing)."""
    def run(argv):
        rc, out, err = node["run"](argv)
        if argv[0].endswith("mlnx_qos") and argv[1:] == ["-i", netdev]:
            out = "".join(out.splitlines(True)[:-drop])
        return rc, out, err
    return run


def test_unreadable_mlnx_qos_is_an_error_with_the_ofed_version(node):
    dgx_hw, _, notes, _ = facts.gather_facts(cut_qos(node), which_all, node["root"], NICS,
                                             gather=["nics", "qos"])
    n = dgx_hw["nics"]["enp5s0"]
    assert "qos" not in n and "TC table maps priorities" in n["qos_error"]
    (u,) = dgx_hw["unreadable"]
    assert u["tool"] == "mlnx_qos" and u["command"] == "mlnx_qos -i enp5s0"
    assert u["version"] == "MLNX_OFED_LINUX-24.10-1.1.4.0"  # from the ofed_info stand-in
    assert dgx_hw["nics"]["enp12s0"]["qos"]["trust"] == "pcp"  # the others are read
    msg = facts.unreadable_message("dgx-07", dgx_hw["unreadable"])
    assert msg.startswith("dgx-07: 1 tool output(s) could not be read") and "MLNX_OFED_LINUX-24.10" in msg


def test_unreadable_without_a_version_tool_says_so(node):
    def which(name):
        return None if name == "ofed_info" else which_all(name)
    dgx_hw, _, _, _ = facts.gather_facts(cut_qos(node), which, node["root"], NICS, gather=["nics", "qos"])
    assert dgx_hw["unreadable"][0]["version"] == "version unknown (ofed_info -s absent)"


@pytest.mark.parametrize("ofed", ["MLNX_OFED_LINUX-4.9-7.1.0.0", "MLNX_OFED_LINUX-5.8-3.0.7.0",
                                  "MLNX_OFED_LINUX-24.10-1.1.4.0", "OFED-internal-25.01-0.6.0"])
def test_qos_read_in_every_ofed_format(node, ofed):
    state = json.loads(node["state_path"].read_text())
    state["ofed"] = ofed
    state["qos"]["enp5s0"].update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    node["state_path"].write_text(json.dumps(state))
    dgx_hw, _, _, _ = facts.gather_facts(node["run"], which_all, node["root"], NICS, gather=["nics", "qos"])
    assert dgx_hw["unreadable"] == []
    assert dgx_hw["nics"]["enp5s0"]["qos"] == {"trust": "dscp", "pfc_priorities": [3],
                                               "pfc_enabled": [0, 0, 0, 1, 0, 0, 0, 0]}


def test_netdevs_filter_and_empty_host(node, tmp_path):
    dgx_hw, gids, _, _ = facts.gather_facts(node["run"], which_all, node["root"], NICS, netdevs=["enp5s0"],
                                            gather=["nics"])
    assert list(dgx_hw["nics"]) == ["enp5s0"] and gids == {"mlx5_0": 3}
    empty = str(tmp_path / "empty")
    os.makedirs(empty)
    dgx_hw, gids, notes, _ = facts.gather_facts(node["run"], lambda n: None, empty, {}, gather=["nics"])
    assert dgx_hw["nics"] == {} and gids == {} and any("no RDMA device found" in n for n in notes)


# ---- the module through Ansible (the stand-ins on PATH, a fake sysfs root) --------------------------

def run_module(tmp_path, args, standins_on_path=True, first_on_path=None):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"))
    path = os.environ["PATH"]
    if standins_on_path:
        path = os.path.join(ROOT, "sim", "standins") + ":" + path
    if first_on_path:
        path = first_on_path + ":" + path
    env["PATH"] = path
    cmd = [os.path.join(ROOT, ".venv", "bin", "ansible"), "localhost", "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=" + sys.executable, "-m", "dgx_hw_facts", "-a", json.dumps(args)]
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    data = json.loads(res.stdout)
    return res, data["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_module_through_ansible(node, tmp_path):
    res, out = run_module(tmp_path, {"sysfs_root": node["root"], "addresses": NICS, "gather": ["nics", "qos"]})
    assert res.returncode == 0, res.stdout + res.stderr
    hwf = out["ansible_facts"]["dgx_hw"]
    assert out["ansible_facts"]["dgx_hw_gid_indexes"] == {"mlx5_0": 3, "mlx5_1": 3, "mlx5_2": 3, "mlx5_3": 3}
    assert hwf["nics"]["enp5s0"]["gids"][3]["ipv4"] == "198.18.5.11" and out["changed"] is False
    assert hwf["tools"]["ibdev2netdev"] == "present" and hwf["nics"]["enp5s0"]["qos"]["trust"] == "pcp"


def test_module_fails_on_unreadable_mlnx_qos_naming_host_and_version(node, tmp_path):
    # an mlnx_qos whose output is cut off after the PFC rows (e.g. a crash while printing the TCs)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "real").mkdir()
    (bindir / "real" / "mlnx_qos").symlink_to(os.path.join(ROOT, "sim", "standins", "podsim_hw.py"))
    script = bindir / "mlnx_qos"
    script.write_text("#!/bin/sh\n%s/real/mlnx_qos \"$@\" | head -n 8\n" % bindir)
    script.chmod(0o755)
    res, out = run_module(tmp_path, {"sysfs_root": node["root"], "addresses": NICS, "gather": ["nics", "qos"]},
                          first_on_path=str(bindir))
    assert res.returncode != 0 and out["failed"], out
    assert "could not be read" in out["msg"] and "mlnx_qos -i enp5s0 (MLNX_OFED_LINUX-24.10-1.1.4.0)" in out["msg"]
    assert "no PFC 'enabled' row" in out["msg"] or "TC table" in out["msg"]
    assert os.uname().nodename in out["msg"] and len(out["unreadable"]) == 4
    res, out = run_module(tmp_path, {"sysfs_root": node["root"], "addresses": NICS, "gather": ["nics", "qos"],
                                     "fail_on_unreadable": False}, first_on_path=str(bindir))
    assert res.returncode == 0 and "qos_error" in out["ansible_facts"]["dgx_hw"]["nics"]["enp5s0"]


def test_module_fails_naming_device_and_address(node, tmp_path):
    res, out = run_module(tmp_path, {"sysfs_root": node["root"], "gather": ["nics"],
                                     "addresses": dict(NICS, enp12s0="10.55.12.231/24")})
    assert res.returncode != 0 and out["failed"]
    assert "have no RoCEv2 GID for their model address" in out["msg"]
    assert len(out["gid_errors"]) == 1
    assert out["gid_errors"][0].startswith("enp12s0: mlx5_1: no RoCE v2 GID for 10.55.12.231 on port 1")
    res, out = run_module(tmp_path, {"sysfs_root": node["root"], "gather": ["nics"], "fail_on_missing_gid": False,
                                     "addresses": dict(NICS, enp12s0="10.55.12.231")})
    assert res.returncode == 0 and out["ansible_facts"]["dgx_hw"]["nics"]["enp12s0"]["gid_error"]
    res, out = run_module(tmp_path, {"sysfs_root": str(tmp_path / "nope")})
    assert res.returncode != 0 and "is not a directory" in out["msg"]


def test_infiniband_port_needs_no_gid_index(node, tmp_path):
    # mlx5_1 rebooted into IB mode: ibv_devinfo says InfiniBand, the (re)written tree has no RoCE GIDs
    state = json.loads(node["state_path"].read_text())
    state["hcas"]["mlx5_1"]["mlxconfig"]["LINK_TYPE_P1"] = {"current": 1, "next_boot": 1}
    node["state_path"].write_text(json.dumps(state))
    hw.write_fake_sysfs(node["root"], state, {nd: [a] for nd, a in NICS.items()}, live_class_net=node["net"])
    dgx_hw, gids, notes, errors = facts.gather_facts(node["run"], which_all, node["root"], NICS,
                                                     gather=["nics", "mlxconfig", "qos", "roce_mode"])
    n = dgx_hw["nics"]["enp12s0"]
    assert n["link_layer"] == "InfiniBand" and n["roce_v2_ipv4_gid_index"] is None and n["gid_error"] is None
    assert n["link_type"]["next_boot"] == "IB" and "qos" not in n and "roce_mode" not in n
    assert errors == [] and "mlx5_1" not in gids and gids["mlx5_0"] == 3
