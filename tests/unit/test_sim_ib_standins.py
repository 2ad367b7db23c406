"""The infiniband-diags stand-ins of the pod-in-a-box (sim/standins/podsim_ib.py) and `podsim ib`'s declared fabric
(sim/podsimlib/ib.py): what they print parses with the toolkit's own parsers (network/ib_parse.py, tested on real
outputs), every fabric fault changes what the tools print the way the real fault would, and the readings the module
takes from them evaluate (network/ib_stage.py) to a pass on the healthy fabric and to the fault's check otherwise."""
from __future__ import annotations

import json
import os

import pytest

import podmodel as pm
import podsim_ib
from podsimlib import ib as simib

import pod_ib_fabric  # library/pod_ib_fabric.py

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_stage
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_parse import (parse_ibnetdiscover,
    parse_iblinkinfo, parse_sminfo)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod

POD = pm.pod_shape(4, 2)


@pytest.fixture(scope="module")
def fmap():
    return simib.sim_fabric_map(POD)


def test_the_declared_fabric_is_the_sim_pods_rdma_nics_on_two_hdr_switches(fmap):
    assert sorted(fmap["switches"]) == ["sim-ib1", "sim-ib2"] and fmap["sm"] == "sim-ib1"
    assert len(fmap["hcas"]) == 16 and len(fmap["links"]) == 16
    assert {(lk["width"], lk["speed"]) for lk in fmap["links"]} == {("4X", "HDR")}
    assert [(i["a"], i["a_port"], i["b"], i["b_port"]) for i in fmap["isls"]] == [
        ("sim-ib1", 39, "sim-ib2", 39), ("sim-ib1", 40, "sim-ib2", 40)]
    assert fmap["switches"]["sim-ib1"]["desc"] == "MF0;sim-ib1:MQM8700/U1"
    assert fmap["hcas"]["sim-dgx1 mlx5_0"]["desc"] == "sim-dgx1 mlx5_0"  # rdma-ndd's "%h %d"


def test_the_healthy_outputs_parse_with_the_toolkits_parsers(fmap):
    out, err, rc = podsim_ib.render_sminfo(fmap, {}, "sim-dgx3 mlx5_2")
    sm = parse_sminfo(out)
    assert rc == 0 and not err and sm["master"] and sm["guid"] == fmap["switches"]["sim-ib1"]["guid"]
    ports = parse_iblinkinfo(podsim_ib.render_iblinkinfo(fmap, {}))
    up = [p for p in ports if p["state"] == "Active"]
    assert len(up) == 16 * 2 + 2 * 2  # both ends of every HCA link and of the two ISLs
    assert {(p["width"], p["speed"], p["lane_gbps"]) for p in up} == {("4X", "HDR", "53.125")}
    assert {p["phys_state"] for p in ports if p["state"] == "Down"} == {"Polling"}
    topo = parse_ibnetdiscover(podsim_ib.render_ibnetdiscover(fmap, {}, "sim-dgx1 mlx5_0"))
    assert len(topo["nodes"]) == 2 + 16
    assert topo["initiated_from"]["node"] == fmap["hcas"]["sim-dgx1 mlx5_0"]["guid"]
    sw1 = [n for n in topo["nodes"] if n["desc"] == "MF0;sim-ib1:MQM8700/U1"][0]
    assert len(sw1["links"]) == 8 + 2 and {(lk["width"], lk["speed"]) for lk in sw1["links"]} == {("4X", "HDR")}


