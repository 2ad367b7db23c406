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
