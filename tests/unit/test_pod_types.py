"""The typed pod (module_utils/pod/types.py): built once from the inventory, read-only, errors that name the key."""
from __future__ import annotations

import dataclasses
import os

import pytest

from inventory_util import ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod, PodError


@pytest.fixture(scope="module")
def dgxpod():
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = {"dgx": ["DGX1-%d" % i for i in range(1, 10)], "storage": ["isilon-%d" % i for i in range(1, 9)],
              "switches": [h for h in hv if "switches" in hv[h]["group_names"]]}
    return Pod.from_hostvars(hv, groups, hv["DGX1-1"]["pod"])


def test_the_004_pod_reads_as_the_ra_describes_it(dgxpod):
    pod = dgxpod
    assert [h.name for h in pod.dgx] == ["DGX1-%d" % i for i in range(1, 10)]
    assert len(pod.storage_nodes) == 8 and len(pod.switches) == 2
    nic = pod.host("DGX1-1").nic("enp132s0")
    assert (nic.address, nic.cidr, nic.mtu, nic.fabric.name, nic.fabric.roce) == (
        "10.55.66.231", "10.55.66.231/24", 9000, "data-66", "lossless")
    assert pod.primary_nic("DGX1-1").name == "enp132s0"          # the default-route NIC (004 /etc/hosts)
    assert pod.primary_nic("isilon-1").address == "10.55.66.211"  # a storage node's address on that fabric
    assert pod.hosts_fabric("DGX1-1") == "data-66" and pod.storage_fabrics("data-66") == ["data-66", "data-5"]


def test_owner_and_cabling_come_from_one_index(dgxpod):
    owner = dgxpod.owner("10.55.66.211")
    assert (owner.host, owner.fabric.name) == ("isilon-1", "data-66")
    assert dgxpod.owner("192.0.2.1") is None
    cabled = dgxpod.cabling()
    assert sum(len(v) for v in cabled.values()) == sum(
        1 for h in dgxpod.hosts.values() for n in h.nics if n.switch and n.switch_port)
    assert all(n.switch == sw for sw, nics in cabled.items() for n in nics)


def test_the_pod_is_read_only(dgxpod):
    with pytest.raises(dataclasses.FrozenInstanceError):
        dgxpod.name = "other"
    with pytest.raises(TypeError):
        dgxpod.fabrics["new"] = None
    with pytest.raises(TypeError):
        dgxpod.storage["export"] = "/elsewhere"


def test_a_model_preflight_would_refuse_raises_naming_the_key():
    pod = {"name": "p", "ra_profile": "x", "fabrics": [{"name": "f", "kind": "ethernet", "subnet": "10.0.0.0/24",
                                                        "mtu": 9000, "carries": ["compute"]}]}
    with pytest.raises(PodError, match=r"h1: nics\[0\] \(e0\) is on fabric 'g', which pod.fabrics does not declare"):
        Pod.of_one_host(pod, [{"name": "e0", "fabric": "g", "address": "10.0.0.1"}], "h1")
    with pytest.raises(PodError, match="no 'pod' variable"):
        Pod.from_model({"hosts": {}})
    with pytest.raises(PodError, match="not a complete fabric"):
        Pod.from_model({"pod": {"fabrics": [{"name": "f", "kind": "ethernet"}]}, "hosts": {}})
    with pytest.raises(PodError, match="h2 is not a host of pod p"):
        Pod.of_one_host(pod, [], "h1").host("h2")
