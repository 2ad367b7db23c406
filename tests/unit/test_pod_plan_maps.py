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


class _Counting(dict):
    """hostvars that note each node whose variables are read (Ansible's HostVars builds them on every read)."""

    def __init__(self, hv, reads):
        super().__init__(hv)
        self.reads = reads

    def __getitem__(self, key):
        self.reads.append(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        return self[key] if key in self else default


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


def test_a_hosts_plan_is_the_plays_when_made_its_way_else_its_own(inventory):
    """pod_nfs_host_plan (roles/nfs_client tasks/plan.yml and roles/pod_training): the play's plan when the plans
    were made with the host's client type and helper and hold it; its own plan otherwise, never another client's."""
    hv, groups, pod = inventory
    profile = pf.pod_ra_profile(pod).get("nfs") or {}
    host = groups["dgx"][-1]
    own = pf.pod_nfs_mount_plan(host, hv, groups, pod, profile, "kernel", "")
    plans = pf.pod_nfs_mount_plans(groups["dgx"], hv, groups, pod, profile, "kernel", None)
    marked = dict(plans, plans=dict(plans["plans"], **{host: {"mounts": [], "from": "the play"}}))
    assert pf.pod_nfs_host_plan(marked, host, hv, groups, pod, profile, "kernel", None) == {"mounts": [],
                                                                                           "from": "the play"}
    assert pf.pod_nfs_host_plan(plans, host, hv, groups, pod, profile, "kernel", "") == own
    # made for another helper or client type, missing the host, or no plans: the host makes its own
    for other in (dict(marked, fuse_helper="nfs-fuse"), dict(marked, client="fuse"),
                  dict(marked, plans={h: p for h, p in marked["plans"].items() if h != host}), None, {}):
        assert pf.pod_nfs_host_plan(other, host, hv, groups, pod, profile, "kernel", "") == own


def test_the_maps_read_each_nodes_variables_once():
    """The point of the maps: one read of each node's variables per play, not one per host."""
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = _groups(hv)
    pod = hv[groups["dgx"][0]]["pod"]
    reads = []
    counted = _Counting(hv, reads)
    pf.pod_nfs_mount_plans(groups["dgx"], counted, groups, pod, {}, "kernel", "")
    assert sorted(reads) == sorted(groups["dgx"] + groups["storage"])
    reads.clear()
    pf.pod_ping_target_map(groups["dgx"], counted, groups, pod)  # the storage nodes are ping targets too
    assert sorted(reads) == sorted(groups["dgx"] + groups["storage"])


# --- the mesh's pinned known_hosts (filter_plugins/ngc.py ngc_pod_known_hosts, roles/ngc_container) -------------

def _keyed(hv, nodes):
    """hostvars as roles/ngc_container/tasks/keys.yml leaves them: ``nodes`` registered their container host key."""
    out = {h: dict(v) for h, v in hv.items()}
    for i, node in enumerate(nodes):
        body = "AAAAC3NzaC1lZDI1NTE5AAAAI" + ("%043d" % i)
        out[node]["ngc_container_node_keys"] = {"public_key": "ssh-ed25519 %s %s container sshd" % (body, node)}
    return out


def test_the_mesh_known_hosts_once_is_what_every_node_derives(inventory, tmp_path):
    """When every member gave its key in this run, the text derived once is each node's own (whatever its
    known_hosts of the last run holds); a member without a key of this run but remembered on the controller too."""
    from filter_plugins import ngc
    hv, groups, pod = inventory
    nodes = groups["dgx"]
    hv = _keyed(hv, nodes)
    once = ngc.ngc_pod_known_hosts(nodes, hv, str(tmp_path), pod, 2222)
    stale = "[x]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0gW8T0Pq6mZq3dJ9fG1c0rR3yXrPz1d1b3lYy9w7a %s\n" % nodes[0]
    for previous in ("", stale):
        per_node = ngc.ngc_known_hosts(ngc.ngc_container_host_keys(nodes, hv, str(tmp_path), previous), hv, pod, 2222)
        assert once == per_node
    assert once.count("\n") == len(nodes)
    # the first node missed this run; the controller remembers its key from an earlier one
    del hv[nodes[0]]["ngc_container_node_keys"]
    remembered = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBo4f0tK2qk3QH6l0p7w2l0dJc0gX1v6mQ9y1u8b2aZc"
    (tmp_path / (nodes[0] + ".pub")).write_text(remembered + " remembered\n")
    once = ngc.ngc_pod_known_hosts(nodes, hv, str(tmp_path), pod, 2222)
    assert "AAAAIBo4f0tK2qk3QH6l0p7w2l0dJc0gX1v6mQ9y1u8b2aZc %s" % nodes[0] in once
    assert once == ngc.ngc_known_hosts(ngc.ngc_container_host_keys(nodes, hv, str(tmp_path), stale), hv, pod, 2222)


def test_the_mesh_known_hosts_is_per_node_when_a_member_has_no_key_here(tmp_path):
    """A member with no key collected in this run and none (or an empty file) remembered on the controller: each
    node's known_hosts of the last run decides its entry, so there is no one text (''), and the role derives it per
    node - a node must not lose the key it pinned (issue 17)."""
    from filter_plugins import ngc
    hv = hostvars(os.path.join(ROOT, "inventories", "sim"))
    pod = hv["sim-dgx1"]["pod"]
    nodes = sorted(h for h in hv if h.startswith("sim-dgx"))
    hv = _keyed(hv, nodes[1:])
    assert ngc.ngc_pod_known_hosts(nodes, hv, str(tmp_path), pod, 2222) == ""
    (tmp_path / (nodes[0] + ".pub")).write_text("\n")
    assert ngc.ngc_pod_known_hosts(nodes, hv, str(tmp_path), pod, 2222) == ""
    hv[nodes[0]]["ngc_container_node_keys"] = {"failed": True, "msg": "pod_ssh_key: cannot read"}
    assert ngc.ngc_pod_known_hosts(nodes, hv, str(tmp_path), pod, 2222) == ""


def test_the_mesh_known_hosts_reads_each_members_variables_once(tmp_path):
    from filter_plugins import ngc
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = _groups(hv)
    hv = _keyed(hv, groups["dgx"])
    pod = hv[groups["dgx"][0]]["pod"]
    reads = []
    assert ngc.ngc_pod_known_hosts(groups["dgx"], _Counting(hv, reads), str(tmp_path), pod, 2222)
    assert sorted(reads) == sorted(groups["dgx"])
    reads.clear()
    ngc.ngc_known_hosts(ngc.ngc_container_host_keys(groups["dgx"], _Counting(hv, reads), str(tmp_path)),
                        _Counting(hv, reads), pod)
    assert len(reads) == 2 * len(groups["dgx"])  # what each node did before, N times over


def test_the_whole_pod_maps_are_kept_on_localhost_not_on_every_dgx():
    """The once-per-play maps go to localhost (delegate_facts), and each DGX reads its entry from there: a map on
    every DGX is deep-copied with the host's variables at every template lookup, N x the map (issue 19, 30 DGX)."""
    import yaml

    def task(path, name_start):
        with open(os.path.join(ROOT, "roles", path)) as fh:
            tasks = yaml.safe_load(fh)
        return next(t for t in tasks if t["name"].startswith(name_start))

    for path, name, fact in (("dgx_network/tasks/main.yml", "The pod's names for /etc/hosts",
                              "dgx_network_ping_targets"),
                             ("dgx_network/tasks/check.yml", "The ping targets and the pod's names",
                              "dgx_network_ping_targets"),
                             ("dgx_network/tasks/check.yml", "The ping targets and the pod's names",
                              "dgx_network_hosts_entries"),
                             ("dgx_network/tasks/main.yml", "The pod's names for /etc/hosts",
                              "dgx_network_hosts_entries"),
                             ("nfs_client/tasks/plan.yml", "Derive the NFS mount plans", "nfs_client_plans")):
        t = task(path, name)
        assert fact in t["ansible.builtin.set_fact"], path
        assert (t.get("run_once"), t.get("delegate_to"), t.get("delegate_facts")) == (True, "localhost", True), path
    for path, name, key in (("dgx_network/tasks/verify.yml", "Verify - full-MTU pings", "pod_ping_mesh"),
                            ("dgx_network/tasks/verify.yml", "Verify - every pod name resolves", "pod_resolve"),
                            ("nfs_client/tasks/plan.yml", "Derive this host's NFS mount plan",
                             "ansible.builtin.set_fact")):
        text = str(task(path, name)[key])
        assert "hostvars['localhost']" in text, path
    persist = str(task("dgx_network/tasks/main.yml", "Persist /etc/hosts")["pod_files"])
    assert "hostvars['localhost'].dgx_network_hosts_block" in persist
