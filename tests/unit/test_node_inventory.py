"""Host inventory of a DGX (issue 39 item 2): module_utils/node/inventory_parse.py on real outputs and
module_utils/node/inventory_eval.py (host_cpu, host_memory, host_numa, host_swap, host_nvme, host_disk_space,
host_kernel; the BMC checks are in test_bmc_parse.py), and the catalogue's inventory facts.

Fixtures (tests/unit/fixtures/node/), where each comes from:
- lscpu__util_linux_tests_epyc_7451.txt: util-linux tests/expected/lscpu/lscpu-x86_64-epyc_7451 (the summary block,
  flat layout of util-linux < 2.37; 2 sockets, 8 NUMA nodes as a DGX A100's EPYC in NPS4).
- lscpu__xeon_gold_6430_capture.txt, lscpu_J__xeon_gold_6430_capture.txt, numactl_H__xeon_gold_6430_capture.txt: one
  terminal capture in a public GitHub file (the stored index's read_file id 62900042704: ``lscpu``,
  ``numactl --hardware``, ``lscpu --json`` on a 2-socket Xeon Gold 6430, util-linux 2.37 tree layout); the JSON is
  re-indented as libsmartcols prints it (3 spaces, ``},{``), values unchanged.
- meminfo__kernel_doc_proc_rst.txt: Linux Documentation/filesystems/proc.rst, the /proc/meminfo example.
- swaps__util_linux_libmount_tests.txt: util-linux tests/ts/libmount/files/swaps (tabs and spaces, ``\\040``).
- nvme_list_json__nvme_cli_1.16_issue_1786.txt: linux-nvme/nvme-cli#1786 (nvme-cli 1.16: Index, ProductName).
- nvme_list_json__nvme_cli_2.x_issue_2028_negative.txt: linux-nvme/nvme-cli#2028 (2.x, sizes printed negative).
- nvme_list_json__netdata_testdata_v2.3.txt, ..._v2.11_nested.txt: netdata/netdata
  src/go/plugin/go.d/collector/nvme/testdata/v2.3|v2.11/nvme-list.json (2.11: HostNQN / Subsystems / Controllers).
- smartctl_j__netdata_testdata_nvme1.txt: netdata/netdata src/go/plugin/go.d/collector/smartctl/testdata/type-nvme/
  device-nvme1.json (smartctl 7.3 -j -a on an NVMe drive).
- smartctl_j__composed_nvmeprint_critical_warning.txt: that file with critical_warning 4, media_errors 12, exit
  status 8 and smart_status as smartmontools src/nvmeprint.cpp print_critical_warning writes it (composed).
- df_P_B1__composed_coreutils_df_c_dgx.txt: composed from coreutils src/df.c (POSIX header "%ju-%s" -> "1-blocks",
  columns source size used avail Capacity target) with DGX OS's / and /raid.
"""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import inventory_eval as ev
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import inventory_parse as ip
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, contradiction

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "node")


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


# -- parsers on real outputs ------------------------------------------------------------------------------------

def test_lscpu_flat_text_epyc():
    assert ip.parse_lscpu(fx("lscpu__util_linux_tests_epyc_7451.txt")) == {
        "cpus": 96, "sockets": 2, "cores_per_socket": 24, "threads_per_core": 2, "numa_nodes": 8,
        "model_name": "AMD EPYC 7451 24-Core Processor", "vendor": "AuthenticAMD"}


def test_lscpu_tree_text_and_json_agree():
    text = ip.parse_lscpu(fx("lscpu__xeon_gold_6430_capture.txt"))
    assert text == ip.parse_lscpu(fx("lscpu_J__xeon_gold_6430_capture.txt"))
    assert (text["sockets"], text["cores_per_socket"], text["threads_per_core"], text["numa_nodes"]) == (2, 32, 1, 2)


