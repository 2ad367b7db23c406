"""The BMC of a DGX through ipmitool (issue 39 item 3): module_utils/node/bmc_parse.py on real outputs and the
bmc_sel / bmc_sensors checks of module_utils/node/inventory_eval.py.

Fixtures (tests/unit/fixtures/node/ipmitool_*), where each comes from (the formats: ipmitool lib/ipmi_sel.c
ipmi_sel_print_std_entry, lib/ipmi_sdr.c ipmi_sdr_print_sensor_fc, lib/ipmi_sensor.c dump_sensor_fc_thredshold,
include/ipmitool/ipmi_sel.h event texts, github.com/ipmitool/ipmitool at be11d94):
- ipmitool_sel_elist__sos_issue_2015.txt: sosreport/sos#2015 (sel elist; the fourth line of the excerpt is cut
  in the issue and left out).
- ipmitool_sel_list__ipmitool_pr_346_preinit.txt, ipmitool_sel_elist__ipmitool_pr_346_threshold.txt: ipmitool/ipmitool
  PR #346 (Pre-Init entries; a 1.8.19 threshold entry with "06:12:15 PM CST" and "Reading 52 > Threshold 53").
- ipmitool_sel_list__facebook_openbmc_issue_273.txt: facebook/openbmc#273 (machine check exceptions, empty events).
- ipmitool_sel_elist__op_build_issue_594.txt: open-power/op-build#594 (firmware progress, hex record ids a..c).
- ipmitool_sel_elist__composed_ipmi_sel_c_dgx_faults.txt: composed from ipmi_sel.c's format and ipmi_sel.h's texts
  (PSU failure / AC lost, uncorrectable ECC with the "CPU n DIMM m" column, a deasserted failure), 1.8.19 %x dates.
- ipmitool_sdr_elist__ipmi_exporter_issue_54_hpe.txt: prometheus-community/ipmi_exporter#54 (HPE, first 14 rows).
- ipmitool_sdr_elist__dell_idrac_fan_controller_issue_36.txt: tigerblue77/Dell_iDRAC_fan_controller_Docker#36.
- ipmitool_sdr_elist__composed_ipmi_sdr_c_psu_fan.txt: composed from ipmi_sdr.c's elist format (a PSU with
  "Presence detected, Failure detected", fans in cr / lcr).
- ipmitool_sensor__librenms_issue_18274_supermicro.txt: librenms/librenms#18274 (Supermicro, with an "na" row).
- ipmitool_sensor__openbmc_issues_3743_and_ha_ipmi_33.txt: openbmc/openbmc#3743 (the Ambient_Temp row reading 46
  over its 40 upper critical while ipmitool says ok) and ateodorescu/home-assistant-ipmi#33 (discrete rows).
- ipmitool_sensor__luckylinux_fan_control_issue_1.txt: luckylinux/supermicro-fan-control#1 (a fan in "nc").
"""
from __future__ import annotations

import os

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import bmc_parse as bp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import inventory_eval as ev
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, contradiction

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "node")


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def fixtures(prefix):
    return sorted(f for f in os.listdir(FIX) if f.startswith(prefix))


# -- sel elist ---------------------------------------------------------------------------------------------------

def test_sel_elist_dated_entries():
    sel = bp.parse_sel_elist(fx("ipmitool_sel_elist__sos_issue_2015.txt"))
    e = sel["entries"][0]
    assert (e["id"], e["timestamp"], e["sensor_type"], e["sensor"], e["event"], e["asserted"]) == (
        0x30, "2019-11-15T18:50:40", "Power Unit", "Pwr Unit Status", "Power off/down", True)
    assert sel["entries"][1]["asserted"] is False
    assert sel["entries"][2]["sensor_type"] == "Management Subsys Health"


def test_sel_pre_init_and_twelve_hour_clock_with_zone():
    pre = bp.parse_sel_elist(fx("ipmitool_sel_list__ipmitool_pr_346_preinit.txt"))["entries"]
    assert [(e["id"], e["pre_init_seconds"], e["timestamp"], e["event"]) for e in pre[:2]] == [
        (1, 116, None, ""), (2, 117, None, "")]
    th = bp.parse_sel_elist(fx("ipmitool_sel_elist__ipmitool_pr_346_threshold.txt"))["entries"][0]
    assert (th["id"], th["timestamp"], th["tz"], th["sensor"], th["extra"]) == (
        0x1b5b, "2022-05-27T18:12:15", "CST", "PSU1_Inlet_Temp", "Reading 52 > Threshold 53 degrees C")


def test_sel_hex_ids_and_empty_event_text():
    ids = [e["id"] for e in bp.parse_sel_elist(fx("ipmitool_sel_elist__op_build_issue_594.txt"))["entries"]]
    assert ids == list(range(1, 13))
    mce = bp.parse_sel_elist(fx("ipmitool_sel_list__facebook_openbmc_issue_273.txt"))["entries"]
    assert mce[0]["sensor"] == "#0x40" and mce[-1]["id"] == 0x80 and mce[-1]["event"] == ""


