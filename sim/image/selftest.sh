#!/usr/bin/env bash
# Host-level self-test of the MPI container mesh, without the simulator: N private "nodes" =
# network namespaces ctest-1..N (own UTS via unshare, so hostname differs) on a bridge ctbr0 with
# 198.19.250.0/24 (RFC 2544 range, no route anywhere), one podman container per node started by the
# role's ngc_container_run module with the role's run options and key files, then ngc_mpi_verify
# (ssh on 2222 with strict host keys + mpirun hostname) from node 1. Everything is removed at the end.
#
# Usage (root): sim/image/selftest.sh [N]   (default 3; needs podman and sim/image/build.sh's image)
# Exit 0 only if the mesh proves, the second run is changed=0, and a stopped container is named.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
N=${1:-3}
IMAGE=$(sim/image/build.sh --print-image)
WORK=$(mktemp -d /tmp/ctest-mesh.XXXXXX)
BR=ctbr0
NET=198.19.250
ANSIBLE=${ANSIBLE:-$ROOT/.venv/bin/ansible}
export ANSIBLE_CONFIG=$ROOT/ansible.cfg ANSIBLE_LIBRARY=$ROOT/library ANSIBLE_MODULE_UTILS=$ROOT/module_utils
# Simulator workaround: explicit nofile/nproc (no CAP_SYS_RESOURCE for --ulimit host in the sandbox).
EXTRA_ULIMITS='"nofile": "20000:20000", "nproc": "32768:32768"'
# Simulator workaround: memlock=-1 (the RA's value) cannot be raised past the sandbox's hard limit
# without CAP_SYS_RESOURCE -> use the hard limit the machine has (bytes) when it is not unlimited.
hl=$(ulimit -Hl)
if [[ $hl == unlimited ]]; then MEMLOCK=-1; else MEMLOCK=$((hl * 1024)); fi
log() { printf '[ctest] %s\n' "$*"; }

