#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read Slurm's node states, drain DGX nodes with a reason, resume them (issue 20)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_slurm
short_description: Read Slurm node states; drain and resume DGX nodes with the failed check as the reason
description:
  - C(action=state) runs C(scontrol show node -o) and returns every node's state, drain flag, whether it
    responds and its reason (parsed by C(module_utils/slurm/parse.py)), and the unhealthy ones (down,
    drained, draining, failing, invalid, not responding). Read-only; it runs in check mode too.
  - C(action=drain) drains I(drain) (a list of C({node, reason}), e.g. from the C(slurm_drain_plan) filter)
    or I(nodes) with I(reason), with C(scontrol update nodename=X state=drain reason="...").
    A node already drained or draining with the same reason is left alone (C(changed=false)); so is, with
    I(keep_foreign) (the default), a node drained for a reason that is not this toolkit's - an administrator's
    drain keeps its reason, and C(resume) would not undo ours over it - returned in C(kept).
  - C(action=resume) resumes I(nodes) (default every drained node) with C(scontrol update nodename=X
    state=resume). With I(only_ours) (the default) only nodes whose reason starts with C(dgxpod ) - the drains
    this toolkit made - are resumed; an administrator's drain stays.
  - In check mode drain and resume report what they would change and run no C(scontrol update).
  - Runs where the Slurm client commands reach slurmctld (the controller); I(slurm_conf) sets C(SLURM_CONF).
