"""Lossless-state parsers (module_utils/switch/verify.py) against vendor outputs (sources: fixtures/switch/SOURCES.md),
and the remediation diff for Onyx/NVUE edge cases (module_utils/switch/diff.py)."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.diff import onyx_normalise, remediation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.verify import (parse_eos_pfc, parse_nvue_roce,
    parse_onyx_roce, verify_lossless)
from test_switch_helpers import FIXTURES


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        return fh.read()


def test_onyx_show_roce_from_the_onyx_manual():
    p = parse_onyx_roce(fixture("onyx_show_roce.txt"))
    assert p["mode"] == "lossless" and p["trust"] == "L3" and p["pfc"] is True and p["pfc_priorities"] == [3]
    assert p["tcs"] == {"RoCE": {"switch_priority": 3, "tc": 3}, "CNP": {"switch_priority": 6, "tc": 6}}
    assert verify_lossless("onyx", fixture("onyx_show_roce.txt"), {"pfc_priority": 3})["ok"]
    bad = verify_lossless("onyx", fixture("onyx_show_roce.txt"), {"pfc_priority": 4})
    assert not bad["ok"] and "switch-priority 4" in bad["problems"][0]
    off = verify_lossless("onyx", "RoCE mode: N/A\n", {"pfc_priority": 3})
    assert not off["ok"] and "disabled" in off["problems"][0]


def test_nvue_show_qos_roce_table_and_json():
    table = parse_nvue_roce(fixture("nvue_show_qos_roce.txt"))
    js = parse_nvue_roce(fixture("nvue_show_qos_roce.json"))
    assert table == js == {"enable": True, "mode": "lossless", "pfc_priority": 3, "trust": "pcp,dscp"}
    assert verify_lossless("cumulus", fixture("nvue_show_qos_roce.json"), {"pfc_priority": 3})["ok"]
    lossy = fixture("nvue_show_qos_roce.json").replace('"lossless"', '"lossy"')
    assert not verify_lossless("cumulus", lossy, {"pfc_priority": 3})["ok"]
    assert verify_lossless("cumulus", lossy, {})["ok"]  # nothing lossless expected


def test_eos_show_priority_flow_control():
    p = parse_eos_pfc(fixture("eos_show_priority_flow_control.txt"))
    assert p["layout"] == "flags" and p["global"] is True
    assert p["ports"]["Et1/1"] == {"enabled": True, "active": True, "watchdog": False, "priorities": [3]}
    assert p["ports"]["Et19/1"]["priorities"] == [3, 4] and p["ports"]["Et20/1"]["enabled"] is False
    res = verify_lossless("eos", fixture("eos_show_priority_flow_control.txt"),
                          {"pfc_priority": 3, "ports": ["Ethernet1/1", "Ethernet20/1", "Ethernet30/1"]})
    assert res["problems"] == ["Ethernet20/1: PFC is not enabled", "Ethernet30/1: PFC is not enabled"]


def test_onyx_running_config_ranges_and_quotes_are_normalised():
    running = """##
## Interface Ethernet configuration
##
   interface ethernet 1/1 speed 1G force
   interface ethernet 1/2-1/4 speed 10G force
   interface ethernet 1/1 description TRUNK TO Dell7048
   interface ethernet 1/9 description unmanaged port
   username monitor capability monitor
