"""``expectations.regression`` (issue 43 item 3): every RA profile carries a tolerance with its source for every
measurement class the baseline comparison reads (report/baseline.py ``tolerance``), and preflight
(module_utils/preflight/validation_checks.py ``check_regression_tolerances``) accepts the block - by class or by
check - and names a misspelt key or a value outside [0, 1) with its fix, as report/baseline.py would refuse it."""
from __future__ import annotations

import json
import os

import pytest

from inventory_util import POD, PROFILES, ROOT, assert_case_rejected

from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_eval import CHECKS as GPU_BANDWIDTH
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import load_profile, merged_expectations
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import (
    REGRESSION_CHECKS, REGRESSION_CLASSES, check_regression_tolerances, check_validation)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import baseline
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import PERF_CATEGORIES

NAMES = sorted(f[:-4] for f in os.listdir(PROFILES) if f.endswith(".yml"))
# a real pod-in-a-box run of every stage (tests/unit/fixtures/report/README.md)
REAL = os.path.join(ROOT, "tests", "unit", "fixtures", "report", "results__podsim_all_stages_20261129T022723Z.json")


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_has_a_sourced_tolerance_for_every_class(name):
    block = load_profile(name, PROFILES)["expectations"].get("regression")
    assert isinstance(block, dict), "%s has no expectations.regression" % name
    assert set(block) >= set(PERF_CATEGORIES), "%s: no tolerance for %s" % (name, set(PERF_CATEGORIES) - set(block))
    for key, item in block.items():
        assert isinstance(item, dict) and 0 <= item["value"] < 1, (name, key, item)
        assert len(str(item.get("source") or "")) > 40, "%s: regression.%s has no source worth the name" % (name, key)
    assert check_regression_tolerances(block, "expectations.regression") == []


@pytest.mark.parametrize("name", NAMES)
def test_the_profile_s_tolerance_is_what_the_baseline_comparison_reads(name):
    profile = load_profile(name, PROFILES)
    block = merged_expectations(profile, {})["regression"]
    for check, category in (("iperf", "link_perf"), ("fio_read", "node_perf"), ("nccl_busbw", "job_perf"),
                            ("fio_scaling", "pod_perf")):
        value, source = baseline.tolerance(block, check, category)
        assert value == block[category]["value"] and source.startswith("expectations.regression.%s: toolkit rule"
                                                                       % category)
    # a pod's override of one check wins over the profile's class, the other checks keep the class
    pod = merged_expectations(profile, {"validation": {"expectations": {"regression": {"iperf": 0.25}}}})["regression"]
    assert baseline.tolerance(pod, "iperf", "link_perf")[0] == 0.25
    assert baseline.tolerance(pod, "iperf_relative", "link_perf")[0] == block["link_perf"]["value"]


def test_the_classes_are_the_performance_categories():
    assert set(REGRESSION_CLASSES) == set(PERF_CATEGORIES)


def test_every_performance_check_of_a_real_run_and_of_the_gpu_bandwidth_stage_may_be_named():
    """A check whose rows the baseline compares (a performance category) must be a key preflight accepts, or a
    pod could not give it a tolerance of its own."""
    with open(REAL, encoding="utf-8") as fh:
        doc = json.load(fh)
    perf = {c["check"] for c in doc["checks"] if c.get("category") in PERF_CATEGORIES}
    assert {"iperf", "fio_read", "nccl_busbw", "train_throughput"} <= perf  # the run has every stage
    assert perf - {"nccl_localisation"} <= set(REGRESSION_CHECKS)  # localisation's measured is a table, not compared
    assert set(GPU_BANDWIDTH) <= set(REGRESSION_CHECKS)


def test_a_pod_may_set_a_tolerance_by_class_or_by_check():
    profile = load_profile("isilon-f800-dgx1", PROFILES)
    pod = {"validation": {"expectations": {"regression": {
        "link_perf": {"value": 0.2, "source": "this lab's shared switch"}, "iperf": 0.3, "nccl_busbw": 0,
        "gpu_bandwidth_h2d": {"value": 0.05}}}}}
    assert check_validation(pod, profile) == []
    # without a profile listing any (a pod whose profile predates the block)
    assert check_validation(pod, {"expectations": {"network": {}}}) == []


@pytest.mark.parametrize("block, path, words, fix", [
    ({"link_pref": 0.1}, "regression.link_pref", "unknown regression tolerance 'link_pref'",
     "did you mean 'link_perf'?"),
    ({"iperff": 0.1}, "regression.iperff", "unknown regression tolerance", "did you mean 'iperf'?"),
    ({"network": 0.1}, "regression.network", "neither a measurement class", "use a class (link_perf"),
    ({"link_perf": 10}, "regression.link_perf", "is a percentage", "write 0.1 (10 %)"),
    ({"job_perf": {"value": 15, "source": "x"}}, "regression.job_perf.value", "is a percentage", "write 0.15"),
    ({"node_perf": 1}, "regression.node_perf", "fall to nothing", "below 1"),
    ({"node_perf": 250}, "regression.node_perf", "outside [0, 1)", "from 0 to below 1"),
    ({"pod_perf": -0.1}, "regression.pod_perf", "is negative", "from 0 to below 1"),
    ({"link_perf": "10%"}, "regression.link_perf", "is not a number", "without quotes"),
    ({"link_perf": True}, "regression.link_perf", "is not a number", "without quotes"),
    ({"link_perf": {"valeu": 0.1}}, "regression.link_perf.valeu", "unknown key of a regression tolerance",
     "did you mean 'value'?"),
    ({"link_perf": {"source": "lab"}}, "regression.link_perf", "has no value", "{value: <fraction>"),
    ({"link_perf": None}, "regression.link_perf", "None is not a number", "e.g. 0.1"),
    (0.1, "regression", "not a mapping", "classes: link_perf"),
])
def test_a_mistake_in_the_tolerances_is_named(block, path, words, fix):
    pod = {"validation": {"expectations": {"regression": block}}}
    findings = check_validation(pod, load_profile("dgxh100-superpod", PROFILES))
    match = [f for f in findings if f.path == "pod.validation.expectations." + path]
    assert len(match) == 1, [f.format() for f in findings]
    assert words in match[0].message and fix in match[0].fix and match[0].severity == "error", match[0].format()


@pytest.mark.parametrize("value", [0, 0.05, 0.1, 0.5, 0.999, 1, 1.0, 10, -0.1, 100, 1e9, "0.1", True, False])
def test_preflight_refuses_exactly_what_the_baseline_comparison_refuses(value):
    """The same rule at both ends: a value preflight lets through never stops the comparison hours later, and one
    it names would. (An empty value, ``link_perf:``, is the one difference: the comparison skips it to the default,
    preflight names it - it would replace the profile's tolerance with nothing.)"""
    try:
        baseline.tolerance({"link_perf": value}, "iperf", "link_perf")
        comparison_takes_it = True
    except ValueError:
        comparison_takes_it = False
    assert (check_regression_tolerances({"link_perf": value}) == []) is comparison_takes_it


def test_preflight_names_a_misspelt_tolerance_with_its_file_and_line(tmp_path):
    def change(d):
        d["pod"].setdefault("validation", {}).setdefault("expectations", {})["regression"] = {"lnk_perf": 0.1}
    assert_case_rejected(tmp_path, ("misspelt-regression-class", "dgxpod", POD, change, POD,
                                    "pod.validation.expectations.regression.lnk_perf",
                                    "unknown regression tolerance", "did you mean 'link_perf'?"))
