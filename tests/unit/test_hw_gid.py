"""RoCEv2 GID index resolution from sysfs (module_utils/network/hw_parsers.py), on fake trees built in tmp_path.

The tables are the real ones from the show_gids fixtures (tests/unit/fixtures/hw/show_gids__*.txt, sources
in their .source notes) written out the way the kernel lays them out: ports/<p>/gids/<i> (all-zero for an
empty slot), gid_attrs/types/<i> ("IB/RoCE v1" / "RoCE v2"; unreadable for an empty slot) and
gid_attrs/ndevs/<i>."""
from __future__ import annotations

import importlib
import os

import pytest

from inventory_util import ROOT

hp = importlib.import_module("ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers")

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "hw")
ZERO = ":".join(["0000"] * 8)
KERNEL_TYPE = {"RoCE v1": "IB/RoCE v1", "RoCE v2": "RoCE v2"}


def write_table(root, device, entries, port=1, slots=16):
    """entries: [(index, gid, type or None, netdev or None)]; other slots are empty like the kernel's."""
    pdir = os.path.join(str(root), "sys", "class", "infiniband", device, "ports", str(port))
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        os.makedirs(os.path.join(pdir, sub), exist_ok=True)
    used = {e[0] for e in entries}
    for i in range(slots):
        if i not in used:
            with open(os.path.join(pdir, "gids", str(i)), "w") as f:
                f.write(ZERO + "\n")
    for index, gid, gtype, ndev in entries:
        with open(os.path.join(pdir, "gids", str(index)), "w") as f:
            f.write(gid + "\n")
        if gtype is not None:
            with open(os.path.join(pdir, "gid_attrs", "types", str(index)), "w") as f:
                f.write(KERNEL_TYPE.get(gtype, gtype) + "\n")
        if ndev is not None:
            with open(os.path.join(pdir, "gid_attrs", "ndevs", str(index)), "w") as f:
                f.write(ndev + "\n")
    return pdir


def tree_from_show_gids(root, fixture_name):
    with open(os.path.join(FIX, fixture_name)) as f:
        rows = hp.parse_show_gids(f.read())
    by_dev = {}
    for r in rows:
        by_dev.setdefault((r["device"], r["port"]), []).append((r["index"], r["gid"], r["type"], r["netdev"]))
    for (dev, port), entries in by_dev.items():
        write_table(root, dev, entries, port)
    return rows


def test_gid_helpers():
    assert hp.gid_ipv4("0000:0000:0000:0000:0000:ffff:c612:050b") == "198.18.5.11"
    assert hp.gid_ipv4("0000:0000:0000:0000:0000:ffff:0a37:05e7") == "10.55.5.231"
    assert hp.gid_ipv4("fe80:0000:0000:0000:526b:4bff:fe01:cef0") is None
    assert hp.gid_ipv4("not a gid") is None
    assert hp.gid_is_zero(ZERO) and not hp.gid_is_zero("fe80::1")
    assert hp.normalize_gid_type("IB/RoCE v1") == "RoCE v1" and hp.normalize_gid_type("RoCE v2") == "RoCE v2"


def test_classic_connectx_layout_gives_3(tmp_path):
    tree_from_show_gids(tmp_path, "show_gids__magnate3_centos12.txt")
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_2", "172.17.242.56", netdev="ens6") == 3
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_3", "192.168.242.56") == 3
    table = hp.read_sysfs_gid_table(str(tmp_path), "mlx5_2")
    assert [(g["index"], g["type"], g["ipv4"], g["netdev"]) for g in table] == [
        (0, "RoCE v1", None, "ens6"), (1, "RoCE v2", None, "ens6"),
        (2, "RoCE v1", "172.17.242.56", "ens6"), (3, "RoCE v2", "172.17.242.56", "ens6")]


def test_gids_not_starting_at_zero(tmp_path):
    """NVIDIA/nccl#1573: a macvlan in a pod gets GIDs 4..7; slots 0..3 are empty (zero GID, no readable type)."""
    tree_from_show_gids(tmp_path, "show_gids__nccl_1573.txt")
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.152.0.12", netdev="net1") == 7
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_1", "10.152.4.12") == 7
    assert [g["index"] for g in hp.read_sysfs_gid_table(str(tmp_path), "mlx5_0")] == [4, 5, 6, 7]


def test_two_ipv6_link_local_addresses_push_ipv4_to_5(tmp_path):
    """IBM/SpectrumScale_NETWORK_READINESS#4: index 3 is a RoCE v2 GID, but of an IPv6 link-local address."""
    tree_from_show_gids(tmp_path, "show_gids__spectrumscale_network_readiness_4.txt")
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "172.19.0.60", netdev="ens1f0") == 5
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", None) == 5  # the only v2 IPv4 GID


