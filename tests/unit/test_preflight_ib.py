"""Preflight of the InfiniBand keys (issue 40 item 3): switch and HCA port GUIDs, partition keys, IB switch ports;
and the catalogue rows the InfiniBand stage reads (the IB port number of a port name, the width and speed of a link).
Each rejected case edits a copy of the 001 reference inventory (dgxa100-powerscale: 8 HDR rails on two QM8700)."""
from __future__ import annotations

import os

import pytest

from inventory_util import HV, POD, ROOT, assert_case_rejected, copy_inventory, edit_yaml, nic_edit, preflight, texts

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (SWITCH_MODELS, ib_link,
    ib_port_number)

REF = "dgxa100-powerscale"
G1 = "0x98039b0300a1b2c0"
G2 = "0x98039b0300a1b2c8"


def _switch(**values):
    def change(d):
        d["switch"].update(values)
    return change


def _ib_fabric(**values):
    def change(d):
        for f in d["pod"]["fabrics"]:
            if f["name"] == "ib-compute-0":
                f.update(values)
    return change


def _eth_fabric(**values):
    def change(d):
        for f in d["pod"]["fabrics"]:
            if f["name"] == "storage-1":
                f.update(values)
    return change


CASES = [
    ("switch guid malformed", REF, HV % "qm8700-1", _switch(guid="0xabc"), HV % "qm8700-1", "switch.guid",
     "is not a GUID", "0x and 16 hex digits"),
    ("switch guid zero", REF, HV % "qm8700-1", _switch(guid="0x0000000000000000"), HV % "qm8700-1", "switch.guid",
     "zero GUID", "16 hex digits"),
    ("guid on an Ethernet switch", REF, HV % "sn3700v-1", _switch(guid=G1), HV % "sn3700v-1", "switch.guid",
     "Ethernet switch", "remove guid"),
    ("HCA port guid malformed", REF, HV % "dgxa100-1", nic_edit(1, port_guid="98:03:9b:03:00:a1:b2:c0"),
     HV % "dgxa100-1", "nics[1].port_guid", "is not a GUID", "ibstat"),
    ("port guid on an Ethernet NIC", REF, HV % "dgxa100-1", nic_edit(9, port_guid=G1), HV % "dgxa100-1",
     "nics[9].port_guid", "Ethernet fabric 'storage-1'", "remove port_guid"),
    ("IB port outside the QM8700's 1/1..1/40", REF, HV % "dgxa100-1", nic_edit(1, switch_port="1/41"),
     HV % "dgxa100-1", "nics[1].switch_port", "has no port '1/41'", "1/40"),
    ("IB port cabled twice", REF, HV % "dgxa100-2", nic_edit(1, switch_port="1/1"), HV % "dgxa100-2",
     "nics[1].switch_port", "already cabled to dgxa100-1 ibp12s0", "one NIC"),
    ("pkey malformed", REF, POD, _ib_fabric(pkeys=["7fff"]), POD, "pod.fabrics[5].pkeys[0]",
     "is not a partition key", "0x0001..0x7fff"),
    ("pkey 0", REF, POD, _ib_fabric(pkeys=["0x8000"]), POD, "pod.fabrics[5].pkeys[0]", "invalid partition key",
     "0x7fff"),
    ("pkey twice (full and limited membership)", REF, POD, _ib_fabric(pkeys=["0x7fff", "0xffff"]), POD,
     "pod.fabrics[5].pkeys[1]", "listed twice", "once"),
    ("pkeys on an Ethernet fabric", REF, POD, _eth_fabric(pkeys=["0x7fff"]), POD, "pod.fabrics[1].pkeys",
     "partition keys are InfiniBand", "VLANs"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_ib_mistake_rejected_with_file_line_and_fix(tmp_path, case):
    assert_case_rejected(tmp_path, case)


def test_a_guid_given_twice_names_the_first_place(tmp_path):
    inv = copy_inventory(REF, str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "qm8700-1"), _switch(guid=G1))
    edit_yaml(os.path.join(inv, HV % "dgxa100-3"), nic_edit(2, port_guid=G1.upper().replace("0X", "0x")))
    findings, _ = preflight(inv)
    errs = texts(findings)
    assert len(errs) == 1, errs
    assert "nics[2].port_guid" in errs[0] and "given twice: also switch qm8700-1" in errs[0], errs[0]
    assert os.path.join(inv, HV % "dgxa100-3") in errs[0]


def test_guids_and_pkeys_given_well_pass_without_warnings(tmp_path):
    inv = copy_inventory(REF, str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "qm8700-1"), _switch(guid=G1))
    edit_yaml(os.path.join(inv, HV % "qm8700-2"), _switch(guid=G2))
    for n in range(1, 5):
        def change(d, n=n):
            for i in range(1, 9):
                d["nics"][i]["port_guid"] = "0x0c42a10300%02x%04x" % (n, i)
        edit_yaml(os.path.join(inv, HV % ("dgxa100-%d" % n)), change)
    edit_yaml(os.path.join(inv, POD), _ib_fabric(pkeys=["0x7fff", "0x0a01"]))
    findings, _ = preflight(inv)
    assert texts(findings) == [] and texts(findings, "warning") == []


@pytest.mark.parametrize("ref", ["dgxa100-powerscale", "dgxh100-pod", "dgx-ess3000"])
def test_ib_reference_inventories_have_no_findings(ref):
    findings, _ = preflight(os.path.join(ROOT, "inventories", ref))
    assert texts(findings) == [] and texts(findings, "warning") == []


def test_ib_port_numbers_of_the_catalogue():
    qm87, qm97, sb78 = SWITCH_MODELS["QM8700"], SWITCH_MODELS["QM9700"], SWITCH_MODELS["SB7800"]
    assert ib_port_number(qm87, "1/1") == 1 and ib_port_number(qm87, "1/40") == 40
    assert ib_port_number(qm87, "1/41") is None and ib_port_number(qm87, "IB1/3") is None
    # Quantum-2: two ports per OSFP cage
    assert [ib_port_number(qm97, p) for p in ("1/1/1", "1/1/2", "1/2/1", "1/32/2")] == [1, 2, 3, 64]
    assert ib_port_number(qm97, "1/3") is None
    assert ib_port_number(sb78, "1/36") == 36
    assert ib_port_number(SWITCH_MODELS["SN2700"], "1/1") is None  # Ethernet: no IB port


def test_ib_link_of_the_catalogue():
    assert ib_link(SWITCH_MODELS["QM8700"], 200) == ("4X", "HDR")
    assert ib_link(SWITCH_MODELS["QM8700"], 100) == ("2X", "HDR")  # HDR100
    assert ib_link(SWITCH_MODELS["QM8700"]) == ("4X", "HDR")
    assert ib_link(SWITCH_MODELS["QM9700"], 400) == ("4X", "NDR")
    assert ib_link(SWITCH_MODELS["SB7800"], 100) == ("4X", "EDR")
    assert ib_link(SWITCH_MODELS["QM8700"], 75) is None  # no width of HDR makes 75 Gb/s
    assert ib_link(SWITCH_MODELS["SN3700V"], 200) is None
