"""Derivations from the pod model, checked against the 004 RA's own values."""
from __future__ import annotations

import os

import pytest

from inventory_util import ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import (hosts_entries, link_layer_mismatch,
    nccl_env, nic_plan, ping_targets, rdma_changes, rdma_problems, unsupported_port_modes)


@pytest.fixture(scope="module")
def dgxpod():
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = {"dgx": ["DGX1-%d" % i for i in range(1, 10)], "storage": ["isilon-%d" % i for i in range(1, 9)]}
    return hv, groups, hv["DGX1-1"]["pod"]


def test_nic_plan_matches_004_interfaces_file(dgxpod):
    hv, groups, pod = dgxpod
    plan = {n["name"]: n for n in nic_plan(Pod.from_hostvars(hv, groups, pod), "DGX1-1")}
    # 004 appendix "NVIDIA DGX-1", /etc/network/interfaces
    assert plan["enp5s0"]["address"] == "10.55.5.231" and plan["enp5s0"]["netmask"] == "255.255.255.0"
    assert plan["enp12s0"]["address"] == "10.55.12.232"
    assert plan["enp132s0"]["address"] == "10.55.66.231" and plan["enp132s0"]["gateway"] == "10.55.66.1"
    assert plan["enp139s0"]["address"] == "10.55.139.234"
    assert {n["mtu"] for n in plan.values()} == {9000}
    assert [n["name"] for n in plan.values() if n["gateway"]] == ["enp132s0"]


def test_hosts_entries_match_004_etc_hosts(dgxpod):
    hv, groups, pod = dgxpod
    entries = hosts_entries(Pod.from_hostvars(hv, groups, pod))
    dgx = [(e["address"], e["name"]) for e in entries if e["name"].startswith("DGX")]
    # 004 appendix "NVIDIA DGX-1", /etc/hosts
    assert dgx == [("10.55.66.%d" % a, "DGX1-%d" % i) for i, a in
                   enumerate([231, 235, 239, 243, 247, 251, 155, 159, 163], 1)]
    assert ("10.55.66.211", "isilon-1") in [(e["address"], e["name"]) for e in entries]


def test_nccl_env_from_004_profile(dgxpod):
    hv, groups, pod = dgxpod
    p = Pod.from_hostvars(hv, groups, pod)
    profile = {"NCCL_IB_HCA": "mlx5", "NCCL_IB_SL": 4, "NCCL_IB_GID_INDEX": 3, "NCCL_NET_GDR_READ": 1,
               "NCCL_SOCKET_IFNAME": "^docker0"}
    env = nccl_env(p, "DGX1-1", profile)
    assert env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_3" and env["NCCL_IB_SL"] == "4"
    assert env["NCCL_IB_GID_INDEX"] == "3" and env["NCCL_NET_GDR_READ"] == "1"
    assert env["NCCL_SOCKET_IFNAME"] == "enp132s0" == env["OMPI_MCA_btl_tcp_if_include"]
    resolved = nccl_env(p, "DGX1-1", profile, {"mlx5_%d" % i: 5 for i in range(4)})
    assert resolved["NCCL_IB_GID_INDEX"] == "5"
    with pytest.raises(ValueError, match="differs between devices"):
        nccl_env(p, "DGX1-1", profile, {"mlx5_0": 3, "mlx5_1": 5})


def test_infiniband_pod_has_no_gid_index():
    hv = hostvars(os.path.join(ROOT, "inventories", "dgx-ess3000"))
    host = sorted(h for h in hv if "dgx" in hv[h]["group_names"])[0]
    env = nccl_env(Pod.from_hostvars(hv), host, {"NCCL_IB_GID_INDEX": 3})
    assert "NCCL_IB_GID_INDEX" not in env and env["NCCL_IB_HCA"]


def test_primary_nic_and_hosts_fabric_override(dgxpod):
    hv, groups, pod = dgxpod
    assert Pod.from_hostvars(hv, groups, pod).primary_nic("DGX1-1").name == "enp132s0"
    assert Pod.from_hostvars(hv, groups, dict(pod, hosts_fabric="data-5")).primary_nic("DGX1-1").name == "enp5s0"


