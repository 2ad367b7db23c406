#!/usr/bin/env bash
# Simulator extras, run by scripts/setup.sh as `sim/setup-extras.sh VENV` (idempotent, fast on re-run):
# the Python packages of the FUSE NFS client stand-in (sim/standins/podsim_nfs.py), pinned.
# Build needs (Debian, from scripts/setup.sh): libnfs-dev swig python3-dev gcc, fuse3 + libfuse2.
set -euo pipefail
VENV=${1:?usage: sim/setup-extras.sh VENV}
LIBNFS_VERSION=1.0.post4   # PyPI libnfs: SWIG binding of libnfs (Debian 12: libnfs 4.0)
FUSEPY_VERSION=3.0.1       # PyPI fusepy (ctypes binding of libfuse 2)
if "$VENV/bin/python" - "$LIBNFS_VERSION" "$FUSEPY_VERSION" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
if (m.version("libnfs"), m.version("fusepy")) != (sys.argv[1], sys.argv[2]):
    sys.exit(1)
import fuse, libnfs  # noqa: F401  (fails if libfuse.so.2 or the compiled binding is missing)
PY
then
  echo "[setup] simulator extras (libnfs $LIBNFS_VERSION, fusepy $FUSEPY_VERSION): up to date"
  exit 0
fi
echo "[setup] installing simulator extras: libnfs==$LIBNFS_VERSION fusepy==$FUSEPY_VERSION"
"$VENV/bin/pip" install -q --disable-pip-version-check "libnfs==$LIBNFS_VERSION" "fusepy==$FUSEPY_VERSION"
