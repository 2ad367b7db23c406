"""Kernel-log events of a DGX (issue 39 item 1): the Xid catalogue (catalog/xid.py), the parser
(node/kernel_log.py) on real dmesg/journal outputs and the evaluator (node/kernel_eval.py).

Fixtures (tests/unit/fixtures/node/kernel_*, sources in that folder's README.md) are real lines from public
threads and the health tools' docs; the few composed lines below say which format string they follow."""
from __future__ import annotations

import os
import re
from datetime import datetime, UTC

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog import xid as xcat
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import kernel_eval as ke
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import bus_id, in_window, parse_kernel_log
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, CATEGORIES

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "node")
FIXTURES = sorted(f for f in os.listdir(FIX) if f.startswith("kernel_") and f.endswith(".txt"))


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def kinds(parsed, kind):
    return [e for e in parsed["events"] if e["kind"] == kind]


def by_check(results, check):
    return [r for r in results if r.check == check]


# --------------------------------------------------------------------------- catalogue


def test_catalogue_covers_the_xids_real_pods_fail_on():
    for n in (13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 121, 140, 143,
              *range(144, 151)):
        info = xcat.xid_info(n)
        assert info is not None, n
        assert info.severity in xcat.SEVERITIES and info.action in xcat.ACTIONS and info.source
    assert xcat.xid_info(79).severity == xcat.CRITICAL and xcat.xid_info(79).action == "RESTART_BM"
    assert xcat.xid_info(48).action == "WORKFLOW_XID_48"
    assert xcat.xid_info(13).severity == xcat.APPLICATION
    assert all(xcat.xid_info(n).nvlink for n in (74, *range(144, 151)))
    assert xcat.xid_info(9999) is None and xcat.sxid_info(20034).action == "RESET_GPU"


def test_benign_list_is_data_with_sources():
    assert {b.xid for b in xcat.BENIGN} >= {43, 45}
    assert all(b.source and b.why for b in xcat.BENIGN)


# --------------------------------------------------------------------------- bus ids


@pytest.mark.parametrize("text", ["00000000:07:00.0", "0000:07:00.0", "PCI:0000:07:00", "07:00.0", "0000:07:00"])
def test_bus_ids_compare_across_tools(text):
    assert bus_id(text) == "0000:07:00.0"


def test_bus_id_keeps_function_and_refuses_junk():
    assert bus_id("0000:0C:00.1") == "0000:0c:00.1"
    assert bus_id("mlx5_0") is None and bus_id("123456789:00:00.0") is None


# --------------------------------------------------------------------------- parser: every format


def test_dmesg_monotonic_xid79_uuid_and_sxids_placed_with_boot_time():
    p = parse_kernel_log(fx("kernel_dmesg__gpud_sxid_readme_xid79_sxid20034.txt"), boot_time=1_000_000.0)
    assert p["formats"] == ["dmesg"]
    [x] = kinds(p, "xid")
    assert (x["bus_id"], x["xid"], x["pid"], x["process"]) == ("0000:91:00.0", 79, None, None)
    assert x["text"] == "GPU has fallen off the bus." and x["time"] == pytest.approx(1_000_000.0 + 6781741.548779)
    assert kinds(p, "gpu_uuid")[0]["uuid"] == "GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b"
    assert len(kinds(p, "gpu_lost")) == 1
    sx = kinds(p, "sxid")  # the Data and Severity lines belong to the SXid before them
    assert [(e["device"], e["sxid"], e["fatal"], e["link"]) for e in sx] == [
        ("nvswitch1", 20034, True, 48), ("nvswitch0", 20034, True, 63), ("nvswitch2", 20034, True, 37),
        ("nvswitch0", 20034, True, 62)]


def test_dmesg_ctime_xid13_and_109_with_pid_and_name():
    p = parse_kernel_log(fx("kernel_dmesg_ctime__gpud_xid_readme.txt"))
    xs = kinds(p, "xid")
    assert [e["xid"] for e in xs] == [13, 13, 13, 109] and p["unrecognised"] == 1
    assert xs[3]["pid"] == "1797828" and xs[3]["process"] == "pt_main_thread"
    assert xs[3]["time"] == datetime(2024, 8, 30, 11, 43, 14, tzinfo=UTC).timestamp()


