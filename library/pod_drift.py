#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read back the files (and the MPI container) the deploy wrote, and say what drifted."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_drift
short_description: Compare the files the deploy wrote on a node (and its MPI container) with what it writes today
description:
  - Read-only. For every entry of I(files), reads the file on the node and compares it with the expected
    text that the play rendered from the deploying role's own templates and filters
    (C(roles/<role>/tasks/drift.yml)) - the whole file (I(content)) or the block between its
    C(blockinfile) markers (I(block) and I(marker)) - and, when I(mode) is given, its permission bits.
  - For every entry of I(containers), reads C(<engine> container inspect <name>) and compares the image
    the container runs and the bind mounts the role gives it (source, destination, read-only).
  - Returns one result per file and container - C(ok), C(missing) (no file, no managed block, no
    container), C(changed) (with a short unified diff, C(-) expected and C(+) found, and a one-line
    summary naming the file) or C(unreadable) (with the error). The decision of pass or fail is made by
    the report (C(module_utils/drift/eval.py)); this module never fails on drift.
  - Comparison functions are in C(module_utils/drift/compare.py) (pure, unit-tested).
version_added: "0.1.0"
options:
  files:
    description:
      - One entry per file - C(name) (short key, e.g. C(hosts), C(nccl_env)), C(path), either C(content)
        (the whole expected file) or C(block) with C(marker) (the blockinfile marker with C({mark}), and
        optionally C(marker_begin)/C(marker_end), default BEGIN/END), optionally C(mode) (octal string),
        and free keys passed through to the result (C(source), C(fix)).
    type: list
    elements: dict
    default: []
  containers:
    description:
      - One entry per container - C(name) (short key), C(container) (its name), C(cli) (the engine command
        with its global options, e.g. C([podman, --events-backend, file])), C(image), C(mounts)
        (C(host:container[:ro]) strings that must be there), and free keys passed through (C(source), C(fix)).
    type: list
    elements: dict
    default: []
  diff_lines:
    description: Diff lines kept per file.
    type: int
    default: 12
  timeout:
    description: Seconds allowed for one C(container inspect).
    type: int
    default: 30
notes:
  - Supports check mode; it only reads, so it runs the same in check mode.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Compare what the deploy wrote
  pod_drift:
    files:
      - name: nccl_env
        path: /etc/dgxpod/nccl.env
        content: "{{ lookup('ansible.builtin.template', 'nccl.env.j2') }}"
        mode: "0644"
      - name: hosts
        path: /etc/hosts
        marker: "# {mark} dgxpod toolkit: pod pod1 (managed; edit the inventory, not this block)"
        block: "10.0.0.1\tdgx1"
    containers:
      - name: container
        container: dgxpod-mpi
        cli: [docker]
        image: dgxpod/pytorch-mpi:24.05-py3
        mounts: ["/mnt:/mnt:rslave", "/etc/dgxpod/container-ssh:/etc/dgxpod/mpi:ro"]
  register: drift
"""

RETURN = r"""
files:
  description: One result per file, in the order given.
  returned: always
  type: list
  elements: dict
  sample:
    - name: hosts
      path: /etc/hosts
      status: changed
      summary: "/etc/hosts: the managed block differs: 1 line(s) expected but not found (first: '10.0.0.4\tdgx4')"
      diff: ["--- /etc/hosts (deploy)", "+++ /etc/hosts (node)", "@@ -4 +4 @@", "-10.0.0.4\tdgx4", "+10.0.0.9\tdgx4"]
      mode: "0644"
      expected_mode: "0644"
containers:
  description: One result per container (same keys; path is C(container <name>)).
  returned: always
  type: list
  elements: dict
summary:
  description: How many results have each status.
  returned: always
  type: dict
  sample: {ok: 7, missing: 1, changed: 1, unreadable: 0}
"""

import json  # noqa: E402
import os  # noqa: E402
import stat  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.drift.compare import (compare_container,  # noqa: E402
    compare_file, summarize)

PASS_THROUGH = ("source", "fix")


def read_file(path):
    """(text or None when absent, mode bits or None, error or None)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return data.decode("utf-8", errors="replace"), stat.S_IMODE(os.stat(path).st_mode), None
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, "%s: %s" % (type(exc).__name__, exc)


def check_files(files, limit):
    out = []
    for spec in files:
        text, mode, err = read_file(spec["path"])
        if err:
            res = {"name": spec.get("name") or spec["path"], "path": spec["path"], "status": "unreadable",
                   "summary": "%s could not be read: %s" % (spec["path"], err), "diff": []}
        else:
            res = compare_file(spec, text, mode, limit)
        res.update({k: spec[k] for k in PASS_THROUGH if k in spec})
        out.append(res)
    return out


def inspect_container(module, spec, timeout):
    """(inspect object or None when there is no such container, error or None)."""
    argv = [str(a) for a in spec.get("cli") or ["docker"]] + ["container", "inspect", spec["container"]]
    if module.get_bin_path(argv[0]) is None:
        return None, "%s is not installed" % argv[0]
    r = run_tool(argv, timeout)
    rc, out, err = r.rc, r.stdout, r.stderr
    if r.timed_out:
        return None, "%s timed out after %ss" % (" ".join(argv), timeout)
    if rc != 0:
        if "no such" in (err + out).lower():
            return None, None
        return None, "%s failed (rc %s): %s" % (" ".join(argv), rc, (err or out).strip()[:300])
    try:
        data = json.loads(out)
    except ValueError as exc:
        return None, "%s printed no JSON: %s" % (" ".join(argv), exc)
    return (data[0] if isinstance(data, list) and data else data or None), None


def check_containers(module, containers, limit, timeout):
    out = []
    for spec in containers:
        inspect, err = inspect_container(module, spec, timeout)
        if err:
            res = {"name": spec.get("name") or "container", "path": "container %s" % spec["container"],
                   "status": "unreadable", "summary": "container %s could not be inspected: %s"
                   % (spec["container"], err), "diff": []}
        else:
            res = compare_container(spec, inspect, limit)
        res.update({k: spec[k] for k in PASS_THROUGH if k in spec})
        out.append(res)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            files=dict(type="list", elements="dict", default=[]),
            containers=dict(type="list", elements="dict", default=[]),
            diff_lines=dict(type="int", default=12),
            timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        files = check_files(p["files"], p["diff_lines"])
        containers = check_containers(module, p["containers"], p["diff_lines"], p["timeout"])
    except (KeyError, ValueError) as exc:
        module.fail_json(msg="pod_drift: a file or container entry is incomplete: %s" % exc)
    module.exit_json(changed=False, files=files, containers=containers, summary=summarize(files + containers))


if __name__ == "__main__":
    main()
