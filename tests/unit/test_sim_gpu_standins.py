"""The simulator's GPU health stand-ins (sim/standins/podsim_gpu.py): TEST DOUBLES for nvidia-smi -q -x,
nvlink -s/-e, topo -m, dcgmi diag and ofed_info. These pin their line formats to the real tools' (the
captures in tests/unit/fixtures/gpu/) and their CLI behaviour; what the parsers read from them is in
tests/unit/test_gpu_stage.py."""
from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import podsim_gpu as gpu  # noqa: E402
import podsim_hw as hw  # noqa: E402


@pytest.fixture
def state():
    return hw.default_state("sim-dgx1", 1)


def call(tool, args, state_file=None):
    env = dict(os.environ)
    if state_file:
        os.environ["PODSIM_HW_STATE"] = state_file
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            entry = hw.main if tool == "nvidia-smi" else gpu.main
            rc = entry([os.path.join(ROOT, "sim", "standins", tool)] + args)
    finally:
        os.environ.clear()
        os.environ.update(env)
    return rc, out.getvalue(), err.getvalue()


def test_nvlink_lines_as_the_real_tool_prints_them(state):
    lines = gpu.render_nvlink_status(state).splitlines()
    assert lines[0].startswith("GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-") and lines[1] == "\t Link 0: 25.781 GB/s"
    assert len(lines) == 8 * 7
    err = gpu.render_nvlink_errors(state).splitlines()
    assert err[1:4] == ["\t Link 0: Replay Errors: 0", "\t Link 0: Recovery Errors: 0", "\t Link 0: CRC Errors: 0"]


def test_topo_header_and_rows(state):
    lines = gpu.render_topo(state).splitlines()
    assert lines[0].split("\t")[1:] == ["GPU%d" % i for i in range(8)] + ["mlx5_%d" % i for i in range(4)] + \
        ["CPU Affinity"]
    assert lines[1].split("\t")[:6] == ["GPU0", " X ", "NV1", "NV1", "NV2", "NV2"]
    assert "  NV#  = Connection traversing a bonded set of # NVLinks" in lines


def test_faults_renumber_like_nvidia_smi(state):
    state["gpu_faults"] = gpu.parse_faults(["missing_gpu=0", "pcie_x8=1"])
    xml = gpu.render_smi_xml(state)
    assert "<attached_gpus>7</attached_gpus>" in xml and "00000000:06:00.0" not in xml
    # the GPU at bus 07 is now GPU 0 and it is the one at x8 (faults name the physical GPU)
    first = xml.split("<gpu id=")[1]
    assert first.startswith('"00000000:07:00.0"') and "<current_link_width>8x</current_link_width>" in first
    assert gpu.render_nvlink_status(state).startswith("GPU 0: Tesla V100-SXM2-32GB")


def test_proc_modules_and_node_files(state):
    assert gpu.render_proc_modules(state).startswith("nvidia_peermem 16384 0 - Live")
    state["gpu_faults"] = {"no_peermem": True}
    text = gpu.render_proc_modules(state)
    assert "nvidia_peermem" not in text and "nvidia 35274752 120 nvidia_uvm,nvidia_modeset," in text
    files = gpu.node_files(state)
    assert files["sys/bus/pci/devices/0000:05:00.0/current_link_width"] == "16\n"
    assert files["sys/class/infiniband/mlx5_0/board_id"] == "MT_2180110032\n"


def test_cli_dcgmi_ofed_info_and_errors(state, tmp_path):
    path = tmp_path / "hw.json"
    state["gpu_faults"] = gpu.parse_faults(["pcie_x8=3"])
    path.write_text(json.dumps(state))
    rc, out, _ = call("dcgmi", ["diag", "-r", "1", "-j"], str(path))
    assert rc == 0 and [c["category"] for c in json.loads(out)["DCGM GPU Diagnostic"]["test_categories"]] == [
        "Deployment"]
    rc, out, _ = call("dcgmi", ["diag", "-r", "3", "-j"], str(path))
    assert rc == 1 and "link width 8X" in out  # a failed test: non-zero exit, the JSON says which and why
    rc, out, _ = call("dcgmi", ["diag", "-r", "1"], str(path))
    assert rc == 0 and out.startswith("Successfully ran diagnostic for group.\n+---")
    assert "| Blacklist                 | Pass " in out
    rc, _, err = call("dcgmi", ["discovery", "-l"], str(path))
    assert rc == 2 and "stand-in" in err
    rc, _, err = call("dcgmi", ["diag", "-r", "1", "-j"], str(tmp_path / "missing.json"))
    assert rc == 1 and "Unable to connect to host engine" in err
    rc, _, err = call("nvidia-smi", ["nvlink", "-R"], str(path))
    assert rc == 2 and "not simulated" in err


def test_rising_counters_persist_between_calls(state, tmp_path):
    path = tmp_path / "hw.json"
    state["gpu_faults"] = gpu.parse_faults(["nvlink_errors=2"])
    path.write_text(json.dumps(state))
    first = call("nvidia-smi", ["nvlink", "-e"], str(path))[1]
    second = call("nvidia-smi", ["nvlink", "-e"], str(path))[1]
    assert "Link 0: Replay Errors: 7" in first.split("GPU 2:")[1].split("GPU 3:")[0]
    assert "Link 0: Replay Errors: 14" in second.split("GPU 2:")[1].split("GPU 3:")[0]
    assert "Replay Errors: 7" not in second.split("GPU 2:")[0]


def test_dcgmi_page_retirement_failure_is_dcgmi_2_1s_form(state):
    """One GPU of eight with a pending retirement and DBEs: dcgmi 2.1 prints ONE Deployment result for the
    node (no gpu_ids, status "Fail", a warnings string naming the GPU) - the hand-written fixture of that form,
    tests/unit/fixtures/gpu/dcgmi_diag_r2_2.1_page_retirement_fail.json, byte for byte."""
    state["gpu_faults"] = gpu.parse_faults(["ecc=2"])
    fixture = os.path.join(ROOT, "tests", "unit", "fixtures", "gpu", "dcgmi_diag_r2_2.1_page_retirement_fail.json")
    assert gpu.render_dcgmi_diag(state, 2) == open(fixture).read()
    table = gpu.render_dcgmi_table(state, 2)
    assert "| Page Retirement           | Fail                                           |\n" in table
    assert "| Error                     | Pending page retirements together with a DBE   |\n" in table
    assert "| pcie                      | Pass - All                                     |\n" in table


def test_dcgmi_table_names_the_failing_gpu_of_a_per_gpu_test(state):
    state["gpu_faults"] = gpu.parse_faults(["pcie_x8=5"])
    table = gpu.render_dcgmi_table(state, 2)
    assert "| pcie                      | Pass - GPUs: 0, 1, 2, 3, 4, 6, 7               |\n" in table
    assert "|                           | Fail - GPU: 5                                  |\n" in table
    assert "| Warning                   | GPU 5 is running at PCI link width 8X, which   |\n" in table
    doc = json.loads(gpu.render_dcgmi_diag(state, 2))["DCGM GPU Diagnostic"]["test_categories"]
    assert [(r["gpu_ids"], r["status"]) for r in doc[1]["tests"][0]["results"]][4:6] == [("4", "Pass"),
                                                                                        ("5", "Fail")]