def test_dmesg_iso_with_facility_prefix_data_line_is_not_an_event():
    p = parse_kernel_log(fx("kernel_dmesg_iso_decode__gpud_338_sxid_data.txt"))
    assert p["formats"] == ["dmesg-iso"] and p["events"] == [] and p["unrecognised"] == 0


def test_journal_short_needs_a_year_and_skips_other_processes():
    text = fx("kernel_journal_short__gpud_1209_mlx5_ib_port.txt")
    p = parse_kernel_log(text, year=2026)
    ports = kinds(p, "ib_port")
    assert [(e["ibdev"], e["port"], e["state"]) for e in ports] == [("mlx5_5", 1, "INIT"), ("mlx5_5", 1, "ACTIVE")]
    assert ports[0]["time"] == datetime(2026, 2, 14, 5, 3, 41, tzinfo=UTC).timestamp()
    assert p["kernel_lines"] == 4 and p["unrecognised"] == 7  # 5 systemd lines + 2 free-text kernel lines
    assert parse_kernel_log(text)["events"][0]["time"] is None  # no year: not placed, not guessed


def test_journal_short_iso_and_precise():
    # journalctl -o short-iso / short-iso-precise: the stamp journalctl prints, on a real line of cubecos#733
    line = "mlx5_core 0000:01:00.1 eth1: Link up"
    for stamp, expect in (("2025-03-27T15:37:34+0000", 1743089854.0),
                          ("2025-03-27T15:37:34.250000+00:00", 1743089854.25)):
        p = parse_kernel_log("%s cc1 kernel: %s\n" % (stamp, line))
        assert p["formats"] == ["journal-iso"] and p["events"][0]["time"] == pytest.approx(expect)


def test_syslog_with_boot_stamp_after_kernel():
    p = parse_kernel_log(fx("kernel_syslog__pop_os_3363_aer_correctable.txt"), year=2025)
    aer = kinds(p, "aer")
    assert [(e["severity"], e["type"], e["agent"], e["errors"]) for e in aer] == [
        ("corrected", "Data Link Layer", "Transmitter ID", ["Timeout"]),
        ("corrected", "Data Link Layer", "Receiver ID", ["BadTLP"])]
    assert aer[0]["mono"] == pytest.approx(68183.61581) and aer[0]["status"] == 0x1000
    assert kinds(p, "aer_source")[0]["source"] == "0000:00:00.0"


def test_aer_5x_format_without_stamps_names_the_device():
    p = parse_kernel_log(fx("kernel_dmesg_notime__pop_os_751_aer_corrected_nvme.txt"))
    nvme = [e for e in kinds(p, "aer") if e["driver"] == "nvme"]
    assert nvme[0]["bus_id"] == "0000:03:00.0" and nvme[0]["vendor_device"] == "144d:a808"
    assert kinds(p, "aer_source")[0] == {**kinds(p, "aer_source")[0], "source": "0000:03:00.0", "multiple": True}


def test_aer_pre_4_19_id_format():
    p = parse_kernel_log(fx("kernel_dmesg__raspberry_pi_pcie_64_aer_id_format.txt"))
    assert len(kinds(p, "aer")) == 3 and kinds(p, "aer")[0]["errors"] == ["Receiver Error"]
    assert kinds(p, "aer_source")[0]["source"] == "0000:00:1d.0"  # id=00e8: bus 0, devfn 0xe8


def test_uncorrected_fatal_aer_composed_from_aer_c():
    # composed from aer.c's format strings (6.x severity words) for a GPU's bus id; no public capture had one
    text = ("[  10.1] pcieport 0000:00:01.0: AER: Uncorrectable (Fatal) error message received from 0000:07:00.0\n"
            "[  10.2] nvidia 0000:07:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction "
            "Layer, (Requester ID)\n"
            "[  10.3] nvidia 0000:07:00.0: AER:   device [10de:2330] error status/mask=00004000/00000000\n"
            "[  10.4] nvidia 0000:07:00.0: AER:    [14] CmpltTO                (First)\n")
    [ev] = kinds(parse_kernel_log(text), "aer")
    assert (ev["severity"], ev["errors"], ev["first"]) == ("fatal", ["CmpltTO"], "CmpltTO")