cleanup() {
  set +e
  for i in $(seq 1 "$N"); do
    podman rm --force --time 1 "ctest-mpi-$i" >/dev/null 2>&1
    ip netns del "ctest-$i" 2>/dev/null
    ip link del "ctv-$i" 2>/dev/null
  done
  ip link del "$BR" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

source "$ROOT/sim/image/ctest-lib.sh"
ctest_take_host
log "image $IMAGE"
ip link add "$BR" type bridge
ip link set "$BR" up
for i in $(seq 1 "$N"); do
  ip netns add "ctest-$i"
  ip link add "ctv-$i" type veth peer name eth0 netns "ctest-$i"
  ip link set "ctv-$i" master "$BR" up
  ip -n "ctest-$i" addr add "$NET.$((10 + i))/24" dev eth0
  ip -n "ctest-$i" link set eth0 up
  ip -n "ctest-$i" link set lo up
done

# keys: the pod MPI pair (controller) + one container host key per node, as the role makes them
ssh-keygen -q -t ed25519 -N "" -C "dgxpod-mpi ctest" -f "$WORK/mpi_ed25519"
for i in $(seq 1 "$N"); do
  d=$WORK/node$i; mkdir -m 0700 "$d"
  ssh-keygen -q -t ed25519 -N "" -C "ctest-$i container sshd" -f "$d/ssh_host_ed25519_key"
  install -m 0600 "$WORK/mpi_ed25519" "$d/id_ed25519"
done
"$ROOT/.venv/bin/python" - "$WORK" "$N" "$NET" <<'PY'
import sys
sys.path.insert(0, "filter_plugins")
from ngc import ngc_authorized_keys, ngc_known_hosts
work, n, net = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pod = {"fabrics": [{"name": "data", "carries": ["compute"]}]}
hostvars = {"ctest-%d" % i: {"nics": [{"name": "eth0", "fabric": "data", "address": "%s.%d" % (net, 10 + i)}]}
            for i in range(1, n + 1)}
keys = {h: open("%s/node%s/ssh_host_ed25519_key.pub" % (work, h.split("-")[1])).read() for h in hostvars}
kh = ngc_known_hosts(keys, hostvars, pod, 2222)
ak = ngc_authorized_keys(open(work + "/mpi_ed25519.pub").read())
for i in range(1, n + 1):
    with open("%s/node%d/known_hosts" % (work, i), "w") as f:
        f.write(kh)
    with open("%s/node%d/authorized_keys" % (work, i), "w") as f:
        f.write(ak)
PY
chmod 0600 "$WORK"/node*/authorized_keys; chmod 0644 "$WORK"/node*/known_hosts
hosts=""; for i in $(seq 1 "$N"); do hosts+="$NET.$((10 + i)) ctest-$i"$'\n'; done
printf 'NCCL_DEBUG=INFO\nNCCL_SOCKET_IFNAME=eth0\nOMPI_MCA_btl_tcp_if_include=eth0\n' >"$WORK/nccl.env"

# run the role's module inside node i (its netns + its own UTS namespace with hostname ctest-i)
# Workaround: `ip netns exec` gives a fresh /sys without the cgroup v1 mounts -> re-mount them first.
in_node() {
  local i=$1; shift
  ip netns exec "ctest-$i" unshare --uts sh -c '"$1" && hostname "$0" && shift && exec "$@"' \
    "ctest-$i" "$ROOT/sim/image/cgroup-v1-mount.sh" "$@"
}
run_args() {
  local i=$1
  cat <<JSON
{"name": "ctest-mpi-$i", "engine": "podman", "image": "$IMAGE", "shm_size": "1g",
 "ulimits": {"memlock": "$MEMLOCK", "stack": "67108864", $EXTRA_ULIMITS},
 "volumes": ["$WORK/node$i:/etc/dgxpod/mpi:ro"], "env_file": "$WORK/nccl.env",
 "extra_args": [$(for j in $(seq 1 "$N"); do printf '"--add-host", "ctest-%d:%s.%d"' "$j" "$NET" $((10 + j)); [[ $j -lt $N ]] && printf ', '; done)],
 "restart_policy": "no", "labels": {"org.dgxpod.test": "ctest"}}
JSON
}
start_all() {
  local changed=0 out
  for i in $(seq 1 "$N"); do
    out=$(in_node "$i" "$ANSIBLE" localhost -c local -o -m ngc_container_run -a "$(run_args "$i")") \
      || { echo "$out" >&2; return 1; }
    grep -q '"changed": true' <<<"$out" && changed=$((changed + 1))
  done
  echo "$changed"
}
verify() {
  local targets="" sep=""
  for i in $(seq 1 "$N"); do
    st=$(podman container inspect --format '{{.State.Status}}' "ctest-mpi-$i" 2>/dev/null || echo absent)
    targets+="$sep{\"node\": \"ctest-$i\", \"connect\": \"ctest-$i\", \"hostname\": \"ctest-$i\", \"state\": \"$st\"}"; sep=", "
  done
  in_node 1 "$ANSIBLE" localhost -c local -o -m ngc_mpi_verify \
    -a "{\"container\": \"ctest-mpi-1\", \"tcp_if\": \"eth0\", \"timeout\": 30, \"targets\": [$targets]}"
}

t0=$(date +%s.%N)
c=$(start_all); log "first run: $c container(s) created ($(echo "$(date +%s.%N) - $t0" | bc) s)"
[[ $c -eq $N ]] || { log "FAIL: expected $N created"; exit 1; }
t0=$(date +%s.%N)
c=$(start_all); log "second run: changed=$c ($(echo "$(date +%s.%N) - $t0" | bc) s)"
[[ $c -eq 0 ]] || { log "FAIL: second run changed $c"; exit 1; }
sleep 1
t0=$(date +%s.%N)
out=$(verify) || { echo "$out"; log "FAIL: verify"; exit 1; }
log "verify ok ($(echo "$(date +%s.%N) - $t0" | bc) s): $(grep -o '"counts": {[^}]*}' <<<"$out")"

# fault: stop node N's container -> verify must fail naming ctest-N (container down)
podman stop --time 1 "ctest-mpi-$N" >/dev/null
if out=$(verify); then log "FAIL: verify passed with a stopped container"; exit 1; fi
grep -q "ctest-$N: container down" <<<"$out" || { echo "$out"; log "FAIL: node not named"; exit 1; }
log "stopped container named: $(grep -o "MPI mesh: [^\"]*" <<<"$out")"
# fault: a wrong host key pinned for node 2 -> host key mismatch
in_node "$N" podman start "ctest-mpi-$N" >/dev/null  # from inside the node (its cgroup mounts)
ssh-keygen -q -t ed25519 -N "" -f "$WORK/other"
sed -i "s#^\(\[ctest-2\]:2222[^ ]*\) ssh-ed25519 [^ ]*#\1 $(cut -d' ' -f1,2 "$WORK/other.pub")#" "$WORK/node1/known_hosts"
if out=$(verify); then log "FAIL: verify passed with a wrong pinned key"; exit 1; fi
grep -q "ctest-2: host key mismatch" <<<"$out" || { echo "$out"; log "FAIL: mismatch not named"; exit 1; }
log "wrong pinned host key named: $(grep -o "MPI mesh: [^\"]*" <<<"$out")"
log "PASS"
