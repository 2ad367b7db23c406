# -*- coding: utf-8 -*-
"""A user's own training dataset (issue 44 item 2): listed, never read, never written.

``pod_training_dataset_path`` names a directory on the shared storage (relative to the data mounts, so every rank
reads it through its own mount as it reads the generated dataset). :func:`list_dataset` makes the job's file list
from a listing of the tree - names and sizes (one ``stat`` a file, a metadata operation), not the files' content:

- **ImageFolder** (torchvision's ``ImageFolder`` layout): one directory per class at the top, the images below it
  (sub-directories included); classes are the directory names in sorted order, indexed from 0 - torchvision's own
  rule (``torchvision.datasets.folder.find_classes``), so the labels are the ones a user's own job would see.
- **shards** (WebDataset): tar files anywhere under the root, each holding samples ``<key>.jpg`` + ``<key>.cls``
  (or ``.json`` with ``label``); one file-list line a shard, the job streams them (its ``--format shards``).

``format`` ``auto`` takes shards when the tree holds tar files and no class directory with images, ImageFolder when
it holds class directories with images and no tar files; anything else is an error naming what was found.
TFRecord files are named and refused (the job reads no TFRecord). Every problem is a ``UserDatasetError`` whose text
says what was found where and what to do.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp")  # what dgxpod_train.py decodes (Pillow)
SHARD_EXTS = (".tar",)
REFUSED_EXTS = {".tfrecord": "TFRecord", ".tfrecords": "TFRecord", ".rec": "MXNet RecordIO", ".idx": "an index"}
FORMATS = ("auto", "imagefolder", "shards")


class UserDatasetError(ValueError):
    """The user's dataset cannot be used as it is; the text says why and what to do."""


def check_path(path: Any) -> str:
    """``pod_training_dataset_path`` as a relative path inside the data mounts: no leading ``/``, no ``..``."""
    text = str(path or "").strip()
    if not text:
        raise UserDatasetError("pod_training_dataset_path is empty: give the dataset's directory relative to the "
                               "data mounts (e.g. datasets/imagenet/train), or leave it unset for the generated one")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/") or ".." in parts or not parts:
        raise UserDatasetError("pod_training_dataset_path %r must be a directory relative to the data mounts "
                               "(<mount>/<path> on every DGX, e.g. datasets/imagenet/train), without a leading / "
                               "or '..'" % text)
    return "/".join(parts)


def _ext(name: str) -> str:
    return os.path.splitext(name)[1].lower()


def _walk(root: str, scandir: Callable[[str], Any]) -> Iterator[Tuple[str, int]]:
    """(relative path, bytes) of every regular file under ``root``, directories in sorted order; symlinks to
    files followed (datasets are often linked together), to directories not (no loops)."""
    stack = [""]
    while stack:
        rel = stack.pop()
        with scandir(os.path.join(root, rel) if rel else root) as it:
            entries = sorted(it, key=lambda e: e.name)
        subdirs = []
        for e in entries:
            if e.name.startswith("."):
                continue  # hidden files and directories (.DS_Store, .snapshot on a NAS) are no samples
            path = e.name if not rel else rel + "/" + e.name
            if e.is_dir(follow_symlinks=False):
                subdirs.append(path)
            elif e.is_file(follow_symlinks=True):
                yield path, e.stat(follow_symlinks=True).st_size
        stack.extend(reversed(subdirs))


