#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: make several files, directories and links match in one call (issue 19: a role's file
deliveries in one SSH round trip instead of one task each)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_files
short_description: Deliver a role's files, directories and links in one call, changing only what differs
description:
  - One task instead of one C(template)/C(copy)/C(file) task per file. A no-op re-deploy spends most of its
    time on such tasks finding nothing to change (about 2.5 s each on a 4-DGX pod-in-a-box, docs/benchmarks.md);
    this module compares every entry in one round trip.
  - Entries are handled in order, so a directory listed before a file in it exists when the file is written.
  - A file is compared byte for byte with I(content) and replaced atomically (a temporary file in the same
    directory, then rename) only when it differs; owner, group and mode are set only when they differ.
  - A link is made or re-pointed when it does not point at I(src); a regular file or directory in its place is
    an error naming it (never removed).
  - A block (C(state=block)) is a marked part of a file the role shares with others, such as the pod's names in
    C(/etc/hosts). The lines between C(marker) with C({mark}) as C(BEGIN) and as C(END) are replaced by I(block),
    or the block is added at the end when the file has none (the file is created when missing); the rest of the
    file is kept. The result is byte for byte what C(ansible.builtin.blockinfile) (state present, insertafter EOF)
    writes, so a block it wrote is taken over unchanged. A symlink is followed, as blockinfile does.
  - Reports which paths changed and why (C(created), C(content), C(attributes), C(target)); with C(--diff) the
    before/after of every changed file (not of entries with I(diff=false), e.g. keys).
  - A failure stops at the entry that failed and names it; the entries before it stay as written (each is
    atomic on its own), so a re-run continues from there.
version_added: "0.5.0"
options:
  files:
    description:
      - The entries. Each is a dict with C(path) (absolute) and C(state) (C(file) - the default, C(directory),
        C(link) or C(block)); C(content) for a file (text, written as UTF-8); C(src) for a link; C(block) (text)
        and C(marker) (a line containing C({mark})) for a block; optional C(mode) (octal
        string such as C("0644"); a new file without one gets C(0644), a changed one keeps its own), C(owner),
        C(group); C(secret) (bool, default false) for a private key - its content is never shown, neither in
        C(--diff) nor in the module's echoed arguments (masked as Ansible masks C(no_log) values); C(diff)
        (bool, default true) to leave a file out of C(--diff) only; C(label) to name it in the output.
    type: list
    elements: dict
    required: true
notes:
  - Supports check mode (reports what would change, writes nothing) and diff mode.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: The NIC configuration and the NCCL environment in one call
  pod_files:
    files:
      - {path: /etc/dgxpod, state: directory, mode: "0755", owner: root, group: root}
      - path: /etc/dgxpod/nccl.env
        content: "{{ lookup('ansible.builtin.template', 'nccl.env.j2') }}"
        mode: "0644"
      - {path: /etc/systemd/system/multi-user.target.wants/x.service, state: link, src: /etc/systemd/system/x.service}
