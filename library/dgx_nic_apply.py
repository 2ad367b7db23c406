#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: make the kernel's NIC state (addresses, MTU, link, default route) match the model."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: dgx_nic_apply
short_description: Apply per-NIC addresses, MTU, link state and the default route with ip(8)
description:
  - Reads the kernel state (C(ip -j addr show), C(ip -j route show default)), compares it with the NIC
    plan derived from the pod model and runs only the C(ip) commands needed. The persisted configuration
    (netplan or ifupdown) is written by the C(dgx_network) role; this module changes the running state
    without restarting networking, so it works on DGX OS and in the pod-in-a-box (no systemd there).
  - A NIC in the plan that the host does not have is an error before anything changes.
  - The interface the controller is connected through (from C(SSH_CONNECTION)) is protected - its link
    is never set down and the address the connection uses is never removed - unless
    I(allow_connection_change) is true.
  - If a command fails, the commands already run are undone and the module fails, naming the command.
  - After applying, the state is read again and must match the plan.
version_added: "0.1.0"
options:
  nics:
    description:
      - The NIC plan (the C(pod_nic_plan) filter) - a list of dicts with C(name), C(cidr), C(mtu) and
        optionally C(gateway) (the NIC that carries the default route).
    type: list
    elements: dict
    required: true
  allow_connection_change:
    description: Allow removing the address the controller's SSH connection uses.
    type: bool
    default: false
  purge_addresses:
    description: Remove global IPv4 addresses on managed NICs that the model does not list.
    type: bool
    default: true
notes:
  - Supports check mode and diff mode; in check mode it reports the commands it would run.
  - Each C(ip) command may take 30 seconds; one still running then is killed and counts as failed.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Apply addresses and MTU to the data NICs
  dgx_nic_apply:
    nics: "{{ nics | pod_nic_plan(pod) }}"
"""

RETURN = r"""
commands:
  description: The ip commands run (or, in check mode, that would run).
  returned: always
  type: list
  elements: list
changes:
  description: One line per difference, as C(<nic> <field>, <before> -> <after>).
  returned: always
  type: list
  elements: str
differences:
  description:
    - The same differences as data, one per line of I(changes) and in its order - C(nic), C(field) (C(mtu),
      C(link), C(address), ...), C(before) (the kernel's), C(after) (the model's); the network stage's
      evaluator (module_utils/network/eval.py) reads these, never the text.
  returned: always
  type: list
  elements: dict
state:
  description: Per managed NIC after the run - mtu, up, ipv4 addresses.
  returned: always
  type: dict
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.nic_state import (ipv4_globals, is_up,
    plan_changes, undo_commands)


IP_TIMEOUT = 30  # seconds an ip(8) command may take (documented in notes)


def run_ip(cmd):
    """(rc, stdout, stderr) of one ip(8) command (common/run.py: bounded, LC_ALL=C); a timeout is a failure."""
    r = run_tool(cmd, IP_TIMEOUT)
    if r.timed_out:
        return (r.rc if r.rc else -1), r.stdout, "did not finish within %ds (killed)" % IP_TIMEOUT
    return r.rc, r.stdout, r.stderr


def read_state(module):
    rc, out, err = run_ip(["ip", "-j", "addr", "show"])
    if rc != 0:
        module.fail_json(msg="ip -j addr show failed: %s" % err.strip())
    links = json.loads(out or "[]")
    rc, out, err = run_ip(["ip", "-j", "-4", "route", "show", "default"])
    if rc != 0:
        module.fail_json(msg="ip -j route show default failed: %s" % err.strip())
    return links, json.loads(out or "[]")


def summary(nics, links):
    by_name = {link["ifname"]: link for link in links}
    return {n["name"]: {"mtu": by_name[n["name"]].get("mtu"), "up": is_up(by_name[n["name"]]),
                        "ipv4": ipv4_globals(by_name[n["name"]])} for n in nics if n["name"] in by_name}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nics=dict(type="list", elements="dict", required=True),
            allow_connection_change=dict(type="bool", default=False),
            purge_addresses=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    nics = module.params["nics"]
    for i, nic in enumerate(nics):
        for key in ("name", "cidr", "mtu"):
            if key not in nic:
                module.fail_json(msg="nics[%d] lacks %s (build the list with the pod_nic_plan filter)" % (i, key))
    conn = os.environ.get("SSH_CONNECTION", "").split()
    connection_address = conn[2] if len(conn) >= 4 else None
    links, routes = read_state(module)
    plan = plan_changes(nics, links, routes, connection_address, module.params["allow_connection_change"],
                        module.params["purge_addresses"])
    for w in plan.warnings:
        module.warn(w)
    if plan.errors:
        module.fail_json(msg="; ".join(plan.errors), state=summary(nics, links))
    result = dict(changed=plan.changed, commands=plan.commands, changes=plan.diff, differences=plan.changes)
    if module._diff and plan.changed:
        result["diff"] = {"before": "".join("%s %s: %s\n" % (c["nic"], c["field"], c["before"]) for c in plan.changes),
                          "after": "".join("%s %s: %s\n" % (c["nic"], c["field"], c["after"]) for c in plan.changes)}
    if module.check_mode or not plan.changed:
        module.exit_json(state=summary(nics, links), **result)
    done = []
    for cmd in plan.commands:
        rc, _out, err = run_ip(cmd)
        if rc != 0:
            undo = undo_commands(done, links, routes)
            failed_undo = [u for u in undo if run_ip(u)[0] != 0]
            module.fail_json(msg="'%s' failed: %s; %s" % (" ".join(cmd), err.strip(), (
                "rolled back the %d command(s) already run" % len(done)) if not failed_undo else
                "ROLLBACK INCOMPLETE, these failed: %s" % "; ".join(" ".join(u) for u in failed_undo)),
                commands_run=done)
        done.append(cmd)
    links_after, routes_after = read_state(module)
    again = plan_changes(nics, links_after, routes_after, connection_address,
                         module.params["allow_connection_change"], module.params["purge_addresses"])
    if again.changed:
        module.fail_json(msg="state did not converge; still different: %s" % "; ".join(again.diff), **result)
    module.exit_json(state=summary(nics, links_after), **result)


if __name__ == "__main__":
    main()
