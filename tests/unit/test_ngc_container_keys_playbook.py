"""The ngc_container role's key stage, run for real on localhost (connection local, paths in a temp dir,
inside `unshare -n`): the pod MPI key is made once on the controller with mode 0600, each node gets its
container host key, the MPI identity (0600), authorized_keys with only the current key and a pinned
known_hosts; a second run changes nothing; changing ngc_container_mpi_key_id rotates the key."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest
import yaml

from inventory_util import ROOT
from playbook_util import changed_by_host, run_offline

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ssh-keygen"),
                                reason="needs root for `unshare -n` and ssh-keygen")

PLAY = """
- name: keys only
  hosts: dgx
  gather_facts: false
  tasks:
    - name: Key stage of the role
      ansible.builtin.include_role:
        name: ngc_container
        tasks_from: keys.yml
"""


def _setup(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True)
    hosts = {"all": {"children": {"dgx": {"hosts": {
        "node-a": {"nics": [{"name": "enp132s0", "fabric": "data-66", "address": "198.18.66.11"}],
                   "ngc_container_host_key_dir": str(tmp_path / "node-a")},
        "node-b": {"nics": [{"name": "enp132s0", "fabric": "data-66", "address": "198.18.66.12"}],
                   "ngc_container_host_key_dir": str(tmp_path / "node-b")}}}}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    pod = {"pod": {"name": "ktest", "ra_profile": "isilon-f800-dgx1", "simulated": True,
                   "fabrics": [{"name": "data-66", "kind": "ethernet", "carries": ["compute"],
                                "subnet": "198.18.66.0/24", "mtu": 9000}]},
           "ansible_connection": "local",
           "ansible_python_interpreter": os.path.join(ROOT, ".venv", "bin", "python"),
           "ngc_container_secrets_dir": str(tmp_path / "secrets")}
    (inv / "group_vars" / "all" / "pod.yml").write_text(yaml.safe_dump(pod))
    play = tmp_path / "keys.yml"
    play.write_text(PLAY)
    return str(inv), str(play)


def _changed(out):
    return sum(changed_by_host(out).values())


def test_keys_made_once_delivered_pinned_and_rotated(tmp_path):
    inv, play = _setup(tmp_path)
    first = run_offline(inv, play, "-v", "--diff")
    key = tmp_path / "secrets" / "mpi_ed25519-1"
    secret = key.read_text().splitlines()[1]  # a line of the private key's body
    assert secret not in first, "the private key is shown in the deploy's output"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700
    pub1 = (tmp_path / "secrets" / "mpi_ed25519-1.pub").read_text().split()[1]
    for node, addr in (("node-a", "198.18.66.11"), ("node-b", "198.18.66.12")):
        d = tmp_path / node
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
        for f, mode in (("id_ed25519", 0o600), ("authorized_keys", 0o600), ("known_hosts", 0o644),
                        ("ssh_host_ed25519_key", 0o600)):
            assert stat.S_IMODE((d / f).stat().st_mode) == mode, (node, f)
        assert (d / "id_ed25519").read_bytes() == key.read_bytes()
        assert (d / "authorized_keys").read_text().split()[1] == pub1
        kh = (d / "known_hosts").read_text().splitlines()
        assert len(kh) == 2
        own = (d / "ssh_host_ed25519_key.pub").read_text().split()[1]
        assert "[%s]:2222,[%s]:2222 ssh-ed25519 %s %s" % (node, addr, own, node) in kh
    # the pinned file is what ssh-keygen itself finds for the name on port 2222
    res = subprocess.run(["ssh-keygen", "-F", "[node-b]:2222", "-f", str(tmp_path / "node-a" / "known_hosts")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and "node-b" in res.stdout

    out = run_offline(inv, play)
    assert _changed(out) == 0, out[-3000:]

    # a run that does not reach node-b (--limit here; a node that is down is the same) keeps its pinned key
    before = (tmp_path / "node-a" / "known_hosts").read_text()
    out = run_offline(inv, play, "--limit", "node-a")
    assert _changed(out) == 0, out[-3000:]
    assert (tmp_path / "node-a" / "known_hosts").read_text() == before
    assert (tmp_path / "secrets" / "container-host-keys" / "node-b.pub").read_text().split()[1] == \
        (tmp_path / "node-b" / "ssh_host_ed25519_key.pub").read_text().split()[1]

    run_offline(inv, play, "-e", "ngc_container_mpi_key_id=2")
    pub2 = (tmp_path / "secrets" / "mpi_ed25519-2.pub").read_text().split()[1]
    assert pub2 != pub1
    for node in ("node-a", "node-b"):
        assert (tmp_path / node / "authorized_keys").read_text().split()[1] == pub2  # only the new key
        assert (tmp_path / node / "id_ed25519").read_bytes() == (tmp_path / "secrets" / "mpi_ed25519-2").read_bytes()
