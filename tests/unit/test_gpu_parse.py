"""GPU health parsers (module_utils/gpu/parse.py) on real captures (tests/unit/fixtures/gpu/, provenance in
docs/hardware-facts.md)."""
from __future__ import annotations

import json
import re

import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_parse import parse_dcgmi_diag
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.parse import (GpuParseError, nvlinks_from_topo,
    parse_lspci_link, parse_nvlink_errors, parse_nvlink_status, parse_proc_modules, parse_smi_xml, parse_topo_matrix,
    peermem_module)

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "gpu")


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_smi_xml_volta_driver_460_throttle_reasons_and_retired_pages():
    doc = parse_smi_xml(fx("smi_qx_v100s_460.xml"))
    assert (doc["driver_version"], doc["cuda_version"], doc["attached_gpus"]) == ("460.73.01", "11.2", 8)
    g = doc["gpus"][0]
    assert g["name"] == "Tesla V100S-PCIE-32GB" and g["bus_id"] == "00000000:00:0D.0"
    assert g["vbios"] == "88.00.98.00.01"  # a VBIOS pin is judged on it (gpu/pins.py)
    assert g["serial"] == "1562920006088" and g["persistence_mode"] is False and g["ecc_mode"] is True
    assert g["ecc"]["volatile"] == {"correctable": 0, "uncorrectable": 0}
    assert g["retired_pages"] == {"single_bit": 0, "double_bit": 0, "pending": False}
    assert g["remapped_rows"] is None  # Volta has no row remapping
    assert g["pcie"] == {"gen": 3, "max_gen": 3, "width": 16, "max_width": 16}
    assert g["throttle_element"] == "clocks_throttle_reasons"
    assert g["throttle"]["hw_thermal_slowdown"] is False and len(g["throttle"]) == 9
    assert (g["temperature_c"], g["temperature_slowdown_c"], g["temperature_shutdown_c"]) == (66, 87, 90)
    assert (g["power_draw_w"], g["power_limit_w"]) == (232.8, 250.0)