def test_pcie_limited_lines():
    p = parse_kernel_log(fx("kernel_dmesg__tt_cpu_scheduler_23_pcie_limited.txt"))
    ev = kinds(p, "pcie_limited")[0]
    assert (ev["width"], ev["capable_width"], ev["speed"], ev["limited_at"]) == (4, 16, "16.0 GT/s PCIe",
                                                                                 "0000:00:01.2")
    x1 = kinds(parse_kernel_log(fx("kernel_dmesg__raspberry_pi_pcie_712_pcie_limited_x1.txt")), "pcie_limited")
    assert x1[0]["width"] == 1 and x1[0]["available_gbps"] == 7.876


def test_nvlink5_xids_fatal_word_and_link():
    xs = kinds(parse_kernel_log(fx("kernel_kmsg__gpud_1174_1160_nvlink5_xid.txt")), "xid")
    assert [(e["xid"], e.get("fatal"), e.get("link")) for e in xs] == [
        (149, True, -1), (149, True, 0), (145, False, 13), (94, None, None), (144, False, 0)]
    assert xs[0]["bus_id"] == "0019:01:00.0"


def test_xid45_caused_by_previous_xid():
    xs = kinds(parse_kernel_log(fx("kernel_grep__open_gpu_kernel_modules_1150_xid45_caused_by.txt")), "xid")
    assert {e["caused_by"] for e in xs} == {145, 149} and xs[0]["text"] == "Ch 00000001"


def test_multiline_fallen_off_without_xid():
    p = parse_kernel_log(fx("kernel_dmesg__nvsentinel_155_fallen_off_no_xid.txt"), boot_time=0.0)
    [lost] = kinds(p, "gpu_lost")
    assert lost["bus_id"] == "0000:b3:00.0" and lost["mono"] == pytest.approx(1843.308145)


def test_xid_forms_from_the_driver_source():
    # kernel_rc.c krcReportXid: MIG attribution and no process; the oldest driver form without "PCI:"
    text = ("NVRM: Xid (PCI:0000:07:00 GPU-I:02 GPU-CI:01): 94, pid=4242, name=python3, Contained ECC error\n"
            "NVRM: Xid (PCI:0000:07:00): 79, GPU has fallen off the bus.\n"
            "NVRM: Xid (0000:03:00): 14, Channel 00000001\n")
    xs = kinds(parse_kernel_log(text), "xid")
    assert xs[0]["mig"] == "GPU-I:02 GPU-CI:01" and xs[0]["pid"] == "4242"
    assert xs[1]["pid"] is None and xs[1]["text"] == "GPU has fallen off the bus."
    assert xs[2]["bus_id"] == "0000:03:00.0"


def test_mlx5_health_and_module_events_from_source_formats():
    # composed from mlx5 health.c (mlx5_core_err: "func:line:(pid N): ") and events.c format strings
    text = ("[ 5.0] mlx5_core 0000:0c:00.0: poll_health:825:(pid 0): device's health compromised - reached miss "
            "count\n"
            "[ 6.0] mlx5_core 0000:0c:00.0: Port module event: module 0, Cable unplugged\n"
            "[ 7.0] mlx5_core 0000:0c:00.0: Port module event[error]: module 0, Cable error, Bad or shorted "
            "cable/module\n")
    p = parse_kernel_log(text)
    assert kinds(p, "mlx5_health")[0]["function"] == "poll_health"
    assert [(e["status"], e["error"]) for e in kinds(p, "module")] == [
        ("Cable unplugged", None), ("Cable error", "Bad or shorted cable/module")]


# --------------------------------------------------------------------------- parser: refusals


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_parses_and_a_cut_last_line_is_refused(name):
    text = fx(name)
    parse_kernel_log(text, year=2025)
    with pytest.raises(ParseError, match="no newline"):
        parse_kernel_log(text.rstrip("\n")[:-3])


