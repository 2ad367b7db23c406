"""The registry of stages (module_utils/report/stages.py) as the findings read it (issue 38): its own rows (a stage
left out by the run's tags, one that recorded nothing, one whose evaluator raised) are about the pod as a whole,
and every result it returns says which stage decided it."""
from __future__ import annotations

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import Stage, evaluate_stages, registry
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import CATEGORIES, POD_STATE

NAMES = [s.name for s in registry()]


def test_a_stage_left_out_or_that_recorded_nothing_is_about_the_pod():
    left, _ = evaluate_stages({}, {}, {}, run_tags=["no-such-tag"])
    assert [(c["check"], c["status"], c["category"], c["subject"], c["stage"]) for c in left] == [
        (n, "skipped", POD_STATE, {}, n) for n in NAMES]
    failed, _ = evaluate_stages({}, {}, {}, run_tags=["all"])
    assert [(c["check"], c["status"], c["category"], c["subject"], c["stage"]) for c in failed] == [
        (n, "error", POD_STATE, {}, n) for n in NAMES]


def test_an_evaluator_that_raises_is_an_error_about_the_pod():
    def boom(measurements, expectations, context):
        raise KeyError("nodes")

    checks, _ = evaluate_stages({"x": {}}, {}, {}, stages=[Stage("x", "x", "X", boom)])
    assert [(c["check"], c["host"], c["status"], c["category"], c["subject"], c["stage"]) for c in checks] == [
        ("x", "pod", "error", POD_STATE, {}, "x")]
    assert "KeyError" in checks[0]["reason"]


@pytest.mark.parametrize("name, recorded", [
    ("gpu", {"level": 1, "nodes": {"sim-dgx1": {"status": "error", "dgx_model": "dgx1", "reason": "unreachable: x"}}}),
    ("node", {"window_hours": 24, "nodes": {"sim-dgx1": None, "sim-dgx2": {"dgx_node": None, "error": "boom",
                                                                           "unreachable": False}}}),
    ("drift", {"nodes": {"sim-dgx1": {"status": "error", "reason": "pod_drift failed: boom"}}}),
    ("switches", {"expected": ["sim-sw1"], "switches": []}),
    ("nccl", {"topology": {}, "single": [{"nodes": ["sim-dgx1"], "ok": False, "error": "hung"}]}),
    ("training", {"dataset": {"failed": True, "msg": "no space"}}),
    ("slurm", {"scheduler": "slurm", "controller": "sim-dgx1", "dgx": ["sim-dgx1"],
               "nodes": {"sim-dgx1": {"state": "idle", "drain": False, "responding": True}}}),
])
def test_every_result_says_its_stage_its_kind_and_what_it_is_about(name, recorded):
    checks, _ = evaluate_stages({name: recorded}, {}, {}, run_tags=[name])
    mine = [c for c in checks if c["stage"] == name]
    assert mine and not any("recorded no measurements" in str(c.get("reason")) for c in mine), mine
    for c in mine:
        assert c["category"] in CATEGORIES and isinstance(c["subject"], dict), c
    assert {c["stage"] for c in checks} == set(NAMES)

