"""The GPU and node health stage: the dgx_gpu_health module's gather() driven by the simulator's stand-ins
(sim/standins/podsim_gpu.py through their real entry points), module_utils/gpu/eval.py (each check passes on
healthy data and fails on its fault, naming node, GPU index and bus id), the stage registry and the report
table, and the playbook's filters."""
from __future__ import annotations

import contextlib
import copy
import importlib
import io
import json
import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_parse import parse_dcgmi_diag
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.parse import parse_smi_xml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_html, render_markdown
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import registry

from inventory_util import ROOT

health = importlib.import_module("dgx_gpu_health")
hw = importlib.import_module("podsim_hw")
gpu_sim = importlib.import_module("podsim_gpu")
gpu_filters = importlib.import_module("filter_plugins.gpu")
gpu_eval = importlib.import_module("ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.eval")
FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "gpu")
STANDINS = os.path.join(ROOT, "sim", "standins")


def node_facts(tmp_path, name="sim-dgx1", index=1, faults=None, level=1, dcgm=True, drop=()):
    """What dgx_gpu_health returns on a simulated DGX with ``faults`` (podsim gpu --fault K=V)."""
    state = hw.default_state(name, index)
    state["gpu_faults"] = gpu_sim.parse_faults(faults or [])
    d = tmp_path / name
    d.mkdir()
    path = d / "hardware.json"
    path.write_text(json.dumps(state))
    root = d / "sysfs"
    hw.write_fake_sysfs(str(root), state, {})
    gpu_sim.write_node_files(str(root), state)
    tools = {"nvidia-smi": hw.main, "dcgmi": gpu_sim.main, "ofed_info": hw.main}

    def which(tool):
        if tool in drop or (tool == "dcgmi" and not dcgm):
            return None
        return tool if tool in tools else None

    def run(cmd, timeout):
        os.environ["PODSIM_HW_STATE"] = str(path)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = tools[cmd[0]]([os.path.join(STANDINS, cmd[0])] + cmd[1:])
        return rc, out.getvalue(), err.getvalue()

    try:
        return health.gather(run, which, str(root), dcgm_level=level)
    finally:
        os.environ.pop("PODSIM_HW_STATE", None)


def pod(tmp_path, faults=None, n=2, **kw):
    """pod_stages.gpu for n simulated DGX-1; ``faults`` apply to sim-dgx2."""
    nodes = {}
    for i in range(1, n + 1):
        name = "sim-dgx%d" % i
        nodes[name] = {"status": "ok", "dgx_model": "dgx1",
                       "facts": node_facts(tmp_path, name, i, faults if i == 2 else None, **kw)}
    return {"level": kw.get("level", 1), "nodes": nodes}


def run_eval(measurements):
    return [r.to_dict() for r in gpu_eval.evaluate(measurements, {}, {"simulated": True})]


def bad(checks):
    return [c for c in checks if c["status"] in ("fail", "error")]


# --------------------------------------------------------------------------- stand-ins through the parsers

def test_standins_print_what_the_parsers_read(tmp_path):
    f = node_facts(tmp_path, level=3)
    assert f["errors"] == []
    assert f["smi"]["driver_version"] == "418.67" and len(f["smi"]["gpus"]) == 8
    g0 = f["smi"]["gpus"][0]
    assert g0["name"] == "Tesla V100-SXM2-32GB" and g0["bus_id"] == "00000000:06:00.0"
    assert g0["throttle_element"] == "clocks_throttle_reasons" and g0["pcie"]["width"] == 16
    assert all(len(v["links"]) == 6 for v in f["nvlink"].values())
    assert f["topo"]["gpu_nic"]["GPU0"]["mlx5_0"] == "PIX" and f["topo"]["matrix"]["GPU0"]["GPU3"] == "NV2"
    assert len(f["nvlink_errors"]) == 2 and f["nvlink_errors"][0]["0"]["0"] == {"replay": 0, "recovery": 0, "crc": 0}
    assert f["dcgm"]["present"] and {t["name"] for t in f["dcgm"]["result"]["tests"]} >= {"PCIe", "SM Stress"}
    assert f["modules"]["peermem"] == "nvidia_peermem" and f["ofed"] == hw.OFED_DEFAULT
    assert f["hcas"]["mlx5_0"]["width"] == 16 and f["hcas"]["mlx5_0"]["fw"] == "12.18.1000"
    assert {d: h["netdev"] for d, h in f["hcas"].items()} == {"mlx5_0": "enp5s0", "mlx5_1": "enp12s0",
                                                               "mlx5_2": "enp132s0", "mlx5_3": "enp139s0"}


