"""The simulator's Spectrum Scale STAND-INS (sim/standins/podsim_scale.py) - test doubles, not IBM's commands.
Their renderers must parse with the toolkit's parsers (which are tested against real outputs), their state
changes must behave like the commands' documented effects, and the command-line wrappers must keep state in
the shared directory."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import (parse_mmgetstate,
    parse_mmlscluster, parse_mmlsconfig, parse_mmlslicense, parse_mmlsmount)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANDINS = os.path.join(ROOT, "sim", "standins")

import podsim_scale as ps  # noqa: E402


@pytest.fixture
def cluster():
    return ps.new_cluster("ess.pod", ["ess1", "ess2"], ["fs1"], {"ess1": "198.18.66.211"})


def test_renderers_parse_like_the_real_formats(cluster):
    ps.op_addnode(cluster, "dgx1", "198.18.66.11", None)
    ps.op_chlicense(cluster, "client", ["dgx1"])
    ps.op_chconfig(cluster, {"verbsRdma": "enable", "verbsPorts": "mlx5_0/1 mlx5_2/1"}, ["dgx1"])
    c = parse_mmlscluster(ps.render_mmlscluster(cluster))
    assert c["cluster_name"] == "ess.pod" and [n["daemon_name"] for n in c["nodes"]] == ["ess1", "ess2", "dgx1"]
    assert c["nodes"][0]["designation"] == "quorum-manager" and c["nodes"][2]["designation"] == ""
    assert c["nodes"][0]["ip"] == "198.18.66.211"
    lic = parse_mmlslicense(ps.render_mmlslicense(cluster))
    assert lic["dgx1"] == {"required": "client", "designated": "client"}
    cfg = parse_mmlsconfig(ps.render_mmlsconfig(cluster))
    assert cfg["cluster_name"] == "ess.pod" and cfg["filesystems"] == ["fs1"]
    assert cfg["sections"] == [{"nodes": ["dgx1"],
                                "values": {"verbsPorts": "mlx5_0/1 mlx5_2/1", "verbsRdma": "enable"}}]
    states = parse_mmgetstate(ps.render_mmgetstate(cluster, cluster["nodes"], long=True))
    assert [(s["name"], s["state"]) for s in states] == [("ess1", "active"), ("ess2", "active"), ("dgx1", "down")]
    assert states[0]["quorum"] == 2 and states[0]["remarks"] == "quorum node"
    assert parse_mmgetstate(ps.render_mmgetstate(cluster, cluster["nodes"][:1]))[0]["state"] == "active"
    mounts = parse_mmlsmount(ps.render_mmlsmount(cluster))
    assert [n["name"] for n in mounts["fs1"]["nodes"]] == ["ess1", "ess2"] and mounts["fs1"]["owner"] == "ess.pod"


def test_state_changes(cluster):
    with pytest.raises(ps.StandinError, match="already belongs to GPFS cluster lab"):
        ps.op_addnode(cluster, "dgx1", "0.0.0.0", "lab")
    out = ps.op_addnode(cluster, "dgx1", "0.0.0.0", None)
    assert "mmaddnode: Processing node dgx1" in out and "mmchlicense command" in out
    with pytest.raises(ps.StandinError, match="GPFS is not installed"):
        ps.op_startup(cluster, ["dgx1"], {}, "6.1.0")
    with pytest.raises(ps.StandinError, match="portability layer is not built"):
        ps.op_startup(cluster, ["dgx1"], {"dgx1": {"packages": ["gpfs.base"]}}, "6.1.0")
    ps.op_startup(cluster, ["dgx1"], {"dgx1": {"packages": ["gpfs.base"], "gpl_kernel": "6.1.0"}}, "6.1.0")
    assert ps.find_member(cluster, "dgx1")["daemon"] == "active"
    ps.op_mount(cluster, "fs1", ["dgx1"])
    assert "dgx1" in cluster["filesystems"]["fs1"]["mounted_on"]
    ps.op_shutdown(cluster, ["dgx1"])
    assert "dgx1" not in cluster["filesystems"]["fs1"]["mounted_on"]
    with pytest.raises(ps.StandinError, match="daemon is down"):
        ps.op_mount(cluster, "fs1", ["dgx1"])
    with pytest.raises(ps.StandinError, match="does not belong to GPFS cluster ess.pod"):
        ps.op_chlicense(cluster, "client", ["dgx9"])


def run(tool, state, node, *args):
    env = dict(os.environ, PODSIM_SCALE_DIR=state, PODSIM_SCALE_NODE=node)
    return subprocess.run([os.path.join(STANDINS, tool), *args], env=env, capture_output=True, text=True)


def test_cli_keeps_shared_state(tmp_path):
    state = str(tmp_path)
    r = run("podsim-scale", state, "x", "init", "--cluster", "ess.pod", "--servers", "ess1", "--fs", "fs1")
    assert r.returncode == 0
    r = run("mmlscluster", state, "dgx1")
    assert r.returncode == 127 and "not installed" in r.stderr  # no packages on dgx1 yet
    assert "(changed)" in run("podsim-scale", state, "dgx1", "install", "--source", "/srv/debs").stdout
    assert "already installed" in run("podsim-scale", state, "dgx1", "install").stdout
    r = run("mmlscluster", state, "dgx1")
    assert r.returncode == 1 and "does not belong to a GPFS cluster" in r.stderr
    assert run("mmaddnode", state, "ess1", "-N", "dgx1").returncode == 0
    assert run("mmchlicense", state, "ess1", "client", "--accept", "-N", "dgx1").returncode == 0
    assert run("mmstartup", state, "ess1", "-N", "dgx1").returncode == 1  # no GPL yet
    assert run("mmbuildgpl", state, "dgx1").returncode == 0
    assert os.path.exists(os.path.join(state, "nodes", "dgx1", "lib", "modules", os.uname().release, "extra",
                                       "mmfs26.ko"))
    assert run("mmstartup", state, "ess1", "-N", "dgx1").returncode == 0
    assert run("mmmount", state, "ess1", "fs1", "-N", "dgx1").returncode == 0
    # seen from the client node itself
    assert parse_mmgetstate(run("mmgetstate", state, "dgx1").stdout)[0] == {
        "number": 2, "name": "dgx1", "state": "active", "remarks": ""}
    assert "dgx1" in run("mmlsmount", state, "dgx1", "all", "-L").stdout
    with open(os.path.join(state, "clusters", "ess.pod.json")) as f:
        assert json.load(f)["filesystems"]["fs1"]["mounted_on"] == ["ess1", "dgx1"]
    # not configured at all: like a missing command
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODSIM_")}
    if not os.path.exists(ps.CONFIG_PATH):
        r = subprocess.run([os.path.join(STANDINS, "mmlscluster")], env=env, capture_output=True, text=True)
        assert r.returncode == 127 and "not configured" in r.stderr
