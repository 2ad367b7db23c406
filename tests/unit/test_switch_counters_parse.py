"""module_utils/switch/counters_parse.py on real outputs (tests/unit/fixtures/switch/SOURCES.md): Onyx's
``show interfaces ethernet | json-print`` (mellanox.onyx's test data), NVUE's ``nv show interface --view counters``
and ``nv show interface <port> counters qos pfc-stats`` (NVIDIA's Cumulus Linux documentation); what is refused (a
CLI error, another command's output, a cut-off output); the fake switches' answers read by the same parsers; the
meaning of every judged counter."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_parser_contract import FAST

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import counters_parse as cp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import optics_parse as op

from sim.fakeswitch import eos_show, nvue_show, onyx_show  # noqa: E402

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "switch")
ONYX = "onyx_show_interfaces_ethernet_json_print__mellanox_onyx_interfaces_show.txt"
ONYX_NO_COUNTERS = "onyx_show_interfaces_ethernet_json_print__mellanox_onyx_facts_no_counters.txt"
VIEW = "nvue_show_interface_view_counters__cumulus_docs_56.txt"
PFC = "nvue_show_interface_counters_qos_pfc_stats__cumulus_docs_command_reference.txt"
XCVR = "nvue_show_interface_transceiver_thresholds__cumulus_docs.txt"


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_the_fixtures_are_in_sources():
    sources = fx("SOURCES.md")
    for name in (ONYX, ONYX_NO_COUNTERS, VIEW, PFC, XCVR):
        assert "`%s`" % name in sources


def test_onyx_json_print_counters_of_the_ethernet_ports_only():
    out = cp.onyx_interfaces_counters(fx(ONYX))
    assert list(out) == ["1/1"]  # the two VLAN interfaces are not ports
    c = out["1/1"]
    assert (c["rx error packets"], c["rx discard packets"], c["tx error packets"], c["tx discard packets"]) == (
        0, 0, 0, 0)
    assert c["tx hoq discard packets"] == 0 and c["rx unicast packets"] == 0


def test_onyx_later_layout_ports_keyed_by_name():
    """Onyx 3.6.6000 and later: {"Eth1/1": [{attributes}, ...]} (how mellanox.onyx's onyx_interface reads it)."""
    old = json.loads(fx(ONYX))[0]
    later = {"Eth1/1": [{k: v for k, v in old.items() if k not in ("header", "Rx")}, {"Rx": dict(
        old["Rx"], **{"error packets": "12"})}]}
    out = cp.onyx_interfaces_counters(json.dumps(later, indent=4))
    assert out["1/1"]["rx error packets"] == 12 and out["1/1"]["tx discard packets"] == 0


@pytest.mark.parametrize("text,why", [
    (None, "expected JSON"), ("", "expected JSON"), ("% Unrecognized command \"json-print\"", "answered with an error"),
    ("[{\"header\": \"Eth1/1\", \"Rx\": {\"error packets\": \"0\"", "does not parse"),
    ("[{\"header\": \"Vlan 10\", \"MTU\": \"1500 bytes\"}]", "no Ethernet port"),
    ("[{\"header\": \"Eth1/1\", \"Rx\": {\"error packets\": \"x\", \"discard packets\": \"0\"}, \"Tx\": "
     "{\"error packets\": \"0\", \"discard packets\": \"0\"}}]", "expected a counter"),
    ("[1, 2]", "expected an object")])
def test_onyx_refuses_what_it_cannot_read(text, why):
    with pytest.raises(ValueError, match=why) as exc:
        cp.onyx_interfaces_counters(text)
    assert "show interfaces ethernet | json-print" in str(exc.value)


def test_onyx_output_without_counter_blocks_is_refused():
    """onyx_facts' read of the same command has no Rx/Tx blocks: not "no errors"."""
    with pytest.raises(ValueError, match="Eth1/1 has no Rx counters block"):
        cp.onyx_interfaces_counters(fx(ONYX_NO_COUNTERS))


def test_onyx_cut_json_is_refused():
    text = fx(ONYX)
    for cut in (len(text) // 3, len(text) // 2, len(text) - 10):
        with pytest.raises(ValueError):
            cp.onyx_interfaces_counters(text[:cut])


def test_nvue_counters_view():
    out = cp.nvue_counters_view(fx(VIEW))
    assert len(out) == 31 and out["swp1"] == {"RX_ERR": 0, "RX_DRP": 0, "RX_OVR": 0, "TX_ERR": 0, "TX_DRP": 0,
                                              "TX_OVR": 0}
    assert out["br_default"]["RX_DRP"] == 10 and out["BLUE"]["TX_DRP"] == 4


def test_nvue_counters_view_refusals():
    text = fx(VIEW)
    with pytest.raises(ValueError, match="answered with an error"):
        cp.nvue_counters_view("Error: Unknown option --view\n")
    with pytest.raises(ValueError, match="no table header"):
        cp.nvue_counters_view(fx(PFC))
    with pytest.raises(ValueError, match="RX_ERR"):  # a row cut inside: its counters are missing
        cp.nvue_counters_view(text[:text.index("swp2") + 30])
    with pytest.raises(ValueError, match="no RX_ERR"):
        cp.nvue_counters_view(text.replace("RX_ERR", "RX_BAD"))


def test_nvue_pfc_stats():
    out = cp.nvue_pfc_stats(fx(PFC), "swp1")
    assert (out["rx-pause-frames"], out["tx-pause-frames"]) == (0, 0) and sorted(out["by_priority"]) == list("01234567")


def test_nvue_pfc_stats_refusals():
    text = fx(PFC)
    lines = text.splitlines(True)
    with pytest.raises(ValueError, match="priorities 0-7"):  # cut after a whole row
        cp.nvue_pfc_stats("".join(lines[:6]), "swp1")
    with pytest.raises(ValueError, match="swp9 counters qos pfc-stats: the switch answered with an error"):
        cp.nvue_pfc_stats("Error: The requested item does not exist.\n", "swp9")
    with pytest.raises(ValueError, match="expected a counter"):
        cp.nvue_pfc_stats(text.replace("3                0 ", "3                x "), "swp1")


@FAST
@given(st.text(max_size=300))
def test_noise_is_a_value_or_value_error(noise):
    for parse in (cp.onyx_interfaces_counters, cp.nvue_counters_view, cp.nvue_pfc_stats):
        try:
            parse(noise)
        except ValueError:
            pass


@FAST
@given(st.data())
def test_fixture_lines_mixed_with_noise(data):
    for name, parse in ((VIEW, cp.nvue_counters_view), (PFC, cp.nvue_pfc_stats), (ONYX, cp.onyx_interfaces_counters)):
        lines = fx(name).splitlines(True)
        i = data.draw(st.integers(0, len(lines)))
        noise = data.draw(st.text(max_size=40))
        try:
            parse("".join(lines[:i]) + noise + "".join(lines[i:]))
        except ValueError:
            pass


def test_every_counter_the_stage_judges_has_a_meaning():
    assert cp.meaning("rxFrames").startswith("PFC pause frames received")
    assert cp.meaning("fcsErrors") == "FCS errors (bad frames: cable/optic)"
    assert cp.meaning("inDiscards") == "frames discarded on input"
    assert cp.meaning("unknownCounter") == "unknownCounter"
    for key in ("RX_ERR", "RX_DRP", "TX_ERR", "TX_DRP", "RX_OVR", "rx-pause-frames", "tx-pause-frames",
                "rx error packets", "tx error packets", "rx discard packets", "tx discard packets", "inErrors",
                "outErrors", "outDiscards", "txFrames"):
        assert key in cp.MEANINGS


# ------------------------------------------------------------------------ the fake switches, read by our parsers

WIRED = {"running": [], "wiring": {"1/1": {"host": "dgx1", "nic": "enp5s0", "speed": 100},
                                   "1/2": {"host": "dgx2", "nic": "enp5s0", "speed": 100}}}


def test_fake_onyx_counters_parse_and_rise_with_the_faults():
    state = dict(WIRED, faults={"errors_rising": "1/2", "discards_rising": "1/1"})
    first = cp.onyx_interfaces_counters(onyx_show.show(state, "show interfaces ethernet | json-print"))
    second = cp.onyx_interfaces_counters(onyx_show.show(state, "show interfaces ethernet | json-print"))
    assert second["1/2"]["rx error packets"] - first["1/2"]["rx error packets"] == 7
    assert second["1/1"]["tx discard packets"] - first["1/1"]["tx discard packets"] == 11
    assert second["1/1"]["rx error packets"] == first["1/1"]["rx error packets"] == 0


def test_fake_nvue_counters_pause_and_environment_parse():
    state = {"wiring": {"swp1": {"host": "dgx1", "nic": "enp5s0"}, "swp2": {"host": "dgx2", "nic": "enp5s0"}},
             "faults": {"pause_rising": "swp2", "errors_rising": "swp1", "fan_failed": "FAN3/2"}}
    view = [cp.nvue_counters_view(nvue_show.show(state, [], ["interface", "--view", "counters"])) for _ in (1, 2)]
    assert view[1]["swp1"]["RX_ERR"] - view[0]["swp1"]["RX_ERR"] == 7 and view[1]["swp2"]["RX_ERR"] == 0
    assert {"eth0", "lo", "swp1", "swp2"} == set(view[0])
    pfc = [cp.nvue_pfc_stats(nvue_show.show(state, [], ["interface", "swp2", "counters", "qos", "pfc-stats"]), "swp2")
           for _ in (1, 2)]
    assert pfc[1]["rx-pause-frames"] - pfc[0]["rx-pause-frames"] == 1000
    assert pfc[1]["by_priority"]["3"]["rx-pause-frames"] == 2000
    env = op.nvue_platform_environment(nvue_show.show(state, [], ["platform", "environment"]) + "\n")
    assert [r["name"] for r in env if r["state"] not in ("ok", "off")] == ["FAN3/2"]


def test_fake_eos_optics_and_environment_parse_healthy_and_with_faults():
    state = {"running": [], "wiring": {"Ethernet1/1": {"host": "dgx1", "nic": "enp5s0"},
                                       "Ethernet2/1": {"host": "dgx2", "nic": "enp5s0"}}}
    dom = op.eos_dom_thresholds(eos_show.show(state, "show interfaces transceiver dom thresholds | json"))
    rx = dom["Ethernet1/1"]["params"]["rx_power"]
    assert min(rx["channels"].values()) > rx["thresholds"]["lowWarn"] and len(rx["channels"]) == 4
    assert op.eos_environment_power(eos_show.show(state, "show system environment power | json"))["2"]["state"] == "ok"
    cooling = op.eos_environment_cooling(eos_show.show(state, "show system environment cooling | json"))
    assert cooling["system_status"] == "coolingOk" and {f["status"] for f in cooling["fans"]} == {"ok"}
    temp = op.eos_environment_temperature(eos_show.show(state, "show system environment temperature | json"))
    assert temp["system_status"] == "temperatureOk" and all(s["current"] < s["overheat"] for s in temp["sensors"])
    state["faults"] = {"optic_rx_low": "Ethernet2/1", "psu_failed": "1", "fan_failed": "2/1"}
    dom = op.eos_dom_thresholds(eos_show.show(state, "show interfaces transceiver dom thresholds | json"))
    low = dom["Ethernet2/1"]["params"]["rx_power"]
    assert max(low["channels"].values()) < low["thresholds"]["lowAlarm"]
    power = op.eos_environment_power(eos_show.show(state, "show system environment power | json"))
    assert (power["1"]["state"], power["2"]["state"]) == ("powerLoss", "ok")
    cooling = op.eos_environment_cooling(eos_show.show(state, "show system environment cooling | json"))
    assert [(f["label"], f["status"]) for f in cooling["fans"] if f["status"] != "ok"] == [("2/1", "failed")]


def test_podsim_switch_takes_the_new_fault_keys():
    """``sim/podsim switch SW --fault optic_rx_low=P --fault psu_failed=N --fault fan_failed=F`` (checked values)."""
    from podsimlib.switches import parse_switch_faults  # noqa: E402 - sim/ on the path (pyproject pythonpath)
    assert parse_switch_faults(["optic_rx_low=Ethernet2/1", "psu_failed=2", "fan_failed=3/1,PowerSupply1/1"]) == {
        "optic_rx_low": "Ethernet2/1", "psu_failed": "2", "fan_failed": "3/1,PowerSupply1/1"}
    with pytest.raises(ValueError, match="expected fans"):
        parse_switch_faults(["fan_failed=fan3"])
    with pytest.raises(ValueError, match="expected psus"):
        parse_switch_faults(["psu_failed=PSU2"])


def test_nvue_transceiver_thresholds_in_the_shape_of_eos_dom():
    out = op.nvue_transceiver_thresholds(fx(XCVR), "swp3")
    p = out["params"]
    assert sorted(p) == ["rx_power", "temperature", "tx_bias", "tx_power", "voltage"]
    assert p["rx_power"] == {"unit": "dBm", "channels": {"1": -0.64, "2": -0.70, "3": -0.68, "4": -0.60},
                             "thresholds": {"lowAlarm": -13.31, "lowWarn": -10.30, "highWarn": 2.40, "highAlarm": 5.40}}
    assert p["temperature"]["channels"] == {"-": 42.74} and p["voltage"]["thresholds"]["lowWarn"] == 3.135
    assert p["tx_bias"]["thresholds"]["lowAlarm"] == 5.492


def test_nvue_transceiver_thresholds_refusals():
    text = fx(XCVR)
    with pytest.raises(ValueError, match="swp9 transceiver thresholds: the switch answered with an error"):
        op.nvue_transceiver_thresholds("Error: The requested item does not exist.\n", "swp9")
    with pytest.raises(ValueError, match="no dashes line"):
        op.nvue_transceiver_thresholds(fx(PFC), "swp1")
    with pytest.raises(ValueError, match="cannot read the row"):  # cut inside a row
        op.nvue_transceiver_thresholds(text[:text.index("tx-power") + 40] + "\n", "swp3")
    with pytest.raises(ValueError, match="no newline"):
        op.nvue_transceiver_thresholds(text.rstrip("\n"), "swp3")
    with pytest.raises(ValueError, match="units dBm/mW, expected dBm"):
        op.nvue_transceiver_thresholds(text.replace("5.40 dBm        2.40 dBm        -10.30 dBm", "5.40 mW         "
                                                    "2.40 dBm        -10.30 dBm", 1), "swp3")
    with pytest.raises(ValueError, match="unknown parameter"):
        op.nvue_transceiver_thresholds(text.replace("tx-power  ", "rx-snr    "), "swp3")
    with pytest.raises(ValueError, match="a table without rows"):
        op.nvue_transceiver_thresholds("\n".join(text.splitlines()[:3]) + "\n", "swp3")


@FAST
@given(st.data())
def test_transceiver_lines_mixed_with_noise(data):
    lines = fx(XCVR).splitlines(True)
    i = data.draw(st.integers(0, len(lines)))
    try:
        op.nvue_transceiver_thresholds("".join(lines[:i]) + data.draw(st.text(max_size=40)) + "".join(lines[i:]))
    except ValueError:
        pass


def test_fake_nvue_transceiver_parses_healthy_and_low():
    state = {"wiring": {"swp1": {"host": "dgx1", "nic": "enp5s0"}}, "faults": {}}
    ok = op.nvue_transceiver_thresholds(nvue_show.show(state, [], ["interface", "swp1", "transceiver", "thresholds"])
                                        + "\n", "swp1")["params"]
    assert ok["rx_power"]["thresholds"]["lowWarn"] < min(ok["rx_power"]["channels"].values())
    assert ok["voltage"]["channels"] == {"-": 3.2862}
    state["faults"] = {"optic_rx_low": "swp1"}
    low = op.nvue_transceiver_thresholds(nvue_show.show(state, [], ["interface", "swp1", "transceiver", "thresholds"])
                                         + "\n", "swp1")["params"]["rx_power"]
    assert max(low["channels"].values()) < low["thresholds"]["lowAlarm"]
