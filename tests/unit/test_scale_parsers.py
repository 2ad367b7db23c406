"""Spectrum Scale parsers (module_utils/storage/scale_parsers.py) against REAL outputs (tests/unit/fixtures/scale/, each
file names its source), the join planner and verbsPorts derivation (module_utils/storage/scale_plan.py)."""
from __future__ import annotations

import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import (effective_config,
    parse_mmgetstate, parse_mmlscluster, parse_mmlsconfig, parse_mmlslicense, parse_mmlsmount)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_plan import (foreign_cluster_error,
    plan_join, verbs_ports)

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "scale")


def real(name):
    with open(os.path.join(FIX, name)) as f:
        header, _, body = f.read().partition("\n---\n")
    assert "source:" in header, "%s must name its source" % name
    return body


def test_mmlscluster_ibm_doc():
    c = parse_mmlscluster(real("mmlscluster_ibm_doc.txt"))
    assert c["member"] and c["cluster_name"] == "cluster1.kgn.ibm.com" and c["cluster_id"] == "680681562214606028"
    assert c["repository_type"] == "CCR" and c["config_servers"]["primary"] == "k164n06.kgn.ibm.com"
    assert [n["number"] for n in c["nodes"]] == [1, 2, 3]
    assert c["nodes"][2] == {"number": 3, "daemon_name": "k164n06.kgn.ibm.com", "ip": "198.117.68.70",
                             "admin_name": "k164n06.kgn.ibm.com", "designation": "quorum-manager"}


def test_mmlscluster_misaligned_and_banner():
    c = parse_mmlscluster(real("mmlscluster_cnsa.txt"))
    assert c["cluster_name"] == "ibm-spectrum-scale.ibm-spectrum-scale.ocp4.scale.ibm.com"
    assert [n["ip"] for n in c["nodes"]] == ["10.10.1.15", "10.10.1.16", "10.10.1.17"]
    assert c["nodes"][0]["designation"] == "quorum-manager-perfmon"
    w = parse_mmlscluster(real("mmlscluster_license_warning.txt"))
    assert w["cluster_name"] == "test.gpfs01" and len(w["nodes"]) == 3 and w["nodes"][1]["ip"] == "192.168.50.242"


def test_mmlscluster_not_member():
    assert parse_mmlscluster(real("mmlscluster_not_member.txt")) == {"member": False, "nodes": []}
    with pytest.raises(ValueError, match="mmlscluster output: empty output"):
        parse_mmlscluster("")


def test_mmgetstate_formats():
    a = parse_mmgetstate(real("mmgetstate_a_cnsa.txt"))
    assert [(s["name"], s["state"]) for s in a] == [("worker01", "active"), ("worker02", "active"),
                                                     ("worker03", "active")]
    long = parse_mmgetstate(real("mmgetstate_aL_clients.txt"))
    assert len(long) == 7 and long[0]["remarks"] == "quorum node" and long[6]["remarks"] == ""
    assert (long[4]["quorum"], long[4]["nodes_up"], long[4]["total_nodes"]) == (2, 3, 7)
    arb = parse_mmgetstate(real("mmgetstate_aL_arbitrating.txt"))
    assert [s["state"] for s in arb] == ["arbitrating", "arbitrating"] and "quorum" not in arb[0]
    assert arb[1]["name"] == "2ggpfsnode02-gpfs" and arb[1]["remarks"] == "quorum node"


def test_mmlsconfig_sections():
    c = parse_mmlsconfig(real("mmlsconfig_ibm_doc.txt"))
    assert c["cluster_name"] == "cl1.cluster" and c["filesystems"] == ["fs2"]
    assert c["common"]["pagepool"] == "1G" and c["common"]["cipherList"] == "EXP-RC4-MD5"
    assert c["sections"] == [{"nodes": ["c5n97g"], "values": {"pagepool": "3500m"}}]
    assert effective_config(c, "c5n97g")["pagepool"] == "3500m"
    assert effective_config(c, "c5n97g.example.com")["pagepool"] == "3500m"
    assert effective_config(c, "c5n101")["pagepool"] == "1G"
    # single-attribute form documented for mmlsconfig Attribute: values followed by the node list
    one = parse_mmlsconfig("verbsPorts mlx5_0/1 mlx5_2/1 [dgx1,dgx2]\n")
    assert effective_config(one, "dgx2")["verbsPorts"] == "mlx5_0/1 mlx5_2/1"


