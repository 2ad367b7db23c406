"""The NFS mount plan (module_utils/storage/nfs_plan.py): golden plans for the reference pods, balance /
determinism / uniqueness properties, option handling, and the /proc/mounts comparison."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from inventory_util import ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import (PlanError, check_mounts,
    effective_mounts, endpoints, mount_options, mount_plan, options_missing, rank_data_dir)

GOLDEN = os.path.join(ROOT, "tests", "golden", "storage")
NFS_PODS = ["dgxpod", "dgxa100-powerscale", "dgxh100-pod"]


def profile_nfs(pod):
    with open(os.path.join(ROOT, "profiles", pod["ra_profile"] + ".yml")) as fh:
        return yaml.safe_load(fh)["profile"].get("nfs") or {}


def load(name):
    hv = hostvars(os.path.join(ROOT, "inventories", name))
    groups = {g: sorted((h for h in hv if g in hv[h]["group_names"]), key=list(hv).index)
              for g in ("dgx", "storage", "switches")}
    pod = next(iter(hv.values()))["pod"]
    return hv, groups, pod


# ---------------------------------------------------------------------------------------------- golden
@pytest.mark.parametrize("name", NFS_PODS)
def test_reference_pod_plans_match_golden(name):
    hv, groups, pod = load(name)
    plans = {h: mount_plan(Pod.from_hostvars(hv, groups, pod), h, profile_nfs(pod))["mounts"] for h in groups["dgx"]}
    lines = {h: ["%s %s %s %s via %s" % (m["src"], m["path"], m["fstype"], m["opts"], m["via_nic"]) for m in p]
             for h, p in plans.items()}
    path = os.path.join(GOLDEN, name + ".json")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as fh:
            json.dump(lines, fh, indent=1, sort_keys=True)
            fh.write("\n")
    with open(path) as fh:
        assert lines == json.load(fh), "plan changed; if intended: UPDATE_GOLDEN=1 pytest %s" % __file__


def test_dgxpod_every_dgx1_mounts_all_16_isilon_interfaces_with_004_options():
    hv, groups, pod = load("dgxpod")
    isilon_ips = {n["address"] for h in groups["storage"] for n in hv[h]["nics"]
                  if n["fabric"] in ("data-5", "data-66")}
    assert len(isilon_ips) == 16
    for h in groups["dgx"]:
        mounts = mount_plan(Pod.from_hostvars(hv, groups, pod), h, profile_nfs(pod))["mounts"]
        data = [m for m in mounts if m["kind"] == "data"]
        assert [m["path"] for m in data] == ["/mnt/isilon%d" % i for i in range(1, 17)]
        assert {m["ip"] for m in data} == isilon_ips
        assert all(m["opts"] == "rsize=524288,wsize=524288,nolock" and m["src"] == m["ip"] + ":/ifs"
                   and m["fstype"] == "nfs" for m in data)
        scripts = [m for m in mounts if m["kind"] == "scripts"]
        # 004: mount -t nfs 10.55.66.211:/ifs /mnt/isilon (default options)
        assert [(m["src"], m["path"], m["opts"]) for m in scripts] == [("10.55.66.211:/ifs", "/mnt/isilon",
                                                                        "defaults")]


def test_eight_consecutive_mounts_reach_eight_storage_nodes_over_both_dgx_nics():
    hv, groups, pod = load("dgxpod")
    plan = mount_plan(Pod.from_hostvars(hv, groups, pod), "DGX1-1", profile_nfs(pod))
    data = [m for m in plan["mounts"] if m["kind"] == "data"]
    for start in range(0, 16, 8):
        window = data[start:start + 8]
        assert len({m["storage_host"] for m in window}) == 8
        assert sorted(m["via_nic"] for m in window) == ["enp132s0"] * 4 + ["enp5s0"] * 4


def test_the_simulator_plan_uses_the_fuse_standin():
    hv, groups, pod = load("sim")
    plan = mount_plan(Pod.from_hostvars(hv, groups, pod), "sim-dgx1", profile_nfs(pod),
                      hv["sim-dgx1"]["nfs_client_type"], hv["sim-dgx1"]["nfs_client_fuse_helper"])
    assert {m["fstype"] for m in plan["mounts"]} == {"fuse.podsim-nfs"}
    assert all(m["src"] == "nfs://%s/ifs" % m["ip"] for m in plan["mounts"])
    with pytest.raises(PlanError, match="nfs_client_fuse_helper"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "sim-dgx1", profile_nfs(pod), "fuse")
    with pytest.raises(PlanError, match="unknown NFS client type 'podsim-fuse'"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "sim-dgx1", profile_nfs(pod), "podsim-fuse", "podsim-nfs")


# ---------------------------------------------------------------------------------------------- properties
def synthetic(n_dgx, n_storage, n_fabrics, n_data):
    fabrics = [{"name": "f%d" % i, "kind": "ethernet", "carries": ["compute", "storage"],
                "subnet": "10.9.%d.0/24" % i, "mtu": 9000} for i in range(n_fabrics)]
    pod = {"fabrics": fabrics, "storage": {"protocol": "nfs", "export": "/ifs", "scripts_mount": "/mnt/s",
                                           "data_mount_prefix": "/mnt/d", "data_mounts": n_data}}
    hv = {}
    for i in range(n_dgx):
        hv["dgx%d" % i] = {"nics": [{"name": "e%d" % f, "fabric": "f%d" % f, "address": "10.9.%d.%d" % (f, 10 + i)}
                                    for f in range(n_fabrics)]}
    for j in range(n_storage):
        hv["st%d" % j] = {"nics": [{"name": "p%d" % f, "fabric": "f%d" % f, "address": "10.9.%d.%d" % (f, 200 + j)}
                                   for f in range(n_fabrics)]}
    groups = {"dgx": ["dgx%d" % i for i in range(n_dgx)], "storage": ["st%d" % j for j in range(n_storage)]}
    return hv, groups, pod


shapes = st.tuples(st.integers(1, 12), st.integers(1, 8), st.integers(1, 4), st.integers(1, 20))


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_balance_each_storage_address_carries_within_one_mount_of_every_other(shape):
    hv, groups, pod = synthetic(*shape)
    counts = {}
    for h in groups["dgx"]:
        for m in mount_plan(Pod.from_hostvars(hv, groups, pod), h)["mounts"]:
            if m["kind"] == "data":
                counts[m["ip"]] = counts.get(m["ip"], 0) + 1
    all_ips = {e["ip"] for e in endpoints(Pod.from_hostvars(hv, groups, pod))}
    per_ip = [counts.get(ip, 0) for ip in all_ips]
    assert max(per_ip) - min(per_ip) <= 1, counts


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_plans_are_deterministic_and_mount_points_unique(shape):
    hv, groups, pod = synthetic(*shape)
    for h in groups["dgx"]:
        a = mount_plan(Pod.from_hostvars(hv, groups, pod), h)
        assert a == mount_plan(Pod.from_hostvars(json.loads(json.dumps(hv)), groups, pod), h)
        paths = [m["path"] for m in a["mounts"]]
        assert len(paths) == len(set(paths))
        # a host spreads over as many different addresses as it has mounts (up to all of them)
        data = [m["ip"] for m in a["mounts"] if m["kind"] == "data"]
        assert len(set(data)) == min(len(data), len(a["endpoints"]))


def test_hosts_start_at_different_offsets_when_mounts_do_not_divide_the_addresses():
    hv, groups, pod = synthetic(3, 2, 2, 3)  # 4 addresses, 3 mounts per host
    firsts = [next(m["ip"] for m in mount_plan(Pod.from_hostvars(hv, groups, pod), h)["mounts"] if m["kind"] == "data")
              for h in groups["dgx"]]
    assert len(set(firsts)) == 3, firsts


def test_too_few_mounts_pod_wide_is_a_warning():
    hv, groups, pod = synthetic(1, 4, 2, 4)  # 4 mounts over 8 addresses
    assert "fewer than the two per address" in mount_plan(Pod.from_hostvars(hv, groups, pod), "dgx0")["warnings"][0]


# ---------------------------------------------------------------------------------------------- options/errors
def test_options_profile_then_pod_overrides_then_extras():
    prof = {"scripts_mount_options": "defaults", "data_mount_options": "rsize=524288,wsize=524288,nolock"}
    assert mount_options({}, prof) == {"scripts": "defaults", "data": "rsize=524288,wsize=524288,nolock"}
    got = mount_options({"data_options": "rsize=1048576,nolock", "nconnect": 8, "fsc": True}, prof)
    assert got == {"scripts": "fsc", "data": "rsize=1048576,nolock,nconnect=8,fsc"}
    assert mount_options({"data_options": "rsize=1,rsize=2"}, {})["data"] == "rsize=2"


def test_errors_name_the_host_and_the_fix():
    hv, groups, pod = synthetic(2, 2, 1, 2)
    pod["fabrics"].append({"name": "elsewhere", "kind": "ethernet", "carries": ["compute"], "subnet": "10.8.0.0/24",
                           "mtu": 9000})
    hv["dgx1"]["nics"][0]["fabric"] = "elsewhere"
    with pytest.raises(PlanError, match="dgx1 has no NIC on a fabric where a storage node has an address"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "dgx1")
    with pytest.raises(PlanError, match="st0 is not in the dgx group"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "st0")
    pod["storage"]["scripts_mount"] = "/mnt/d1"
    with pytest.raises(PlanError, match="mount points used twice on dgx0: /mnt/d1"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "dgx0")
    with pytest.raises(PlanError, match="unknown NFS client type 'cifs'"):
        mount_plan(Pod.from_hostvars(hv, groups, pod), "dgx0", client="cifs")


def test_non_nfs_storage_has_no_mounts():
    hv, groups, pod = synthetic(1, 1, 1, 1)
    pod["storage"]["protocol"] = "spectrum-scale"
    assert mount_plan(Pod.from_hostvars(hv, groups, pod), "dgx0")["mounts"] == []


def test_rank_round_robin():
    dirs = ["/mnt/i1", "/mnt/i2", "/mnt/i3"]
    assert [rank_data_dir(r, dirs) for r in range(7)] == dirs * 2 + ["/mnt/i1"]
    with pytest.raises(ValueError):
        rank_data_dir(0, [])


# ---------------------------------------------------------------------------------------------- /proc/mounts
def real_proc_mounts():
    with open(os.path.join(ROOT, "tests", "unit", "fixtures", "nfs", "proc_mounts.txt")) as fh:
        return fh.read()  # real captures, sources in fixtures/nfs/README.md


def plan_entry(path, ip, opts, kind="data", fstype="nfs"):
    return {"path": path, "ip": ip, "opts": opts, "kind": kind, "fstype": fstype}


def test_check_mounts_against_real_proc_mounts():
    mounted = effective_mounts(real_proc_mounts())
    res = check_mounts([plan_entry("/mnt/netapp2", "10.117.49.202", "rsize=32768,wsize=32768,nconnect=4,_netdev"),
                        plan_entry("/mnt/central", "192.168.20.9", "vers=4,rsize=1048576"),
                        plan_entry("/mnt/central", "192.168.20.9", "nfsvers=4.2,nconnect=8"),
                        plan_entry("/mnt/netapp2", "10.117.49.202", "rsize=524288,nolock"),
                        plan_entry("/mnt/isilon4", "10.55.66.214", "nolock"),
                        plan_entry("/mnt/netapp2", "10.55.5.211", "nolock")], mounted)
    assert [r["ok"] for r in res] == [True, True, False, False, False, False]
    assert res[2]["problem"] == "/mnt/central from 192.168.20.9 lacks option(s) nconnect=8"
    assert res[3]["problem"] == ("/mnt/netapp2 from 10.117.49.202 lacks option(s) rsize=524288 (mounted with "
                                 "rsize=32768), nolock")
    assert res[4]["problem"] == "not mounted (planned /mnt/isilon4 from 10.55.66.214)"
    assert res[5]["problem"] == "/mnt/netapp2 is mounted from 10.117.49.202, planned 10.55.5.211"


def test_options_missing_knows_kernel_spellings():
    actual = "rw,vers=3,rsize=524288,wsize=524288,hard,nolock,proto=tcp"
    assert options_missing("nfsvers=3,rsize=524288,_netdev,nofail,x-systemd.automount", actual) == []
    assert options_missing("rsize=1048576", actual) == ["rsize=1048576 (mounted with rsize=524288)"]
    assert options_missing("vers=4", "vers=4.2") == []


def test_standin_table_replaces_the_fuse_line_only_while_mounted():
    import podsim_nfs  # noqa: E402 - sim/standins (needs fusepy + libnfs from setup-extras)
    proc = "nfs://198.18.5.212/ifs /mnt/isilon2 fuse.podsim-nfs rw,nosuid,nodev,relatime,user_id=0 0 0\n"
    table = podsim_nfs.kernel_line("nfs://198.18.5.212/ifs", "/mnt/isilon2", "rsize=524288,wsize=524288,nolock")
    table += "\n" + podsim_nfs.kernel_line("nfs://198.18.5.211/ifs", "/mnt/gone", "")
    now = effective_mounts(proc, table)
    assert set(now) == {"/mnt/isilon2"}
    assert check_mounts([plan_entry("/mnt/isilon2", "198.18.5.212", "rsize=524288,wsize=524288,nolock",
                                    fstype="fuse.podsim-nfs")], now)[0]["ok"]
    assert not check_mounts([plan_entry("/mnt/isilon2", "198.18.5.212", "rsize=1048576")], now)[0]["ok"]


def test_standin_kernel_line_has_the_kernel_format():
    import podsim_nfs  # noqa: E402
    line = podsim_nfs.kernel_line("nfs://198.18.66.211/ifs", "/mnt/isilon1", "rsize=524288,wsize=524288,nolock")
    real = real_proc_mounts().splitlines()[1].split()
    mine = line.split()
    assert [len(real), real[2], real[4:]] == [len(mine), mine[2], mine[4:]]
    # the super-block options come in the kernel's order (fs/nfs/super.c prints them in a fixed order)
    order = [o.split("=")[0] for o in real[3].split(",")[2:]]
    have = [o.split("=")[0] for o in mine[3].split(",")[2:] if o.split("=")[0] in order]
    assert have == [k for k in order if k in have]
    assert line == ("198.18.66.211:/ifs /mnt/isilon1 nfs rw,relatime,vers=3,rsize=524288,wsize=524288,namlen=255,"
                    "hard,nolock,proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=198.18.66.211,mountvers=3,"
                    "mountport=20048,mountproto=tcp,local_lock=all,addr=198.18.66.211 0 0")


# ---------------------------------------------------------------------------------------------- launcher
LAUNCHER = os.path.join(ROOT, "roles", "nfs_client", "files", "pod-rank-datadir")


def launch(args, env):
    return subprocess.run([sys.executable, LAUNCHER] + args, capture_output=True, text=True,
                          env=dict({"PATH": os.environ["PATH"]}, **env))


def test_launcher_picks_the_mount_of_the_rank(tmp_path):
    lst = tmp_path / "mounts"
    lst.write_text("# comment\n/mnt/isilon1\n/mnt/isilon2\n/mnt/isilon3\n")
    got = [launch(["--mounts-file", str(lst), "--print"], {"OMPI_COMM_WORLD_RANK": str(r)}).stdout.strip()
           for r in range(4)]
    assert got == ["/mnt/isilon1", "/mnt/isilon2", "/mnt/isilon3", "/mnt/isilon1"]
    res = launch(["--mounts", "/a,/b", "--subdir", "imagenet", "--append-arg=--data_dir", "--",
                  "sh", "-c", 'echo "$POD_DATA_DIR $@"', "x", "{data_dir}"], {"RANK": "1"})
    assert res.returncode == 0 and res.stdout.strip() == "/b/imagenet /b/imagenet --data_dir=/b/imagenet"


def test_launcher_errors_are_clear(tmp_path):
    res = launch(["--mounts", "/a", "--print"], {})
    assert res.returncode == 2 and "no rank in the environment" in res.stderr
    res = launch(["--mounts-file", str(tmp_path / "none"), "--print"], {"RANK": "0"})
    assert res.returncode == 2 and "No such file" in res.stderr
    res = launch(["--mounts", "/a", "--print"], {"RANK": "x"})
    assert res.returncode == 2 and "not a rank number" in res.stderr
