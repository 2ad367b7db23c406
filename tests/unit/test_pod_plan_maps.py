"""The once-per-play maps (filter_plugins/pod.py pod_ping_target_map, pod_nfs_mount_plans) give every host exactly
what its one-host filter gives, on each reference inventory and on the pod-in-a-box, and leave out a host whose
derivation fails so that it fails alone with the one-host filter's error (issue 19: N hostvars read, not N x N)."""
from __future__ import annotations

import os

import pytest

from inventory_util import REFERENCE, ROOT, hostvars
from filter_plugins import pod as pf


def _groups(hv):
    groups = {}
    for host, v in hv.items():
        for g in v["group_names"]:
            groups.setdefault(g, []).append(host)
    groups["all"] = sorted(hv)
    return groups


@pytest.fixture(scope="module", params=REFERENCE + ["sim"])
def inventory(request):
    hv = hostvars(os.path.join(ROOT, "inventories", request.param))
    groups = _groups(hv)
    first = groups["dgx"][0]
    return hv, groups, hv[first]["pod"]


def test_ping_target_map_is_each_hosts_own_targets(inventory):
    hv, groups, pod = inventory
    got = pf.pod_ping_target_map(groups["dgx"], hv, groups, pod)
    assert sorted(got) == sorted(groups["dgx"])
    for host in groups["dgx"]:
        assert got[host] == pf.pod_ping_targets(host, hv, groups, pod), host


def test_nfs_mount_plans_are_each_hosts_own_plan(inventory):
    hv, groups, pod = inventory
    profile = pf.pod_ra_profile(pod).get("nfs") or {}
    got = pf.pod_nfs_mount_plans(groups["dgx"], hv, groups, pod, profile, "kernel", None)
    assert got["client"] == "kernel" and got["fuse_helper"] == ""
    assert sorted(got["plans"]) == sorted(groups["dgx"])
    for host in groups["dgx"]:
        assert got["plans"][host] == pf.pod_nfs_mount_plan(host, hv, groups, pod, profile, "kernel", ""), host


def test_a_host_whose_derivation_fails_is_left_out_and_fails_alone():
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = _groups(hv)
    pod = hv[groups["dgx"][0]]["pod"]
    hosts = groups["dgx"] + ["not-in-the-pod"]
    assert "not-in-the-pod" not in pf.pod_ping_target_map(hosts, hv, groups, pod)
    with pytest.raises(ValueError, match="not-in-the-pod is not a host of pod dgxpod"):
        pf.pod_ping_targets("not-in-the-pod", hv, groups, pod)
    plans = pf.pod_nfs_mount_plans(hosts, hv, groups, pod, {}, "kernel", "")["plans"]
    assert "not-in-the-pod" not in plans and len(plans) == len(groups["dgx"])
    with pytest.raises(ValueError, match="not-in-the-pod is not in the dgx group"):
        pf.pod_nfs_mount_plan("not-in-the-pod", hv, groups, pod, {}, "kernel", "")
    # an unknown client type fails for every host: no plan at all, each host then fails with the plan's own error
    assert pf.pod_nfs_mount_plans(groups["dgx"], hv, groups, pod, {}, "nfs4-magic", "")["plans"] == {}


def test_the_maps_read_each_nodes_variables_once():
    """The point of the maps: one read of each node's variables per play, not one per host."""
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = _groups(hv)
    pod = hv[groups["dgx"][0]]["pod"]
    reads = []

    class Counting(dict):
        def __getitem__(self, key):
            reads.append(key)
            return dict.__getitem__(self, key)

    counted = Counting(hv)
    pf.pod_nfs_mount_plans(groups["dgx"], counted, groups, pod, {}, "kernel", "")
    assert sorted(reads) == sorted(groups["dgx"] + groups["storage"])
    reads.clear()
    pf.pod_ping_target_map(groups["dgx"], counted, groups, pod)
    assert sorted(reads) == sorted(groups["dgx"])
