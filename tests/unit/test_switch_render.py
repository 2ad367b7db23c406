"""Structured switch config and per-platform rendering: golden files for the three reference pods and the
Onyx test pod (tests/unit/fixtures/inventories/onyx-pod).

Regenerate the golden files after an intended change with
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/unit/test_switch_render.py
and review the diff (git diff tests/golden/switches) before committing it.
"""
from __future__ import annotations

import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import structured_config, structured_configs
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render
from test_switch_helpers import GOLDEN, REFERENCE, TEST_PODS, eos_section, pod_model_of

UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
CASES = [(pod, sw) for pod in REFERENCE + TEST_PODS for sw in sorted(structured_configs(pod_model_of(pod)))]


@pytest.mark.parametrize("pod,switch", CASES, ids=["%s/%s" % c for c in CASES])
def test_golden(pod, switch):
    text = render(structured_config(pod_model_of(pod), switch))
    path = os.path.join(GOLDEN, pod, switch + ".cfg")
    if UPDATE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    assert os.path.exists(path), "no golden file %s: run with UPDATE_GOLDEN=1 and review it" % path
    with open(path, encoding="utf-8") as fh:
        want = fh.read()
    assert text == want, "rendered config of %s/%s differs from %s (UPDATE_GOLDEN=1 to accept)" % (
        pod, switch, path)


def test_every_reference_switch_has_a_golden_file_and_no_stale_ones():
    expected = {"%s/%s.cfg" % c for c in CASES}
    present = {"%s/%s" % (pod, f) for pod in os.listdir(GOLDEN) for f in os.listdir(os.path.join(GOLDEN, pod))}
    assert present == expected


@pytest.mark.parametrize("switch", ["data-sw1", "data-sw2"])
def test_004_arista_essentials(switch):
    """The 004 RA's "most important configuration commands" (Arista data switches) are all there."""
    text = render(structured_config(pod_model_of("dgxpod"), switch))
    lines = text.splitlines()
    assert "spanning-tree mode mstp" in lines
    assert "interface Port-Channel10" in lines
    assert "ip routing" in lines
    assert "ip route 0.0.0.0/0 10.55.67.1" in lines
    for member in ("Ethernet31/1", "Ethernet32/1"):
        block = eos_section(lines, "interface " + member)
        assert "   channel-group 10 mode active" in block
        assert "   speed forced 100gfull" in block  # inter-switch ports at 100G (004)
    dgx = [ln for ln in lines if ln.startswith("   description DGX1-")]
    assert len(dgx) == 18  # 9 DGX-1 x 2 NICs per switch
    for n in range(1, 10):  # DGX1-n ports at 100G, Isilon ports at 40G
        owner = "DGX1-%d" % n
        block = eos_section(lines, _port_of(lines, owner))
        assert "   speed forced 100gfull" in block and "   mtu 9214" in block
    isilon = [ln for ln in lines if ln.startswith("   description isilon-")]
    assert len(isilon) == 8
    for ln in isilon:
        block = eos_section(lines, _port_of(lines, ln.split()[1]))
        assert "   speed forced 40gfull" in block
        assert "   priority-flow-control priority 3 no-drop" in block


def _port_of(lines, owner):
    for i, ln in enumerate(lines):
        if ln.startswith("   description %s " % owner):
            j = i
            while not lines[j].startswith("interface "):
                j -= 1
            return lines[j]
    raise AssertionError("no port described as %s" % owner)


def test_structured_derives_ports_from_cabling():
    c = structured_config(pod_model_of("dgxpod"), "data-sw1")
    ports = {i["name"]: i for i in c["interfaces"]}
    e1 = ports["Ethernet1/1"]
    assert e1["description"] == "DGX1-1 enp5s0" and e1["speed"] == 100 and e1["mtu"] == 9214
    assert e1["qos"] == {"trust": "dscp", "pfc_priority": 3}
    assert e1["peer"] == {"host": "DGX1-1", "nic": "enp5s0", "fabric": "data-5", "host_mtu": 9000}
    assert e1["mtu_headroom"] == 9214 - 9000 - 18
    assert ports["Ethernet19/1"]["speed"] == 40
    assert ports["Ethernet31/1"]["channel_group"] == {"id": 10, "mode": "active"}
    assert c["port_channels"][0]["members"] == ["Ethernet31/1", "Ethernet32/1"]
    assert c["routes"] == [{"prefix": "0.0.0.0/0", "next_hop": "10.55.67.1"}] and c["routing"] is True
    assert c["management"] == {"interface": "Management1", "address": "10.55.67.241", "prefix_length": 24,
                               "fabric": "mgmt"}
    assert c["qos"] == {"roce": "lossless", "trust": "dscp", "pfc_priority": 3}
    # ports appear in catalogue order, uncabled ports not at all
    names = [i["name"] for i in c["interfaces"]]
    assert names[:2] == ["Ethernet1/1", "Ethernet2/1"] and "Ethernet27/1" not in names


