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


@pytest.mark.parametrize("pod", ["dgxpod", "dgxa100-powerscale", "dgx-ess3000", "dgxh100-pod"])
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


def _put_tab(path: str, line: int) -> None:
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    lines[line - 1] = "\t" + lines[line - 1].lstrip(" ")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("where,line", [("host_vars/DGX1-1.yml", 18), ("group_vars/dgx.yml", 2),
                                        ("group_vars/all/pod.yml", 39), ("hosts.yml", 13)])
def test_tab_is_named_with_file_and_line(tmp_path, where, line):
    """Ansible alone says "YAML parsing failed: Tabs are usually invalid in YAML" (from inside a filter for
    host_vars, before the play for group_vars/all) and names no file: preflight names the file and line."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    _put_tab(os.path.join(inv, where), line)
    res = run_playbook("playbooks/preflight.yml", inv)
    out = " ".join((res.stdout + res.stderr).split())
    assert res.returncode != 0
    assert "%s:%d: file" % (where, line) in out and "a tab character at line %d, column 1" % line in out, out[-3000:]
    assert "Fix: replace the tab with spaces" in out


def test_tab_is_named_without_the_vars_plugin(tmp_path, monkeypatch):
    """Where vars_plugins/pod_inventory_files is not enabled (another ansible.cfg), the first preflight task (which
    reads no host variables) still names a host_vars file with a tab before the filters fail on it."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    _put_tab(os.path.join(inv, "host_vars", "DGX1-4.yml"), 10)
    monkeypatch.setenv("ANSIBLE_VARS_ENABLED", "host_group_vars")
    res = run_playbook("playbooks/preflight.yml", inv)
    out = " ".join((res.stdout + res.stderr).split())
    assert res.returncode != 0
    assert "TASK [Read the inventory files" in out and "inventory file(s) Ansible cannot parse" not in out
    assert "host_vars/DGX1-4.yml:10: file (host DGX1-4): a tab character at line 10" in out, out[-3000:]


def _preflight_fails_with_dgx_line(tmp_path, line):
    """preflight.yml on the reference inventory with ``line`` appended to group_vars/dgx.yml (its line 3): the
    run fails; its output, white space folded."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, "group_vars", "dgx.yml"), "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    res = run_playbook("playbooks/preflight.yml", inv)
    out = " ".join((res.stdout + res.stderr).split())
    assert res.returncode != 0
    return out


def test_duplicate_key_and_group_value_stop_the_run(tmp_path):
    out = _preflight_fails_with_dgx_line(tmp_path, "dgx_model: dgx1")
    assert "group_vars/dgx.yml:3: dgx_model:" in out, out[-3000:]
    assert "is written twice in one mapping (lines 2 and 3)" in out


def test_pfc_priority_in_group_vars_dgx_is_one_error_on_that_line(tmp_path):
    out = _preflight_fails_with_dgx_line(tmp_path, "dgx_network_pfc_priority: 4")
    assert "pod model: 1 error(s)" in out and "group_vars/dgx.yml:3: dgx_network_pfc_priority: PFC mismatch" in out, \
        out[-3000:]
    assert "(the same 35 more times, also in hosts DGX1-2," in out
