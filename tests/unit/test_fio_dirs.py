"""pod_fio's directory preparation (library/pod_fio.py prepare_dirs): every node of a fio step lays out at once,
and behind every data mount of a pod is one shared namespace, so another node may create a test directory
between this node's probe and its mkdir. Seen in CI: the role test's three local 'nodes' failed one layout with
"cannot create .../.podfio: File exists". A directory that exists after a failed mkdir is not a failure; one that
still does not exist is, with mkdir's words."""
from __future__ import annotations

import os

import pod_fio
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import Ran, run_tool


def _params(d):
    return {"directories": [str(d)], "create_dirs": True, "probe_timeout": 10}


def test_a_directory_another_node_made_first_is_used(tmp_path, monkeypatch):
    d = tmp_path / ".podfio"

    def racing(argv, timeout, **kw):
        if argv[0] == "mkdir":  # the other node wins between our probe and our mkdir
            os.mkdir(argv[-1])
            return Ran(1, "", "mkdir: cannot create directory '%s': File exists\n" % argv[-1], False, 0.0, argv, None)
        return run_tool(argv, timeout, **kw)

    monkeypatch.setattr(pod_fio, "run_tool", racing)
    created: list = []
    assert pod_fio.prepare_dirs(_params(d), created) is None
    assert created == [] and d.is_dir()  # not ours: removal is left to whichever node finds it empty


def test_a_directory_that_cannot_be_made_is_named_with_mkdirs_words(tmp_path, monkeypatch):
    d = tmp_path / ".podfio"

    def refused(argv, timeout, **kw):
        if argv[0] == "mkdir":
            return Ran(1, "", "mkdir: cannot create directory '%s': Permission denied\n" % argv[-1], False, 0.0, argv,
                       None)
        return run_tool(argv, timeout, **kw)

    monkeypatch.setattr(pod_fio, "run_tool", refused)
    created: list = []
    why = pod_fio.prepare_dirs(_params(d), created)
    assert why == "cannot create %s: mkdir: cannot create directory '%s': Permission denied" % (d, d)
    assert created == []


def test_a_new_directory_is_made_and_remembered(tmp_path):
    d = tmp_path / ".podfio"
    created: list = []
    assert pod_fio.prepare_dirs(_params(d), created) is None
    assert created == [str(d)] and d.is_dir()