def test_lscpu_flat_json_of_older_util_linux():
    doc = {"lscpu": [{"field": "CPU(s):", "data": "256"}, {"field": "Thread(s) per core:", "data": "2"},
                     {"field": "Core(s) per socket:", "data": "64"}, {"field": "Socket(s):", "data": "2"},
                     {"field": "NUMA node(s):", "data": "8"}]}
    v = ip.parse_lscpu(json.dumps(doc, indent=3) + "\n")
    assert (v["cpus"], v["sockets"], v["numa_nodes"], v["model_name"]) == (256, 2, 8, None)


@pytest.mark.parametrize("text, match", [
    ("", "Socket"), ("Architecture: x86_64\n", "no CPU"), ("garbage without colon\n", "expected 'Field: value'"),
    ('{"lscpu": [ {"field": "CPU(s):", "data": "8"}', "JSON"),
    ("CPU(s): 8\nThread(s) per core: 2\nCore(s) per socket: x\nSocket(s): 1\nNUMA node(s): 1\n", "number"),
])
def test_lscpu_refuses(text, match):
    with pytest.raises(ParseError, match=match):
        ip.parse_lscpu(text)


def test_lscpu_hybrid_cpu_types_are_refused():
    text = ("CPU(s): 20\nThread(s) per core: 1\nCore(s) per socket: 10\nSocket(s): 1\n"
            "Core(s) per socket: 8\nNUMA node(s): 1\n")
    with pytest.raises(ParseError, match="several CPU types"):
        ip.parse_lscpu(text)


def test_meminfo_kernel_example():
    assert ip.parse_meminfo(fx("meminfo__kernel_doc_proc_rst.txt")) == {
        "mem_total_kib": 32858820, "mem_available_kib": 27214312, "swap_total_kib": 0, "swap_free_kib": 0,
        "hardware_corrupted_kib": 0}


def test_swaps_tabs_spaces_and_escaped_names():
    rows = ip.parse_swaps(fx("swaps__util_linux_libmount_tests.txt"))
    assert [(r["name"], r["type"], r["size_kib"], r["priority"]) for r in rows] == [
        ("/dev/dm-2", "partition", 8151036, -2), ("/some/swapfile", "file", 111, 0),
        ("/some/swapfile2 (deleted)", "file", 111, 0)]
    assert ip.parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n") == []


def test_nvme_list_every_shape():
    v116 = ip.parse_nvme_list(fx("nvme_list_json__nvme_cli_1.16_issue_1786.txt"))
    assert v116 == [{"device": "nvme0n1", "controller": "nvme0", "nsid": 1, "serial": "22482U900075",
                     "model": "WUS6AA138FSP5EA", "firmware": "LF100010", "address": None,
                     "size_bytes": 3840755982336, "used_bytes": 3840755982336}]
    neg = ip.parse_nvme_list(fx("nvme_list_json__nvme_cli_2.x_issue_2028_negative.txt"))
    assert neg[0]["size_bytes"] is None and neg[0]["serial"] == "PHLJ13xxxxxxxxxxxxxxx"
    flat = ip.parse_nvme_list(fx("nvme_list_json__netdata_testdata_v2.3.txt"))
    nested = ip.parse_nvme_list(fx("nvme_list_json__netdata_testdata_v2.11_nested.txt"))
    assert [d["controller"] for d in flat] == ["nvme0", "nvme1"]
    assert [(d["controller"], d["address"], d["serial"]) for d in nested] == [
        ("nvme0", "0000:01:00.0", "XXX02YYY"), ("nvme1", "0000:81:00.0", "XXX00YYY"),
        ("nvme2", "0000:61:00.0", "7VS00KNX")]
    assert ip.parse_nvme_list('{"Devices": []}\n') == []


def test_nvme_drives_counts_a_drive_once_per_serial():
    rows = [{"device": "nvme0n1", "controller": "nvme0", "serial": "S1"},
            {"device": "nvme0n2", "controller": "nvme0", "serial": "S1"},
            {"device": "nvme1n1", "controller": "nvme1", "serial": "S2"}]
    drives = ip.nvme_drives(rows)
    assert [(d["controller"], d["namespaces"]) for d in drives] == [("nvme0", ["nvme0n1", "nvme0n2"]),
                                                                     ("nvme1", ["nvme1n1"])]


