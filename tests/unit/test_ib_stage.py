"""The InfiniBand fabric stage (validate.yml --tags ib, module_utils/network/ib_stage.py) on the 001 reference pod
(dgxa100-powerscale: 4 DGX A100, 8 HDR rails on two QM8700 joined by 8 ISLs): the record the playbook keeps -
pod_ib_fabric's readings on every DGX, taken here with an injected runner that answers with the simulator's
infiniband-diags stand-ins (sim/standins/podsim_ib.py, the real tools' formats) - evaluated by the stage registry,
and the report's findings on the results document: a swapped cable and a 1X link are the top finding naming the
switch port and the node's HCA; no master SM and two (a split subnet) are named as such."""
from __future__ import annotations

import os
import sys

import pytest

from inventory_util import ROOT, hostvars

import pod_ib_fabric  # library/pod_ib_fabric.py

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (SWITCH_MODELS, ib_link,
    ib_port_number)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_stage
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod, model_from_hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import pod_index
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results

sys.path.insert(0, os.path.join(ROOT, "sim", "standins"))
import podsim_ib  # noqa: E402

REF = os.path.join(ROOT, "inventories", "dgxa100-powerscale")
_HV = {}


def _hostvars():
    if not _HV:
        _HV.update(hostvars(REF))
    return _HV


def _fabric_map(model):
    return podsim_ib.fabric_map(model, lambda m, p: ib_port_number(SWITCH_MODELS[m], p),
                                lambda m, s: ib_link(SWITCH_MODELS[m], s))


def _runner(fmap, faults, node, sysfs=None):
    """run(argv, timeout) -> (rc, out, err) of the stand-ins for ``node``; which() finds the three tools."""
    def run(argv, timeout):
        hca = argv[argv.index("-C") + 1]
        key = "%s %s" % (node, hca)
        if argv[0] == "sminfo":
            out, err, rc = podsim_ib.render_sminfo(fmap, faults, key)
            return rc, out, err
        if argv[0] == "iblinkinfo":
            return 0, podsim_ib.render_iblinkinfo(fmap, faults), ""
        return 0, podsim_ib.render_ibnetdiscover(fmap, faults, key), ""
    return run


def _pkeys_tree(tmp_path, nodes, keys=("0xffff",)):
    """A sysfs tree with every HCA's port 1 P_Key table (the first DGX's mlx5_3 lacks the model's key if
    keys is empty)."""
    root = tmp_path / "sys-root"
    for hca in ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"):
        d = root / "sys" / "class" / "infiniband" / hca / "ports" / "1" / "pkeys"
        d.mkdir(parents=True)
        for i, k in enumerate(list(keys) + ["0x0000"]):
            (d / str(i)).write_text(k + "\n")
    return str(root)


def record(tmp_path, faults=None, unreachable=(), keys=("0xffff",)):
    """pod_stages.ib as validate_ib.yml records it, every DGX's reading made by pod_ib_fabric.gather."""
    hv = _hostvars()
    model = model_from_hostvars(hv)
    fmap = _fabric_map(model)
    faults = podsim_ib.parse_faults(faults or [])
    pod = Pod.from_hostvars(hv)
    fabrics = ib_stage.ib_fabrics(pod)
    sysfs = _pkeys_tree(tmp_path, [], keys)
    nodes = {}
    for i, d in enumerate(pod.dgx):
        if d.name in unreachable:
            nodes[d.name] = None
            continue
        ports = ib_stage.ports_of_nics(hv[d.name]["nics"], fabrics)
        reading = pod_ib_fabric.gather(_runner(fmap, faults, d.name), lambda t: "/usr/sbin/" + t, ports,
                                       discover=(i == 0), tool_timeout=5, sysfs_root=sysfs)
        nodes[d.name] = {"ib": reading, "error": None, "unreachable": False}
    return {"fabrics": fabrics, "discover": pod.dgx[0].name, "nodes": nodes, "pod": hv[pod.dgx[0].name]["pod"],
            "groups": {g: [h for h, v in hv.items() if g in v["group_names"]] for g in ("dgx", "storage", "switches")},
            "nics": {h: v["nics"] for h, v in hv.items() if "nics" in v},
            "switches": {h: v["switch"] for h, v in hv.items() if "switch" in v}}


