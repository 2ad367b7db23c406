"""DCGM run levels and their time limits (issue 39 item 6): module_utils/gpu/dcgm_plan.py, the playbook's
``gpu_dcgm_timeout`` filter, level 4 accepted by dgx_gpu_health, and level-4 output through dcgm_parse.

The defect this guards: the ``full`` profiles run ``dcgmi diag -r 3`` (DCGM User Guide: r3 "< 30 mins") while
validate_gpu.yml passed no timeout, so the module's 300 s default killed it on every real DGX."""
from __future__ import annotations

import copy
import glob
import importlib
import json
import os

import pytest
import yaml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import dcgm_plan
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_parse import parse_dcgmi_diag

from inventory_util import ROOT

health = importlib.import_module("dgx_gpu_health")
gpu_filters = importlib.import_module("filter_plugins.gpu")
FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "gpu")
PROFILES = sorted(glob.glob(os.path.join(ROOT, "profiles", "*.yml")))


def _profile(path):
    with open(path) as f:
        return yaml.safe_load(f)["profile"]


# --------------------------------------------------------------------------- the documented durations

def test_documented_durations_are_dcgms_table():
    """DCGM User Guide "Run Levels and Tests": r1 seconds, r2 < 2 mins, r3 < 30 mins, r4 1-2 hours."""
    assert dcgm_plan.DOCUMENTED_S == {1: 60, 2: 120, 3: 1800, 4: 7200}
    assert "< 30 mins" in dcgm_plan.SOURCE and "1-2 hours" in dcgm_plan.SOURCE


@pytest.mark.parametrize("level", [1, 2, 3, 4])
@pytest.mark.parametrize("gpus", [None, 1, 8, 16])
def test_every_level_gets_at_least_its_documented_duration_and_more_for_more_gpus(level, gpus):
    limit = dcgm_plan.dcgm_timeout(level, gpus)
    assert limit >= dcgm_plan.DOCUMENTED_S[level] * dcgm_plan.MARGIN
    assert limit % 60 == 0
    assert dcgm_plan.dcgm_timeout(level, 16) == pytest.approx(2 * dcgm_plan.dcgm_timeout(level, 8), abs=60)


def test_the_levels_are_ordered_and_level_3_is_no_longer_300_seconds():
    limits = [dcgm_plan.dcgm_timeout(level, 8) for level in (1, 2, 3, 4)]
    assert limits == sorted(limits) and len(set(limits)) == 4
    assert limits[2] == 2820 and limits[3] == 10920  # 1800 * 1.5 + 120; 7200 * 1.5 + 120
    assert dcgm_plan.dcgm_timeout(0, 8) == 0  # DCGM not run


@pytest.mark.parametrize("level", [5, -1, "long", None, 2.5])
def test_an_unknown_level_is_refused_naming_it(level):
    with pytest.raises(ValueError, match="DCGM run level"):
        dcgm_plan.dcgm_timeout(level, 8)


def test_a_level_written_as_a_string_is_read():
    assert dcgm_plan.dcgm_timeout("3", 8) == dcgm_plan.dcgm_timeout(3, 8)


# --------------------------------------------------------------------------- the profiles' full level

@pytest.mark.parametrize("path", PROFILES, ids=os.path.basename)
def test_each_profiles_full_level_gets_a_timeout_covering_its_documented_duration(path):
    """The issue's test: the level a ``full`` run uses, on every DGX model the profile supports, gets a time limit
    at least the level's documented duration (r3: 30 minutes) - through the filters the playbook calls."""
    prof = _profile(path)
    level = gpu_filters.gpu_dcgm_level(prof, "full")
    assert level == 3
    for model in prof.get("dgx_models") or sorted(DGX_MODELS):
        limit = gpu_filters.gpu_dcgm_timeout(level, model)
        assert limit >= dcgm_plan.documented_duration(level) >= 30 * 60, (path, model, limit)
        assert limit > 300  # the old default


def test_the_filter_scales_by_the_models_gpus_and_an_explicit_timeout_wins():
    assert gpu_filters.gpu_dcgm_timeout(3, "dgx2") > gpu_filters.gpu_dcgm_timeout(3, "dgx1")  # 16 GPUs vs 8
    assert gpu_filters.gpu_dcgm_timeout(3, "dgxh100") == dcgm_plan.dcgm_timeout(3, 8)
    assert gpu_filters.gpu_dcgm_timeout(3, "nosuchdgx") == dcgm_plan.dcgm_timeout(3, 16)  # the largest model
    assert gpu_filters.gpu_dcgm_timeout(3, "dgx1", "600") == 600  # -e gpu_dcgm_timeout=600
    assert gpu_filters.gpu_dcgm_timeout(4, "dgx1", "") == dcgm_plan.dcgm_timeout(4, 8)