def test_sel_two_digit_year_dimm_column_and_messages():
    sel = bp.parse_sel_elist("SEL has no entries\n")
    assert sel == {"entries": [], "messages": ["SEL has no entries"]}
    faults = bp.parse_sel_elist(fx("ipmitool_sel_elist__composed_ipmi_sel_c_dgx_faults.txt"))["entries"]
    assert faults[0]["timestamp"] == "2024-03-02T09:12:44" and faults[0]["tz"] == "UTC"
    assert faults[3]["extra"] == "CPU 1 DIMM 3" and faults[3]["sensor"] == "#0x87"
    panic = bp.parse_sel_elist("  2a | Linux kernel panic: Fatal excep\n")["entries"][0]
    assert panic["kind"] == "panic" and panic["id"] == 0x2a
    oem = bp.parse_sel_elist("  2b | 03/02/24 | 09:12:44 | OEM record c1 | 000000 | 112233445566\n")["entries"][0]
    assert oem["kind"] == "oem" and oem["event"] == "OEM record c1"


@pytest.mark.parametrize("text, match", [
    ("", "empty"), ("   1 | 13/45/2019 | 18:50:40 | Fan #0x30 | x | Asserted\n", "not a date"),
    ("   1 | 11/15/2019 | 18:50:40 | Fan #0x30 | x | Maybe\n", "Asserted"),
    ("   1 | 11/15/2019 | 18:50:40 | Fan #0x30 | x | Asserted", "no newline"),
    ("Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0: No such file or directory\n",
     "no SEL entry"),
])
def test_sel_refuses(text, match):
    with pytest.raises(ParseError, match=match):
        bp.parse_sel_elist(text)


# -- sdr elist, sensor -------------------------------------------------------------------------------------------

def test_sdr_elist_readings_states_and_threshold_status():
    hpe = bp.parse_sdr_elist(fx("ipmitool_sdr_elist__ipmi_exporter_issue_54_hpe.txt"))["sensors"]
    assert hpe[2] == {"name": "01-Inlet Ambient", "number": 0xA2, "status": "ok", "entity": "55.1", "reading": 19.0,
                      "unit": "degrees C", "states": [], "text": "19 degrees C"}
    assert hpe[1]["states"] == ["Transition to OK"] and hpe[0]["text"] == ""
    dell = bp.parse_sdr_elist(fx("ipmitool_sdr_elist__dell_idrac_fan_controller_issue_36.txt"))["sensors"]
    assert len(dell) == 24 and dell[0]["status"] == "ns"
    psu = bp.parse_sdr_elist(fx("ipmitool_sdr_elist__composed_ipmi_sdr_c_psu_fan.txt"))["sensors"]
    assert psu[1]["states"] == ["Presence detected", "Failure detected"]
    assert [s["status"] for s in psu[2:4]] == ["cr", "lcr"] and psu[2]["reading"] == 0.0


def test_sensor_list_thresholds_na_and_discrete():
    sm = bp.parse_ipmitool_sensor(fx("ipmitool_sensor__librenms_issue_18274_supermicro.txt"))["sensors"]
    assert sm[0]["thresholds"] == {"lnr": 0.0, "lcr": 0.0, "lnc": 0.0, "unc": 79.0, "ucr": 82.0, "unr": 84.0}
    assert sm[6]["reading"] is None and sm[6]["status"] == "na"
    mixed = bp.parse_ipmitool_sensor(fx("ipmitool_sensor__openbmc_issues_3743_and_ha_ipmi_33.txt"))["sensors"]
    assert mixed[1]["discrete"] and mixed[1]["status"] == "0x0080" and mixed[0]["thresholds"]["ucr"] == 40.0


@pytest.mark.parametrize("fn, text, match", [
    (bp.parse_sdr_elist, "", "empty"), (bp.parse_sdr_elist, "FAN1 | 30h | zz  | 29.1 | 100 RPM\n", "expected"),
    (bp.parse_ipmitool_sensor, "FAN1 | 100 | RPM | ok\n", "10 columns"),
    (bp.parse_ipmitool_sensor, "FAN1 | abc | RPM | ok | na | na | na | na | na | na\n", "number"),
    (bp.parse_sdr_elist, "Get Device ID command failed\n", "no sensor row"),
])
def test_sdr_and_sensor_refuse(fn, text, match):
    with pytest.raises(ParseError, match=match):
        fn(text)


CASES = [(bp.parse_sel_elist, f) for f in fixtures("ipmitool_sel")] + \
    [(bp.parse_sdr_elist, f) for f in fixtures("ipmitool_sdr")] + \
    [(bp.parse_ipmitool_sensor, f) for f in fixtures("ipmitool_sensor")]


@pytest.mark.parametrize("fn, name", CASES, ids=[n for _, n in CASES])
def test_cut_is_refused_or_a_prefix(fn, name):
    """Rows are independent (no end marker): a cut after a row is the first rows; a cut inside a row is refused."""
    text = fx(name)
    full = fn(text)
    key = "entries" if "entries" in full else "sensors"
    lines = text.splitlines(True)
    for k in range(1, len(lines)):
        part = fn("".join(lines[:k]))
        assert part[key] == full[key][:k]
    for cut in range(1, len(text) - 1):
        if text[cut - 1] == "\n" or not text[cut - 1:cut + 1].strip():
            continue
        with pytest.raises(ParseError):
            fn(text[:cut])


