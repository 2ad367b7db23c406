"""Preflight: the reference inventories pass, and every bad-model case is rejected with a message that
names the file (and line), the key and the fix. Each case edits a copy of the real 004 inventory."""
from __future__ import annotations

import os

import pytest

from inventory_util import REFERENCE, ROOT, copy_inventory, edit_yaml, error_finding, preflight, texts


def _present(name):
    return os.path.isfile(os.path.join(ROOT, "inventories", name, "hosts.yml"))


@pytest.mark.parametrize("name", [n for n in REFERENCE + ["sim"] if _present(n)])
def test_reference_inventories_pass(name):
    findings, summary = preflight(os.path.join(ROOT, "inventories", name))
    assert texts(findings) == []
    assert summary["hosts"].get("dgx", 0) >= 1


def test_dgxpod_shape_matches_004():
    findings, summary = preflight(os.path.join(ROOT, "inventories", "dgxpod"))
    assert summary["hosts"] == {"dgx": 9, "storage": 8, "switches": 2}
    assert summary["ra_profile"] == "isilon-f800-dgx1" and not summary["simulated"]


def _nic(i, key, value):
    def change(d):
        d["nics"][i][key] = value
    return change


def _fabric(name, key, value):
    def change(d):
        for f in d["pod"]["fabrics"]:
            if f["name"] == name:
                if value is None:
                    f.pop(key, None)
                else:
                    f[key] = value
    return change


def _switch(key, value):
    def change(d):
        d["switch"][key] = value
    return change


def _pod(key, value):
    def change(d):
        d["pod"][key] = value
    return change


HV = "host_vars/%s.yml"
POD = "group_vars/all/pod.yml"