def test_level_4_is_selectable_from_the_profile_and_from_the_command_line():
    ra = {"perf_runs": {"full": {"gpu": {"dcgm_level": 4}}}}
    assert gpu_filters.gpu_dcgm_level(ra, "full") == 4
    assert gpu_filters.gpu_dcgm_level({}, "full", "4") == 4


def test_the_playbook_passes_the_filters_timeout_to_the_module():
    with open(os.path.join(ROOT, "playbooks", "validate_gpu.yml")) as f:
        plays = yaml.safe_load(f)
    task = plays[1]["tasks"][0]["dgx_gpu_health"]
    assert "gpu_dcgm_timeout(" in task["dcgm_timeout"] and "gpu_dcgm_timeout | default(none)" in task["dcgm_timeout"]
    assert "gpu_level" in task["dcgm_timeout"]


# --------------------------------------------------------------------------- the module

def test_the_module_documents_and_accepts_level_4():
    doc = yaml.safe_load(health.DOCUMENTATION)
    assert doc["options"]["dcgm_level"]["choices"] == [0, 1, 2, 3, 4]
    assert "default" not in doc["options"]["dcgm_timeout"]  # sized from the level when not given


def _gather(level, timeout=None, gpus=8, dcgm_out=None):
    """gather() with nvidia-smi absent but for the DCGM call: records what dcgmi was asked and given."""
    calls = []
    smi = ("<?xml version=\"1.0\" ?>\n<nvidia_smi_log><driver_version>550.54.15</driver_version>"
           "<cuda_version>12.4</cuda_version><attached_gpus>%d</attached_gpus>%s</nvidia_smi_log>\n" % (
               gpus, "".join('<gpu id="00000000:%02X:00.0"><product_name>NVIDIA H100 80GB HBM3</product_name>'
                             "<minor_number>%d</minor_number></gpu>" % (i + 1, i) for i in range(gpus))))

    def run(cmd, t):
        calls.append((cmd, t))
        if cmd[:2] == ["nvidia-smi", "-q"]:
            return 0, smi, ""
        if cmd[0] == "dcgmi":
            return 0, dcgm_out or open(os.path.join(FIX, "dcgmi_diag_r2_4.x_entity_schema.json")).read(), ""
        return 1, "", "not here"

    which = lambda tool: tool if tool in ("nvidia-smi", "dcgmi") else None  # noqa: E731
    facts = health.gather(run, which, "/nonexistent", dcgm_level=level, dcgm_timeout=timeout)
    return facts, [c for c in calls if c[0][0] == "dcgmi"]


def test_the_module_sizes_the_timeout_from_the_level_and_the_gpus_it_found():
    facts, calls = _gather(4, gpus=16)
    assert calls == [(["dcgmi", "diag", "-r", "4", "-j"], dcgm_plan.dcgm_timeout(4, 16))]
    assert facts["dcgm"]["level"] == 4 and facts["dcgm"]["timeout"] == dcgm_plan.dcgm_timeout(4, 16)
    assert facts["dcgm"]["result"] is not None


def test_an_explicit_timeout_reaches_dcgmi():
    facts, calls = _gather(3, timeout=900)
    assert calls[0][1] == 900 and facts["dcgm"]["timeout"] == 900


# --------------------------------------------------------------------------- level-4 output

