"""VLANs, SVIs and routed ports in the switch model (switch.vlans, switch.ports.<port>.vlan/address):
validation, rendering per platform, the managed scope of the diff and the preflight subnet cross-check."""
from __future__ import annotations

import os
import shutil

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.model import validate
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.diff import remediation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import cross_check, structured_config
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render
from test_switch_helpers import REFERENCE, eos_section, inventory_path, pod_model_of

from inventory_util import edit_yaml, preflight, texts

PROFILES = ["ess3000-dgx", "isilon-f800-dgx1", "powerscale-f800-dgxa100"]


def _errors(model, switch=None):
    found = [f for f in validate(model, PROFILES) if f.severity == "error"]
    return [f for f in found if switch is None or f.host == switch]


def _eos_with_vlans():
    """004's data-sw1 with the DGX ports of subnet 5 on VLAN 105 (SVI .1) and an Isilon port routed."""
    model = pod_model_of("dgxpod")
    sw = model["hosts"]["data-sw1"]["vars"]["switch"]
    sw["vlans"] = {105: {"name": "data-5", "address": "10.55.5.1/24"}, 112: {"name": "data-12"}}
    sw["ports"] = {"Ethernet1/1": {"vlan": 105}, "Ethernet10/1": {"vlan": 112},
                   "Ethernet30/1": {"address": "10.99.0.1/30"}}
    return model


def _nvue_with_vlans():
    """001's sn3700v-1 with storage-1 ports on VLAN 11 (SVI .1) and storage-3 ports on VLAN 13 (no SVI)."""
    model = pod_model_of("dgxa100-powerscale")
    sw = model["hosts"]["sn3700v-1"]["vars"]["switch"]
    sw["vlans"] = {11: {"name": "storage-1", "address": "10.61.11.1/24"}, 13: {}}
    sw["ports"].update({"swp1": {"vlan": 11}, "swp5": {"vlan": 13}, "swp20": {"address": "10.99.1.1/31"}})
    return model


# ------------------------------------------------------------------------------------------- model
def test_reference_pods_have_no_vlans():
    for pod in REFERENCE:
        for sw, info in pod_model_of(pod)["hosts"].items():
            if "switches" in info["groups"]:
                c = structured_config(pod_model_of(pod), sw)
                assert c["vlans"] == [] and not any("vlan" in i or "address" in i for i in c["interfaces"])


def test_onyx_pod_fixture_passes_preflight():
    findings, _summary = preflight(inventory_path("onyx-pod"))
    assert texts(findings) == [] and texts(findings, "warning") == []


def test_structured_vlans_and_ports():
    c = structured_config(_eos_with_vlans(), "data-sw1")
    assert c["vlans"] == [{"id": 105, "name": "data-5", "address": "10.55.5.1/24", "subnet": "10.55.5.0/24"},
                          {"id": 112, "name": "data-12"}]
    ports = {i["name"]: i for i in c["interfaces"]}
    assert ports["Ethernet1/1"]["vlan"] == 105 and "vlan" not in ports["Ethernet2/1"]
    assert ports["Ethernet30/1"]["address"] == "10.99.0.1/30" and "description" not in ports["Ethernet30/1"]


@pytest.mark.parametrize("change,path,text", [
    (lambda sw: sw.update(vlans={4095: {}}), "switch.vlans.4095", "not an integer in 1..4094"),
    (lambda sw: sw.update(vlans={0: {}}), "switch.vlans.0", "not an integer in 1..4094"),
    (lambda sw: sw.update(vlans={"abc": {}}), "switch.vlans.abc", "not an integer in 1..4094"),
    (lambda sw: sw.update(vlans={10: {"address": "10.55.5.1"}}), "switch.vlans.10.address",
     "is not an IPv4 interface address"),
    (lambda sw: sw.update(vlans={10: {"address": "10.55.5.0/24"}}), "switch.vlans.10.address",
     "network or broadcast address"),
    (lambda sw: sw.update(vlans={10: {"name": "has space"}}), "switch.vlans.10.name", "not a usable VLAN name"),
    (lambda sw: sw.update(ports={"Ethernet1/1": {"vlan": 20}}), "switch.ports.Ethernet1/1.vlan",
     "VLAN 20 is not declared in switch.vlans"),
    (lambda sw: sw.update(ports={"Ethernet1/1": {"vlan": 5000}}), "switch.ports.Ethernet1/1.vlan",
     "outside 1..4094"),
    (lambda sw: sw.update(vlans={10: {"address": "10.55.5.1/24"}, 11: {"address": "10.55.5.129/25"}}),
     "switch.vlans.11.address", "overlaps 10.55.5.0/24 (switch.vlans.10.address)"),
    (lambda sw: sw.update(vlans={10: {"address": "10.55.5.1/24"}},
                          ports={"Ethernet30/1": {"address": "10.55.5.9/30"}}),
     "switch.ports.Ethernet30/1.address", "overlaps"),
    (lambda sw: sw.update(vlans={10: {}}, ports={"Ethernet1/1": {"vlan": 10, "address": "10.9.9.1/30"}}),
     "switch.ports.Ethernet1/1", "not both"),
    (lambda sw: sw.update(vlans={10: {}}, ports={"Ethernet31/1": {"vlan": 10}}), "switch.ports.Ethernet31/1.vlan",
     "port-channel member"),
])
def test_bad_vlan_input_is_a_clear_error_naming_switch_and_key(change, path, text):
    model = pod_model_of("dgxpod")
    change(model["hosts"]["data-sw1"]["vars"]["switch"])
    found = _errors(model, "data-sw1")
    assert any(f.key() == path and text in f.message for f in found), [f.format() for f in found]
    if "outside 1..4094" not in text and "not an IPv4" not in text:  # schema errors stop preflight earlier
        with pytest.raises(ValueError, match=r"^data-sw1: %s" % path.replace(".", r"\.")):
            structured_config(model, "data-sw1")


