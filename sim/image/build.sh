#!/usr/bin/env bash
# Build the pod-in-a-box's stand-in for the NGC image and import it into (rootful) podman.
#
# The real NGC framework images (nvcr.io/nvidia/pytorch:<tag>) cannot be pulled on the simulator
# machine, so the simulator uses a small Debian image with what the MPI mesh needs (sshd, ssh,
# Open MPI, python3, iproute2, procps). It is a SIMULATOR STAND-IN: its labels and docs say so.
#
# Two steps, both cached by a content hash so a re-run with nothing changed takes well under a second:
#   1. base:  debootstrap --variant=minbase bookworm + packages -> tar -> `podman import`
#             -> localhost/dgxpod-sim-ngc-base:<hash>   (host keys and apt lists removed)
#   2. layer: the ngc_container role's own Dockerfile template, rendered with the base as FROM and
#             the ssh install step off (the base has it), built with `podman build` (COPY only, no RUN)
#             -> localhost/dgxpod-sim-ngc:<hash> and :latest
#
# Usage (root): sim/image/build.sh [--print-image] [--force]
# Environment: PODSIM_IMAGE_MIRROR (default: the first deb URI in /etc/apt), PODSIM_IMAGE_WORK
# (scratch dir, default /var/tmp/dgxpod-sim-image), PODMAN_ARGS (extra global podman options).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SUITE=bookworm
# mpi4py/numpy: the CPU stand-in of nccl-tests (sim/image/nccl-tests-standin); torch/torchvision: the
# training stage's CPU run. Both only in this simulator image.
PACKAGES=(openssh-server openssh-client openmpi-bin iproute2 iputils-ping procps python3 ca-certificates
  python3-mpi4py python3-numpy python3-torch python3-torchvision)
BASE_REPO=localhost/dgxpod-sim-ngc-base
REPO=localhost/dgxpod-sim-ngc
WORK=${PODSIM_IMAGE_WORK:-/var/tmp/dgxpod-sim-image}
ROLE=$ROOT/roles/ngc_container
PY=${PYTHON:-$ROOT/.venv/bin/python}
FORCE=0; PRINT=0
for a in "$@"; do
  case $a in
    --force) FORCE=1 ;;
    --print-image) PRINT=1 ;;
    *) echo "usage: $0 [--print-image] [--force]" >&2; exit 2 ;;
  esac
done
log() { [[ $PRINT -eq 1 ]] || printf '[sim-image] %s\n' "$*"; }
# shellcheck disable=SC2086
pm() { podman ${PODMAN_ARGS:-} "$@"; }

mirror=${PODSIM_IMAGE_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}

# --- content hashes -------------------------------------------------------------------------------
base_hash=$( { echo "$SUITE ${PACKAGES[*]} $mirror"; sed -n '/^# --- base build/,/^# --- end base/p' "$0"; } \
  | sha256sum | cut -c1-16)
