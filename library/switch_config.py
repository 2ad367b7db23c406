#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: bring a switch's running config to the config rendered from the pod model."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: switch_config
short_description: Diff and push a rendered switch configuration over SSH (netmiko), atomically, with verification
description:
  - Connects to an Arista EOS, NVIDIA Onyx (MLNX-OS, also the InfiniBand switches) or Cumulus Linux (NVUE)
    switch with netmiko, reads its running config and computes the remediation that makes it match
    I(config) within the managed scope (the sections and lines I(config) has, plus hostname, spanning-tree
    mode, ip routing, static routes, RoCE mode and subnet manager). Lines outside the scope are never touched.
  - Returns C(changed), the commands and a before/after C(diff). In check mode it stops there.
  - Otherwise it backs up the running config to I(backup_dir) on the controller and applies the change -
    EOS in a C(configure session) that is committed only when every line was accepted (C(abort) otherwise);
    Cumulus with C(nv set)/C(nv unset) and C(nv config apply -y); Onyx line by line, restoring the backup on
    a rejected line or a dropped connection and writing the config (C(configuration write)) only after a
    clean push. Every push uses an I(error_pattern). The running config is then read again and must give an
    empty diff, and the config is saved.
  - With I(verify_lossless) it reads the lossless-RoCE state (EOS C(show priority-flow-control), Onyx
    C(show roce), NVUE C(nv show qos roce -o json)) and fails when it differs from I(lossless_expect).
  - "Runs on the controller (C(connection: local)). The password is never logged or returned."
version_added: "0.1.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.switch_connection
options:
  backup_dir:
    description: Controller directory for the running-config backup taken before a change.
    type: path
  save:
    description: Save the running config to the startup config after a successful push.
    type: bool
    default: true
  error_pattern:
    description: Regular expression for CLI errors (default per platform, e.g. C(% ?Invalid|% ?Incomplete) on EOS).
    type: str
  allow_management_change:
    description: Allow a change of the management interface (refused by default - it can cut the controller off).
    type: bool
    default: false
  verify_lossless:
    description: Read and check the lossless-RoCE state after the push.
    type: bool
    default: false
notes:
  - Supports check mode (reads the running config, returns the diff, changes nothing) and diff mode.
  - Uses netmiko 4.8 and hier_config 3.7 on the controller.
"""

EXAMPLES = r"""
- name: Push the rendered config to an Arista switch
  switch_config:
    platform: eos
    host: "{{ ansible_host }}"
    username: admin
    password: "{{ vault_switch_password }}"
    config: "{{ lookup('ansible.builtin.file', 'build/data-sw1/running.cfg') }}"
    backup_dir: build/data-sw1/backups
    known_hosts_file: ~/.ssh/known_hosts
    verify_lossless: true
    lossless_expect: {pfc_priority: 3, ports: [Ethernet1/1, Ethernet2/1]}
  delegate_to: localhost
"""

RETURN = r"""
changed:
  description: Whether the running config differed (and, outside check mode, was changed).
  returned: always
  type: bool
commands:
  description: The remediation commands (sent, or that would be sent in check mode).
  returned: always
  type: list
  elements: str
  sample: ["interface Ethernet1/1", "mtu 9214", "exit"]
diff:
  description: Managed part of the running config before, and the desired config.
  returned: always
  type: dict
backup_path:
  description: Controller path of the running-config backup taken before the change.
  returned: when changed and not check mode
  type: str
session:
  description: EOS configure session name used for the change.
  returned: when changed on EOS
  type: str
session_diff:
  description: EOS C(show session-config diffs) before the commit.
  returned: when changed on EOS
  type: str
lossless:
  description: Parsed lossless state and problems (C(ok), C(problems), C(parsed), C(expected)).
  returned: when verify_lossless
  type: dict
restored:
  description: True when a failed Onyx push was rolled back to the backup.
  returned: on failure after a partial Onyx push
  type: bool
after_drop:
  description: What the running config was after a connection dropped mid-push (old, new, or neither).
  returned: on a dropped connection
  type: str
timings:
  description: Seconds spent connecting, applying and in total.
  returned: success
  type: dict
"""

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import switch_module
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.push import PushError, SwitchPush


def main() -> None:
    module = switch_module("switch_config", backup_dir=dict(type="path"),
                           save=dict(type="bool", default=True), error_pattern=dict(type="str"),
                           allow_management_change=dict(type="bool", default=False),
                           verify_lossless=dict(type="bool", default=False))
    try:
        result = SwitchPush(module.params).run(module.check_mode)
    except PushError as exc:
        for warning in exc.result.pop("warnings", []):
            module.warn(warning)
        module.fail_json(msg=exc.msg, **exc.result)
    for warning in result.pop("warnings", []):
        module.warn(warning)
    lossless = result.get("lossless")
    if lossless is not None and not lossless["ok"]:
        module.fail_json(msg="lossless RoCE state differs from the model: %s" % "; ".join(lossless["problems"]),
                         **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