def test_dgx1_nvlink_mesh_is_symmetric_with_six_links_per_gpu():
    for gpu, peers in gpu_sim.DGX1_NVLINK.items():
        assert sum(n for _, n in peers) == 6
        for peer, n in peers:
            assert (gpu, n) in gpu_sim.DGX1_NVLINK[peer]


def test_standin_faults_show_in_the_outputs(tmp_path):
    f = node_facts(tmp_path, faults=["missing_gpu=7", "ecc=2", "nvlink_down=3:4", "pcie_x8=5", "no_peermem=1",
                                     "nvlink_errors=1", "driver=418.87.01"], level=3)
    gpus = f["smi"]["gpus"]
    assert len(gpus) == 7 and "00000000:8A:00.0" not in {g["bus_id"] for g in gpus}
    assert gpus[2]["ecc"]["volatile"]["uncorrectable"] == 2 and gpus[2]["retired_pages"]["pending"]
    assert f["nvlink"]["3"]["links"]["4"] is None and gpus[5]["pcie"]["width"] == 8
    assert f["modules"]["peermem"] is None and f["smi"]["driver_version"] == "418.87.01"
    assert f["nvlink_errors"][1]["1"]["0"]["replay"] > f["nvlink_errors"][0]["1"]["0"]["replay"]
    statuses = {(t["name"], r["status"]) for t in f["dcgm"]["result"]["tests"] for r in t["results"]}
    assert ("Page Retirement", "fail") in statuses and ("PCIe", "fail") in statuses


def test_fault_keys_are_checked():
    with pytest.raises(ValueError, match="unknown GPU fault"):
        gpu_sim.parse_faults(["melted=1"])
    assert gpu_sim.parse_faults(["nvlink_down=2"]) == {"nvlink_down": [2, 0]}


def test_a_missing_tool_is_an_error_naming_node_and_tool(tmp_path):
    m = pod(tmp_path)
    m["nodes"]["sim-dgx2"]["facts"] = node_facts(tmp_path, "x", 2, drop=("nvidia-smi",))
    checks = run_eval(m)
    errs = [c for c in checks if c["host"] == "sim-dgx2" and c["status"] == "error"]
    assert errs and "nvidia-smi -q -x failed: nvidia-smi is not installed" in errs[0]["reason"]


# --------------------------------------------------------------------------- evaluation

def test_healthy_pod_passes_every_check(tmp_path):
    checks = run_eval(pod(tmp_path, level=3))
    assert bad(checks) == [], bad(checks)
    names = {c["check"] for c in checks}
    assert names >= {"gpu_count", "gpu_model", "gpu_persistence_mode", "gpu_ecc", "gpu_memory_retirement",
                     "gpu_pcie_link", "gpu_throttle", "gpu_temperature", "gpu_nvlink", "gpu_nvlink_errors",
                     "gpu_peermem", "gpu_dcgm_diag", "hca_pcie_link", "gpu_driver_consistent",
                     "gpu_cuda_consistent", "hca_firmware_consistent", "ofed_consistent"}
    assert all(c.get("source") for c in checks if c["status"] == "pass")