def _level4_doc():
    """``dcgmi diag -r 4 -j`` of DCGM 4.x: the 4.x layout of tests/unit/fixtures/gpu/dcgmi_diag_r2_4.x_entity_
    schema.json (composed from NVIDIA/DCGM dcgmi/Diag.cpp, see its .source) with the tests level 4 adds, under
    their plugin names and categories as NVIDIA/DCGM nvvs/include/PluginStrings.h (DCGM 4.6.0) defines them:
    memtest (Stress), pulse_test (Hardware), eud (Stress), nvbandwidth (Hardware), memory_bandwidth (Stress),
    diagnostic (Hardware), targeted_stress / targeted_power (Stress). No real level-4 capture was found in DCGM's
    repository or public issues; messages are DCGM-style, values made up."""
    doc = json.loads(open(os.path.join(FIX, "dcgmi_diag_r2_4.x_entity_schema.json")).read())

    def test(name, statuses, warning=None):
        results = []
        for gpu, status in enumerate(statuses):
            r = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu, "status": status}
            if status == "Fail" and warning:
                r["warnings"] = [{"error_category": 2, "error_id": 55, "error_severity": 2,
                                  "warning": warning % gpu}]
            results.append(r)
        worst = "Fail" if "Fail" in statuses else "Pass"
        return {"name": name, "results": results, "test_summary": {"status": worst}}

    doc["DCGM Diagnostic"]["test_categories"] += [
        {"category": "Hardware", "tests": [test("diagnostic", ["Pass", "Pass"]), test("pulse_test", ["Pass", "Pass"]),
                                           test("nvbandwidth", ["Pass", "Pass"])]},
        {"category": "Stress", "tests": [
            test("memory_bandwidth", ["Pass", "Pass"]), test("targeted_stress", ["Pass", "Pass"]),
            test("targeted_power", ["Pass", "Pass"]),
            test("memtest", ["Pass", "Fail"], "Memtest failure detected on GPU %d: test2 [moving inversions]"),
            test("eud", ["Skip", "Skip"])]},
    ]
    doc["metadata"]["version"] = "4.6.0"
    return doc


def test_level_4_tests_are_read_and_a_memtest_failure_names_its_gpu():
    diag = parse_dcgmi_diag(json.dumps(_level4_doc(), indent=2) + "\n")
    names = [t["name"] for t in diag["tests"]]
    assert {"memtest", "pulse_test", "eud", "nvbandwidth", "memory_bandwidth", "diagnostic"} <= set(names)
    memtest = next(t for t in diag["tests"] if t["name"] == "memtest")
    assert memtest["category"] == "Stress"
    assert [(r["gpus"], r["status"], r["failing"]) for r in memtest["results"]] == [("0", "pass", None),
                                                                                    ("1", "fail", "1")]
    assert memtest["results"][1]["warnings"] == ["Memtest failure detected on GPU 1: test2 [moving inversions] "
                                                 "(DCGM error 55)"]
    eud = next(t for t in diag["tests"] if t["name"] == "eud")
    assert [r["status"] for r in eud["results"]] == ["skip", "skip"]


def test_level_4_3x_display_names_are_read_too():
    """DCGM 3.x ``dcgmi diag -r 4 -j`` prints display names ("Memtest", "Pulse Test", "EUD") under "DCGM GPU
    Diagnostic" (dcgmi/Diag.cpp of 3.x); the parser keeps whatever name DCGM gives."""
    doc = {"DCGM GPU Diagnostic": {"version": "3.3.9", "test_categories": [
        {"category": "Stress", "tests": [
            {"name": "Memtest", "results": [{"gpu_id": "0", "status": "Pass"}, {"gpu_id": "1", "status": "Pass"}]},
            {"name": "Pulse Test", "results": [{"gpu_id": "0", "status": "Fail", "warnings": [
                {"warnings": "Pulse test failed on GPU 0", "error_id": 97}]}]},
            {"name": "EUD", "results": [{"gpu_id": "0", "status": "Skip"}]}]}]}}
    diag = parse_dcgmi_diag(json.dumps(doc) + "\n")
    pulse = diag["tests"][1]
    assert pulse["name"] == "Pulse Test" and pulse["results"][0]["failing"] == "0"
    assert pulse["results"][0]["warnings"] == ["Pulse test failed on GPU 0 (DCGM error 97)"]


def test_a_level_4_failure_reaches_the_evaluation_naming_node_gpu_and_level():
    gpu_eval = importlib.import_module("ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.eval")
    out = json.dumps(_level4_doc()) + "\n"
    facts, _ = _gather(4, dcgm_out=out)
    checks = [c for c in gpu_eval.evaluate({"level": 4, "nodes": {"dgx-a": {"status": "ok", "dgx_model": "dgxh100",
                                                                             "facts": copy.deepcopy(facts)}}},
                                           {}, {}) if c.check == "gpu_dcgm_diag" and c.status == "fail"]
    memtest = [c for c in checks if c.details.get("test") == "memtest"]
    assert len(memtest) == 1 and memtest[0].subject.gpu == 1 and memtest[0].details["level"] == 4
    assert "dgx-a" in memtest[0].cause and "Memtest failure detected on GPU 1" in memtest[0].cause
