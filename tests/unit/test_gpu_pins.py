"""Pinned versions (issue 39 item 4): module_utils/gpu/pins.py through the GPU stage's evaluation, on what the
simulator's stand-ins print (test_gpu_stage.py's pod), and preflight's check of ``expectations.versions``."""
from __future__ import annotations

import copy

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.pins import (check_pins, pin_holds, version_numbers,
                                                                              version_pins)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import merged_expectations
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import (VERSION_KEYS,
                                                                                                 check_validation,
                                                                                                 check_version_pins)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, POD_STATE

from inventory_util import POD, assert_case_rejected
from test_gpu_stage import pod

PROFILE = {"expectations": {"network": {"tcp_fraction_of_port_rate": {"value": 0.8, "source": "004"}},
                            "versions": {"driver": {"value": ">=535.104", "source": "DGX OS 6 release notes"}}}}


def pins(**values):
    return {"versions": values}


def evaluate(measurements, expectations):
    return [c for c in gpu_eval.evaluate(measurements, expectations, {}) if c.check.startswith("version_pin")]


# --------------------------------------------------------------------------- what a pin means

@pytest.mark.parametrize("pin, measured, holds", [
    ("550.54.15", "550.54.15", True), ("550.54.15", "550.54.14", False), ("550", "550.54.15", False),
    ("535.", "535.104.05", True), ("535.", "550.54.15", False), ("5.", "550.54.15", False),
    (">=535.104", "535.104.05", True), (">=535.104", "535.86.10", False), (">=535.104", "550.54.15", True),
    (">=535.104.05", "535.104", False), (">=12.2", "12.2", True), (">=12.2", "12.10", True),
    (["535.", "550."], "550.54.15", True), (["535.", "550."], "545.23.08", False),
    ("23.10-1.1.9.0", "MLNX_OFED_LINUX-23.10-1.1.9.0", True),
    ("MLNX_OFED_LINUX-23.10*", "MLNX_OFED_LINUX-23.10-1.1.9.0", True),
    ("23.", "MLNX_OFED_LINUX-23.10-1.1.9.0", True), (">=24.04", "MLNX_OFED_LINUX-23.10-1.1.9.0", False),
    (">=24.04", "OFED-internal-24.04-0.6.6", True), (">=1", None, False), (">=535", "N/A", False),
])
def test_pin_holds(pin, measured, holds):
    assert pin_holds(pin, measured) is holds


def test_version_numbers_start_at_the_first_digit():
    assert version_numbers("MLNX_OFED_LINUX-5.8-1.0.1.1") == (5, 8, 1, 0, 1, 1)
    assert version_numbers("20.37.1014") == (20, 37, 1014) and version_numbers("none") == ()


def test_where_a_pin_comes_from_the_profile_or_the_pod_model():
    exp = merged_expectations(PROFILE, {"validation": {"expectations": {"versions": {"ofed": "23."}}}})
    got = version_pins(exp)
    assert got["driver"] == (">=535.104", "RA profile expectations.versions.driver: DGX OS 6 release notes")
    assert got["ofed"] == ("23.", "pod model (pod.validation.expectations.versions.ofed)")
    over = version_pins(merged_expectations(PROFILE, {"validation": {"expectations": {"versions": {
        "driver": "550.54.15"}}}}))["driver"]
    assert over[0] == "550.54.15" and over[1].startswith("pod model (pod.validation.expectations.versions.driver)")
    assert "profile: >=535.104" in over[1]


# --------------------------------------------------------------------------- the GPU stage

def test_nothing_pinned_adds_no_check(tmp_path):
    assert evaluate(pod(tmp_path), {}) == []


def test_a_pod_uniformly_outside_the_driver_pin_fails_on_every_node(tmp_path):
    """The stand-ins' driver is 418.67 on every DGX: the consistency check passes, the pin fails each node."""
    m = pod(tmp_path, n=3)
    results = gpu_eval.evaluate(m, merged_expectations(PROFILE, {}), {})
    assert next(c for c in results if c.check == "gpu_driver_consistent").status == "pass"
    pinned = [c for c in results if c.check == "version_pin_driver"]
    assert [(c.host, c.status) for c in pinned] == [("sim-dgx1", "fail"), ("sim-dgx2", "fail"), ("sim-dgx3", "fail")]
    c = pinned[0]
    assert (c.expected, c.measured) == (">=535.104", "418.67") and c.subject.node == "sim-dgx1"
    assert c.category == NODE_STATE and c.source == "RA profile expectations.versions.driver: DGX OS 6 release notes"
    assert c.cause == ("sim-dgx1: NVIDIA driver 418.67 is outside the pin >=535.104 (RA profile "
                       "expectations.versions.driver: DGX OS 6 release notes)")


