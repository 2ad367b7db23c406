#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: one long-lived MPI container per node, recreated only when its image or options change."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: ngc_container_run
short_description: Run, restart or remove the node's long-lived MPI container (podman or docker CLI)
description:
  - Keeps exactly one container named I(name) running with the given image and run options, using the
    engine's command line (C(podman) or C(docker); the flags used are common to both).
  - The options, the image ID the tag points to and the content of the env file are hashed into the
    label C(org.dgxpod.run-config-sha256). An existing container whose image or hash differs is
    removed and created again; one that matches and runs is left alone (changed=false); one that
    matches but is stopped is started.
  - I(state=restarted) restarts the container (the 004 tip - leftover MPI processes hold GPU memory -
    makes this the one-command fix); I(state=absent) stops and removes it.
  - The C(ngc_container) role uses this module for podman (the simulator) and, when
    C(ngc_container_docker_module) is false, for docker too; otherwise docker goes through
    C(community.docker.docker_container).
version_added: "0.1.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.mpi_container.engine
options:
  name:
    description: Container name.
    type: str
    required: true
  state:
    description: C(started), C(restarted) or C(absent).
    type: str
    choices: [started, restarted, absent]
    default: started
  image:
    description: Image reference (tag); required unless I(state=absent).
    type: str
  network:
    description: Network mode (the RA uses the host network).
    type: str
    default: host
  uts:
    description:
      - UTS namespace mode; C(host) keeps the node's hostname inside the container (mpirun's
        C(hostname) then names the node).
    type: str
    default: host
  gpus:
    description: Value for C(--gpus) (C(all) on DGX); empty for no GPU request.
    type: str
    default: ""
  shm_size:
    description: C(--shm-size) value (004 - 1g).
    type: str
    default: ""
  ulimits:
    description: C(--ulimit name=value) pairs (004 - memlock=-1, stack=67108864).
    type: dict
    default: {}
  volumes:
    description: C(--volume) specifications.
    type: list
    elements: str
    default: []
  devices:
    description: Device paths passed with C(--device) (e.g. C(/dev/infiniband)).
    type: list
    elements: str
    default: []
  env_file:
    description: Env file (the NCCL/MPI environment written by the dgx_network role); its content is part of the hash.
    type: path
  env:
    description: Extra environment variables.
    type: dict
    default: {}
  restart_policy:
    description: Engine restart policy.
    type: str
    default: unless-stopped
  privileged:
    description: Run privileged (avoid; the RA's C(--privileged) is replaced by device passthrough).
    type: bool
    default: false
  init:
    description: Run an init process as PID 1 (C(--init)).
    type: bool
    default: false
  labels:
    description: Container labels.
    type: dict
    default: {}
  extra_args:
    description: Further C(run) arguments, taken as they are (part of the hash).
    type: list
    elements: str
    default: []
  command:
    description: Command to run instead of the image's CMD.
    type: list
    elements: str
    default: []
  command_timeout:
    description:
      - Seconds one engine command (C(inspect), C(run), C(rm), C(start), C(restart), C(logs)) may take; one
        still running then is killed with its process group and the module fails naming it.
    type: int
    default: 300
notes:
  - Supports check mode; it then reports what it would do (C(actions)) without running it.
"""

EXAMPLES = r"""
- name: Run the MPI container (simulator)
  ngc_container_run:
    name: dgxpod-mpi
    engine: podman
    image: localhost/dgxpod-sim-ngc:latest
    shm_size: 1g
    ulimits: {memlock: "-1", stack: "67108864"}
    volumes: ["/mnt:/mnt", "/etc/dgxpod/container-ssh:/etc/dgxpod/mpi:ro"]
    env_file: /etc/dgxpod/nccl.env

- name: Restart it (frees GPU memory held by leftover MPI processes)
  ngc_container_run:
    name: dgxpod-mpi
    state: restarted
"""

RETURN = r"""
actions:
  description:
    - What was done (or would be done in check mode), e.g. C(created), C(started),
      C(removed (image changed ...)).
  returned: always
  type: list
  elements: str
container_state:
  description: State of the container afterwards (C(running), C(absent), ...).
  returned: always
  type: str
config_hash:
  description: The run-configuration hash put in the container's label.
  returned: when state is not absent
  type: str
argv:
  description: The C(run) command line used (or that would be used).
  returned: when the container was (or would be) created
  type: list
  elements: str
"""

import hashlib
import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.ngc_container import (config_hash,
    container_state, recreate_reasons, run_argv, run_spec)


def _engine(module, argv):
    """(rc, stdout, stderr) of one engine command (common/run.py: bounded by command_timeout, LC_ALL=C); one
    that runs out of time fails the module."""
    limit = module.params["command_timeout"]
    r = run_tool(argv, limit)
    if r.timed_out:
        module.fail_json(msg="%s did not finish within %ds (killed)" % (" ".join(argv[:3]), limit), argv=argv)
    return r.rc, r.stdout, r.stderr


def _inspect(module, base, kind, ref):
    rc, out, _err = _engine(module, base + [kind, "inspect", ref])
    if rc != 0:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    return data[0] if isinstance(data, list) and data else None


def _run(module, argv):
    rc, out, err = _engine(module, argv)
    if rc != 0:
        module.fail_json(msg="%s failed (rc=%d): %s" % (" ".join(argv[:3]), rc, (err or out).strip()[-2000:]),
                         argv=argv)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True),
            engine=dict(type="str", choices=["podman", "docker"], default="podman"),
            engine_args=dict(type="list", elements="str", default=[]),
            state=dict(type="str", choices=["started", "restarted", "absent"], default="started"),
            image=dict(type="str"),
            network=dict(type="str", default="host"),
            uts=dict(type="str", default="host"),
            gpus=dict(type="str", default=""),
            shm_size=dict(type="str", default=""),
            ulimits=dict(type="dict", default={}),
            volumes=dict(type="list", elements="str", default=[]),
            devices=dict(type="list", elements="str", default=[]),
            env_file=dict(type="path"),
            env=dict(type="dict", default={}),
            restart_policy=dict(type="str", default="unless-stopped"),
            privileged=dict(type="bool", default=False),
            init=dict(type="bool", default=False),
            labels=dict(type="dict", default={}),
            extra_args=dict(type="list", elements="str", default=[]),
            command=dict(type="list", elements="str", default=[]),
            command_timeout=dict(type="int", default=300),
        ),
        required_if=[("state", "started", ["image"]), ("state", "restarted", ["image"])],
        supports_check_mode=True,
    )
    p = module.params
    base = [module.get_bin_path(p["engine"], required=True)] + p["engine_args"]
    name = p["name"]
    actions = []
    current = _inspect(module, base, "container", name)

    if p["state"] == "absent":
        if current:
            actions.append("removed")
            if not module.check_mode:
                _run(module, base + ["rm", "--force", name])
        module.exit_json(changed=bool(actions), actions=actions, container_state="absent")

    image = _inspect(module, base, "image", p["image"])
    if image is None:
        module.fail_json(msg="image %s is not on this node (distribute it first)" % p["image"])
    image_id = image.get("Id") or ""
    env_sha = ""
    if p["env_file"]:
        if not os.path.isfile(p["env_file"]):
            module.fail_json(msg="env file %s does not exist" % p["env_file"])
        with open(p["env_file"], "rb") as f:
            env_sha = hashlib.sha256(f.read()).hexdigest()
    spec = run_spec({"image": p["image"], "network": p["network"], "uts": p["uts"], "gpus": p["gpus"],
                     "shm_size": p["shm_size"], "ulimits": p["ulimits"], "volumes": p["volumes"],
                     "devices": p["devices"], "env_file": p["env_file"], "env": p["env"],
                     "restart": p["restart_policy"], "privileged": p["privileged"], "init": p["init"],
                     "labels": p["labels"], "extra_args": p["extra_args"], "command": p["command"]})
    chash = config_hash(spec, image_id, env_sha)
    argv = base + run_argv(p["engine"], name, spec, chash)[1:]
    reasons = recreate_reasons(current, image_id, chash)
    result = {"config_hash": chash}

    if current and reasons:
        actions.append("removed (%s)" % "; ".join(reasons))
        if not module.check_mode:
            _run(module, base + ["rm", "--force", name])
        current = None
    if current is None:
        actions.append("created")
        result["argv"] = argv
        if not module.check_mode:
            _run(module, argv)
    elif container_state(current) != "running":
        actions.append("started (was %s)" % container_state(current))
        if not module.check_mode:
            _run(module, base + ["start", name])
    elif p["state"] == "restarted":
        actions.append("restarted")
        if not module.check_mode:
            _run(module, base + ["restart", name])

    state = "running" if module.check_mode and actions else container_state(_inspect(module, base, "container", name))
    if not module.check_mode and state != "running":
        _rc, logs, lerr = _engine(module, base + ["logs", "--tail", "20", name])
        module.fail_json(msg="container %s is %s after %s; last log lines: %s"
                         % (name, state, ", ".join(actions) or "check", (logs + lerr).strip()[-1500:]),
                         actions=actions, container_state=state, **result)
    module.exit_json(changed=bool(actions), actions=actions, container_state=state, **result)


if __name__ == "__main__":
    main()
