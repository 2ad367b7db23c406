"""library/pod_files: a role's files, directories and links in one call (issue 19), run through Ansible on
temporary paths: created, unchanged on the second run, only what differs rewritten, check and diff mode, links,
and entries that are wrong or would destroy something refused with the entry named."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from inventory_util import ROOT
from playbook_util import run_module

sys.path.insert(0, os.path.join(ROOT, "library"))
import pod_files  # noqa: E402


def run(files, check=False, diff=False):
    return run_module("pod_files", {"files": files}, check=check, diff=diff)


def test_creates_then_changes_nothing_then_only_what_differs(tmp_path):
    d = tmp_path / "etc" / "dgxpod"
    files = [{"path": str(d), "state": "directory", "mode": "0755"},
             {"path": str(d / "nccl.env"), "content": "NCCL_IB_HCA=mlx5_0\n", "mode": "0644"},
             {"path": str(d / "key"), "content": "PRIVATE KEY 123\n", "mode": "0600", "secret": True},
             {"path": str(tmp_path / "wants.service"), "state": "link", "src": str(d / "nccl.env")}]
    first = run(files)
    assert first["changed"] and first["changed_paths"] == [str(d), str(d / "nccl.env"), str(d / "key"),
                                                           str(tmp_path / "wants.service")]
    assert [e["why"] for e in first["entries"]] == [["created"]] * 4
    assert "PRIVATE KEY 123" not in json.dumps(first)  # not echoed back in the invocation either
    assert "PRIVATE KEY 123" in (d / "key").read_text()
    assert (d / "nccl.env").read_text() == "NCCL_IB_HCA=mlx5_0\n"
    assert stat.S_IMODE(os.stat(d / "key").st_mode) == 0o600
    assert os.readlink(tmp_path / "wants.service") == str(d / "nccl.env")

    again = run(files)
    assert not again["changed"] and again["changed_paths"] == [] and not any(e["why"] for e in again["entries"])

    os.chmod(d / "key", 0o644)
    files[1]["content"] = "NCCL_IB_HCA=mlx5_1\n"
    files[3]["src"] = str(d / "key")
    seen = run(files, check=True, diff=True)  # check mode: says what, writes nothing
    assert seen["changed_paths"] == [str(d / "nccl.env"), str(d / "key"), str(tmp_path / "wants.service")]
    assert [e["why"] for e in seen["entries"]] == [[], ["content"], ["attributes"], ["target"]]
    assert (d / "nccl.env").read_text() == "NCCL_IB_HCA=mlx5_0\n" and os.readlink(tmp_path / "wants.service") == str(
        d / "nccl.env")
    assert [x["after"] for x in seen["diff"]] == ["NCCL_IB_HCA=mlx5_1\n"]  # the key's content is not shown
    fixed = run(files)
    assert fixed["changed_paths"] == seen["changed_paths"] and (d / "nccl.env").read_text() == "NCCL_IB_HCA=mlx5_1\n"
    assert stat.S_IMODE(os.stat(d / "key").st_mode) == 0o600 and os.readlink(tmp_path / "wants.service") == str(
        d / "key")
    assert not [p for p in os.listdir(d) if p.startswith(".pod_files.")]  # no temporary file left
    assert not run(files)["changed"]


def test_a_changed_file_keeps_its_own_mode_when_the_entry_sets_none(tmp_path):
    f = tmp_path / "x.conf"
    f.write_text("old\n")
    os.chmod(f, 0o640)
    res = run([{"path": str(f), "content": "new\n"}])
    assert res["changed_paths"] == [str(f)] and f.read_text() == "new\n" and stat.S_IMODE(os.stat(f).st_mode) == 0o640


def test_what_would_destroy_something_is_refused_naming_the_entry(tmp_path):
    (tmp_path / "real").write_text("keep\n")
    (tmp_path / "dir").mkdir()
    res = run([{"path": str(tmp_path / "ok"), "content": "a\n"},
               {"path": str(tmp_path / "real"), "state": "link", "src": "/etc/hosts"}])
    assert res["failed"] and "files[1]" in res["msg"] and "is not a link (not removed)" in res["msg"], res["msg"]
    assert (tmp_path / "real").read_text() == "keep\n" and (tmp_path / "ok").read_text() == "a\n"
    res = run([{"path": str(tmp_path / "dir"), "content": "a\n"}])
    assert res["failed"] and "is a directory" in res["msg"]
    res = run([{"path": str(tmp_path / "missing" / "f"), "content": "a\n", "label": "nccl.env"}])
    assert res["failed"] and "files[0] nccl.env (file)" in res["msg"]  # no parent: list the directory first


@pytest.mark.parametrize("entry,words", [
    ({"path": "etc/x", "content": ""}, "path must be absolute"),
    ({"path": "/x", "state": "absent"}, "is not one of file, directory, link"),
    ({"path": "/x"}, "a file needs content"),
    ({"path": "/x", "content": 3}, "a file needs content"),
    ({"path": "/x", "state": "link"}, "a link needs src"),
    ({"path": "/x", "content": "", "mode": "644x"}, "octal string"),
    ({"path": "/x", "content": "", "mode": 420}, "octal string"),  # YAML's 0644 as an int: 420
])
def test_entry_mistakes_are_named_before_anything_is_touched(entry, words):
    problems = pod_files.check_entries([entry])
    assert len(problems) == 1 and problems[0].startswith("files[0] (") and words in problems[0], problems
    assert "listed twice" in pod_files.check_entries([{"path": "/a/b", "content": ""},
                                                      {"path": "/a//b", "content": ""}])[0]
    # one directory for two files (dgx_network's nccl.env and RoCE script both live in /etc/dgxpod): fine, unless
    # the two entries disagree on what it should be
    d = {"path": "/etc/dgxpod", "state": "directory", "mode": "0755", "owner": "root"}
    assert pod_files.check_entries([d, {"path": "/etc/dgxpod/nccl.env", "content": ""}, dict(d)]) == []
    assert "listed twice" in pod_files.check_entries([d, dict(d, mode="0700")])[0]


MARK = "# {mark} dgxpod toolkit: pod x (managed)"
BLOCK_CASES = {  # initial file content (None: no file) -> what blockinfile and pod_files must both make of it
    "missing": None,
    "empty": "",
    "no newline at the end": "127.0.0.1 localhost",
    "others before and after": "127.0.0.1 localhost\n# BEGIN dgxpod toolkit: pod x (managed)\n10.0.0.1 old\n"
                               "# END dgxpod toolkit: pod x (managed)\n::1 localhost\n",
    "end before begin": "a\n# END dgxpod toolkit: pod x (managed)\nmiddle\n"
                        "# BEGIN dgxpod toolkit: pod x (managed)\nz\n",
    "two begins": "# BEGIN dgxpod toolkit: pod x (managed)\n1\n# BEGIN dgxpod toolkit: pod x (managed)\n2\n"
                  "# END dgxpod toolkit: pod x (managed)\ntail\n",
    "only a begin": "# BEGIN dgxpod toolkit: pod x (managed)\nstray\n",
    "marker with trailing space and CRLF": "# BEGIN dgxpod toolkit: pod x (managed) \nx\r\n",
}


@pytest.mark.parametrize("block", ["10.0.0.1\tdgx1\n10.0.0.2\tdgx2", "one line\n", ""])
def test_a_block_is_byte_for_byte_what_blockinfile_writes(tmp_path, block):
    """pod_files' state=block takes over /etc/hosts blocks ansible.builtin.blockinfile wrote (roles/dgx_network
    before session 19): for each starting file, the real blockinfile's result is compared with set_block's."""
    tasks = []
    for i, (name, text) in enumerate(BLOCK_CASES.items()):
        path = tmp_path / ("f%d" % i)
        if text is not None:
            path.write_bytes(text.encode())
        if text is None and not block:
            continue  # blockinfile leaves a missing file missing when the block is empty
        tasks.append({"name": name, "ansible.builtin.blockinfile": {"path": str(path), "marker": MARK, "block": block,
                                                                     "create": True}})
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local", "tasks": tasks}]
    (tmp_path / "play.json").write_text(json.dumps(play))
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), str(tmp_path / "play.json")],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg")))
    assert res.returncode == 0, res.stdout[-2000:]
    for i, (name, text) in enumerate(BLOCK_CASES.items()):
        if text is None and not block:
            continue
        want = (tmp_path / ("f%d" % i)).read_bytes()
        got = pod_files.set_block(None if text is None else text.encode(), MARK, block)
        assert got == want, name


def test_a_block_entry_keeps_the_rest_of_the_file_and_is_unchanged_on_the_second_run(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n::1 localhost\n")
    entry = {"path": str(hosts), "state": "block", "marker": MARK, "block": "10.0.0.1\tdgx1", "mode": "0644",
             "label": "hosts"}
    first = run([entry], diff=True)
    assert first["changed"] and first["entries"][0]["why"] == ["content"]
    assert hosts.read_text() == ("127.0.0.1 localhost\n::1 localhost\n# BEGIN dgxpod toolkit: pod x (managed)\n"
                                 "10.0.0.1\tdgx1\n# END dgxpod toolkit: pod x (managed)\n")
    assert "10.0.0.1\tdgx1" in first["diff"][0]["after"]
    assert not run([entry])["changed"]
    with open(hosts, "a") as fh:
        fh.write("10.9.9.9 added-by-hand\n")  # someone else's line after the block stays
    entry["block"] = "10.0.0.1\tdgx1\n10.0.0.2\tdgx2"
    assert run([entry])["changed"]
    assert hosts.read_text().endswith("10.0.0.2\tdgx2\n# END dgxpod toolkit: pod x (managed)\n10.9.9.9 added-by-hand\n")
    assert run([dict(entry, marker="# no mark here")]).get("failed")