def test_smi_xml_ada_driver_555_event_reasons_remapped_rows_sram_dram_ecc():
    doc = parse_smi_xml(fx("smi_qx_l4_555.xml"))
    assert doc["driver_version"] == "555.42.06" and doc["cuda_version"] == "12.5"
    g = doc["gpus"][0]
    assert g["name"] == "NVIDIA L4" and g["uuid"].startswith("GPU-c5533cd4")
    assert g["throttle_element"] == "clocks_event_reasons" and g["throttle"]["gpu_idle"] is True
    assert g["ecc"]["aggregate"] == {"correctable": 0, "uncorrectable": 0}
    assert g["retired_pages"] is None
    assert g["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert g["pcie"]["gen"] == 4 and g["pcie"]["width"] == 16
    assert g["power_limit_w"] == 72.0


def test_smi_xml_counts_errors_and_pending():
    text = fx("smi_qx_v100s_460.xml").replace(
        "<double_bit>\n                    <device_memory>0</device_memory>",
        "<double_bit>\n                    <device_memory>2</device_memory>", 1)
    text = text.replace("<total>0</total>\n                </double_bit>\n            </volatile>",
                        "<total>2</total>\n                </double_bit>\n            </volatile>")
    text = text.replace("<pending_retirement>No</pending_retirement>", "<pending_retirement>Yes</pending_retirement>")
    text = text.replace("<current_link_width>16x</current_link_width>", "<current_link_width>8x</current_link_width>")
    g = parse_smi_xml(text)["gpus"][0]
    assert g["ecc"]["volatile"]["uncorrectable"] == 2 and g["retired_pages"]["pending"] is True
    assert g["pcie"]["width"] == 8


@pytest.mark.parametrize("text, match", [
    ("Failed to initialize NVML: Driver/library version mismatch\n", "line 1.*Driver/library version mismatch"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "tool reported an error"),
    ("", "expected an XML document"),
    ("<nvidia_smi_log><driver_version>1</driver_version><gpu id='x'>", "not well-formed"),
    ("<other/>", "root element"),
    ("<nvidia_smi_log><gpu id='0000:01:00.0'/></nvidia_smi_log>", "driver_version"),
])
def test_smi_xml_refuses_what_it_cannot_read(text, match):
    with pytest.raises(GpuParseError, match=match) as err:
        parse_smi_xml(text)
    assert "nvidia-smi -q -x" in str(err.value)


def test_nvlink_status_speeds_and_inactive():
    h100 = parse_nvlink_status(fx("nvlink_s_h100_550.txt"))
    assert sorted(h100) == [0, 1] and len(h100[0]["links"]) == 18
    assert set(h100[1]["links"].values()) == {26.562}
    assert h100[0]["uuid"] == "GPU-4039dfe4-0c97-4b1e-683e-eb7d42699053"
    turing = parse_nvlink_status(fx("nvlink_s_turing.txt"))
    assert turing[0] == {"name": "Quadro RTX 8000", "uuid": None, "links": {0: 25.781, 1: 25.781}}
    dead = parse_nvlink_status(fx("nvlink_s_inactive.txt"))
    assert dead[0]["links"] == {0: None, 1: None}


def test_nvlink_status_refuses_unknown_lines():
    with pytest.raises(GpuParseError, match="line 2"):
        parse_nvlink_status("GPU 0: X\n\t Link 0: some future status\n")


def test_nvlink_errors_both_layouts():
    h100 = parse_nvlink_errors(fx("nvlink_e_h100.txt"))
    assert sorted(h100[0]) == [0, 1, 17] and h100[0][17] == {"replay": 0, "recovery": 0, "crc": 0}
    flit = parse_nvlink_errors(fx("nvlink_e_ampere_flit.txt"))
    assert flit[0][0] == {"replay": 0, "recovery": 0, "crc_flit": 5, "crc_data": 0}
    assert flit[0][1]["replay"] == 12
    gb = parse_nvlink_errors(fx("nvlink_e_gb300.txt"))
    assert gb == {0: {0: {"replay": 0, "recovery": 0, "crc": 0}}}
    with pytest.raises(GpuParseError, match="line 2"):
        parse_nvlink_errors("GPU 0: X\n\t Link 0: Replay Errors: many\n")


def test_topo_dgx_a100_nic_columns_and_affinity():
    topo = parse_topo_matrix(fx("topo_dgxa100_nic_legend.txt"))
    assert topo["columns"][:8] == ["GPU%d" % i for i in range(8)] and topo["columns"][-1] == "NIC9"
    assert topo["matrix"]["GPU0"]["GPU1"] == "NV12" and topo["matrix"]["GPU0"]["NIC0"] == "PXB"
    assert topo["cpu_affinity"]["GPU4"] == "112-127,240-255" and topo["numa_affinity"]["GPU2"] == "1"
    assert nvlinks_from_topo(topo)["GPU0"]["GPU7"] == 12
    legend = fx("topo_dgxa100_nic_legend.txt") + "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n"
    with_legend = parse_topo_matrix(legend)
    assert with_legend["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert with_legend["gpu_nic"]["GPU0"]["mlx5_0"] == "PXB"


def test_topo_dgx2_mlx5_columns_and_plain_legend():
    topo = parse_topo_matrix(fx("topo_dgx2_mlx5_columns.txt"))
    assert topo["gpu_nic"]["GPU0"]["mlx5_0"] == "PIX" and topo["gpu_nic"]["GPU2"]["mlx5_1"] == "PIX"
    assert topo["cpu_affinity"]["GPU3"] == "0-23,48-71" and topo["numa_affinity"] == {}
    small = parse_topo_matrix(fx("topo_2gpu_legend.txt"))
    assert small["matrix"]["GPU0"]["GPU1"] == "PHB" and nvlinks_from_topo(small) == {"GPU0": {}, "GPU1": {}}


def test_topo_refuses_garbage():
    with pytest.raises(GpuParseError, match="header"):
        parse_topo_matrix("nothing here\n")
    with pytest.raises(GpuParseError, match="line 2"):
        parse_topo_matrix("        GPU0    GPU1\nGPU0     X      WHAT\n")


def test_dcgmi_diag_real_3_1_output_all_pass():
    diag = parse_dcgmi_diag(fx("dcgmi_diag_r1_3.1.0.json"))
    assert diag["version"] == "3.1.0" and len(diag["tests"]) == 10
    assert diag["tests"][0] == {"category": "Deployment", "name": "Denylist",
                                "results": [{"gpus": "0,1,2,3,4,5,6,7", "status": "pass", "failing": None,
                                             "warnings": [], "info": []}]}
    assert {r["status"] for t in diag["tests"] for r in t["results"]} == {"pass"}
    assert len(diag["tests"][-1]["results"]) == 8


def test_dcgmi_diag_failure_keeps_dcgms_reason():
    diag = parse_dcgmi_diag(fx("dcgmi_diag_r3_fail_schema.json"))
    pcie = [t for t in diag["tests"] if t["name"] == "PCIe"][0]
    bad = pcie["results"][1]
    assert bad["status"] == "fail" and bad["gpus"] == "3"
    assert "link width 8X" in bad["warnings"][0] and "(DCGM error 63)" in bad["warnings"][0]
    assert "6.12 GB/s" in bad["info"][0]


def test_dcgmi_2_1_form_a_deployment_failure_names_its_gpu_from_the_message():
    """dcgmi 2.x/3.x -j (dcgmi/Diag.cpp): Deployment results have no gpu_ids, warnings is one string."""
    diag = parse_dcgmi_diag(fx("dcgmi_diag_r2_2.1_page_retirement_fail.json"))
    assert diag["version"] is None and [t["category"] for t in diag["tests"]].count("Deployment") == 9
    pr = [t for t in diag["tests"] if t["name"] == "Page Retirement"][0]["results"]
    assert pr == [{"gpus": "", "status": "fail", "failing": "2", "info": [],
                   "warnings": ["Pending page retirements together with a DBE were detected on GPU 2. Drain the "
                                "GPU and reset it or reboot the node to resolve this issue."]}]
    pcie = [t for t in diag["tests"] if t["name"] == "PCIe"][0]["results"]
    assert [r["gpus"] for r in pcie] == [str(i) for i in range(8)] and {r["failing"] for r in pcie} == {None}


def test_nvvs_form_a_deployment_failure_listing_every_gpu_names_the_failing_one():
    """The NVVS JSON lists all GPUs in a Deployment result's gpu_ids: the real 3.1 capture with its Page
    Retirement entry failed as NVVS writes a failure (warnings [{warning, error_id}])."""
    doc = json.loads(fx("dcgmi_diag_r1_3.1.0.json").split("\n", 1)[1])
    for test in doc["DCGM GPU Diagnostic"]["test_categories"][0]["tests"]:
        if test and test["name"] == "Page Retirement/Row Remap":
            test["results"][0].update(status="FAIL", warnings=[{
                "warning": "Pending page retirements together with a DBE were detected on GPU 2.", "error_id": 83}])
    diag = parse_dcgmi_diag(json.dumps(doc))
    bad = [r for t in diag["tests"] for r in t["results"] if r["status"] != "pass"]
    assert [(r["gpus"], r["failing"]) for r in bad] == [("0,1,2,3,4,5,6,7", "2")]
    assert bad[0]["warnings"][0].endswith("on GPU 2. (DCGM error 83)")


@pytest.mark.parametrize("gpu_ids, warning, failing", [
    ("0,1,2,3", "Persistence mode for GPU 3 is currently disabled. ... nvidia-smi -i <gpuId> -pm 1 ...", "3"),
    ("0,1,2,3", "GPUs 1, 3 report a problem", "1,3"),
    (None, "A pending retired page has been detected in GPU 0.", "0"),
    ("0,1,2,3", "Environment variable CUDA_VISIBLE_DEVICES is set", "0,1,2,3"),  # no GPU named: all it lists
    ("0,1", "GPU 7 is not in this run", "0,1"),  # a GPU outside the run is not one of its results
    ("5", "GPU 5 is running at PCI link width 8X", "5"),
])
def test_dcgmi_failing_gpus(gpu_ids, warning, failing):
    r = {"status": "Fail", "warnings": warning}
    if gpu_ids is not None:
        r["gpu_ids"] = gpu_ids
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
        {"name": "x", "results": [r]}]}]}, "version": "3.1.8"}
    diag = parse_dcgmi_diag(json.dumps(doc))
    assert diag["version"] == "3.1.8" and diag["tests"][0]["results"][0]["failing"] == failing


