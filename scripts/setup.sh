#!/usr/bin/env bash
# One-step set-up for a Debian 12 controller (run as root):
#   1. Debian packages (controller tools + what the pod-in-a-box simulator needs),
#   2. a Python virtual environment (.venv) from the pinned requirements.txt,
#   3. the Ansible collections the roles use, taken offline from the PyPI
#      "ansible" package (Galaxy users: see requirements.yml),
#   4. the simulator's Python extras, 5. the simulator's container image.
# Re-running it is fast and changes nothing when everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ANSIBLE_BUNDLE_VERSION=${ANSIBLE_BUNDLE_VERSION:-12.3.0}
COLLECTIONS="ansible.posix community.general community.docker containers.podman"
VENV=$ROOT/.venv
log() { printf '[setup] %s\n' "$*"; }

# --- 1. Debian packages -------------------------------------------------------
APT_PACKAGES=(
  # controller
  python3 python3-venv python3-dev gcc make git openssh-client rsync ca-certificates
  # simulator: nodes, sshd, network tools, benchmarks
  iproute2 iputils-ping procps psmisc util-linux openssh-server iperf3 fio openmpi-bin
  # simulator: storage nodes (nfs-ganesha) and the FUSE NFS client
  nfs-ganesha nfs-ganesha-vfs rpcbind fuse3 libnfs-dev swig python3-fusepy
  # simulator: MPI containers (rootful podman; the stand-in image is built from Debian by debootstrap)
  podman crun catatonit debootstrap
  # simulator: `podsim up --engine docker` (one dockerd per DGX) and community.docker's modules on the
  # nodes (docker_container needs python3-requests on the node's python, not the Docker SDK)
  docker.io python3-requests
  # training stage: the JPEG dataset generator's tests (Pillow)
  python3-pil
  # report screenshots (scripts/report_screenshot.py, headless)
  chromium-headless-shell
  # the optional Slurm scheduler (roles/slurm): its real-daemon test (tests/unit/test_slurm_daemons.py)
  slurm-wlm munge
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then echo "setup: run as root to install: ${missing[*]}" >&2; exit 1; fi
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d: do not let package scripts start daemons (the simulator starts its own)
  had_policy=0; [[ -e /usr/sbin/policy-rc.d ]] && had_policy=1
  ((had_policy)) || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ((had_policy)) || rm -f /usr/sbin/policy-rc.d
else
  log "Debian packages: all present"
fi

# --- 2. Python virtual environment -------------------------------------------
PY=/usr/bin/python3
stamp=$VENV/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x $VENV/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  log "creating/updating virtual environment $VENV"
  [[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
  echo "$want" >"$stamp"
else
  log "virtual environment: up to date"
fi

# --- 3. Ansible collections (offline, from the PyPI "ansible" package) -------
COLL_DIR=$ROOT/collections/ansible_collections
cstamp=$ROOT/collections/.bundle-version
if [[ ! -f $cstamp || $(cat "$cstamp") != "$ANSIBLE_BUNDLE_VERSION $COLLECTIONS" ]]; then
  log "extracting collections ($COLLECTIONS) from ansible==$ANSIBLE_BUNDLE_VERSION"
  dl=$ROOT/.cache/wheels; mkdir -p "$dl"
  whl=$(ls "$dl"/ansible-"$ANSIBLE_BUNDLE_VERSION"-*.whl 2>/dev/null | head -1 || true)
  if [[ -z $whl ]]; then
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps -d "$dl" "ansible==$ANSIBLE_BUNDLE_VERSION"
    whl=$(ls "$dl"/ansible-"$ANSIBLE_BUNDLE_VERSION"-*.whl | head -1)
  fi
  rm -rf "$COLL_DIR"; mkdir -p "$COLL_DIR"
  "$VENV/bin/python" - "$whl" "$COLL_DIR" $COLLECTIONS <<'PY'
import sys, zipfile
whl, dest, names = sys.argv[1], sys.argv[2], sys.argv[3:]
prefixes = ["ansible_collections/%s/" % n.replace(".", "/") for n in names]
with zipfile.ZipFile(whl) as z:
    members = [m for m in z.namelist() if any(m.startswith(p) for p in prefixes)]
    for p in prefixes:
        if not any(m.startswith(p) for m in members):
            sys.exit("collection missing from %s: %s" % (whl, p))
    for m in members:
        z.extract(m, dest.rsplit("/ansible_collections", 1)[0])
print("extracted %d files" % len(members))
PY
  echo "$ANSIBLE_BUNDLE_VERSION $COLLECTIONS" >"$cstamp"
else
  log "collections: up to date"
fi

# --- 4. simulator extras (FUSE NFS helper etc.), owned by sim/ ----------------
if [[ -x sim/setup-extras.sh ]]; then sim/setup-extras.sh "$VENV"; fi
# --- 5. the simulator's stand-in for the NGC image (cached by content hash) -----
if [[ $(id -u) -eq 0 ]]; then
  sim/image/build.sh
else
  log "not root: skipping the simulator's container image (sim/image/build.sh)"
fi
log "done. Activate with: source .venv/bin/activate"