def test_mmlsmount_formats():
    m = parse_mmlsmount(real("mmlsmount_L_ibm_doc.txt"))
    assert m["fs1"]["owner"] == "mnsd.cluster" and m["fs1"]["count"] == 5
    assert m["fs1"]["nodes"][3] == {"ip": "9.114.132.97", "name": "c5n97", "cluster": "cluster1.cluster"}
    r = parse_mmlsmount(real("mmlsmount_L_cnsa.txt"))
    assert r["fs1"]["device"] == "ess_fs1" and r["fs1"]["owner"] == "ess.bda.scale.com"
    assert len(r["fs1"]["nodes"]) == 7 - 1 and r["fs1"]["nodes"][3]["name"] == "worker01.ocp4"
    assert parse_mmlsmount("File system fs3 is not mounted.\n") == {
        "fs3": {"owner": None, "device": "fs3", "count": 0, "nodes": []}}


def test_mmgetstate_tiebreaker_quorum():
    # "1*": quorum 1 with tiebreaker disks - the old parser dropped quorum / nodes up / total for such rows
    st = parse_mmgetstate(real("mmgetstate_aL_tiebreaker.txt"))
    assert [(s["name"], s["quorum"], s["nodes_up"], s["total_nodes"], s["tiebreaker"]) for s in st] == [
        ("gpfs01", 1, 2, 2, True), ("gpfs02", 1, 2, 2, True)]
    long = parse_mmgetstate(real("mmgetstate_aL_clients.txt"))
    assert long[0]["tiebreaker"] is False


@pytest.mark.parametrize("name,fs,count", [("mmlsmount_all_noL_storage_scale_vagrant.txt", "fs1", 1),
                                           ("mmlsmount_all_noL_gpfs41_centos.txt", "fs_gpfs01", 2)])
def test_mmlsmount_without_L_is_mounted(name, fs, count):
    # the old parser wanted "nodes:" and reported these file systems as not mounted
    m = parse_mmlsmount(real(name))
    assert m == {fs: {"owner": None, "device": fs, "count": count, "nodes": None}}


@pytest.mark.parametrize("fn,text,words", [
    (parse_mmgetstate, "", "mmgetstate output: empty output"),
    (parse_mmgetstate, "mmgetstate: 6027-1382 This node does not belong to a GPFS cluster.\n", "no table header"),
    (parse_mmgetstate, " Node number  Node name  GPFS state\n---------\n  1  n1  sleeping\n", "line 3: no GPFS state"),
    (parse_mmgetstate, " Node number  Node name  Quorum  Nodes up  Total nodes  GPFS state\n-----\n"
                       "  1  n1  2  3  active\n", "line 3: expected quorum, nodes up and total nodes"),
    (parse_mmgetstate, " Node number  Node name  GPFS state\n", "header is the last line"),
    (parse_mmlsmount, "File system fs1 is mounted on 2 nodes:\n", "0 node(s) listed, the header says 2"),
    (parse_mmlsmount, "File system fs1 is mounted on 1 nodes:\n  10.0.0.1 n1 c\n  10.0.0.2 n2 c\n",
     "2 node(s) listed, the header says 1"),
    (parse_mmlsmount, "File system fs1 is mounted somewhere\n", "line 1: expected 'File system NAME"),
    (parse_mmlscluster, "GPFS cluster information\n  GPFS cluster name:  c1\n", "no table header"),
    (parse_mmlscluster, "random text\n", "no 'GPFS cluster name:' line"),
    (parse_mmlslicense, " Node name   Required license   Designated license\n------\nn1 server server extra\n",
     "line 3: expected 'node required-license"),
    (parse_mmlsconfig, "Configuration data for cluster c1:\n---\n%%% x\n", "line 3: expected 'attribute value'"),
])
def test_scale_parsers_refuse_what_they_cannot_read(fn, text, words):
    with pytest.raises(ValueError) as e:
        fn(text)
    assert words in str(e.value)


def test_mmlslicense():
    lic = parse_mmlslicense(real("mmlslicense_L.txt"))
    assert lic == {"c01": {"required": "server", "designated": "server"},
                   "c02": {"required": "server", "designated": "server"},
                   "c03": {"required": "client", "designated": "client"}}


FABRICS = [{"name": "ib0", "kind": "infiniband", "carries": ["compute", "storage"]},
           {"name": "ib1", "kind": "infiniband", "carries": ["compute"]},
           {"name": "eth", "kind": "ethernet", "carries": ["storage"]}]