@pytest.mark.parametrize("text, match", [
    ("Error: Unable to connect to host engine\n", "tool reported an error"),
    ('{"DCGM GPU Diagnostic": {"version": "4.2.3"}}', "test_categories"),
    ('{"DCGM GPU Diagnostic": {"test_categories": [{"tests": [{"name": "x", "results": [{"status": "odd"}]}]}]}}',
     "unknown status"),
    ("{not json", "not valid JSON"),
])
def test_dcgmi_diag_refuses_what_it_cannot_read(text, match):
    with pytest.raises(GpuParseError, match=match):
        parse_dcgmi_diag(text)


def test_lspci_link_old_and_new_forms():
    old = parse_lspci_link(fx("lspci_vv_gen3_x16_old.txt"))
    assert old["cap"] == {"gts": 8.0, "gen": 3, "width": 16}
    assert old["sta"]["gen"] == 2 and old["sta"]["speed_downgraded"] and not old["sta"]["width_downgraded"]
    new = parse_lspci_link(fx("lspci_vv_gen4.txt"))
    assert new["cap"]["gen"] == 4 and new["sta"]["gts"] == 2.5 and new["sta"]["width"] == 16
    legacy = parse_lspci_link(fx("lspci_vv_legacy_lnksta.txt"))
    assert legacy["sta"] == {"gts": 8.0, "gen": 3, "width": 8, "speed_downgraded": False, "width_downgraded": False}
    with pytest.raises(GpuParseError, match="no LnkSta"):
        parse_lspci_link("LnkCap: Port #0, Speed 8GT/s, Width x16\n")
    with pytest.raises(GpuParseError, match="line 1"):
        parse_lspci_link("LnkSta: Speed unknown\n")


