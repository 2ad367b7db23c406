"""Preflight, issue 46 (bad input, round 3), classes 1-3: where Ansible reads the pod from (a second vars file
replaces the whole mapping), pod.validation's thresholds and overrides, and mount paths that collide. Each case makes
one mistake in a copy of a reference inventory and asserts one error naming the file and line, the key and a fix."""
from __future__ import annotations

import os
import re

import pytest
import yaml

from inventory_util import POD, assert_case_rejected, copy_inventory, edit_yaml, error_finding, preflight, texts


def _validation(**values):
    """An edit of pod.yml: pod.validation updated with ``values``."""
    def change(d):
        d["pod"].setdefault("validation", {}).update(values)
    return change


def _override(cat, key, value):
    """An edit of pod.yml: pod.validation.expectations.<cat>.<key> set to ``value``."""
    def change(d):
        exp = d["pod"].setdefault("validation", {}).setdefault("expectations", {})
        exp.setdefault(cat, {})[key] = value
    return change


E = "pod.validation.expectations."
# (id, reference inventory, file to edit, change, expected file, key, message fragment, fix fragment)
VALIDATION_CASES = [
    ("percentage-for-a-fraction", "dgxpod", POD,
     _override("network", "tcp_fraction_of_port_rate", {"value": 90, "source": "ticket 1"}),
     POD, E + "network.tcp_fraction_of_port_rate.value", "90 is a percentage", "write 0.9 (90%)"),
    ("percentage-for-a-fraction-bare", "dgxa100-powerscale", POD, _override("storage", "read_fraction_of_links", 85),
     POD, E + "storage.read_fraction_of_links", "is a fraction of 1", "write 0.85"),
    ("fraction-for-a-percentage", "dgx-ess3000", POD, _override("training", "gpu_util_percent", 0.97),
     POD, E + "training.gpu_util_percent", "0.97 is a fraction", "write 97"),
    ("negative-threshold", "sim", POD, _override("nccl", "relative_fraction_of_peers", {"value": -0.25}),
     POD, E + "nccl.relative_fraction_of_peers.value", "negative", "a fraction of 1"),
    ("misspelt-expectation", "sim", POD, _override("network", "relative_fraction_of_peer", {"value": 0.5}),
     POD, E + "network.relative_fraction_of_peer", "unknown expectation", "did you mean 'relative_fraction_of_peers'"),
    ("misspelt-category", "dgxpod", POD, _override("netwrok", "tcp_fraction_of_port_rate", 0.8),
     POD, E + "netwrok", "unknown expectation category", "did you mean 'network'"),
    ("expectation-in-wrong-category", "dgxpod", POD, _override("storage", "plateau_sizes", 2),
     POD, E + "storage.plateau_sizes", "unknown expectation", "move it to pod.validation.expectations.nccl"),
    ("misspelt-validation-key", "dgxpod", POD, _validation(expectation={"network": {}}),
     POD, "pod.validation.expectation", "unknown key", "did you mean 'expectations'"),
    ("category-outside-expectations", "dgxa100-powerscale", POD,
     _validation(nccl={"relative_fraction_of_peers": 0.5}),
     POD, "pod.validation.nccl", "expectation category", "pod.validation.expectations.nccl"),
    ("key-outside-expectations", "dgxpod", POD, _validation(relative_fraction_of_peers=0.5),
     POD, "pod.validation.relative_fraction_of_peers", "changes nothing here", "pod.validation.expectations."),
    ("override-key-misspelt", "sim", POD, _override("storage", "relative_fraction_of_peers", {"vaule": 0.4}),
     POD, E + "storage.relative_fraction_of_peers.vaule", "unknown key of an expectation override",
     "did you mean 'value'"),
    ("threshold-as-a-string", "dgxpod", POD, _override("network", "tcp_fraction_of_port_rate", {"value": "0.8"}),
     POD, E + "network.tcp_fraction_of_port_rate.value", "is not a number (a string", "without quotes"),
    ("threshold-with-its-unit", "dgxpod", POD, _override("storage", "read_per_nfs_mount", "1800 MB/s"),
     POD, E + "storage.read_per_nfs_mount", "is not a number", "a number in MB/s"),
    ("unit-not-converted", "dgxa100-powerscale", POD,
     _override("storage", "ra_read_per_dgx", {"value": 4.9, "unit": "GB/s"}),
     POD, E + "storage.ra_read_per_dgx.unit", "does not convert", "write the value in MB/s"),
    ("figure-in-another-unit", "dgxpod", POD, _override("storage", "read_per_nfs_mount", 2.5),
     POD, E + "storage.read_per_nfs_mount", "times below the profile's 2500 MB/s", "in MB/s"),
    ("count-not-whole", "dgx-ess3000", POD, _override("nccl", "plateau_sizes", 2.5),
     POD, E + "nccl.plateau_sizes", "not a whole number", "write a whole number"),
    ("busbw-table-as-a-number", "dgxa100-powerscale", POD, _override("nccl", "single_node_busbw", 200),
     POD, E + "nccl.single_node_busbw", "is not a table", "dgx1"),
    ("busbw-table-unknown-model", "dgxa100-powerscale", POD,
     _override("nccl", "single_node_busbw", {"value": {"dgx-a100": 200}}),
     POD, E + "nccl.single_node_busbw.value.dgx-a100", "is not a DGX model", "did you mean 'dgxa100'"),
    ("workload-misspelt", "dgxpod", POD, _validation(workload="training-small-image"),
     POD, "pod.validation.workload", "not a workload class the RA profile sizes", "training-small-images"),
    ("dataset-tb-negative", "dgxpod", POD, _validation(dataset_tb=-22),
     POD, "pod.validation.dataset_tb", "not a dataset size", "in TB"),
    ("caches-tb-a-number", "dgxpod", POD, _validation(caches_tb=2),
     POD, "pod.validation.caches_tb", "not a mapping", "linux page cache"),
]


