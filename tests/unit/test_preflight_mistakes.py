"""Preflight against the mistakes an engineer makes writing a real pod's inventory (wrong types, empty strings, a
netmask where a prefix goes, a key on the wrong level, a file for no host, ...). Each case makes one mistake in a
copy of a reference inventory and asserts one readable error - file and line, key, fix - and no traceback."""
from __future__ import annotations

import copy
import os
import re

import pytest

from inventory_util import (HV, POD, PROFILES, assert_case_rejected, copy_inventory, edit_yaml, error_finding,
                            hostvars, preflight, texts)
from inventory_util import nic_edit as _nic, storage_edit as _storage


def _fabric(i, **values):
    def change(d):
        d["pod"]["fabrics"][i].update(values)
    return change



def _switch(**values):
    def change(d):
        d["switch"].update(values)
    return change


def _rename_key(where, old, new):
    def change(d):
        target = where(d)
        target[new] = target.pop(old)
    return change


# (id, reference inventory, file to edit, change, expected file, key, message fragment, fix fragment)
CASES = [
    # wrong types that used to crash preflight with a TypeError/AttributeError
    ("switch-ports-as-a-list", "dgxpod", HV % "data-sw1", _switch(ports=["Ethernet1/1"]),
     HV % "data-sw1", "switch.ports", "['Ethernet1/1'] is not a mapping", "write a mapping"),
    ("switch-mtu-as-a-string", "dgxpod", HV % "data-sw1", _switch(mtu="9214"),
     HV % "data-sw1", "switch.mtu", "'9214' is not an integer", "write an integer"),
    ("switch-port-mtu-as-a-string", "dgxpod", HV % "data-sw1", _switch(ports={"Ethernet1/1": {"mtu": "9214"}}),
     HV % "data-sw1", "switch.ports.Ethernet1/1.mtu", "'9214' is not an integer", "write an integer"),
    # empty strings and stray whitespace that passed and broke the rendered configs
    ("nic-name-empty", "dgxpod", HV % "DGX1-2", _nic(0, name=""),
     HV % "DGX1-2", "nics[0].name", "is empty", "enp5s0"),
    ("nic-name-trailing-space", "dgxpod", HV % "DGX1-2", _nic(0, name="enp5s0 "),
     HV % "DGX1-2", "nics[0].name", "'enp5s0 ' contains whitespace at its end", "write 'enp5s0'"),
    ("rdma-device-empty", "dgxpod", HV % "DGX1-2", _nic(0, rdma_device=""),
     HV % "DGX1-2", "nics[0].rdma_device", "is empty", "or remove the key"),
    ("pod-name-empty", "dgxpod", POD, lambda d: d["pod"].update(name=""),
     POD, "pod.name", "is empty", "write"),
    ("address-with-spaces", "dgxpod", HV % "DGX1-2", _nic(0, address=" 10.55.5.235"),
     HV % "DGX1-2", "nics[0].address", "has spaces around the address", "write 10.55.5.235 without the spaces"),
    # addresses and subnets written the way other tools take them
    ("address-with-prefix-length", "dgxpod", HV % "DGX1-2", _nic(1, address="10.55.12.236/24"),
     HV % "DGX1-2", "nics[1].address", "'10.55.12.236/24' is written with a prefix length",
     "write the address alone (10.55.12.236)"),
    ("address-ipv6", "dgxpod", HV % "DGX1-2", _nic(1, address="fd00:55:12::5"),
     HV % "DGX1-2", "nics[1].address", "is an IPv6 address; the pod model is IPv4 only", "IPv4"),
    ("subnet-with-netmask", "dgxpod", POD, _fabric(1, subnet="10.55.12.0/255.255.255.0"),
     POD, "pod.fabrics[1].subnet", "is not an IPv4 subnet in CIDR form: it is written with a netmask",
     "write it in CIDR form: 10.55.12.0/24"),
    ("subnet-prefix-33", "dgxpod", POD, _fabric(1, subnet="10.0.0.0/33"),
     POD, "pod.fabrics[1].subnet", "prefix length 33 is more than 32", "from 0 to 32"),
    ("subnet-host-bits", "dgxpod", POD, _fabric(1, subnet="10.55.12.1/24"),
     POD, "pod.fabrics[1].subnet", "10.55.12.1 has host bits set", "network address in CIDR form: 10.55.12.0/24"),
    ("subnet-ipv6", "dgxpod", POD, _fabric(1, subnet="fd00:55:12::/64"),
     POD, "pod.fabrics[1].subnet", "IPv6 is not supported", "IPv4 subnet in CIDR form"),
    # a value or key that differs only by case: name the right one
    ("dgx-model-upper-case", "dgxpod", "group_vars/dgx.yml", lambda d: {"dgx_model": "DGX1"},
     "group_vars/dgx.yml", "dgx_model", "'DGX1' is not one of", "use 'dgx1'"),
    ("protocol-upper-case", "dgxpod", POD, _storage(protocol="NFS"),
     POD, "pod.storage.protocol", "'NFS' is not one of", "use 'nfs'"),
    ("platform-upper-case", "dgxpod", HV % "data-sw1", _switch(platform="EOS"),
     HV % "data-sw1", "switch.platform", "'EOS' is not one of", "use 'eos'"),
    ("fabric-key-upper-case", "dgxpod", POD, _rename_key(lambda d: d["pod"]["fabrics"][0], "mtu", "MTU"),
     POD, "pod.fabrics[0].MTU", "unknown key", "did you mean 'mtu'?"),
    ("switch-port-lower-case", "dgxpod", HV % "DGX1-2", _nic(0, switch_port="ethernet2/1"),
     HV % "DGX1-2", "nics[0].switch_port", "data-sw1 has no port 'ethernet2/1'", "did you mean 'Ethernet2/1'?"),
    ("switch-port-eos-short-name", "dgxpod", HV % "DGX1-2", _nic(0, switch_port="Et2/1"),
     HV % "DGX1-2", "nics[0].switch_port", "data-sw1 has no port 'Et2/1'", "did you mean 'Ethernet2/1'?"),
    # storage
    ("storage-node-without-a-data-nic", "dgxpod", HV % "isilon-3",
     lambda d: d.update(nics=[n for n in d["nics"] if n["fabric"] == "mgmt"]),
     HV % "isilon-3", "nics", "the storage node has no NIC on a fabric that carries storage (data-5, data-66)",
     "front-end ports"),
    ("storage-node-without-a-data-nic-ess", "dgx-ess3000", HV % "ess3k2a",
     lambda d: d.update(nics=[n for n in d["nics"] if n["fabric"] == "mgmt"]),
     HV % "ess3k2a", "nics", "the storage node has no NIC on a fabric that carries storage", "remove the node"),
    ("scripts-mount-without-locks", "dgxpod", POD, _storage(scripts_options="nolock"),
     POD, "pod.storage.scripts_options", "nolock on the scripts mount: the RA's scripts/logs mount needs NFS locks",
     "remove nolock from scripts_options"),
    ("mount-options-empty-item", "dgxpod", POD, _storage(data_options="rsize=524288,,wsize=524288"),
     POD, "pod.storage.data_options", "an empty option between two commas", "rsize=524288,wsize=524288"),
    ("mount-option-twice", "dgxpod", POD, _storage(data_options="rsize=524288,wsize=524288,rsize=1048576"),
     POD, "pod.storage.data_options", "option rsize is given twice (rsize=524288 and rsize=1048576)", "keep one"),
    ("protocol-the-profile-is-not-for", "dgxa100-powerscale", POD,
     lambda d: d["pod"]["storage"].update(protocol="spectrum-scale", scale={"cluster_name": "c",
                                                                            "contact_node": "f800-1"}),
     POD, "pod.storage.protocol", "RA profile 'powerscale-f800-dgxa100' is for nfs storage, not spectrum-scale",
     "ess3000-dgx"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mistake_is_rejected(tmp_path, case):
    assert_case_rejected(tmp_path, case)


@pytest.mark.parametrize("edit_file,change,want_key", [
    # a fabric whose own entry is wrong: not also "'data-5' is not a fabric of this pod, did you mean 'data-66'?"
    # on the 17 hosts with a NIC on it
    (POD, _fabric(0, mtu="9000"), "pod.fabrics[0].mtu"),
    (POD, _fabric(1, subnet="10.55.12.0/33"), "pod.fabrics[1].subnet"),
    (POD, lambda d: d["pod"].update(fabrics={f["name"]: f for f in d["pod"]["fabrics"]}), "pod.fabrics"),
    # a switch whose switch variable is wrong: not also "'data-sw2' is not a switch in this inventory" on every NIC
    (HV % "data-sw2", lambda d: d.update(switch=[d["switch"]]), "switch"),
    (HV % "data-sw2", _switch(model="7060cx2-32s"), "switch.model"),
    # members as one string: one error, not one per character ("port 'E' does not exist")
    (HV % "data-sw1", lambda d: d["switch"]["port_channels"][0].update(members="Ethernet31/1"),
     "switch.port_channels[0].members"),
    # an empty value: the schema error, not also "data-sw1 has no port ''"
    (HV % "DGX1-2", _nic(0, switch_port=""), "nics[0].switch_port"),
    (HV % "DGX1-2", _nic(0, fabric=""), "nics[0].fabric"),
])
def test_one_mistake_is_one_error(tmp_path, edit_file, change, want_key):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, edit_file), change)
    errs = [f for f in preflight(inv)[0] if f.severity == "error"]
    assert [f.key() for f in errs] == [want_key], texts(errs)


