# -*- coding: utf-8 -*-
"""Drift of what the deploy wrote on a node, decided by pure functions (stdlib only).

``validate.yml --tags drift`` renders what each role would write today (the roles' own templates and
filters, in ``roles/<role>/tasks/drift.yml``), and ``library/pod_drift.py`` reads the files on the node and
compares them here:

- a whole file (``content``): the file must be exactly that text,
- a managed block (``block`` with ``marker``, as ``blockinfile`` writes it): the lines between
  ``marker`` with ``{mark}`` = BEGIN and = END must be exactly the block; the rest of the file is the
  owner's,
- optionally the file's permission bits (``mode``, an octal string such as ``"0644"``).

A missing file, a missing block, a changed line or a changed mode is drift; each result carries a short
unified diff (``-`` expected, ``+`` found) and a one-line summary naming the file.

The MPI container is compared the same way from ``<engine> container inspect``: the image it runs and the
bind mounts the role gives it (source, destination, read-only).
"""
from __future__ import annotations

import difflib
from typing import Any, Dict, Iterable, List, Optional, Sequence

DIFF_LINES = 12  # diff lines kept per file (the report shows the first ones; the count says how many more)
STATUSES = ("ok", "missing", "changed", "unreadable")


def _lines(text: str) -> List[str]:
    return text.splitlines()


def extract_block(text: str, marker: str, begin: str = "BEGIN", end: str = "END") -> Optional[List[str]]:
    """The lines between ``marker`` (with ``{mark}`` replaced by ``begin``) and the ``end`` marker line, as
    ansible.builtin.blockinfile writes them; None when the begin or end marker is not in the text."""
    start_line, end_line = marker.replace("{mark}", begin), marker.replace("{mark}", end)
    lines = _lines(text)
    try:
        first = [ln.rstrip() for ln in lines].index(start_line.rstrip())
    except ValueError:
        return None
    for i in range(first + 1, len(lines)):
        if lines[i].rstrip() == end_line.rstrip():
            return lines[first + 1:i]
    return None


def short_diff(expected: Sequence[str], found: Sequence[str], path: str, limit: int = DIFF_LINES) -> List[str]:
    """A unified diff (no context lines) from the expected lines to the found ones, at most ``limit`` lines
    after the headers, with a last line saying how many were left out."""
    diff = list(difflib.unified_diff(list(expected), list(found), fromfile="%s (deploy)" % path,
                                     tofile="%s (node)" % path, lineterm="", n=0))
    if len(diff) <= limit + 2:
        return diff
    return diff[:limit + 2] + ["... %d more diff lines" % (len(diff) - limit - 2)]