@pytest.mark.parametrize("case", VALIDATION_CASES, ids=[c[0] for c in VALIDATION_CASES])
def test_validation_mistake_rejected(tmp_path, case):
    assert_case_rejected(tmp_path, case)


def _storage(**values):
    def change(d):
        d["pod"]["storage"].update(values)
    return change


def _scale(**values):
    def change(d):
        d["pod"]["storage"]["scale"].update(values)
    return change


S = "pod.storage."
PATH_CASES = [
    ("data-prefix-trailing-slash", "dgxpod", POD, _storage(data_mount_prefix="/mnt/isilon/"),
     POD, S + "data_mount_prefix", "/mnt/isilon/1 .. /mnt/isilon/16 are inside the scripts mount /mnt/isilon",
     "drop the trailing '/': data_mount_prefix: /mnt/isilon gives /mnt/isilon1"),
    ("data-mounts-in-a-subdirectory-of-scripts", "dgxa100-powerscale", POD,
     _storage(data_mount_prefix="/mnt/isilon/data"),
     POD, S + "data_mount_prefix", "are inside the scripts mount /mnt/isilon", "beside the scripts mount"),
    ("scripts-mount-inside-a-data-mount", "sim", POD, _storage(scripts_mount="/mnt/isilon2/scripts"),
     POD, S + "scripts_mount", "is inside data mount 2 (/mnt/isilon2)", "outside the data mounts"),
    ("scripts-mount-trailing-slash", "dgxa100-powerscale", POD, _storage(scripts_mount="/mnt/isilon/"),
     POD, S + "scripts_mount", "/proc/mounts", "write /mnt/isilon"),
    ("scripts-mount-double-slash", "dgxpod", POD, _storage(scripts_mount="/mnt//isilon"),
     POD, S + "scripts_mount", "not written as the kernel shows a mount point", "write /mnt/isilon"),
    ("nfs-over-home", "dgxpod", POD, _storage(scripts_mount="/home"),
     POD, S + "scripts_mount", "over the system directory /home", "a directory of its own"),
    ("nfs-over-root", "sim", POD, _storage(scripts_mount="/root/"),
     POD, S + "scripts_mount", "over the system directory /root", "a directory of its own"),
    ("nfs-over-raid", "dgxa100-powerscale", POD, _storage(scripts_mount="/raid"),
     POD, S + "scripts_mount", "local RAID cache", "a directory of its own"),
    ("data-mounts-inside-etc", "dgxpod", POD, _storage(data_mount_prefix="/etc/isilon"),
     POD, S + "data_mount_prefix", "inside /etc, a directory the system owns", "a directory of its own"),
    ("scale-over-var", "dgx-ess3000", POD, _storage(scripts_mount="/var"),
     POD, S + "scripts_mount", "over the system directory /var", "a directory of its own"),
    ("scale-export-a-mount-path", "dgx-ess3000", POD, _storage(export="/gpfs/fs1"),
     POD, S + "export", "'/gpfs/fs1' is a mount path", "write the device name (fs1)"),
    ("scale-filesystem-a-device-path", "dgx-ess3000", POD, _scale(filesystems=["/dev/fs1"]),
     POD, S + "scale.filesystems[0]", "is a device path", "write the device name (fs1)"),
]


