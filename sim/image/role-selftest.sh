#!/usr/bin/env bash
# Whole-role self-test without the simulator: playbooks/containers.yml runs on ONE private "node"
# shaped like a simulator node - network namespace ctest-r (veth "data0" 198.19.250.21/24) + a
# long-lived mount/UTS namespace held by an anchor process, cgroup v1 remount, a tmpfs for podman's
# runroot/tmpdir (the node's own /run), its own graphroot, and the host's image store (where
# sim/image/build.sh put the stand-in) as an additional image store - with connection local and every
# path in a temp dir: keys -> image build (the role's Dockerfile FROM the
# stand-in base) -> distribution check -> run -> verify (ssh strict + mpirun). Then: a second run must be
# changed=0, a changed env file must recreate the container, key rotation must keep the mesh working,
# containers_restart.yml and containers_down.yml must succeed. Everything is removed at the end.
# Usage (root): sim/image/role-selftest.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
sim/image/build.sh >/dev/null
BASE=$(podman images --format '{{.Repository}}:{{.Tag}}' | grep -m1 -E '^localhost/dgxpod-sim-ngc-base:[0-9a-f]{16}$')
T=$(mktemp -d /tmp/ctest-role.XXXXXX)
NS=ctest-r
IMG=localhost/ctest-role-mpi:1
log() { printf '[ctest-role] %s\n' "$*"; }
ANCHOR=""
in_node() { nsenter -t "$ANCHOR" -n -m -u --wd="$ROOT" "$@"; }
PM=(podman --root "$T/graph" --runroot "$T/run/storage" --tmpdir "$T/run/libpod"
    --storage-opt additionalimagestore=/var/lib/containers/storage)
cleanup() {
  set +e
  if [[ -n $ANCHOR ]]; then
    in_node "${PM[@]}" rm --force --time 1 ctest-role >/dev/null 2>&1
    in_node "${PM[@]}" rmi --force "$IMG" >/dev/null 2>&1
    kill "$ANCHOR" 2>/dev/null; wait "$ANCHOR" 2>/dev/null
  fi
  ip netns del "$NS" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
hl=$(ulimit -Hl); [[ $hl == unlimited ]] && MEMLOCK=-1 || MEMLOCK=$((hl * 1024))
mkdir -p "$T/inv/group_vars/all" "$T/mnt"
cat >"$T/inv/hosts.yml" <<YAML
all:
  children:
    dgx:
      hosts:
        ctest-role:
          nics:
            - {name: data0, fabric: data, address: 198.19.250.21}
YAML
cat >"$T/inv/group_vars/all/vars.yml" <<YAML
pod:
  name: ctestpod
  ra_profile: isilon-f800-dgx1
  simulated: true
  fabrics:
    - {name: data, kind: ethernet, carries: [compute], subnet: 198.19.250.0/24, mtu: 1500}
ansible_connection: local
ansible_python_interpreter: $ROOT/.venv/bin/python
ngc_container_name: ctest-role
ngc_container_engine: podman
ngc_container_gpus: false
ngc_container_secrets_dir: $T/secrets
ngc_container_host_key_dir: $T/node-keys
ngc_container_build_dir: $T/build
ngc_container_archive_dir: $T/archive
ngc_container_controller_cache: $T/cache
ngc_container_from: $BASE
ngc_container_install_ssh: false
ngc_container_image: $IMG
ngc_container_nccl_env_file: $T/nccl.env
ngc_container_volumes: ["$T/mnt:/mnt"]
ngc_container_mpi_connect: address
ngc_container_restart_policy: "no"
ngc_container_engine_args: [--root, $T/graph, --runroot, $T/run/storage, --tmpdir, $T/run/libpod,
                            --storage-opt, "additionalimagestore=/var/lib/containers/storage"]
ngc_container_ulimits: {memlock: "$MEMLOCK", stack: "67108864"}
ngc_container_extra_ulimits: {nofile: "20000:20000", nproc: "32768:32768"}
YAML
printf 'NCCL_DEBUG=INFO\nNCCL_SOCKET_IFNAME=data0\n' >"$T/nccl.env"
source "$ROOT/sim/image/ctest-lib.sh"
ctest_take_host
ip netns add "$NS"
ip -n "$NS" link add data0 type veth peer name data0p
ip -n "$NS" addr add 198.19.250.21/24 dev data0
ip -n "$NS" link set data0 up; ip -n "$NS" link set data0p up; ip -n "$NS" link set lo up
mkdir -p "$T/run"
# the node's anchor: private mount + UTS namespaces that live for the whole test (like podsim's)
ip netns exec "$NS" unshare --mount --uts --propagation private sh -c \
  '"$0"/sim/image/cgroup-v1-mount.sh && mount -t tmpfs -o mode=0700 noderun "$1" && hostname ctest-role && exec sleep infinity' \
  "$ROOT" "$T/run" &
ANCHOR=$!
for _ in $(seq 50); do grep -q " $T/run tmpfs " "/proc/$ANCHOR/mounts" 2>/dev/null && break; sleep 0.1; done
play() {
  local out=$T/run.log s
  s=$(date +%s)
  in_node env ANSIBLE_CONFIG="$ROOT/ansible.cfg" ANSIBLE_NOCOLOR=1 "$ROOT/.venv/bin/ansible-playbook" -i "$T/inv" "$@" >"$out" 2>&1 \
    || { tail -40 "$out"; log "FAIL: $*"; exit 1; }
  CHANGED=$(sed -n 's/.*changed=\([0-9]*\).*/\1/p' "$out" | tail -1)
  SECS=$(( $(date +%s) - s ))
}
play playbooks/containers.yml; log "first run: changed=$CHANGED (${SECS}s)"
play playbooks/containers.yml; log "second run: changed=$CHANGED (${SECS}s)"; [[ $CHANGED -eq 0 ]] || { log FAIL; exit 1; }
printf 'NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME=data0\n' >"$T/nccl.env"
play playbooks/containers.yml -v
grep -q 'removed (run options changed)' "$T/run.log" || { log "FAIL: env change did not recreate"; exit 1; }
log "env file changed: recreated, verify ok (${SECS}s)"
play playbooks/containers.yml -e ngc_container_mpi_key_id=2; log "key rotated: changed=$CHANGED, verify ok"
play playbooks/containers_restart.yml -e ngc_container_mpi_key_id=2; log "restart + verify ok"
play playbooks/containers_down.yml; log "down: changed=$CHANGED"
in_node "${PM[@]}" container exists ctest-role && { log "FAIL: container left"; exit 1; }
log PASS