def test_a_pod_inside_its_pins_passes(tmp_path):
    m = pod(tmp_path)
    f = m["nodes"]["sim-dgx1"]["facts"]
    ofed, fw = f["ofed"], f["hcas"]["mlx5_0"]["fw"]
    checks = evaluate(m, pins(driver="418.", cuda=">=10.0", ofed=ofed, hca_firmware=fw))
    assert {c.check for c in checks} == {"version_pin_driver", "version_pin_cuda", "version_pin_ofed",
                                         "version_pin_hca_firmware"}
    assert all(c.status == "pass" for c in checks), [(c.check, c.cause) for c in checks if c.status != "pass"]
    assert len(checks) == 8  # four pins on two DGX


def test_one_dgx_on_another_driver_fails_alone(tmp_path):
    m = pod(tmp_path, faults=["driver=418.87.01"])
    checks = evaluate(m, pins(driver="418.67"))
    assert [(c.host, c.status, c.measured) for c in checks] == [("sim-dgx1", "pass", "418.67"),
                                                                ("sim-dgx2", "fail", "418.87.01")]
    assert checks[1].source == "pod model (pod.validation.expectations.versions.driver)"


def test_hca_firmware_per_board_names_the_hca_and_its_nic(tmp_path):
    m = pod(tmp_path)
    hcas = m["nodes"]["sim-dgx2"]["facts"]["hcas"]
    board = hcas["mlx5_0"]["board_id"] or "MT_0000000010"
    for h in hcas.values():
        h["board_id"] = board
    m["nodes"]["sim-dgx1"]["facts"]["hcas"] = copy.deepcopy(hcas)
    hcas["mlx5_2"]["fw"] = "12.17.2020"
    checks = evaluate(m, pins(hca_firmware={"value": {board: ">=12.18", "MT_OTHER": "99."}, "source": "RA table 3"}))
    bad = [c for c in checks if c.status == "fail"]
    assert [(c.host, c.subject.hca, c.subject.nic, c.measured) for c in bad] == [
        ("sim-dgx2", "mlx5_2", hcas["mlx5_2"]["netdev"], "12.17.2020")]
    assert "sim-dgx2 HCA mlx5_2: HCA firmware 12.17.2020 is outside the pin >=12.18" in bad[0].cause
    assert [c.status for c in checks if c.host == "sim-dgx1"] == ["pass"]


def test_vbios_is_judged_per_gpu_when_the_reading_has_it(tmp_path):
    m = pod(tmp_path)
    checks = evaluate(m, pins(vbios="88.00."))
    assert {(c.status, c.host) for c in checks} == {("error", "sim-dgx1"), ("error", "sim-dgx2")}
    assert "VBIOS is pinned but was not read" in checks[0].reason
    for node in m["nodes"].values():
        for g in node["facts"]["smi"]["gpus"]:
            g["vbios"] = "88.00.43.00.01"
    m["nodes"]["sim-dgx2"]["facts"]["smi"]["gpus"][4]["vbios"] = "86.00.4D.00.04"
    checks = evaluate(m, pins(vbios="88.00."))
    assert [(c.host, c.status, c.subject.gpu) for c in checks] == [("sim-dgx1", "pass", None),
                                                                   ("sim-dgx2", "fail", 4)]


def test_a_pin_the_stage_does_not_read_is_skipped_for_the_pod_not_dropped(tmp_path):
    # the kernel pin is the node stage's (node_pins), not the GPU stage's
    checks = evaluate(pod(tmp_path), pins(kernel="5.15.0-", nccl=">=2.18"))
    assert [(c.check, c.host, c.status) for c in checks] == [("version_pin_nccl", "pod", "skipped")]
    assert checks[0].category == POD_STATE and "does not read" in checks[0].reason


def test_the_node_stage_judges_the_kernel_and_bios_pins_on_every_node():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.pins import node_pins
    values = {"dgx-1": {"kernel": "5.15.0-1042-nvidia", "bios": "1.6.7"},
              "dgx-2": {"kernel": "6.8.0-31-generic", "bios": None, "bios_error": "no DMI BIOS version read"}}
    checks = node_pins(values, pins(kernel="5.15.0-*", bios="1.6.", driver="418."))
    got = [(c.check, c.host, c.status) for c in checks]
    assert got == [("version_pin_bios", "dgx-1", "pass"), ("version_pin_bios", "dgx-2", "error"),
                   ("version_pin_kernel", "dgx-1", "pass"), ("version_pin_kernel", "dgx-2", "fail")]
    assert "Linux kernel 6.8.0-31-generic is outside the pin 5.15.0-*" in checks[3].cause
    assert "no DMI BIOS version read" in checks[1].reason
    assert node_pins(values, pins(driver="418.")) == []  # nothing the node stage judges is pinned


