#!/bin/sh
# Re-mount the cgroup v1 hierarchies in a private mount namespace whose /sys is a fresh sysfs
# (`ip netns exec` and the simulator's nodes): without them podman's conmon cannot make its cgroup and
# crun fails with "invalid file system type on '/sys/fs/cgroup'". Only the v1 controllers the host has mounted
# (and name=systemd) are mounted; the v2 "unified" hierarchy is skipped on purpose (crun refuses a
# hybrid layout it does not expect). Idempotent. Usage: cgroup-v1-mount.sh (as root, inside the namespace).
set -eu
base=/sys/fs/cgroup
if ! grep -q " $base tmpfs " /proc/self/mounts; then
  mount -t tmpfs -o mode=0755,nosuid,nodev,noexec cgroup_root "$base"
fi
awk 'NR > 1 && $4 == 1 && $2 != 0 { print $1 }' /proc/cgroups | while read -r ctl; do
  mkdir -p "$base/$ctl"
  grep -q " $base/$ctl cgroup " /proc/self/mounts || mount -t cgroup -o "$ctl" cgroup "$base/$ctl" 2>/dev/null \
    || echo "cgroup-v1-mount: cannot mount $ctl (shared with another hierarchy?)" >&2
done
mkdir -p "$base/systemd"
grep -q " $base/systemd cgroup " /proc/self/mounts || mount -t cgroup -o none,name=systemd cgroup "$base/systemd"
