"""A user's own training dataset, unreadable files named once, accelerator utilisation (issue 44 items 2 and 4).

The listing (module_utils/training/user_dataset.py) on real trees in tmp_path; library/pod_dataset.py's user path
writes the file list outside the dataset and leaves the dataset as it was; the job's records of unreadable files and
its data wait become one ``train_dataset_files`` finding and the accelerator-utilisation checks. The job itself
(roles/pod_training/files/dgxpod_train.py) needs PyTorch: it runs on the pod-in-a-box (tests/integration)."""
from __future__ import annotations

import io
import json
import os
import tarfile

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import apply_simulated_policy
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import parse as tp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training import user_dataset as ud

from tests.unit.test_training import DIRS, NODES, measurements, record, records, run


def _tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return str(root)


def _tar(samples):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w") as t:
        for name, data in samples:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


# ------------------------------------------------------------------------------------------------ listing

def test_an_imagefolder_tree_is_listed_with_torchvisions_class_order(tmp_path):
    root = _tree(tmp_path / "ds", {"n02/a.JPEG": b"x" * 10, "n01/b.jpg": b"y" * 20, "n01/sub/c.png": b"z" * 5,
                                   "n01/README.txt": b"t", ".snapshot/old.jpg": b"o", "n03/.DS_Store": b"m"})
    got = ud.list_dataset(root)
    assert got["format"] == "imagefolder" and got["classes"] == ["n01", "n02"]
    assert got["entries"] == [("n01/b.jpg", 20, 0), ("n01/sub/c.png", 5, 0), ("n02/a.JPEG", 10, 1)]
    assert got["files"] == 3 and got["bytes"] == 35 and got["skipped"] == {".txt": 1}


def test_webdataset_shards_are_listed_one_line_a_shard(tmp_path):
    shard = _tar([("k0.jpg", b"j"), ("k0.cls", b"3")])
    root = _tree(tmp_path / "wds", {"train-000000.tar": shard, "sub/train-000001.tar": shard, "info.json": b"{}"})
    got = ud.list_dataset(root)
    assert got["format"] == "shards" and got["classes"] == []
    assert [e[0] for e in got["entries"]] == ["train-000000.tar", "sub/train-000001.tar"]  # walk order
    assert ud.list_dataset(root, "shards")["files"] == 2


@pytest.mark.parametrize("files, fmt, words", [
    ({"a/x.tfrecord": b"r"}, "auto", ["TFRecord", "WebDataset"]),
    ({"x.jpg": b"j", "y.jpg": b"j"}, "auto", ["at the top level", "x.jpg", "one directory per class"]),
    ({"c/x.jpg": b"j", "s.tar": b"t"}, "auto", ["both", "pod_training_dataset_format"]),
    ({"c/x.jpg": b""}, "auto", ["empty", "c/x.jpg"]),
    ({"c/x y.jpg": b"j"}, "auto", ["white space", "x y.jpg"]),
    ({"c/x.jpg": b"j"}, "shards", ["no .tar shards"]),
    ({"s.tar": b"t"}, "imagefolder", ["no images in class directories"]),
    ({"c/x.jpg": b"j"}, "tfrecord", ["pod_training_dataset_format", "auto, imagefolder, shards"]),
])
def test_a_dataset_that_cannot_be_used_says_what_was_found_and_what_to_do(tmp_path, files, fmt, words):
    root = _tree(tmp_path / "ds", files)
    with pytest.raises(ud.UserDatasetError) as e:
        ud.list_dataset(root, fmt)
    for w in words:
        assert w in str(e.value)


def test_a_missing_or_empty_or_file_root_is_named(tmp_path):
    with pytest.raises(ud.UserDatasetError, match="does not exist.*relative to the data mounts"):
        ud.list_dataset(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ud.UserDatasetError, match="no images in class directories and no tar shards .0 file"):
        ud.list_dataset(str(tmp_path / "empty"))
    (tmp_path / "f").write_text("x")
    with pytest.raises(ud.UserDatasetError, match="is a file"):
        ud.list_dataset(str(tmp_path / "f"))


@pytest.mark.parametrize("path, ok", [("datasets/imagenet/train", "datasets/imagenet/train"),
                                      ("./a//b/", "a/b"), ("/mnt/isilon1/x", None), ("a/../../etc", None),
                                      ("", None), ("..", None)])
def test_the_dataset_path_is_relative_to_the_data_mounts(path, ok):
    if ok:
        assert ud.check_path(path) == ok
        assert ud.manifest_name(path) == "user-" + ok.replace("/", "_") + ".FILES.txt"
    else:
        with pytest.raises(ud.UserDatasetError, match="pod_training_dataset_path"):
            ud.check_path(path)


def test_the_module_writes_the_file_list_outside_the_dataset_and_leaves_the_dataset_alone(tmp_path):
    import pod_dataset
    root = _tree(tmp_path / "ds", {"c0/a.jpg": b"a" * 7, "c1/b.jpg": b"b" * 9})
    before = sorted((p, os.path.getmtime(os.path.join(d, p))) for d, _, fs in os.walk(root) for p in fs)
    listing = tmp_path / "lists" / "user-ds.FILES.txt"
    summary = json.loads(pod_dataset.list_user_dataset(root, "auto", str(listing)))
    assert listing.read_text() == "c0/a.jpg 7 0\nc1/b.jpg 9 1\n"
    assert summary["user"] and summary["files"] == 2 and summary["classes"] == 2 and summary["root"] == root
    assert summary["file_list"] == str(listing) and summary["format"] == "imagefolder"
    assert sorted((p, os.path.getmtime(os.path.join(d, p))) for d, _, fs in os.walk(root) for p in fs) == before
    # check mode: listed, nothing written
    other = tmp_path / "lists" / "other.FILES.txt"
    pod_dataset.list_user_dataset(root, "auto", str(other), write=False)
    assert not other.exists()