def test_roce_none_fabric_gets_no_qos():
    c = structured_config(pod_model_of("dgxa100-powerscale"), "sn3700v-1")
    assert "qos" not in c and not any("qos" in i for i in c["interfaces"])
    assert "nv set qos roce mode lossless" not in render(c)


def test_port_override_and_raw_cli_win():
    model = pod_model_of("dgxpod")
    sw = model["hosts"]["data-sw1"]["vars"]["switch"]
    sw["ports"] = {"Ethernet1/1": {"mtu": 9100, "description": "custom"}}
    sw["raw_cli"] = ["transceiver qsfp default-mode 4x10G"]
    c = structured_config(model, "data-sw1")
    e1 = c["interfaces"][0]
    assert e1["mtu"] == 9100 and e1["description"] == "custom" and e1["speed"] == 100
    text = render(c)
    assert "transceiver qsfp default-mode 4x10G\n!\nend\n" in text


def test_lossless_follows_the_fabric_of_the_cabled_nic():
    model = pod_model_of("dgxpod")
    for fab in model["pod"]["fabrics"]:
        if fab["name"] == "data-12":
            fab["roce"] = "none"
    ports = {i["name"]: i for i in structured_config(model, "data-sw1")["interfaces"]}
    assert "qos" not in ports["Ethernet10/1"]  # DGX1-1 enp12s0 on data-12
    assert "qos" in ports["Ethernet1/1"]  # DGX1-1 enp5s0 on data-5 (still lossless)


def test_ib_subnet_manager_auto_and_forced():
    model = pod_model_of("dgx-ess3000")
    assert structured_config(model, "sb7800-1")["subnet_manager"] is True
    assert structured_config(model, "sb7800-2")["subnet_manager"] is False
    assert structured_config(model, "sb7800-2", {"ib_subnet_manager": True})["subnet_manager"] is True
    c = structured_config(model, "sb7800-1")
    assert c["interfaces"] and not any("mtu" in i for i in c["interfaces"])  # InfiniBand: no Ethernet MTU


def test_management_only_when_a_management_fabric_holds_ansible_host():
    model = pod_model_of("dgxpod")
    model["hosts"]["data-sw1"]["vars"]["ansible_host"] = "127.0.0.1"
    assert "management" not in structured_config(model, "data-sw1")


def test_unknown_or_unmodelled_switch_is_a_clear_error():
    model = pod_model_of("dgxpod")
    with pytest.raises(ValueError, match="not a host"):
        structured_config(model, "nope")
    with pytest.raises(ValueError, match="no valid switch"):
        structured_config(model, "DGX1-1")


def test_filter_plugin_matches_module_utils():
    import importlib.util

    from inventory_util import ROOT, hostvars
    spec = importlib.util.spec_from_file_location("switch_filters", os.path.join(ROOT, "filter_plugins", "switch.py"))
    filters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(filters)
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    mv = {h: dict(v) for h, v in hv.items()}
    c = filters.FilterModule().filters()["switch_structured"](mv, "data-sw2")
    assert filters.FilterModule().filters()["switch_render"](c) == render(
        structured_config(pod_model_of("dgxpod"), "data-sw2"))


def test_cross_check_passes_on_the_reference_pods():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import cross_check
    for pod in REFERENCE:
        assert cross_check(pod_model_of(pod)) == []


def test_cross_check_names_switch_port_host_and_nic():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import cross_check
    model = pod_model_of("dgxpod")
    model["hosts"]["data-sw1"]["vars"]["switch"]["ports"] = {"Ethernet1/1": {"mtu": 9000}}
    found = cross_check(model)
    assert len(found) == 1 and found[0].host == "DGX1-1" and found[0].path == "nics[0].switch_port"
    assert "data-sw1 Ethernet1/1 (host DGX1-1 NIC enp5s0)" in found[0].message and "9018" in found[0].fix
    pfc = cross_check(pod_model_of("dgxpod"), {"pfc_priority": 4})
    assert len(pfc) == 52 and "host uses PFC priority 3, the switch port priority 4" in pfc[0].message
