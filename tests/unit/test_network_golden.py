"""Golden files: the network files dgx_network renders for every DGX of the reference pods.

Rendered by playbooks/render_network.yml on the controller inside `unshare -n` (no host is contacted).
Refresh after an intended change with:  UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_network_golden.py
"""
from __future__ import annotations

import filecmp
import os
import shutil
import subprocess

import pytest

from inventory_util import REFERENCE, ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden", "network")
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root for unshare -n")


def render(pod: str, dest: str) -> None:
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])
    res = subprocess.run(["unshare", "-n", "ansible-playbook", "-i", os.path.join(ROOT, "inventories", pod),
                          os.path.join(ROOT, "playbooks", "render_network.yml"), "-e", "dgx_network_build_dir=" + dest],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]


def tree(path: str):
    return sorted(os.path.relpath(os.path.join(r, f), path) for r, _d, fs in os.walk(path) for f in fs)


@pytest.mark.parametrize("pod", REFERENCE)
def test_rendered_network_files_match_golden(tmp_path, pod):
    out = str(tmp_path / pod)
    render(pod, out)
    golden = os.path.join(GOLDEN, pod)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(out, golden)
    assert tree(out) == tree(golden), "files differ; UPDATE_GOLDEN=1 refreshes after an intended change"
    _match, mismatch, errors = filecmp.cmpfiles(out, golden, tree(out), shallow=False)
    assert not mismatch and not errors, "rendered files differ from golden: %s" % (mismatch + errors)


def test_004_interfaces_file_as_the_ra_shows_it():
    """The golden ifupdown file of DGX1-1 holds 004's /etc/network/interfaces values."""
    with open(os.path.join(GOLDEN, "dgxpod", "DGX1-1", "interfaces")) as fh:
        text = fh.read()
    for nic, addr in (("enp5s0", "10.55.5.231"), ("enp12s0", "10.55.12.232"), ("enp132s0", "10.55.66.231"),
                      ("enp139s0", "10.55.139.234")):
        stanza = text.split("iface %s inet static" % nic)[1].split("auto ")[0]
        assert "address %s" % addr in stanza and "netmask 255.255.255.0" in stanza and "mtu 9000" in stanza
        assert ("gateway 10.55.66.1" in stanza) == (nic == "enp132s0")