def test_each_fault_changes_the_outputs_as_the_real_fault_would(fmap):
    f = podsim_ib.parse_faults(["swap=sim-dgx1:mlx5_0,sim-dgx2:mlx5_0"])
    def peers_of(faults):
        return {(p["node_desc"], p["port"]): p["peer_desc"]
                for p in parse_iblinkinfo(podsim_ib.render_iblinkinfo(fmap, faults)) if p["node_type"] == "Switch"}
    peers, healthy = peers_of(f), peers_of({})
    changed = {k: (healthy[k], v) for k, v in peers.items() if healthy[k] != v}
    assert sorted(changed.values()) == [("sim-dgx1 mlx5_0", "sim-dgx2 mlx5_0"), ("sim-dgx2 mlx5_0", "sim-dgx1 mlx5_0")]

    f = podsim_ib.parse_faults(["width=sim-dgx2:mlx5_1:1x"])
    (p,) = [p for p in parse_iblinkinfo(podsim_ib.render_iblinkinfo(fmap, f)) if p["width"] == "1X"
            and p["node_type"] == "Switch"]
    assert p["peer_desc"] == "sim-dgx2 mlx5_1" and p["could_be_width"] == "4X"
    f = podsim_ib.parse_faults(["speed=sim-dgx4:mlx5_3:EDR"])
    slow = [p for p in parse_iblinkinfo(podsim_ib.render_iblinkinfo(fmap, f)) if p["speed"] == "EDR"]
    assert len(slow) == 2 and slow[0]["could_be_speed"] == "HDR"
    nd = parse_ibnetdiscover(podsim_ib.render_ibnetdiscover(fmap, f, "sim-dgx1 mlx5_0"))
    assert sum(1 for n in nd["nodes"] for lk in n["links"] if lk["speed"] == "EDR") == 2

    out, err, rc = podsim_ib.render_sminfo(fmap, {"no_sm": True}, "sim-dgx1 mlx5_0")
    assert rc == 255 and out == "" and parse_sminfo(err)["error"].startswith("sminfo: iberror")
    a = parse_sminfo(podsim_ib.render_sminfo(fmap, {"two_sm": True}, "sim-dgx1 mlx5_0")[0])
    b = parse_sminfo(podsim_ib.render_sminfo(fmap, {"two_sm": True}, "sim-dgx1 mlx5_2")[0])  # on sim-ib2
    assert a["master"] and b["master"] and a["guid"] != b["guid"]


@pytest.mark.parametrize("bad", ["swap=sim-dgx1:mlx5_0", "width=sim-dgx1:mlx5_0:3X", "speed=sim-dgx1:mlx5_0:FAST",
                                 "flap=1", "width=sim-dgx1"])
def test_a_bad_fault_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match=bad.split("=")[0] if bad != "flap=1" else "unknown IB fault"):
        podsim_ib.parse_faults([bad])


def test_the_tools_read_the_nodes_state(tmp_path, monkeypatch, capsys, fmap):
    state = tmp_path / "hardware.json"
    state.write_text(json.dumps({"hostname": "sim-dgx2", "ib_fabric": fmap, "ib_faults": {}}))
    monkeypatch.setenv("PODSIM_HW_STATE", str(state))
    assert podsim_ib.main(["/opt/standins/sminfo", "-C", "mlx5_1", "-P", "1"]) == 0
    assert parse_sminfo(capsys.readouterr().out)["master"]
    assert podsim_ib.main(["/opt/standins/ibnetdiscover", "-C", "mlx5_1", "-P", "1"]) == 0
    topo = parse_ibnetdiscover(capsys.readouterr().out)
    assert topo["initiated_from"]["node"] == fmap["hcas"]["sim-dgx2 mlx5_1"]["guid"]
    state.write_text(json.dumps({"hostname": "sim-dgx2"}))  # no map (`podsim ib --map` not run): as without IB
    assert podsim_ib.main(["/opt/standins/iblinkinfo"]) == 255
    assert "can't open UMAD port" in capsys.readouterr().err
    assert podsim_ib.main(["/opt/standins/perfquery"]) == 2


def test_the_node_sysfs_holds_the_pkeys_and_the_map_takes_the_nodes_own_guids(tmp_path, fmap):
    import copy
    import podsim_hw
    simib.write_sysfs(str(tmp_path), fmap, "sim-dgx3")
    assert pod_ib_fabric.read_pkeys(str(tmp_path), "mlx5_2", 1) == ["0xffff"]
    assert not os.path.exists(tmp_path / "sys" / "class" / "infiniband" / "mlx5_2" / "node_guid")  # podsim_hw's
    simib.remove_sysfs(str(tmp_path), fmap, "sim-dgx3")
    assert pod_ib_fabric.read_pkeys(str(tmp_path), "mlx5_2", 1) is None
    states = {d.name: podsim_hw.default_state(d.name, i + 1) for i, d in enumerate(POD.dgx)}
    m = simib.with_node_guids(copy.deepcopy(fmap), states)
    assert m["hcas"]["sim-dgx3 mlx5_2"]["guid"] == "0x" + states["sim-dgx3"]["hcas"]["mlx5_2"]["node_guid"].replace(
        ":", "")
    # what the module reads from the stand-in sysfs podsim_hw writes is the GUID ibnetdiscover then shows
    files = podsim_hw.fake_sysfs_files(states["sim-dgx3"], {})
    (tmp_path / "n").mkdir()
    for rel, text in files.items():
        if rel.endswith("/node_guid"):
            (tmp_path / "n" / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "n" / rel).write_text(text)
    assert pod_ib_fabric.node_guid(str(tmp_path / "n"), "mlx5_2") == m["hcas"]["sim-dgx3 mlx5_2"]["guid"]