# (id, file to edit, change, expected file, expected key, expected message fragment, expected fix fragment)
CASES = [
    ("duplicate-ip", HV % "DGX1-2", _nic(0, "address", "10.55.5.231"),
     HV % "DGX1-2", "nics[0].address", "already used by DGX1-1 nics[0]", "its own address"),
    ("outside-subnet", HV % "DGX1-3", _nic(1, "address", "10.55.13.240"),
     HV % "DGX1-3", "nics[1].address", "outside fabric 'data-12' subnet 10.55.12.0/24", "address in 10.55.12.0/24"),
    ("network-address", HV % "DGX1-3", _nic(1, "address", "10.55.12.0"),
     HV % "DGX1-3", "nics[1].address", "network or broadcast", "host address"),
    ("unknown-fabric", HV % "DGX1-4", _nic(2, "fabric", "data-67"),
     HV % "DGX1-4", "nics[2].fabric", "'data-67' is not a fabric of this pod", "did you mean"),
    ("unknown-profile", POD, _pod("ra_profile", "isilon-f800-dgx2"),
     POD, "pod.ra_profile", "unknown RA profile", "isilon-f800-dgx1"),
    ("missing-required", HV % "DGX1-5", lambda d: d["nics"][0].pop("fabric"),
     HV % "DGX1-5", "nics[0].fabric", "required key is missing", "add fabric"),
    ("wrong-type-mtu", POD, _fabric("data-5", "mtu", "9000"),
     POD, "pod.fabrics[0].mtu", "'9000' is not an integer", "write an integer"),
    ("wrong-type-bool", HV % "DGX1-1", _nic(2, "default_route", "yes"),
     HV % "DGX1-1", "nics[2].default_route", "is not true or false", "true or false"),
    ("typo-key", HV % "DGX1-6", lambda d: d["nics"][3].update(adress=d["nics"][3].pop("address")),
     HV % "DGX1-6", "nics[3].adress", "unknown key", "did you mean 'address'"),
    ("port-does-not-exist", HV % "DGX1-7", _nic(0, "switch_port", "Ethernet40/1"),
     HV % "DGX1-7", "nics[0].switch_port", "data-sw1 has no port 'Ethernet40/1'", "Ethernet1/1"),
    ("port-used-twice", HV % "DGX1-8", _nic(0, "switch_port", "Ethernet1/1"),
     HV % "DGX1-8", "nics[0].switch_port", "already cabled to DGX1-1 enp5s0", "one NIC"),
    ("nic-cabled-twice", HV % "DGX1-9", lambda d: d["nics"].append(dict(d["nics"][0], switch_port="Ethernet28/1")),
     HV % "DGX1-9", "nics[4].name", "enp5s0 is listed twice", "one entry per NIC"),
    ("port-mtu-too-small", HV % "data-sw2", _switch("ports", {"Ethernet3/1": {"mtu": 9000}}),
     HV % "DGX1-3", "nics[2].switch_port", "host MTU 9000 + 18 bytes of headers does not fit data-sw2 Ethernet3/1",
     "at least 9018"),
    ("switch-mtu-too-small", HV % "data-sw1", _switch("mtu", 1500),
     HV % "data-sw1", "switch.mtu", "1500 is too small for 26 cabled NIC(s)", "at least 9018"),
    ("switch-mtu-above-model", HV % "data-sw1", _switch("mtu", 9216),
     HV % "data-sw1", "switch.mtu", "above the 7060CX2-32S maximum of 9214", "9214 or less"),
    ("gateway-outside", POD, _fabric("data-66", "gateway", "10.55.67.1"),
     POD, "pod.fabrics[2].gateway", "outside the fabric subnet 10.55.66.0/24", "inside 10.55.66.0/24"),
    ("overlapping-subnets", POD, _fabric("data-12", "subnet", "10.55.0.0/16"),
     POD, "pod.fabrics[1].subnet", "overlaps fabric 'data-5'", "non-overlapping"),
    ("two-default-routes", HV % "DGX1-2", _nic(0, "default_route", True),
     HV % "DGX1-2", "nics[2].default_route", "more than one NIC carries the default route", "one NIC only"),
    ("default-route-no-gateway", HV % "DGX1-2", lambda d: (d["nics"][2].pop("default_route"),
                                                           d["nics"][1].update(default_route=True)),
     HV % "DGX1-2", "nics[1].default_route", "fabric 'data-12' has no gateway", "add a gateway"),
    ("link-type-mismatch", POD, lambda d: (_fabric("data-139", "kind", "infiniband")(d),
                                           _fabric("data-139", "mtu", 4092)(d), _fabric("data-139", "roce", None)(d)),
     HV % "DGX1-1", "nics[3].switch", "link type mismatch: infiniband NIC on fabric 'data-139'",
     "switch of the fabric's kind"),
    ("ipoib-mtu", POD, lambda d: (_fabric("data-139", "kind", "infiniband")(d), _fabric("data-139", "roce", None)(d)),
     POD, "pod.fabrics[3].mtu", "IPoIB datagram mode allows at most 4092, not 9000", "4092"),
    ("roce-on-ib", POD, lambda d: (_fabric("data-139", "kind", "infiniband")(d), _fabric("data-139", "mtu", 4092)(d)),
     POD, "pod.fabrics[3].roce", "RoCE is an Ethernet setting", "remove roce"),
    ("nic-faster-than-port", HV % "isilon-3", _nic(0, "speed", 400),
     HV % "isilon-3", "nics[0].speed", "400 Gb/s is faster than a 7060CX2-32S port", "switch model"),
    ("unknown-switch-model", HV % "data-sw2", _switch("model", "7060CX-32S"),
     HV % "data-sw2", "switch.model", "'7060CX-32S' is not one of", "use '7060CX2-32S'"),
    ("platform-mismatch", HV % "data-sw2", _switch("platform", "onyx"),
     HV % "data-sw2", "switch.platform", "model 7060CX2-32S runs eos, not onyx", "platform: eos"),
    ("port-channel-bad-member", HV % "data-sw1",
     lambda d: d["switch"]["port_channels"][0].update(members=["Ethernet31/1", "Ethernet35/1"]),
     HV % "data-sw1", "switch.port_channels[0].members[1]", "port 'Ethernet35/1' does not exist", "Ethernet34"),
    ("nic-on-isl-port", HV % "DGX1-9", _nic(1, "switch_port", "Ethernet31/1"),
     HV % "DGX1-9", "nics[1].switch_port", "member of Port-Channel10 (inter-switch link)", "free port"),
    ("half-cabled", HV % "DGX1-4", lambda d: d["nics"][0].pop("switch_port"),
     HV % "DGX1-4", "nics[0].switch_port", "needs both switch and switch_port", "add switch_port"),
    ("unknown-switch", HV % "DGX1-4", _nic(0, "switch", "data-sw3"),
     HV % "DGX1-4", "nics[0].switch", "'data-sw3' is not a switch in this inventory", "group 'switches'"),
    ("missing-dgx-model", "group_vars/dgx.yml", lambda d: {"gpus": 8},
     "group_vars/dgx.yml", "dgx_model", "required for hosts in group 'dgx' but not set (and 8 more",
     "group_vars/dgx.yml"),
    ("ansible-host-not-own", "hosts.yml",
     lambda d: d["all"]["children"]["dgx"]["hosts"]["DGX1-2"].update(ansible_host="10.55.66.239"),
     "hosts.yml", "ansible_host", "not one of this host's NIC addresses", "own addresses"),
    ("no-storage-fabric", POD, lambda d: [f.update(carries=["compute"]) for f in d["pod"]["fabrics"]
                                          if "storage" in f["carries"]],
     POD, "pod.fabrics", "no fabric carries storage traffic", "carries list"),
    ("relative-mount", POD, lambda d: d["pod"]["storage"].update(scripts_mount="mnt/isilon"),
     POD, "pod.storage.scripts_mount", "not an absolute path", "absolute mount point"),
    ("bad-cidr", POD, _fabric("mgmt", "subnet", "10.55.67.1/24"),
     POD, "pod.fabrics[4].subnet", "is not an IPv4 subnet in CIDR form", "CIDR"),
    ("fabric-name-twice", POD, _fabric("data-139", "name", "data-12"),
     POD, "pod.fabrics[3].name", "fabric name 'data-12' is used twice", "unique name"),
    ("rdma-device-twice", HV % "DGX1-5", _nic(1, "rdma_device", "mlx5_0"),
     HV % "DGX1-5", "nics[1].rdma_device", "mlx5_0 is already the RDMA device of nics[0]", "its own RDMA device"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_model_is_rejected(tmp_path, case):
    _id, edit_file, change, want_file, want_key, want_msg, want_fix = case
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, edit_file), change)
    findings, _summary = preflight(inv)
    error_finding(inv, findings, want_file, want_key, want_msg, want_fix)


