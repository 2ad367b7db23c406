#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: prove a DGX's NFS mounts are the planned ones and that data moves through them."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_nfs_verify
short_description: Check the planned NFS mounts are mounted as planned and readable (read-only check)
description:
  - For every planned mount - from the C(pod_nfs_mount_plan) filter - checks that it is in
    C(/proc/mounts) from the planned storage address with the planned options.
  - Then moves data. Through the scripts mount (the first mount of kind C(scripts)) it writes a probe
    file of I(probe_size) random bytes, flushes it, reads it back and compares. Through every data
    mount that serves the same export it reads that file and compares - all mounts of one Isilon /
    PowerScale export see one namespace, so this proves each storage address serves the same data.
    Data mounts of another export are listed instead. The probe file is always removed.
  - Each file operation runs in its own process bounded by I(io_timeout), so a dead server makes its
    mount fail with a message naming host, mount point and storage IP instead of hanging the run.
  - Never changes the mounts; returns C(changed=false) (the probe file is temporary).
version_added: "0.1.0"
options:
  mounts:
    description: The planned mounts (dicts with C(path), C(ip), C(kind), C(export), C(opts), C(fstype)).
    type: list
    elements: dict
    required: true
  host:
    description: Inventory name of this host, used in messages and in the probe file's name.
    type: str
  io_timeout:
    description: Seconds one file operation (write, read, list) may take.
    type: int
    default: 20
  probe_size:
    description: Bytes written and read back through the mounts.
    type: int
    default: 1048576
  fail_on_problems:
    description: Fail when any mount has a problem (C(false) - just return them, for validate.yml).
    type: bool
    default: true
  mount_table:
    description:
      - A file where a userspace (FUSE) NFS client records, per mount, the line the kernel NFS client would
        show in C(/proc/mounts); that line is compared instead of the FUSE one (the simulator's stand-in
        writes one, docs/simulator.md). Unset with the kernel client.
    type: path
notes:
  - Supports check mode (only the C(/proc/mounts) comparison runs; no file is written).
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Verify the NFS mounts
  pod_nfs_verify:
    mounts: "{{ nfs_client_plan.mounts }}"
    host: "{{ inventory_hostname }}"
"""

RETURN = r"""
results:
  description: Per planned mount - path, ip, kind, ok, problem (null when ok), and what was done (io).
  returned: always
  type: list
  elements: dict
problems:
  description: One line per mount with a problem, naming host, mount point and storage IP.
  returned: always
  type: list
  elements: str
problem_details:
  description:
    - The problems of I(problems) as data, in the same order - C(text) (the line), C(reach) (true - the mount's
      I/O failed towards its storage address; false - the mount itself is not as planned), C(path), C(address)
      (the planned storage IP), and from the plan when it names them C(peer) (the storage node), C(peer_nic) (its
      NIC) and C(nic) (the DGX NIC the mount goes through). The storage stage's evaluator reads these
      (module_utils/storage/nfs_eval.py).
  returned: always
  type: list
  elements: dict
