#!/usr/bin/env bash
# Build an offline install bundle for an air-gapped controller (issue 43 item 4; docs/install.md "Offline install"),
# on a machine WITH network that is like the controller (Debian 12, same architecture, Python 3.11) and on which
# scripts/setup.sh has run. The controller then installs with no network:  scripts/setup.sh --offline <bundle>
#
#   scripts/bundle.sh [--skip-apt] [--with-image] <dir | file.tar | file.tar.gz | file.tgz>
#
# The bundle (a directory, or that directory packed as dgxpod-bundle/ in a tar):
#   wheels/       the controller's Python packages: requirements.txt and everything it pulls in, as wheels for this
#                 Python and platform (pip wheel: a package PyPI has only as a source archive is built here)
#   collections/  the PyPI "ansible" release setup.sh takes the roles' collections from (ANSIBLE_BUNDLE_VERSION)
#   apt/          the Debian packages of the controller (setup.sh CONTROLLER_PACKAGES) with every package they need
#                 that a minimal Debian 12 lacks: apt resolves them against a dpkg status of only the "required"
#                 packages (Priority: required or Essential: yes - what debootstrap --variant=minbase installs) and
#                 what those depend on, as installed here (kept as apt/base.status); --skip-apt leaves them out (a
#                 controller that has them)
#   image/        --with-image: the simulator's MPI image (podman save of sim/image/build.sh's image; root) and
#                 wheels of the simulator's Python extras (sim/setup-extras.sh), for make test-long offline
#   bundle.env    what it was built for (Python, architecture, requirements.txt digest, collections, image)
#   SHA256SUMS    every file's digest: setup.sh --offline refuses a bundle with a missing or changed file
# pip and apt honour their usual settings here (PIP_INDEX_URL, a local mirror in /etc/apt/sources.list.d, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '[bundle] %s\n' "$*"; }
die() { printf 'bundle: %s\n' "$*" >&2; exit 1; }
usage="usage: scripts/bundle.sh [--skip-apt] [--with-image] <dir | file.tar | file.tar.gz | file.tgz>"

SKIP_APT=0; WITH_IMAGE=0; OUT=
for a in "$@"; do
  case $a in
    --skip-apt) SKIP_APT=1 ;;
    --with-image) WITH_IMAGE=1 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) die "unknown option $a; $usage" ;;
    *) [[ -z $OUT ]] || die "one bundle at a time; $usage"; OUT=$a ;;
  esac
done
[[ -n $OUT ]] || die "$usage"
VENV=$ROOT/.venv
[[ -x $VENV/bin/python ]] || die "no $VENV: run scripts/setup.sh on this machine first (it has the network)"
if ((WITH_IMAGE)) && [[ $(id -u) -ne 0 ]]; then die "--with-image needs root (the simulator's image is rootful podman)"; fi
if ((!SKIP_APT)); then command -v apt-get >/dev/null || die "no apt-get here: build on Debian 12, or --skip-apt"; fi

# what setup.sh installs (one list, in setup.sh)
config=$(bash scripts/setup.sh --print-config)
cfg() { sed -n "s/^$1=//p" <<<"$config"; }
read -r -a CONTROLLER_PACKAGES <<<"$(cfg controller_packages)"
ANSIBLE_BUNDLE_VERSION=$(cfg ansible_bundle_version)
COLLECTIONS=$(cfg collections)

# --- where it is built ------------------------------------------------------------------------------------------------
case $OUT in
  *.tar|*.tar.gz|*.tgz)
    [[ ! -e $OUT ]] || die "$OUT exists: remove it or name another"
    work=$(mktemp -d "$(dirname "$OUT")/.dgxpod-bundle.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    DIR=$work/dgxpod-bundle ;;
  *)
    [[ ! -e $OUT || -z $(ls -A "$OUT" 2>/dev/null) ]] || die "$OUT is not empty: name a new or empty directory"
    DIR=$OUT ;;
esac
mkdir -p "$DIR"/wheels "$DIR"/collections
DIR=$(cd "$DIR" && pwd)
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }

# --- 1. the controller's wheels ----------------------------------------------------------------------------------------
log "wheels of requirements.txt for $("$VENV/bin/python" -c 'import sysconfig, sys; print("Python %d.%d, %s" % (sys.version_info[:2] + (sysconfig.get_platform(),)))')"
pip wheel -q --use-pep517 -w "$DIR/wheels" -r requirements.txt
cp requirements.txt "$DIR/requirements.txt"

# --- 2. the collections: the "ansible" release setup.sh extracts them from ----------------------------------------------
whl=$(ls "$ROOT"/.cache/wheels/ansible-"$ANSIBLE_BUNDLE_VERSION"-*.whl 2>/dev/null | head -1 || true)
if [[ -z $whl ]]; then
  log "downloading ansible==$ANSIBLE_BUNDLE_VERSION (the collections $COLLECTIONS)"
  pip download -q --no-deps -d "$DIR/collections" "ansible==$ANSIBLE_BUNDLE_VERSION"
else
  cp "$whl" "$DIR/collections/"
fi
ls "$DIR"/collections/ansible-"$ANSIBLE_BUNDLE_VERSION"-*.whl >/dev/null

# --- 3. the controller's Debian packages beyond a minimal Debian 12 ---------------------------------------------------
APT_ASKED=
if ((!SKIP_APT)); then
  tmp=$(mktemp -d)
  # a dpkg status of a minimal Debian 12: the required/essential packages installed here and what they depend on
  "$VENV/bin/python" - /var/lib/dpkg/status >"$tmp/status" <<'PY'