def test_port_number_out_of_range_gets_no_look_alike_suggestion(tmp_path):
    """Ethernet33/1 on a 32-port switch: the model's range, not "did you mean 'Ethernet3/1'?"."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-2"), _nic(0, switch_port="Ethernet33/1"))
    f = error_finding(inv, preflight(inv)[0], HV % "DGX1-2", "nics[0].switch_port", "has no port 'Ethernet33/1'",
                      "Ethernet1/1 ... Ethernet34")
    assert "did you mean" not in f.fix


def test_host_vars_file_named_after_no_host(tmp_path):
    """host_vars/DGX-1-2.yml for host DGX1-2: Ansible does not read it; the host's missing nics error says why."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    os.rename(os.path.join(inv, HV % "DGX1-2"), os.path.join(inv, HV % "DGX-1-2"))
    findings, _ = preflight(inv)
    f = error_finding(inv, findings, HV % "DGX1-2", "nics", "required for hosts in group 'dgx' but not set",
                      "host_vars/DGX-1-2.yml is not read: no host has that name")
    assert f.host == "DGX1-2"
    w = [f for f in findings if f.severity == "warning"]
    assert len(w) == 1 and w[0].source.endswith(HV % "DGX-1-2"), texts(findings, "warning")
    assert "the inventory has no host 'DGX-1-2'" in w[0].message and w[0].fix.startswith("rename it to ") \
        and "host_vars/DGX1-2.yml if it is for host DGX1-2" in w[0].fix


