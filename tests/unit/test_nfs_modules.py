"""pod_nfs_mounts / pod_nfs_verify: the pure parts, and the modules run by Ansible on localhost in the
ways that touch no real mount (check mode, an address that does not answer)."""
from __future__ import annotations

import json
import os
import subprocess

import pod_nfs_mounts as mod
from inventory_util import ROOT

PLAN = [
    {"path": "/mnt/isilon", "src": "10.9.0.1:/ifs", "fstype": "nfs", "opts": "defaults", "ip": "10.9.0.1"},
    {"path": "/mnt/isilon1", "src": "10.9.0.1:/ifs", "fstype": "nfs", "opts": "rsize=524288,nolock", "ip": "10.9.0.1"},
    {"path": "/mnt/isilon2", "src": "10.9.1.2:/ifs", "fstype": "nfs", "opts": "rsize=524288,nolock", "ip": "10.9.1.2"},
]
FSTAB = """# /etc/fstab: static file system information.
UUID=abcd / ext4 errors=remount-ro 0 1
{block}/dev/sdb1 /raid ext4 defaults 0 2
"""


def block(*entries):
    return mod.BEGIN + "\n" + "".join("%s %s %s %s 0 0\n" % e for e in entries) + mod.END + "\n"


def mounted(*entries):
    return {p: {"src": s, "path": p, "fstype": t, "opts": "rw," + o} for s, p, t, o in entries}


def tup(m):
    return (m["src"], m["path"], m["fstype"], m["opts"])


def test_fstab_block_round_trip_keeps_every_other_line():
    text = FSTAB.format(block=block(tup(PLAN[0])))
    before, entries, after = mod.split_fstab(text)
    assert entries == [tup(PLAN[0])]
    assert mod.render_fstab(before, entries, after) == text
    assert mod.render_fstab(before, [], after) == FSTAB.format(block="")


def test_converged_host_needs_nothing():
    ent = [tup(m) for m in PLAN]
    assert mod.decide(PLAN, ent, mounted(*ent)) == ([], [], ent)


def test_only_what_changed_is_remounted_and_removed_mounts_go():
    old = [tup(PLAN[0]), ("10.9.0.1:/ifs", "/mnt/isilon1", "nfs", "nolock"), tup(PLAN[2]),
           ("10.9.0.3:/ifs", "/mnt/isilon3", "nfs", "nolock")]
    to_mount, to_unmount, keep = mod.decide(PLAN, old, mounted(*old))
    assert [m["path"] for m in to_mount] == ["/mnt/isilon1"]          # options changed
    assert to_unmount == ["/mnt/isilon1", "/mnt/isilon3"]            # re-mount + no longer planned
    assert keep == [tup(PLAN[0]), tup(PLAN[2])]


def test_a_mount_lost_by_hand_or_from_another_server_is_mounted_again():
    ent = [tup(m) for m in PLAN]
    now = mounted(ent[0], ent[2], ("10.9.9.9:/ifs", "/mnt/isilon1", "nfs", "nolock"))
    to_mount, to_unmount, _ = mod.decide(PLAN, ent, now)
    assert [m["path"] for m in to_mount] == ["/mnt/isilon1"] and to_unmount == ["/mnt/isilon1"]
    to_mount, to_unmount, _ = mod.decide(PLAN, ent, mounted(ent[0], ent[1]))
    assert [m["path"] for m in to_mount] == ["/mnt/isilon2"] and to_unmount == []