@pytest.mark.parametrize("fault, check, gpu, words", [
    ("missing_gpu=7", "gpu_count", None, "has 7 GPUs, expected 8 (dgx1); missing bus id(s) present on the other "
                                         "DGX: 00000000:8A:00.0"),
    ("ecc=2", "gpu_ecc", 2, "sim-dgx2 GPU 2 (00000000:0A:00.0): 2 volatile uncorrectable ECC error(s)"),
    ("ecc=2", "gpu_memory_retirement", 2, "a page retirement is pending"),
    ("ecc=2", "gpu_dcgm_diag", "2", "'Page Retirement' FAIL on GPU(s) 2: Pending page retirements together with a "
                                    "DBE were detected on GPU 2."),
    ("nvlink_down=3:4", "gpu_nvlink", 3, "sim-dgx2 GPU 3 (00000000:0B:00.0): link(s) 4 inactive; expected 6 links"),
    ("nvlink_errors=1", "gpu_nvlink_errors", 1, "link 0 replay"),
    ("pcie_x8=5", "gpu_pcie_link", 5, "sim-dgx2 GPU 5 (00000000:86:00.0): PCIe link x8 (Gen3 capable), expected x16"),
    ("pcie_x8=5", "gpu_dcgm_diag", "5", "PCI link width 8X"),
    ("persistence_off=4", "gpu_persistence_mode", 4, "persistence mode is off"),
    ("throttle=6", "gpu_throttle", 6, "hw_slowdown, hw_thermal_slowdown"),
    ("throttle=6", "gpu_temperature", 6, "88 C, at or above its slowdown threshold 87 C"),
    ("no_peermem=1", "gpu_peermem", None, "sim-dgx2: no GPUDirect RDMA peer-memory module loaded"),
    ("driver=418.87.01", "gpu_driver_consistent", None, "418.67: sim-dgx1; 418.87.01: sim-dgx2"),
])
def test_each_fault_fails_its_check_naming_node_and_gpu(tmp_path, fault, check, gpu, words):
    checks = run_eval(pod(tmp_path, [fault], level=3))
    hits = [c for c in checks if c["check"] == check and c["status"] == "fail"]
    assert hits, [c for c in checks if c["check"] == check]
    hit = hits[0]
    assert words in hit["cause"], hit["cause"]
    assert hit["host"] == ("pod" if check.endswith("_consistent") else "sim-dgx2")
    if gpu is not None:
        assert hit["gpu"] == gpu
        if isinstance(gpu, int):
            assert hit["bus_id"] == "00000000:%s:00.0" % hw.DGX1_GPU_BUSES[gpu]
    assert hit["expected"] is not None and hit["source"]
    # what it is about, as data (issue 38): the node's own state and, for a per-GPU check, that GPU
    if check.endswith("_consistent"):
        assert (hit["category"], hit["subject"]) == ("pod_state", {})
    else:
        assert hit["category"] == "node_state"
        assert hit["subject"] == dict({"node": "sim-dgx2"}, **({"gpu": int(gpu)} if gpu is not None else {}))
    # the other node stays clean
    assert not [c for c in bad(checks) if c["host"] == "sim-dgx1"]


def test_real_captures_through_the_evaluation(tmp_path):
    """The V100S capture read as a DGX-1 GPU: a PCIe V100S is not the SXM2 V100, persistence is off."""
    smi = parse_smi_xml(open(os.path.join(FIX, "smi_qx_v100s_460.xml")).read())
    facts = node_facts(tmp_path)
    facts["smi"] = smi
    facts["dcgm"] = {"present": True, "level": 3, "error": None,
                     "result": parse_dcgmi_diag(open(os.path.join(FIX, "dcgmi_diag_r3_fail_schema.json")).read())}
    checks = run_eval({"level": 3, "nodes": {"dgx": {"status": "ok", "dgx_model": "dgx1", "facts": facts}}})
    by = {(c["check"], c["status"]) for c in checks}
    assert ("gpu_model", "fail") in by and ("gpu_persistence_mode", "fail") in by and ("gpu_count", "fail") in by
    dcgm = [c for c in checks if c["check"] == "gpu_dcgm_diag"][0]
    assert dcgm["status"] == "fail" and "minimum allowed link width of 16X" in dcgm["cause"]
    assert "(DCGM error 63)" in dcgm["cause"] and dcgm["gpu"] == "3"
    real_pass = parse_dcgmi_diag(open(os.path.join(FIX, "dcgmi_diag_r1_3.1.0.json")).read())
    facts["dcgm"]["result"] = real_pass
    checks = run_eval({"level": 1, "nodes": {"dgx": {"status": "ok", "dgx_model": "dgx1", "facts": facts}}})
    assert [c["status"] for c in checks if c["check"] == "gpu_dcgm_diag"] == ["pass"]


def test_a_deployment_failure_names_only_the_gpu_dcgm_names(tmp_path):
    """dcgmi 2.x prints a Deployment test's result for the whole node (no gpu_ids), NVVS lists every GPU:
    the finding names the GPU DCGM's message names, never GPUs 0-7 (issue 17, the gpu_ecc fault)."""
    facts = node_facts(tmp_path)
    doc = open(os.path.join(FIX, "dcgmi_diag_r2_2.1_page_retirement_fail.json")).read()
    facts["dcgm"] = {"present": True, "level": 2, "error": None, "result": parse_dcgmi_diag(doc)}
    checks = run_eval({"level": 2, "nodes": {"dgx": {"status": "ok", "dgx_model": "dgx1", "facts": facts}}})
    dcgm = [c for c in checks if c["check"] == "gpu_dcgm_diag"]
    assert [(c["status"], c["gpu"]) for c in dcgm] == [("fail", "2")]
    assert "'Page Retirement' FAIL on GPU(s) 2: Pending page retirements" in dcgm[0]["cause"]
    assert "0,1" not in dcgm[0]["cause"]