"""

import hashlib
import os
import socket
import uuid
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.bounded_run import call_bounded
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import check_mounts, mounted_now

# Each file operation runs in a forked child (common.bounded_run.call_bounded) so that a hung NFS call can be
# abandoned. A fork, not a new Python: 16 DGX verifying at once spent seconds starting interpreters (issue 19).

def _write(path, size):
    data = os.urandom(int(size))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return hashlib.sha256(data).hexdigest()


def _read(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _list(path):
    return len(os.listdir(path))


def _remove(path):
    os.unlink(path)
    try:
        os.rmdir(os.path.dirname(path))
    except OSError:
        pass


OPS = {"write": _write, "read": _read, "list": _list, "remove": _remove}


def io(op, args, timeout):
    """(ok, output) of one bounded file operation in a forked child; on failure the output is the error."""
    r = call_bounded(OPS[op], tuple(args), timeout)
    if r.timed_out:
        return False, "%s did not finish within %ss" % (op, timeout)
    return r.ok, r.out


def problem_detail(result, mount, text):
    """One problem as data: its line, ``reach`` (the mount's I/O failed towards the storage address) or not (the
    mount itself is not as planned), the mount point, the storage address, the storage node and NIC that own it
    and the DGX NIC the mount goes through (from the plan: storage_host, storage_nic, via_nic)."""
    out = {"text": text, "reach": bool(result.get("reach")), "path": result["path"], "address": result.get("ip")}
    for key, plan_key in (("peer", "storage_host"), ("peer_nic", "storage_nic"), ("nic", "via_nic")):
        if mount.get(plan_key):
            out[key] = mount[plan_key]
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mounts=dict(type="list", elements="dict", required=True),
            host=dict(type="str"),
            io_timeout=dict(type="int", default=20),
            probe_size=dict(type="int", default=1048576),
            fail_on_problems=dict(type="bool", default=True),
            mount_table=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    me = p["host"] or socket.gethostname()
    plan = p["mounts"]
    mounted = mounted_now(module.params["mount_table"])
    results = check_mounts(plan, mounted)
    by_path = {r["path"]: r for r in results}
    for r in results:
        r["io"] = None

    if not module.check_mode:
        scripts = next((m for m in plan if m.get("kind") == "scripts" and by_path[m["path"]]["ok"]), None)
        rel = os.path.join(".dgxpod-verify", "%s-%s" % (me, uuid.uuid4().hex[:8]))
        digest = None
        if scripts:
            probe = os.path.join(scripts["path"], rel)
            ok, out = io("write", [probe, p["probe_size"]], p["io_timeout"])
            if ok:
                ok2, out2 = io("read", [probe], p["io_timeout"])
                if ok2 and out2 == out:
                    digest = out
                    by_path[scripts["path"]]["io"] = "wrote, read back and compared %d bytes" % p["probe_size"]
                else:
                    by_path[scripts["path"]].update(ok=False, reach=True, problem="%s from %s: read-back %s" % (
                        scripts["path"], scripts["ip"], "differs from what was written" if ok2 else "failed: " + out2))
            else:
                by_path[scripts["path"]].update(ok=False, reach=True, problem="%s from %s: write failed: %s" % (
                    scripts["path"], scripts["ip"], out))

        def read_one(m):
            r = by_path[m["path"]]
            if digest and m.get("export") == scripts.get("export"):
                ok, out = io("read", [os.path.join(m["path"], rel)], p["io_timeout"])
                if ok and out == digest:
                    r["io"] = "read the probe file and compared"
                else:
                    r.update(ok=False, reach=True,
                             problem="%s from %s: reading the probe file written through %s %s" % (
                                 m["path"], m["ip"], scripts["path"], "gave other data" if ok else "failed: " + out))
            else:
                ok, out = io("list", [m["path"]], p["io_timeout"])
                if ok:
                    r["io"] = "listed %s entries" % out
                else:
                    r.update(ok=False, reach=True, problem="%s from %s: listing failed: %s" % (m["path"], m["ip"], out))

        data = [m for m in plan if m.get("kind") == "data" and by_path[m["path"]]["ok"]]
        try:
            # all data mounts at once: a dead server costs one io_timeout, not one per mount
            with ThreadPoolExecutor(max_workers=max(1, min(32, len(data)))) as pool:
                list(pool.map(read_one, data))
        finally:
            if scripts:
                io("remove", [os.path.join(scripts["path"], rel)], p["io_timeout"])

    planned = {m["path"]: m for m in plan}
    problem_details = [problem_detail(r, planned.get(r["path"]) or {}, "%s: %s" % (me, r["problem"]))
                       for r in results if not r["ok"]]
    problems = [d["text"] for d in problem_details]
    out = dict(changed=False, results=results, problems=problems, problem_details=problem_details)
    if problems and p["fail_on_problems"]:
        module.fail_json(msg="%d of %d NFS mount(s) not as planned: %s" % (len(problems), len(results),
                                                                         "; ".join(problems)), **out)
    module.exit_json(**out)


if __name__ == "__main__":
    main()
