#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: one DGX's part of the checkpoint stage - write its ranks' checkpoint shards to the shared storage,
read them back, the small-file metadata test, and the cleanup (issue 44 items 1 and 3)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_checkpoint
short_description: Checkpoint shards written and read back on the shared storage, and a small-file metadata test
description:
  - Runs on every DGX at once (the playbook hands them one I(start_at)); each rank of this DGX is a thread that
    works through its own data mount (I(dirs), 004's round robin - rank r uses data mount r mod N), in
    C(<dir>/dgxpod-checkpoint/<node>/), so the ranks of every DGX load the storage together as a training job's
    checkpoint does.
  - I(phase=write) - every rank writes its shard (I(shard_bytes), in I(block_bytes) writes of a block of random
    bytes seeded by the rank), C(fsync)s it and closes it; the rank's time runs from the common start to the end
    of its C(fsync).
  - I(phase=read) - every rank reads its shard back (a restart; the playbook drops the page cache first) and
    compares every block with what was written - a short or changed file is named with the offset.
  - I(phase=metadata) - every rank creates I(meta_files) files of 4 KiB in a directory of its own, C(stat)s them,
    opens and reads them, and removes them (mdtest's create/stat/read/remove phases); the rates per phase.
  - I(phase=cleanup) - removes this DGX's C(dgxpod-checkpoint/<node>) and C(dgxpod-metadata/<node>) under every
    I(dirs) (always run by the playbook, also after a failure).
  - Each phase runs in a child process bounded by I(timeout) (a hung mount cannot hold the module); ranks that did
    not finish are reported as such, never as a result. Returns raw timings; the verdicts are
    C(module_utils/storage/ckpt_eval.py)'s.
version_added: "0.2.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
options:
  dirs:
    description: The data mount each rank of this DGX works through, in rank order (one entry per rank).
    type: list
    elements: path
    required: true
  node:
    description: This DGX's name (the directory of its files under each mount).
    type: str
    required: true
  first_rank:
    description: The pod-wide index of this DGX's first rank (seeds the shards' content, names the files).
    type: int
    default: 0
  phase:
    description: What to do.
    type: str
    choices: [write, read, metadata, cleanup]
    required: true
  shard_bytes:
    description: Bytes each rank writes (its share of the checkpoint).
    type: int
    default: 1073741824
  block_bytes:
    description: Bytes per write and read call.
    type: int
    default: 4194304
  meta_files:
    description: Files each rank creates in the metadata phase.
    type: int
    default: 1000
  start_at:
    description: Epoch seconds at which every DGX starts the phase (waited for at most 600 s); 0 - at once.
    type: float
    default: 0
  timeout:
    description: Seconds the phase may take after its start; ranks not done by then are reported unfinished.
    type: int
    default: 1800
notes:
  - Supports check mode - nothing is written, read or removed; the plan is returned.
"""

EXAMPLES = r"""
- name: Write this DGX's checkpoint shards at the common start
  pod_checkpoint:
    dirs: [/mnt/isilon1, /mnt/isilon2, /mnt/isilon3, /mnt/isilon4]
    node: dgx1
    first_rank: 0
    phase: write
    shard_bytes: 4294967296
    start_at: 1764400000.0
"""

RETURN = r"""
ranks:
  description:
    - Per rank - rank, dir (the mount), path, bytes, seconds (from the common start to the end of the phase; write
      ends with the fsync), ok, error; read adds mismatch (the first differing offset) ; metadata gives seconds per
      step (create, stat, read, remove) and files.
  type: list
  elements: dict
  returned: always
start_slack:
  description: Seconds of the margin left when this DGX was ready to start (negative - late).
  type: float
  returned: when start_at was given
seconds:
  description: The phase's wall time on this DGX.
  type: float
  returned: always
"""

import json
import os
import random
import shutil
import threading
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.bounded_run import call_bounded

META_BYTES = 4096
TOP = {"ckpt": "dgxpod-checkpoint", "meta": "dgxpod-metadata"}


def shard_path(d, node, rank):
    return os.path.join(d, TOP["ckpt"], node, "rank%05d.bin" % rank)


def block_of(rank, size):
    """The block rank ``rank`` writes over and over: random bytes from a seed of the rank (reproducible)."""
    return random.Random(0xC4EC + rank).randbytes(size)


def write_rank(d, node, rank, shard, block, t0):
    path = shard_path(d, node, rank)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = block_of(rank, block)
    left = shard
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while left > 0:
            n = os.write(fd, data[:min(left, block)])
            left -= n
        os.fsync(fd)
    finally:
        os.close(fd)
    return {"path": path, "bytes": shard - left, "seconds": round(time.time() - t0, 4)}


def read_rank(d, node, rank, shard, block, t0):
    path = shard_path(d, node, rank)
    data = block_of(rank, block)
    got, mismatch = 0, None
    with open(path, "rb", buffering=0) as f:
        while True:
            chunk = f.read(block)
            if not chunk:
                break
            if mismatch is None and chunk != data[:len(chunk)]:
                mismatch = got + next(i for i, (a, b) in enumerate(zip(chunk, data, strict=False)) if a != b)
            got += len(chunk)
    if mismatch is None and got != shard:
        mismatch = min(got, shard)
    return {"path": path, "bytes": got, "seconds": round(time.time() - t0, 4), "mismatch": mismatch,
            "expected_bytes": shard}


def metadata_rank(d, node, rank, files, t0):
    top = os.path.join(d, TOP["meta"], node, "rank%05d" % rank)
    os.makedirs(top, exist_ok=True)
    names = [os.path.join(top, "f%06d" % i) for i in range(files)]
    payload = b"m" * META_BYTES
    steps = {}
    t = time.time()
    for n in names:
        fd = os.open(n, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, payload)
        os.close(fd)
    steps["create"], t = round(time.time() - t, 4), time.time()
    for n in names:
        os.stat(n)
    steps["stat"], t = round(time.time() - t, 4), time.time()
    for n in names:
        with open(n, "rb") as f:
            f.read()
    steps["read"], t = round(time.time() - t, 4), time.time()
    for n in names:
        os.unlink(n)
    os.rmdir(top)
    steps["remove"] = round(time.time() - t, 4)
    return {"path": top, "files": files, "steps": steps, "seconds": round(time.time() - t0, 4)}


def run_phase(phase, dirs, node, first_rank, shard, block, files, start_at):
    """One phase for every rank of this DGX, one thread a rank (run in a bounded child): JSON text."""
    wait = start_at - time.time() if start_at else 0.0
    slack = round(wait, 3) if start_at else None
    if wait > 0:
        time.sleep(min(wait, 600))
    t0 = time.time()
    out = [None] * len(dirs)

    def one(i, d):
        rank = first_rank + i
        rec = {"rank": rank, "dir": d, "ok": False, "error": ""}
        try:
            if phase == "write":
                rec.update(write_rank(d, node, rank, shard, block, t0))
            elif phase == "read":
                rec.update(read_rank(d, node, rank, shard, block, t0))
            else:
                rec.update(metadata_rank(d, node, rank, files, t0))
            rec["ok"] = True
        except OSError as exc:
            rec["error"] = "%s: %s" % (exc.filename or d, exc.strerror or exc)
            rec["seconds"] = round(time.time() - t0, 4)
        out[i] = rec

    threads = [threading.Thread(target=one, args=(i, d), daemon=True) for i, d in enumerate(dirs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return json.dumps({"ranks": out, "start_slack": slack, "seconds": round(time.time() - t0, 3)})


def cleanup(dirs, node):
    """Remove this DGX's directories of the stage under every mount (the shared top directories stay: other DGX
    may be writing there)."""
    for d in sorted(set(dirs)):
        for top in TOP.values():
            path = os.path.join(d, top, node)
            if os.path.isdir(path):
                shutil.rmtree(path)
            try:  # the last DGX to clean up removes the shared top directory too
                os.rmdir(os.path.join(d, top))
            except OSError:
                pass  # not empty (another DGX's files are still there), or gone already
    return ""


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dirs=dict(type="list", elements="path", required=True),
            node=dict(type="str", required=True),
            first_rank=dict(type="int", default=0),
            phase=dict(type="str", choices=["write", "read", "metadata", "cleanup"], required=True),
            shard_bytes=dict(type="int", default=1 << 30),
            block_bytes=dict(type="int", default=4 << 20),
            meta_files=dict(type="int", default=1000),
            start_at=dict(type="float", default=0.0),
            timeout=dict(type="int", default=1800),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not p["dirs"]:
        module.fail_json(msg="pod_checkpoint: no data mounts (dirs) for %s" % p["node"])
    if p["shard_bytes"] < 1 or p["block_bytes"] < 1 or p["meta_files"] < 1:
        module.fail_json(msg="pod_checkpoint: shard_bytes, block_bytes and meta_files must be at least 1")
    plan = [{"rank": p["first_rank"] + i, "dir": d, "path": shard_path(d, p["node"], p["first_rank"] + i)}
            for i, d in enumerate(p["dirs"])]
    if module.check_mode:
        module.exit_json(changed=False, ranks=plan, seconds=0.0, msg="check mode: nothing written")
    t0 = time.time()
    if p["phase"] == "cleanup":
        called = call_bounded(cleanup, (p["dirs"], p["node"]), timeout=min(p["timeout"], 600))
        if not called.ok:
            module.fail_json(msg="cleanup of %s's checkpoint files failed: %s" % (p["node"], called.out),
                             ranks=plan, seconds=round(time.time() - t0, 2))
        module.exit_json(changed=True, ranks=plan, seconds=round(time.time() - t0, 2))
    wait = max(0.0, p["start_at"] - time.time()) if p["start_at"] else 0.0
    called = call_bounded(run_phase, (p["phase"], p["dirs"], p["node"], p["first_rank"], p["shard_bytes"],
                                      p["block_bytes"], p["meta_files"], p["start_at"]),
                          timeout=p["timeout"] + min(wait, 600))
    if called.timed_out:
        ranks = [dict(r, ok=False, error="did not finish within %d s (storage stalled or too slow)" % p["timeout"],
                      seconds=None) for r in plan]
        module.exit_json(changed=p["phase"] == "write", ranks=ranks, timed_out=True,
                         seconds=round(time.time() - t0, 2))
    if not called.ok:
        module.fail_json(msg="pod_checkpoint %s on %s: %s" % (p["phase"], p["node"], called.out), ranks=plan)
    doc = json.loads(called.out)
    module.exit_json(changed=p["phase"] == "write", timed_out=False, **doc)


if __name__ == "__main__":
    main()