version_added: "0.1.0"
options:
  action:
    description: What to do.
    type: str
    choices: [state, drain, resume]
    default: state
  nodes:
    description: Node names to drain (with I(reason)) or resume.
    type: list
    elements: str
  reason:
    description: "The drain reason when I(nodes) is given (C(dgxpod <check>: <cause>) by convention)."
    type: str
  drain:
    description: Nodes and their reasons, C([{node, reason}]) (the C(slurm_drain_plan) filter's C(drain)).
    type: list
    elements: dict
  dgx:
    description: The DGX of the pod; with it the module also returns C(checks), one C(slurm_node) check per DGX.
    type: list
    elements: str
  only_ours:
    description: C(resume) touches only nodes whose reason starts with C(dgxpod ).
    type: bool
    default: true
  keep_foreign:
    description: C(drain) leaves a node already drained for a reason not starting with C(dgxpod ) as it is.
    type: bool
    default: true
  slurm_conf:
    description: Path of slurm.conf, exported as C(SLURM_CONF) (default Slurm's, /etc/slurm/slurm.conf).
    type: path
  bin_dir:
    description: Directory of scontrol (default the PATH's).
    type: path
  command_timeout:
    description:
      - Seconds one C(scontrol) command may take; one still running then is killed with its process group and
        the module fails naming it (slurmctld not answering).
    type: int
    default: 60
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Slurm node states
  pod_slurm:
    action: state
  register: slurm_state

- name: Drain the DGX a run named
  pod_slurm:
    action: drain
    drain: "{{ (results | slurm_drain_plan(groups['dgx'])).drain }}"

- name: Drain one node by hand
  pod_slurm:
    action: drain
    nodes: [DGX1-2]
    reason: "dgxpod nccl_busbw: 40% of its peers"

- name: Undo the toolkit's drains
  pod_slurm:
    action: resume
"""

RETURN = r"""
nodes:
  description: "Every node, C({name: {state, drain, responding, reason}}), after the action (before, in check mode)."
  returned: always
  type: dict
unhealthy:
  description: The nodes that are down, drained, draining, failing, invalid or not responding, with their state.
  returned: always
  type: dict
drained:
  description: Nodes this call drained (or would drain in check mode).
  returned: always
  type: list
already:
  description: Nodes to drain that were already drained or draining with that reason (left alone).
  returned: always
  type: list
kept:
  description: "Nodes to drain that were already drained for another, not the toolkit's, reason (left alone with
    I(keep_foreign)): C([{node, reason}]) with Slurm's reason."
  returned: always
  type: list
resumed:
  description: Nodes this call resumed (or would resume in check mode).
  returned: always
  type: list
commands:
  description: The scontrol update commands run (or that would run in check mode).
  returned: always
  type: list
checks:
  description: "With I(dgx): one results.json check C(slurm_node) per DGX - pass, or fail naming its state and reason."
  returned: when dgx is given
  type: list
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.drain import ours, resume_plan, slurm_checks
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.parse import (node_states, parse_scontrol_nodes,
    unhealthy)


def _scontrol(module, env):
    exe = os.path.join(module.params["bin_dir"], "scontrol") if module.params["bin_dir"] else \
        module.get_bin_path("scontrol", required=True)
    return exe, env


def scontrol(module, argv, env):
    """(rc, stdout, stderr) of one scontrol command (common/run.py: bounded by command_timeout, LC_ALL=C); on
    timeout rc is None and stderr says so."""
    limit = module.params["command_timeout"]
    r = run_tool(argv, limit, env=env)
    if r.timed_out:
        return None, r.stdout, "did not finish within %ds (killed; slurmctld not answering?)" % limit
    return r.rc, r.stdout, r.stderr


def read_states(module, exe, env):
    rc, out, err = scontrol(module, [exe, "show", "node", "-o"], env)
    if rc != 0:
        module.fail_json(msg="scontrol show node -o failed (rc %s): %s" % (rc, (err or out).strip()),
                         hint="is slurmctld running and SLURM_CONF (slurm_conf) the pod's slurm.conf?")
    return node_states(parse_scontrol_nodes(out))


def drain_changes(states, wanted, keep_foreign=True):
    """(todo, unknown, already, kept): the [(node, reason)] to drain - not already drained with that reason,
    nor (with keep_foreign) drained for a reason that is not ours - the unknown nodes (an error), the nodes
    already drained with that reason and the [{node, reason}] drained by someone else."""
    unknown = [n for n, _ in wanted if n not in states]
    todo, already, kept = [], [], []
    for n, r in wanted:
        s = states.get(n)
        if s is None:
            continue
        if s["drain"] and s["reason"] == r:
            already.append(n)
        elif keep_foreign and s["drain"] and not ours(s["reason"]):
            kept.append({"node": n, "reason": s["reason"]})
        else:
            todo.append((n, r))
    return todo, unknown, already, kept


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type="str", choices=["state", "drain", "resume"], default="state"),
            nodes=dict(type="list", elements="str"),
            dgx=dict(type="list", elements="str"),
            reason=dict(type="str"),
            drain=dict(type="list", elements="dict"),
            only_ours=dict(type="bool", default=True),
            keep_foreign=dict(type="bool", default=True),
            slurm_conf=dict(type="path"),
            bin_dir=dict(type="path"),
            command_timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    p = module.params
    env = {"SLURM_CONF": p["slurm_conf"]} if p["slurm_conf"] else {}
    exe, env = _scontrol(module, env)
    states = read_states(module, exe, env)
    commands, drained, resumed, already, kept = [], [], [], [], []
    if p["action"] == "drain":
        wanted = [(str(d["node"]), str(d.get("reason") or p["reason"] or "")) for d in p["drain"] or []]
        if p["nodes"]:
            if not p["reason"]:
                module.fail_json(msg="action=drain with nodes needs a reason (Slurm requires one to drain)")
            wanted += [(n, p["reason"]) for n in p["nodes"]]
        if any(not r for _, r in wanted):
            module.fail_json(msg="every node to drain needs a reason", drain=wanted)
        todo, unknown, already, kept = drain_changes(states, wanted, p["keep_foreign"])
        if unknown:
            module.fail_json(msg="not Slurm nodes: %s (known: %s)" % (", ".join(unknown), ", ".join(states)))
        for node, reason in todo:
            commands.append([exe, "update", "nodename=%s" % node, "state=drain", "reason=%s" % reason])
            drained.append(node)
    elif p["action"] == "resume":
        for node in resume_plan(states, p["nodes"], p["only_ours"]):
            commands.append([exe, "update", "nodename=%s" % node, "state=resume"])
            resumed.append(node)
    if commands and not module.check_mode:
        for cmd in commands:
            rc, out, err = scontrol(module, cmd, env)
            if rc != 0:
                module.fail_json(msg="%s failed (rc %s): %s" % (" ".join(cmd), rc, (err or out).strip()),
                                 drained=drained, resumed=resumed)
        states = read_states(module, exe, env)
    extra = {"checks": slurm_checks(states, p["dgx"])} if p["dgx"] else {}
    module.exit_json(changed=bool(commands), nodes=states, unhealthy=unhealthy(states), drained=drained,
                     resumed=resumed, already=already, kept=kept, commands=[" ".join(c[1:]) for c in commands],
                     **extra)


if __name__ == "__main__":
    main()
