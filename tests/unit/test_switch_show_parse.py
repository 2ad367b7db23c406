"""Parsers of the switch show outputs (module_utils/switch/show_parse.py) against public outputs
(tests/unit/fixtures/switch/SOURCES.md), and what they refuse."""
from __future__ import annotations

import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import show_parse as sp
from test_switch_helpers import FIXTURES


def fx(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        return fh.read()


def test_eos_interfaces_status():
    got = sp.eos_interfaces_status(fx("eos_show_interfaces_status.json"))
    assert got == {"Ethernet3": {"oper": "connected", "up": True, "speed_gbps": 1.0,
                                 "description": "vtep-03:ethernet1"}}


def test_eos_lldp_neighbors_detail():
    got = sp.eos_lldp_neighbors_detail(fx("eos_show_lldp_neighbors_detail.json"))
    assert got["Ethernet2"] == [{"system_name": "DC1-SPINE2.local.com", "port_id": "Ethernet1",
                                 "port_description": "P2P_LINK_TO_DC1-LEAF1A_Ethernet2",
                                 "chassis_id": "001c.73f7.d138"}]
    # EOS quotes interfaceId ('"Ethernet1"'); the quotes are not part of the name
    quoted = fx("eos_show_lldp_neighbors_detail.json").replace('"interfaceId_v2": "Ethernet1",', "").replace(
        '"interfaceId": "Ethernet1"', '"interfaceId": "\\"Ethernet1\\""')
    assert sp.eos_lldp_neighbors_detail(quoted)["Ethernet1"][0]["port_id"] == "Ethernet1"


def test_eos_counters():
    assert sp.eos_counters_errors(fx("eos_show_interfaces_counters_errors.json"))["Ethernet1"]["inErrors"] == 42
    assert sp.eos_counters_discards(fx("eos_show_interfaces_counters_discards.json")) == {
        "Ethernet2": {"inDiscards": 0, "outDiscards": 42}, "Ethernet1": {"inDiscards": 42, "outDiscards": 0}}
    pfc = sp.eos_pfc_counters(fx("eos_show_priority_flow_control_counters.json"))
    assert sorted(pfc) == ["Ethernet3/1/1", "Ethernet3/2/1", "Ethernet3/3/1", "Ethernet3/4/1"]
    assert pfc["Ethernet3/1/1"] == {"rxFrames": 0, "txFrames": 0}


@pytest.mark.parametrize("parser,text,msg", [
    (sp.eos_interfaces_status, "% Invalid input (at token 3: 'json')", "expected JSON"),
    (sp.eos_interfaces_status, '{"interfaceStatuses": {"Ethernet1": {"bandwidth": 1}}}', "no linkStatus"),
    (sp.eos_interfaces_status, '{"interfaceStatuses": {"Ethernet1": {"linkStatus": "connected", "bandwidth": "x"}}}',
     "expected a number"),
    (sp.eos_lldp_neighbors_detail, '{"lldpNeighbors": [{"port": "Ethernet1"}]}', "expected an object keyed by port"),
    (sp.eos_lldp_neighbors_detail, '{"lldpNeighbors": {"Ethernet1": {}}}', "lldpNeighborInfo"),
    (sp.eos_counters_errors, '{"interfaceErrorCounters": {"Ethernet1": {"inErrors": 0}}}', "inErrors/outErrors"),
    (sp.eos_counters_discards, '{"inDiscardsTotal": 0}', "'interfaces'"),
    (sp.eos_pfc_counters, '{"interfaceCounters": {"Ethernet1": {"rxFrames": 1', "does not parse"),
    (sp.onyx_interfaces_status, "Port  Status\nEth1/1 Up", "header"),
    (sp.onyx_interfaces_status, "Port Operational state Speed Negotiation\nEth1/1 Up fast", "cannot read the row"),
    (sp.onyx_lldp_remote, "Remote system name: x", "outside a 'Remote Index' block"),
    (sp.nvue_interfaces, "Error: Unknown path interface", "no table header"),
])
def test_parsers_refuse_what_they_cannot_read(parser, text, msg):
    with pytest.raises(ValueError, match=msg):
        parser(text)


def test_onyx_interfaces_status():
    got = sp.onyx_interfaces_status(fx("onyx_show_interfaces_ethernet_status.txt"))
    assert len(got) == 12
    assert got["1/1"] == {"oper": "Up", "up": True, "speed_gbps": 40.0, "negotiation": "No-Negotiation"}
    assert got["1/3"]["up"] is False and got["1/6"]["speed_gbps"] == 10.0


def test_onyx_lldp_remote():
    got = sp.onyx_lldp_remote(fx("onyx_show_lldp_interfaces_ethernet_remote.txt"))
    assert got == {"1/1": [{"system_name": "remote-system", "port_id": "ethenret 1/2",
                            "port_description": "ethernet 1/2", "chassis_id": "00:11:22:33:44:55"}]}


def test_nvue_tables():
    lldp = sp.nvue_lldp(fx("nvue_show_interface_lldp.txt"))
    assert lldp["swp51"] == [{"system_name": "spine01", "port_id": "swp1", "port_description": "", "chassis_id": ""}]
    assert lldp["swp1"][0]["port_id"] == "48:b0:2d:76:ee:8e" and len(lldp) == 10
    ifs = sp.nvue_interfaces(fx("nvue_show_interface.txt"))
    assert sorted(ifs) == ["BLUE", "RED", "bond1", "bond2", "bond3"]  # continuation rows are not interfaces
    assert ifs["bond1"] == {"oper": "up", "up": True, "speed_gbps": 1.0, "mtu": 9000, "type": "bond",
                            "remote_host": "", "remote_port": ""}


def test_port_config_from_running_configs():
    eos = "interface Ethernet1/1\n   mtu 9214\n   speed forced 100gfull\n   qos trust dscp\n" \
          "   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n!\ninterface Ethernet2/1\n" \
          "   shutdown\n!\ninterface Vlan10\n   mtu 1500\n"
    got = sp.port_config("eos", eos)
    assert got["Ethernet1/1"] == {"mtu": 9214, "speed": 100.0, "shutdown": False, "trust": "dscp", "pfc": True,
                                  "pfc_priorities": [3]}
    assert got["Ethernet2/1"]["shutdown"] and "Vlan10" not in got
    onyx = "   interface ethernet 1/1 mtu 9216 force\n   interface ethernet 1/1 speed 100G force\n" \
           "   interface ethernet 1/1 dcb priority-flow-control mode on force\n"
    assert sp.port_config("onyx", onyx)["1/1"] == {"mtu": 9216, "speed": 100.0, "shutdown": False, "trust": None,
                                                   "pfc": True, "pfc_priorities": []}
    nv = "nv set interface swp1,swp2 link mtu 9216\nnv set interface swp2 link state down\n"
    got = sp.port_config("cumulus", nv)
    assert got["swp1"]["mtu"] == 9216 and got["swp2"]["shutdown"] and not got["swp1"]["shutdown"]
    with pytest.raises(ValueError, match="platform"):
        sp.port_config("junos", "")


@pytest.mark.parametrize("text,gbps", [("100G", 100.0), ("40 Gbps", 40.0), ("25Gb/s", 25.0), ("100000M", 100.0),
                                       (100000000000, 100.0), ("auto", None), (None, None)])
def test_speed_units(text, gbps):
    assert sp.speed_gbps(text) == gbps
