#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: prove the MPI mesh from inside the first container (ssh on 2222 + mpirun hostname)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: ngc_mpi_verify
short_description: Prove the container MPI mesh - strict-host-key ssh to every node, then mpirun hostname
description:
  - Runs on the first DGX. From inside its MPI container (C(<engine> exec)), connects with ssh on the
    containers' port to every target (the first node included) with the pinned known_hosts and
    C(StrictHostKeyChecking yes) (the image's ssh_config), and expects each to answer with its hostname.
  - Then runs C(mpirun hostname) across all targets with the RA's MCA flags (C(plm_rsh_args "-p 2222"),
    C(btl_tcp_if_include) the data NIC) and expects every node's hostname exactly once.
  - A failed node is named with a reason - C(container down), C(sshd down), C(key rejected),
    C(host key mismatch), C(host key unknown), C(unreachable), C(name not resolved),
    C(wrong host answered), C(ssh failed) - classified by C(module_utils/containers/ngc_container.py).
  - The probes run in parallel threads (module_utils/common/run.py; AnsibleModule.run_command is not thread-safe).
version_added: "0.1.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.mpi_container
options:
  targets:
    description:
      - One entry per DGX - C(node) (inventory name), C(connect) (the name or address ssh and mpirun
        use), C(hostname) (what C(hostname) prints there), C(state) (its container state as read on that
        node; C(unknown) if it could not be read).
    type: list
    elements: dict
    required: true
  mpirun:
    description: Also run C(mpirun hostname) across all targets (skipped when an ssh probe failed).
    type: bool
    default: true
  mpirun_extra:
    description: Extra mpirun arguments.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds allowed per ssh probe and for mpirun.
    type: int
    default: 60
  fail:
    description: Fail when a node fails (false - report only).
    type: bool
    default: true
notes:
  - Supports check mode; it only reads (probes and mpirun change nothing), so it runs in check mode too.
"""

EXAMPLES = r"""
- name: Verify the MPI mesh from the first DGX
  ngc_mpi_verify:
    engine: docker
    container: dgxpod-mpi
    tcp_if: enp132s0
    targets:
      - {node: DGX1-1, connect: DGX1-1, hostname: DGX1-1, state: running}
      - {node: DGX1-2, connect: DGX1-2, hostname: DGX1-2, state: running}
"""

RETURN = r"""
ssh:
  description: One result per target - node, ok, reason, detail.
  returned: always
  type: list
  elements: dict
mpirun:
  description:
    - C(ok), C(rc), C(counts) (node -> times seen), C(missing), C(duplicate), C(unexpected),
      C(stderr_tail), C(argv).
  returned: when mpirun ran
  type: dict
failed_nodes:
  description: node -> reason, for every node that failed.
  returned: always
  type: dict
"""

from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import (mpi_container_argument_spec,
    mpirun_argv)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.ngc_container import (classify_mpirun,
    classify_ssh)


def _exec(argv, timeout):
    """(rc, stdout, stderr); rc None when it timed out or could not start."""
    r = run_tool(argv, timeout)
    if r.timed_out:
        return None, r.stdout, "ssh: connect: Connection timed out (no answer within %ds)" % timeout
    if r.error:
        return None, "", r.error
    return r.rc, r.stdout, r.stderr


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mpi_container_argument_spec(),
            targets=dict(type="list", elements="dict", required=True),
            mpirun=dict(type="bool", default=True),
            mpirun_extra=dict(type="list", elements="str", default=[]),
            timeout=dict(type="int", default=60),
            fail=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    exec_base = [module.get_bin_path(p["engine"], required=True)] + p["engine_args"] + ["exec", p["container"]]
    targets = p["targets"]
    for t in targets:
        for k in ("node", "connect", "hostname"):
            if not t.get(k):
                module.fail_json(msg="target %r lacks %s" % (t, k))

    rc, out, err = _exec(exec_base + ["true"], p["timeout"])
    if rc != 0:
        first = targets[0]["node"] if targets else "first node"
        failed = {first: "container down"}
        msg = ("cannot run commands in container %s on this node (%s): %s"
               % (p["container"], first, (err or out).strip()[-500:]))
        if p["fail"]:
            module.fail_json(msg=msg, ssh=[], failed_nodes=failed)
        module.exit_json(changed=False, msg=msg, ssh=[], failed_nodes=failed)

    def probe(t):
        argv = exec_base + ["ssh", "-p", str(p["port"]), "-o", "StrictHostKeyChecking=yes",
                            "-o", "BatchMode=yes", t["connect"], "hostname"]
        r, o, e = _exec(argv, p["timeout"])
        return classify_ssh(t["node"], str(t.get("state") or "unknown"), r, o, e, t["hostname"])

    with ThreadPoolExecutor(max_workers=min(16, max(1, len(targets)))) as pool:
        ssh = list(pool.map(probe, targets))
    failed = {r["node"]: r["reason"] for r in ssh if not r["ok"]}
    result = {"ssh": ssh, "failed_nodes": failed}

    if p["mpirun"] and not failed:
        argv = mpirun_argv([t["connect"] for t in targets], p["tcp_if"], p["port"], p["mpirun_extra"])
        r, o, e = _exec(exec_base + argv, p["timeout"] * 2)
        mres = classify_mpirun({t["node"]: t["hostname"] for t in targets}, r, o, e)
        mres["argv"] = argv
        result["mpirun"] = mres
        for n in mres["missing"]:
            failed[n] = "missing from mpirun output"
        for n in mres["duplicate"]:
            failed[n] = "appears %d times in mpirun output" % mres["counts"][n]
        if not mres["ok"] and not failed:
            failed[targets[0]["node"]] = "mpirun failed (rc=%s): %s" % (r, " | ".join(mres["stderr_tail"]))

    if failed and p["fail"]:
        module.fail_json(msg="MPI mesh: " + "; ".join("%s: %s" % (n, failed[n]) for n in sorted(failed)),
                         **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
