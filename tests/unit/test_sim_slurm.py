"""Slurm on the pod-in-a-box (sim/podsimlib/slurm.py, `podsim up --scheduler slurm`): the inventory it writes, the
model inventories/sim makes of it, and what keeps a pod from running Slurm. The daemons on the simulator:
tests/integration/test_e2e_slurm.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

import podmodel as pm
from inventory_util import ROOT, hostvars, preflight, texts
from podsimlib import slurm
from podsimlib.nodefiles import private_dirs

INV = os.path.join(ROOT, "inventories", "sim")


def test_default_inventory_has_no_slurm_and_the_model_says_none(tmp_path):
    assert slurm.inventory_vars(pm.pod_shape(4, 2), "none") == ()
    assert "podsim_slurm" not in pm.render_inventory(pm.pod_shape(4, 2))
    hv = hostvars(INV)["sim-dgx1"]
    assert hv["pod"]["scheduler"] == "none" and hv["pod"]["slurm"] is None
    findings, _ = preflight(INV)
    assert [f.format() for f in findings if "slurm" in f.format().lower()] == []


def test_scheduler_slurm_inventory_makes_the_model_ask_for_slurm(tmp_path):
    pod = pm.pod_shape(4, 2)
    text = pm.render_inventory(pod, all_vars=slurm.inventory_vars(pod, "slurm"))
    doc = yaml.safe_load(text)
    assert doc["all"]["vars"]["podsim_slurm"] == {"controller": "sim-dgx1", "partition": "dgx"}
    assert list(doc["all"]["children"]) == ["dgx", "storage", "switches"]  # the hosts are unchanged
    inv = tmp_path / "sim"
    shutil.copytree(INV, inv)
    (inv / "hosts.yml").write_text(text)
    hv = hostvars(str(inv))
    assert {h: v["pod"]["scheduler"] for h, v in hv.items() if h.startswith("sim-dgx")} == {
        "sim-dgx%d" % i: "slurm" for i in range(1, 5)}
    assert hv["sim-dgx3"]["pod"]["slurm"] == {"controller": "sim-dgx1", "partition": "dgx"}
    assert hv["sim-dgx3"]["slurm_install_packages"] is False
    findings, _ = preflight(str(inv))
    assert texts(findings) == [] and texts(findings, "warning") == []


def test_podsim_inventory_verb_takes_the_scheduler():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "inventory", "--scheduler", "slurm"],
                         capture_output=True, text=True, check=True).stdout
    assert out.rstrip().endswith("podsim_slurm: {controller: sim-dgx1, partition: dgx}")


def test_missing_for_slurm_names_programs_and_nodes_without_their_own_dirs():
    assert slurm.missing_for_slurm((), {"sim-dgx1": list(slurm.PRIVATE_DIRS)}) == []
    out = slurm.missing_for_slurm(("/usr/sbin/slurmd",), {"sim-dgx1": list(slurm.PRIVATE_DIRS),
                                                          "sim-dgx2": ["/var/lib/slurm"]})
    assert out[0] == "/usr/sbin/slurmd is not installed (scripts/setup.sh installs slurm-wlm and munge)"
    assert out[1].startswith("sim-dgx2 has no private /var/log/slurm, /var/lib/munge, /var/log/munge")
    assert len(out) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to munge/slurm needs root")
def test_private_dirs_copy_the_hosts_owner_and_mode_and_list_them(tmp_path):
    private_dirs(str(tmp_path))
    listed = (tmp_path / slurm.PRIVATE_LIST).read_text().split()
    assert listed == [d for d in slurm.PRIVATE_DIRS if os.path.isdir(d)]
    assert slurm.node_private_dirs(str(tmp_path)) == listed
    for d in listed:
        mine, host = os.stat(str(tmp_path) + "/private" + d), os.stat(d)
        assert (mine.st_uid, mine.st_gid, mine.st_mode) == (host.st_uid, host.st_gid, host.st_mode)
        assert os.listdir(str(tmp_path) + "/private" + d) == []  # empty: nothing of the host's Slurm
    assert slurm.node_private_dirs(str(tmp_path / "none")) == []


def _tasks(tasks):
    for t in tasks or []:
        yield t
        for k in ("block", "rescue", "always"):
            yield from _tasks(t.get(k))


def test_no_local_connection_play_delegates_to_a_node():
    """`connection: local` on a play applies to its tasks delegated to a node too: they then run on the Ansible
    controller. Found on the simulator (the Slurm stage's scontrol ran on the controller: connect failure)."""
    import glob
    bad = []
    for path in sorted(glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))) + [
            os.path.join(ROOT, f) for f in ("site.yml", "validate.yml")]:
        with open(path) as fh:
            plays = yaml.safe_load(fh) or []
        for play in plays:
            if not isinstance(play, dict) or play.get("connection") != "local":
                continue
            for t in _tasks(sum((play.get(k) or [] for k in ("pre_tasks", "tasks", "post_tasks")), [])):
                if t.get("delegate_to") not in (None, "localhost", "127.0.0.1"):
                    bad.append((os.path.relpath(path, ROOT), t.get("name")))
    assert bad == []


def test_the_gpu_stand_in_devices_come_from_the_simulators_inventory_not_the_role():
    """Issue 38 item 7: roles/slurm knows no simulator - its stand-in GPU devices are an option (default false)
    that inventories/sim sets; nothing in the role decides on pod.simulated."""
    role = os.path.join(ROOT, "roles", "slurm")
    with open(os.path.join(role, "defaults", "main.yml")) as fh:
        assert yaml.safe_load(fh)["slurm_gpu_standin_devices"] is False
    for sub in ("defaults", "tasks", "vars", "meta", "handlers", "templates"):
        for dirpath, _, files in os.walk(os.path.join(role, sub)):
            for name in files:
                with open(os.path.join(dirpath, name)) as fh:
                    assert "simulated" not in fh.read(), os.path.join(dirpath, name)
    hv = hostvars(INV)
    assert [h for h in hv if "dgx" in hv[h]["group_names"] and hv[h]["slurm_gpu_standin_devices"] is not True] == []