# ------------------------------------------------------------------------------------------------ evaluation

FAST = {"ips": 720.0, "mb": 95.0, "gpu_util_csv": ["0, 98", "1, 99"]}  # a healthy real pod's figures
BAD = "/mnt/isilon2/dgxpod-dataset/train/c003/img0042.jpg (OSError: image file is truncated (12 bytes not processed))"


def test_a_corrupt_file_is_one_failed_check_naming_its_path_and_one_finding():
    # ranks 1 and 5 (two nodes) met the same truncated file, in both passes
    per = {r: dict(FAST, **({"bad_files": [BAD], "bad_count": 2 if r == 1 else 1} if r in (1, 5) else {}))
           for r in range(8)}
    s = tp.summarize(records(per), {n: n for n in NODES}, 8)
    assert s["bad_files"] == [{"file": BAD, "ranks": [1, 5], "nodes": ["sim-dgx1", "sim-dgx3"]}]
    assert s["bad_count"] == 3
    res = run(measurements(cold=records(per), warm=records(per)))
    files = [r for r in res if r.check == "train_dataset_files"]
    assert len(files) == 1 and files[0].status == "fail"
    assert files[0].subject.path == "/mnt/isilon2/dgxpod-dataset/train/c003/img0042.jpg"
    assert "img0042.jpg" in files[0].cause and "replace or remove" in files[0].cause
    bad = [r for r in res if r.status in ("fail", "error")]
    assert [r.check for r in bad] == ["train_dataset_files"]
    doc = {"checks": [r.to_dict() for r in res]}
    found = build_findings(doc["checks"])
    assert len(found) == 1 and "img0042.jpg" in json.dumps(found[0])


def test_no_unreadable_file_is_a_pass_and_a_bad_record_is_refused():
    res = run(measurements())
    assert [r.status for r in res if r.check == "train_dataset_files"] == ["pass"]
    with pytest.raises(ValueError, match="bad_files"):
        tp.summarize([record(0, "dgx1", DIRS[0], world=1, bad_files="x.jpg")], {"dgx1": "dgx1"})


def test_accelerator_utilisation_per_node_and_the_gpus_the_storage_kept_busy():
    # sim-dgx2's ranks wait for data 40 % of the cold pass; the others 5 %
    per = {r: {"wait": 0.4 if NODES[r // 2] == "sim-dgx2" else 0.05} for r in range(8)}
    s = tp.summarize(records(per), {n: n for n in NODES}, 8)
    assert s["nodes"]["sim-dgx2"]["accelerator_busy"] == pytest.approx(0.6)
    assert [r["accelerator_busy"] for r in s["ranks"][:2]] == [pytest.approx(0.95)] * 2
    res = run(measurements(cold=records(per)))
    busy = {r.host: r for r in res if r.check == "train_accelerator_busy"}
    assert busy["sim-dgx2"].status == "fail" and busy["sim-dgx1"].status == "pass"
    assert busy["sim-dgx2"].measured == 60.0 and busy["sim-dgx2"].expected == 90.0
    assert "MLPerf Storage" in busy["sim-dgx2"].source and busy["sim-dgx2"].absolute
    kept = [r for r in res if r.check == "train_accelerators_kept_busy"][0]
    assert (kept.status, kept.measured, kept.expected) == ("fail", 6, 8) and "short: sim-dgx2" in kept.cause
    # the simulator's CPU ranks are no GPUs: reported, not judged
    sim = apply_simulated_policy([r for r in res if r.check.startswith("train_accelerator")], True)
    assert {r.status for r in sim} == {"skipped"} and sim[0].measured is not None
    # a pod's own figure (CosmoFlow-like 70 %) with its source
    exp = {"training": {"accelerator_busy_fraction": {"value": 0.5, "source": "our workload"}}}
    low = [r for r in run(measurements(cold=records(per)), exp=exp) if r.check == "train_accelerator_busy"]
    assert {r.status for r in low} == {"pass"} and low[0].source == "our workload"


def test_a_user_dataset_is_reported_as_such():
    man = {"user": True, "format": "shards", "root": "/mnt/isilon1/wds", "files": 12, "classes": None,
           "bytes": 1200, "mean_kb": 0.1, "file_list": "/mnt/isilon1/dgxpod-dataset-lists/user-wds.FILES.txt",
           "skipped": {".json": 1}, "empty": []}
    m = measurements(dataset={"failed": False, "manifest": man, "roots": DIRS})
    ds = [r for r in run(m) if r.check == "train_dataset"][0]
    assert ds.status == "pass" and ds.unit == "shards" and "user's dataset /mnt/isilon1/wds (shards)" in ds.source
    assert ds.details["skipped"] == {".json": 1}


def test_a_dataset_smaller_than_a_pass_does_not_judge_storage_against_the_page_cache():
    per = {r: {"wrapped": True} for r in range(8)}
    m = measurements(cold=records(per), warm=records(per),
                     dataset={"failed": False, "manifest": {"files": 64, "user": True, "format": "imagefolder",
                                                            "root": "/mnt/isilon1/small"}, "roots": DIRS})
    sb = [r for r in run(m) if r.check == "train_storage_bound"][0]
    assert sb.status == "skipped" and "fewer files than a pass reads (64 files" in sb.reason
