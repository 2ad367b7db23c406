# -*- coding: utf-8 -*-
"""Mount paths that collide (issue 46, class 3): more than "absolute" (model.py checks that, and a scripts mount
on a data mount's path).

- a path not written as the kernel writes it (``/mnt/isilon/``, ``/mnt//isilon``, ``/mnt/./isilon``): the storage
  check compares the plan's paths with ``/proc/mounts``, which never shows them that way;
- a mount point inside another mount of the plan: a ``data_mount_prefix`` with a trailing ``/`` puts the data mounts
  (``/mnt/isilon/1..N``) inside the scripts mount (``/mnt/isilon``) - they need directories on the scripts
  export, hide what is there, and the scripts mount cannot be unmounted while they are up; the same for a scripts
  mount inside a data mount;
- a mount point over a system directory (``/``, ``/home``, ``/root``, ``/etc``, ``/usr``, ``/var``, ``/tmp``, ...,
  and the DGX's local RAID cache ``/raid``) or inside one the system owns (``/etc``, ``/usr``, ``/proc``, ...): the
  NFS mount hides the node's own files;
- a Spectrum Scale file system given as a path (``/gpfs/fs1``, ``/dev/fs1``) where its device name (``fs1``) is
  read: ``mmmount`` and ``mmlsmount`` name file systems by device name.

Pure: takes ``pod.storage``, returns ``Finding`` objects on ``pod.storage...``."""
from __future__ import annotations

import posixpath
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding

__all__ = ["check_storage_paths", "SYSTEM_DIRS", "SYSTEM_TREES"]

# A mount point on one of these hides the node's own files (FHS top-level directories; /raid is DGX OS's local
# NVMe RAID-0 cache, /snap Ubuntu's snaps).
SYSTEM_DIRS = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/opt",
               "/proc", "/raid", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/usr/local",
               "/var", "/var/lib", "/var/log", "/var/tmp", "/var/cache", "/var/run")
# Trees the system owns: no mount point belongs anywhere inside them.
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
                "/sys", "/usr", "/var/lib", "/var/log", "/var/cache", "/var/run")
_DEVICE_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


def _clean(path: str) -> str:
    """The path as the kernel shows a mount point: no trailing '/', no '//', no '.' component."""
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/") if norm.startswith("//") else norm


def _inside(path: str, parent: str) -> bool:
    return parent == "/" or path.startswith(parent.rstrip("/") + "/")


def check_storage_paths(storage: Any, host: Optional[str], out: List[Finding]) -> None:
    """Append the findings on ``pod.storage``'s mount paths and Spectrum Scale file system names."""
    if not isinstance(storage, Mapping):
        return
    protocol = storage.get("protocol")
    scripts, prefix = storage.get("scripts_mount"), storage.get("data_mount_prefix")
    count = storage.get("data_mounts")
    count = count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1
    # the mount points of the plan: (key, the paths as written, a label)
    mounts: List[Tuple[str, str, str]] = []
    for key, value in (("scripts_mount", scripts), ("data_mount_prefix", prefix)):
        if not isinstance(value, str) or not value.startswith("/"):
            continue  # not absolute: model.py says so
        path = "pod.storage." + key
        clean = _clean(value)
        system = clean in SYSTEM_DIRS or any(_inside(clean, t) for t in SYSTEM_TREES)  # the mistake to name
        if key == "scripts_mount" and clean != value and not system:
            out.append(Finding(host, "pod", path, "'%s' is not written as the kernel shows a mount point (%s): the "
                               "storage check compares the plan's paths with /proc/mounts and would not find it"
                               % (value, clean), "write %s" % clean))
        if key == "data_mount_prefix" and value != "/" and _clean(value.rstrip("/")) != value.rstrip("/"):
            out.append(Finding(host, "pod", path, "'%s' is not a clean path (the data mounts would be %s1..%d)" % (
                value, value, count), "write %s" % _clean(value)))
    if isinstance(scripts, str) and scripts.startswith("/"):
        mounts.append(("scripts_mount", _clean(scripts), "the scripts mount %s" % _clean(scripts)))
    if protocol != "spectrum-scale" and isinstance(prefix, str) and prefix.startswith("/"):
        first = _clean(prefix + "1")
        label = "the data mounts %s1 .. %s%d" % (prefix, prefix, count) if count > 1 else "the data mount %s1" % prefix
        mounts.append(("data_mount_prefix", first, label))
    _nested(mounts, prefix, count, host, out)
    for key, mount, label in mounts:
        _system(key, mount, label, host, out)
    if protocol == "spectrum-scale":
        _scale_names(storage, host, out)


