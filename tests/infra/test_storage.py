"""Post-deploy: the NFS mounts the nfs_client role makes, derived from the model (any inventory)."""
from __future__ import annotations

import os

import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import (check_mounts,  # noqa: E402
    effective_mounts, mount_plan)


def plan_for(node):
    pod = node.vars["pod"]
    if (pod.get("storage") or {}).get("protocol") != "nfs":
        pytest.skip("%s: the pod's storage is not NFS" % node.name)
    with open(os.path.join(ROOT, "profiles", pod["ra_profile"] + ".yml")) as fh:
        profile_nfs = yaml.safe_load(fh)["profile"].get("nfs") or {}
    return mount_plan(Pod.from_hostvars(node.pod_hostvars, node.pod_groups, pod), node.name, profile_nfs,
                      node.vars.get("nfs_client_type", "kernel"), node.vars.get("nfs_client_fuse_helper", ""))["mounts"]


def mounted_now(node):
    host = node.host
    path = node.vars.get("nfs_client_mount_table")  # a FUSE client's kernel-format lines (the simulator's)
    table = host.file(path) if path else None
    return effective_mounts(host.file("/proc/mounts").content_string,
                            table.content_string if table is not None and table.exists else "")


def test_planned_mounts_from_planned_server_with_planned_options(node):
    plan = plan_for(node)
    problems = ["%s: %s" % (node.name, r["problem"]) for r in check_mounts(plan, mounted_now(node)) if not r["ok"]]
    assert not problems, "; ".join(problems)


def test_mounts_are_readable(node):
    plan = plan_for(node)
    bad = []
    for m in plan:
        res = node.host.run("timeout 20 ls -d %s/." % m["path"])
        if res.rc != 0:
            bad.append("%s: %s from %s not readable: %s" % (node.name, m["path"], m["ip"], res.stderr.strip()))
    assert not bad, "; ".join(bad)


def test_fstab_block_lists_the_plan(node):
    plan = plan_for(node)
    text = node.host.file("/etc/fstab").content_string
    block = text.split("# BEGIN dgxpod nfs_client")[1].split("# END dgxpod nfs_client")[0] \
        if "# BEGIN dgxpod nfs_client" in text else ""
    have = [ln.split()[:4] for ln in block.splitlines()[1:] if ln.strip()]
    want = [[m["src"], m["path"], m["fstype"], m["opts"]] for m in plan]
    assert have == want, "%s: the managed fstab block differs from the plan" % node.name


def test_rank_launcher_picks_the_rank_mount(node):
    data = [m["path"] for m in plan_for(node) if m["kind"] == "data"]
    if not data:
        pytest.skip("no data mounts")
    rank = len(data) + 1
    out = node.host.check_output("OMPI_COMM_WORLD_RANK=%d pod-rank-datadir --print" % rank)
    assert out.strip() == data[rank % len(data)], "%s: rank %d got %s" % (node.name, rank, out)