def test_ping_targets_cover_every_pair_on_every_data_fabric(dgxpod):
    hv, groups, pod = dgxpod
    targets = ping_targets(Pod.from_hostvars(hv, groups, pod), "DGX1-1")
    dgx = [t for t in targets if t["peer"].startswith("DGX")]
    assert len(dgx) == 8 * 4  # 8 peers x 4 data NICs
    # then every storage node's NIC on a storage fabric DGX1-1 has a NIC on: 8 Isilon nodes x 2 (data-66, data-5)
    storage = [t for t in targets if t["peer"].startswith("isilon")]
    assert len(storage) == 8 * 2 and len(targets) == len(dgx) + len(storage)
    assert {(t["fabric"], t["nic"]) for t in storage} == {("data-66", "enp132s0"), ("data-5", "enp5s0")}
    assert {t["mtu"] for t in targets} == {9000}
    assert {"nic": "enp132s0", "fabric": "data-66", "peer": "DGX1-9", "peer_nic": "enp132s0", "address": "10.55.66.163",
            "mtu": 9000} in targets


def _hw(**over):
    nic = {"link_layer": "Ethernet", "port_state": "PORT_ACTIVE", "qos": {"trust": "dscp", "pfc_priorities": [3]},
           "roce_mode": "RoCE v2", "gid_error": None, "link_type": {"current": None, "next_boot": "ETH"}}
    nic.update(over)
    return {"nics": {"enp5s0": nic}}


ROCE = [{"name": "enp5s0", "rdma_device": "mlx5_0", "kind": "ethernet", "roce": "lossless"}]


def test_rdma_problems_clean():
    assert rdma_problems(ROCE, _hw()) == [] and link_layer_mismatch(ROCE, _hw()) == []


@pytest.mark.parametrize("over,expected", [
    ({"qos": {"trust": "pcp", "pfc_priorities": [3]}}, "enp5s0 (mlx5_0): QoS trust pcp, model dscp"),
    ({"qos": {"trust": "dscp", "pfc_priorities": []}}, "enp5s0 (mlx5_0): PFC on priorities [], model [3]"),
    ({"roce_mode": "RoCE v1"}, "enp5s0 (mlx5_0): RDMA-CM RoCE mode RoCE v1, model RoCE v2"),
    ({"port_state": "PORT_DOWN"}, "enp5s0 (mlx5_0): RDMA port PORT_DOWN, not PORT_ACTIVE"),
    ({"link_layer": "InfiniBand"},
     "enp5s0 (mlx5_0): link layer InfiniBand, model Ethernet (port mode set to ETH: reboot"),
    ({"gid_error": "no RoCEv2 GID for 10.0.0.1"}, "enp5s0 (mlx5_0): no RoCEv2 GID for 10.0.0.1"),
])
def test_rdma_problems_each_case(over, expected):
    problems = rdma_problems(ROCE, _hw(**over))
    assert any(p.startswith(expected) for p in problems), problems


def test_link_layer_mismatch_and_missing_device():
    assert link_layer_mismatch(ROCE, _hw(link_layer="InfiniBand")) == ["enp5s0"]
    assert rdma_problems(ROCE, {"nics": {}}) == ["enp5s0 (mlx5_0): no RDMA device behind this NIC"]
    ib = [dict(ROCE[0], kind="infiniband", roce="none")]
    assert rdma_problems(ib, _hw(link_layer="InfiniBand", qos={"trust": "pcp", "pfc_priorities": []})) == []


def test_ibdev2netdev_mapping_must_match_the_model():
    problems = rdma_problems(ROCE, _hw(rdma_device="mlx5_1"))
    assert "enp5s0 (mlx5_0): ibdev2netdev maps mlx5_1 to this NIC, model mlx5_0" in problems


def test_a_mode_the_nic_cannot_do():
    assert unsupported_port_modes(ROCE, _hw(link_layer="InfiniBand")) == []  # VPI: mlxconfig can change it
    msg = unsupported_port_modes(ROCE, _hw(link_layer="InfiniBand", link_type=None))
    assert msg and "enp5s0 (mlx5_0) runs InfiniBand but its fabric is ethernet" in msg[0]
    assert "cannot be changed" in msg[0]