def list_dataset(root: str, fmt: str = "auto",
                 scandir: Callable[[str], Any] = os.scandir) -> Dict[str, Any]:
    """{format, entries [(relative path, bytes, class index)], classes [names], files, bytes, skipped {ext: n}}.

    Raises :class:`UserDatasetError` for a missing or unreadable root, an empty tree, TFRecord files, a layout that
    fits neither format (or not the one asked for)."""
    if fmt not in FORMATS:
        raise UserDatasetError("pod_training_dataset_format %r: use one of %s" % (fmt, ", ".join(FORMATS)))
    try:
        files = list(_walk(root, scandir))
    except FileNotFoundError:
        raise UserDatasetError("%s does not exist (pod_training_dataset_path is relative to the data mounts: is the "
                               "dataset on the shared storage, under every data mount?)" % root) from None
    except NotADirectoryError:
        raise UserDatasetError("%s is a file, not the dataset's directory" % root) from None
    except PermissionError as exc:
        raise UserDatasetError("%s cannot be listed: %s (the job reads as root in the container; check the "
                               "export's root squash)" % (root, exc.strerror or exc)) from None
    except OSError as exc:
        raise UserDatasetError("%s cannot be listed: %s" % (root, exc.strerror or exc)) from None
    refused = sorted({REFUSED_EXTS[_ext(p)] for p, _ in files if _ext(p) in REFUSED_EXTS})
    images = [(p, b) for p, b in files if _ext(p) in IMAGE_EXTS and "/" in p]
    top_images = [p for p, _ in files if _ext(p) in IMAGE_EXTS and "/" not in p]
    shards = [(p, b) for p, b in files if _ext(p) in SHARD_EXTS]
    if refused and not images and not shards:
        raise UserDatasetError("%s holds %s files: the training job reads ImageFolder trees and WebDataset tar "
                               "shards, not %s - convert them (e.g. to WebDataset shards) or point "
                               "pod_training_dataset_path at another copy" % (root, " and ".join(refused),
                                                                              " or ".join(refused)))
    if fmt == "auto":
        if shards and not images:
            fmt = "shards"
        elif images and not shards:
            fmt = "imagefolder"
        elif images and shards:
            raise UserDatasetError("%s holds both class directories of images (%d files) and tar shards (%d): say "
                                   "which with pod_training_dataset_format (imagefolder or shards)"
                                   % (root, len(images), len(shards)))
        else:
            hint = (" (%d image(s) at the top level, e.g. %s: ImageFolder wants them in one directory per class)"
                    % (len(top_images), top_images[0]) if top_images else "")
            raise UserDatasetError("%s holds no images in class directories and no tar shards (%d file(s) in "
                                   "all)%s" % (root, len(files), hint))
    skipped: Dict[str, int] = {}
    if fmt == "shards":
        if not shards:
            raise UserDatasetError("%s holds no .tar shards (format shards)" % root)
        chosen = shards
        entries = [(p, b, 0) for p, b in shards]
        classes: List[str] = []
    else:
        if not images:
            raise UserDatasetError("%s holds no images in class directories (format imagefolder: <class>/<file>.jpg)"
                                   % root)
        classes = sorted({p.split("/", 1)[0] for p, _ in images})
        index = {c: i for i, c in enumerate(classes)}
        chosen = images
        entries = [(p, b, index[p.split("/", 1)[0]]) for p, b in images]
    chosen_set = {p for p, _ in chosen}
    for p, _ in files:
        if p not in chosen_set:
            skipped[_ext(p) or "(none)"] = skipped.get(_ext(p) or "(none)", 0) + 1
    empty = [p for p, b, _ in entries if b == 0]
    if empty and len(empty) == len(entries):
        raise UserDatasetError("every file under %s is empty (0 bytes), e.g. %s" % (root, empty[0]))
    for p, _b, _c in entries:
        if any(ch.isspace() for ch in p):
            raise UserDatasetError("%s: %r has white space in its path, which the job's file list cannot hold; "
                                   "rename it" % (root, p))
    return {"format": fmt, "entries": entries, "classes": classes, "files": len(entries),
            "bytes": sum(b for _, b, _ in entries), "skipped": skipped, "empty": empty[:5]}


def manifest_name(path: str) -> str:
    """The file-list name of a user dataset in the toolkit's own manifest directory: its path made one name."""
    return "user-" + "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in check_path(path)) + ".FILES.txt"


def summary(listing: Dict[str, Any], root: str, manifest: str, created: str,
            seconds: Optional[float] = None) -> Dict[str, Any]:
    """The manifest-shaped record of a listed user dataset (what the training stage records and reports)."""
    files, total = listing["files"], listing["bytes"]
    return {"format": listing["format"], "user": True, "root": root, "file_list": manifest, "files": files,
            "classes": len(listing["classes"]) or None, "bytes": total,
            "mean_kb": round(total / 1000.0 / files, 1) if files else 0.0, "created": created,
            "skipped": listing.get("skipped") or {}, "empty": listing.get("empty") or [],
            "seconds": round(seconds, 3) if seconds is not None else None}