def test_host_vars_file_of_a_removed_host_is_a_warning(tmp_path):
    """A stale host_vars/DGX1-10.yml: a warning (it is not read), no error, and no rename to a host that has a file."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, HV % "DGX1-10"), "w", encoding="utf-8") as fh:
        fh.write("nics: []\n")
    findings, _ = preflight(inv)
    assert texts(findings) == []
    w = texts(findings, "warning")
    assert len(w) == 1 and "host_vars/DGX1-10.yml is not read: the inventory has no host 'DGX1-10'" in w[0], w
    assert "add DGX1-10 to the inventory (hosts.yml), or delete the file" in w[0]


@pytest.mark.parametrize("edit_file,change,want_error_key,want_key,want_line,want_var", [
    (HV % "DGX1-2", lambda d: {"nic": d["nics"]}, "nics", "nic", 1, "nics"),
    ("group_vars/dgx.yml", lambda d: {"dgx-model": "dgx1"}, "dgx_model", "dgx-model", 1, "dgx_model"),
])
def test_misspelt_model_variable(tmp_path, edit_file, change, want_error_key, want_key, want_line, want_var):
    """nic: / dgx-model: - Ansible reads them as variables of their own; the model variable stays unset."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, edit_file), change)
    findings, _ = preflight(inv)
    error_finding(inv, findings, edit_file, want_error_key,
                  "but not set", "%s:%d sets '%s' instead" % (edit_file, want_line, want_key))
    w = [f for f in findings if f.severity == "warning" and f.key() == want_key]
    assert len(w) == 1 and w[0].source.endswith("%s:%d" % (edit_file, want_line)), texts(findings, "warning")
    assert w[0].fix == "did you mean '%s'?" % want_var


