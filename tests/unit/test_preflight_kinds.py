"""Preflight, issue 18: the model mistakes that used to pass or were rejected vaguely. Each case makes one mistake
in a copy of a reference inventory and asserts the error names the file (and line), the key and a fix."""
from __future__ import annotations

import os

import pytest

from inventory_util import (HV, POD, PROFILES, assert_case_rejected, copy_inventory, edit_yaml, error_finding,
                            hostvars, preflight, texts)
from inventory_util import nic_edit as _nic, storage_edit as _storage


# (id, reference inventory, file to edit, change, expected file, key, message fragment, fix fragment)
CASES = [
    ("same-subnet-ethernet", "dgxpod", HV % "DGX1-2", _nic(1, fabric="data-5", address="10.55.5.240"),
     HV % "DGX1-2", "nics[1].fabric", "enp12s0 and enp5s0 (nics[0]) are both on fabric 'data-5' (10.55.5.0/24, "
     "Ethernet)", "its own fabric and subnet"),
    ("same-subnet-ipoib", "dgx-ess3000", HV % "dgx1-1", _nic(2, fabric="ib-edr-0", address="10.62.20.240"),
     HV % "dgx1-1", "nics[2].fabric", "both on fabric 'ib-edr-0' (10.62.20.0/24, IPoIB)", "one subnet per rail"),
    ("scripts-server-on-storage-mgmt", "dgxpod", POD, _storage(scripts_server="10.55.67.211"),
     POD, "pod.storage.scripts_server", "10.55.67.211 is isilon-1 mgmt-1 on fabric 'mgmt', which does not carry "
     "storage traffic", "10.55.5.211"),
    ("scripts-server-in-no-fabric", "dgxpod", POD, _storage(scripts_server="10.99.0.5"),
     POD, "pod.storage.scripts_server", "10.99.0.5 is not the address of any storage node NIC (it is in no fabric",
     "storage fabric every DGX has a NIC on"),
    ("scripts-server-mgmt-powerscale", "dgxa100-powerscale", POD, _storage(scripts_server="10.61.1.211"),
     POD, "pod.storage.scripts_server", "on fabric 'mgmt', which does not carry storage traffic", "10.61.11."),
    ("scripts-mount-is-a-data-mount", "dgxpod", POD, _storage(scripts_mount="/mnt/isilon3"),
     POD, "pod.storage.scripts_mount", "'/mnt/isilon3' is also data mount 3 (/mnt/isilon3", "outside /mnt/isilon1..16"),
    ("export-not-absolute", "dgxpod", POD, _storage(export="ifs"),
     POD, "pod.storage.export", "NFS export 'ifs' is not an absolute path", "e.g. /ifs"),
    ("breakout-lane-of-a-whole-port-eos", "dgxpod", HV % "DGX1-9", _nic(0, switch_port="Ethernet1/2"),
     HV % "DGX1-9", "nics[0].switch_port", "the same lanes of port 1 are cabled to DGX1-1 enp5s0: Ethernet1/1 uses "
     "the whole port and Ethernet1/2 uses lanes 2, 3, 4", "break the port out"),
    ("breakout-lane-of-a-whole-port-cumulus", "dgxa100-powerscale", HV % "dgxa100-2", _nic(9, switch_port="swp1s1"),
     HV % "dgxa100-2", "nics[9].switch_port", "swp1 uses the whole port and swp1s1 is a breakout lane", "free port"),
    ("dgx-with-management-nic-only", "dgxa100-powerscale", HV % "dgxa100-3", lambda d: {"nics": d["nics"][:1]},
     HV % "dgxa100-3", "nics", "the DGX has no data NIC: no NIC on a compute or storage fabric (NICs: enp226s0 on "
     "mgmt)", "ib-compute-0"),
    ("file-system-listed-twice", "dgx-ess3000", POD,
     lambda d: d["pod"]["storage"]["scale"].update(filesystems=["fs1", "fs2", "fs1"]),
     POD, "pod.storage.scale.filesystems[2]", "file system 'fs1' is listed twice (also filesystems[0])", "once"),
    ("fabric-mtu-above-every-switch", "dgxpod", POD,
     lambda d: d["pod"]["fabrics"][0].update(mtu=9200),
     POD, "pod.fabrics[0].mtu", "host MTU 9200 + 18 bytes of headers is more than a 7060CX2-32S port takes (9214)",
     "lower the MTU to 9196 or less"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_new_kind_is_rejected(tmp_path, case):
    assert_case_rejected(tmp_path, case)


def test_scripts_server_on_a_fabric_one_dgx_lacks(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, POD), _storage(scripts_server="10.55.5.211"))
    assert texts(preflight(inv)[0]) == []  # isilon-1 40gige-2: every DGX has a NIC on data-5
    edit_yaml(os.path.join(inv, HV % "DGX1-5"), lambda d: {"nics": d["nics"][1:]})
    findings, _ = preflight(inv)
    error_finding(inv, findings, POD, "pod.storage.scripts_server",
                  "10.55.5.211 (isilon-1 40gige-2) is on fabric 'data-5', where DGX1-5 has no NIC: it cannot reach it",
                  "10.55.66.211")


def test_breakout_lanes_that_do_not_overlap_pass(tmp_path):
    """Four 25 Gb/s NICs on the four lanes of one QSFP port are a proper breakout, not a conflict."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    for host, lane in (("isilon-7", 2), ("isilon-8", 3)):
        edit_yaml(os.path.join(inv, HV % host), _nic(0, switch_port="Ethernet28/%d" % lane, speed=25))
    edit_yaml(os.path.join(inv, HV % "isilon-6"), _nic(0, switch_port="Ethernet28/1", speed=25))
    findings, _ = preflight(inv)
    assert not [f for f in findings if "lanes" in f.message], texts(findings)


def test_duplicate_key_in_a_host_file_names_both_lines(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    path = os.path.join(inv, HV % "DGX1-3")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    first = next(i for i, text in enumerate(lines) if text.strip().startswith("address: 10.55.12."))
    lines.insert(first + 2, "    address: 10.55.12.99")  # nics[1] gets a second address after its speed
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    findings, _ = preflight(inv)
    f = error_finding(inv, findings, HV % "DGX1-3", "nics[1].address",
                      "'address' is written twice in one mapping (lines %d and %d)" % (first + 1, first + 3),
                      "delete the other")
    assert f.source.endswith(":%d" % (first + 3))
    assert "Ansible only warns, keeps the last value (line %d)" % (first + 3) in f.message


def test_duplicate_key_in_group_vars(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, "group_vars", "dgx.yml"), "a", encoding="utf-8") as fh:
        fh.write("dgx_model: dgx2\n")
    findings, _ = preflight(inv)
    error_finding(inv, findings, "group_vars/dgx.yml", "dgx_model", "written twice in one mapping (lines 2 and 3)",
                  "one of")


def test_host_vars_name_differs_only_in_case(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    os.rename(os.path.join(inv, HV % "DGX1-4"), os.path.join(inv, HV % "dgx1-4"))
    findings, _ = preflight(inv)
    f = next((f for f in findings if "case-sensitively" in f.message), None)
    assert f is not None, texts(findings)
    assert f.host == "DGX1-4" and f.source.endswith("host_vars/dgx1-4.yml") and f.severity == "error"
    assert "host_vars/dgx1-4.yml is not read for host DGX1-4" in f.message
    assert f.fix.startswith("rename it to ") and f.fix.endswith("host_vars/DGX1-4.yml")
    missing = next(f for f in findings if f.key() == "nics" and "required" in f.message)
    assert missing.host == "DGX1-4" and "dgx1-4.yml exists but is not read: its name differs from DGX1-4 in case" \
        in missing.fix, missing.format()


@pytest.mark.parametrize("name", ["dgxpod", "dgxa100-powerscale", "dgx-ess3000", "dgxh100-pod", "sim"])
def test_reference_models_pass_with_no_warning(name):
    from inventory_util import ROOT
    findings, _ = preflight(os.path.join(ROOT, "inventories", name))
    assert findings == [], texts(findings) + texts(findings, "warning")


def test_group_vars_name_differs_only_in_case(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    os.rename(os.path.join(inv, "group_vars", "dgx.yml"), os.path.join(inv, "group_vars", "DGX.yml"))
    findings, _ = preflight(inv)
    f = next((f for f in findings if "case-sensitively" in f.message), None)
    assert f is not None and "not read for group dgx" in f.message and f.fix.endswith("group_vars/dgx.yml"), \
        texts(findings)


@pytest.mark.parametrize("where,line", [(HV % "DGX1-1", 18), (POD, 39)])
def test_tab_names_file_and_line_before_any_host_variable_is_read(tmp_path, where, line):
    """Ansible itself fails on such a file with "Tabs are usually invalid in YAML" and no file; the first
    preflight task (inventory_groups only) and the vars plugin name it."""
    import pod_preflight
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import unreadable_var_files
    inv = copy_inventory("dgxpod", str(tmp_path))
    path = os.path.join(inv, where)
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    lines[line - 1] = "\t" + lines[line - 1].lstrip(" ")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    groups = {"all": ["DGX1-1", "DGX1-2"], "dgx": ["DGX1-1", "DGX1-2"], "storage": [], "switches": []}
    for findings in (pod_preflight.scan_files(groups, [inv]), unreadable_var_files(inv)):
        assert len(findings) == 1, texts(findings)
        f = findings[0]
        assert f.source.endswith("%s:%d" % (where, line)) and "a tab character at line %d, column 1" % line in \
            f.message and "replace the tab with spaces" in f.fix


def test_tab_after_a_colon_is_read_by_ansible_and_passes(tmp_path):
    """libyaml (Ansible's parser) takes 'key:<TAB>value': not reported."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import unreadable_var_files
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, "group_vars", "dgx.yml"), "w", encoding="utf-8") as fh:
        fh.write("---\ndgx_model:\tdgx1\n")
    assert unreadable_var_files(inv) == []
    assert texts(preflight(inv)[0]) == []


