"""scripts/plan_perf.py --stages all: every stage of validate.yml predicted, with its share (issue 41 item 1; the
formulas in the script's docstring and docs/benchmarks.md "Plan-only prediction for every stage")."""
from __future__ import annotations

import importlib.util
import math
import os

import pytest

from inventory_util import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "plan_perf.py")


def _script():
    spec = importlib.util.spec_from_file_location("plan_perf_stages_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pp = _script()
FULL = {"min_bytes": "8M", "max_bytes": "8G", "step_factor": 2, "iters": 20, "warmup_iters": 5}


def _stages(r):
    return {st["stage"]: st for st in r["stages"]}


@pytest.fixture(scope="module")
def reports():
    return {(n, p): pp.plan_report("inventories/dgxpod", p, n) for n in (4, 16, 140) for p in ("full", "quick")}


def test_every_stage_in_order_with_shares(reports):
    for r in reports.values():
        assert [st["stage"] for st in r["stages"]] == list(pp.STAGES)
        assert sum(st["share"] for st in r["stages"]) == pytest.approx(1.0)
        assert r["validation_s"] == pytest.approx(sum(st["seconds"] for st in r["stages"]))
        assert all(st["seconds"] > 0 and st["formula"] for st in r["stages"])
        s = _stages(r)
        # the iperf3 and fio figures are the ones the script always printed
        assert s["iperf"]["seconds"] == r["network_s"] and s["fio"]["seconds"] == r["fio_s"]
        assert r["total_s"] == pytest.approx(r["network_s"] + r["fio_s"])


def test_gpu_stage_uses_dcgm_documented_durations_not_the_timeout(reports):
    full, quick = _stages(reports[(16, "full")])["gpu"], _stages(reports[(16, "quick")])["gpu"]
    play = pp.play_seconds(pp.GPU_TASKS, 16)
    assert full["seconds"] == pytest.approx(30 * 60 + play)     # dcgmi diag -r 3: < 30 min (DCGM user guide)
    assert quick["seconds"] == pytest.approx(60 + play)         # -r 1: seconds, taken as a minute
    # all DGX at once: 140 DGX take the same DCGM time, only the play's SSH rounds grow
    assert _stages(reports[(140, "full")])["gpu"]["seconds"] - full["seconds"] == pytest.approx(
        pp.play_seconds(pp.GPU_TASKS, 140) - play)


def test_nccl_sweep_sizes_and_run_time_model():
    assert pp.nccl_bytes("8M") == 8 << 20 and pp.nccl_bytes("8G") == 8 << 30 and pp.nccl_bytes("1024") == 1024
    with pytest.raises(ValueError):
        pp.nccl_bytes("8 MiBs")
    sizes = pp.nccl_sizes(FULL)
    assert len(sizes) == 11 and sizes[0] == 8 << 20 and sizes[-1] == 8 << 30
    with pytest.raises(ValueError):
        pp.nccl_sizes(dict(FULL, min_bytes="1G", max_bytes="8M"))
    # one DGX-1 alone at 110 GB/s: 45 iterations of each size, 2 x 7/8 of the buffer through each rank's link
    moving = sum(45 * (s * 2 * 7 / 8 / 110e9 + pp.NCCL_LATENCY_S) for s in sizes)
    assert pp.nccl_run_seconds(FULL, 1, 8, 110.0) == pytest.approx(pp.NCCL_START_S + 8 * pp.NCCL_S_PER_RANK + moving)
    # slower bus bandwidth, longer run; more ranks, a longer start
    assert pp.nccl_run_seconds(FULL, 2, 8, 20.0) > pp.nccl_run_seconds(FULL, 2, 8, 40.0)
    assert pp.nccl_run_seconds(FULL, 100, 8, 40.0) > pp.nccl_run_seconds(FULL, 2, 8, 40.0)


def test_nccl_localisation_is_group_testing_and_healthy_pods_run_none(reports):
    for (n, _), r in reports.items():
        nc = r["nccl"]
        assert nc["localise_d0_s"] == 0
        assert nc["localise_d1_rounds"] == math.ceil(math.log2(n)) and nc["localise_d1_runs"] <= 2 * math.ceil(
            math.log2(n))
        assert r["validation_one_slow_s"] == pytest.approx(r["validation_s"] + nc["localise_d1_s"])
        assert nc["pair_rounds"] == n - 1
        if n >= 16:
            assert nc["localise_d1_s"] < nc["pair_rounds_s"] / 2
    # the 004 pod's DGX-1: 4 x 100 Gb/s compute NICs x 0.8 = 40 GB/s across DGX; 110 GB/s alone (expectations.nccl)
    assert reports[(16, "full")]["nccl"]["multi_busbw"] == pytest.approx(40.0)
    assert reports[(16, "full")]["nccl"]["single_busbw"] == 110


def test_training_is_the_jobs_steps_at_the_published_throughput(reports):
    job = pp._training_job()
    s = _stages(reports[(4, "full")])["training"]
    steps = job["warmup"] + job["steps"]
    want = pp.TRAIN_PASSES * (pp.TRAIN_START_S + steps * job["batch"] / 711.0) + pp.play_seconds(pp.TRAINING_TASKS, 4)
    assert s["seconds"] == pytest.approx(want)   # DGX-1: V100, 711 images/s a GPU (expectations.training)


def test_network_state_grows_with_the_ping_targets(reports):
    small, large = _stages(reports[(16, "full")])["network"], _stages(reports[(140, "full")])["network"]
    assert "4 NICs x 15 peers" in small["formula"] and "4 NICs x 139 peers" in large["formula"]
    assert small["seconds"] < large["seconds"] < 120


def test_text_prints_each_stage_and_its_share_and_iperf_fio_only_keeps_the_old_output(reports):
    text = pp.text(reports[(140, "full")])
    for stage in pp.STAGES:
        assert "\n  %-9s " % stage in text
    assert "predicted validation, healthy pod" in text and "with one slow DGX" in text and "139 rounds" in text
    old = pp.plan_report("inventories/dgxpod", "full", 140, stages="iperf,fio")
    assert "stages" not in old and pp.text(old).endswith("predicted network + storage: %s"
                                                         % pp.format_eta(old["total_s"]))


def test_localisation_rounds_shrink():
    """Round k runs ceil(N / 2^k) DGX: the whole localisation costs less than log2 N all-node runs."""
    n = 140
    loc = pp.localisation_seconds(FULL, n, 8, 40.0)
    assert loc < math.ceil(math.log2(n)) * (pp.nccl_run_seconds(FULL, n, 8, 40.0) + pp.play_seconds(pp.NCCL_TASKS, n))
    assert loc > math.ceil(math.log2(n)) * pp.nccl_run_seconds(FULL, 2, 8, 40.0)
