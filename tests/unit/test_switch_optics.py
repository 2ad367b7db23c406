"""module_utils/switch/optics_parse.py and optics_eval.py: EOS DOM thresholds and environment JSON (ANTA's test
data), NVOS's environment table (tests/unit/fixtures/fabric/README.md), judged against the switch's own limits."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_parser_contract import FAST

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (PORT_STATE, SWITCH_STATE,
    contradiction)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import optics_eval as oe
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import optics_parse as op

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


PARSERS = {"eos_dom_thresholds": op.eos_dom_thresholds, "eos_env_power": op.eos_environment_power,
           "eos_env_cooling": op.eos_environment_cooling, "eos_env_temperature": op.eos_environment_temperature,
           "eos_env_temperature_transceiver": op.eos_environment_temperature,
           "nvos_platform_environment": op.nvue_platform_environment}


def well_formed(results):
    for r in results:
        assert r.subject is not None and r.subject.switch and r.category in (PORT_STATE, SWITCH_STATE), r
        assert not contradiction(r), r
        assert r.status != "fail" or r.cause, r


def test_fixtures_are_in_the_readme():
    readme = fx("README.md")
    for f in os.listdir(FIX):
        if f.split("__")[0] in PARSERS:
            assert f in readme, f


def test_dom_thresholds_parsed():
    dom = op.eos_dom_thresholds(fx("eos_dom_thresholds__anta_tests_rx_ok.txt"))
    assert dom["Ethernet1/1"]["params"] == {}
    rx = dom["Ethernet7/1"]["params"]["rx_power"]
    assert rx["unit"] == "dBm" and set(rx["channels"]) == {"1", "2", "3", "4"}
    assert rx["thresholds"]["lowAlarm"] == pytest.approx(-12.5026, abs=1e-3) and rx["thresholds"]["highAlarm"] is None
    assert dom["Ethernet7/1"]["media_type"] == "40GBASE-SR4"


def test_low_rx_power_fails_naming_port_lane_and_threshold():
    dom = op.eos_dom_thresholds(fx("eos_dom_thresholds__anta_tests_rx_low.txt"))
    res = {r.host: r for r in oe.optics_checks("leaf1", dom, ports=["Ethernet2/1", "Ethernet1/1"],
                                               peers={"Ethernet2/1": "dgx3 enp12s0"})}
    bad = res["leaf1 Ethernet2/1"]
    assert bad.status == "fail" and bad.check == "switch_optic_rx_power" and bad.category == PORT_STATE
    assert (bad.subject.switch, bad.subject.port) == ("leaf1", "Ethernet2/1")
    assert "to dgx3 enp12s0" in bad.cause and "lane 3" in bad.cause and "-40.31 dBm" in bad.cause
    assert "low-alarm -13.30" in bad.cause
    assert bad.measured == pytest.approx(-40.3124, abs=1e-3) and bad.expected == pytest.approx(-10.3012, abs=1e-3)
    # Ethernet1/1 has no DOM: nothing to judge, no result
    assert "leaf1 Ethernet1/1" not in res
    well_formed(res.values())


def test_healthy_optics_pass_and_a_missing_port_is_an_error():
    dom = op.eos_dom_thresholds(fx("eos_dom_thresholds__anta_tests_rx_ok.txt"))
    res = oe.optics_checks("leaf1", dom, ports=["Ethernet7/1", "Ethernet9/1"])
    by = {r.host: r for r in res}
    assert by["leaf1 Ethernet7/1"].status == "pass" and by["leaf1 Ethernet7/1"].details["compare"] == ">= "
    assert by["leaf1 Ethernet9/1"].status == "error"
    well_formed(res)


def test_warning_level_fails_and_high_side():
    # the rx_ok reading with lane 1 moved between the module's low warning (-9.50) and low alarm (-12.50)
    data = json.loads(fx("eos_dom_thresholds__anta_tests_rx_ok.txt"))
    data["interfaces"]["Ethernet7/1"]["parameters"]["rxPower"]["channels"]["1"] = -10.0
    (r,) = oe.optics_checks("leaf1", op.eos_dom_thresholds(json.dumps(data)), ports=["Ethernet7/1"])
    assert r.status == "fail" and "low-warning -9.50" in r.cause and "alarm" not in r.cause
    # a temperature with a high warning (EOS prints highWarn/highAlarm for temperature)
    data["interfaces"]["Ethernet7/1"]["parameters"]["temperature"] = {
        "unit": "C", "channels": {"-": 72.5}, "threshold": {"highWarn": 70.0, "highAlarm": 75.0}}
    res = {r.check: r for r in oe.optics_checks("leaf1", op.eos_dom_thresholds(json.dumps(data)),
                                                ports=["Ethernet7/1"])}
    t = res["switch_optic_temperature"]
    assert t.status == "fail" and "above the module's high-warning 70.00 threshold" in t.cause
    assert t.details["compare"] == "<= "
    well_formed(res.values())


def test_temperature_without_thresholds_is_not_judged():
    dom = op.eos_dom_thresholds(fx("eos_dom_thresholds__anta_tests_temperature.txt"))
    assert dom["Ethernet1/2"]["params"]["temperature"]["channels"] == {"-": 75.7575}
    assert oe.optics_checks("leaf1", dom) == []


def test_psu_power_loss():
    ok = oe.power_checks("leaf1", op.eos_environment_power(fx("eos_env_power__anta_tests_ok.txt")))
    assert {r.status for r in ok} == {"pass"}
    bad = oe.power_checks("leaf1", op.eos_environment_power(fx("eos_env_power__anta_tests_power_loss.txt")))
    by = {r.host: r for r in bad}
    assert by["leaf1 PSU 1"].status == "fail" and "powerLoss" in by["leaf1 PSU 1"].cause
    assert by["leaf1 PSU 2"].status == "pass" and by["leaf1 PSU 1"].category == SWITCH_STATE
    well_formed(ok + bad)


def test_fans():
    ok = oe.cooling_check("leaf1", op.eos_environment_cooling(fx("eos_env_cooling__anta_tests_ok.txt")))
    assert ok.status == "pass" and ok.measured == 0
    bad = oe.cooling_check("leaf1", op.eos_environment_cooling(fx("eos_env_cooling__anta_tests_fan_tray.txt")))
    assert bad.status == "fail" and bad.measured == 2 and "fan 3/1 (slot 3): powerLoss" in bad.cause
    assert len(bad.details["parts"]) == 2 and not bad.problems  # a switch's fan is no node's problem
    well_formed([ok, bad])


def test_temperatures():
    ok = oe.temperature_check("leaf1", op.eos_environment_temperature(fx("eos_env_temperature__anta_tests_ok.txt")))
    assert ok.status == "pass"
    hot = oe.temperature_check("leaf1", op.eos_environment_temperature(
        fx("eos_env_temperature__anta_tests_high_temp.txt")))
    assert hot.status == "fail" and "TempSensor1" in hot.cause and "overheat threshold 90.0" in hot.cause
    xcvr = oe.temperature_check("leaf1", op.eos_environment_temperature(
        fx("eos_env_temperature_transceiver__anta_tests_failed.txt")), check="switch_optic_temperature_sensors")
    assert xcvr.status == "fail" and "hardware status failed" in xcvr.cause and "2 alerts" in xcvr.cause
    well_formed([ok, hot, xcvr])


def test_nvos_environment_table():
    rows = op.nvue_platform_environment(fx("nvos_platform_environment__nvos_manual_composed.txt"))
    assert rows[0] == {"name": "ASIC", "type": "temperature", "state": "ok"}
    assert {"name": "FAN1", "type": "led", "state": "off"} in rows
    ok = oe.nvue_environment_check("ib-spine1", rows)
    assert ok.status == "pass" and ok.measured == 0
    broken = [dict(r, state="failed") if r["name"] == "FAN3/2" else r for r in rows]
    bad = oe.nvue_environment_check("ib-spine1", broken)
    assert bad.status == "fail" and "fan FAN3/2: failed" in bad.cause
    well_formed([ok, bad])


@pytest.mark.parametrize("fn,text,words", [
    (op.eos_dom_thresholds, "% Invalid input (at token 2: 'dom')\n", "error"),
    (op.eos_dom_thresholds, '{"interfaces": {"Ethernet1": {"parameters": {"rxPower": {"channels": {"1": "x"}}}}}}',
     "expected a number"),
    (op.eos_dom_thresholds, '{"interfaces": {"Ethernet1": {}}', "does not parse"),
    (op.eos_environment_power, '{"powerSupplies": {"1": {"modelName": "X"}}}', "no state"),
    (op.eos_environment_cooling, '{"fanTraySlots": []}', "no 'systemStatus'"),
    (op.eos_environment_temperature, '{"tempSensors": [{"name": "T1"}]}', "expected a number"),
    (op.nvue_platform_environment, "Name Type State\nASIC temperature ok\n", "dashes"),
    (op.nvue_platform_environment, "Error: not found\n", "error"),
])
def test_refusals(fn, text, words):
    with pytest.raises(ValueError) as e:
        fn(text)
    assert words in str(e.value)


def test_nvos_cut_table_is_refused():
    text = fx("nvos_platform_environment__nvos_manual_composed.txt")
    with pytest.raises(ValueError):
        op.nvue_platform_environment(text.rstrip("\n")[:-1])


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_prefix_of_json_is_refused(name):
    for f in sorted(os.listdir(FIX)):
        if f.split("__")[0] != name or name.startswith("nvos"):
            continue
        text = fx(f)
        with pytest.raises(ValueError):
            PARSERS[name](text[: len(text) // 2])


@FAST
@given(st.one_of(st.binary(max_size=300).map(lambda b: b.decode("latin-1")), st.text(max_size=300)))
def test_noise_is_a_value_or_value_error(data):
    for fn in PARSERS.values():
        try:
            fn(data)
        except ValueError:
            pass
