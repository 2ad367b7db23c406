"""module_utils/network/ib_parse.py against real infiniband-diags outputs (tests/unit/fixtures/fabric/README.md) and
the printf formats of rdma-core's infiniband-diags."""
from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refusal import assert_refused
from test_parser_contract import FAST, outcome

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_parse as ib

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


PARSERS = {"sminfo": ib.parse_sminfo, "iblinkinfo": ib.parse_iblinkinfo, "ibnetdiscover": ib.parse_ibnetdiscover,
           "ibstat": ib.parse_ibstat, "ibstatus": ib.parse_ibstatus}


def test_fixtures_are_in_the_readme():
    readme = fx("README.md")
    for f in os.listdir(FIX):
        if f.split("__")[0] in PARSERS:
            assert f in readme, f


def test_sminfo_master_and_no_sm():
    v = ib.parse_sminfo(fx("sminfo__rdma_notes_master.txt"))
    assert v == {"lid": 37, "guid": "0x7cfe90030016aef1", "activity": 4484381, "priority": 14, "state": "MASTER",
                 "master": True, "error": None}
    assert ib.parse_sminfo(fx("sminfo__ibsim_guide_master.txt"))["guid"] == "0x0000000000100001"
    none = ib.parse_sminfo(fx("sminfo__ofed_readme_no_sm.txt"))
    assert none["error"] == "sminfo: iberror: query failed" and not none["master"] and none["guid"] is None
    # sminfo.c: state 2 SMINFO_STANDBY; the rest of the line from the master fixture
    standby = ib.parse_sminfo("sminfo: sm lid 37 sm guid 0x7cfe90030016aef1, activity count 4484381 priority 14 "
                              "state 2 SMINFO_STANDBY\n")
    assert standby["state"] == "STANDBY" and not standby["master"]


def test_sminfo_refusals():
    assert_refused(ib.parse_sminfo, "sminfo: sm lid 37 sm guid 0x7c, activity count 1 priority 14 state 3 "
                                    "SMINFO_STANDBY\n", "sminfo", "state 3 named")
    assert_refused(ib.parse_sminfo, "hello\n", "sminfo", "expected")
    assert_refused(ib.parse_sminfo, fx("sminfo__rdma_notes_master.txt").rstrip("\n"), "sminfo", "no newline")
    assert_refused(ib.parse_sminfo, fx("sminfo__rdma_notes_master.txt") * 2, "sminfo", "second SM")


def test_iblinkinfo_switch_and_ca_ports():
    ports = ib.parse_iblinkinfo(fx("iblinkinfo__dbx1000_rdma_readme_qdr.txt"))
    sw = [p for p in ports if p["node_type"] == "Switch"]
    assert len(sw) == 18 and sw[0]["node_guid"] == "0x0002c902004b2678"
    assert sw[0]["node_desc"] == "Infiniscale-IV Mellanox Technologies"
    p9 = [p for p in sw if p["port"] == 9][0]
    assert (p9["width"], p9["lanes"], p9["speed"], p9["state"], p9["phys_state"]) == ("4X", 4, "QDR", "Active",
                                                                                      "LinkUp")
    assert (p9["peer_lid"], p9["peer_port"], p9["peer_desc"]) == (1, 1, "teaker-4 HCA-1")
    down = [p for p in sw if p["state"] == "Down"]
    assert len(down) == 9 and down[0]["phys_state"] == "Polling" and down[0]["peer_desc"] is None
    ca = [p for p in ports if p["node_type"] == "CA"]
    assert ca[0]["port_guid"] == "0xf45214030091b9f1" and ca[0]["node_desc"] == "teaker-4 HCA-1"
    two = [p for p in ca if p["node_desc"] == "teaker-9 HCA-1"]
    assert [p["port"] for p in two] == [1, 2]


def test_iblinkinfo_line_mode_and_could_be():
    # iblinkinfo.c print_port with line_mode: "0x%016 \"%30s\" " then the port, link and peer with its GUID;
    # get_max_msg's "Could be 4X" - the values of the EDR fixtures of this directory
    line = ('0xec0d9a0300ec8480 "SwitchIB Mellanox Technologies"     23   11[  ] ==( 1X      25.78125 Gbps '
            'Active/  LinkUp)==>  0x506b4b030043fa3e      7    1[  ] "gpu002 HCA-1" (Could be 4X )\n')
    (p,) = ib.parse_iblinkinfo(line)
    assert p["node_type"] is None and p["port_guid"] == "0xec0d9a0300ec8480"
    assert p["node_desc"] == "SwitchIB Mellanox Technologies" and p["peer_guid"] == "0x506b4b030043fa3e"
    assert (p["width"], p["speed"], p["could_be_width"]) == ("1X", "EDR", "4X")


@pytest.mark.parametrize("speed,gen", [("2.5 Gbps", "SDR"), ("5.0 Gbps", "DDR"), ("10.0 Gbps", "QDR"),
                                       ("10.0 Gbps (FDR10)", "FDR10"), ("14.0625 Gbps", "FDR"),
                                       ("25.78125 Gbps", "EDR"), ("53.125 Gbps", "HDR"), ("106.25 Gbps", "NDR"),
                                       ("212.5 Gbps", "XDR"), ("3.3 Gbps", None)])
def test_lane_rates(speed, gen):
    assert ib.speed_of_lane_rate(speed) == gen