@pytest.mark.parametrize("text, match", [
    ('{"Devices": [{"Foo": 1}]}\n', "neither DevicePath"), ('{"Other": []}\n', "Devices"),
    ('{"Devices": [\n', "JSON"), ("", "empty"),
])
def test_nvme_list_refuses(text, match):
    with pytest.raises(ParseError, match=match):
        ip.parse_nvme_list(text)


def test_smartctl_healthy_and_failing():
    ok = ip.parse_smartctl_nvme(fx("smartctl_j__netdata_testdata_nvme1.txt"))
    assert (ok["passed"], ok["critical_warning"], ok["media_errors"], ok["exit_status"], ok["device"]) == (
        True, 0, 0, 0, "/dev/nvme1")
    bad = ip.parse_smartctl_nvme(fx("smartctl_j__composed_nvmeprint_critical_warning.txt"))
    assert (bad["passed"], bad["critical_warning"], bad["media_errors"]) == (False, 4, 12)
    assert bad["exit_meanings"] == ["SMART status check returned DISK FAILING"]


def test_smartctl_refuses_an_open_failure_with_its_message():
    doc = {"smartctl": {"version": [7, 4], "exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/nvme9 failed: No such device", "severity": "error"}]}}
    with pytest.raises(ParseError, match="/dev/nvme9 failed: No such device"):
        ip.parse_smartctl_nvme(json.dumps(doc) + "\n")
    assert ip.smartctl_exit_bits(2 | 64) == ["device open failed", "the device error log has records"]


def test_df_posix_bytes_and_block_header():
    rows = ip.parse_df(fx("df_P_B1__composed_coreutils_df_c_dgx.txt"))
    assert [(r["mount"], r["capacity_pct"]) for r in rows] == [("/", 8), ("/raid", 100), ("/run", 1)]
    kib = ip.parse_df("Filesystem     1024-blocks    Used Available Capacity Mounted on\n"
                      "/dev/sda1         1000      400       600      40% /mnt/with space\n")
    assert kib == [{"filesystem": "/dev/sda1", "size_bytes": 1024000, "used_bytes": 409600, "avail_bytes": 614400,
                    "capacity_pct": 40, "mount": "/mnt/with space"}]
    with pytest.raises(ParseError, match="POSIX header"):
        ip.parse_df("Filesystem Size Used Avail Use% Mounted on\n")


def test_uname_and_numactl():
    assert ip.parse_uname_r("5.15.0-1042-nvidia\n") == "5.15.0-1042-nvidia"
    for bad in ("", "5.15.0\n6.8.0\n", "Linux\n", "5.15.0-1042-nvidia"):
        with pytest.raises(ParseError):
            ip.parse_uname_r(bad)
    numa = ip.parse_numactl_hardware(fx("numactl_H__xeon_gold_6430_capture.txt"))
    assert numa == {"nodes": 2, "node_ids": [0, 1], "node_cpus": {0: 32, 1: 32},
                    "node_size_mb": {0: 257602, 1: 258038}, "node_free_mb": {0: 92728, 1: 38274}}
    with pytest.raises(ParseError, match="available: N nodes"):
        ip.parse_numactl_hardware("No NUMA available on this system\n")


# -- the parser contract on every fixture: cut inside a line or after a line -------------------------------------