def test_line_numbers_point_at_the_key(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-2"), _nic(2, "address", "10.55.66.231"))
    findings, _ = preflight(inv)
    f = next(f for f in findings if f.key() == "nics[2].address")
    path, line = f.source.rsplit(":", 1)
    with open(path) as fh:
        assert fh.read().splitlines()[int(line) - 1].strip().startswith("address: 10.55.66.231")


def test_case_insensitive_duplicate_host(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "hosts.yml"),
              lambda d: d["all"]["children"]["dgx"]["hosts"].update({"dgx1-1": {"ansible_host": "10.55.66.100"}}))
    with open(os.path.join(inv, HV % "dgx1-1"), "w") as fh:
        fh.write("nics: [{name: enp132s0, fabric: data-66, address: 10.55.66.100}]\n")
    findings, _ = preflight(inv)
    assert any("only by case" in f.message and f.host in ("dgx1-1", "DGX1-1") for f in findings), texts(findings)


def test_host_in_no_role_group(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "hosts.yml"),
              lambda d: d["all"]["children"].update({"other": {"hosts": {"jumpbox": {"ansible_host": "10.9.9.9"}}}}))
    findings, _ = preflight(inv)
    f = next(f for f in findings if f.host == "jumpbox")
    assert "is in no role group" in f.message and f.source.endswith("hosts.yml:%s" % f.source.rsplit(":", 1)[1])


def test_missing_pod_variable(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    os.remove(os.path.join(inv, POD))
    findings, _ = preflight(inv)
    assert [f.key() for f in findings] == ["pod"]
    assert "group_vars/all/pod.yml" in findings[0].source


def test_warning_does_not_fail(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "data-sw1"),
              lambda d: d["switch"]["routes"].append({"prefix": "10.0.0.0/8", "next_hop": "192.168.1.1"}))
    findings, _ = preflight(inv)
    assert texts(findings) == []
    assert any("not inside any fabric" in t for t in texts(findings, "warning"))


def test_many_errors_are_all_reported(tmp_path):
    """One run reports every problem, not just the first."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-2"), _nic(0, "address", "10.55.5.231"))
    edit_yaml(os.path.join(inv, HV % "DGX1-3"), _nic(0, "switch_port", "Ethernet99/1"))
    edit_yaml(os.path.join(inv, POD), _pod("ra_profile", "nope"))
    findings, _ = preflight(inv)
    assert len(texts(findings)) == 3


def _fabric_nets(name):
    import ipaddress

    from inventory_util import hostvars
    hv = hostvars(os.path.join(ROOT, "inventories", name))
    pod = next(v["pod"] for v in hv.values() if "pod" in v)
    return [ipaddress.ip_network(f["subnet"]) for f in pod["fabrics"]]


def test_simulator_subnets_are_distinct_from_every_reference_pod():
    sim = _fabric_nets("sim")
    for name in REFERENCE:
        for net in _fabric_nets(name):
            assert not any(net.overlaps(s) for s in sim), (name, net)
    assert all(s.subnet_of(__import__("ipaddress").ip_network("198.18.0.0/15")) for s in sim)


@pytest.mark.parametrize("nodes,storage", [(1, 1), (16, 2), (16, 8)])
def test_generated_simulator_inventories_pass(tmp_path, nodes, storage):
    import shutil
    import subprocess
    inv = tmp_path / "sim"
    shutil.copytree(os.path.join(ROOT, "inventories", "sim", "group_vars"), inv / "group_vars")
    text = subprocess.run([os.path.join(ROOT, "sim", "podsim"), "inventory", "--nodes", str(nodes),
                           "--storage", str(storage)], capture_output=True, text=True, check=True).stdout
    (inv / "hosts.yml").write_text(text)
    findings, summary = preflight(str(inv))
    assert texts(findings) == []
    assert summary["hosts"]["dgx"] == nodes and summary["hosts"]["storage"] == storage


def test_host_switch_pfc_priority_mismatch_is_rejected():
    """Hosts on priority 4 but the switches' lossless ports on 3: named per switch, port, host and NIC."""
    import pod_preflight
    from inventory_util import PROFILES, hostvars
    inv = os.path.join(ROOT, "inventories", "dgxpod")
    findings, _ = pod_preflight.run(hostvars(inv), [inv], PROFILES, pfc_priority=4)
    pfc = [f for f in findings if f.message.startswith("PFC mismatch")]
    assert len(pfc) == 9 * 4 + 8 * 2, [f.format() for f in pfc][:3]  # every DGX data NIC and Isilon port
    one = next(f for f in pfc if f.host == "DGX1-1" and f.path == "nics[0].switch_port")
    assert "data-sw1" in one.message and "Ethernet1/1" in one.message and "enp5s0" in one.message
    assert one.source.endswith("host_vars/DGX1-1.yml:%s" % one.source.rsplit(":", 1)[1])
    clean, _ = pod_preflight.run(hostvars(inv), [inv], PROFILES, pfc_priority=3)
    assert texts(clean) == []