def test_the_ecc_faults_top_finding_names_gpu_2_only(tmp_path):
    """The drill's gpu_ecc fault (ecc=2 on sim-dgx2) as the report's findings show it: one finding for the
    node, DCGM's Page Retirement failure on GPU 2, explaining the ECC and page-retirement checks of GPU 2."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
    checks = run_eval(pod(tmp_path, ["ecc=2"], level=1))
    index = {"pod": "sim", "dgx": ["sim-dgx1", "sim-dgx2"], "storage": [], "switches": [],
             "nics": {"sim-dgx1": [], "sim-dgx2": []}}
    findings = build_findings(checks, index)
    assert len(findings) == 1 and findings[0]["host"] == "sim-dgx2"
    top = findings[0]
    assert {e["check"] for e in top["explains"]} == {"gpu_dcgm_diag", "gpu_ecc", "gpu_memory_retirement"}
    assert "'Page Retirement' FAIL on GPU(s) 2: Pending page retirements together with a DBE were detected on " \
           "GPU 2." in top["summary"]
    assert "0,1" not in top["summary"] and "GPUs 0" not in top["summary"]


def test_an_hca_link_fault_is_about_the_hca_and_its_nic(tmp_path):
    """A narrowed HCA link names the node, the HCA and its netdev as data (the findings put the NIC's switch port
    next to it), not in the cause's words only."""
    m = pod(tmp_path)
    m["nodes"]["sim-dgx2"]["facts"]["hcas"]["mlx5_2"]["width"] = 8
    (hit,) = [c for c in run_eval(m) if c["check"] == "hca_pcie_link" and c["status"] == "fail"]
    assert hit["host"] == "sim-dgx2" and hit["cause"] == "sim-dgx2 mlx5_2 (0000:84:00.0): PCIe link x8, capable of x16"
    assert (hit["category"], hit["subject"]) == ("node_state", {"node": "sim-dgx2", "nic": "enp132s0",
                                                                "hca": "mlx5_2"})
    del m["nodes"]["sim-dgx2"]["facts"]["hcas"]["mlx5_2"]["netdev"]  # a reading without it: the HCA only
    (hit,) = [c for c in run_eval(m) if c["check"] == "hca_pcie_link" and c["status"] == "fail"]
    assert hit["subject"] == {"node": "sim-dgx2", "hca": "mlx5_2"}


def test_a_dgx_without_a_reading_is_unreachable_only_when_it_did_not_answer():
    hv = {"sim-dgx1": {"dgx_model": "dgx1", "gpu_health_read": {"unreachable": True, "msg": "ssh: timed out"}},
          "sim-dgx2": {"dgx_model": "dgx1"},
          "sim-dgx3": {"dgx_model": "dgx1", "gpu_health_read": {"failed": True, "msg": "nvidia-smi crashed"}}}
    checks = {c["host"]: c for c in run_eval(gpu_filters.gpu_stage_record(sorted(hv), hv, 1))
              if c["check"] == "gpu_node"}
    assert {h: (c["status"], c.get("unreachable", False)) for h, c in checks.items()} == {
        "sim-dgx1": ("error", True), "sim-dgx2": ("error", True), "sim-dgx3": ("error", False)}
    assert all(c["category"] == "node_state" and c["subject"] == {"node": h} for h, c in checks.items())


def test_dcgm_absent_is_skipped_and_a_dcgm_crash_is_an_error(tmp_path):
    m = pod(tmp_path, dcgm=False)
    assert {c["status"] for c in run_eval(m) if c["check"] == "gpu_dcgm_diag"} == {"skipped"}
    m["nodes"]["sim-dgx1"]["facts"]["dcgm"] = {"present": True, "level": 1, "result": None, "error": "timed out"}
    err = [c for c in run_eval(m) if c["check"] == "gpu_dcgm_diag" and c["host"] == "sim-dgx1"][0]
    assert err["status"] == "error" and "timed out" in err["reason"]
    # level 0 (-e gpu_dcgm_level=0): not run, said so - not "dcgmi is not installed"
    m["nodes"]["sim-dgx1"]["facts"]["dcgm"] = {"present": False, "level": 0, "result": None, "error": None}
    off = [c for c in run_eval(m) if c["check"] == "gpu_dcgm_diag" and c["host"] == "sim-dgx1"][0]
    assert off["status"] == "skipped" and "level 0" in off["reason"] and "not installed" not in off["reason"]


