"""playbooks/validate_drift.yml run for real on localhost (connection local, every node's files under a temp
dir, inside `unshare -n`, the sim inventory's model): the roles write their files (dgx_network's deploy
tasks with the NIC changes, RDMA and verification off; ngc_container's key stage), the drift stage finds
them as deployed, then names the node, the file and the difference for a changed /etc/hosts line, a deleted
nccl.env, an fstab mount option changed by hand and a container on the wrong image; re-running the deploy puts
the files back (and changes nothing the second time); a node that misses a run keeps its pinned key even when
the controller forgot it.
(One test function: each ansible-playbook run costs seconds.)"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from inventory_util import ROOT

from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift import eval as drift_eval  # noqa: E402

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ssh-keygen"),
                                reason="needs root for `unshare -n` and ssh-keygen")
NODES = ["sim-dgx1", "sim-dgx2"]

DEPLOY = """
- name: Deploy the files (the roles' own tasks; nothing on the real host is touched)
  hosts: dgx
  gather_facts: false
  tasks:
    - name: Host networking files (NIC changes, RDMA and verification are off)
      ansible.builtin.include_role:
        name: dgx_network
    - name: Container keys and the pinned known_hosts
      ansible.builtin.include_role:
        name: ngc_container
        tasks_from: keys.yml
"""

DATA_MOUNTS = """
- name: The data-mount list as nfs_client writes it (its mounting needs NFS servers)
  hosts: dgx
  gather_facts: false
  tasks:
    - name: Plan
      ansible.builtin.include_role:
        name: nfs_client
        tasks_from: plan.yml
    - name: The role's template
      ansible.builtin.template:
        src: "%s/roles/nfs_client/templates/data-mounts.j2"
        dest: "{{ nfs_client_mounts_list }}"
        mode: "0644"
    - name: An fstab with the owner's lines and the managed block (library/pod_nfs_mounts.py's lines)
      ansible.builtin.copy:
        content: |
          UUID=1234-abcd / ext4 errors=remount-ro 0 1
          {{ b.marker_begin }}
          {{ b.block }}
          {{ b.marker_end }}
        dest: "{{ nfs_client_fstab }}"
        mode: "0644"
      vars:
        b: "{{ nfs_client_plan.mounts | pod_nfs_fstab_block }}"
""" % ROOT

VALIDATE = """
- name: The drift stage
  ansible.builtin.import_playbook: %s/playbooks/validate_drift.yml

- name: Keep what it recorded
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write pod_stages.drift
      ansible.builtin.copy:
        content: "{{ pod_stages.drift | to_json }}"
        dest: "%%s/drift.json"
        mode: "0644"
