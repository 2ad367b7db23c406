#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: make a node a licensed, configured, started Spectrum Scale client that mounts the pod's
file systems - run on an existing cluster member (delegate_to)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: scale_client
short_description: Join a node to an IBM Spectrum Scale cluster as a client, configure, start and mount
description:
  - Runs on an B(existing member) of the cluster (use C(delegate_to)); Scale's administration commands add and
    manage other nodes from there.
  - Reads the cluster (C(mmlscluster), C(mmlslicense -L), C(mmlsconfig), C(mmgetstate -N), C(mmlsmount all -L)),
    plans with C(module_utils/storage/scale_plan.plan_join) and runs only what differs, in order -
    C(mmaddnode -N node), C(mmchlicense client --accept -N node), C(mmchconfig attr=value,... -N node)
    (followed by C(mmshutdown)/C(mmstartup) of that node when it was already active, so that verbs settings take
    effect), C(mmstartup -N node), a wait until C(mmgetstate) shows C(active), C(mmmount fs -N node).
  - A node already a member, licensed, configured, active and mounting is left alone (changed=false).
  - Fails when the member it runs on is not in I(cluster_name), when a command fails (naming it and its output),
    when a command exceeds I(command_timeout), or when the node is not active within I(active_timeout) seconds.
  - After the steps the state is read again and must need no further step.
version_added: "0.1.0"
options:
  node:
    description: The node to join, as Spectrum Scale will name it (it must resolve on the cluster members).
    type: str
    required: true
  cluster_name:
    description: The cluster the member this runs on must belong to.
    type: str
    required: true
  license:
    description: Licence designation for the node.
    type: str
    choices: [client, fpo, server]
    default: client
  config:
    description: Configuration attributes for this node (C(mmchconfig ... -N node)), e.g. verbsRdma, verbsPorts.
    type: dict
    default: {}
  filesystems:
    description: File systems (device names) the node must mount.
    type: list
    elements: str
    default: []
  start:
    description: Start the daemon and mount; false stops after adding, licensing and configuring.
    type: bool
    default: true
  active_timeout:
    description: Seconds to wait for the node's daemon to become active after mmstartup.
    type: int
    default: 300
  poll_interval:
    description: Seconds between mmgetstate polls while waiting.
    type: int
    default: 5
  command_timeout:
    description: Seconds each mm command may take.
    type: int
    default: 300
  contact:
    description: Name of the member host this runs on, used in messages.
    type: str
notes:
  - Supports check mode - it reports the commands it would run (C(commands)) and changes nothing.
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.scale_commands
"""

EXAMPLES = r"""
- name: Join the cluster from an ESS canister
  scale_client:
    node: dgx1-1
    cluster_name: ess3000.pod
    config:
      verbsRdma: enable
      verbsPorts: "mlx5_0/1 mlx5_1/1 mlx5_2/1 mlx5_3/1"
    filesystems: [fs1]
    contact: ess3k1a
  delegate_to: ess3k1a
"""

RETURN = r"""
commands:
  description: The commands run (in check mode - that would run); C(wait-active) marks the wait.
  returned: always
  type: list
  elements: list
reasons:
  description: Why each command is needed, one line per command.
  returned: always
  type: list
  elements: str
state:
  description: The node's daemon state at the end (as mmgetstate shows it).
  returned: always
  type: str
waited:
  description: Seconds spent waiting for the daemon to become active.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import (parse_mmgetstate,
    parse_mmlscluster, parse_mmlsconfig, parse_mmlslicense, parse_mmlsmount, same_node)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_plan import find_node, plan_join
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_run import mm_argument_spec, run_mm