import re
import sys

installed, provides = {}, {}
for para in open(sys.argv[1], encoding="utf-8").read().split("\n\n"):
    fields = dict(line.split(":", 1) for line in para.splitlines() if line[:1].strip() and ":" in line)
    fields = {k: v.strip() for k, v in fields.items()}
    if fields.get("Status") != "install ok installed":
        continue
    installed[fields["Package"]] = (fields, para)
    for item in filter(None, re.split(r"\s*,\s*", fields.get("Provides", ""))):
        provides.setdefault(item.split()[0], []).append(fields["Package"])


def depends(fields):
    """The installed package that meets each Depends/Pre-Depends item (the first of its alternatives here)."""
    for field in ("Pre-Depends", "Depends"):
        for item in filter(None, re.split(r"\s*,\s*", fields.get(field, ""))):
            for alt in item.split("|"):
                name = alt.strip().split()[0].split(":")[0]
                found = [name] if name in installed else provides.get(name, [])
                if found:
                    yield found[0]
                    break


todo = [n for n, (f, _) in installed.items() if f.get("Priority") == "required" or f.get("Essential") == "yes"]
base = set()
while todo:
    name = todo.pop()
    if name not in base:
        base.add(name)
        todo.extend(depends(installed[name][0]))
sys.stdout.write("\n\n".join(installed[n][1].strip("\n") for n in sorted(base)) + "\n")
PY
  mkdir -p "$DIR/apt/partial" "$tmp/lists"
  log "Debian packages: ${CONTROLLER_PACKAGES[*]} and what they need beyond a minimal Debian 12 (taken as" \
    "$(grep -c '^Package:' "$tmp/status") packages installed here)"
  # download only, resolved against that status; the apt lists of this machine (apt-get update first if stale)
  apt-get -qq -y --no-install-recommends -o Dir::State::status="$tmp/status" -o Dir::Cache::archives="$DIR/apt" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root install --download-only "${CONTROLLER_PACKAGES[@]}" \
    || die "apt-get could not download the controller's packages (above): apt-get update, or --skip-apt"
  cp "$tmp/status" "$DIR/apt/base.status"  # what they were resolved against (tests/unit/test_offline_bundle.py)
  rm -rf "$DIR/apt/partial" "$DIR/apt/lock" "$tmp"
  APT_ASKED="${CONTROLLER_PACKAGES[*]}"
  log "Debian packages: $(ls "$DIR"/apt/*.deb | wc -l) .deb files"
fi

# --- 4. the simulator: its MPI image and Python extras (--with-image) -------------------------------------------------
IMAGE=
if ((WITH_IMAGE)); then
  extras=$(sed -n 's/^\(LIBNFS_VERSION\|FUSEPY_VERSION\)=\([^ ]*\).*/\2/p' sim/setup-extras.sh | tr '\n' ' ')
  read -r libnfs fusepy <<<"$extras"
  [[ -n $libnfs && -n $fusepy ]] || die "sim/setup-extras.sh names no LIBNFS_VERSION/FUSEPY_VERSION"
  log "wheels of the simulator's extras: libnfs==$libnfs fusepy==$fusepy"
  pip wheel -q --use-pep517 -w "$DIR/wheels" "libnfs==$libnfs" "fusepy==$fusepy"  # built in isolation: setuptools, wheel
  IMAGE=$(sim/image/build.sh --print-image | tail -1)
  [[ $IMAGE == localhost/* ]] || die "sim/image/build.sh --print-image gave no image name ($IMAGE)"
  mkdir -p "$DIR/image"
  log "saving the simulator image $IMAGE (podman save)"
  # shellcheck disable=SC2086
  podman ${PODMAN_ARGS:-} save -q -o "$DIR/image/dgxpod-sim-ngc.tar" "$IMAGE"
fi

# --- 5. what it is, its digests, packed --------------------------------------------------------------------------------
{
  printf 'BUNDLE_FORMAT=1\n'
  printf 'BUNDLE_CREATED=%q\n' "$(date -u +%Y%m%dT%H%M%SZ)"
  printf 'BUNDLE_SOURCE=%q\n' "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  printf 'BUNDLE_PYTHON=%q\n' "$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  printf 'BUNDLE_PLATFORM=%q\n' "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_platform())')"
  printf 'BUNDLE_ARCH=%q\n' "$(dpkg --print-architecture 2>/dev/null || uname -m)"
  printf 'BUNDLE_REQUIREMENTS_SHA256=%q\n' "$(sha256sum requirements.txt | cut -d' ' -f1)"
  printf 'BUNDLE_ANSIBLE_VERSION=%q\n' "$ANSIBLE_BUNDLE_VERSION"
  printf 'BUNDLE_COLLECTIONS=%q\n' "$COLLECTIONS"
  printf 'BUNDLE_APT_PACKAGES=%q\n' "$APT_ASKED"
  printf 'BUNDLE_IMAGE=%q\n' "$IMAGE"
} >"$DIR/bundle.env"
(cd "$DIR" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum >SHA256SUMS)
case $OUT in
  *.tar) tar -C "$work" -cf "$OUT" dgxpod-bundle ;;
  *.tar.gz|*.tgz) tar -C "$work" -czf "$OUT" dgxpod-bundle ;;
esac
log "done: $OUT ($(du -sh "${work:-$DIR}" | cut -f1)). On the controller: scripts/setup.sh --offline $OUT"
