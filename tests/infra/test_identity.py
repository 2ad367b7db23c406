"""Post-deploy: each node is the node the inventory describes (hostname and NIC names)."""
from __future__ import annotations


def test_hostname_matches_inventory(node):
    assert node.host.check_output("hostname") == node.name


def test_modelled_nics_exist(node):
    missing = [nic["name"] for nic in node.vars.get("nics", []) if not node.host.interface(nic["name"]).exists]
    assert not missing, "%s: NICs in the model but not on the node: %s" % (node.name, ", ".join(missing))