""" % ROOT

ENGINE = """#!/bin/sh
# fake container engine: <node> container inspect <name> -> the node's inspect JSON, if any
f="%s/inspect-$1.json"
[ "$2 $3 $4" = "container inspect dgxpod-mpi" ] && [ -f "$f" ] && exec cat "$f"
echo "Error: no such container $4" >&2
exit 125
"""


def _setup(tmp_path):
    nodes = tmp_path / "nodes"
    for n in NODES:
        (nodes / n).mkdir(parents=True)
    engine = tmp_path / "engine"
    engine.write_text(ENGINE % tmp_path)
    engine.chmod(0o755)
    d = str(nodes) + "/{{ inventory_hostname }}"
    extra = {
        "ansible_connection": "local", "ansible_python_interpreter": PYTHON,
        "dgx_network_apply": False, "dgx_network_manage_rdma": False, "dgx_network_verify": False,
        "dgx_network_renderer": "ifupdown", "dgx_network_ifupdown_file": d + "/interfaces.d/60-dgxpod",
        "dgx_network_netplan_file": d + "/netplan/60-dgxpod.yaml", "dgx_network_hosts_file": d + "/hosts",
        "dgx_network_nccl_env_file": d + "/dgxpod/nccl.env", "dgx_network_roce_script": d + "/dgxpod/roce-qos.sh",
        "nfs_client_mounts_list": d + "/dgxpod/data-mounts", "nfs_client_fstab": d + "/fstab",
        "ngc_container_host_key_dir": d + "/container-ssh", "ngc_container_secrets_dir": str(tmp_path / "secrets"),
        "ngc_container_engine": str(engine), "ngc_container_engine_args": ["{{ inventory_hostname }}"],
        "ngc_container_image": "dgxpod/pytorch-mpi:test",
    }
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    for name, text in (("deploy.yml", DEPLOY + DATA_MOUNTS), ("validate.yml", VALIDATE % tmp_path)):
        (tmp_path / name).write_text(text)
    return nodes


def _inspect(tmp_path, node, image="dgxpod/pytorch-mpi:test"):
    data = [{"Config": {"Image": "localhost/" + image}, "Mounts": [
        {"Source": "/mnt", "Destination": "/mnt", "RW": True},
        {"Source": str(tmp_path / "nodes" / node / "container-ssh"), "Destination": "/etc/dgxpod/mpi", "RW": False}]}]
    (tmp_path / ("inspect-%s.json" % node)).write_text(json.dumps(data))


def _run(tmp_path, play, limit="sim-dgx1,sim-dgx2,localhost"):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CACHE_PLUGIN="memory", PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])
    res = subprocess.run(["unshare", "-n", ANSIBLE_PLAYBOOK, "-i", os.path.join(ROOT, "inventories", "sim"),
                          str(tmp_path / play), "-e", "@" + str(tmp_path / "extra.json"), "--limit", limit],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-2000:]
    return res.stdout


def _drift(tmp_path):
    _run(tmp_path, "validate.yml")
    with open(tmp_path / "drift.json") as fh:
        rec = json.load(fh)
    return rec, {(r.check, r.host): r for r in drift_eval.evaluate(rec, {}, {})}


def _changed(out):
    recap = [ln for ln in out.splitlines() if ln.startswith(tuple(NODES)) and "changed=" in ln]
    return sum(int(ln.split("changed=")[1].split()[0]) for ln in recap)


def test_drift_finds_what_changed_and_the_deploy_puts_it_back(tmp_path):
    nodes = _setup(tmp_path)
    _run(tmp_path, "deploy.yml")
    for n in NODES:
        _inspect(tmp_path, n)

    rec, res = _drift(tmp_path)
    for n in NODES:
        names = [f["name"] for f in rec["nodes"][n]["files"]]
        assert names == ["ifupdown", "hosts", "nccl_env", "data_mounts", "fstab", "known_hosts"], names
    problems = {k: (r.status, r.cause) for k, r in res.items() if r.status != "pass" and k[1] in NODES}
    assert problems == {}
    # the nodes left out of this run (the sim pod has four) are errors naming them, never passes
    assert res[("drift", "sim-dgx3")].status == "error" and "sim-dgx3" in res[("drift", "sim-dgx3")].reason

    hosts = nodes / "sim-dgx1" / "hosts"
    text = hosts.read_text()
    line = [ln for ln in text.splitlines() if ln.endswith("\tsim-dgx4")][0]
    hosts.write_text(text.replace(line, "198.18.99.99\tsim-dgx4"))
    (nodes / "sim-dgx2" / "dgxpod" / "nccl.env").unlink()
    _inspect(tmp_path, "sim-dgx2", image="dgxpod/pytorch-mpi:old")
    fstab = nodes / "sim-dgx2" / "fstab"  # a data mount's option changed by hand
    ftext = fstab.read_text()
    fline = [ln for ln in ftext.splitlines() if "nolock" in ln][0]
    fstab.write_text(ftext.replace(fline, fline.replace("rsize=524288", "rsize=65536")))

    rec, res = _drift(tmp_path)
    bad = {k: r for k, r in res.items() if r.status != "pass" and k[1] in NODES}
    assert set(bad) == {("drift_hosts", "sim-dgx1"), ("drift_nccl_env", "sim-dgx2"), ("drift_container", "sim-dgx2"),
                        ("drift_fstab", "sim-dgx2")}
    f = bad[("drift_fstab", "sim-dgx2")]
    assert f.status == "fail" and f.cause.startswith("sim-dgx2 %s: the managed block differs" % fstab)
    assert "-%s" % fline in f.cause and "+%s" % fline.replace("rsize=524288", "rsize=65536") in f.cause
    h = bad[("drift_hosts", "sim-dgx1")]
    assert h.status == "fail" and h.details["file"] == str(hosts)
    assert h.cause.startswith("sim-dgx1 %s: the managed block differs" % hosts)
    assert "-%s" % line in h.cause and "+198.18.99.99\tsim-dgx4" in h.cause
    n = bad[("drift_nccl_env", "sim-dgx2")]
    assert n.status == "fail" and n.measured == "missing"
    assert "sim-dgx2 %s/sim-dgx2/dgxpod/nccl.env is missing" % nodes in n.cause
    assert "runs image localhost/dgxpod/pytorch-mpi:old" in bad[("drift_container", "sim-dgx2")].cause

    out = _run(tmp_path, "deploy.yml")  # the deploy puts the files back ...
    assert _changed(out) == 3, out[-3000:]
    _inspect(tmp_path, "sim-dgx2")
    rec, res = _drift(tmp_path)
    assert [k for k, r in res.items() if r.status != "pass" and k[1] in NODES] == []
    out = _run(tmp_path, "deploy.yml")  # ... and changes nothing the second time
    assert _changed(out) == 0, out[-3000:]

    # item 6: a node that misses a run keeps its pinned key, even when the controller forgot it
    before = (nodes / "sim-dgx1" / "container-ssh" / "known_hosts").read_text()
    assert before.count(" sim-dgx2\n") == 1
    (tmp_path / "secrets" / "container-host-keys" / "sim-dgx2.pub").unlink()  # e.g. a new controller checkout
    out = _run(tmp_path, "deploy.yml", limit="sim-dgx1")  # sim-dgx2 down for this run
    assert (nodes / "sim-dgx1" / "container-ssh" / "known_hosts").read_text() == before, out[-3000:]