def test_same_address_on_two_netdevs_needs_the_netdev(tmp_path):
    """openucx/ucx#9484: the bond and a VXLAN carry the same IPv4 address - the netdev decides."""
    tree_from_show_gids(tmp_path, "show_gids__ucx_9484_bond_vxlan.txt")
    root = str(tmp_path)
    assert hp.resolve_roce_v2_gid_index(root, "mlx5_bond_0", "30.153.10.175", netdev="bond1") == 5
    assert hp.resolve_roce_v2_gid_index(root, "mlx5_bond_0", "30.153.10.175", netdev="b3.vxlan.30100") == 3
    with pytest.raises(hp.GidResolutionError, match="2 RoCE v2 IPv4 GIDs"):
        hp.resolve_roce_v2_gid_index(root, "mlx5_bond_0", None)


def test_address_not_present_is_a_clear_error(tmp_path):
    tree_from_show_gids(tmp_path, "show_gids__magnate3_centos12.txt")
    with pytest.raises(hp.GidResolutionError) as e:
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_2", "10.55.5.231", netdev="ens6")
    msg = str(e.value)
    assert msg.startswith("mlx5_2: no RoCE v2 GID for 10.55.5.231 on port 1")
    assert "3=172.17.242.56 (RoCE v2, ens6)" in msg and "0=fe80:" in msg
    assert "is 10.55.5.231 configured on ens6" in msg
    # a port whose netdev has no IPv4 address at all (only link-local GIDs)
    with pytest.raises(hp.GidResolutionError, match="mlx5_0: no RoCE v2 GID for 10.0.0.1"):
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.0.0.1")
    with pytest.raises(hp.GidResolutionError, match="mlx5_0: no RoCE v2 IPv4 GID on port 1"):
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", None)


def test_v1_only_and_ipv6_global_gids_are_not_taken(tmp_path):
    # RoCE v1 entry for the address but no v2 entry (a v1-only port); IPv6 global v2 GIDs (kvcache-ai/Mooncake#1617
    # shows such tables) never count as the IPv4 GID
    write_table(tmp_path, "mlx5_0", [
        (0, "fe80:0000:0000:0000:0690:81ff:fe39:e3e8", "RoCE v2", "enp105s0"),
        (1, "fd93:16d3:59b6:010d:0690:81ff:fe39:e3e8", "RoCE v2", "enp105s0"),
        (2, "0000:0000:0000:0000:0000:ffff:0a37:05e7", "RoCE v1", "enp105s0"),
    ])
    with pytest.raises(hp.GidResolutionError) as e:
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.55.5.231")
    assert "2=10.55.5.231 (RoCE v1, enp105s0)" in str(e.value)


def test_unreadable_type_is_not_v2(tmp_path):
    # a populated slot whose type cannot be read (the kernel answers EINVAL) - here a directory stands in
    pdir = write_table(tmp_path, "mlx5_0", [(3, "0000:0000:0000:0000:0000:ffff:0a37:05e7", None, "enp5s0")])
    os.makedirs(os.path.join(pdir, "gid_attrs", "types", "3"))
    (g,) = hp.read_sysfs_gid_table(str(tmp_path), "mlx5_0")
    assert g["type"] is None and g["ipv4"] == "10.55.5.231"
    with pytest.raises(hp.GidResolutionError, match="3=10.55.5.231 \\(type unknown, enp5s0\\)"):
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.55.5.231")


def test_several_addresses_pick_the_named_one(tmp_path):
    write_table(tmp_path, "mlx5_0", [
        (0, "fe80:0000:0000:0000:526b:4bff:fe01:cef0", "RoCE v1", "enp5s0"),
        (1, "fe80:0000:0000:0000:526b:4bff:fe01:cef0", "RoCE v2", "enp5s0"),
        (2, "0000:0000:0000:0000:0000:ffff:0a37:05e7", "RoCE v1", "enp5s0"),
        (3, "0000:0000:0000:0000:0000:ffff:0a37:05e7", "RoCE v2", "enp5s0"),
        (4, "0000:0000:0000:0000:0000:ffff:0a37:05e8", "RoCE v1", "enp5s0"),
        (5, "0000:0000:0000:0000:0000:ffff:0a37:05e8", "RoCE v2", "enp5s0"),
    ])
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.55.5.232") == 5
    assert hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.55.5.231") == 3
    with pytest.raises(hp.GidResolutionError, match="has 2 RoCE v2 IPv4 GIDs"):
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", None)


def test_missing_device_or_port(tmp_path):
    write_table(tmp_path, "mlx5_0", [])
    with pytest.raises(hp.GidResolutionError) as e:
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_7", "10.55.5.231")
    assert str(e.value).startswith("mlx5_7: no GID table at ") and "device mlx5_7 port 1" in str(e.value)
    with pytest.raises(hp.GidResolutionError, match="mlx5_0: no GID table .*port 2"):
        hp.resolve_roce_v2_gid_index(str(tmp_path), "mlx5_0", "10.55.5.231", port=2)
    assert hp.read_sysfs_gid_table(str(tmp_path), "mlx5_0") == []