@pytest.mark.parametrize("line", [
    "[ 1.0] NVRM: Xid (PCI:0000:07:00): seventy-nine, GPU has fallen off the bus.",
    "[ 1.0] NVRM: Xid (PCI:0000:07",
    "[ 1.0] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): Fatal",
    "[ 1.0] nvidia 0000:07:00.0: AER: PCIe Bus Error: severity=Sort of bad, type=Physical Layer, (Receiver ID)",
    "[ 1.0] nvidia 0000:07:00.0: AER: PCIe Bus Error: severity=Corrected",
    "[ 1.0] pci 0000:07:00.0: 63.012 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x4 link at",
])
def test_garbled_event_lines_are_refused_naming_the_line(line):
    with pytest.raises(ParseError) as e:
        parse_kernel_log("[ 0.5] Linux version 6.8.0\n" + line + "\n")
    assert "line 2" in str(e.value)


def test_empty_log_and_free_text():
    assert parse_kernel_log("")["events"] == []
    p = parse_kernel_log("-- Boot 0123456789abcdef --\n[ 0.0] Linux version 6.8.0-1017-nvidia\n\xff\x00 noise\n")
    assert p["events"] == [] and p["unrecognised"] == 2


@pytest.mark.parametrize("noise", ["[", "[]", "[ 1.2", "<3>", "kern  :err   : ", "Feb 30 25:61:61 h kernel: x",
                                   "2024-13-45T99:99:99+0000 h kernel: NVRM: GPU at PCI:zz", "\x00\x01\x02"])
def test_noise_is_a_value_or_parse_error(noise):
    try:
        parse_kernel_log(noise + "\n")
    except ParseError:
        pass


def test_window_and_unplaced_events():
    p = parse_kernel_log(fx("kernel_dmesg_ctime__gpud_xid_readme.txt") + "[  1.0] NVRM: Xid (PCI:0000:cb:00): 79, x\n")
    t109 = datetime(2024, 8, 30, 11, 43, 14, tzinfo=UTC).timestamp()
    inside = in_window(p["events"], since=t109)
    assert [e["xid"] for e in inside] == [109, 79]  # the [ secs] one has no boot time: kept
    assert [e["xid"] for e in in_window(p["events"], since=t109, keep_unplaced=False)] == [109]
    assert [e["xid"] for e in in_window(p["events"], until=t109 - 1, keep_unplaced=False)] == [13, 13, 13]


# --------------------------------------------------------------------------- evaluator

GPUS = [{"index": i, "bus_id": "00000000:%02X:00.0" % b} for i, b in enumerate((0x91, 0xCB, 0x07, 0x9B))]
HCAS = [{"bus_id": "0000:ab:00.0", "hca": "mlx5_5", "netdev": "ibp171s0"},
        {"bus_id": "0000:01:00.1", "hca": "mlx5_1", "netdev": "eth1"}]


def evaluate(text, **kw):
    return ke.evaluate_node("dgx01", parse_kernel_log(text, year=2025), GPUS, HCAS, **kw)


def assert_shape(results):
    for r in results:
        assert r.subject is not None and r.subject.node == "dgx01" and r.category in CATEGORIES
        if r.status == "fail":
            assert r.cause and "dgx01" in r.cause and r.problems


def test_xid79_fails_on_the_mapped_gpu_with_the_action():
    results = evaluate(fx("kernel_dmesg__gpud_sxid_readme_xid79_sxid20034.txt"))
    assert_shape(results)
    [x] = by_check(results, "kernel_xid")
    assert x.status == "fail" and x.subject.gpu == 0 and x.category == NODE_STATE
    assert "dgx01 GPU 0 (0000:91:00.0): Xid 79: GPU has fallen off the bus, once" in x.cause
    assert "drain and reboot the node" in x.cause and x.details["severity"] == "critical"
    nv = by_check(results, "kernel_nvlink")
    assert len(nv) == 3 and all(r.status == "fail" and "SXid 20034" in r.cause for r in nv)


def test_lost_gpu_without_xid_is_xid79():
    [x] = by_check(evaluate(fx("kernel_dmesg__nvsentinel_155_fallen_off_no_xid.txt")), "kernel_xid")
    assert x.status == "fail" and x.details["xid"] == 79 and x.subject.gpu is None and "0000:b3:00.0" in x.cause


