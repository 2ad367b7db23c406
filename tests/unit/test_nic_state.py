"""The runtime NIC planner: minimal ip commands, guard on the connection, errors before changes, undo."""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.nic_state import plan_changes, undo_commands


def link(name, mtu=9000, up=True, addrs=()):
    return {"ifname": name, "mtu": mtu, "flags": ["BROADCAST", "UP"] if up else ["BROADCAST"],
            "addr_info": [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
                           "scope": "global"} for a in addrs]}


NIC = {"name": "enp5s0", "cidr": "10.0.5.11/24", "mtu": 9000}


def test_nothing_to_do():
    plan = plan_changes([NIC], [link("enp5s0", addrs=["10.0.5.11/24"])], [])
    assert not plan.changed and plan.diff == [] and plan.errors == []


def test_mtu_address_link_each_one_command():
    plan = plan_changes([NIC], [link("enp5s0", mtu=1500, up=False, addrs=["10.0.5.99/24"])], [])
    assert plan.commands == [
        ["ip", "link", "set", "dev", "enp5s0", "mtu", "9000"],
        ["ip", "addr", "add", "10.0.5.11/24", "dev", "enp5s0"],
        ["ip", "addr", "del", "10.0.5.99/24", "dev", "enp5s0"],
        ["ip", "link", "set", "dev", "enp5s0", "up"],
    ]
    assert plan.diff[0] == "enp5s0 mtu: 1500 -> 9000"


def test_wrong_prefix_is_replaced():
    plan = plan_changes([NIC], [link("enp5s0", addrs=["10.0.5.11/16"])], [])
    assert ["ip", "addr", "del", "10.0.5.11/16", "dev", "enp5s0"] in plan.commands


def test_missing_nic_is_an_error_and_nothing_changes():
    plan = plan_changes([NIC, dict(NIC, name="enp12s0", cidr="10.0.12.11/24")],
                        [link("enp5s0", mtu=1500), link("eth0")], [])
    assert plan.commands == [] and "enp12s0" in plan.errors[0] and "eth0" in plan.errors[0]


def test_connection_address_is_kept_unless_allowed():
    links = [link("enp5s0", addrs=["10.0.5.50/24"])]
    plan = plan_changes([NIC], links, [], connection_address="10.0.5.50")
    assert ["ip", "addr", "del", "10.0.5.50/24", "dev", "enp5s0"] not in plan.commands
    assert plan.warnings and "connected through" in plan.warnings[0]
    plan = plan_changes([NIC], links, [], connection_address="10.0.5.50", allow_connection_change=True)
    assert ["ip", "addr", "del", "10.0.5.50/24", "dev", "enp5s0"] in plan.commands


def test_purge_off_keeps_extra_addresses():
    plan = plan_changes([NIC], [link("enp5s0", addrs=["10.0.5.11/24", "10.0.5.12/24"])], [], purge_addresses=False)
    assert not plan.changed


def test_default_route():
    nic = dict(NIC, gateway="10.0.5.1")
    links = [link("enp5s0", addrs=["10.0.5.11/24"])]
    assert plan_changes([nic], links, [{"dst": "default", "gateway": "10.0.5.1", "dev": "enp5s0"}]).commands == []
    plan = plan_changes([nic], links, [{"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"}])
    assert plan.commands == [["ip", "route", "replace", "default", "via", "10.0.5.1", "dev", "enp5s0"]]
    assert plan.diff == ["enp5s0 default route: via 192.0.2.1 dev eth0 -> via 10.0.5.1 dev enp5s0"]


def test_no_default_route_in_model_leaves_the_host_default_alone():
    plan = plan_changes([NIC], [link("enp5s0", addrs=["10.0.5.11/24"])],
                        [{"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"}])
    assert not plan.changed


def test_undo_reverses_in_order():
    links = [link("enp5s0", mtu=1500, addrs=["10.0.5.99/24"])]
    plan = plan_changes([NIC], links, [])
    undo = undo_commands(plan.commands, links, [])
    assert undo == [
        ["ip", "addr", "add", "10.0.5.99/24", "dev", "enp5s0"],
        ["ip", "addr", "del", "10.0.5.11/24", "dev", "enp5s0"],
        ["ip", "link", "set", "dev", "enp5s0", "mtu", "1500"],
    ]
