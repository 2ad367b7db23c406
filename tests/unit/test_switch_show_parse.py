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


# ------------------------------------------------------------------ outputs from other releases, and CLI artefacts


def test_onyx_3x_interfaces_status_speeds_without_gbps():
    # Onyx 3.x (MSN2100) prints '100G' / '50G', not '40 Gbps'; it was refused as "cannot read the row"
    got = sp.onyx_interfaces_status(fx("onyx_show_interfaces_ethernet_status_3x.txt"))
    assert got == {"1/1": {"oper": "Up", "up": True, "speed_gbps": 100.0, "negotiation": "Auto"},
                   "1/5/1": {"oper": "Up", "up": True, "speed_gbps": 50.0, "negotiation": "Auto"},
                   "1/15": {"oper": "Up", "up": True, "speed_gbps": 100.0, "negotiation": "Auto"}}
    down = sp.onyx_interfaces_status("Port  Operational state  Speed  Negotiation\n"
                                     "Eth1/2  Down  Unknown  Auto\nEth1/3  Down  -  -\nEth1/4  Down  40 Gbps   \n")
    assert down["1/2"]["speed_gbps"] is None and down["1/3"]["up"] is False
    assert down["1/4"] == {"oper": "Down", "up": False, "speed_gbps": 40.0, "negotiation": ""}


def test_onyx_text_outputs_with_terminal_artefacts():
    clean = fx("onyx_show_interfaces_ethernet_status_3x.txt")
    rows = clean.splitlines()
    noisy = "\r\n".join(["switch [standalone: master] # show interfaces ethernet status", ""] + rows[:3]
                        + ["--More--" + "\x08" * 8 + " " * 8 + "\x08" * 8 + rows[3] + "   ", rows[4],
                           "switch [standalone: master] # "]) + "\r\n"
    assert sp.onyx_interfaces_status(noisy) == sp.onyx_interfaces_status(clean)
    lldp = fx("onyx_show_lldp_interfaces_ethernet_remote.txt")
    noisy = "\r\n".join(["switch [standalone: master] # show lldp interfaces ethernet remote"]
                        + [ln + "  " for ln in lldp.splitlines()] + ["switch [standalone: master] #"])
    assert sp.onyx_lldp_remote(noisy) == sp.onyx_lldp_remote(lldp)


@pytest.mark.parametrize("parser,text,msg", [
    # a CLI error was read as "no LLDP neighbours"
    (sp.onyx_lldp_remote, '% Unrecognized command "remote".\nType "show ?" for help.', "answered with an error"),
    (sp.onyx_interfaces_status, "% Invalid input", "answered with an error"),
    # a port heading it cannot read: the neighbours below it went to the port above
    (sp.onyx_lldp_remote, "Eth1/1\nRemote Index: 1\nRemote system name: a\nEth1/2 (Po1)\nRemote Index: 1\n"
     "Remote system name: b", "cannot read the port line"),
    # the error named no command
    (sp.onyx_interfaces_status, "Port Operational state Speed Negotiation\nEthX Up 40 Gbps Auto", "^show interfaces"),
    # JSON followed by something that is not a prompt
    (sp.eos_interfaces_status, '{"interfaceStatuses": {}}\n% Invalid input', "unexpected text after the JSON"),
    # a neighbour entry that is not an object crashed with AttributeError
    (sp.eos_lldp_neighbors_detail, '{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": ["x"]}}}',
     "not an object"),
    (sp.eos_lldp_neighbors_detail,
     '{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"neighborInterfaceInfo": "Ethernet2"}]}}}',
     "not an object"),
])
def test_parsers_refuse_errors_and_unreadable_lines(parser, text, msg):
    with pytest.raises(ValueError, match=msg):
        parser(text)