def test_application_xids_pass_and_are_listed_critical_109_fails():
    results = evaluate(fx("kernel_dmesg_ctime__gpud_xid_readme.txt"))
    [x] = by_check(results, "kernel_xid")
    assert x.status == "fail" and x.details["xid"] == 109 and x.subject.gpu == 1
    only13 = "".join(fx("kernel_dmesg_ctime__gpud_xid_readme.txt").splitlines(True)[:4])
    [ok] = by_check(evaluate(only13), "kernel_xid")
    assert ok.status == "pass" and "Xid 13: Graphics Engine Exception" in ok.details["seen"][0]


def test_benign_xid45_passes():
    [x] = by_check(evaluate(fx("kernel_grep__open_gpu_kernel_modules_1150_xid45_caused_by.txt")), "kernel_xid")
    assert x.status == "pass" and all("(info)" in s for s in x.details["seen"])


def test_double_bit_ecc_and_row_remap():
    [x] = by_check(evaluate(fx("kernel_grep__gpu_operator_1146_xid48.txt")), "kernel_xid")
    assert x.status == "fail" and x.subject.gpu == 2 and "Xid 48: Double Bit ECC Error" in x.cause
    [r] = by_check(evaluate(fx("kernel_grep__ml_engineering_xid63.txt")), "kernel_xid")
    assert r.status == "pass"  # 63 is IGNORE in NVIDIA's catalog: listed, not failed


def test_unknown_xid_is_reported_as_not_in_the_catalogue():
    [x] = by_check(evaluate("NVRM: Xid (PCI:0000:07:00): 250, pid=1, name=a, something new\n"), "kernel_xid")
    assert x.status == "fail" and "Xid 250, not in the catalogue" in x.cause


def test_nvlink_xids_fatal_fail_nonfatal_listed():
    results = evaluate(fx("kernel_kmsg__gpud_1174_1160_nvlink5_xid.txt"))
    nv = by_check(results, "kernel_nvlink")
    assert {r.details["xid"] for r in nv if r.status == "fail"} == {149}
    [x94] = by_check(results, "kernel_xid")
    assert x94.status == "fail" and x94.subject.gpu == 3 and "restart the application" in x94.cause
    [x74] = by_check(evaluate(fx("kernel_dmesg__nvsentinel_xid74_design.txt")), "kernel_nvlink")
    assert x74.status == "fail" and "on link 14" in x74.cause


def test_aer_corrected_threshold_and_uncorrected():
    text = fx("kernel_syslog__pop_os_3363_aer_correctable.txt")
    [ok] = by_check(evaluate(text), "kernel_aer")
    assert ok.status == "pass" and ok.measured == 2
    [bad] = by_check(evaluate(text, thresholds={"kernel_aer_corrected_max": 1}), "kernel_aer")
    assert bad.status == "fail" and "2 corrected PCIe AER errors (BadTLP, Timeout)" in bad.cause
    fatal = ("nvidia 0000:07:00.0: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, "
             "(Requester ID)\nnvidia 0000:07:00.0: AER:    [14] CmpltTO\n")
    [f] = by_check(evaluate(fatal), "kernel_aer")
    assert f.status == "fail" and f.subject.gpu == 2 and "uncorrected non-fatal" in f.cause


def test_aer_source_without_details_counts_for_the_source_device():
    text = "[ 1.0] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:ab:00.0\n"
    [f] = by_check(evaluate(text), "kernel_aer")
    assert f.status == "fail" and f.subject.hca == "mlx5_5" and f.subject.nic == "ibp171s0"


def test_pcie_width_limit_fails_speed_limit_passes():
    [w] = by_check(evaluate(fx("kernel_dmesg__raspberry_pi_pcie_712_pcie_limited_x1.txt")), "kernel_pcie_limited")
    assert w.status == "fail" and w.measured == "x1" and w.expected == "x16"
    speed = ("[ 1.0] pci 0000:07:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at "
             "0000:00:01.0 (capable of 504.032 Gb/s with 32.0 GT/s PCIe x16 link)\n")
    [s] = by_check(evaluate(speed), "kernel_pcie_limited")
    assert s.status == "pass" and s.details["speed_only"]