def test_verbs_ports():
    nics = [{"name": "a", "fabric": "ib0", "rdma_device": "mlx5_0"},
            {"name": "b", "fabric": "ib1", "rdma_device": "mlx5_1"},
            {"name": "c", "fabric": "eth", "rdma_device": "mlx5_2"}, {"name": "d", "fabric": "ib0"},
            {"name": "e", "fabric": "ib0", "rdma_device": "mlx5_3"},
            {"name": "f", "fabric": "nope", "rdma_device": "x"}]
    assert verbs_ports(nics, FABRICS) == ["mlx5_0/1", "mlx5_3/1"]
    assert verbs_ports(nics, FABRICS, port=2) == ["mlx5_0/2", "mlx5_3/2"]
    assert verbs_ports([], FABRICS) == []


def test_verbs_ports_of_the_ess3000_inventory():
    import yaml
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    inv = os.path.join(root, "inventories", "dgx-ess3000")
    with open(os.path.join(inv, "group_vars", "all", "pod.yml")) as f:
        pod = yaml.safe_load(f)["pod"]
    with open(os.path.join(inv, "host_vars", "dgx1-1.yml")) as f:
        nics = yaml.safe_load(f)["nics"]
    assert " ".join(verbs_ports(nics, pod["fabrics"])) == "mlx5_0/1 mlx5_1/1 mlx5_2/1 mlx5_3/1"


def test_foreign_cluster_message():
    msg = foreign_cluster_error("dgx1-3", "lab.cluster", "ess3000.dgxpod")
    assert "dgx1-3" in msg and "'lab.cluster'" in msg and "'ess3000.dgxpod'" in msg
    assert foreign_cluster_error("dgx1-3", None, "x") is None and foreign_cluster_error("d", "x", "x") is None


WANT = {"verbsRdma": "enable", "verbsPorts": "mlx5_0/1 mlx5_2/1"}


def test_plan_join_from_nothing_and_when_done():
    cluster = parse_mmlscluster(real("mmlscluster_license_warning.txt"))
    plan = plan_join("dgx1", cluster, {}, {"common": {}, "sections": []}, [], {}, WANT, ["fs1"])
    assert plan["steps"] == [["mmaddnode", "-N", "dgx1"], ["mmchlicense", "client", "--accept", "-N", "dgx1"],
                             ["mmchconfig", "verbsPorts=mlx5_0/1 mlx5_2/1,verbsRdma=enable", "-N", "dgx1"],
                             ["mmstartup", "-N", "dgx1"], ["wait-active"], ["mmmount", "fs1", "-N", "dgx1"]]
    cluster["nodes"].append({"number": 4, "daemon_name": "dgx1", "ip": "1.2.3.4", "admin_name": "dgx1",
                             "designation": ""})
    config = {"common": {}, "sections": [{"nodes": ["dgx1"], "values": dict(WANT)}]}
    done = plan_join("dgx1", cluster, {"dgx1": {"required": "client", "designated": "client"}}, config,
                     [{"name": "dgx1", "state": "active"}], {"fs1": {"nodes": [{"name": "dgx1"}]}}, WANT, ["fs1"])
    assert done == {"steps": [], "reasons": [], "changed": False}


@pytest.mark.parametrize("state,config,mounted,want", [
    ("down", WANT, False, [["mmstartup", "-N", "dgx1"], ["wait-active"], ["mmmount", "fs1", "-N", "dgx1"]]),
    ("active", {"verbsRdma": "enable"}, True,
     [["mmchconfig", "verbsPorts=mlx5_0/1 mlx5_2/1", "-N", "dgx1"], ["mmshutdown", "-N", "dgx1"],
      ["mmstartup", "-N", "dgx1"], ["wait-active"], ["mmmount", "fs1", "-N", "dgx1"]]),
    ("active", WANT, False, [["mmmount", "fs1", "-N", "dgx1"]]),
])
def test_plan_join_partial(state, config, mounted, want):
    cluster = {"cluster_name": "c", "nodes": [{"daemon_name": "dgx1.ib", "admin_name": "dgx1"}]}
    plan = plan_join("dgx1", cluster, {"dgx1.ib": {"designated": "client"}},
                     {"common": {}, "sections": [{"nodes": ["dgx1"], "values": config}]},
                     [{"name": "dgx1", "state": state}], {"fs1": {"nodes": [{"name": "dgx1"}] if mounted else []}},
                     WANT, ["fs1"])
    assert plan["steps"] == want