"""
    lines = onyx_normalise(running)
    assert "interface ethernet 1/3 speed 10G force" in lines
    desired = 'hostname sw\ninterface ethernet 1/1 description "TRUNK TO Dell7048"\n' \
              "interface ethernet 1/1 speed 100G force\ninterface ethernet 1/3 speed 10G force\n"
    rem = remediation("onyx", running + "   hostname sw\n", desired)
    assert rem.commands == ["interface ethernet 1/1 speed 100G force"]  # 1/9 and the user are not managed


def test_nvue_remediation_unsets_leaves_and_list_entries():
    running = "nv set system hostname s\nnv set interface swp1 link mtu 1500\nnv set interface swp1 link speed 40G\n" \
              "nv set interface bond1 bond member swp3\nnv set interface swp9 link mtu 1500\n"
    desired = "nv set system hostname s\nnv set interface swp1 link mtu 9216\nnv set interface bond1 bond member swp4\n"
    rem = remediation("cumulus", running, desired)
    assert rem.commands == ["nv unset interface swp1 link speed", "nv unset interface bond1 bond member swp3",
                            "nv set interface swp1 link mtu 9216", "nv set interface bond1 bond member swp4"]


def test_eos_remediation_keeps_unmanaged_lines():
    running = "hostname s\n!\nusername admin privilege 15 secret sha512 x\n!\ninterface Ethernet1/1\n   mtu 1500\n" \
              "!\ninterface Ethernet9/1\n   description other\n!\nip route 10.0.0.0/8 10.55.67.9\n!\nend\n"
    desired = "hostname s\n!\ninterface Ethernet1/1\n   mtu 9214\n!\nend\n"
    rem = remediation("eos", running, desired)
    assert rem.commands == ["no ip route 10.0.0.0/8 10.55.67.9", "interface Ethernet1/1", "   mtu 9214", "exit"]


def test_eos_show_priority_flow_control_column_layout():
    """The other published table shape (Enabled/Active as Yes/No, empty priorities when off)."""
    p = parse_eos_pfc(fixture("eos_show_priority_flow_control_columns.txt"))
    assert p["layout"] == "columns" and p["global"] is None
    assert p["ports"]["Et1/1"] == {"enabled": True, "active": True, "watchdog": None, "priorities": [3]}
    assert p["ports"]["Et2/1"]["active"] is False and p["ports"]["Et19/1"]["priorities"] == [3, 4]
    assert p["ports"]["Et20/1"] == {"enabled": False, "active": False, "watchdog": None, "priorities": []}
    res = verify_lossless("eos", fixture("eos_show_priority_flow_control_columns.txt"),
                          {"pfc_priority": 3, "ports": ["Ethernet1/1", "Ethernet19/1", "Ethernet20/1"]})
    assert res["problems"] == ["Ethernet20/1: PFC is not enabled"]
    four = verify_lossless("eos", fixture("eos_show_priority_flow_control_columns.txt"),
                           {"pfc_priority": 4, "ports": ["Ethernet1/1"]})
    assert four["problems"] == ["Ethernet1/1: priority 4 is not no-drop (no-drop: 3)"]


def test_eos_flags_layout_from_the_fake_switch_matches_the_fixture_parse():
    """The fake switch renders the flags layout from its running config; the parser reads it back."""

    from sim.fakeswitch.cli import eos_show_pfc
    running = [["interface Ethernet1/1", ["mtu 9214", "priority-flow-control on",
                                          "priority-flow-control priority 3 no-drop"]],
               ["interface Ethernet2/1", ["priority-flow-control priority 4 no-drop"]],
               ["interface Ethernet3/1", ["mtu 9214"]]]
    p = parse_eos_pfc(eos_show_pfc(running))
    assert p["layout"] == "flags" and p["global"] is True
    assert p["ports"] == {"Et1/1": {"enabled": True, "active": True, "watchdog": False, "priorities": [3]},
                          "Et2/1": {"enabled": False, "active": False, "watchdog": False, "priorities": [4]}}


def test_eos_unknown_output_is_not_read_as_pfc_off():
    for text in ("% Invalid input\n", "", "Interface  PFC\nEt1/1      on\n"):
        p = parse_eos_pfc(text)
        assert p["layout"] is None and p["ports"] == {}
        res = verify_lossless("eos", text, {"pfc_priority": 3, "ports": ["Ethernet1/1", "Ethernet2/1"]})
        assert not res["ok"] and len(res["problems"]) == 1
        assert "no known port table" in res["problems"][0] and "PFC is not enabled" not in res["problems"][0]
    # nothing expected lossless: an empty or unknown output is fine
    assert verify_lossless("eos", "% Invalid input\n", {"pfc_priority": None, "ports": []})["ok"]