@pytest.mark.parametrize("case", PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_path_mistake_rejected(tmp_path, case):
    assert_case_rejected(tmp_path, case)


# ---- class 1: where Ansible reads the pod from
def _write(inv, rel, data):
    path = os.path.join(inv, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)


def _pod(inv):
    with open(os.path.join(inv, POD), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["pod"]


@pytest.mark.parametrize("ref", ["dgxpod", "dgx-ess3000"])
def test_pod_in_a_second_file_of_group_vars_all(tmp_path, ref):
    """A second file of group_vars/all/ with a pod: of its own (meant to add the storage) replaces the whole pod for
    every host: the error names both files and the one that wins; the keys it calls missing are on that file."""
    inv = copy_inventory(ref, str(tmp_path))
    _write(inv, "group_vars/all/storage.yml", {"pod": {"storage": _pod(inv)["storage"]}})
    findings, _ = preflight(inv)
    f = error_finding(inv, findings, "group_vars/all/storage.yml", "pod", "is set in 2 files", "group_vars/all/pod.yml")
    assert "group_vars/all/pod.yml:" in f.message and "pod.fabrics" in f.message and "replaces" in f.message, f.format()
    missing = [m for m in findings if m.key() == "pod.fabrics" and "required" in m.message]
    assert missing and all(m.source.startswith(os.path.relpath(os.path.join(inv, "group_vars/all/storage.yml")))
                           or "storage.yml" in m.source for m in missing), texts(findings)
    assert "replaced by this file's" in missing[0].fix, missing[0].format()


def test_pod_in_a_group_file(tmp_path):
    """pod: in group_vars/dgx.yml (a copy with one fabric's MTU changed) replaces the pod for the DGX only: named with
    the group's file, both files, and which wins - not accepted because one host's pod is fine."""
    inv = copy_inventory("dgxa100-powerscale", str(tmp_path))
    pod = _pod(inv)
    pod["fabrics"][-1]["mtu"] = 1500 if pod["fabrics"][-1]["mtu"] != 1500 else 9000
    edit_yaml(os.path.join(inv, "group_vars/dgx.yml"), lambda d: d.update(pod=pod))
    findings, _ = preflight(inv)
    f = error_finding(inv, findings, "group_vars/dgx.yml", "pod", "is set in 2 files", "group_vars/all/pod.yml")
    assert "dgxa100-1" in f.message and "group_vars/all/pod.yml:" in f.message, f.format()
    assert re.search(r":\d+$", f.source), f.format()


def test_same_pod_twice_is_a_warning(tmp_path):
    inv = copy_inventory("dgxpod", str(tmp_path))
    _write(inv, "group_vars/all/zz.yml", {"pod": _pod(inv)})
    findings, _ = preflight(inv)
    assert not [f for f in findings if f.severity == "error"], texts(findings)
    assert [f for f in findings if f.severity == "warning" and f.key() == "pod" and "say the same" in f.message], \
        texts(findings, "warning")


def test_locate_names_the_file_ansible_keeps(tmp_path):
    """Of two files of group_vars/all/ that set pod, the key is located in the later one (Ansible's read order)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import locate
    inv = copy_inventory("dgxpod", str(tmp_path))
    _write(inv, "group_vars/all/zz.yml", {"pod": {"name": "x"}})
    assert "zz.yml" in locate([inv], "DGX1-1", ["dgx"], "pod", "pod.fabrics")


def test_a_partial_pod_in_a_group_file_with_only_validation_is_named_not_a_crash(tmp_path):
    """pod: in group_vars/dgx.yml holding only an override (a user meaning to add one threshold): the DGX's pod has no
    ra_profile then, and the override is checked against any profile's item - found on the simulator's copy, where
    check_validation raised KeyError and the play failed with 'Module result deserialization failed'."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "group_vars/dgx.yml"), lambda d: d.update(
        pod={"validation": {"expectations": {"network": {"relative_fraction_of_peers": 0.5}}}}))
    findings, _ = preflight(inv)
    error_finding(inv, findings, "group_vars/dgx.yml", "pod", "is set in 2 files", "group_vars/all/pod.yml")