def test_rdma_changes_on_a_converged_host_is_nothing():
    todo = rdma_changes(ROCE, _hw(pci="0000:05:00.0", port=1))
    assert todo == {"refused": [], "port_mode": [], "reboot_needed": [], "qos": [], "roce_mode": [], "any": False}


def test_rdma_changes_name_each_change_with_what_its_command_needs():
    ib_nic = {"name": "ib0", "rdma_device": "mlx5_4", "kind": "infiniband", "roce": "none"}
    hw = _hw(pci="0000:05:00.0", port=1, qos={"trust": "pcp", "pfc_priorities": [3]}, roce_mode="RoCE v1",
             link_type={"current": "IB", "next_boot": "IB"}, link_layer="InfiniBand")
    hw["nics"]["ib0"] = {"link_layer": "InfiniBand", "link_type": {"next_boot": "ETH"}, "port": 2,
                         "qos": {"trust": "pcp", "pfc_priorities": []}}  # not lossless: its QoS is left alone
    todo = rdma_changes(ROCE + [ib_nic], hw, 3)
    assert todo["port_mode"] == [
        {"name": "enp5s0", "device": "0000:05:00.0", "rdma_device": "mlx5_0", "port": 1, "want": "ETH", "code": 2},
        {"name": "ib0", "device": "mlx5_4", "rdma_device": "mlx5_4", "port": 2, "want": "IB", "code": 1}]
    assert todo["reboot_needed"] == ["enp5s0"]  # ib0 runs InfiniBand already; its next boot would be wrong
    assert todo["qos"] == [{"name": "enp5s0"}]
    assert todo["roce_mode"] == [{"name": "enp5s0", "rdma_device": "mlx5_0", "port": 1}]
    assert todo["refused"] == [] and todo["any"] is True
    # the port mode is left alone unless the role manages it; a pending reboot is still said
    left = rdma_changes(ROCE, _hw(link_layer="InfiniBand", link_type={"next_boot": "IB"}), 3, manage_port_mode=False)
    assert left["port_mode"] == [] and left["reboot_needed"] == ["enp5s0"] and left["any"] is True


@pytest.mark.parametrize("over", [
    {"qos": {"trust": "dscp", "pfc_priorities": [3, 4]}}, {"qos": {"trust": "dscp", "pfc_priorities": []}},
    {"qos": None}, {"qos": {"trust": "pcp", "pfc_priorities": [3]}},
])
def test_rdma_changes_reapply_qos_unless_it_is_exactly_dscp_and_the_one_priority(over):
    assert rdma_changes(ROCE, _hw(**over), 3)["qos"] == [{"name": "enp5s0"}]
    assert rdma_changes(ROCE, _hw(), 4)["qos"] == [{"name": "enp5s0"}]  # the model's priority, not the host's


def test_rdma_changes_refuse_an_unchangeable_mode_and_an_unread_qos_state_before_anything_changes():
    todo = rdma_changes(ROCE, _hw(link_layer="InfiniBand", link_type=None))
    assert len(todo["refused"]) == 1 and "cannot be changed" in todo["refused"][0]
    hw = _hw(qos_error="mlnx_qos output line 15: expected a number, got 'x'")
    hw["unreadable"] = [{"tool": "mlnx_qos", "version": "mlnx_qos 5.8"}]
    assert rdma_changes(ROCE, hw)["refused"] == [
        "mlnx_qos output could not be read (mlnx_qos 5.8): mlnx_qos output line 15: expected a number, got 'x'"]
    del hw["unreadable"]
    assert rdma_changes(ROCE, hw)["refused"][0].startswith("mlnx_qos output could not be read (version unknown): ")
    # a NIC the hardware facts do not show: its QoS and RDMA-CM mode are applied (verify then names it)
    missing = rdma_changes(ROCE, {"nics": {}})
    assert missing["qos"] == [{"name": "enp5s0"}] and missing["port_mode"] == [] and missing["refused"] == []