def test_mtu_at_the_top_level_of_host_vars(tmp_path):
    """mtu: 9000 beside nics: - a variable nothing reads (the NIC keeps the fabric's MTU)."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-2"), lambda d: dict(d, mtu=1500))
    findings, _ = preflight(inv)
    assert texts(findings) == []
    w = [f for f in findings if f.severity == "warning"]
    assert len(w) == 1 and w[0].key() == "mtu" and re.search(r"host_vars/DGX1-2\.yml:\d+$", w[0].source)
    assert "nics[].mtu" in w[0].fix and "pod.fabrics[].mtu" in w[0].fix


def _pfc_run(inv, **kw):
    import pod_preflight
    hv = hostvars(inv)
    host_pfc = {h: v["dgx_network_pfc_priority"] for h, v in hv.items()
                if "dgx" in v["group_names"] and "dgx_network_pfc_priority" in v}
    return pod_preflight.run(hv, [inv], PROFILES, 3, host_pfc_priorities=host_pfc, **kw)[0]


@pytest.mark.parametrize("value", [8, -1, "four"])
def test_pfc_priority_out_of_range_in_group_vars(tmp_path, value):
    """dgx_network_pfc_priority: 8 used to be 36 'PFC mismatch' errors whose fix set the switches to 8; 'four' a
    ValueError. Now one error on the group_vars line."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, "group_vars", "dgx.yml"), "a", encoding="utf-8") as fh:
        fh.write("dgx_network_pfc_priority: %s\n" % value)
    errs = [f for f in _pfc_run(inv) if f.severity == "error"]
    assert len(errs) == 1, texts(errs)
    assert errs[0].source.endswith("group_vars/dgx.yml:3") and errs[0].key() == "dgx_network_pfc_priority"
    assert "is not an 802.1p priority (0..7)" in errs[0].message and "from 0 to 7" in errs[0].fix


def test_switch_pfc_priority_not_a_number(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    errs = [f for f in _pfc_run(inv, switch_options={"data-sw1": {"pfc_priority": "x"}}) if f.severity == "error"]
    assert [f.key() for f in errs] == ["switch_config_options.pfc_priority"] and errs[0].host == "data-sw1", \
        texts(errs)


def test_dgx_model_the_profile_is_not_for_is_a_warning(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "group_vars", "dgx.yml"), lambda d: {"dgx_model": "dgxa100"})
    findings, _ = preflight(inv)
    assert texts(findings) == []
    w = [f for f in findings if f.severity == "warning"]
    assert len(w) == 1 and w[0].source.endswith("group_vars/dgx.yml:1") and w[0].more_count == 8, \
        texts(findings, "warning")
    assert "RA profile 'isilon-f800-dgx1' is for dgx1, not dgxa100" in w[0].message
    assert "powerscale-f800-dgxa100" in w[0].fix


def test_preflight_does_not_write_into_the_hostvars():
    """validate() noted its findings on the switch dicts it was given (_lanes, _pc_members): a second run over the
    same hostvars then failed with 'switch._lanes: unknown key'."""
    import pod_preflight
    from inventory_util import ROOT
    inv = os.path.join(ROOT, "inventories", "dgxpod")
    hv = hostvars(inv)
    before = copy.deepcopy(hv)
    for _ in range(2):
        findings, _summary = pod_preflight.run(hv, [inv], PROFILES)
        assert findings == [], texts(findings)
    assert hv == before