def test_infiniband_switch_takes_no_vlans():
    model = pod_model_of("dgx-ess3000")
    model["hosts"]["sb7800-1"]["vars"]["switch"]["vlans"] = {10: {}}
    assert any(f.key() == "switch.vlans" and "InfiniBand" in f.message for f in _errors(model, "sb7800-1"))


def test_onyx_routed_port_is_refused():
    model = pod_model_of("onyx-pod")
    model["hosts"]["sn2700-1"]["vars"]["switch"]["ports"]["1/20"] = {"address": "10.99.0.1/30"}
    assert any(f.key() == "switch.ports.1/20.address" for f in _errors(model, "sn2700-1"))


# ------------------------------------------------------------------------------------------- render
def test_eos_renders_vlans_svis_access_and_routed_ports():
    text = render(structured_config(_eos_with_vlans(), "data-sw1"))
    assert eos_section(text.splitlines(), "vlan 105") == ["   name data-5"]
    assert eos_section(text.splitlines(), "vlan 112") == ["   name data-12"]
    assert "   switchport access vlan 105" in eos_section(text.splitlines(), "interface Ethernet1/1")
    assert "   switchport access vlan 112" in eos_section(text.splitlines(), "interface Ethernet10/1")
    assert not any("switchport" in ln for ln in eos_section(text.splitlines(), "interface Ethernet2/1"))
    assert eos_section(text.splitlines(), "interface Ethernet30/1") == ["   mtu 9214", "   no switchport",
                                                         "   ip address 10.99.0.1/30"]
    assert eos_section(text.splitlines(), "interface Vlan105") == ["   ip address 10.55.5.1/24"]
    assert "interface Vlan112" not in text  # no SVI without an address
    lines = text.splitlines()  # VLANs before the ports that use them, SVIs after the Ethernet ports
    assert lines.index("vlan 105") < lines.index("interface Port-Channel10") < lines.index("interface Vlan105")


def test_nvue_renders_bridge_vlans_access_ports_and_svis():
    lines = render(structured_config(_nvue_with_vlans(), "sn3700v-1")).splitlines()
    for want in ("nv set bridge domain br_default vlan 11", "nv set bridge domain br_default vlan 13",
                 "nv set interface swp1 bridge domain br_default",
                 "nv set interface swp1 bridge domain br_default access 11",
                 "nv set interface swp5 bridge domain br_default access 13",
                 "nv set interface swp20 ip address 10.99.1.1/31",
                 "nv set interface vlan11 ip address 10.61.11.1/24"):
        assert want in lines, want
    assert "nv set interface vlan13 ip address" not in "\n".join(lines)
    assert "nv set interface swp20 bridge domain br_default" not in lines  # routed, not bridged
    assert not any(ln.startswith("nv set interface swp2 bridge domain br_default access") for ln in lines)


def test_onyx_golden_has_vlan_lines():
    lines = render(structured_config(pod_model_of("onyx-pod"), "sn2700-1")).splitlines()
    for want in ("vlan 10", "vlan 10 name data-a", "interface ethernet 1/1 switchport access vlan 10",
                 "interface ethernet 1/9 switchport access vlan 20", "interface vlan 20",
                 "interface vlan 20 ip address 203.0.113.65/27", "ip routing", "roce lossless",
                 "ip route vrf default 0.0.0.0/0 203.0.113.1", "interface ethernet 1/31 channel-group 10 mode active"):
        assert want in lines, want
    assert lines.index("vlan 10") < lines.index("interface ethernet 1/1 switchport access vlan 10")


def test_ib_template_ignores_vlans():
    c = structured_config(pod_model_of("dgx-ess3000"), "sb7800-1")
    c["vlans"] = [{"id": 10, "name": "x", "address": "10.0.0.1/24", "subnet": "10.0.0.0/24"}]
    assert "vlan" not in render(c)


