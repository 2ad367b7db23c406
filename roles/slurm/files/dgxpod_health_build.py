# -*- coding: utf-8 -*-
"""Build dgxpod-health, the node-local health program, as one executable zipapp (PEP 441) on the Ansible
controller: ``python dgxpod_health_build.py --root <repository> --out <file> [--python /usr/bin/python3]``.

The zip holds, beside its ``__main__.py`` (roles/slurm/files/dgxpod_health_main.py):

* library/dgx_gpu_health.py and library/dgx_node_health.py, as top-level modules (their ``gather`` reads the node);
* the collection's module_utils (``ansible_collections/dgxpod/toolkit/plugins/module_utils/**.py``), under empty
  ``__init__.py`` files for it and the levels above it (namespace packages in the repository; zipimport finds only
  regular packages), as AnsiballZ packs them;
* ansible-core's ``ansible/module_utils/**.py`` of the Python that runs this script (the two modules import
  ``ansible.module_utils.basic`` at module scope) under an empty ``ansible/__init__.py``, as AnsiballZ does.

So a DGX needs only a Python 3 (no Ansible, no pip). The bytes depend only on those files' contents: entries in
sorted order with a fixed time stamp, so building twice gives the same file and the role's ``copy`` is idempotent.
The output is rewritten only when it would change; the script prints ``changed`` or ``unchanged``.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import zipfile

import ansible.module_utils

COLLECTION = ("ansible_collections", "dgxpod", "toolkit", "plugins")
MODULES = ("dgx_gpu_health.py", "dgx_node_health.py")
STAMP = (1980, 1, 1, 0, 0, 0)


def _py_tree(base, prefix):
    """[(name in the zip, file)] of every .py file under ``base`` (no __pycache__), named under ``prefix``."""
    out = []
    for d, subdirs, files in os.walk(base):
        subdirs[:] = sorted(s for s in subdirs if s != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(d, f)
                out.append(("/".join((prefix,) + tuple(os.path.relpath(path, base).split(os.sep))), path))
    return out


def members(root):
    """{name in the zip: bytes} of everything the program imports (module docstring)."""
    files = {}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "dgxpod_health_main.py"), "rb") as fh:
        files["__main__.py"] = fh.read()
    for name in MODULES:
        with open(os.path.join(root, "library", name), "rb") as fh:
            files[name] = fh.read()
    for i in range(1, len(COLLECTION) + 1):
        files["/".join(COLLECTION[:i]) + "/__init__.py"] = b""
    mu = os.path.join(root, *COLLECTION, "module_utils")
    files["/".join(COLLECTION) + "/module_utils/__init__.py"] = b""  # a namespace package in the repository
    for name, path in _py_tree(mu, "/".join(COLLECTION) + "/module_utils"):
        with open(path, "rb") as fh:
            files[name] = fh.read()
    files["ansible/__init__.py"] = b""
    for name, path in _py_tree(os.path.dirname(ansible.module_utils.__file__), "ansible/module_utils"):
        with open(path, "rb") as fh:
            files[name] = fh.read()
    return files


def build(root, python="/usr/bin/python3"):
    """The zipapp's bytes: ``#!<python>`` and the zip of :func:`members`."""
    buf = io.BytesIO()
    buf.write(("#!%s\n" % python).encode())
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(members(root).items()):
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the repository (library/ and ansible_collections/)")
    parser.add_argument("--out", required=True, help="the zipapp to write")
    parser.add_argument("--python", default="/usr/bin/python3", help="the nodes' Python (the #! line)")
    args = parser.parse_args(argv)
    data = build(args.root, args.python)
    try:
        with open(args.out, "rb") as fh:
            if fh.read() == data:
                print("unchanged")
                return 0
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, args.out)
    print("changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