def test_proc_modules_and_peermem():
    text = ("nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\n"
            "nvidia 35274752 120 nvidia_peermem,nvidia_modeset, Live 0x0000000000000000 (POE)\n"
            "ib_core 368640 9 rdma_ucm,ib_ipoib,nvidia_peermem, Live 0x0000000000000000\n")
    mods = parse_proc_modules(text)
    assert mods["nvidia"]["used_by"] == ["nvidia_peermem", "nvidia_modeset"]
    assert peermem_module(mods) == "nvidia_peermem"
    assert peermem_module(parse_proc_modules("nv_peer_mem 16384 0 - Live 0x0\n")) == "nv_peer_mem"
    assert peermem_module(parse_proc_modules("nvidia 1 0 - Live 0x0\n")) is None
    with pytest.raises(GpuParseError, match="line 1"):
        parse_proc_modules("garbage\n")


# --------------------------------------------------------------------------- variants from other drivers / versions

def _v100(old, new, count=1):
    text = fx("smi_qx_v100s_460.xml")
    assert old in text
    return text.replace(old, new, count)


def test_smi_xml_unknown_values_are_none_not_no():
    """nvidia-smi prints N/A, "Unknown Error", "[GPU requires reset]", "Requested functionality has been
    deprecated" (driver 575: display_mode, reset_required) where NVML gave no value: never a Yes/No, never a number."""
    text = _v100("<persistence_mode>Disabled</persistence_mode>", "<persistence_mode>Unknown Error</persistence_mode>")
    text = text.replace("<current_ecc>Enabled</current_ecc>",
                        "<current_ecc>Requested functionality has been deprecated</current_ecc>")
    text = text.replace("<serial>1562920006088</serial>", "<serial>[GPU requires reset]</serial>")
    g = parse_smi_xml(text)["gpus"][0]
    assert g["persistence_mode"] is None and g["ecc_mode"] is None and g["serial"] is None