# ------------------------------------------------------------------------------------------- diff scope
def test_eos_diff_fixes_stale_access_vlan_and_keeps_unmanaged_vlans():
    desired = render(structured_config(_eos_with_vlans(), "data-sw1"))
    running = desired.replace("   switchport access vlan 105", "   switchport access vlan 999").replace(
        "end\n", "vlan 999\n   name other-team\n!\nend\n")
    rem = remediation("eos", running, desired)
    assert "interface Ethernet1/1" in rem.commands
    assert "   switchport access vlan 105" in rem.commands
    assert not any("vlan 999" in c and "switchport" not in c for c in rem.commands), rem.commands
    assert "no vlan 999" not in rem.commands
    assert not remediation("eos", desired + "vlan 999\n   name other-team\n", desired).changed


def test_onyx_diff_fixes_stale_access_vlan_and_name_and_keeps_unmanaged_vlans():
    desired = render(structured_config(pod_model_of("onyx-pod"), "sn2700-1"))
    running = (desired.replace("interface ethernet 1/1 switchport access vlan 10",
                               "interface ethernet 1/1 switchport access vlan 30")
               .replace("vlan 20 name storage", "vlan 20 name old-name")
               .replace("interface vlan 10 ip address 203.0.113.33/27",
                        "interface vlan 10 ip address 203.0.113.33/27 primary")
               + "vlan 30\nvlan 30 name other-team\n")
    rem = remediation("onyx", running, desired)
    assert rem.commands == ["vlan 20 name storage", "interface ethernet 1/1 switchport access vlan 10"]
    # a port the model takes off its VLAN goes back to the default VLAN
    model = pod_model_of("onyx-pod")
    del model["hosts"]["sn2700-1"]["vars"]["switch"]["ports"]["1/9"]
    rem = remediation("onyx", desired, render(structured_config(model, "sn2700-1")))
    assert rem.commands == ["interface ethernet 1/9 no switchport access vlan"]


def test_nvue_diff_fixes_stale_access_vlan_and_keeps_unmanaged_vlans():
    desired = render(structured_config(_nvue_with_vlans(), "sn3700v-1"))
    running = desired.replace("swp1 bridge domain br_default access 11", "swp1 bridge domain br_default access 99") \
        + "nv set bridge domain br_default vlan 99\nnv set interface vlan99 ip address 10.9.9.1/24\n"
    rem = remediation("cumulus", running, desired)
    assert rem.commands == ["nv unset interface swp1 bridge domain br_default access 99",
                            "nv set interface swp1 bridge domain br_default access 11"]


# ------------------------------------------------------------------------------------------- preflight
def test_cross_check_nic_outside_the_svi_subnet_names_switch_port_host_nic_and_subnet():
    model = _eos_with_vlans()
    assert [f for f in cross_check(model) if "VLAN subnet" in f.message] == []
    model["hosts"]["data-sw1"]["vars"]["switch"]["ports"]["Ethernet10/1"] = {"vlan": 105}  # DGX1-1 enp12s0
    found = [f for f in cross_check(model) if "VLAN subnet" in f.message]
    assert len(found) == 1, [f.format() for f in found]
    f = found[0]
    assert f.host == "DGX1-1" and f.path == "nics[1].address"
    assert "data-sw1 Ethernet10/1 (host DGX1-1 NIC enp12s0)" in f.message
    assert "10.55.12.232" in f.message and "SVI subnet 10.55.5.0/24 of VLAN 105" in f.message


def test_cross_check_routed_port_subnet():
    model = pod_model_of("dgxpod")
    model["hosts"]["data-sw1"]["vars"]["switch"]["ports"] = {"Ethernet1/1": {"address": "10.99.0.1/30"}}
    found = [f for f in cross_check(model) if "VLAN subnet" in f.message]
    assert len(found) == 1 and "routed port's subnet 10.99.0.0/30" in found[0].message


def test_preflight_reports_the_subnet_mismatch_with_file_and_line(tmp_path):
    inv = str(tmp_path / "onyx-pod")
    shutil.copytree(inventory_path("onyx-pod"), inv)

    def move(data):
        data["switch"]["ports"]["1/9"]["vlan"] = 10  # nfs-1 eth1 (storage subnet) onto the data-a VLAN
    edit_yaml(os.path.join(inv, "host_vars", "sn2700-1.yml"), move)
    errors = texts(preflight(inv)[0])
    assert len(errors) == 1, errors
    assert "host_vars/nfs-1.yml" in errors[0] and "nics[1].address" in errors[0]
    assert "sn2700-1 1/9 (host nfs-1 NIC eth1)" in errors[0] and "203.0.113.32/27 of VLAN 10" in errors[0]

    def undeclared(data):
        data["switch"]["ports"]["1/9"]["vlan"] = 30
    edit_yaml(os.path.join(inv, "host_vars", "sn2700-1.yml"), undeclared)
    errors = texts(preflight(inv)[0])
    assert len(errors) == 1 and "switch.ports.1/9.vlan" in errors[0] and "sn2700-1" in errors[0]
    assert "VLAN 30 is not declared" in errors[0]
