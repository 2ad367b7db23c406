#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: bring a DGX's NFS mounts and its managed /etc/fstab block to the planned state."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_nfs_mounts
short_description: Mount the planned NFS mounts, keep them in one managed /etc/fstab block
description:
  - Takes the whole mount plan of one host (from the C(pod_nfs_mount_plan) filter) and makes the host
    match it in one pass - one round trip per host instead of one per mount.
  - Owns the lines between C(# BEGIN dgxpod nfs_client) and C(# END dgxpod nfs_client) in I(fstab); every
    other line is left as it is. A mount in that block but no longer in the plan is unmounted and dropped.
    A planned mount whose source, type or options differ from its fstab line, or that is mounted from
    another source, is re-mounted; everything else is left alone (C(changed=false) on a converged host).
  - Before changing anything it checks that every storage address it is about to mount answers on the
    NFS port (TCP 2049) within I(probe_timeout) seconds; if one does not, it fails naming the host, the
    address and the mount points, and changes nothing. Each C(mount) and C(umount) is bounded by
    I(mount_timeout), so a hard NFS mount to a dead server cannot hang the run.
  - I(fstab) is rewritten atomically (temporary file + rename) once, at the end, and lists exactly the
    managed mounts that are mounted as planned - a mount that failed is not written, so a reboot does
    not hang on it; the re-run retries it.
version_added: "0.1.0"
options:
  mounts:
    description:
      - The planned mounts, each a dict with C(path), C(src), C(fstype), C(opts) and C(ip) (the storage
        address, probed before mounting). Extra keys are ignored.
    type: list
    elements: dict
    required: true
  fstab:
    description: The fstab file to manage.
    type: path
    default: /etc/fstab
  host:
    description: The inventory name of this host, used in messages.
    type: str
  probe_port:
    description: TCP port that must answer on every storage address before mounting (NFS is 2049).
    type: int
    default: 2049
  probe_timeout:
    description: Seconds to wait for each storage address to answer.
    type: float
    default: 5
  mount_timeout:
    description: Seconds one C(mount) or C(umount) may take before it is killed and reported.
    type: int
    default: 60
  dir_mode:
    description: Mode of mount-point directories this module creates.
    type: str
    default: "0755"
  mount_table:
    description:
      - A file where a userspace (FUSE) NFS client records, per mount, the line the kernel NFS client would
        show in C(/proc/mounts); it is read instead of the FUSE line to see what is mounted. Unset with the
        kernel client.
    type: path
notes:
  - Supports check mode and diff mode (the managed fstab block before and after).
  - Mount points are created if missing; they are not removed when a mount is dropped.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Mount the planned NFS mounts
  pod_nfs_mounts:
    mounts: "{{ (inventory_hostname | pod_nfs_mount_plan(hostvars, groups, pod, nfs_profile, 'kernel')).mounts }}"
    host: "{{ inventory_hostname }}"
"""

RETURN = r"""
actions:
  description: What was (or, in check mode, would be) done - one line per mount, e.g. C(mount /mnt/isilon1).
  returned: always
  type: list
  elements: str
mounted:
  description: Mount points mounted by this run.
  returned: always
  type: list
  elements: str
unmounted:
  description: Mount points unmounted by this run (removed from the plan or re-mounted).
  returned: always
  type: list
  elements: str
failed_mounts:
  description: Per mount that could not be mounted - path, ip, error.
  returned: always
  type: list
  elements: dict
"""

import os
import socket
import tempfile
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import FSTAB_BEGIN as BEGIN
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import FSTAB_END as END
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import fstab_line, mounted_now


def split_fstab(text):
    """(lines before the block, [(src, path, fstype, opts)] in the block, lines after)."""
    before, block, after, state = [], [], [], 0
    for line in text.splitlines():
        if state == 0 and line.startswith("# BEGIN dgxpod nfs_client"):
            state = 1
        elif state == 1 and line.startswith(END):
            state = 2
        elif state == 1:
            parts = line.split()
            if len(parts) >= 4 and not line.lstrip().startswith("#"):
                block.append((parts[0], parts[1], parts[2], parts[3]))
        elif state == 0:
            before.append(line)
        else:
            after.append(line)
    return before, block, after


def render_fstab(before, entries, after):
    lines = list(before)
    if entries:
        lines.append(BEGIN)
        lines += [fstab_line(e) for e in entries]
        lines.append(END)
    lines += after
    return "".join(line + "\n" for line in lines)


def decide(plan, block, mounted):
    """Pure: which planned mounts to (re)mount and which mount points to unmount.

    Returns (to_mount [plan entries], to_unmount [paths], keep [fstab tuples])."""
    fstab = {e[1]: e for e in block}
    to_mount, to_unmount, keep = [], [], []
    planned_paths = {p["path"] for p in plan}
    for p in plan:
        want = (p["src"], p["path"], p["fstype"], p["opts"])
        cur = mounted.get(p["path"])
        cur_src = cur and (cur.get("src_real") or cur["src"])
        cur_type = cur and (cur.get("fstype_real") or cur["fstype"])
        same_mount = cur is not None and cur_src == p["src"] and (
            cur_type == p["fstype"] or (p["fstype"] == "nfs" and cur_type in ("nfs", "nfs4")))
        if same_mount and fstab.get(p["path"]) == want:
            keep.append(want)
            continue
        if same_mount and p["path"] not in fstab:
            keep.append(want)  # mounted as planned by hand or before a lost fstab write: record it only
            continue
        if cur is not None:
            to_unmount.append(p["path"])
        to_mount.append(p)
    for path in fstab:
        if path not in planned_paths and path in mounted:
            to_unmount.append(path)
    return to_mount, to_unmount, keep


def probe(ip, port, timeout):
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or exc.__class__.__name__


def run_mount(cmd, timeout):
    """(rc, output) of mount or umount; a command still running after ``timeout`` is killed with its process group
    and not waited for long (a process stuck in the kernel on a dead NFS server may not die at once):
    module_utils/common/run.py. A tool that cannot be started: rc 127/126 and why."""
    res = run_tool(cmd, timeout, merge_stderr=True)
    if res.timed_out:
        return -1, "did not finish within %ss (killed)" % timeout
    return res.rc, (res.stdout + res.stderr).strip()


def write_atomic(path, text):
    st = os.stat(path) if os.path.exists(path) else None
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".fstab.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o7777 if st else 0o644)
        if st:
            os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mounts=dict(type="list", elements="dict", required=True),
            fstab=dict(type="path", default="/etc/fstab"),
            host=dict(type="str"),
            probe_port=dict(type="int", default=2049),
            probe_timeout=dict(type="float", default=5),
            mount_timeout=dict(type="int", default=60),
            dir_mode=dict(type="str", default="0755"),
            mount_table=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    me = p["host"] or socket.gethostname()
    plan = p["mounts"]
    for i, m in enumerate(plan):
        missing = [k for k in ("path", "src", "fstype", "opts", "ip") if not m.get(k)]
        if missing:
            module.fail_json(msg="%s: mounts[%d] lacks %s (build the list with the pod_nfs_mount_plan filter)" % (
                me, i, ", ".join(missing)))
        if not str(m["path"]).startswith("/"):
            module.fail_json(msg="%s: mount point '%s' is not an absolute path" % (me, m["path"]))
    paths = [m["path"] for m in plan]
    dups = sorted({x for x in paths if paths.count(x) > 1})
    if dups:
        module.fail_json(msg="%s: mount points planned twice: %s" % (me, ", ".join(dups)))

    fstab_text = read(p["fstab"])
    before, block, after = split_fstab(fstab_text)
    mounted = mounted_now(module.params["mount_table"])
    to_mount, to_unmount, keep = decide(plan, block, mounted)
    dropped = [e[1] for e in block if e[1] not in set(paths)]
    actions = ["umount %s" % x for x in to_unmount] + ["mount %s (%s)" % (m["path"], m["src"]) for m in to_mount]
    actions += ["drop %s from %s" % (x, p["fstab"]) for x in dropped if x not in to_unmount]
    want_entries = [(m["src"], m["path"], m["fstype"], m["opts"]) for m in plan]
    new_text_if_ok = render_fstab(before, want_entries, after)
    fstab_changes = new_text_if_ok != fstab_text
    if fstab_changes and not to_mount and not to_unmount:
        actions.append("record the managed mounts in %s" % p["fstab"])
    changed = bool(actions)
    diff = {"before": "".join(fstab_line(e) + "\n" for e in block),
            "after": "".join(fstab_line(e) + "\n" for e in want_entries),
            "before_header": p["fstab"] + " (managed block)", "after_header": p["fstab"] + " (managed block)"}
    result = dict(changed=changed, actions=actions, mounted=[], unmounted=[], failed_mounts=[], diff=diff)
    if module.check_mode or not changed:
        module.exit_json(**result)

    # 1. every storage address we are about to mount must answer - else change nothing
    ips = sorted({m["ip"] for m in to_mount})
    with ThreadPoolExecutor(max_workers=max(1, min(32, len(ips)))) as pool:
        futures = {ip: pool.submit(probe, ip, p["probe_port"], p["probe_timeout"]) for ip in ips}
        answers = {ip: f.result() for ip, f in futures.items()}
    dead = {ip: why for ip, why in answers.items() if why}
    if dead:
        lines = ["storage IP %s (%s): no answer on TCP %d within %ss: %s" % (
            ip, ", ".join(m["path"] for m in to_mount if m["ip"] == ip), p["probe_port"], p["probe_timeout"], why)
            for ip, why in sorted(dead.items())]
        module.fail_json(msg="%s: %s. Nothing was changed." % (me, "; ".join(lines)), dead_ips=sorted(dead),
                         **dict(result, changed=False))

    # 2. unmount what goes away or is re-mounted
    failures = []
    for path in to_unmount:
        rc, out = run_mount(["umount", path], p["mount_timeout"])
        if rc == 0:
            result["unmounted"].append(path)
        else:
            failures.append({"path": path, "ip": None, "error": "umount failed: %s" % out})
    # 3. mount
    mode = int(p["dir_mode"], 8)
    for m in to_mount:
        if m["path"] in [f["path"] for f in failures]:
            continue
        try:
            os.makedirs(m["path"], mode=mode, exist_ok=True)
        except OSError as exc:
            failures.append({"path": m["path"], "ip": m["ip"], "error": "cannot create mount point: %s" % exc})
            continue
        rc, out = run_mount(["mount", "-t", m["fstype"], "-o", m["opts"], m["src"], m["path"]],
                            p["mount_timeout"])
        if rc == 0:
            result["mounted"].append(m["path"])
        else:
            failures.append({"path": m["path"], "ip": m["ip"], "error": out or "mount exited %d" % rc})

    # 4. fstab lists exactly the managed mounts that are mounted as planned
    bad = {f["path"] for f in failures}
    entries = [e for e in want_entries if e[1] not in bad]
    text = render_fstab(before, entries, after)
    if text != fstab_text:
        write_atomic(p["fstab"], text)
    result["failed_mounts"] = failures
    if failures:
        module.fail_json(msg="%s: %d mount(s) failed: %s" % (me, len(failures), "; ".join(
            "%s from %s: %s" % (f["path"], f["ip"] or "-", f["error"]) for f in failures)), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