def test_smi_xml_retired_pages_pending_unknown_is_none():
    both = "<pending_blacklist>No</pending_blacklist>\n            <pending_retirement>No</pending_retirement>"
    g = parse_smi_xml(_v100(both, "<pending_blacklist>N/A</pending_blacklist><pending_retirement>N/A"
                                  "</pending_retirement>"))["gpus"][0]
    assert g["retired_pages"]["pending"] is None  # R418 <pending_blacklist> and R450+ <pending_retirement> both N/A
    old = _v100(both, "<pending_blacklist>Yes</pending_blacklist>")  # a driver printing only the older element
    assert parse_smi_xml(old)["gpus"][0]["retired_pages"]["pending"] is True


def test_smi_xml_row_remap_unknown_flags_are_none_and_all_na_block_is_no_remapping():
    text = fx("smi_qx_l4_555.xml")
    na = text.replace("<remapped_row_pending>No</remapped_row_pending>",
                      "<remapped_row_pending>N/A</remapped_row_pending>")
    rr = parse_smi_xml(na)["gpus"][0]["remapped_rows"]
    assert rr["pending"] is None and rr["failure"] is False
    for tag in ("remapped_row_corr", "remapped_row_unc", "remapped_row_pending", "remapped_row_failure"):
        text = re.sub(r"<%s>[^<]*</%s>" % (tag, tag), "<%s>N/A</%s>" % (tag, tag), text)
    assert parse_smi_xml(text)["gpus"][0]["remapped_rows"] is None


def test_smi_xml_throttle_reason_not_reported_is_left_out_not_false():
    text = _v100("<clocks_throttle_reason_hw_slowdown>Not Active</clocks_throttle_reason_hw_slowdown>",
                 "<clocks_throttle_reason_hw_slowdown>Not Supported</clocks_throttle_reason_hw_slowdown>")
    g = parse_smi_xml(text)["gpus"][0]
    assert "hw_slowdown" not in g["throttle"] and len(g["throttle"]) == 8
    # a driver printing the new block name with the old leaf prefix still gives its reasons
    mixed = fx("smi_qx_v100s_460.xml").replace("<clocks_throttle_reasons>", "<clocks_event_reasons>").replace(
        "</clocks_throttle_reasons>", "</clocks_event_reasons>")
    g = parse_smi_xml(mixed)["gpus"][0]
    assert g["throttle_element"] == "clocks_event_reasons" and len(g["throttle"]) == 9


def test_smi_xml_instant_and_average_power_draw_of_newer_drivers():
    """Driver 575 (and 570 B200 nodes) print <instant_power_draw>/<average_power_draw>, no <power_draw>."""
    text = fx("smi_qx_l4_555.xml")
    text = re.sub(r"<power_draw>[^<]*</power_draw>",
                  "<average_power_draw>11.15 W</average_power_draw><instant_power_draw>11.26 W</instant_power_draw>",
                  text, count=1)
    assert parse_smi_xml(text)["gpus"][0]["power_draw_w"] == 11.26
    only_avg = text.replace("<instant_power_draw>11.26 W</instant_power_draw>", "")
    assert parse_smi_xml(only_avg)["gpus"][0]["power_draw_w"] == 11.15


