"""library/pod_ssh_key: a key pair made once and kept, its public half, and files read beside it in one call
(issue 19), run through Ansible on temporary paths: made, unchanged on the second run, never replaced, a lost public
half restored, modes kept, check mode read-only, files read (missing ones as null)."""
from __future__ import annotations

import os
import stat

from playbook_util import run_module


def run(args, check=False):
    return run_module("pod_ssh_key", args, check=check)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_made_once_kept_restored_and_read_in_one_call(tmp_path):
    d = tmp_path / "secrets" / "pod"
    key = d / "mpi_ed25519-1"
    other = tmp_path / "known_hosts"
    args = {"path": str(key), "comment": "dgxpod-mpi pod #1", "read": [str(other), str(tmp_path / "missing")]}

    dry = run(args, check=True)  # nothing there yet: says what it would do, makes nothing
    assert dry["changed"] and dry["why"] == ["directory created", "key generated"] and dry["public_key"] is None
    assert not d.exists()

    other.write_text("[n1]:2222 ssh-ed25519 AAAA\n")
    first = run(args)
    assert first["changed"] and first["generated"] and first["why"] == ["directory created", "key generated"]
    pub = (d / "mpi_ed25519-1.pub").read_text().strip()
    assert first["public_key"] == pub and pub.startswith("ssh-ed25519 ") and pub.endswith(" dgxpod-mpi pod #1")
    assert first["files"] == {str(other): "[n1]:2222 ssh-ed25519 AAAA\n", str(tmp_path / "missing"): None}
    assert mode(d) == 0o700 and mode(key) == 0o600
    private = key.read_text()

    again = run(args)
    assert not again["changed"] and again["why"] == [] and not again["generated"] and again["public_key"] == pub
    assert key.read_text() == private  # never replaced

    # a loosened key and directory are tightened; a lost public half is made again from the private key
    os.chmod(key, 0o644)
    os.chmod(d, 0o755)
    os.remove(str(key) + ".pub")
    seen = run(args, check=True)
    assert seen["why"] == ["directory attributes", "key attributes", "public key restored"], seen
    assert mode(key) == 0o644 and not os.path.exists(str(key) + ".pub")  # check mode changed nothing
    fixed = run(args)
    assert fixed["changed"] and not fixed["generated"] and key.read_text() == private
    assert fixed["public_key"].split()[:2] == pub.split()[:2] and mode(key) == 0o600 and mode(d) == 0o700
    assert not run(args)["changed"]


def test_a_file_where_the_directory_should_be_is_an_error_naming_it(tmp_path):
    (tmp_path / "keys").write_text("not a directory")
    res = run({"path": str(tmp_path / "keys" / "id")})
    assert res.get("failed") and "keys exists and is not a directory" in res["msg"]
