#!/usr/bin/env bash
# One-step set-up for a Debian 12 controller (run as root):
#   1. Debian packages (controller tools + what the pod-in-a-box simulator needs),
#   2. a Python virtual environment (.venv) from the pinned requirements.txt,
#   3. the Ansible collections the roles use, taken offline from the PyPI
#      "ansible" package (Galaxy users: see requirements.yml),
#   4. the simulator's Python extras, 5. the simulator's container image.
# Re-running it is fast and changes nothing when everything is in place.
#
#   scripts/setup.sh                      online (apt, PyPI), as above
#   scripts/setup.sh --offline <bundle>   no network: the controller from a bundle scripts/bundle.sh built (a
#                                         directory or its .tar/.tar.gz): its Debian packages, wheels, collections
#                                         and, when it has them, the simulator's extras and image (docs/install.md)
#   scripts/setup.sh --print-config       what scripts/bundle.sh reads: the controller's Debian packages, the
#                                         collections and the "ansible" release they come from
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ANSIBLE_BUNDLE_VERSION=${ANSIBLE_BUNDLE_VERSION:-12.3.0}
COLLECTIONS="ansible.posix community.general community.docker containers.podman"
VENV=$ROOT/.venv
log() { printf '[setup] %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }
OFFLINE=
case ${1:-} in
  "") ;;
  --offline) [[ -n ${2:-} && $# -eq 2 ]] || die "usage: scripts/setup.sh [--offline <bundle dir or .tar>]"; OFFLINE=$2 ;;
  --print-config) ;;
  *) die "usage: scripts/setup.sh [--offline <bundle dir or .tar>] (unknown argument: $1)" ;;
esac

# --- 1. Debian packages -------------------------------------------------------
# the controller's own (an offline bundle carries these and what they need beyond a minimal Debian 12)
CONTROLLER_PACKAGES=(python3 python3-venv python3-dev gcc make git openssh-client rsync ca-certificates)
if [[ ${1:-} == --print-config ]]; then
  printf 'controller_packages=%s\nansible_bundle_version=%s\ncollections=%s\n' "${CONTROLLER_PACKAGES[*]}" \
    "$ANSIBLE_BUNDLE_VERSION" "$COLLECTIONS"
  exit 0
fi
BUNDLE=
if [[ -n $OFFLINE ]]; then
  # --- 0. the offline bundle: unpacked, complete, made for this checkout ---------
  if [[ -f $OFFLINE ]]; then
    unpack=$(mktemp -d "${TMPDIR:-/var/tmp}/dgxpod-bundle.XXXXXX")
    trap 'rm -rf "$unpack"' EXIT
    log "unpacking $OFFLINE"
    tar -xf "$OFFLINE" -C "$unpack" || die "$OFFLINE: not a bundle archive scripts/bundle.sh wrote (tar failed)"
    BUNDLE=$(dirname "$(find "$unpack" -maxdepth 2 -name bundle.env | head -1)")
  else
    BUNDLE=$(cd "$OFFLINE" 2>/dev/null && pwd) || die "$OFFLINE: no such bundle directory or archive"
  fi
  [[ -f $BUNDLE/bundle.env ]] || die "$OFFLINE: not a bundle (no bundle.env): build one with scripts/bundle.sh"
  (cd "$BUNDLE" && sha256sum --quiet --strict -c SHA256SUMS) >&2 \
    || die "$OFFLINE: files missing or changed since scripts/bundle.sh wrote it (SHA256SUMS): copy it again"
  # shellcheck source=/dev/null
  source "$BUNDLE/bundle.env"
  [[ ${BUNDLE_REQUIREMENTS_SHA256:-} == $(sha256sum requirements.txt | cut -d' ' -f1) ]] \
    || die "$OFFLINE was built for another requirements.txt than this checkout's: build it again from this one"
  [[ ${BUNDLE_ANSIBLE_VERSION:-} == "$ANSIBLE_BUNDLE_VERSION" && ${BUNDLE_COLLECTIONS:-} == "$COLLECTIONS" ]] \
    || die "$OFFLINE carries collections of ansible ${BUNDLE_ANSIBLE_VERSION:-?} ($BUNDLE_COLLECTIONS), this" \
           "checkout wants $ANSIBLE_BUNDLE_VERSION ($COLLECTIONS): build it again from this checkout"
  log "offline: bundle of $BUNDLE_CREATED for Python $BUNDLE_PYTHON on $BUNDLE_ARCH ($BUNDLE)"