# -- bmc_sel, bmc_sensors ----------------------------------------------------------------------------------------

def _entry(**readings):
    return {"status": "ok", "dgx_model": "dgxh100", "errors": {}, "readings": readings}


def _one(results, check):
    found = [r for r in results if r.check == check and r.host == "dgx-1"]
    assert len(found) == 1
    assert found[0].category == NODE_STATE and contradiction(found[0]) is None
    return found[0]


def test_bmc_sel_names_psu_and_dimm_with_the_action_and_ignores_deasserted():
    sel = bp.parse_sel_elist(fx("ipmitool_sel_elist__composed_ipmi_sel_c_dgx_faults.txt"))
    r = _one(ev.evaluate({"nodes": {"dgx-1": _entry(sel=sel)}}, {}), "bmc_sel")
    assert r.status == "fail" and r.measured == 3 and r.expected == 0
    assert "replace the power supply PSU2 Status" in r.cause and "restore the AC feed of PSU2 Status" in r.cause
    assert "reseat or replace the DIMM CPU 1 DIMM 3" in r.cause and "#6" not in r.cause  # #6 is deasserted
    assert "Correctable ECC |" not in r.cause


def test_bmc_sel_window_and_benign_logs_pass():
    sel = bp.parse_sel_elist(fx("ipmitool_sel_elist__composed_ipmi_sel_c_dgx_faults.txt"))
    exp = {"node": {"sel_since": {"value": "2024-03-05T00:00:00", "source": "last validation"}}}
    assert _one(ev.evaluate({"nodes": {"dgx-1": _entry(sel=sel)}}, exp), "bmc_sel").status == "pass"
    for name in ("ipmitool_sel_elist__sos_issue_2015.txt", "ipmitool_sel_elist__op_build_issue_594.txt",
                 "ipmitool_sel_list__ipmitool_pr_346_preinit.txt"):
        res = ev.evaluate({"nodes": {"dgx-1": _entry(sel=bp.parse_sel_elist(fx(name)))}}, {})
        assert _one(res, "bmc_sel").status == "pass", name
    mce = bp.parse_sel_elist(fx("ipmitool_sel_list__facebook_openbmc_issue_273.txt"))
    r = _one(ev.evaluate({"nodes": {"dgx-1": _entry(sel=mce)}}, {}), "bmc_sel")
    assert r.status == "fail" and r.measured == 3 and "CPU fault" in r.cause


def test_bmc_sensors_psu_failure_critical_fans_and_past_threshold():
    sdr = bp.parse_sdr_elist(fx("ipmitool_sdr_elist__composed_ipmi_sdr_c_psu_fan.txt"))
    r = _one(ev.evaluate({"nodes": {"dgx-1": _entry(sdr=sdr)}}, {}), "bmc_sensors")
    assert r.status == "fail" and r.measured == 3
    assert "replace the power supply PSU2 Status" in r.cause and "replace the fan module FAN6_F_Speed" in r.cause
    sensor = bp.parse_ipmitool_sensor(fx("ipmitool_sensor__openbmc_issues_3743_and_ha_ipmi_33.txt"))
    r2 = _one(ev.evaluate({"nodes": {"dgx-1": _entry(sensor=sensor)}}, {}), "bmc_sensors")
    assert r2.status == "fail" and "Ambient_Temp: 46.0" in r2.cause and "airflow" in r2.cause


def test_bmc_sensors_healthy_outputs_pass_and_nc_is_not_a_failure():
    for name in ("ipmitool_sdr_elist__ipmi_exporter_issue_54_hpe.txt",
                 "ipmitool_sdr_elist__dell_idrac_fan_controller_issue_36.txt"):
        res = ev.evaluate({"nodes": {"dgx-1": _entry(sdr=bp.parse_sdr_elist(fx(name)))}}, {})
        assert _one(res, "bmc_sensors").status == "pass", name
    for name in ("ipmitool_sensor__librenms_issue_18274_supermicro.txt",
                 "ipmitool_sensor__luckylinux_fan_control_issue_1.txt"):
        res = ev.evaluate({"nodes": {"dgx-1": _entry(sensor=bp.parse_ipmitool_sensor(fx(name)))}}, {})
        assert _one(res, "bmc_sensors").status == "pass", name


def test_bmc_without_ipmitool_is_skipped_with_the_reason():
    e = _entry()
    e["errors"] = {"sel": "ipmitool: Could not open device at /dev/ipmi0", "sdr": "ipmitool: Could not open device"}
    res = ev.evaluate({"nodes": {"dgx-1": e}}, {})
    for check in ("bmc_sel", "bmc_sensors"):
        r = _one(res, check)
        assert r.status == "skipped" and "Could not open device" in r.reason