layer_hash=$( { echo "$base_hash"; sed -n '/^# --- sshd\/ssh\/helpers layer/,$p' "$0"; cat "$ROLE/templates/Dockerfile.j2" "$ROLE/templates/sshd_config.j2" \
  "$ROLE/templates/ssh_config.j2" "$ROLE/files/dgxpod-container-init" "$ROOT"/sim/image/nccl-tests-standin/*.py; } \
  | sha256sum | cut -c1-16)
BASE=$BASE_REPO:$base_hash
IMAGE=$REPO:$layer_hash

if [[ $FORCE -eq 0 ]] && pm image exists "$IMAGE"; then
  log "cached: $IMAGE"
  pm tag "$IMAGE" "$REPO:latest" >/dev/null
  [[ $PRINT -eq 0 ]] || echo "$IMAGE"
  exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "sim-image: run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "sim-image: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
start=$(date +%s)

# --- base build ------------------------------------------------------------------------------------
if [[ $FORCE -eq 1 ]] || ! pm image exists "$BASE"; then
  rootfs=$WORK/rootfs-$base_hash
  rm -rf "$rootfs"; mkdir -p "$WORK"
  log "debootstrap $SUITE (minbase + ${PACKAGES[*]}) from $mirror"
  inc=$(IFS=,; echo "${PACKAGES[*]}")
  # policy-rc.d in the target keeps package scripts from starting sshd in the chroot
  debootstrap --variant=minbase --include="$inc" "$SUITE" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
    || { echo "sim-image: debootstrap failed, see $WORK/debootstrap.log" >&2; exit 1; }
  # No private key may be in any layer: openssh-server's postinst generated host keys - remove them
  # (each container gets its node's host key mounted read-only at run time).
  rm -f "$rootfs"/etc/ssh/ssh_host_*
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  rm -f "$rootfs"/etc/hostname "$rootfs"/etc/machine-id && : >"$rootfs"/etc/machine-id
  if grep -rlE 'BEGIN ([A-Z]+ )?PRIVATE KEY' "$rootfs"/etc "$rootfs"/root 2>/dev/null; then
    echo "sim-image: private key material left in the rootfs (listed above)" >&2; exit 1
  fi
  log "importing $BASE"
  tar -C "$rootfs" --numeric-owner -cf - . | pm import \
    --change 'LABEL org.dgxpod.simulator-stand-in=true' \
    --change "LABEL org.dgxpod.stands-for=nvcr.io/nvidia/pytorch (NGC); simulator only" \
    --change "LABEL org.dgxpod.content-sha256=$base_hash" \
    --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$rootfs"
fi
# --- end base

# --- sshd/ssh/helpers layer: the role's own Dockerfile -------------------------------------------------
ctx=$WORK/context-$layer_hash
rm -rf "$ctx"; mkdir -p "$ctx/helpers"
"$PY" - "$ROLE" "$ctx" "$BASE" <<'PY'
import sys, jinja2
from ansible.plugins.filter.core import to_bool
role, ctx, base = sys.argv[1:4]
env = jinja2.Environment(loader=jinja2.FileSystemLoader(role + "/templates"), keep_trailing_newline=True,
                         trim_blocks=True, undefined=jinja2.StrictUndefined)  # as Ansible's template module
env.filters["bool"] = to_bool  # Ansible's: the template reads its boolean options through | bool
v = {"ngc_container_from": base, "ngc_container_install_ssh": False, "ngc_container_ssh_port": 2222,
     "ngc_container_key_dir": "/etc/dgxpod/mpi", "ngc_container_helper_names": [],
     "ngc_container_image_labels": {"org.dgxpod.simulator-stand-in": "true",
                                    "org.dgxpod.stands-for": "nvcr.io/nvidia/pytorch (NGC); simulator only"},
     "ansible_managed": "sim/image/build.sh"}
for name in ("Dockerfile", "sshd_config", "ssh_config"):
    with open("%s/%s" % (ctx, name), "w") as f:
        f.write(env.get_template(name + ".j2").render(**v))
PY
cp "$ROLE/files/dgxpod-container-init" "$ctx/"
# The nccl-tests stand-in (CPU, mpi4py; sim/image/nccl-tests-standin): one program under nccl-tests'
# binary names, in a directory of its own that only the simulator's inventory points the NCCL stage at.
mkdir -p "$ctx/nccl-tests-standin"
cp -L "$ROOT"/sim/image/nccl-tests-standin/*_perf "$ctx/nccl-tests-standin/"
printf '\n# simulator only: the CPU stand-in of nccl-tests (sim/image/nccl-tests-standin)\nCOPY nccl-tests-standin/ %s/\n' \
  /opt/podsim/nccl-tests-standin >>"$ctx/Dockerfile"
log "building $IMAGE (role Dockerfile, FROM $BASE)"
pm build --quiet --network none --label "org.dgxpod.context-sha256=$layer_hash" -t "$IMAGE" "$ctx" >/dev/null
pm tag "$IMAGE" "$REPO:latest" >/dev/null
rm -rf "$ctx"
# drop older stand-in images (other hashes) so the store does not grow with every change
for old in $(pm images --format '{{.Repository}}:{{.Tag}}' | grep -E "^($REPO|$BASE_REPO):[0-9a-f]{16}$" || true); do
  [[ $old == "$IMAGE" || $old == "$BASE" ]] || pm rmi "$old" >/dev/null 2>&1 || true
done
log "built $IMAGE in $(( $(date +%s) - start )) s"
[[ $PRINT -eq 0 ]] || echo "$IMAGE"
