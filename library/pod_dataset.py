#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: the training stage's ImageNet-like dataset on the shared storage, made once and reused."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_dataset
short_description: Make (once) or reuse the training stage's ImageNet-like JPEG dataset on the shared storage
description:
  - Runs on one DGX. The dataset root is one directory on the shared storage, given as seen through each
    data mount (I(roots)); the same files are visible through every mount.
  - Reuse is decided from the manifest alone (C(MANIFEST.json) - format, complete, the same I(spec), the
    file count); the files are never re-read to find out (C(module_utils/training/dataset.py)).
  - Otherwise the JPEG files (class folders C(train/c000/...), Pillow) are written into C(<root>.partial) by
    C(dgxpod_dataset.py) - inside the MPI container when I(container) is set (the NGC image has Pillow),
    in I(jobs) processes, job j writing through I(roots)[j mod N] - then C(FILES.txt) and C(MANIFEST.json)
    are written and the directory is renamed to the root. A dataset made from another spec is replaced.
  - Generation is bounded by I(timeout) (C(timeout) inside the container too, so nothing keeps writing);
    on a timeout, an error or a signal (SIGTERM, SIGINT, SIGHUP) the partial directory is removed, and a
    partial directory left by an earlier run is removed before a new one is made.
  - I(state=absent) removes the dataset and any partial directory.
  - With I(source) the dataset is the user's own (C(pod_training_dataset_path)), read-only - nothing is generated
    and nothing under I(source) is written or removed. It is listed (names and sizes, a C(stat) a file, never the
    content; C(module_utils/training/user_dataset.py)) as an ImageFolder tree or WebDataset tar shards, and its
    file list is written to I(file_list), in the toolkit's own directory on the shared storage.
version_added: "0.1.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.mpi_container.engine
options:
  roots:
    description:
      - The dataset root through each data mount (C(/mnt/isilon1/dgxpod-dataset), ...). The first is where the
        manifest is read and the tree renamed.
    type: list
    elements: path
    required: true
  spec:
    description:
      - C(classes), C(images_per_class), C(width), C(height), C(quality) (JPEG, 1-95), C(target_kb) (mean file
        size aimed at; null - no calibration), C(seed).
    type: dict
    default: {}
  state:
    description: C(present) - reuse or make; C(absent) - remove.
    type: str
    choices: [present, absent]
    default: present
  script:
    description: Path of C(dgxpod_dataset.py) where it runs (in the container when I(container) is set).
    type: str
    default: /opt/dgxpod-train/dgxpod_dataset.py
  python:
    description: Python interpreter that runs I(script) (it needs Pillow).
    type: str
    default: python3
  container:
    description: Run the generator in this container (the MPI container, which mounts /mnt); empty - on the host.
    type: str
    default: ""
  jobs:
    description: Generator processes.
    type: int
    default: 4
  timeout:
    description: Seconds generation (or listing I(source)) may take in all; also bounds reading the manifest and
      removing.
    type: int
    default: 900
  source:
    description:
      - A user's dataset directory as seen through the first data mount; empty - the generated dataset.
    type: path
    default: ""
  source_format:
    description: The layout of I(source) - C(imagefolder), C(shards) (WebDataset tar files) or C(auto).
    type: str
    choices: [auto, imagefolder, shards]
    default: auto
  file_list:
    description:
      - With I(source), where the file list is written (C(<path> <bytes> <class>) per line, paths relative to
        I(source)); required with I(source). Never under I(source).
    type: path
    default: ""
notes:
  - Supports check mode - reads the manifest and says whether the dataset would be made, writes nothing.
"""

EXAMPLES = r"""
- name: The training dataset, made once on the shared storage
  pod_dataset:
    roots: [/mnt/isilon1/dgxpod-dataset, /mnt/isilon2/dgxpod-dataset]
    spec: {classes: 100, images_per_class: 1000, width: 500, height: 375, quality: 90, target_kb: 110, seed: 1}
    container: dgxpod-mpi
    engine: docker

- name: A user's own ImageFolder dataset, listed (read-only)
  pod_dataset:
    roots: [/mnt/isilon1/dgxpod-dataset]
    source: /mnt/isilon1/datasets/imagenet/train
    file_list: /mnt/isilon1/dgxpod-dataset-lists/user-datasets_imagenet_train.FILES.txt
"""

RETURN = r"""
reused:
  description: The dataset was complete (manifest) and made from this spec.
  type: bool
  returned: always
generated:
  description: Files were written by this run.
  type: bool
  returned: always
reason:
  description: Why the dataset was (or would be) made - what the manifest said.
  type: str
  returned: always