def test_pfc_mismatch_from_one_switchs_own_options_names_only_that_switch():
    """switch_config_options.pfc_priority set for one switch (as group_vars/host_vars would): only its ports."""
    import pod_preflight
    from inventory_util import PROFILES, hostvars
    inv = os.path.join(ROOT, "inventories", "dgxpod")
    findings, _ = pod_preflight.run(hostvars(inv), [inv], PROFILES, 3,
                                    switch_options={"data-sw2": {"pfc_priority": 4, "spanning_tree_mode": "mstp"}})
    pfc = [f for f in findings if f.message.startswith("PFC mismatch")]
    assert pfc and all(f.message.startswith("PFC mismatch on data-sw2 ") for f in pfc)
    assert len(pfc) == (9 * 4 + 8 * 2) // 2  # half of the lossless ports are on data-sw2
    assert "host uses PFC priority 3, the switch port priority 4" in pfc[0].message
    assert "switch_config_options.pfc_priority of data-sw2 to 3" in pfc[0].fix
    clean, _ = pod_preflight.run(hostvars(inv), [inv], PROFILES, 3, switch_options={"data-sw2": {"pfc_priority": 3}})
    assert texts(clean) == []


def test_pfc_mismatch_from_one_hosts_own_priority_names_only_that_host():
    import pod_preflight
    from inventory_util import PROFILES, hostvars
    inv = os.path.join(ROOT, "inventories", "dgxpod")
    findings, _ = pod_preflight.run(hostvars(inv), [inv], PROFILES, 3, host_pfc_priorities={"DGX1-3": "4"})
    pfc = [f for f in findings if f.message.startswith("PFC mismatch")]
    assert {f.host for f in pfc} == {"DGX1-3"} and len(pfc) == 4  # DGX-1: 4 RoCE NICs
    assert all("host uses PFC priority 4, the switch port priority 3" in f.message for f in pfc)
    assert "dgx_network_pfc_priority of DGX1-3 to 3" in pfc[0].fix


# --- Spectrum Scale keys (pod.storage.scale) on the 000 (ESS 3000) inventory
ESS_POD = "group_vars/all/pod.yml"


@pytest.mark.parametrize("change,want_key,want_msg,want_fix", [
    (lambda d: [d["pod"]["storage"].pop("scale")] and None, "pod.storage",
     "protocol spectrum-scale needs pod.storage.scale", "contact_node"),
    (lambda d: d["pod"]["storage"]["scale"].update(contact_node="ess9z"), "pod.storage.scale.contact_node",
     "'ess9z' is not a host in this inventory", "group 'storage'"),
    (lambda d: d["pod"]["storage"]["scale"].update(contact_node="dgx1-1"), "pod.storage.scale.contact_node",
     "'dgx1-1' is in group 'dgx', not 'storage'", "cluster member"),
    (lambda d: [d["pod"]["storage"]["scale"].pop("cluster_name")] and None, "pod.storage.scale.cluster_name",
     "required", ""),
])
def test_scale_model_checks(tmp_path, change, want_key, want_msg, want_fix):
    inv = copy_inventory("dgx-ess3000", str(tmp_path))
    findings, _ = preflight(inv)
    assert not [f for f in findings if f.severity == "error" and "scale" in f.key()], texts(findings)
    edit_yaml(os.path.join(inv, ESS_POD), change)
    findings, _ = preflight(inv)
    match = [f for f in findings if f.severity == "error" and f.key() == want_key and want_msg in f.message]
    assert match, "no error for %s with %r; got:\n%s" % (want_key, want_msg, "\n".join(texts(findings)))
    assert want_fix in match[0].fix