def test_nvswitch_models_need_the_fabric_manager(tmp_path):
    m = pod(tmp_path, n=1)
    entry = m["nodes"]["sim-dgx1"]
    entry["dgx_model"] = "dgxa100"
    entry["facts"]["fabric_manager"] = {"required": True, "state": "inactive"}
    checks = run_eval(m)
    fm = [c for c in checks if c["check"] == "gpu_fabric_manager"][0]
    assert fm["status"] == "fail" and "nvidia-fabricmanager is inactive" in fm["cause"]
    assert [c for c in checks if c["check"] == "gpu_model"][0]["status"] == "fail"  # V100s are not A100s
    entry["facts"]["fabric_manager"]["state"] = "active"
    assert [c for c in run_eval(m) if c["check"] == "gpu_fabric_manager"][0]["status"] == "pass"


def test_unreachable_and_failed_nodes_are_errors_not_missing_rows(tmp_path):
    healthy = node_facts(tmp_path)
    hostvars = {"a": {"dgx_model": "dgx1", "gpu_health_read": {"dgx_gpu": healthy}},
                "b": {"dgx_model": "dgx1", "gpu_health_read": {"unreachable": True, "msg": "ssh: timed out"}},
                "c": {"dgx_model": "dgx1", "gpu_health_read": {"failed": True, "msg": "MODULE FAILURE"}},
                "d": {"dgx_model": "dgx1"}}
    rec = gpu_filters.gpu_stage_record(["a", "b", "c", "d"], hostvars, "1")
    assert rec["level"] == 1 and [rec["nodes"][h]["status"] for h in "abcd"] == ["ok", "error", "error", "error"]
    checks = run_eval(rec)
    errs = {c["host"]: c["reason"] for c in checks if c["check"] == "gpu_node"}
    assert set(errs) == {"b", "c", "d"} and "ssh: timed out" in errs["b"] and "MODULE FAILURE" in errs["c"]


def test_dcgm_level_from_profile_and_override():
    ra = {"perf_runs": {"full": {"gpu": {"dcgm_level": 3}}, "quick": {}}}
    assert gpu_filters.gpu_dcgm_level(ra, "full") == 3
    assert gpu_filters.gpu_dcgm_level(ra, "quick") == 1
    assert gpu_filters.gpu_dcgm_level(ra, "full", "2") == 2
    assert gpu_filters.gpu_dcgm_level({}, "full") == 3


def test_stage_is_registered_and_reported(tmp_path):
    assert "gpu" in [s.name for s in registry()]
    m = pod(tmp_path, ["pcie_x8=5"])
    base = {"pod": "p", "ra_profile": "r", "simulated": True, "finished": "t", "checks": []}
    doc = build_results(base, {}, {}, {"gpu": copy.deepcopy(m)})
    assert doc["measurements"]["gpu"]["nodes"]["sim-dgx1"]["status"] == "ok"
    assert doc["summary"]["fail"] >= 1
    md = render_markdown(doc)
    assert "## GPU and node health (DCGM level 1)" in md
    assert "| sim-dgx2 | 8 x Tesla V100-SXM2-32GB | 418.67 / CUDA 10.1 | pass | pass | fail | pass | pass |" in md
    assert "<h2>GPU and node health (DCGM level 1)</h2>" in render_html(doc)
    none = build_results(base, {}, {}, {}, run_tags=["gpu"])
    assert [c["status"] for c in none["checks"] if c["check"] == "gpu"] == ["error"]


def test_the_module_returns_its_reading_as_a_result_not_a_cached_fact(tmp_path):
    """Run through Ansible on this machine (no GPU, no nvidia-smi): the reading comes back as ``dgx_gpu`` with the
    missing tools named, and nothing goes into ansible_facts - the fact cache would carry it into every later
    task of every run (18 KB a DGX, copied per task)."""
    from playbook_util import run_module
    res = run_module("dgx_gpu_health", {"dcgm_level": 0, "fs_root": str(tmp_path), "tool_timeout": 10})
    assert not res.get("failed"), res
    assert "dgx_gpu" not in (res.get("ansible_facts") or {}), res
    assert res["dgx_gpu"]["errors"] and res["dgx_gpu"]["smi"] is None, res["dgx_gpu"]
    rec = gpu_filters.gpu_stage_record(["a"], {"a": {"dgx_model": "dgx1", "gpu_health_read": res}}, 0)
    assert rec["nodes"]["a"]["status"] == "ok" and rec["nodes"]["a"]["facts"] is res["dgx_gpu"]


