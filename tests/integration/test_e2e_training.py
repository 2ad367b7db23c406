"""The training stage end to end on the pod-in-a-box (issue 15)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from e2e import ROOT, DGX, PODSIM, RESULTS, TIMINGS, run

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root")]


def training_checks():
    with open(os.path.join(RESULTS, "results.json")) as fh:
        doc = json.load(fh)
    checks = {}
    for c in doc["checks"]:
        if c["check"].startswith("train"):
            checks.setdefault(c["check"], []).append(c)
    return doc, checks


def test_training_makes_the_dataset_once_trains_through_every_mount_and_a_slow_storage_path_is_named(converged):
    ifs = os.path.join(ROOT, "sim", ".state", "ifs")
    before = set(os.listdir(ifs)) - {"dgxpod-dataset"}
    subprocess.run(["rm", "-rf", os.path.join(ifs, "dgxpod-dataset")], check=True)
    res = run("ansible-playbook", "validate.yml", "--tags", "training", timeout=900)
    TIMINGS["validate.yml --tags training (dataset made)"] = res.elapsed
    assert res.returncode == 0, res.stdout[-5000:]
    doc, checks = training_checks()
    m = doc["measurements"]["training"]
    assert m["dataset"]["generated"] and checks["train_dataset"][0]["measured"] == 2000
    cold, warm = m["passes"]["cold"]["summary"], m["passes"]["warm"]["summary"]
    dirs = ["/mnt/isilon%d/dgxpod-dataset" % i for i in range(1, 5)]
    assert cold["mounts_read"] == dirs and warm["mounts_read"] == dirs  # every data mount was read
    assert sorted(cold["nodes"]) == DGX and all(len(n["ranks"]) == 2 for n in cold["nodes"].values())
    assert cold["loss_last"] < cold["loss_first"] and warm["loss_last"] < warm["loss_first"]
    assert all(c["status"] == "pass" for k in ("train_converges", "train_storage_bound", "train_relative")
               for c in checks[k]), checks
    assert all(c["status"] == "skipped" for k in ("train_throughput", "train_read_rate", "train_gpu_util")
               for c in checks[k])
    assert set(os.listdir(ifs)) - {"dgxpod-dataset"} == before  # nothing of the run left but the dataset
    # a storage node's link slowed: the cold pass is storage-bound, naming the path; the dataset is reused
    # 2 Mbit/s, not less: the FUSE stand-in revalidates a file over the link on every open (as NFS's close-to-open
    # GETATTR does), and at 256 kbit/s the token bucket the cold pass emptied starved those small calls too, so the
    # warm pass was as slow as the cold one (82 %, no fault found) on the 2026-11-24 machines - session 17's code
    # failed the same way there. At 2 and 4 Mbit/s the cold pass trains at 47-48 % of the warm one (fail < 60 %).
    run(PODSIM, "shape", "sim-isilon2", "40gige-1", "--rate", "2mbit", check=True)
    try:
        res = run("ansible-playbook", "validate.yml", "--tags", "training", timeout=900)
        TIMINGS["validate.yml --tags training (shaped storage link)"] = res.elapsed
    finally:
        run(PODSIM, "shape", "sim-isilon2", "40gige-1", "--clear", check=True)
    assert res.returncode != 0, res.stdout[-5000:]
    doc, checks = training_checks()
    assert doc["measurements"]["training"]["dataset"]["reused"]
    bound = checks["train_storage_bound"][0]
    assert bound["status"] == "fail" and "storage limits training" in bound["cause"], bound
    assert "-> sim-isilon2 (198.18.66.212)" in bound["cause"], bound


@pytest.mark.long  # a second fault of a stage that CI already covers: `make test-long`
def test_a_slow_dgx_is_named_by_train_relative(converged):
    # sim-dgx3's MPI container capped to 0.05 CPU (`podsim cpu`): its ranks' own work slows, nothing else
    run(PODSIM, "cpu", "sim-dgx3", "--limit", "0.05", check=True)
    try:
        res = run("ansible-playbook", "validate.yml", "--tags", "training", timeout=900)
        TIMINGS["validate.yml --tags training (one DGX at 0.05 CPU)"] = res.elapsed
    finally:
        run(PODSIM, "cpu", "sim-dgx3", "--clear", check=True)
    assert res.returncode != 0, res.stdout[-5000:]
    _, checks = training_checks()
    bad = [c for c in checks["train_relative"] if c["status"] != "pass"]
    assert bad and {c["host"] for c in bad} == {"sim-dgx3"}, checks["train_relative"]
    assert all(c["status"] == "fail" and "sim-dgx3:" in c["cause"] for c in bad), bad
    assert "the node itself is slow" in bad[0]["cause"], bad[0]
    assert all(c["status"] == "pass" for c in checks["train_converges"] + checks["train_storage_bound"])


def _tree_state(root):
    return sorted((os.path.relpath(os.path.join(d, f), root), os.path.getsize(os.path.join(d, f)),
                   os.path.getmtime(os.path.join(d, f))) for d, _, fs in os.walk(root) for f in fs)


def test_a_users_own_dataset_as_imagefolder_and_as_shards_and_a_corrupt_file_named_once(converged):
    # issue 44 item 2: a user's dataset on the shared storage (the storage nodes' export is sim/.state/ifs, seen as
    # /mnt/isilonN on every DGX), built here from the generated dataset's JPEG files: an ImageFolder tree of 16
    # classes x 120 files with one file cut to a third, and 8 WebDataset shards of 240 samples (<key>.jpg + <key>.cls):
    # 1,920 samples, what the simulator's 8 ranks read in a pass ((3 + 12) x 16 each), so every file is read once
    import io
    import tarfile
    ifs = os.path.join(ROOT, "sim", ".state", "ifs")
    src = os.path.join(ifs, "dgxpod-dataset", "train")
    if not os.path.isdir(src):  # the first test of this file made it; alone, make it
        assert run("ansible-playbook", "validate.yml", "--tags", "training", timeout=900).returncode == 0
    user = os.path.join(ifs, "userds")
    lists = os.path.join(ifs, "dgxpod-dataset-lists")
    classes = sorted(os.listdir(src))[:16]
    samples = []
    try:
        for c in classes:
            os.makedirs(os.path.join(user, "if", c))
            for f in sorted(os.listdir(os.path.join(src, c)))[:120]:
                with open(os.path.join(src, c, f), "rb") as fh:
                    raw = fh.read()
                samples.append((c, f, raw))
                with open(os.path.join(user, "if", c, f), "wb") as out:
                    out.write(raw)
        bad_c, bad_f, bad_raw = samples[20]
        with open(os.path.join(user, "if", bad_c, bad_f), "wb") as out:
            out.write(bad_raw[: len(bad_raw) // 3])
        os.makedirs(os.path.join(user, "wds"))
        for s in range(8):
            with tarfile.open(os.path.join(user, "wds", "train-%06d.tar" % s), "w") as t:
                for i, (c, _f, raw) in enumerate(samples[s::8]):
                    for name, data in (("%s_%03d.jpg" % (c, i), raw), ("%s_%03d.cls" % (c, i),
                                                                      str(classes.index(c)).encode())):
                        ti = tarfile.TarInfo(name)
                        ti.size = len(data)
                        t.addfile(ti, io.BytesIO(data))
        before = _tree_state(user)

        res = run("ansible-playbook", "validate.yml", "--tags", "training", "-e",
                  "pod_training_dataset_path=userds/if", timeout=900)
        TIMINGS["validate.yml --tags training (user ImageFolder, one corrupt file)"] = res.elapsed
        assert res.returncode != 0, res.stdout[-5000:]  # the corrupt file fails its check
        doc, checks = training_checks()
        ds = checks["train_dataset"][0]
        assert ds["status"] == "pass" and ds["measured"] == 1920 and ds["format"] == "imagefolder", ds
        assert doc["measurements"]["training"]["passes"]["cold"]["ok"], doc["measurements"]["training"]["passes"]
        files = checks["train_dataset_files"]
        assert len(files) == 1 and files[0]["status"] == "fail", files
        path = "/userds/if/%s/%s" % (bad_c, bad_f)
        assert path in files[0]["cause"] and files[0]["subject"]["path"].endswith(path), files[0]
        named = [f for f in doc["findings"] if path in json.dumps(f)]
        assert len(named) == 1 and doc["findings"][0] is named[0], doc["findings"]
        assert [c["check"] for c in doc["checks"] if c["status"] in ("fail", "error")] == ["train_dataset_files"]
        assert checks["train_accelerator_busy"] and checks["train_accelerators_kept_busy"][0]["measured"] is not None

        res = run("ansible-playbook", "validate.yml", "--tags", "training", "-e",
                  "pod_training_dataset_path=userds/wds", "-e", "pod_training_dataset_classes=16", timeout=900)
        TIMINGS["validate.yml --tags training (user WebDataset shards)"] = res.elapsed
        assert res.returncode == 0, res.stdout[-5000:]
        _, checks = training_checks()
        ds = checks["train_dataset"][0]
        assert ds["measured"] == 8 and ds["unit"] == "shards" and ds["format"] == "shards", ds
        assert all(c["status"] == "pass" for k in ("train_dataset_files", "train_converges") for c in checks[k])
        assert _tree_state(user) == before  # the user's dataset: never written, never removed
    finally:
        subprocess.run(["rm", "-rf", user, lists], check=True)