class Runner:
    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.contact = self.p["contact"] or "the contact member"
        self.done = []

    def mm(self, argv, must=True):
        rc, out, err = run_mm(self.p["bin_dir"], argv, self.p["command_timeout"])
        if rc == 124:
            self.module.fail_json(msg="%s (on %s); nothing after it was run" % (err, self.contact),
                                  commands_run=self.done)
        if rc != 0 and must:
            self.module.fail_json(msg="'%s' failed on %s (rc=%d): %s" % (" ".join(argv), self.contact, rc,
                                                                       (err.strip() or out.strip())[-2000:]),
                                  commands_run=self.done)
        return rc, out, err

    def node_state(self):
        rc, out, _ = self.mm(["mmgetstate", "-N", self.p["node"]], must=False)
        states = self.parsed(parse_mmgetstate, ["mmgetstate"], out) if rc == 0 else []
        return next((s["state"] for s in states if same_node(s["name"], self.p["node"])), "down")

    def parsed(self, parser, argv, out):
        """The parser's value, or a failure naming the contact node and the command (never a partial answer)."""
        try:
            return parser(out)
        except ValueError as exc:
            self.module.fail_json(msg="'%s' on %s printed output that cannot be read: %s"
                                  % (" ".join(argv), self.contact, exc), commands_run=self.done)

    def read(self):
        node, expected = self.p["node"], self.p["cluster_name"]
        rc, out, err = self.mm(["mmlscluster"], must=False)
        cluster = self.parsed(parse_mmlscluster, ["mmlscluster"], out + err)
        if not cluster["member"] or cluster.get("cluster_name") != expected:
            self.module.fail_json(msg="%s cannot add %s: it is %s, not a member of '%s' (rc=%d: %s)" % (
                self.contact, node, "in cluster '%s'" % cluster.get("cluster_name") if cluster["member"]
                else "in no cluster", expected, rc, (err or out).strip()[-500:]))
        licenses = self.parsed(parse_mmlslicense, ["mmlslicense", "-L"], self.mm(["mmlslicense", "-L"])[1])
        config = self.parsed(parse_mmlsconfig, ["mmlsconfig"], self.mm(["mmlsconfig"])[1])
        states = []
        if find_node(cluster, node) is not None:
            states = [{"name": node, "state": self.node_state()}]
        mounts = self.parsed(parse_mmlsmount, ["mmlsmount", "all", "-L"], self.mm(["mmlsmount", "all", "-L"])[1])
        return cluster, licenses, config, states, mounts

    def plan(self):
        p = self.p
        return plan_join(p["node"], *self.read(), want_config={k: str(v) for k, v in p["config"].items()},
                         filesystems=p["filesystems"], license=p["license"], start=p["start"])

    def wait_active(self):
        start = time.monotonic()
        state = self.node_state()
        while state != "active":
            if time.monotonic() - start >= self.p["active_timeout"]:
                self.module.fail_json(msg="%s did not become active within %ds after mmstartup (last state: %s, as "
                                          "mmgetstate on %s shows it); see /var/adm/ras/mmfs.log.latest on %s" % (
                                              self.p["node"], self.p["active_timeout"], state, self.contact,
                                              self.p["node"]), commands_run=self.done, state=state)
            time.sleep(max(1, self.p["poll_interval"]))
            state = self.node_state()
        return time.monotonic() - start


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mm_argument_spec(command_timeout=300),
            node=dict(type="str", required=True),
            cluster_name=dict(type="str", required=True),
            license=dict(type="str", default="client", choices=["client", "fpo", "server"]),
            config=dict(type="dict", default={}),
            filesystems=dict(type="list", elements="str", default=[]),
            start=dict(type="bool", default=True),
            active_timeout=dict(type="int", default=300),
            poll_interval=dict(type="int", default=5),
            contact=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    r = Runner(module)
    plan = r.plan()
    result = dict(changed=plan["changed"], commands=plan["steps"], reasons=plan["reasons"], waited=0.0)
    if module._diff and plan["changed"]:
        result["diff"] = {"before": "", "after": "".join(
            "%s  # %s\n" % (" ".join(step), plan["reasons"][i]) for i, step in enumerate(plan["steps"]))}
    if module.check_mode or not plan["changed"]:
        module.exit_json(state=r.node_state(), **result)
    for step in plan["steps"]:
        if step == ["wait-active"]:
            result["waited"] = round(r.wait_active(), 1)
        else:
            r.mm(step)
        r.done.append(step)
    again = r.plan()
    if again["changed"]:
        module.fail_json(msg="%s did not converge; still needed: %s" % (module.params["node"],
                                                                       "; ".join(again["reasons"])), **result)
    module.exit_json(state=r.node_state(), **result)


if __name__ == "__main__":
    main()
