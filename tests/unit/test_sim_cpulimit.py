"""`podsim cpu NODE --limit CPUS` (sim/podsimlib/cpulimit.py, issue 15): a slow DGX is its MPI container's
cgroup with a CFS quota. The pure parts here, against /proc/<pid>/cgroup texts of cgroup v1 (this machine:
podman with cgroupfs), docker's v1 layout and a pure v2 host; tests/integration/test_e2e_training.py (long)
slows a real container and expects train_relative to name that DGX."""

import os

import pytest

from podsimlib import cpulimit as cl

# podman 4.3 (cgroupfs manager, cgroup v1), read from a running dgxpod-mpi container on this machine
PODMAN_V1 = """12:pids:/libpod_parent/libpod-ab2cf8eca376
11:blkio:/libpod_parent/libpod-ab2cf8eca376
5:memory:/libpod_parent/libpod-ab2cf8eca376
3:cpuset:/libpod_parent/libpod-ab2cf8eca376
2:cpuacct:/libpod_parent/libpod-ab2cf8eca376
1:cpu:/libpod_parent/libpod-ab2cf8eca376
0::/
"""
# dockerd (cgroupfs driver) on a host that mounts cpu and cpuacct together
DOCKER_V1 = """9:cpu,cpuacct:/docker/5f0c2a
8:memory:/docker/5f0c2a
1:name=systemd:/docker/5f0c2a
0::/system.slice/containerd.service
"""
PURE_V2 = "0::/machine.slice/libpod-77aa.scope/container\n"


def test_quota_is_cpus_times_the_period_with_the_kernels_floor():
    assert cl.quota_us(0.1) == 10000
    assert cl.quota_us(1.5) == 150000
    assert cl.quota_us(0.001) == 1000  # the kernel refuses less than 1 ms
    assert cl.quota_us(None) == -1
    with pytest.raises(ValueError):
        cl.quota_us(0)
    with pytest.raises(ValueError):
        cl.quota_us(-0.5)


@pytest.mark.parametrize("text, want", [
    (PODMAN_V1, ("v1", "/libpod_parent/libpod-ab2cf8eca376")),  # cpu, not cpuacct or cpuset
    (DOCKER_V1, ("v1", "/docker/5f0c2a")),
    (PURE_V2, ("v2", "/machine.slice/libpod-77aa.scope/container")),
])
def test_the_cpu_controllers_cgroup_is_found(text, want):
    assert cl.cpu_cgroup(text) == want


def test_no_cpu_controller_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="no cpu controller"):
        cl.cpu_cgroup("5:memory:/x\n3:cpuset:/x\n")


def test_v1_writes_quota_and_period_v2_writes_cpu_max(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "cpu,cpuacct", "docker", "5f0c2a"))
    cl.write_limit("v1", "/docker/5f0c2a", 0.25, root)
    base = os.path.join(root, "cpu,cpuacct", "docker", "5f0c2a")
    assert open(os.path.join(base, "cpu.cfs_quota_us")).read() == "25000\n"
    assert open(os.path.join(base, "cpu.cfs_period_us")).read() == "100000\n"
    cl.write_limit("v1", "/docker/5f0c2a", None, root)
    assert open(os.path.join(base, "cpu.cfs_quota_us")).read() == "-1\n"

    os.makedirs(os.path.join(root, "machine.slice", "c"))
    cl.write_limit("v2", "/machine.slice/c", 0.5, root)
    assert open(os.path.join(root, "machine.slice", "c", "cpu.max")).read() == "50000 100000\n"
    cl.write_limit("v2", "/machine.slice/c", None, root)
    assert open(os.path.join(root, "machine.slice", "c", "cpu.max")).read() == "max 100000\n"


def test_a_missing_cgroup_fails_loudly(tmp_path):
    with pytest.raises(OSError):
        cl.write_limit("v1", "/gone", 0.5, str(tmp_path))