def test_a_dgx_without_a_reading_is_an_error_naming_it(tmp_path):
    m = pod(tmp_path)
    m["nodes"]["sim-dgx2"]["facts"]["smi"] = None
    checks = check_pins({n: e["facts"] for n, e in m["nodes"].items()}, pins(driver="418."))
    assert [(c.host, c.status) for c in checks] == [("sim-dgx1", "pass"), ("sim-dgx2", "error")]
    assert "nvidia-smi -q -x was not read" in checks[1].reason


# --------------------------------------------------------------------------- preflight

def test_every_version_key_is_accepted_and_the_pin_forms_read():
    good = {k: ">=1.0" for k in VERSION_KEYS}
    good.update(driver={"value": ["535.", "550."], "source": "RA"}, hca_firmware={"MT_0000000223": "20.39.1002"},
                ofed="MLNX_OFED_LINUX-23.10*")
    assert check_version_pins(good) == []


@pytest.mark.parametrize("pins_, path, words, fix", [
    ({"drivers": ">=535"}, "versions.drivers", "unknown version pin 'drivers'", "did you mean 'driver'?"),
    ({"hca_fw": "20."}, "versions.hca_fw", "unknown version pin", "hca_firmware"),
    ({"cuda": 12.2}, "versions.cuda", "is a number", 'quote it: "12.2"'),
    ({"driver": {"value": 535.104}}, "versions.driver.value", "is a number", "quote it"),
    ({"driver": {"valeu": "535."}}, "versions.driver.valeu", "unknown key of a version pin", "did you mean 'value'?"),
    ({"driver": "<550"}, "versions.driver", "exact version, a prefix or a minimum", ">="),
    ({"driver": []}, "versions.driver", "pins nothing", "at least one"),
    ({"hca_firmware": {"MT_1": None}}, "versions.hca_firmware.MT_1", "is not a version pin", "in quotes"),
    ("535.", "versions", "not a mapping", "driver"),
])
def test_a_mistake_in_the_pins_is_named(pins_, path, words, fix):
    findings = check_version_pins(pins_, "pod.validation.expectations.versions")
    match = [f for f in findings if f.path == "pod.validation.expectations." + path]
    assert len(match) == 1, [f.format() for f in findings]
    assert words in match[0].message and fix in match[0].fix and match[0].severity == "error"


def test_the_pod_may_pin_versions_without_a_profile_pinning_any():
    pod_ = {"validation": {"expectations": {"versions": {"driver": ">=535.104"}}}}
    assert check_validation(pod_, {"expectations": {"network": {}}}) == []
    pod_ = {"validation": {"expectations": {"version": {"driver": ">=535.104"}}}}
    (f,) = check_validation(pod_, {"expectations": {"network": {}}})
    assert "unknown expectation category 'version'" in f.message and "did you mean 'versions'?" in f.fix
    (f,) = check_validation({"validation": {"versions": {"driver": "535."}}}, {"expectations": {}})
    assert "pod.validation.expectations.versions" in f.fix


def test_preflight_names_a_misspelt_pin_with_its_file_and_line(tmp_path):
    def change(d):
        d["pod"].setdefault("validation", {}).setdefault("expectations", {})["versions"] = {"fabricmanager": "550."}
    assert_case_rejected(tmp_path, ("misspelt-version-pin", "dgxpod", POD, change, POD,
                                    "pod.validation.expectations.versions.fabricmanager", "unknown version pin",
                                    "did you mean 'fabric_manager'?"))


def test_the_gpu_table_has_a_pins_column(tmp_path):
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_markdown
    base = {"pod": "p", "ra_profile": "r", "simulated": True, "finished": "t", "checks": []}
    doc = build_results(base, {}, pins(driver=">=535"), {"gpu": pod(tmp_path)})
    md = render_markdown(doc)
    assert "| node | model | driver | ECC | NVLink | PCIe | DCGM | other | bandwidth | pins |" in md
    assert "| sim-dgx1 | 8 x Tesla V100-SXM2-32GB | 418.67 / CUDA 10.1 |" in md
    row = next(line for line in md.splitlines() if line.startswith("| sim-dgx1 | 8 x"))
    assert row.endswith("| - | fail |")  # no nvbandwidth run; the driver outside the pin


def test_the_literal_check_names_cover_every_key():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import pins as pins_mod
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import VERSION_KEYS
    assert set(pins_mod.CHECKS) == {"version_pin_%s" % k for k in VERSION_KEYS}