def _pfc_run(inv, **kw):
    import pod_preflight
    hv = hostvars(inv)
    host_pfc = {h: v["dgx_network_pfc_priority"] for h, v in hv.items()
                if "dgx" in v["group_names"] and "dgx_network_pfc_priority" in v}
    return pod_preflight.run(hv, [inv], PROFILES, 3, host_pfc_priorities=host_pfc, **kw)[0]


def test_value_inherited_from_group_vars_is_one_error_on_that_line(tmp_path):
    """dgx_network_pfc_priority: 4 in group_vars/dgx.yml: 36 NICs mismatch their switch ports, one error names the
    group_vars line (the place to edit), not 36 NIC lines in nine host_vars files."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    with open(os.path.join(inv, "group_vars", "dgx.yml"), "a", encoding="utf-8") as fh:
        fh.write("dgx_network_pfc_priority: 4\n")
    errs = [f for f in _pfc_run(inv) if f.severity == "error"]
    assert len(errs) == 1, texts(errs)
    f = errs[0]
    assert f.source.endswith("group_vars/dgx.yml:3") and f.key() == "dgx_network_pfc_priority", f.format()
    assert "the host uses PFC priority 4, the switch port priority 3" in f.message
    assert "(the same 35 more times, also in hosts DGX1-2, DGX1-3, DGX1-4, DGX1-5, DGX1-6, ...)" in f.message
    assert f.more_count == 35 and len(f.more_hosts) == 8
    assert "set dgx_network_pfc_priority to 3 here" in f.fix


def test_value_set_per_host_stays_on_the_host(tmp_path):
    """The same value in one host's host_vars: the error stays on that host's file (its 4 NICs grouped)."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-5"), lambda d: dict(d, dgx_network_pfc_priority=4))
    errs = [f for f in _pfc_run(inv) if f.severity == "error"]
    assert {f.host for f in errs} == {"DGX1-5"} and all("host_vars/DGX1-5.yml" in f.source for f in errs)