def results(rec):
    """The ib stage's checks of the results document (the other stages are rows 'not selected')."""
    return [c for c in build_results({"pod": "dgxa100-powerscale"}, {}, {}, {"ib": rec}, ["ib"])["checks"]
            if c["stage"] == "ib"]


def findings(checks):
    return build_findings(checks, pod_index(Pod.from_hostvars(_hostvars())))


def failed(checks):
    return [c for c in checks if c["status"] in ("fail", "error")]


def test_the_healthy_reference_fabric_passes_every_check(tmp_path):
    checks = results(record(tmp_path))
    assert failed(checks) == []
    kinds = {}
    for c in checks:
        kinds[c["check"]] = kinds.get(c["check"], 0) + 1
    # 4 DGX x 8 rails: a link and a cable check each, a P_Key check per HCA port; one SM check for the one subnet
    assert kinds == {"ib_sm": 1, "ib_link": 32, "ib_cabling": 32, "ib_pkey": 32}
    sm = [c for c in checks if c["check"] == "ib_sm"][0]
    assert sm["host"] == "fabric ib-compute-0 and 7 more fabrics (one subnet)" and sm["measured"] == 1
    link = [c for c in checks if c["check"] == "ib_link" and c["host"] == "qm8700-2 port 1/8"][0]
    assert link["measured"] == "4X HDR Active" and link["expected"] == "4X HDR Active"
    assert link["subject"] == {"switch": "qm8700-2", "port": "1/8", "node": "dgxa100-2", "hca": "mlx5_9"}
    assert all(c["stage"] == "ib" for c in checks)


def test_a_swapped_cable_is_the_top_finding_naming_both_switch_ports_and_hcas(tmp_path):
    checks = results(record(tmp_path, ["swap=dgxa100-1:mlx5_1,dgxa100-2:mlx5_1"]))
    bad = failed(checks)
    assert sorted(c["host"] for c in bad) == ["qm8700-1 port 1/2", "qm8700-1 port 1/6"]
    assert {c["check"] for c in bad} == {"ib_cabling"}
    top = findings(checks)[0]
    text = top["summary"] + " " + top.get("host", "")
    assert "qm8700-1 port 1/2" in text and "dgxa100-2 mlx5_1 port 1" in text, top
    assert top["root"]["check"] == "ib_cabling" and "dgxa100-1 mlx5_1 port 1 is on qm8700-1 port 1/6" in text
    cause = [c for c in bad if c["host"] == "qm8700-1 port 1/2"][0]["cause"]
    assert cause == ("qm8700-1 port 1/2: cabled to dgxa100-2 mlx5_1 port 1, model dgxa100-1 mlx5_1 port 1; "
                     "dgxa100-1 mlx5_1 port 1 is on qm8700-1 port 1/6 instead")


def test_a_link_at_1x_is_the_top_finding_naming_the_switch_port_and_the_hca(tmp_path):
    checks = results(record(tmp_path, ["width=dgxa100-3:mlx5_7:1X"]))
    bad = failed(checks)
    assert [(c["check"], c["host"]) for c in bad] == [("ib_link", "qm8700-2 port 1/10")]
    assert bad[0]["cause"] == ("qm8700-2 port 1/10 <-> dgxa100-3 mlx5_7 port 1: trained at width 1X (model 4X, "
                               "could be 4X)")
    top = findings(checks)[0]
    assert "qm8700-2 port 1/10" in top["summary"] and "dgxa100-3 mlx5_7 port 1" in top["summary"], top
    assert top["root"] == {"check": "ib_link", "host": "qm8700-2 port 1/10"}


def test_a_link_at_a_lower_speed_names_it(tmp_path):
    checks = results(record(tmp_path, ["speed=dgxa100-4:mlx5_0:EDR"]))
    bad = failed(checks)
    assert [(c["check"], c["host"]) for c in bad] == [("ib_link", "qm8700-1 port 1/13")]
    assert "speed EDR (model HDR, could be HDR)" in bad[0]["cause"]
    assert "qm8700-1 port 1/13" in findings(checks)[0]["summary"]