def test_nvlink_status_nvml_message_instead_of_links():
    s = parse_nvlink_status(fx("nvlink_s_b200_all_inactive.txt"))
    assert s[0]["links"] == {0: 50.0, 1: 50.0} and "error" not in s[0]
    assert s[1]["links"] == {} and "all links are inActive" in s[1]["error"]
    assert s[2]["links"] == {0: 50.0, 1: None}
    e = parse_nvlink_errors("GPU 0: NVIDIA B200 (UUID: GPU-x)\nNVML: Unable to retrieve NVLink information as all "
                            "links are inActive\nGPU 1: NVIDIA B200 (UUID: GPU-y)\n\t Link 0: Replay Errors: 3\n")
    assert e == {0: {}, 1: {0: {"replay": 3}}}
    with pytest.raises(GpuParseError, match="line 3"):  # a message after links is not this form
        parse_nvlink_status("GPU 0: X\n\t Link 0: 50 GB/s\nNVML: something else\n")


@pytest.mark.parametrize("parser", [parse_smi_xml, parse_nvlink_status, parse_nvlink_errors, parse_topo_matrix])
def test_smi_without_its_library_is_refused_as_a_tool_error(parser):
    text = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
            "Display Driver is properly installed and present in your system.\n")
    with pytest.raises(GpuParseError, match="tool reported an error"):
        parser(text)


def test_nvlink_errors_na_counter_is_left_out_not_zero():
    e = parse_nvlink_errors("GPU 0: NVIDIA B200 (UUID: GPU-x)\n\t Link 0: Replay Errors: 0\n"
                            "\t Link 0: CRC Flit Errors: N/A\n\t Link 0: ECC-DL Errors: 2\n")
    assert e == {0: {0: {"replay": 0, "ecc_dl": 2}}}


def test_topo_gpu_numa_id_column_and_na_affinity():
    topo = parse_topo_matrix(fx("topo_h100_4gpu_gpu_numa_id.txt"))
    assert topo["columns"] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"]
    assert topo["cpu_affinity"]["GPU1"] == "4,12,20,28" and topo["numa_affinity"]["GPU3"] == "5"
    assert topo["gpu_nic"]["GPU2"]["mlx5_2"] == "PIX" and "NIC3" in topo["matrix"]
    small = parse_topo_matrix(fx("topo_2gpu_legend.txt"))
    assert small["numa_affinity"] == {"GPU0": None, "GPU1": None} and small["cpu_affinity"]["GPU0"] == "0-11"
    numa_only = parse_topo_matrix("        GPU0    GPU1    NUMA Affinity\nGPU0     X      NV4     1\n"
                                  "GPU1    NV4  X  1\n")
    assert numa_only["numa_affinity"] == {"GPU0": "1", "GPU1": "1"} and numa_only["cpu_affinity"] == {}


@pytest.mark.parametrize("qualifier", ["strange", "overdriven"])
def test_lspci_link_above_capability_qualifiers(qualifier):
    """pciutils 3.6/3.7 print "(strange)", later ones "(overdriven)" when the status exceeds the capability."""
    text = "LnkCap:\tPort #0, Speed 8GT/s, Width x8\nLnkSta:\tSpeed 8GT/s, Width x16 (%s)\n" % qualifier
    sta = parse_lspci_link(text)["sta"]
    assert (sta["width"], sta["width_downgraded"], sta["speed_downgraded"]) == (16, False, False)


def test_lspci_refuses_two_devices():
    two = fx("lspci_vv_gen4.txt") + "\n" + fx("lspci_vv_gen4.txt")
    with pytest.raises(GpuParseError, match="more than one device"):
        parse_lspci_link(two)


def test_proc_modules_permanent_is_not_a_user():
    mods = parse_proc_modules("nvidia 35274752 2 nvidia_uvm,[permanent], Live 0x0 (POE)\n"
                              "nvidia_peermem 16384 0 - Loading 0x0 (POE)\n")
    assert mods["nvidia"]["used_by"] == ["nvidia_uvm"]
    assert peermem_module(mods) is None  # still loading


