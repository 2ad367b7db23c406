"""library/pod_ib_fabric.py with an injected runner on real infiniband-diags outputs (tests/unit/fixtures/fabric/,
sources in its README.md): what it runs, what it returns, and every way a reading can be missing."""
from __future__ import annotations

import os

import pod_ib_fabric  # library/pod_ib_fabric.py

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_stage import ports_of_nics

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "fabric")


def _fixture(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


SMINFO = _fixture("sminfo__rdma_notes_master.txt")
NO_SM = _fixture("sminfo__ofed_readme_no_sm.txt")
LINKINFO = _fixture("iblinkinfo__dbx1000_rdma_readme_qdr.txt")
TOPOLOGY = _fixture("ibnetdiscover__rdma_core_man_topology_example.txt")
PORTS = [{"fabric": "ib-0", "hca": "mlx5_0", "port": 1, "nic": "ibp12s0"},
         {"fabric": "ib-1", "hca": "mlx5_1", "port": 1, "nic": "ibp18s0"}]


class Runner:
    """run(argv, timeout) -> (rc, out, err) from a table of answers per tool; keeps what was run."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        answer = self.answers[argv[0]]
        return answer(argv) if callable(answer) else answer


def _which(missing=()):
    return lambda tool: None if tool in missing else "/usr/sbin/" + tool


def _sysfs(tmp_path, pkeys=None, node_guids=None):
    for hca, keys in (pkeys or {}).items():
        d = tmp_path / "sys" / "class" / "infiniband" / hca / "ports" / "1" / "pkeys"
        d.mkdir(parents=True)
        for i, k in enumerate(keys):
            (d / str(i)).write_text(k + "\n")
    for hca, g in (node_guids or {}).items():
        d = tmp_path / "sys" / "class" / "infiniband" / hca
        d.mkdir(parents=True, exist_ok=True)
        (d / "node_guid").write_text(g + "\n")
    return str(tmp_path)


def test_every_hca_port_asks_sminfo_and_the_discovering_dgx_reads_the_fabric(tmp_path):
    run = Runner({"sminfo": (0, SMINFO, ""), "iblinkinfo": (0, LINKINFO, ""), "ibnetdiscover": (0, TOPOLOGY, "")})
    root = _sysfs(tmp_path, {"mlx5_0": ["0xffff", "0x0000"], "mlx5_1": ["0xffff", "0x8001"]})
    got = pod_ib_fabric.gather(run, _which(), PORTS, discover=True, tool_timeout=7, sysfs_root=root)
    assert run.calls[:2] == [["sminfo", "-C", "mlx5_0", "-P", "1"], ["sminfo", "-C", "mlx5_1", "-P", "1"]]
    assert ["iblinkinfo", "-C", "mlx5_0", "-P", "1"] in run.calls
    assert ["ibnetdiscover", "-C", "mlx5_0", "-P", "1"] in run.calls
    p0 = got["ports"][0]
    assert (p0["fabric"], p0["nic"], p0["hca"], p0["port"]) == ("ib-0", "ibp12s0", "mlx5_0", 1)
    assert p0["sminfo"]["master"] and p0["sminfo"]["guid"] == "0x7cfe90030016aef1" and p0["sminfo"]["lid"] == 37
    assert p0["pkeys"] == ["0xffff"] and got["ports"][1]["pkeys"] == ["0xffff", "0x8001"]
    assert p0["errors"] == {}
    d = got["discovery"]["ib-0"]
    assert d["iblinkinfo"][0]["node_desc"] == "teaker-4 HCA-1" and d["ibnetdiscover"]["nodes"][0]["type"] == "Switch"
    assert d["errors"] == {} and d["same_as"] is None
    # without discover: no iblinkinfo / ibnetdiscover at all
    run2 = Runner({"sminfo": (0, SMINFO, "")})
    assert pod_ib_fabric.gather(run2, _which(), PORTS, sysfs_root=root)["discovery"] == {}
    assert {c[0] for c in run2.calls} == {"sminfo"}


def test_no_sm_is_a_reading_and_a_missing_tool_an_error_with_why(tmp_path):
    run = Runner({"sminfo": (255, "", NO_SM), "ibnetdiscover": (0, TOPOLOGY, "")})
    got = pod_ib_fabric.gather(run, _which(missing=("iblinkinfo",)), PORTS[:1], discover=True, sysfs_root=str(tmp_path))
    p0 = got["ports"][0]
    assert p0["sminfo"]["error"] == "sminfo: iberror: query failed" and not p0["sminfo"]["master"]
    assert "sminfo" not in p0["errors"]
    assert p0["errors"]["pkeys"] == "no P_Key table in sysfs for mlx5_0 port 1"
    d = got["discovery"]["ib-0"]
    assert d["iblinkinfo"] is None and d["errors"] == {"iblinkinfo": "iblinkinfo is not installed (infiniband-diags)"}
    assert d["ibnetdiscover"] is not None


def test_a_failing_timing_out_or_garbled_tool_is_an_error_never_a_reading(tmp_path):
    run = Runner({"sminfo": (None, "", "timed out after 7s"), "iblinkinfo": (1, "", "ibwarn: bad port\n"),
                  "ibnetdiscover": (0, TOPOLOGY[:TOPOLOGY.index("[22]") + 3], "")})
    got = pod_ib_fabric.gather(run, _which(), PORTS[:1], discover=True, sysfs_root=str(tmp_path))
    assert got["ports"][0]["sminfo"] is None
    assert got["ports"][0]["errors"]["sminfo"] == "sminfo -C mlx5_0 -P 1: timed out after 7s"
    d = got["discovery"]["ib-0"]
    assert d["errors"]["iblinkinfo"] == "iblinkinfo -C mlx5_0 -P 1 exited 1: ibwarn: bad port"
    assert d["ibnetdiscover"] is None and d["errors"]["ibnetdiscover"].startswith("ibnetdiscover")


def test_a_fabric_already_in_an_earlier_topology_is_not_discovered_again(tmp_path):
    """Rails that are one subnet: the second HCA's node GUID is in the first fabric's topology."""
    run = Runner({"sminfo": (0, SMINFO, ""), "iblinkinfo": (0, LINKINFO, ""), "ibnetdiscover": (0, TOPOLOGY, "")})
    root = _sysfs(tmp_path, node_guids={"mlx5_0": "0008:f104:0396:0558", "mlx5_1": "0008:f104:0396:0984"})
    got = pod_ib_fabric.gather(run, _which(), PORTS, discover=True, sysfs_root=root)
    assert [c[0] for c in run.calls].count("ibnetdiscover") == 1
    d1 = got["discovery"]["ib-1"]
    assert d1["same_as"] == "ib-0" and d1["node_guid"] == "0x0008f10403960984"
    assert d1["ibnetdiscover"] == got["discovery"]["ib-0"]["ibnetdiscover"]


def test_the_ports_read_are_the_hosts_nics_on_the_ib_fabrics():
    nics = [{"name": "enp226s0", "fabric": "mgmt"},
            {"name": "ibp12s0", "fabric": "ib-compute-0", "rdma_device": "mlx5_0"},
            {"name": "ib3", "fabric": "ib-compute-3"},
            {"name": "enp97s0f0", "fabric": "storage-1", "rdma_device": "mlx5_4"}]
    assert ports_of_nics(nics, ["ib-compute-0", "ib-compute-3"]) == [
        {"fabric": "ib-compute-0", "hca": "mlx5_0", "port": 1, "nic": "ibp12s0"},
        {"fabric": "ib-compute-3", "hca": "ib3", "port": 1, "nic": "ib3"}]
    assert ports_of_nics(nics, []) == []