def _readings(fmap, faults, sysfs_root):
    model = simib.sim_ib_model(POD)
    pod = Pod.from_model(model)
    fabrics = ib_stage.ib_fabrics(pod)
    nodes = {}
    for i, d in enumerate(pod.dgx):
        def run(argv, timeout, node=d.name):
            key = "%s %s" % (node, argv[argv.index("-C") + 1])
            if argv[0] == "sminfo":
                out, err, rc = podsim_ib.render_sminfo(fmap, faults, key)
                return rc, out, err
            if argv[0] == "iblinkinfo":
                return 0, podsim_ib.render_iblinkinfo(fmap, faults), ""
            return 0, podsim_ib.render_ibnetdiscover(fmap, faults, key), ""
        simib.write_sysfs(sysfs_root, fmap, d.name)
        nodes[d.name] = {"ib": pod_ib_fabric.gather(run, lambda t: t, ib_stage.ports_of_nics(
            model["hosts"][d.name]["vars"]["nics"], fabrics), i == 0, 5, sysfs_root), "error": None,
            "unreachable": False}
    return ib_stage.evaluate(record_of_model(model, fabrics, nodes), {}, {})


def record_of_model(model, fabrics, nodes):
    """pod_stages.ib as validate_ib.yml records it, for a model in model_from_hostvars' shape."""
    hosts = model["hosts"]
    return {"fabrics": fabrics, "nodes": nodes, "discover": "sim-dgx1", "pod": model["pod"],
            "groups": {g: [h for h, v in hosts.items() if g in v["groups"]] for g in ("dgx", "storage", "switches")},
            "nics": {h: v["vars"]["nics"] for h, v in hosts.items() if "nics" in v["vars"]},
            "switches": {h: v["vars"]["switch"] for h, v in hosts.items() if "switch" in v["vars"]}}


def test_the_declared_fabric_evaluates_to_a_pass_and_a_fault_to_its_check(tmp_path, fmap):
    healthy = _readings(fmap, {}, str(tmp_path))
    assert [c.host for c in healthy if c.status != "pass"] == []
    assert sum(1 for c in healthy if c.check == "ib_link") == 16 and sum(1 for c in healthy if c.check == "ib_sm") == 1
    bad = [c for c in _readings(fmap, podsim_ib.parse_faults(["width=sim-dgx3:mlx5_1:1X"]), str(tmp_path))
           if c.status != "pass"]
    assert [(c.check, c.host) for c in bad] == [("ib_link", "sim-ib1 port 1/6")]
    assert "sim-dgx3 mlx5_1" in bad[0].cause


def test_a_stand_in_output_cut_short_is_refused_by_the_parser(fmap):
    text = podsim_ib.render_iblinkinfo(fmap, {})
    with pytest.raises(ParseError):
        parse_iblinkinfo(text[:-1])  # a last line without its newline: cut off


@pytest.mark.parametrize("name", ["ib_cable_swap", "ib_link_1x", "ib_link_slow", "ib_no_sm", "ib_two_sm"])
def test_each_ib_fault_of_the_catalogue_is_the_top_finding_of_the_declared_fabric(tmp_path, fmap, name):
    """The drill's judgement (scripts/drill.py: the top finding's root or what it explains is one of the fault's
    checks, one of its keywords in its cause or summary) on the declared fabric's readings with the fault set as
    its inject sets it (`podsim ib --fault K=V`)."""
    import faults as fl
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import pod_index
    f = fl.BY_NAME[name]
    sent = []

    class Ctx:
        def run(self, argv, **kw):
            sent.append(argv)
            return "{}"
    f.inject(Ctx(), f.node, {})
    (argv,) = sent
    assert argv[1:3] == ["ib", "--fault"]
    checks = [c.to_dict() for c in _readings(fmap, podsim_ib.parse_faults([argv[3]]), str(tmp_path))]
    model = simib.sim_ib_model(POD)
    top = build_findings(checks, pod_index(Pod.from_model(model)))[0]
    named = {top["root"]["check"]} | {e["check"] for e in top["explains"]}
    assert named & set(f.checks), (top, f.checks)
    text = (top["summary"] + " " + top["cause"]).lower()
    assert any(k.lower() in text for k in f.keywords), (text, f.keywords)
    assert any(w in text or w in top["host"] for w in f.where(POD, f.node)), (top, f.where(POD, f.node))
