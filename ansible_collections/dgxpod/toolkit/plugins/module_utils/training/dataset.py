# -*- coding: utf-8 -*-
"""The training stage's dataset: an ImageNet-like tree of JPEG files on the shared storage. Pure functions.

Layout under the dataset root (one directory on the shared storage, seen through every data mount)::

    <root>/train/c000/img000000.jpg ...     JPEG files in class folders (ImageNet's layout)
    <root>/FILES.txt                        one line per file: "<relative path> <bytes> <class index>"
    <root>/MANIFEST.json                    written last: the spec it was made from and the totals

A dataset is reused when its manifest says it is complete and was made from the same spec - it is never
re-read to find out. Generation writes into ``<root>.partial`` and renames it to ``<root>`` only after the
manifest is written, so an interrupted run leaves no tree that looks complete.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, List, Optional, Tuple

FORMAT = "dgxpod-dataset/1"
MANIFEST = "MANIFEST.json"
FILE_LIST = "FILES.txt"
SPEC_KEYS = ("classes", "images_per_class", "width", "height", "quality", "target_kb", "seed")


def spec(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """The generation spec from the stage's settings (role variables); raises ValueError naming a bad key."""
    out: Dict[str, Any] = {}
    for key in SPEC_KEYS:
        if key not in cfg or cfg[key] is None:
            if key == "target_kb":
                out[key] = None
                continue
            raise ValueError("dataset spec: %s is missing" % key)
        try:
            out[key] = float(cfg[key]) if key == "target_kb" else int(cfg[key])
        except (TypeError, ValueError):
            raise ValueError("dataset spec: %s must be a number, got %r" % (key, cfg[key])) from None
    for key in ("classes", "images_per_class", "width", "height"):
        if out[key] < 1:
            raise ValueError("dataset spec: %s must be >= 1, got %d" % (key, out[key]))
    if not 1 <= out["quality"] <= 95:
        raise ValueError("dataset spec: quality must be 1..95 (Pillow JPEG), got %d" % out["quality"])
    return out


def spec_id(sp: Dict[str, Any]) -> str:
    """A short stable id of a spec (shown in the manifest and the report)."""
    text = json.dumps({k: sp.get(k) for k in SPEC_KEYS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def class_name(index: int) -> str:
    return "c%03d" % int(index)


def file_plan(sp: Dict[str, Any]) -> List[Tuple[str, int]]:
    """[(relative path, class index)] of every file of the spec, class by class."""
    out = []
    n = 0
    for c in range(sp["classes"]):
        for _ in range(sp["images_per_class"]):
            out.append(("train/%s/img%06d.jpg" % (class_name(c), n), c))
            n += 1
    return out


def shard(plan: List[Any], jobs: int, job: int) -> List[Any]:
    """Job ``job`` of ``jobs`` writes every jobs-th file (interleaved, so each job covers every class)."""
    if jobs < 1 or not 0 <= job < jobs:
        raise ValueError("shard: job %r of %r" % (job, jobs))
    return plan[job::jobs]


def file_list_text(entries: List[Tuple[str, int, int]]) -> str:
    """FILES.txt from [(relative path, bytes, class index)], in plan order."""
    return "".join("%s %d %d\n" % (p, b, c) for p, b, c in entries)


def parse_file_list(text: str, source: str = FILE_LIST) -> List[Tuple[str, int, int]]:
    """FILES.txt -> [(relative path, bytes, class index)]; a malformed line raises ValueError naming it."""
    out = []
    for n, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit() or parts[0].startswith("/") \
                or ".." in parts[0].split("/"):
            raise ValueError("%s line %d: expected '<relative path> <bytes> <class>', got %r" % (source, n, line[:120]))
        out.append((parts[0], int(parts[1]), int(parts[2])))
    return out


def make_manifest(sp: Dict[str, Any], entries: List[Tuple[str, int, int]], created: str, generator: str,
                  seconds: float) -> Dict[str, Any]:
    """The manifest of a finished dataset (``complete`` is true only here)."""
    total = sum(b for _, b, _ in entries)
    return {"format": FORMAT, "complete": True, "spec": {k: sp.get(k) for k in SPEC_KEYS}, "spec_id": spec_id(sp),
            "files": len(entries), "classes": len({c for _, _, c in entries}), "bytes": total,
            "mean_kb": round(total / 1000.0 / len(entries), 1) if entries else 0.0,
            "created": created, "generator": generator, "seconds": round(float(seconds), 1),
            "file_list": FILE_LIST}


def manifest_matches(manifest: Optional[Dict[str, Any]], sp: Dict[str, Any]) -> Tuple[bool, str]:
    """(reusable, why not). Decided from the manifest alone: format, complete, same spec, file count."""
    if manifest is None:
        return False, "no manifest (never generated, or interrupted before it finished)"
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return False, "manifest format %r is not %s" % (manifest.get("format") if isinstance(manifest, dict)
                                                         else type(manifest).__name__, FORMAT)
    if manifest.get("complete") is not True:
        return False, "manifest does not say complete"
    have = manifest.get("spec") or {}
    diff = [k for k in SPEC_KEYS if have.get(k) != sp.get(k)]
    if diff:
        return False, "made from another spec (%s)" % ", ".join("%s %r -> %r" % (k, have.get(k), sp.get(k))
                                                              for k in diff)
    expected = sp["classes"] * sp["images_per_class"]
    if manifest.get("files") != expected:
        return False, "manifest lists %r files, the spec makes %d" % (manifest.get("files"), expected)
    return True, ""