CASES = [(ip.parse_lscpu, f) for f in ("lscpu__util_linux_tests_epyc_7451.txt", "lscpu__xeon_gold_6430_capture.txt",
                                        "lscpu_J__xeon_gold_6430_capture.txt")] + [
    (ip.parse_meminfo, "meminfo__kernel_doc_proc_rst.txt"), (ip.parse_swaps, "swaps__util_linux_libmount_tests.txt"),
    (ip.parse_numactl_hardware, "numactl_H__xeon_gold_6430_capture.txt"),
    (ip.parse_df, "df_P_B1__composed_coreutils_df_c_dgx.txt"),
    (ip.parse_smartctl_nvme, "smartctl_j__netdata_testdata_nvme1.txt")] + [
    (ip.parse_nvme_list, f) for f in sorted(os.listdir(FIX)) if f.startswith("nvme_list")]
# the outputs that are lists of independent rows: a cut after a row is a shorter list (no end marker)
ROW_LISTS = (ip.parse_swaps, ip.parse_df)


def _outcome(fn, text):
    try:
        return "ok", fn(text)
    except ParseError as exc:
        assert str(exc)
        return "error", None


@pytest.mark.parametrize("fn, name", CASES, ids=[n for _, n in CASES])
def test_cut_output_is_refused_or_the_full_value(fn, name):
    text = fx(name)
    full = fn(text)
    lines = text.splitlines(True)
    for k in range(len(lines)):  # cut after line k
        kind, value = _outcome(fn, "".join(lines[:k]))
        if kind == "ok" and value != full:
            assert fn in ROW_LISTS and value == full[:len(value)], (name, k, value)
    for cut in range(1, len(text) - 1, max(1, len(text) // 97)):  # cut inside the text
        if text[cut - 1] == "\n":
            continue
        kind, value = _outcome(fn, text[:cut])
        assert kind == "error" or value == full, (name, cut, value)


@pytest.mark.parametrize("fn", [ip.parse_lscpu, ip.parse_meminfo, ip.parse_swaps, ip.parse_nvme_list,
                                ip.parse_smartctl_nvme, ip.parse_df, ip.parse_uname_r, ip.parse_numactl_hardware])
@pytest.mark.parametrize("noise", ["", "\n", "\x00\x01binary\xff\n", "Segmentation fault\n", "{}\n", "[]\n"])
def test_noise_is_a_parse_error(fn, noise):
    with pytest.raises(ParseError):
        fn(noise)


# -- the catalogue -------------------------------------------------------------------------------------------------

def test_catalogue_has_the_inventory_facts_with_sources():
    for name, m in DGX_MODELS.items():
        assert m.numa_nodes and m.psus and m.dimms and len(m.dimms) == len(m.memory_gb), name
        assert "host_inventory" in m.sources and m.swap_guidance is None, name
    assert DGX_MODELS["dgxh100"].nvme_drives == (10,) and DGX_MODELS["dgxa100"].nvme_drives == (6, 10)
    assert DGX_MODELS["dgx1"].nvme_drives == () and DGX_MODELS["dgxa100"].numa_nodes == 8


# -- evaluation --------------------------------------------------------------------------------------------------

H100 = DGX_MODELS["dgxh100"]


def _h100_nvme(n=10):
    return [{"device": "nvme%dn1" % i, "controller": "nvme%d" % i, "serial": "S%d" % i, "model": "SAMSUNG MZ",
             "nsid": 1, "firmware": "F", "address": None, "size_bytes": 3840755982336, "used_bytes": 0}
            for i in range(n)]


def _healthy(kernel="5.15.0-1042-nvidia"):
    smart = ip.parse_smartctl_nvme(fx("smartctl_j__netdata_testdata_nvme1.txt"))
    return {"status": "ok", "dgx_model": "dgxh100", "errors": {}, "readings": {
        "lscpu": {"cpus": 224, "sockets": 2, "cores_per_socket": 56, "threads_per_core": 2, "numa_nodes": 2,
                  "model_name": "Intel(R) Xeon(R) Platinum 8480C", "vendor": "GenuineIntel"},
        # 2 TiB at the 98.4 % the 2-socket capture shows
        "meminfo": {"mem_total_kib": int(2048 * 1024 ** 2 * 0.984), "mem_available_kib": None,
                    "swap_total_kib": 0, "swap_free_kib": 0, "hardware_corrupted_kib": 0},
        "numactl": {"nodes": 2, "node_ids": [0, 1], "node_cpus": {0: 112, 1: 112},
                    "node_size_mb": {0: 1031000, 1: 1032000}, "node_free_mb": {}},
        "swaps": [], "nvme_list": _h100_nvme(), "smartctl": {"nvme%d" % i: smart for i in range(10)},
        "df": ip.parse_df(fx("df_P_B1__composed_coreutils_df_c_dgx.txt").replace(
            "28972394291200   208262615040     100%", "20972394291200  8208262615040      72%")),
        "uname_r": kernel,
        "sel": {"entries": [], "messages": ["SEL has no entries"]},
        "sdr": {"sensors": [{"name": "PSU1 Status", "number": 96, "status": "ok", "entity": "10.1",
                             "reading": None, "unit": None, "states": ["Presence detected"],
                             "text": "Presence detected"}], "messages": []}}}


def _by(results, check, node="dgx-1"):
    found = [r for r in results if r.check == check and r.host == node]
    assert len(found) == 1, (check, node, results)
    r = found[0]
    assert r.category == NODE_STATE and r.subject.node == node and contradiction(r) is None
    return r


def _eval(**nodes):
    return ev.evaluate({"nodes": nodes}, {})


def test_healthy_dgx_passes_every_check_and_reports_swap():
    res = _eval(**{"dgx-1": _healthy(), "dgx-2": _healthy()})
    for check in ("host_cpu", "host_memory", "host_numa", "host_nvme", "host_disk_space", "host_kernel", "bmc_sel",
                  "bmc_sensors"):
        assert _by(res, check).status == "pass", _by(res, check).to_dict()
    swap = _by(res, "host_swap")
    assert swap.status == "skipped" and swap.measured == 0 and "no NVIDIA guidance" in swap.reason


def test_memory_floor_between_healthy_and_one_dimm_gone():
    for m in DGX_MODELS.values():
        for gb, dimms in zip(m.memory_gb, m.dimms, strict=True):
            floor = ev.memory_floor_gib(gb, dimms)
            assert gb * 0.975 > floor > gb * (1 - 1.0 / dimms) * 0.99, (m.title, gb)


def test_missing_dimm_fails_host_memory_naming_the_numa_node():
    e = _healthy()
    e["readings"]["meminfo"]["mem_total_kib"] = int(2048 * 1024 ** 2 * 0.984 * 31 / 32)  # one 64 GB DIMM gone
    e["readings"]["numactl"]["node_size_mb"] = {0: 1031000, 1: 1032000 - 65536}
    r = _by(_eval(**{"dgx-1": e}), "host_memory")
    assert r.status == "fail" and r.measured < r.expected
    assert "DIMM" in r.cause and "NUMA node 1" in r.cause and len(r.problems) == 2


def test_hardware_corrupted_memory_fails():
    e = _healthy()
    e["readings"]["meminfo"]["hardware_corrupted_kib"] = 4
    r = _by(_eval(**{"dgx-1": e}), "host_memory")
    assert r.status == "fail" and "HardwareCorrupted" in r.cause


def test_cpu_and_numa_mismatch():
    e = _healthy()
    e["readings"]["lscpu"].update(threads_per_core=1, numa_nodes=4)
    e["readings"].pop("numactl")
    res = _eval(**{"dgx-1": e})
    cpu, numa = _by(res, "host_cpu"), _by(res, "host_numa")
    assert cpu.status == "fail" and "SMT" in cpu.cause and cpu.absolute
    assert numa.status == "fail" and numa.measured == 4 and numa.expected == 2


def test_nvme_missing_drive_and_critical_warning_name_the_drive():
    e = _healthy()
    e["readings"]["nvme_list"] = _h100_nvme(9)
    bad = ip.parse_smartctl_nvme(fx("smartctl_j__composed_nvmeprint_critical_warning.txt"))
    e["readings"]["smartctl"]["nvme3"] = bad
    r = _by(_eval(**{"dgx-1": e}), "host_nvme")
    assert r.status == "fail" and r.measured == 9 and r.expected == 10
    assert "9 NVMe drive(s)" in r.cause and "/dev/nvme3" in r.cause and "critical warning 0x04" in r.cause
    assert "12 media and data integrity errors" in r.cause
    assert {p.subject.path for p in r.problems} == {None, "/dev/nvme3"}


def test_nvme_without_smartctl_is_skipped_not_passed():
    e = _healthy()
    e["readings"]["smartctl"] = None
    e["errors"]["smartctl"] = "smartctl: command not found"
    r = _by(_eval(**{"dgx-1": e}), "host_nvme")
    assert r.status == "skipped" and "command not found" in r.reason


def test_disk_space_thresholds_are_data_and_raid_must_be_mounted():
    e = _healthy()
    e["readings"]["df"] = ip.parse_df(fx("df_P_B1__composed_coreutils_df_c_dgx.txt"))  # /raid 0.7 % free
    r = _by(_eval(**{"dgx-1": e}), "host_disk_space")
    assert r.status == "fail" and "/raid has 0.7 % free" in r.cause
    exp = {"node": {"raid_min_free_pct": {"value": 0.5, "source": "site runbook"}}}
    r2 = _by(ev.evaluate({"nodes": {"dgx-1": e}}, exp), "host_disk_space")
    assert r2.status == "pass" and "site runbook" in r2.source
    e["readings"]["df"] = [row for row in e["readings"]["df"] if row["mount"] != "/raid"]
    r3 = _by(_eval(**{"dgx-1": e}), "host_disk_space")
    assert r3.status == "fail" and "/raid is not mounted" in r3.cause


def test_kernel_odd_node_is_named():
    res = _eval(**{"dgx-1": _healthy(), "dgx-2": _healthy(), "dgx-3": _healthy("5.15.0-1029-nvidia")})
    assert _by(res, "host_kernel", "dgx-1").status == "pass"
    odd = _by(res, "host_kernel", "dgx-3")
    assert odd.status == "fail" and "5.15.0-1029-nvidia" in odd.cause and "5.15.0-1042-nvidia" in odd.cause


def test_swap_checked_when_the_pod_sets_a_limit():
    e = _healthy()
    e["readings"]["swaps"] = ip.parse_swaps(fx("swaps__util_linux_libmount_tests.txt"))
    r = _by(ev.evaluate({"nodes": {"dgx-1": e}}, {"node": {"swap_max_gb": {"value": 0, "source": "RA"}}}),
            "host_swap")
    assert r.status == "fail" and "swapoff" in r.cause and r.source == "RA"


def test_missing_readings_are_skipped_with_the_reason_and_unreachable_is_no_result():
    e = _healthy()
    for k in ("lscpu", "meminfo", "df", "sel", "sdr"):
        e["readings"].pop(k)
    e["errors"] = {"lscpu": "lscpu: not found"}
    res = _eval(**{"dgx-1": e, "dgx-9": {"status": "unreachable"}})
    assert _by(res, "host_cpu").status == "skipped" and "lscpu: not found" in _by(res, "host_cpu").reason
    for check in ("host_memory", "host_disk_space", "bmc_sel", "bmc_sensors"):
        assert _by(res, check).status == "skipped", check
    lost = [r for r in res if r.host == "dgx-9"]
    assert [(r.check, r.status, r.unreachable) for r in lost] == [("host_inventory", "error", True)]


def test_unknown_model_is_an_error():
    e = _healthy()
    e["dgx_model"] = "dgx-unknown"
    res = _eval(**{"dgx-1": e})
    assert [(r.check, r.status) for r in res if r.host == "dgx-1" and r.check != "host_kernel"] == [
        ("host_inventory", "error")]