manifest:
  description:
    - The dataset's manifest (files, classes, bytes, mean_kb, spec, spec_id, created, seconds); for a user dataset
      (I(source)) format, user, root, file_list, files, classes, bytes, mean_kb, skipped (files of other kinds by
      extension), empty (some files of 0 bytes).
  type: dict
  returned: when present
seconds:
  description: Time this module took.
  type: float
  returned: always
"""

import json
import os
import shutil
import signal
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.bounded_run import call_bounded
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool

from ansible_collections.dgxpod.toolkit.plugins.module_utils.training.dataset import (FILE_LIST, MANIFEST,
    file_list_text, file_plan, make_manifest, manifest_matches, parse_file_list, spec)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.training.user_dataset import (UserDatasetError,
    list_dataset, summary)


class Interrupted(Exception):
    pass


def _on_signal(signum, frame):
    raise Interrupted("interrupted by signal %d" % signum)


def read_manifest(root, timeout):
    """(manifest or None, problem or None) - bounded even on a hung mount."""
    r = run_tool(["cat", os.path.join(root, MANIFEST)], timeout)
    if r.timed_out:
        return None, "%s did not answer within %ds (storage down or mount hung?)" % (root, timeout)
    if r.rc != 0:
        return None, None  # no manifest
    try:
        return json.loads(r.stdout), None
    except ValueError:
        return {"format": "unreadable"}, None


def remove(path, timeout):
    if not os.path.lexists(path):
        return None
    r = run_tool(["rm", "-rf", "--", path], timeout)
    if r.timed_out:
        return "removing %s did not finish within %ds" % (path, timeout)
    if r.rc != 0:
        return "removing %s failed: %s" % (path, r.stderr.strip())
    return None


def generate(module, sp, roots, deadline):
    p = module.params
    partials = [r.rstrip("/") + ".partial" for r in roots]
    plan = file_plan(sp)
    os.makedirs(partials[0])
    plan_path = os.path.join(partials[0], "PLAN.txt")
    with open(plan_path, "w") as f:
        f.write("".join("%s %d\n" % (rel, c) for rel, c in plan))
    left = int(deadline - time.time())
    if left < 5:
        raise RuntimeError("no time left to generate the dataset (timeout %ds)" % p["timeout"])
    cmd = ["timeout", "--kill-after=5", str(left), p["python"], p["script"], "--plan", plan_path,
           "--roots", ",".join(partials), "--classes", str(sp["classes"]), "--width", str(sp["width"]),
           "--height", str(sp["height"]), "--quality", str(sp["quality"]), "--seed", str(sp["seed"]),
           "--jobs", str(p["jobs"])]
    if sp.get("target_kb"):
        cmd += ["--target-kb", str(sp["target_kb"])]
    if p["container"]:
        cmd = [p["engine"]] + list(p["engine_args"]) + ["exec", p["container"]] + cmd
    t0 = time.time()
    r = run_tool(cmd, left + 15)
    rc, out, err = r.rc, r.stdout, r.stderr
    if r.timed_out or rc in (124, 137):
        raise RuntimeError("generating %d files did not finish within %ds (raise pod_training_dataset_timeout or "
                           "make fewer files)" % (len(plan), left))
    if rc != 0:
        raise RuntimeError("dgxpod_dataset.py failed (rc=%s): %s" % (rc, (err or out).strip()[-600:]))
    entries = parse_file_list(out, "dgxpod_dataset.py output")
    by_path = {e[0]: e for e in entries}
    missing = [rel for rel, _ in plan if rel not in by_path]
    if missing:
        raise RuntimeError("dgxpod_dataset.py did not write %d file(s), e.g. %s" % (len(missing), missing[0]))
    entries = [by_path[rel] for rel, _ in plan]
    with open(os.path.join(partials[0], FILE_LIST), "w") as f:
        f.write(file_list_text(entries))
    os.unlink(plan_path)
    manifest = make_manifest(sp, entries, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "dgxpod_dataset.py (Pillow JPEG)", time.time() - t0)
    with open(os.path.join(partials[0], MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.rename(partials[0], roots[0].rstrip("/"))
    return manifest


def list_user_dataset(source, fmt, file_list, write=True):
    """List the user's dataset and (``write``) put its file list at ``file_list`` (a temporary name, then renamed):
    the summary as JSON text (run in a bounded child by :func:`user_dataset`)."""
    t0 = time.time()
    listing = list_dataset(source, fmt)
    if write:
        os.makedirs(os.path.dirname(file_list), exist_ok=True)
        tmp = file_list + ".partial"
        with open(tmp, "w") as f:
            f.write(file_list_text(listing["entries"]))
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, file_list)
    return json.dumps(summary(listing, source, file_list, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              time.time() - t0))


def user_dataset(module, t0):
    """The user-dataset path of the module (I(source)): list, write the file list, never touch I(source)."""
    p = module.params
    source, file_list = p["source"].rstrip("/"), p["file_list"]
    if not file_list:
        module.fail_json(msg="pod_dataset: file_list is required with source")
    real_src, real_list = os.path.realpath(source), os.path.realpath(file_list)
    if real_list == real_src or real_list.startswith(real_src + os.sep):
        module.fail_json(msg="pod_dataset: file_list %s is inside the user's dataset %s, which is never written"
                         % (file_list, source))
    called = call_bounded(list_user_dataset, (source, p["source_format"], file_list, not module.check_mode),
                          timeout=p["timeout"])
    if called.timed_out:
        module.fail_json(msg="listing the dataset %s did not finish within %ds (storage down, a hung mount, or more "
                         "files than the timeout allows: raise pod_training_dataset_timeout)" % (source, p["timeout"]),
                         reused=False, generated=False, reason="")
    if not called.ok:
        why = called.out.split(": ", 1)[1] if called.out.startswith(UserDatasetError.__name__ + ": ") else called.out
        module.fail_json(msg="the dataset %s cannot be used: %s" % (source, why), reused=False, generated=False,
                         reason="")
    manifest = json.loads(called.out)
    module.exit_json(changed=False, reused=False, generated=False, manifest=manifest,
                     reason="the user's dataset (%s, %d files), listed" % (manifest["format"], manifest["files"]),
                     seconds=round(time.time() - t0, 2))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            roots=dict(type="list", elements="path", required=True),
            spec=dict(type="dict", default={}),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            script=dict(type="str", default="/opt/dgxpod-train/dgxpod_dataset.py"),
            python=dict(type="str", default="python3"),
            engine=dict(type="str", choices=["podman", "docker"], default="podman"),
            engine_args=dict(type="list", elements="str", default=[]),
            container=dict(type="str", default=""),
            jobs=dict(type="int", default=4),
            timeout=dict(type="int", default=900),
            source=dict(type="path", default=""),
            source_format=dict(type="str", choices=["auto", "imagefolder", "shards"], default="auto"),
            file_list=dict(type="path", default=""),
        ),
        supports_check_mode=True,
    )
    p = module.params
    t0 = time.time()
    if p["source"]:
        user_dataset(module, t0)
    roots = [r.rstrip("/") for r in p["roots"]]
    if not roots:
        module.fail_json(msg="pod_dataset: no roots")
    root = roots[0]
    partial = root + ".partial"
    io_timeout = max(10, min(120, p["timeout"] // 4))
    result = dict(changed=False, reused=False, generated=False, reason="")
    if p["state"] == "absent":
        exists = os.path.lexists(root) or os.path.lexists(partial)
        if exists and not module.check_mode:
            for path in (root, partial):
                problem = remove(path, io_timeout)
                if problem:
                    module.fail_json(msg=problem, **result)
        result["changed"] = exists
        module.exit_json(seconds=round(time.time() - t0, 2), **result)
    try:
        sp = spec(p["spec"])
    except ValueError as exc:
        module.fail_json(msg=str(exc), **result)
    manifest, problem = read_manifest(root, io_timeout)
    if problem:
        module.fail_json(msg=problem, **result)
    ok, why = manifest_matches(manifest, sp)
    if ok:
        module.exit_json(reused=True, generated=False, reason="complete (manifest)", manifest=manifest,
                         seconds=round(time.time() - t0, 2), changed=False)
    result["reason"] = why
    if module.check_mode:
        module.exit_json(changed=True, reused=False, generated=False, reason=why, seconds=round(time.time() - t0, 2))
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    for s in old:
        signal.signal(s, _on_signal)
    deadline = t0 + p["timeout"]
    made = None
    error = None
    try:
        for path in (partial, root):  # an earlier run's leftovers, a dataset of another spec
            gone = remove(path, io_timeout)
            if gone:
                raise RuntimeError(gone)
        made = generate(module, sp, roots, deadline)
    except (Interrupted, RuntimeError, OSError, ValueError) as exc:
        error = str(exc)
    finally:
        if made is None:
            shutil.rmtree(partial, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
    if error:
        left = " (partial files removed)" if not os.path.lexists(partial) else " (%s could not be removed)" % partial
        module.fail_json(msg="dataset not made: %s%s" % (error, left), **result)
    module.exit_json(changed=True, reused=False, generated=True, reason=why, manifest=made,
                     seconds=round(time.time() - t0, 2))


if __name__ == "__main__":
    main()
