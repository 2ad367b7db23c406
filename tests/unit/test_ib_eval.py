"""module_utils/network/ib_eval.py on real fabric readings (tests/unit/fixtures/fabric): the SM, the links and the
cabling against a model of the same fabric; faults made by editing the real outputs."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_eval as ev
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import ib_parse as ib
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE, PORT_STATE,
    contradiction)

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")


def fx(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


QDR = fx("iblinkinfo__dbx1000_rdma_readme_qdr.txt")
# the model of that fabric: teaker-N HCA-1 port 1 on the Infiniscale-IV switch port P, 4X QDR
CABLING = [{"node": "teaker-%d" % n, "hca": "HCA-1", "port": 1, "switch": "Infiniscale-IV", "switch_port": sp,
            "width": "4X", "speed": "QDR"} for n, sp in [(4, 9), (5, 7), (6, 6), (7, 5), (8, 4), (11, 1), (10, 2),
                                                          (9, 3)]]
MASTER = ib.parse_sminfo(fx("sminfo__rdma_notes_master.txt"))


def by_host(results):
    return {r.host: r for r in results}


def well_formed(results):
    for r in results:
        assert r.subject is not None and r.category in (PORT_STATE, NODE_STATE, POD_STATE), r
        assert not contradiction(r), r
        assert r.status != "fail" or r.cause, r


def test_healthy_fabric_passes():
    res = ev.evaluate_fabric("ib0", CABLING, [{"node": "teaker-4", "hca": "HCA-1", "reading": MASTER},
                                              {"node": "teaker-5", "hca": "HCA-1", "reading": MASTER}],
                             linkinfo=ib.parse_iblinkinfo(QDR))
    well_formed(res)
    assert [r.status for r in res] == ["pass"] * (1 + 2 * len(CABLING))
    link = by_host([r for r in res if r.check == "ib_link"])["Infiniscale-IV port 9"]
    assert link.subject.switch == "Infiniscale-IV" and link.subject.port == "9" and link.category == PORT_STATE
    assert link.measured == "4X QDR Active"


def test_one_x_link_is_named_on_both_ends():
    text = QDR.replace('2    4[  ] ==( 4X          10.0 Gbps', '2    4[  ] ==( 1X          10.0 Gbps')
    res = by_host(ev.link_checks(CABLING, ib.parse_iblinkinfo(text)))
    bad = res["Infiniscale-IV port 4"]
    assert bad.status == "fail" and "width 1X (model 4X)" in bad.cause and "teaker-8 HCA-1" in bad.cause
    subjects = [(p.category, p.subject.switch, p.subject.node) for p in bad.problems]
    assert (PORT_STATE, "Infiniscale-IV", "teaker-8") in subjects and (NODE_STATE, None, "teaker-8") in subjects
    assert sum(r.status == "fail" for r in res.values()) == 1
    well_formed(res.values())


def test_lower_speed_and_down_link():
    text = QDR.replace('2    5[  ] ==( 4X          10.0 Gbps', '2    5[  ] ==( 4X           5.0 Gbps')
    up6 = '2    6[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       8    1[  ] "teaker-6 HCA-1" ( )'
    text = text.replace(up6, '2    6[  ] ==(                Down/ Polling)==>             [  ] "" ( )')
    res = by_host(ev.link_checks(CABLING, ib.parse_iblinkinfo(text)))
    assert res["Infiniscale-IV port 5"].status == "fail" and "speed DDR (model QDR)" in res[
        "Infiniscale-IV port 5"].cause
    assert res["Infiniscale-IV port 6"].status == "fail" and "Down/Polling" in res["Infiniscale-IV port 6"].cause
    cab = by_host(ev.cabling_checks(CABLING, ib.parse_iblinkinfo(text)))
    assert cab["Infiniscale-IV port 6"].status == "error" and "down" in cab["Infiniscale-IV port 6"].reason


def test_swapped_cable_is_named_on_both_ends():
    a = '2    4[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       7    1[  ] "teaker-8 HCA-1" ( )'
    b = '2    5[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       5    1[  ] "teaker-7 HCA-1" ( )'
    text = QDR.replace(a, "@A@").replace(b, a.replace("2    4[", "2    5[")).replace("@A@", b.replace("2    5[",
                                                                                                      "2    4["))
    res = by_host(ev.cabling_checks(CABLING, ib.parse_iblinkinfo(text)))
    p4, p5 = res["Infiniscale-IV port 4"], res["Infiniscale-IV port 5"]
    assert p4.status == p5.status == "fail"
    assert "cabled to teaker-7 HCA-1 port 1, model teaker-8 HCA-1 port 1" in p4.cause
    assert "teaker-8 HCA-1 port 1 is on Infiniscale-IV port 5 instead" in p4.cause
    assert {p.subject.node for p in p4.problems} == {"teaker-8", "teaker-7"}
    assert sum(r.status == "fail" for r in res.values()) == 2
    well_formed(res.values())


def test_cabling_and_links_from_ibnetdiscover_with_guids():
    topo = ib.parse_ibnetdiscover(fx("ibnetdiscover__edr_fabric_viewer_one_leaf.txt"))
    cabling = [{"node": "gpu045", "hca": "HCA-1", "port": 1, "switch": "leaf23", "switch_port": 13, "width": "4x",
                "speed": "edr"},
               {"node": "node047", "hca": "HCA-1", "port": 1, "switch": "leaf23", "switch_port": 15, "width": 4,
                "speed": "EDR"},
               {"node": "gpu004", "hca": "HCA-1", "port": 1, "switch": "leaf23", "switch_port": 37, "width": "4X",
                "speed": "EDR"}]
    switches = {"leaf23": {"guid": "0xec0d9a0300ec8480"}}
    links = by_host(ev.link_checks(cabling, topology=topo, switches=switches))
    assert links["leaf23 port 13"].status == "pass"
    assert links["leaf23 port 37"].status == "fail" and "absent from ibnetdiscover" in links["leaf23 port 37"].cause
    cab = by_host(ev.cabling_checks(cabling, topology=topo, switches=switches))
    assert cab["leaf23 port 13"].status == "pass"
    # port 15 holds node045, not node047 (node047 is on port 14)
    assert cab["leaf23 port 15"].status == "fail" and "'node045 HCA-1' port 1 (not in the model)" in cab[
        "leaf23 port 15"].cause
    unknown = ev.link_checks(cabling, topology=topo, switches={"leaf23": {"guid": "0x1"}})
    assert {r.status for r in unknown} == {"error"}


def test_the_ddr_inter_switch_link_of_the_real_fabric():
    topo = ib.parse_ibnetdiscover(fx("ibnetdiscover__edr_fabric_viewer_one_leaf.txt"))
    # an HCA-less check of a switch-switch link: the model names the peer switch as node/hca for the test
    cabling = [{"node": "spine25", "hca": "port11", "port": 11, "switch": "leaf23", "switch_port": 11,
                "width": "4X", "speed": "EDR"}]
    (r,) = ev.link_checks(cabling, topology=topo, switches={"leaf23": {"guid": "0xec0d9a0300ec8480"}})
    assert r.status == "fail" and "speed DDR (model EDR)" in r.cause


def test_sm_none_two_and_partial():
    none = ib.parse_sminfo(fx("sminfo__ofed_readme_no_sm.txt"))
    r0 = ev.sm_check("ib0", [{"node": "dgx1", "hca": "mlx5_0", "reading": none}])
    assert r0.status == "fail" and r0.measured == 0 and "no master" in r0.cause and r0.category == POD_STATE
    other = ib.parse_sminfo(fx("sminfo__ibsim_guide_master.txt"))
    r2 = ev.sm_check("ib0", [{"node": "dgx1", "hca": "mlx5_0", "reading": MASTER},
                             {"node": "dgx2", "hca": "mlx5_0", "reading": other}])
    assert r2.status == "fail" and r2.measured == 2 and "split subnet" in r2.cause
    r1 = ev.sm_check("ib0", [{"node": "dgx1", "hca": "mlx5_0", "reading": MASTER},
                             {"node": "dgx2", "hca": "mlx5_3", "reading": none}])
    assert r1.status == "fail" and r1.measured == 1 and "dgx2 mlx5_3" in r1.cause
    assert r1.problems[0].subject.node == "dgx2" and r1.problems[0].subject.hca == "mlx5_3"
    assert ev.sm_check("ib0", []).status == "error"
    for r in (r0, r1, r2):
        assert not contradiction(r)
