"""The pod-in-a-box inventory generator (sim/podmodel.py) and the committed inventories/sim."""

import ipaddress
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import podmodel as pm  # noqa: E402

INV = os.path.join(ROOT, "inventories", "sim")
SIM_NET = ipaddress.ip_network("198.18.0.0/15")


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def test_committed_hosts_yml_is_the_generators_output_for_the_defaults():
    with open(os.path.join(INV, "hosts.yml")) as f:
        committed = f.read()
    assert committed == pm.render_inventory(pm.pod_shape(4, 2)), \
        "inventories/sim/hosts.yml differs from the generator: run `sim/podsim inventory > inventories/sim/hosts.yml`"


def test_cli_inventory_verb_prints_the_same_text_without_root():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "inventory"],
                         capture_output=True, text=True, check=True).stdout
    assert out == pm.render_inventory(pm.pod_shape())


def hosts_of(inv):
    return {g: inv["all"]["children"][g]["hosts"] or {} for g in ("dgx", "storage", "switches")}


@pytest.mark.parametrize("n,m", [(4, 2), (1, 0), (16, 2), (16, 8), (30, 2)])
def test_inventory_shape(n, m):
    inv = yaml.safe_load(pm.render_inventory(pm.pod_shape(n, m)))
    groups = hosts_of(inv)
    assert sorted(groups["dgx"]) == sorted("sim-dgx%d" % i for i in range(1, n + 1))
    assert sorted(groups["storage"]) == sorted("sim-isilon%d" % j for j in range(1, m + 1))
    assert sorted(groups["switches"]) == ["sim-sw1", "sim-sw2"]
    fabrics = {f["name"]: f for f in load(os.path.join(INV, "group_vars", "all", "pod.yml"))["pod"]["fabrics"]}
    seen_addr, seen_port = set(), set()
    for group in ("dgx", "storage"):
        for host, hv in groups[group].items():
            assert ipaddress.ip_address(hv["ansible_host"]) in ipaddress.ip_network(fabrics["mgmt"]["subnet"])
            for nic in hv["nics"]:
                addr = ipaddress.ip_address(nic["address"])
                assert addr in ipaddress.ip_network(fabrics[nic["fabric"]]["subnet"]), (host, nic)
                assert addr in SIM_NET
                assert addr not in seen_addr
                seen_addr.add(addr)
                if "switch" in nic:
                    key = (nic["switch"], nic["switch_port"])
                    assert key not in seen_port, key
                    seen_port.add(key)
            if group == "dgx":
                assert [x["name"] for x in hv["nics"]] == ["enp1s0f0", "enp5s0", "enp12s0", "enp132s0", "enp139s0"]
                assert [x.get("rdma_device") for x in hv["nics"][1:]] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
            else:
                assert hv["storage_node"] == {"platform": "nfs-ganesha", "model": "F800"}
    model = "7060CX2-32S" if 2 * n + m + 2 <= 32 else "7260CX3-64"
    last = 32 if model == "7060CX2-32S" else 64
    for sw, peer in (("sim-sw1", "sim-sw2"), ("sim-sw2", "sim-sw1")):
        s = groups["switches"][sw]["switch"]
        assert s["model"] == model and s["platform"] == "eos"
        assert s["port_channels"] == [{"id": 10, "members": ["Ethernet%d/1" % (last - 1), "Ethernet%d/1" % last],
                                       "mode": "active", "peer": peer}]
        isl = set(s["port_channels"][0]["members"])
        assert not {p for (w, p) in seen_port if w == sw} & isl


def test_cabling_rule():
    pod = pm.pod_shape(4, 2)
    d3 = {nic.name: (nic.switch, nic.switch_port) for nic in pod.dgx[2].nics}
    assert d3["enp5s0"] == ("sim-sw1", "Ethernet3/1")
    assert d3["enp12s0"] == ("sim-sw1", "Ethernet7/1")
    assert d3["enp132s0"] == ("sim-sw2", "Ethernet3/1")
    assert d3["enp139s0"] == ("sim-sw2", "Ethernet7/1")
    s2 = {nic.name: (nic.switch, nic.switch_port) for nic in pod.storage_nodes[1].nics}
    assert s2["40gige-2"] == ("sim-sw1", "Ethernet10/1")
    assert s2["40gige-1"] == ("sim-sw2", "Ethernet10/1")


def test_host_side_names_fit_ifnamsiz_and_carry_the_prefix():
    pod = pm.pod_shape(pm.MAX_NODES, pm.MAX_STORAGE if 2 * pm.MAX_NODES + pm.MAX_STORAGE + 2 <= 64 else 2)
    ends = [nic.host_end for n in pod.all_nodes for nic in n.nics]
    assert len(ends) == len(set(ends))
    assert all(len(e) <= 15 and e.startswith(pm.VETH_PREFIX) for e in ends)
    assert all(len(f.bridge) <= 15 and f.bridge.startswith(pm.BRIDGE_PREFIX) for f in pm.FABRICS.values())
    macs = [nic.mac for n in pod.all_nodes for nic in n.nics]
    assert len(macs) == len(set(macs))


@pytest.mark.parametrize("n,m", [(0, 2), (31, 2), (4, -1), (4, 21), (30, 10)])
def test_bad_sizes_are_refused(n, m):
    with pytest.raises(ValueError):
        pm.pod_shape(n, m)


def test_static_group_vars():
    pod = load(os.path.join(INV, "group_vars", "all", "pod.yml"))["pod"]
    assert pod["simulated"] is True and pod["ra_profile"] == "isilon-f800-dgx1"
    for f in pod["fabrics"]:
        assert ipaddress.ip_network(f["subnet"]).subnet_of(SIM_NET)
        assert "gateway" not in f, "no simulator fabric has a gateway (no default route)"
        assert f["mtu"] == pm.FABRICS[f["name"]].mtu
        assert f["subnet"] == pm.FABRICS[f["name"]].subnet
    assert pod["storage"]["export"] == "/ifs"
    assert load(os.path.join(INV, "group_vars", "dgx.yml")) == {
        "dgx_model": "dgx1", "dgx_network_sysfs_root": "/etc/podsim/sysfs", "nfs_client_type": "fuse",
        "nfs_client_fuse_helper": "podsim-nfs", "nfs_client_mount_table": "/run/podsim-nfs/mounts"}
    conn = load(os.path.join(INV, "group_vars", "all", "connection.yml"))
    assert conn["ansible_user"] == "root"
    assert "StrictHostKeyChecking=yes" in conn["ansible_ssh_common_args"]
    assert "StrictHostKeyChecking=no" not in conn["ansible_ssh_common_args"].replace(" ", "")
    assert "sim/.state/known_hosts" in conn["ansible_ssh_common_args"]
    assert conn["ansible_ssh_private_key_file"].endswith("sim/.state/id_ed25519")