def test_dcgmi_diag_4x_entity_layout_and_test_summary():
    diag = parse_dcgmi_diag(fx("dcgmi_diag_r2_4.x_entity_schema.json"))
    assert diag["version"] == "4.1.1"
    sw, pcie, nvb = diag["tests"]
    assert [(r["gpus"], r["status"], r["failing"]) for r in sw["results"]] == [("0", "pass", None),
                                                                              ("1", "fail", "1")]
    assert sw["results"][1]["warnings"][0].endswith("on GPU 1. (DCGM error 83)")
    assert [r["status"] for r in pcie["results"]] == ["pass", "skip"] and "24.45 GB/s" in pcie["results"][0]["info"][0]
    assert nvb["results"] == [{"gpus": "", "status": "warn", "failing": "", "info": [],
                               "warnings": ["nvbandwidth reported a problem that is tied to no GPU (DCGM error 1)"]}]


def test_dcgmi_diag_4x_summary_fail_not_tied_to_an_entity_is_kept():
    doc = json.loads(fx("dcgmi_diag_r2_4.x_entity_schema.json"))
    pcie = doc["DCGM Diagnostic"]["test_categories"][1]["tests"][0]
    pcie["test_summary"] = {"status": "Fail", "warnings": [{"warning": "host-side failure", "error_id": 7}]}
    cpu = {"entity_group": "CPU", "entity_group_id": 7, "entity_id": 0, "status": "Pass"}
    pcie["results"].append(cpu)
    diag = parse_dcgmi_diag(json.dumps(doc))
    results = diag["tests"][1]["results"]
    assert results[-1]["status"] == "fail" and results[-1]["warnings"] == ["host-side failure (DCGM error 7)"]
    assert results[2] == {"gpus": "", "entity": "CPU 0", "status": "pass", "failing": None, "warnings": [],
                          "info": []}


def test_dcgmi_diag_3_3_gpu_id_and_warnings_key():
    diag = parse_dcgmi_diag(fx("dcgmi_diag_r1_3.3_gpu_id.json"))
    assert diag["version"] == "3.3.9"
    by = {t["name"]: t["results"] for t in diag["tests"]}
    pr = by["Page Retirement/Row Remap"][0]
    assert (pr["gpus"], pr["failing"]) == ("3", "3")
    assert pr["warnings"] == ["Pending page retirements together with a DBE were detected on GPU 3. (DCGM error 83)"]
    env = by["Environment Variables"][0]
    assert (env["gpus"], env["status"], env["failing"]) == ("", "warn", "")  # gpu_id -1: about no GPU
    assert [r["gpus"] for r in by["PCIe"]] == ["0", "1"]


@pytest.mark.parametrize("text", [
    '{"DCGM Diagnostic": {"version": "4.2.3", "runtime_error": "Error: the diagnostic could not run"}}',
    '{\n  "DCGM GPU Diagnostic": {"runtime_error": "Unable to start the diagnostic", "version": "3.3.9"}\n}',
])
def test_dcgmi_diag_runtime_error_is_refused_with_dcgms_words(text):
    with pytest.raises(GpuParseError, match="reported an error.*(could not run|Unable to start)"):
        parse_dcgmi_diag(text)


def test_dcgmi_diag_host_engine_not_running():
    with pytest.raises(GpuParseError, match="tool reported an error"):
        parse_dcgmi_diag("Error: unable to establish a connection to the specified host engine.\n")


def test_smi_query_yes_no_fields_under_numeric_prefixes_and_lost_gpu_values():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.smi_parse import parse_nvidia_smi_query
    rows = parse_nvidia_smi_query("index, retired_pages.pending, power.management, power.draw [W]\n"
                                  "0, No, Enabled, 65.43 W\n1, Yes, [Not Supported], [GPU requires reset]\n")
    assert rows[0] == {"index": 0, "retired_pages.pending": "No", "power.management": "Enabled", "power.draw": 65.43}
    assert rows[1]["retired_pages.pending"] == "Yes" and rows[1]["power.draw"] is None
    assert rows[1]["power.management"] is None