def test_eos_json_with_echo_and_trailing_prompt():
    body = fx("eos_show_interfaces_status.json")
    want = sp.eos_interfaces_status(body)
    assert sp.eos_interfaces_status("show interfaces status | json\r\n" + body.replace("\n", "\r\n")
                                    + "\r\nleaf1# ") == want
    assert sp.eos_interfaces_status(body + "\nleaf1(config)#") == want


def test_nvue_table_trailing_prompt_is_not_an_interface():
    text = fx("nvue_show_interface_lldp.txt").rstrip("\n") + "\ncumulus@leaf01:mgmt:~$ \n"
    assert sp.nvue_lldp(text) == sp.nvue_lldp(fx("nvue_show_interface_lldp.txt"))


def test_port_config_eos_blank_lines_and_mbps_speeds():
    # a whitespace-only line inside a section crashed (IndexError); 'speed forced 1000full' is 1 Gb/s, not 1000
    eos = "interface Ethernet1\r\n   speed forced 1000full\r\n   \r\n   mtu 9214\r\n!\n" \
          "interface Ethernet2\n   speed forced 10000full\n!\ninterface Ethernet3/1\n   speed 100g-4\n!\n" \
          "interface Ethernet4/1\n   speed auto 25gfull\n!\ninterface Ethernet5/1\n   speed auto\n"
    got = sp.port_config("eos", eos)
    assert got["Ethernet1"]["speed"] == 1.0 and got["Ethernet1"]["mtu"] == 9214
    assert [got[p]["speed"] for p in ("Ethernet2", "Ethernet3/1", "Ethernet4/1", "Ethernet5/1")] == \
        [10.0, 100.0, 25.0, None]


def test_port_config_expands_onyx_and_nvue_ranges():
    # 'interface ethernet 1/2-1/4 ...' and 'nv set interface swp1-3,swp51 ...' were dropped / read as one port
    onyx = "interface ethernet 1/2-1/4 speed 10G force\ninterface ethernet 1/2-1/4 mtu 9216 force\n" \
           "interface ethernet 1/1/1-1/1/2 shutdown\ninterface ethernet 1/9 mtu\n"
    got = sp.port_config("onyx", onyx)
    assert sorted(got) == ["1/1/1", "1/1/2", "1/2", "1/3", "1/4", "1/9"]
    assert got["1/3"]["speed"] == 10.0 and got["1/4"]["mtu"] == 9216 and got["1/1/2"]["shutdown"]
    assert got["1/9"]["mtu"] is None
    with pytest.raises(ValueError, match="range"):
        sp.port_config("onyx", "interface ethernet 1/4-2/1 mtu 9216 force\n")
    nv = sp.port_config("cumulus", "nv set interface swp1-3,swp51 link mtu 9216\nnv set interface swp1s0-1 link "
                                   "state down\n")
    assert sorted(nv) == ["swp1", "swp1s0", "swp1s1", "swp2", "swp3", "swp51"]
    assert nv["swp2"]["mtu"] == 9216 and nv["swp1s1"]["shutdown"]


def test_onyx_status_with_the_echoed_command_of_the_pastebin_capture():
    # pastebin.com/YCcKsLSW starts with the prompt and the echoed (abbreviated) command, then a blank line
    text = "ypsi-sx6012-1 [standalone: master] > show int et status\n \n" \
        + fx("onyx_show_interfaces_ethernet_status.txt") + " \nypsi-sx6012-1 [standalone: master] > \n"
    assert sp.onyx_interfaces_status(text) == sp.onyx_interfaces_status(fx("onyx_show_interfaces_ethernet_status.txt"))


def test_a_bare_speed_string_is_mbps_as_its_docstring_says():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.show_parse import speed_gbps
    assert speed_gbps("100000") == 100.0 and speed_gbps("25000") == 25.0  # NVUE / ethtool Mb/s
    assert speed_gbps("100") == 100.0 and speed_gbps("100G") == 100.0 and speed_gbps("40 Gbps") == 40.0
    assert speed_gbps("100000Mb/s") == 100.0 and speed_gbps(100000000000) == 100.0