def test_the_ecc_and_gpu_count_lines_state_how_they_compare(tmp_path):
    """A GPU with uncorrectable errors reads 'measured 2 uncorrectable errors (expected = 0)', not '>= 0', which
    would read as met; the GPU count must equal the model's (before: '(expected >= 8)')."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details
    checks = run_eval(pod(tmp_path, ["ecc=2"], level=1))
    ecc = [c for c in checks if c["check"] == "gpu_ecc" and c["status"] == "fail"]
    assert ecc and all(details(c).startswith("GPU %s: measured 2 uncorrectable errors (expected = 0)" % c["gpu"])
                       for c in ecc)
    count = [c for c in checks if c["check"] == "gpu_count"]
    assert count and all("(expected = 8)" in details(c) for c in count)
    # a healthy node's pass: the highest count of its GPUs, not 'all 8 GPUs uncorrectable errors'
    ok = [details(c) for c in checks if c["check"] == "gpu_ecc" and c["status"] == "pass"]
    assert ok and all(line.startswith("measured 0 uncorrectable errors (expected = 0)") and
                      "the highest of its 8 GPUs" in line for line in ok), ok


def test_the_per_gpu_and_per_hca_lines_say_which_and_read_as_measurements(tmp_path):
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details
    checks = run_eval(pod(tmp_path, level=1))
    temp = [details(c) for c in checks if c["check"] == "gpu_temperature"]
    assert temp and all(" C (expected below" in line and "GPUs C" not in line for line in temp), temp
    model = [details(c) for c in checks if c["check"] == "gpu_model"]
    assert model and all(line.startswith("measured all 8 GPUs (expected") for line in model), model
    hca = [(c["hca"], details(c)) for c in checks if c["check"] == "hca_pcie_link"]
    assert hca and all(line.startswith("%s: measured x" % dev) for dev, line in hca), hca


def test_a_gpu_state_nvidia_smi_did_not_report_fails_as_not_reported_never_as_a_reading(tmp_path):
    """The parsers give None for N/A or an NVML error text (persistence mode, ECC mode and counts, the page
    retirement pending flag): the checks name it 'not reported' and fail - before, None read as 'Disabled' (a
    reading nobody made) or passed as 'none pending'."""
    m = pod(tmp_path)
    g = m["nodes"]["sim-dgx2"]["facts"]["smi"]["gpus"][3]
    g["persistence_mode"] = None
    g["ecc_mode"] = None
    g["ecc"] = {"volatile": {"uncorrectable": None}}
    g["retired_pages"] = dict(g["retired_pages"] or {"single_bit": 0, "double_bit": 0}, pending=None)
    g["remapped_rows"] = None
    failed = {c["check"]: c for c in bad(run_eval(m))}
    for check in ("gpu_persistence_mode", "gpu_ecc", "gpu_memory_retirement"):
        c = failed[check]
        assert c["host"] == "sim-dgx2" and c["gpu"] == g["index"] and "not reported" in c["measured"], c
        assert "did not report" in c["cause"] or "reported neither" in c["cause"], c
    assert all(c["host"] == "sim-dgx2" for c in failed.values())


def test_a_driver_odd_on_one_dgx_names_that_dgx_not_the_pod():
    """Issue 46: three DGX on one driver and one on another - the odd one is the subject of its own failure (the
    finding names the node); with no version on most DGX the pod fails as a whole."""
    rows = [r.to_dict() for r in gpu_eval._consistency(
        "gpu_driver_consistent", {"a": "535.1", "b": "535.1", "c": "550.2", "d": "535.1"}, "driver version")]
    assert [(r["host"], r["status"], r["measured"], r["expected"]) for r in rows] == [
        ("c", "fail", "550.2", "535.1")]
    assert rows[0]["subject"] == {"node": "c"} and rows[0]["category"] == "node_state"
    assert rows[0]["cause"] == "c has driver version 550.2, the other 3 DGX have 535.1"
    tie = [r.to_dict() for r in gpu_eval._consistency("gpu_driver_consistent", {"a": "1", "b": "2"}, "driver")]
    assert [(r["host"], r["status"], r["category"]) for r in tie] == [("pod", "fail", "pod_state")]
    same = [r.to_dict() for r in gpu_eval._consistency("gpu_driver_consistent", {"a": "1", "b": "1"}, "driver")]
    assert [(r["host"], r["status"]) for r in same] == [("pod", "pass")]