def test_no_master_sm_is_one_failure_of_the_subnet(tmp_path):
    checks = results(record(tmp_path, ["no_sm=1"]))
    bad = failed(checks)
    assert [c["check"] for c in bad] == ["ib_sm"] and bad[0]["measured"] == 0
    assert bad[0]["cause"] == ("no master subnet manager answered on fabric ib-compute-0 and 7 more fabrics (one "
                               "subnet): none of the 32 HCA ports asked sees one (sminfo: iberror: [4242] main: "
                               "failed: query)")
    top = findings(checks)[0]
    assert "no master subnet manager" in top["summary"]


def test_two_master_sms_are_a_split_subnet(tmp_path):
    checks = results(record(tmp_path, ["two_sm=1"]))
    bad = failed(checks)
    assert [c["check"] for c in bad] == ["ib_sm"] and bad[0]["measured"] == 2
    assert "2 master subnet managers" in bad[0]["cause"] and "a split subnet" in bad[0]["cause"]
    assert ", on qm8700-1) seen by dgxa100-1 mlx5_0, dgxa100-2 mlx5_0, dgxa100-3 mlx5_0 and 13 more" in bad[0]["cause"]
    assert ", on qm8700-2) seen by" in bad[0]["cause"]
    assert "2 master subnet managers" in findings(checks)[0]["summary"]


def test_a_missing_partition_key_fails_on_each_hca_port(tmp_path):
    checks = results(record(tmp_path, keys=("0x8001",)))
    bad = failed(checks)
    assert len(bad) == 32 and {c["check"] for c in bad} == {"ib_pkey"}
    assert bad[0]["cause"].endswith("is not a member of partition 0x7fff (its P_Key table: 0x8001)")


def test_a_dgx_that_did_not_answer_is_named(tmp_path):
    checks = results(record(tmp_path, unreachable=("dgxa100-3",)))
    bad = failed(checks)
    assert [(c["check"], c["host"], c["status"]) for c in bad] == [("ib_sm", "dgxa100-3", "error")]


def test_a_fabric_nobody_discovered_is_an_error_with_the_tools_words(tmp_path):
    rec = record(tmp_path)
    first = rec["nodes"][rec["discover"]]["ib"]["discovery"]
    for d in first.values():
        d.update(iblinkinfo=None, ibnetdiscover=None, same_as=None,
                 errors={"iblinkinfo": "iblinkinfo is not installed (infiniband-diags)"})
    checks = results(rec)
    bad = failed(checks)
    assert {c["check"] for c in bad} == {"ib_fabric"} and len(bad) == 8
    assert "iblinkinfo is not installed" in bad[0]["reason"]


def test_a_pod_without_an_ib_fabric_gets_one_skipped_row():
    checks = results({"fabrics": []})
    assert [(c["check"], c["status"], c["reason"]) for c in checks if c["stage"] == "ib"] == [
        ("ib_fabric", "skipped", "no InfiniBand fabric in the model")]


def test_the_plan_names_ports_as_the_model_and_the_catalogue_do():
    pod = Pod.from_hostvars(_hostvars())
    plan = ib_stage.ib_plan(pod)
    assert sorted(plan) == ["ib-compute-%d" % i for i in range(8)]
    link = plan["ib-compute-5"]["links"][0]
    assert link == {"node": "dgxa100-1", "nic": "ibp148s0", "hca": "mlx5_7", "port": 1, "switch": "qm8700-2",
                    "switch_port": 2, "port_name": "1/2", "width": "4X", "speed": "HDR"}
    assert plan["ib-compute-0"]["pkeys"] == ["0x7fff"]
    assert ib_stage.host_ports(pod, "dgxa100-1")[0] == {"fabric": "ib-compute-0", "hca": "mlx5_0", "port": 1,
                                                         "nic": "ibp12s0"}


@pytest.mark.parametrize("ref", ["dgxh100-pod", "dgx-ess3000"])
def test_the_other_ib_reference_pods_plan_every_cabled_hca(ref):
    pod = Pod.from_hostvars(hostvars(os.path.join(ROOT, "inventories", ref)))
    plan = ib_stage.ib_plan(pod)
    cabled = sum(1 for h in pod.hosts.values() for n in h.nics if n.fabric.kind == "infiniband" and n.switch)
    assert sum(len(p["links"]) for p in plan.values()) == cabled
    speeds = {(lk["width"], lk["speed"]) for p in plan.values() for lk in p["links"]}
    assert speeds == ({("4X", "NDR")} if ref == "dgxh100-pod" else {("4X", "EDR")})

