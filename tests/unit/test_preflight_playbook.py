"""site.yml / validate.yml against the reference inventories: preflight runs on the controller and a
broken model stops the run before any host is contacted. Everything runs inside `unshare -n` (a network
namespace with no route), so even a bug could not send traffic to the reference pods' real addresses."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from inventory_util import ROOT, copy_inventory, edit_yaml

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="needs root for `unshare -n`")


def run_playbook(playbook: str, inventory: str, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])
    cmd = ["unshare", "-n", ANSIBLE_PLAYBOOK, "-i", inventory, os.path.join(ROOT, playbook), *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("pod", ["dgxpod", "dgxa100-powerscale", "dgx-ess3000"])
def test_preflight_passes_on_reference_pods(pod):
    res = run_playbook("playbooks/preflight.yml", os.path.join(ROOT, "inventories", pod))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "pod %s (RA profile" % pod in res.stdout


@pytest.mark.parametrize("playbook", ["site.yml", "validate.yml"])
def test_broken_model_stops_in_preflight(tmp_path, playbook):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "host_vars", "DGX1-2.yml"), lambda d: d["nics"][0].update(address="10.55.5.231"))
    res = run_playbook(playbook, inv)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "host_vars/DGX1-2.yml:" in out and "nics[0].address" in out
    assert "already used by DGX1-1 nics[0]" in out and "Fix: give every NIC its own address" in out
    assert "no host or switch was contacted" in out
    # nothing after preflight ran: no other play started, no DGX host appears in the recap
    assert "PLAY [Identity" not in out and "PLAY [Report" not in out
    assert "DGX1-" not in out.split("PLAY RECAP")[-1]


def test_check_mode_preflight(tmp_path):
    """Preflight is read-only and runs the same in --check mode."""
    res = run_playbook("playbooks/preflight.yml", os.path.join(ROOT, "inventories", "dgxpod"), "--check")
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("where,value,host", [
    ("group_vars/switches.yml", {"switch_config_options": {"pfc_priority": 4, "spanning_tree_mode": "mstp",
                                                            "ib_subnet_manager": "auto"}}, "DGX1-1"),
    ("host_vars/DGX1-5.yml", {"dgx_network_pfc_priority": 5}, "DGX1-5")])
def test_pfc_priority_set_per_group_or_host_is_cross_checked(tmp_path, where, value, host):
    """The switch side (switch_config_options of group switches) and the host side (dgx_network_pfc_priority of
    one host) are read from the inventory where they are set, not only from localhost's variables."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    path = os.path.join(inv, where)
    if os.path.exists(path):
        edit_yaml(path, lambda d: dict(d or {}, **value))
    else:
        with open(path, "w", encoding="utf-8") as fh:
            yaml.safe_dump(value, fh)
    res = run_playbook("playbooks/preflight.yml", inv)
    out = " ".join((res.stdout + res.stderr).split())  # the callback wraps long lines
    assert res.returncode != 0, out[-3000:]
    assert "PFC mismatch on data-sw" in out and "(host %s NIC " % host in out
    assert "no host or switch was contacted" in out