def _changes(expected: Sequence[str], found: Sequence[str]) -> Dict[str, List[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(list(expected), list(found), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:])
    return {"removed": removed, "added": added}


def _summary(path: str, what: str, ch: Dict[str, List[str]]) -> str:
    parts = []
    if ch["removed"]:
        parts.append("%d line(s) expected but not found (first: %r)" % (len(ch["removed"]), ch["removed"][0]))
    if ch["added"]:
        parts.append("%d line(s) not from the deploy (first: %r)" % (len(ch["added"]), ch["added"][0]))
    return "%s: %s differs: %s" % (path, what, "; ".join(parts) or "whitespace or line endings")


def _mode_str(mode: Any) -> Optional[str]:
    if mode in (None, ""):
        return None
    value = int(mode, 8) if isinstance(mode, str) else int(mode)
    return "%04o" % (value & 0o7777)


def compare_file(spec: Dict[str, Any], text: Optional[str], mode: Any = None,
                 limit: int = DIFF_LINES) -> Dict[str, Any]:
    """Compare one file as found on the node with what the deploy writes.

    ``spec``: {name, path, content | block + marker, mode (optional octal string)}; ``text``: the file's
    content, None when it does not exist; ``mode``: its permission bits (int or octal string), if known.
    Returns {name, path, status (ok | missing | changed), summary, diff [lines], expected_mode, mode}."""
    name, path = spec.get("name") or spec["path"], spec["path"]
    out: Dict[str, Any] = {"name": name, "path": path, "status": "ok", "summary": "%s as deployed" % path,
                           "diff": []}
    if "content" not in spec and "block" not in spec:
        raise ValueError("%s (%s): give the expected 'content' or a 'block' with its 'marker'" % (name, path))
    if "block" in spec and not spec.get("marker"):
        raise ValueError("%s (%s): a 'block' needs the 'marker' it is written between" % (name, path))
    if text is None:
        out.update(status="missing", summary="%s is missing (the deploy writes it)" % path)
        return out
    if "block" in spec:
        expected = _lines(spec["block"] or "")
        found = extract_block(text, spec["marker"], spec.get("marker_begin") or "BEGIN",
                              spec.get("marker_end") or "END")
        if found is None:
            out.update(status="missing", summary="%s: the managed block (%s) is missing"
                       % (path, spec["marker"].replace("{mark}", spec.get("marker_begin") or "BEGIN")),
                       diff=short_diff(expected, [], path, limit))
            return out
        what = "the managed block"
    else:
        expected, found = _lines(spec["content"] or ""), _lines(text)
        what = "the file"
        if expected == found and (spec["content"] or "") != text:
            # same lines, different ending (a newline added or lost): still not what the deploy wrote
            out.update(status="changed", summary="%s: the file differs only in its line endings" % path)
            return out
    if expected != found:
        out.update(status="changed", summary=_summary(path, what, _changes(expected, found)),
                   diff=short_diff(expected, found, path, limit))
    want_mode, have_mode = _mode_str(spec.get("mode")), _mode_str(mode)
    out["expected_mode"], out["mode"] = want_mode, have_mode
    if want_mode and have_mode and want_mode != have_mode:
        mode_msg = "%s: mode %s, the deploy sets %s" % (path, have_mode, want_mode)
        if out["status"] == "ok":
            out.update(status="changed", summary=mode_msg)
        else:
            out["summary"] += "; " + mode_msg
    return out


# ---------------------------------------------------------------------------------------------------
# the MPI container


def normalize_image(ref: str) -> str:
    """An image reference without the default registry prefixes podman and docker add
    (``localhost/``, ``docker.io/library/``, ``docker.io/``) and with ``:latest`` when no tag is given."""
    ref = (ref or "").strip()
    for prefix in ("localhost/", "docker.io/library/", "docker.io/", "index.docker.io/library/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix):]
            break
    last = ref.rsplit("/", 1)[-1]
    if ref and "@" not in ref and ":" not in last:
        ref += ":latest"
    return ref


def parse_volume(volume: str) -> Dict[str, Any]:
    """``host:container[:options]`` -> {source, destination, read_only}."""
    parts = str(volume).split(":")
    if len(parts) < 2:
        raise ValueError("volume %r is not host:container[:options]" % volume)
    opts = parts[2].split(",") if len(parts) > 2 else []
    return {"source": parts[0], "destination": parts[1], "read_only": "ro" in opts}


def inspect_mounts(inspect: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The bind mounts of a container (docker and podman ``container inspect``: Mounts[].Source,
    .Destination, .RW)."""
    out = []
    for m in inspect.get("Mounts") or []:
        out.append({"source": m.get("Source") or "", "destination": m.get("Destination") or "",
                    "read_only": not m.get("RW", True)})
    return out


def _mount_text(m: Dict[str, Any]) -> str:
    return "%s:%s%s" % (m["source"], m["destination"], ":ro" if m["read_only"] else "")


def compare_container(spec: Dict[str, Any], inspect: Optional[Dict[str, Any]],
                      limit: int = DIFF_LINES) -> Dict[str, Any]:
    """Compare a container (one ``container inspect`` object, None when there is none) with what the role
    runs: ``spec`` = {name, container, image, mounts: ["host:ctr[:ro]", ...]}. Every expected mount must be
    there with the same source and read-only flag (other mounts, e.g. the engine's own, are not drift).
    Returns the same shape as :func:`compare_file`, with ``path`` = ``container <name>``."""
    where = "container %s" % spec["container"]
    out: Dict[str, Any] = {"name": spec.get("name") or "container", "path": where, "status": "ok",
                           "summary": "%s runs %s with the deployed mounts" % (where, spec["image"]), "diff": []}
    if not inspect:
        out.update(status="missing", summary="%s does not exist (the deploy runs it)" % where)
        return out
    problems, expected, found = [], [], []
    image = (inspect.get("Config") or {}).get("Image") or inspect.get("ImageName") or ""
    if normalize_image(image) != normalize_image(spec["image"]):
        problems.append("runs image %s, the deploy runs %s" % (image or "(none)", spec["image"]))
        expected.append("image " + spec["image"])
        found.append("image " + (image or "(none)"))
    have = {m["destination"]: m for m in inspect_mounts(inspect)}
    for v in spec.get("mounts") or []:
        want = parse_volume(v)
        got = have.get(want["destination"])
        if got is None:
            problems.append("no mount on %s (expected %s)" % (want["destination"], _mount_text(want)))
        elif got["source"] != want["source"] or got["read_only"] != want["read_only"]:
            problems.append("mount on %s is %s, the deploy mounts %s"
                            % (want["destination"], _mount_text(got), _mount_text(want)))
        else:
            continue
        expected.append("mount " + _mount_text(want))
        found.append("mount " + (_mount_text(got) if got else "(none)"))
    if problems:
        out.update(status="changed", summary="%s: %s" % (where, "; ".join(problems)),
                   diff=short_diff(expected, found, where, limit))
    return out


def summarize(results: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    """{status: count} over compare results."""
    out = {s: 0 for s in STATUSES}
    for r in results:
        out[r["status"]] = out.get(r["status"], 0) + 1
    return out
