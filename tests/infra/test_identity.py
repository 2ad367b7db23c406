"""Post-deploy: each node is the node the inventory describes (hostname and NIC names)."""
from __future__ import annotations


def test_hostname_matches_inventory(node):
    assert node.host.check_output("hostname") == node.name


def test_modelled_nics_exist(node):
    present = set(node.host.check_output("ls /sys/class/net").split())
    missing = [nic["name"] for nic in node.vars.get("nics", []) if nic["name"] not in present]
    assert not missing, "%s: NICs in the model but not on the node: %s" % (node.name, ", ".join(missing))
