"""Drift of the deployed files (issue 17 item 2): the pure comparison (module_utils/drift/compare.py) against
real files in a temp dir, the module (library/pod_drift.py) run by Ansible on localhost in check mode, the
stage record (filter_plugins/drift.py) and the evaluation (module_utils/drift/eval.py); and the merge that
keeps a node's pinned key when it misses a run (module_utils/containers/ngc_container.merge_pinned_keys)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from inventory_util import ROOT

from filter_plugins import drift
from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift import eval as drift_eval  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import ngc_container as nc  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift import compare as pd  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import stages  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results  # noqa: E402

MARKER = "# {mark} dgxpod toolkit: pod p1 (managed; edit the inventory, not this block)"
BLOCK = "198.18.66.11\tsim-dgx1\n198.18.66.12\tsim-dgx2\n198.18.66.13\tsim-dgx3"
HOSTS = ("127.0.0.1\tlocalhost\n" + MARKER.replace("{mark}", "BEGIN") + "\n" + BLOCK + "\n"
         + MARKER.replace("{mark}", "END") + "\n10.1.1.1\tsomething-else\n")
NCCL = "# Ansible managed - dgx_network role, pod p1\nNCCL_IB_HCA=mlx5_0\nNCCL_IB_GID_INDEX=3\n"


def _library():
    """library/pod_drift.py (the module) loaded by path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("pod_drift_module", os.path.join(ROOT, "library", "pod_drift.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read(path):
    return _library().read_file(str(path))


# --- the comparison against real files ----------------------------------------------------------------

def test_a_whole_file_as_deployed_passes_and_a_changed_line_fails_with_the_diff(tmp_path):
    f = tmp_path / "nccl.env"
    f.write_text(NCCL)
    f.chmod(0o644)
    spec = {"name": "nccl_env", "path": str(f), "content": NCCL, "mode": "0644"}
    text, mode, err = _read(f)
    assert err is None
    ok = pd.compare_file(spec, text, mode)
    assert ok["status"] == "ok" and ok["diff"] == [] and ok["mode"] == "0644"

    f.write_text(NCCL.replace("GID_INDEX=3", "GID_INDEX=1"))
    bad = pd.compare_file(spec, *_read(f)[:2])
    assert bad["status"] == "changed"
    assert "-NCCL_IB_GID_INDEX=3" in bad["diff"] and "+NCCL_IB_GID_INDEX=1" in bad["diff"]
    assert bad["summary"].startswith(str(f) + ": the file differs")
    assert "NCCL_IB_GID_INDEX=3" in bad["summary"] and "NCCL_IB_GID_INDEX=1" in bad["summary"]


def test_a_missing_file_names_the_file(tmp_path):
    f = tmp_path / "etc" / "nccl.env"
    text, mode, err = _read(f)
    assert (text, mode, err) == (None, None, None)
    r = pd.compare_file({"name": "nccl_env", "path": str(f), "content": NCCL}, text, mode)
    assert r["status"] == "missing" and r["summary"] == "%s is missing (the deploy writes it)" % f


def test_the_managed_block_is_compared_and_the_rest_of_the_file_is_the_owners(tmp_path):
    f = tmp_path / "hosts"
    f.write_text(HOSTS)
    spec = {"name": "hosts", "path": str(f), "block": BLOCK, "marker": MARKER}
    assert pd.compare_file(spec, *_read(f)[:2])["status"] == "ok"
    f.write_text(HOSTS.replace("10.1.1.1\tsomething-else", "10.9.9.9\tother"))  # outside the block
    assert pd.compare_file(spec, *_read(f)[:2])["status"] == "ok"

    f.write_text(HOSTS.replace("198.18.66.12\tsim-dgx2", "198.18.66.99\tsim-dgx2"))
    r = pd.compare_file(spec, *_read(f)[:2])
    assert r["status"] == "changed"
    assert r["diff"][2:] == ["@@ -2 +2 @@", "-198.18.66.12\tsim-dgx2", "+198.18.66.99\tsim-dgx2"]
    assert "the managed block differs" in r["summary"] and "198.18.66.12" in r["summary"]

    f.write_text("127.0.0.1\tlocalhost\n")  # block removed
    r = pd.compare_file(spec, *_read(f)[:2])
    assert r["status"] == "missing" and "managed block" in r["summary"] and "BEGIN dgxpod toolkit" in r["summary"]
    f.write_text(HOSTS.split(MARKER.replace("{mark}", "END"))[0])  # no END marker: not a block
    assert pd.compare_file(spec, *_read(f)[:2])["status"] == "missing"


def test_extract_block_between_markers():
    assert pd.extract_block(HOSTS, MARKER) == BLOCK.splitlines()
    assert pd.extract_block("x\n", MARKER) is None
    assert pd.extract_block(MARKER.replace("{mark}", "BEGIN") + "\n" + MARKER.replace("{mark}", "END"), MARKER) == []


def test_mode_and_line_ending_changes_are_drift(tmp_path):
    f = tmp_path / "roce-qos.sh"
    f.write_text("#!/bin/sh\nset -e\n")
    f.chmod(0o644)
    spec = {"name": "roce_qos_script", "path": str(f), "content": "#!/bin/sh\nset -e\n", "mode": "0755"}
    r = pd.compare_file(spec, *_read(f)[:2])
    assert r["status"] == "changed" and r["summary"] == "%s: mode 0644, the deploy sets 0755" % f
    f.chmod(0o755)
    f.write_text("#!/bin/sh\nset -e")  # the last newline lost
    r = pd.compare_file(spec, *_read(f)[:2])
    assert r["status"] == "changed" and "line endings" in r["summary"]


def test_long_diffs_are_cut_and_say_how_much_is_left():
    exp = ["l%d" % i for i in range(40)]
    diff = pd.short_diff(exp, [], "/f", limit=5)
    assert len(diff) == 8 and diff[-1].startswith("... ") and "more diff lines" in diff[-1]


def test_an_incomplete_spec_is_an_error_not_a_pass():
    with pytest.raises(ValueError, match="content"):
        pd.compare_file({"name": "x", "path": "/x"}, "text")
    with pytest.raises(ValueError, match="marker"):
        pd.compare_file({"name": "x", "path": "/x", "block": "a"}, "text")


# --- the container -----------------------------------------------------------------------------------

INSPECT = {"Config": {"Image": "localhost/dgxpod/pytorch-mpi:sim"}, "ImageName": "localhost/dgxpod/pytorch-mpi:sim",
           "Mounts": [{"Type": "bind", "Source": "/mnt", "Destination": "/mnt", "RW": True, "Propagation": "rslave"},
                      {"Type": "bind", "Source": "/etc/dgxpod/container-ssh", "Destination": "/etc/dgxpod/mpi",
                       "RW": False}]}
CSPEC = {"name": "container", "container": "dgxpod-mpi", "image": "dgxpod/pytorch-mpi:sim",
         "mounts": ["/mnt:/mnt:rslave", "/etc/dgxpod/container-ssh:/etc/dgxpod/mpi:ro"]}


def test_the_container_image_and_key_mount():
    assert pd.compare_container(CSPEC, INSPECT)["status"] == "ok"
    assert pd.compare_container(CSPEC, None)["status"] == "missing"
    other = dict(INSPECT, Config={"Image": "dgxpod/pytorch-mpi:old"}, ImageName="dgxpod/pytorch-mpi:old")
    r = pd.compare_container(CSPEC, other)
    assert r["status"] == "changed" and "runs image dgxpod/pytorch-mpi:old" in r["summary"]
    rw = dict(INSPECT, Mounts=[INSPECT["Mounts"][0], dict(INSPECT["Mounts"][1], RW=True)])
    r = pd.compare_container(CSPEC, rw)
    assert r["status"] == "changed"
    assert "mount on /etc/dgxpod/mpi is /etc/dgxpod/container-ssh:/etc/dgxpod/mpi" in r["summary"]
    r = pd.compare_container(CSPEC, dict(INSPECT, Mounts=INSPECT["Mounts"][:1]))
    assert "no mount on /etc/dgxpod/mpi" in r["summary"]


def test_image_names_are_compared_without_default_registries():
    assert pd.normalize_image("localhost/a/b:1") == pd.normalize_image("a/b:1") == "a/b:1"
    assert pd.normalize_image("docker.io/library/ubuntu") == "ubuntu:latest"
    assert pd.normalize_image("reg:5000/a/b") == "reg:5000/a/b:latest"
    assert pd.parse_volume("/a:/b:ro,rslave") == {"source": "/a", "destination": "/b", "read_only": True}
    with pytest.raises(ValueError):
        pd.parse_volume("/a")


# --- the module, run by Ansible in check mode ------------------------------------------------------------

def test_module_in_check_mode_reads_and_reports_without_changing(tmp_path):
    (tmp_path / "hosts").write_text(HOSTS.replace("198.18.66.13\tsim-dgx3", "198.18.66.77\tsim-dgx3"))
    (tmp_path / "nccl.env").write_text(NCCL)
    engine = tmp_path / "engine"
    engine.write_text("#!/bin/sh\n[ \"$3\" = dgxpod-mpi ] && echo '%s' && exit 0\necho 'Error: no such container' >&2\n"
                      "exit 125\n" % json.dumps([INSPECT]))
    engine.chmod(0o755)
    args = {"files": [{"name": "hosts", "path": str(tmp_path / "hosts"), "block": BLOCK, "marker": MARKER,
                       "fix": "playbooks/network.yml"},
                      {"name": "nccl_env", "path": str(tmp_path / "nccl.env"), "content": NCCL},
                      {"name": "data_mounts", "path": str(tmp_path / "data-mounts"), "content": "/mnt/data0\n"}],
            "containers": [dict(CSPEC, cli=[str(engine)]),
                           dict(CSPEC, name="gone", container="other", cli=[str(engine)])]}
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible"), "localhost", "-c", "local", "--check",
                          "-e", "ansible_python_interpreter=" + sys.executable, "-m", "pod_drift",
                          "-a", json.dumps(args)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    out = json.loads(res.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert out["changed"] is False
    assert [(f["name"], f["status"]) for f in out["files"]] == [("hosts", "changed"), ("nccl_env", "ok"),
                                                               ("data_mounts", "missing")]
    assert out["files"][0]["fix"] == "playbooks/network.yml" and "+198.18.66.77\tsim-dgx3" in out["files"][0]["diff"]
    assert [(c["name"], c["status"]) for c in out["containers"]] == [("container", "ok"), ("gone", "missing")]
    assert out["summary"] == {"ok": 2, "missing": 2, "changed": 1, "unreadable": 0}
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# --- record and evaluation --------------------------------------------------------------------------

def _file(name, path, status, summary="", diff=None):
    return {"name": name, "path": path, "status": status, "summary": summary, "diff": diff or [],
            "source": "roles/dgx_network (templates/%s.j2)" % name, "fix": "playbooks/network.yml"}


def test_record_names_unreachable_and_failed_nodes():
    hv = {"a": {"pod_drift_read": {"files": [_file("hosts", "/etc/hosts", "ok")], "containers": []}},
          "b": {"pod_drift_read": {"unreachable": True, "msg": "ssh: timed out"}},
          "c": {"pod_drift_read": {"failed": True, "msg": "boom"}}, "d": {}}
    rec = drift.drift_stage_record(["a", "b", "c", "d"], hv)["nodes"]
    assert rec["a"]["status"] == "ok" and rec["a"]["files"][0]["name"] == "hosts"
    assert rec["b"] == {"status": "error", "unreachable": True, "reason": "unreachable: ssh: timed out"}
    assert rec["c"]["reason"] == "pod_drift failed: boom" and "unreachable" in rec["d"]["reason"]


def test_evaluation_names_node_file_and_difference():
    diff = ["--- /etc/hosts (deploy)", "+++ /etc/hosts (node)", "@@ -4 +4 @@", "-198.18.66.14\tsim-dgx4",
            "+198.18.66.99\tsim-dgx4"]
    meas = {"nodes": {
        "sim-dgx2": {"status": "ok", "containers": [], "files": [
            _file("hosts", "/etc/hosts", "changed", "/etc/hosts: the managed block differs: 1 line(s) ...", diff),
            _file("nccl_env", "/etc/dgxpod/nccl.env", "missing",
                  "/etc/dgxpod/nccl.env is missing (the deploy writes it)")]},
        "sim-dgx1": {"status": "ok", "containers": [], "files": [_file("hosts", "/etc/hosts", "ok")]},
        "sim-dgx4": {"status": "error", "unreachable": True, "reason": "unreachable: timed out"}}}
    res = {(r.check, r.host): r for r in drift_eval.evaluate(meas, {}, {})}
    assert res[("drift_hosts", "sim-dgx1")].status == "pass"
    hosts = res[("drift_hosts", "sim-dgx2")]
    assert hosts.status == "fail" and hosts.details["file"] == "/etc/hosts"
    assert hosts.cause.startswith("sim-dgx2 /etc/hosts: the managed block differs")
    assert "-198.18.66.14\tsim-dgx4 / +198.18.66.99\tsim-dgx4" in hosts.cause and "playbooks/network.yml" in hosts.cause
    nccl = res[("drift_nccl_env", "sim-dgx2")]
    assert nccl.status == "fail" and nccl.measured == "missing"
    assert "sim-dgx2 /etc/dgxpod/nccl.env is missing" in nccl.cause
    assert res[("drift", "sim-dgx4")].status == "error" and "sim-dgx4: unreachable" in res[("drift", "sim-dgx4")].reason
    assert drift_eval.evaluate({"nodes": {}}, {}, {})[0].status == "error"
    # what each check is about, as data (issue 38): a deployed file on a node; a node that did not answer
    assert (hosts.category, hosts.subject.to_dict()) == ("file_state", {"node": "sim-dgx2", "path": "/etc/hosts"})
    assert nccl.subject.path == "/etc/dgxpod/nccl.env" and res[("drift_hosts", "sim-dgx1")].category == "file_state"
    down = res[("drift", "sim-dgx4")]
    assert (down.category, down.subject.to_dict(), down.unreachable) == ("file_state", {"node": "sim-dgx4"}, True)
    pod = drift_eval.evaluate({"nodes": {}}, {}, {})[0]
    assert (pod.category, pod.subject.to_dict()) == ("pod_state", {})
    rec = drift.drift_stage_record(["b", "c", "d"], {"b": {"pod_drift_read": {"unreachable": True, "msg": "x"}},
                                                     "c": {"pod_drift_read": {"failed": True, "msg": "boom"}},
                                                     "d": {}})
    assert {r.host: r.unreachable for r in drift_eval.evaluate(rec, {}, {})} == {"b": True, "c": False, "d": True}


def test_the_drift_stage_is_registered_and_reported():
    assert "drift" in [s.name for s in stages.registry()]
    meas = {"nodes": {"sim-dgx2": {"status": "ok", "containers": [], "files": [
        _file("hosts", "/etc/hosts", "changed", "/etc/hosts: the managed block differs",
              ["@@ -1 +1 @@", "-a", "+b"])]}}}
    base = {"pod": "p", "ra_profile": "x", "simulated": True, "finished": "t", "checks": []}
    doc = build_results(base, {}, {}, {"drift": meas}, run_tags=["drift"])
    rows = [c for c in doc["checks"] if c["check"] == "drift_hosts"]
    assert rows and rows[0]["status"] == "fail" and rows[0]["host"] == "sim-dgx2" and rows[0]["file"] == "/etc/hosts"
    md = "\n".join(stages.markdown_sections(doc))
    assert "Drift of the deployed files" in md and "-a\n+b" in md
    left_out = build_results(base, {}, {}, {}, run_tags=["identity"])
    assert [c["status"] for c in left_out["checks"] if c["check"] == "drift"] == ["skipped"]
    failed = build_results(base, {}, {}, {}, run_tags=["drift"])
    assert [c["status"] for c in failed["checks"] if c["check"] == "drift"] == ["error"]


# --- a node that misses a run keeps its pinned key ---------------------------------------------------------

KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0gW8T0Pq6mZq3dJ9fG1c0rR3yXrPz1d1b3lYy9w7a"
KEY_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBo4f0tK2qk3QH6l0p7w2l0dJc0gX1v6mQ9y1u8b2aZc"
KEY_B2 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx9QmT3b1Lq0sV8nH2cY5wE7rJ4uP6aD1fG3hK8mN0z"


def test_merge_keeps_a_silent_members_key_and_drops_removed_nodes():
    previous = nc.known_hosts({"a": {"pubkey": KEY_A, "aliases": ["a"]}, "b": {"pubkey": KEY_B, "aliases": ["b"]},
                               "gone": {"pubkey": KEY_B2, "aliases": ["gone"]}}, 2222)
    assert nc.known_hosts_keys(previous) == {"a": KEY_A, "b": KEY_B, "gone": KEY_B2}
    # b did not answer and the controller remembers nothing: its entry from the last run stays
    merged = nc.merge_pinned_keys(["a", "b"], {"a": KEY_A}, {}, nc.known_hosts_keys(previous))
    assert merged == {"a": KEY_A, "b": KEY_B}  # "gone" left the inventory: dropped
    # a key seen in this run wins over the remembered and the previous one (a re-installed node)
    assert nc.merge_pinned_keys(["b"], {"b": KEY_B2}, {"b": KEY_B}, {"b": KEY_B}) == {"b": KEY_B2}
    # the controller's memory wins over the node's file
    assert nc.merge_pinned_keys(["b"], {}, {"b": KEY_B2 + " b container sshd"}, {"b": KEY_B}) == \
        {"b": KEY_B2 + " b container sshd"}
    # a member seen in no run has nothing to pin
    assert nc.merge_pinned_keys(["a", "new"], {"a": KEY_A}, {}, {}) == {"a": KEY_A}
    assert nc.known_hosts_keys("# comment\n|1|hashed|x= ssh-ed25519 AAAA\ngarbage\n") == {}


def test_the_filter_reads_the_node_file_when_the_controller_forgot(tmp_path):
    from filter_plugins import ngc
    previous = nc.known_hosts({"a": {"pubkey": KEY_A, "aliases": ["a"]}, "b": {"pubkey": KEY_B, "aliases": ["b"]}},
                              2222)
    hv = {"a": {"ngc_container_node_keys": {"public_key": KEY_A}}, "b": {}}
    keys = ngc.ngc_container_host_keys(["a", "b"], hv, str(tmp_path), previous)
    assert keys == {"a": KEY_A, "b": KEY_B}
    (tmp_path / "b.pub").write_text(KEY_B2 + " b container sshd\n")
    assert ngc.ngc_container_host_keys(["a", "b"], hv, str(tmp_path), previous)["b"].startswith(KEY_B2)
    assert ngc.ngc_container_host_keys(["a"], hv, str(tmp_path), previous) == {"a": KEY_A}


def test_the_keys_collected_in_this_run_are_remembered_in_one_call(tmp_path):
    """ngc_host_key_files: the pod_files entries of roles/ngc_container's "remember" step - one per node that gave
    its key in this run (library/pod_ssh_key's public_key), none for a node that did not (no result, a failed read,
    a key not made yet in check mode); what ngc_container_host_keys reads back."""
    from filter_plugins import ngc
    hv = {"a": {"ngc_container_node_keys": {"public_key": KEY_A + " a sshd"}}, "b": {},
          "c": {"ngc_container_node_keys": {"failed": True, "msg": "pod_ssh_key: cannot read"}},
          "d": {"ngc_container_node_keys": {"public_key": None, "why": ["key generated"]}}}
    files = ngc.ngc_host_key_files(["a", "b", "c", "d"], hv, str(tmp_path))
    assert files == [{"path": str(tmp_path / "a.pub"), "mode": "0644", "label": "a", "content": KEY_A + " a sshd\n"}]
    (tmp_path / "a.pub").write_text(files[0]["content"])
    assert ngc.ngc_container_host_keys(["a"], {"a": {}}, str(tmp_path))["a"].startswith(KEY_A)


# --- the managed /etc/fstab block of roles/nfs_client ------------------------------------------------

FSTAB_PLAN = [
    {"src": "198.18.66.211:/ifs/scripts", "path": "/mnt/scripts", "fstype": "nfs", "opts": "defaults"},
    {"src": "198.18.66.211:/ifs/data", "path": "/mnt/isilon1", "fstype": "nfs",
     "opts": "rsize=524288,wsize=524288,nolock"},
    {"src": "198.18.5.212:/ifs/data", "path": "/mnt/isilon2", "fstype": "nfs",
     "opts": "rsize=524288,wsize=524288,nolock"},
]
FSTAB_OWNER = "UUID=1234-abcd / ext4 errors=remount-ro 0 1\n/swapfile none swap sw 0 0\n"


def _nfs_mounts_module():
    """library/pod_nfs_mounts.py (the module that writes the block) loaded by path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("pod_nfs_mounts_module",
                                                  os.path.join(ROOT, "library", "pod_nfs_mounts.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fstab_spec(path, plan=FSTAB_PLAN):
    from filter_plugins import pod as pod_filters  # what roles/nfs_client/tasks/drift.yml renders
    return dict({"name": "fstab", "path": str(path)}, **pod_filters.pod_nfs_fstab_block(plan))


def _deployed_fstab(plan=FSTAB_PLAN):
    """/etc/fstab as library/pod_nfs_mounts.py writes it: the owner's lines, then its managed block."""
    nm = _nfs_mounts_module()
    before, _, after = nm.split_fstab(FSTAB_OWNER)
    return nm.render_fstab(before, [(m["src"], m["path"], m["fstype"], m["opts"]) for m in plan], after)


def test_the_fstab_block_the_module_writes_is_what_drift_expects(tmp_path):
    f = tmp_path / "fstab"
    f.write_text(_deployed_fstab())
    r = pd.compare_file(_fstab_spec(f), *_read(f)[:2])
    assert r["status"] == "ok", r
    # the owner's lines are theirs: a change outside the block is not drift
    f.write_text(_deployed_fstab().replace("errors=remount-ro", "errors=panic"))
    assert pd.compare_file(_fstab_spec(f), *_read(f)[:2])["status"] == "ok"
    # a plan with one more mount than the node has: the node's block is behind the plan
    more = FSTAB_PLAN + [dict(FSTAB_PLAN[2], path="/mnt/isilon3", src="198.18.66.213:/ifs/data")]
    r = pd.compare_file(_fstab_spec(f, more), *_read(f)[:2])
    assert r["status"] == "changed" and "+198.18.66.213" not in "".join(r["diff"])
    assert "-198.18.66.213:/ifs/data /mnt/isilon3 nfs rsize=524288,wsize=524288,nolock 0 0" in r["diff"]


def test_an_fstab_option_changed_by_hand_is_drift_naming_the_line(tmp_path):
    f = tmp_path / "fstab"
    f.write_text(_deployed_fstab().replace("198.18.5.212:/ifs/data /mnt/isilon2 nfs rsize=524288,wsize=524288,nolock",
                                           "198.18.5.212:/ifs/data /mnt/isilon2 nfs rsize=65536,wsize=524288,nolock"))
    r = pd.compare_file(_fstab_spec(f), *_read(f)[:2])
    assert r["status"] == "changed"
    assert r["diff"][2:] == ["@@ -3 +3 @@",
                             "-198.18.5.212:/ifs/data /mnt/isilon2 nfs rsize=524288,wsize=524288,nolock 0 0",
                             "+198.18.5.212:/ifs/data /mnt/isilon2 nfs rsize=65536,wsize=524288,nolock 0 0"]
    assert r["summary"].startswith("%s: the managed block differs" % f)
    # the block gone (the file rewritten by hand): missing, naming the block's BEGIN line
    f.write_text(FSTAB_OWNER)
    r = pd.compare_file(_fstab_spec(f), *_read(f)[:2])
    assert r["status"] == "missing" and "# BEGIN dgxpod nfs_client" in r["summary"]

    meas = {"nodes": {"sim-dgx3": {"status": "ok", "containers": [], "files": [dict(
        pd.compare_file(_fstab_spec(f), _deployed_fstab().replace("rsize=524288,wsize=524288,nolock 0 0\n# END",
                                                                  "rsize=65536,wsize=524288,nolock 0 0\n# END")),
        source="roles/nfs_client (library/pod_nfs_mounts.py, the managed block)", fix="playbooks/storage.yml")]}}}
    res = {(r.check, r.host): r for r in drift_eval.evaluate(meas, {}, {})}
    bad = res[("drift_fstab", "sim-dgx3")]
    assert bad.status == "fail" and bad.details["file"] == str(f)
    assert bad.cause.startswith("sim-dgx3 %s: the managed block differs" % f)
    assert "+198.18.5.212:/ifs/data /mnt/isilon2 nfs rsize=65536" in bad.cause and "playbooks/storage.yml" in bad.cause


def test_the_module_and_the_drift_filter_share_the_markers_and_the_line_format():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import nfs_plan as sp
    nm = _nfs_mounts_module()
    assert (nm.BEGIN, nm.END) == (sp.FSTAB_BEGIN, sp.FSTAB_END)
    text = _deployed_fstab()
    assert pd.extract_block(text, "{mark}", sp.FSTAB_BEGIN, sp.FSTAB_END) == sp.fstab_block(FSTAB_PLAN).splitlines()
    assert nm.split_fstab(text)[1] == [(m["src"], m["path"], m["fstype"], m["opts"]) for m in FSTAB_PLAN]
    assert sp.fstab_block([]) == ""