def test_write_atomic_keeps_mode(tmp_path):
    f = tmp_path / "fstab"
    f.write_text("old\n")
    os.chmod(f, 0o640)
    mod.write_atomic(str(f), "new\n")
    assert f.read_text() == "new\n" and (os.stat(f).st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["fstab"]


def ansible_module(name, args, check=False):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json",
               PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])
    cmd = ["ansible", "localhost", "-c", "local", "-i", "localhost,",
           "-e", "ansible_python_interpreter=/usr/bin/python3",
           "-m", name, "-a", json.dumps(args)]
    res = subprocess.run(cmd + (["--check"] if check else []), cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    out = json.loads(res.stdout)
    return out["plays"][0]["tasks"][0]["hosts"]["localhost"]


LOCAL_PLAN = [{"path": "/tmp/dgxpod-test-never-mounted", "src": "127.0.0.1:/ifs", "fstype": "nfs",
               "opts": "nolock", "ip": "127.0.0.1"}]


def test_check_mode_reports_and_changes_nothing(tmp_path):
    fstab = tmp_path / "fstab"
    fstab.write_text(FSTAB.format(block=block(("127.0.0.1:/ifs", "/tmp/dgxpod-old", "nfs", "defaults"))))
    before = fstab.read_text()
    r = ansible_module("pod_nfs_mounts", {"mounts": LOCAL_PLAN, "fstab": str(fstab)}, check=True)
    assert r["changed"] is True
    assert r["actions"] == ["mount /tmp/dgxpod-test-never-mounted (127.0.0.1:/ifs)",
                            "drop /tmp/dgxpod-old from %s" % fstab]
    assert fstab.read_text() == before and not os.path.exists("/tmp/dgxpod-test-never-mounted")


def test_a_storage_address_that_does_not_answer_fails_fast_naming_it_and_changes_nothing(tmp_path):
    fstab = tmp_path / "fstab"
    fstab.write_text(FSTAB.format(block=""))
    r = ansible_module("pod_nfs_mounts", {"mounts": LOCAL_PLAN, "fstab": str(fstab), "host": "dgx-x",
                                          "probe_port": 9, "probe_timeout": 2})
    assert r.get("failed") is True
    assert r["msg"].startswith("dgx-x: storage IP 127.0.0.1 (/tmp/dgxpod-test-never-mounted): no answer on TCP 9")
    assert r["msg"].endswith("Nothing was changed.") and r["dead_ips"] == ["127.0.0.1"]
    assert fstab.read_text() == FSTAB.format(block="")
    assert not os.path.exists("/tmp/dgxpod-test-never-mounted")


def test_bad_input_is_named():
    r = ansible_module("pod_nfs_mounts", {"mounts": [{"path": "relative", "src": "a:/b", "fstype": "nfs",
                                                      "opts": "defaults", "ip": "127.0.0.1"}], "host": "h"},
                       check=True)
    assert r["failed"] and r["msg"] == "h: mount point 'relative' is not an absolute path"
    r = ansible_module("pod_nfs_mounts", {"mounts": [{"path": "/x"}], "host": "h"}, check=True)
    assert r["failed"] and "mounts[0] lacks src, fstype, opts, ip" in r["msg"]


def test_verify_reports_a_missing_mount_without_touching_anything():
    r = ansible_module("pod_nfs_verify", {"mounts": [dict(LOCAL_PLAN[0], kind="data", export="/ifs")],
                                          "host": "dgx-x", "fail_on_problems": False})
    assert r["changed"] is False
    assert r["problems"] == ["dgx-x: not mounted (planned /tmp/dgxpod-test-never-mounted from 127.0.0.1)"]
    # the same problem as data (issue 38): the mount of its own, not a storage address it could not reach
    assert r["problem_details"] == [{"text": r["problems"][0], "reach": False, "path": "/tmp/dgxpod-test-never-mounted",
                                     "address": "127.0.0.1"}]


def _verify_in_process(monkeypatch, capsys, tmp_path, mounts, timeout=10):
    """pod_nfs_verify's main() on this machine, with its mount table faked to say the planned paths are NFS
    mounts (the file operations are real, on tmp_path)."""
    import pytest
    import pod_nfs_verify
    from ansible.module_utils.testing import patch_module_args
    table = {m["path"]: {"path": m["path"], "src": "%s:/ifs" % m["ip"], "fstype": "nfs", "opts": "rw,vers=3"}
             for m in mounts}
    monkeypatch.setattr(pod_nfs_verify, "mounted_now", lambda _table=None: table)
    with patch_module_args({"mounts": mounts, "host": "dgx-t", "io_timeout": timeout, "probe_size": 300000,
                            "fail_on_problems": False}):
        with pytest.raises(SystemExit):
            pod_nfs_verify.main()
    return json.loads(capsys.readouterr().out)


def test_verify_moves_data_through_every_mount_and_names_the_one_that_does_not_see_it(monkeypatch, capsys,
                                                                                       tmp_path):
    """The probe written through the scripts mount is read back through every data mount of the same export (a
    symlink here: the same files, as an NFS export seen twice); a data mount of that export that does not show
    it, and one that cannot be listed, are named; a data mount of another export is listed."""
    scripts, seen, blind, other = (tmp_path / n for n in ("scripts", "seen", "blind", "other"))
    scripts.mkdir()
    seen.symlink_to(scripts)
    blind.mkdir()
    other.mkdir()
    (other / "f").write_text("x")
    plan = [dict(path=str(scripts), ip="10.9.0.1", kind="scripts", export="/ifs", fstype="nfs", opts="rw"),
            dict(path=str(seen), ip="10.9.0.1", kind="data", export="/ifs", fstype="nfs", opts="rw"),
            dict(path=str(blind), ip="10.9.0.2", kind="data", export="/ifs", fstype="nfs", opts="rw"),
            dict(path=str(other), ip="10.9.0.3", kind="data", export="/other", fstype="nfs", opts="rw"),
            dict(path=str(tmp_path / "gone"), ip="10.9.0.4", kind="data", export="/other", fstype="nfs",
                 opts="rw")]
    r = _verify_in_process(monkeypatch, capsys, tmp_path, plan)
    io = {x["path"]: x["io"] for x in r["results"]}
    assert io[str(scripts)] == "wrote, read back and compared 300000 bytes"
    assert io[str(seen)] == "read the probe file and compared"
    assert io[str(other)] == "listed 1 entries"
    assert len(r["problems"]) == 2
    assert r["problems"][0].startswith("dgx-t: %s from 10.9.0.2: reading the probe file written through %s failed: "
                                       "FileNotFoundError: " % (blind, scripts))
    assert r["problems"][1].startswith("dgx-t: %s from 10.9.0.4: listing failed: FileNotFoundError: "
                                       % (tmp_path / "gone"))
    assert list(scripts.iterdir()) == []  # the probe and its directory are removed
    # the I/O failures as data: towards the storage address (REACH for the network stage's findings)
    assert [(d["reach"], d["path"], d["address"]) for d in r["problem_details"]] == [
        (True, str(blind), "10.9.0.2"), (True, str(tmp_path / "gone"), "10.9.0.4")]
    assert [d["text"] for d in r["problem_details"]] == r["problems"]