"""

RETURN = r"""
changed_paths:
  description: The paths created or changed (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
entries:
  description: One per entry, in order - path, state, changed, why (created, content, attributes, target; empty
    when unchanged).
  returned: always
  type: list
  elements: dict
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

STATES = ("file", "directory", "link", "block")


def check_entries(files):
    """The entries' own mistakes, named by index and path, before anything is touched."""
    problems = []
    seen = {}
    for i, e in enumerate(files):
        path = e.get("path")
        state = e.get("state", "file")
        where = "files[%d] (%s)" % (i, path or "no path")
        if not path or not os.path.isabs(str(path)):
            problems.append("%s: path must be absolute" % where)
            continue
        if state not in STATES:
            problems.append("%s: state %r is not one of %s" % (where, state, ", ".join(STATES)))
        if state == "file" and not isinstance(e.get("content"), str):
            problems.append("%s: a file needs content (text)" % where)
        if state == "link" and not e.get("src"):
            problems.append("%s: a link needs src" % where)
        if state == "block" and not (isinstance(e.get("block"), str) and isinstance(e.get("marker"), str)
                                     and "{mark}" in e["marker"] and "\n" not in e["marker"]):
            problems.append("%s: a block needs block (text) and marker (one line containing {mark})" % where)
        if e.get("mode") is not None and not _mode_ok(e["mode"]):
            problems.append("%s: mode %r is not an octal string such as '0644'" % (where, e["mode"]))
        norm = os.path.normpath(str(path))
        same = {k: e.get(k) for k in ("state", "mode", "owner", "group")}
        if norm in seen and not (state == "directory" and seen[norm] == same):
            problems.append("%s: listed twice" % where)  # the same directory twice is fine (two files in it)
        seen.setdefault(norm, same)
    return problems


def _mode_ok(mode):
    """An octal string: a YAML 0644 without quotes arrives as the int 420 and would mean something else."""
    return isinstance(mode, str) and len(mode) in (3, 4) and all(c in "01234567" for c in mode)


def set_block(original, marker, block):
    """``original`` (bytes, or None for a missing file) with the block between ``marker``'s BEGIN and END lines set to
    ``block`` (text) - as ansible.builtin.blockinfile writes it (state present, insertafter EOF, marker_begin BEGIN,
    marker_end END): an existing block (the last BEGIN and the last END line) is replaced where it is, else the block
    goes at the end after a line break; an empty ``block`` removes it. Bytes in, bytes out."""
    lines = (original or b"").splitlines(True)
    begin = marker.replace("{mark}", "BEGIN").encode("utf-8") + b"\n"
    end = marker.replace("{mark}", "END").encode("utf-8") + b"\n"
    body = block.encode("utf-8")
    if body and not body.endswith(b"\n"):
        body += b"\n"
    new = [begin] + body.splitlines(True) + [end] if body else []
    n0 = n1 = None
    for i, line in enumerate(lines):
        if line == begin:
            n0 = i
        if line == end:
            n1 = i
    if n0 is None or n1 is None:
        n0 = len(lines)
    elif n0 < n1:
        del lines[n0:n1 + 1]
    else:
        del lines[n1:n0 + 1]
        n0 = n1
    if n0 > 0 and not lines[n0 - 1].endswith(b"\n"):
        lines[n0 - 1] += b"\n"
    lines[n0:n0] = new
    return b"".join(lines)


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _attrs(module, entry, path, changed):
    args = {"path": path, "mode": entry.get("mode"), "owner": entry.get("owner"), "group": entry.get("group"),
            "secontext": None, "attributes": None}
    return module.set_fs_attributes_if_different(args, changed)


def _file(module, entry, path, why, diffs):
    if os.path.isdir(path):
        raise OSError("%s is a directory, not a file" % path)
    old = _read(path)
    if entry.get("state") == "block":
        new = set_block(old, entry["marker"], entry["block"])
    else:
        new = entry["content"].encode("utf-8")
    if old != new:
        why.append("created" if old is None else "content")
        if entry.get("diff", True) and not entry.get("secret") and module._diff:
            diffs.append({"before_header": path, "after_header": path,
                          "before": "" if old is None else old.decode("utf-8", "replace"),
                          "after": new.decode("utf-8", "replace")})
        if not module.check_mode:
            fd, tmp = tempfile.mkstemp(prefix=".pod_files.", dir=os.path.dirname(path) or "/")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(new)
                if old is not None:  # keep the old file's owner and mode unless the entry sets them
                    st = os.stat(path)
                    os.chown(tmp, st.st_uid, st.st_gid)
                    os.chmod(tmp, st.st_mode & 0o7777)
                else:
                    os.chmod(tmp, 0o644)
                os.rename(tmp, path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
    if module.check_mode and old is None:
        return  # nothing to compare attributes with
    if _attrs(module, entry, path, False) and old is not None:
        why.append("attributes")


def _directory(module, entry, path, why):
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OSError("%s exists and is not a directory" % path)
    if not os.path.isdir(path):
        why.append("created")
        if module.check_mode:
            return
        os.makedirs(path)
    if _attrs(module, entry, path, False) and why != ["created"]:
        why.append("attributes")


def _link(module, entry, path, why):
    src = str(entry["src"])
    if os.path.islink(path):
        if os.readlink(path) == src:
            return
        why.append("target")
    elif os.path.lexists(path):
        raise OSError("%s exists and is not a link (not removed)" % path)
    else:
        why.append("created")
    if module.check_mode:
        return
    tmp = os.path.join(os.path.dirname(path), ".pod_files.%d.%s" % (os.getpid(), os.path.basename(path)))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(src, tmp)
    os.rename(tmp, path)


def main():
    module = AnsibleModule(argument_spec=dict(files=dict(type="list", elements="dict", required=True)),
                           supports_check_mode=True)
    files = module.params["files"]
    for e in files:  # masked in everything returned, the echoed arguments (invocation) included
        if e.get("secret") and isinstance(e.get("content"), str) and e["content"].strip():
            module.no_log_values.add(e["content"])
    problems = check_entries(files)
    if problems:
        module.fail_json(msg="pod_files: " + "; ".join(problems), problems=problems)
    entries, changed_paths, diffs = [], [], []
    for i, e in enumerate(files):
        path = os.path.normpath(str(e["path"]))
        state = e.get("state", "file")
        if state == "block":
            path = os.path.realpath(path)  # the real file, as blockinfile
        why = []
        try:
            if state in ("file", "block"):
                _file(module, e, path, why, diffs)
            elif state == "directory":
                _directory(module, e, path, why)
            else:
                _link(module, e, path, why)
        except (OSError, KeyError, ValueError) as exc:
            module.fail_json(msg="pod_files: files[%d] %s (%s): %s" % (i, e.get("label") or path, state, exc),
                             entries=entries, changed_paths=changed_paths, changed=bool(changed_paths))
        entries.append({"path": path, "state": state, "changed": bool(why), "why": why, "label": e.get("label")})
        if why:
            changed_paths.append(path)
    result = {"changed": bool(changed_paths), "changed_paths": changed_paths, "entries": entries}
    if module._diff and diffs:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