def test_link_up_at_bring_up_is_not_a_flap_down_after_up_is():
    [ok] = by_check(evaluate(fx("kernel_journal_short__cubecos_733_mlx5_link_up.txt")), "kernel_link_flap")
    assert ok.status == "pass"
    ib = fx("kernel_journal_short__gpud_1209_mlx5_ib_port.txt")
    assert by_check(evaluate(ib), "kernel_link_flap")[0].status == "pass"
    # ib_core's "Port: %d Link %s" after the real ACTIVE line: a flap (down then up)
    flap = ib + ("Feb 14 06:00:00 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n"
                 "Feb 14 06:00:05 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n")
    [f] = by_check(evaluate(flap), "kernel_link_flap")
    assert f.status == "fail" and f.subject.hca == "mlx5_5" and "went down 1 time(s) and came back" in f.cause
    down = "mlx5_core 0000:01:00.1 eth1: Link up\nmlx5_core 0000:01:00.1 eth1: Link down\n"
    [d] = by_check(evaluate(down), "kernel_link_flap")
    assert d.status == "fail" and d.details["stayed_down"] and d.subject.nic == "eth1"


def test_flap_outside_the_window_is_not_counted():
    t = datetime(2025, 2, 14, 7, 0, tzinfo=UTC).timestamp()
    flap = fx("kernel_journal_short__gpud_1209_mlx5_ib_port.txt") + (
        "Feb 14 06:00:00 h kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n"
        "Feb 14 06:00:05 h kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n")
    assert by_check(evaluate(flap, since=t), "kernel_link_flap")[0].status == "pass"


def test_hca_health_and_module_error():
    text = ("mlx5_core 0000:ab:00.0: poll_health:825:(pid 0): device's health compromised - reached miss count\n"
            "mlx5_core 0000:ab:00.0: Port module event[error]: module 0, Cable error, High Temperature\n")
    results = evaluate(text)
    assert_shape(results)
    [h] = by_check(results, "kernel_hca_health")
    assert h.status == "fail" and h.subject.hca == "mlx5_5"
    [m] = by_check(results, "kernel_link_flap")
    assert m.status == "fail" and "port module error" in m.cause


def test_nothing_found_is_one_pass_per_check():
    results = evaluate("[ 0.0] Linux version 6.8.0\n")
    assert sorted(r.check for r in results) == sorted(["kernel_xid", "kernel_nvlink", "kernel_aer",
                                                       "kernel_pcie_limited", "kernel_link_flap",
                                                       "kernel_hca_health"])
    assert all(r.status == "pass" for r in results)
    assert_shape(results)


def test_stage_evaluate_reads_expectations_and_reports_a_missing_log():
    parsed = parse_kernel_log(fx("kernel_syslog__pop_os_3363_aer_correctable.txt"), year=2025)
    recorded = {"nodes": {"dgx01": {"status": "ok", "kernel_log": parsed, "gpus": GPUS},
                          "dgx02": {"status": "unreachable", "reason": "ssh timeout"}}}
    exp = {"node": {"kernel_aer_corrected_max": {"value": 1, "source": "RA profile"}}}
    results = ke.evaluate(recorded, exp)
    [aer] = [r for r in results if r.check == "kernel_aer"]
    assert aer.status == "fail" and "RA profile" in aer.source
    [err] = [r for r in results if r.host == "dgx02"]
    assert err.status == "error" and "ssh timeout" in err.reason


def test_gpu_map_accepts_nvidia_smi_bus_ids():
    assert ke.gpu_map(GPUS)["0000:91:00.0"] == 0
    assert ke.hca_map({"0000:AB:00.0": {"hca": "mlx5_5"}}) == {"0000:ab:00.0": {"hca": "mlx5_5", "netdev": None}}


def test_causes_name_times():
    [x] = by_check(evaluate(fx("kernel_dmesg_ctime__gpud_xid_readme.txt")), "kernel_xid")
    assert re.search(r"once, at 2024-08-30T11:43:14Z", x.cause)