def _nested(mounts: List[Tuple[str, str, str]], prefix: Any, count: int, host: Optional[str],
            out: List[Finding]) -> None:
    by_key: Dict[str, Tuple[str, str]] = {k: (m, label) for k, m, label in mounts}
    if "scripts_mount" not in by_key or "data_mount_prefix" not in by_key:
        return
    scripts, s_label = by_key["scripts_mount"]
    data, d_label = by_key["data_mount_prefix"]
    if scripts in SYSTEM_DIRS:
        return  # the scripts mount over a system directory is the mistake to fix (reported once)
    if _inside(data, scripts):
        fix = ("drop the trailing '/': data_mount_prefix: %s gives %s1 .. %s%d beside the scripts mount (004's "
               "layout)" % (prefix.rstrip("/"), prefix.rstrip("/"), prefix.rstrip("/"), count)
               if isinstance(prefix, str) and prefix.endswith("/") and _clean(prefix.rstrip("/")) == scripts else
               "put the data mounts beside the scripts mount, not inside it (004: scripts on /mnt/isilon, data on "
               "/mnt/isilon1..16)")
        out.append(Finding(host, "pod", "pod.storage.data_mount_prefix", "%s are inside %s: each needs a directory "
                           "on the scripts export, hides what is there, and keeps the scripts mount from being "
                           "unmounted" % (d_label, s_label), fix))
        return
    # the scripts mount inside one of the data mounts (prefix + 1..N)
    if isinstance(prefix, str):
        for n in range(1, count + 1):
            data_n = _clean(prefix + str(n))
            if _inside(scripts, data_n):
                out.append(Finding(host, "pod", "pod.storage.scripts_mount", "%s is inside data mount %d (%s): it "
                                   "would be mounted on the data export, and hidden when that mount comes up after "
                                   "it" % (s_label, n, data_n),
                                   "put the scripts mount outside the data mounts (004: scripts on /mnt/isilon, "
                                   "data on /mnt/isilon1..16)"))
                return


def _system(key: str, mount: str, label: str, host: Optional[str], out: List[Finding]) -> None:
    path = "pod.storage." + key
    if mount in SYSTEM_DIRS:
        out.append(Finding(host, "pod", path, "%s is over the system directory %s: the NFS mount hides the node's "
                           "own %s" % (label, mount, "files" if mount != "/raid" else
                                       "local RAID cache (DGX OS mounts its NVMe RAID-0 on /raid)"),
                           "mount the storage on a directory of its own, e.g. /mnt/isilon (004)"))
        return
    tree = next((t for t in SYSTEM_TREES if _inside(mount, t)), None)
    if tree is not None:
        out.append(Finding(host, "pod", path, "%s is inside %s, a directory the system owns" % (label, tree),
                           "mount the storage on a directory of its own, e.g. /mnt/isilon (004)"))


def _scale_names(storage: Mapping[str, Any], host: Optional[str], out: List[Finding]) -> None:
    """Spectrum Scale names a file system by its device name (mmlsfs all, mmlsmount): not its mount point."""
    values: List[Tuple[str, Any]] = [("pod.storage.export", storage.get("export"))]
    scale = storage.get("scale")
    if isinstance(scale, Mapping) and isinstance(scale.get("filesystems"), list):
        values += [("pod.storage.scale.filesystems[%d]" % i, fs) for i, fs in enumerate(scale["filesystems"])]
    for path, value in values:
        if not isinstance(value, str) or not value.strip() or _DEVICE_RE.match(value):
            continue
        name = value.strip().rstrip("/").rsplit("/", 1)[-1]
        if "/" in value:
            what = ("a device path" if value.startswith("/dev/") else "a mount path")
            out.append(Finding(host, "pod", path, "'%s' is %s: Spectrum Scale names a file system by its device "
                           "name (mmlsfs all, mmlsmount all), and mmmount/mmlsmount are given that name" % (
                               value, what),
                           "write the device name%s (the mount point comes from the file system, "
                           "mmlsfs <name> -T)" % (" (%s)" % name if _DEVICE_RE.match(name) else "")))
        else:
            out.append(Finding(host, "pod", path, "'%s' is not a Spectrum Scale device name (letters, digits, '_', "
                               "'-', '.')" % value, "write the name mmlsfs all shows"))