def test_iblinkinfo_refusals():
    text = fx("iblinkinfo__dbx1000_rdma_readme_qdr.txt")
    assert_refused(ib.parse_iblinkinfo, text.replace("10.0 Gbps Active/  LinkUp)==>       1    1",
                                                     "11.0 Gbps Active/  LinkUp)==>       1    1"),
                   "iblinkinfo", "unknown lane rate")
    # `iblinkinfo | grep Up` drops the node headers: a port line without a node is refused
    assert_refused(ib.parse_iblinkinfo, text.split("\n", 1)[1], "iblinkinfo", "before any node header")
    assert_refused(ib.parse_iblinkinfo, "", "iblinkinfo", "no ports")


def test_ibnetdiscover_edr_leaf_with_a_ddr_link():
    t = ib.parse_ibnetdiscover(fx("ibnetdiscover__edr_fabric_viewer_one_leaf.txt"))
    (sw,) = t["nodes"]
    assert (sw["type"], sw["guid"], sw["ports"], sw["lid"]) == ("Switch", "0xec0d9a0300ec8480", 36, 23)
    assert len(sw["links"]) == 36
    l11 = [x for x in sw["links"] if x["port"] == 11][0]
    assert (l11["peer_type"], l11["peer_guid"], l11["peer_port"], l11["width"], l11["speed"]) == (
        "Switch", "0xec0d9a0300ec8200", 11, "4X", "DDR")
    l13 = [x for x in sw["links"] if x["port"] == 13][0]
    assert l13["peer_desc"] == "gpu045 HCA-1" and l13["peer_port_guid"] == "0x08c0eb0300ddbf02"
    assert t["initiated_from"]["node"] == "0x506b4b030043f9e2"


def test_ibnetdiscover_man_page_example():
    t = ib.parse_ibnetdiscover(fx("ibnetdiscover__rdma_core_man_topology_example.txt"))
    types = [n["type"] for n in t["nodes"]]
    assert types.count("Switch") == 2 and types.count("Ca") == 4
    ca = [n for n in t["nodes"] if n["guid"] == "0x0008f10403960558"][0]
    p1 = [x for x in ca["links"] if x["port"] == 1][0]
    assert p1["port_guid"] == "0x0008f10403960559" and p1["peer_port"] == 12 and p1["width"] == "1X"
    sw = [n for n in t["nodes"] if n["guid"] == "0x0008f10400410015"][0]
    assert [x for x in sw["links"] if x["port"] == 1][0]["width"] == "1X"


def test_ibnetdiscover_refusals():
    text = fx("ibnetdiscover__edr_fabric_viewer_one_leaf.txt")
    assert_refused(ib.parse_ibnetdiscover, text + text.split("switchguid")[1].split("\n", 1)[1], "ibnetdiscover",
                   "twice")
    assert_refused(ib.parse_ibnetdiscover, "\n".join(text.splitlines()[-3:]) + "\n", "ibnetdiscover",
                   "before any Switch")
    assert_refused(ib.parse_ibnetdiscover, text.replace("lid 101 4xEDR", "4xEDR"), "ibnetdiscover", "comment")
    assert_refused(ib.parse_ibnetdiscover, "#\n# Topology file: generated on x\n#\n", "ibnetdiscover", "no nodes")


def test_ibstat():
    (ca,) = ib.parse_ibstat(fx("ibstat__hpl_edr_notes.txt"))
    assert ca["ca"] == "mlx5_0" and ca["ca_type"] == "MT4115" and ca["node_guid"] == "0xec0d9a03003d677a"
    (p,) = ca["ports"]
    assert (p["state"], p["phys_state"], p["rate_gbps"], p["speed"], p["base_lid"], p["link_layer"]) == (
        "Active", "LinkUp", 100.0, "EDR", 1, "InfiniBand")
    hdr = ib.parse_ibstat(fx("ibstat__lustreperfmon_issue27_hdr.txt"))
    assert [c["ca"] for c in hdr] == ["mlx5_4", "mlx5_2"] and hdr[0]["ports"][0]["speed"] == "HDR"
    assert hdr[1]["ports"][0]["state"] == "Down" and hdr[1]["ports"][0]["phys_state"] == "Disabled"
    cut = fx("ibstat__hpl_edr_notes.txt").split("                State")[0]
    assert_refused(ib.parse_ibstat, cut, "ibstat", "cut off")


def test_ibstatus():
    ports = ib.parse_ibstatus(fx("ibstatus__dbx1000_rdma_readme_qdr.txt"))
    assert [(p["state"], p["phys_state"], p["width"], p["speed"], p["rate_gbps"]) for p in ports] == [
        ("ACTIVE", "LinkUp", "4X", "QDR", 40.0), ("DOWN", "Disabled", "1X", "QDR", 10.0)]
    assert ports[0]["base_lid"] == 10 and ports[0]["sm_lid"] == 12
    (ndr,) = ib.parse_ibstatus(fx("ibstatus__cx7_ndr200_split_guide.txt"))
    assert (ndr["width"], ndr["lanes"], ndr["speed"], ndr["rate_gbps"]) == ("2X", 2, "NDR", 200.0)
    cut = "".join(fx("ibstatus__cx7_ndr200_split_guide.txt").splitlines(keepends=True)[:5])
    assert_refused(ib.parse_ibstatus, cut, "ibstatus", "cut off")


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(data=st.one_of(st.binary(max_size=300).map(lambda b: b.decode("latin-1")), st.text(max_size=300)))
def test_noise_is_a_value_or_value_error(name, data):
    outcome(PARSERS[name], data)


@pytest.mark.parametrize("name", [f for f in sorted(os.listdir(FIX)) if f.split("__")[0] in PARSERS])
def test_cut_inside_the_last_line_is_refused(name):
    text = fx(name)
    kind, _ = outcome(PARSERS[name.split("__")[0]], text.rstrip("\n")[:-3])
    assert kind == "error"