fi
# offline: the controller's packages only (the simulator's are not in a bundle), from the bundle's .deb files - each
# one whose package is missing here or older (the set is what they need beyond a minimal Debian 12), never a download
offline_apt() {
  local missing=() p debs=() deb name version have
  for p in "${CONTROLLER_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then log "Debian packages (controller): all present"; return; fi
  [[ $(id -u) -eq 0 ]] || die "run as root to install: ${missing[*]}"
  compgen -G "$BUNDLE/apt/*.deb" >/dev/null || die "missing Debian packages ${missing[*]}, and the bundle has none" \
    "(built with --skip-apt): install them, or build the bundle without --skip-apt"
  [[ $BUNDLE_ARCH == $(dpkg --print-architecture) ]] || die "the bundle's Debian packages are for $BUNDLE_ARCH," \
    "this machine is $(dpkg --print-architecture)"
  for deb in "$BUNDLE"/apt/*.deb; do
    name=$(dpkg-deb -f "$deb" Package); version=$(dpkg-deb -f "$deb" Version)
    have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null | sed -n 's/^install ok installed //p')
    if [[ -z $have ]] || dpkg --compare-versions "$have" lt "$version"; then debs+=("$deb"); fi
  done
  log "installing Debian packages from the bundle: ${missing[*]} (${#debs[@]} .deb files)"
  export DEBIAN_FRONTEND=noninteractive
  had_policy=0; [[ -e /usr/sbin/policy-rc.d ]] && had_policy=1
  ((had_policy)) || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
  apt-get install -y -qq --no-download --no-install-recommends "${debs[@]}" >/dev/null || {
    ((had_policy)) || rm -f /usr/sbin/policy-rc.d
    die "apt-get could not install the bundle's packages (above); its .deb files are in $BUNDLE/apt"; }
  ((had_policy)) || rm -f /usr/sbin/policy-rc.d
}
APT_PACKAGES=(
  # controller
  "${CONTROLLER_PACKAGES[@]}"
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
[[ -z $OFFLINE ]] || { offline_apt; APT_PACKAGES=(); }
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
elif [[ -z $OFFLINE ]]; then
  log "Debian packages: all present"
fi

# --- 2. Python virtual environment -------------------------------------------
PY=/usr/bin/python3
stamp=$VENV/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x $VENV/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  log "creating/updating virtual environment $VENV"
  if [[ -n $OFFLINE ]]; then
    have_py=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || die "no $PY to run"
    [[ $have_py == "$BUNDLE_PYTHON" ]] || die "the bundle's wheels are for Python $BUNDLE_PYTHON, $PY is $have_py:" \
      "build the bundle on a machine like this one (Debian 12: Python 3.11)"
  fi
  [[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV"
  if [[ -n $OFFLINE ]]; then  # the bundle's wheels only: no index, and no pip configuration that names one
    PIP_CONFIG_FILE=/dev/null "$VENV/bin/pip" install --isolated -q --disable-pip-version-check --no-index \
      --find-links "$BUNDLE/wheels" -r requirements.txt || die "a wheel is missing from $BUNDLE/wheels (above)"
  else
    "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
  fi
  echo "$want" >"$stamp"
else
  log "virtual environment: up to date"
fi

# --- 3. Ansible collections (offline, from the PyPI "ansible" package) -------
COLL_DIR=$ROOT/collections/ansible_collections
cstamp=$ROOT/collections/.bundle-version
if [[ ! -f $cstamp || $(cat "$cstamp") != "$ANSIBLE_BUNDLE_VERSION $COLLECTIONS" ]]; then
  log "extracting collections ($COLLECTIONS) from ansible==$ANSIBLE_BUNDLE_VERSION"
  dl=$ROOT/.cache/wheels; [[ -n $OFFLINE ]] || mkdir -p "$dl"
  [[ -z $OFFLINE ]] || dl=$BUNDLE/collections
  whl=$(ls "$dl"/ansible-"$ANSIBLE_BUNDLE_VERSION"-*.whl 2>/dev/null | head -1 || true)
  [[ -n $whl || -z $OFFLINE ]] || die "the bundle has no ansible-$ANSIBLE_BUNDLE_VERSION wheel in $dl"
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

if [[ -n $OFFLINE ]]; then
  # --- 4./5. offline: the simulator's extras and image only when the bundle has them (bundle.sh --with-image) ---
  if [[ ! -x sim/setup-extras.sh ]]; then
    :
  elif compgen -G "$BUNDLE/wheels/libnfs-*" >/dev/null; then
    PIP_NO_INDEX=1 PIP_FIND_LINKS=$BUNDLE/wheels PIP_CONFIG_FILE=/dev/null sim/setup-extras.sh "$VENV"
  else
    log "offline: the bundle has no simulator extras (libnfs, fusepy): skipped (scripts/bundle.sh --with-image)"
  fi
  if [[ -z ${BUNDLE_IMAGE:-} ]]; then
    log "offline: the bundle has no simulator image: skipped (scripts/bundle.sh --with-image)"
  elif [[ $(id -u) -ne 0 ]]; then
    log "not root: skipping the simulator's container image"
  else
    # shellcheck disable=SC2086
    if podman ${PODMAN_ARGS:-} image exists "$BUNDLE_IMAGE"; then
      log "simulator image $BUNDLE_IMAGE: present"
    else
      log "loading the simulator image $BUNDLE_IMAGE from the bundle"
      # shellcheck disable=SC2086
      podman ${PODMAN_ARGS:-} load -q -i "$BUNDLE/image/dgxpod-sim-ngc.tar" >/dev/null
    fi
    # shellcheck disable=SC2086
    podman ${PODMAN_ARGS:-} tag "$BUNDLE_IMAGE" "${BUNDLE_IMAGE%:*}:latest"
  fi
  log "done (offline). Activate with: source .venv/bin/activate"
  exit 0
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