def test_same_mistake_in_every_host_is_one_error(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    for n in range(1, 10):
        edit_yaml(os.path.join(inv, HV % ("DGX1-%d" % n)), _nic(1, speed=400))
    findings, _ = preflight(inv)
    errs = [f for f in findings if f.severity == "error"]
    assert len(errs) == 1, texts(errs)
    assert errs[0].host == "DGX1-1" and errs[0].source.endswith("host_vars/DGX1-1.yml:%s" % errs[0].source.rsplit(
        ":", 1)[1])
    assert errs[0].message.endswith("(the same in 8 more hosts: DGX1-2, DGX1-3, DGX1-4, DGX1-5, DGX1-6, ...)")
    assert errs[0].more_hosts == ["DGX1-%d" % n for n in range(2, 10)]


def test_different_mistakes_are_not_grouped(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, HV % "DGX1-2"), _nic(1, speed=400))
    edit_yaml(os.path.join(inv, HV % "DGX1-3"), _nic(2, speed=400))  # another key
    edit_yaml(os.path.join(inv, HV % "DGX1-4"), _nic(1, fabric="data-6"))  # another problem
    errs = [f for f in preflight(inv)[0] if f.severity == "error"]
    assert len(errs) == 3 and not any("the same" in f.message for f in errs), texts(errs)
