#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read a switch's configuration drift, port state, LLDP neighbours, counters, optics and environment
(read-only)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: switch_validate
short_description: Read a switch's drift, port state, LLDP, counters, optics and environment (read-only)
description:
  - Connects to an Arista EOS, NVIDIA Onyx or Cumulus Linux (NVUE) switch with the same netmiko session code
    as M(switch_config) and never enters configuration mode. Nothing on the switch changes.
  - Reads the running config and computes the deploy's scoped diff against I(config) (reported as
    C(drift.commands); never sent), the per-port MTU, speed, shutdown, QoS trust and PFC lines, and the
    lossless-RoCE state (EOS C(show priority-flow-control), Onyx C(show roce), NVUE C(nv show qos roce -o json))
    against I(lossless_expect).
  - Reads the ports' operational state and speed (EOS C(show interfaces status | json), Onyx
    C(show interfaces ethernet status), NVUE C(nv show interface)) and LLDP neighbours (EOS
    C(show lldp neighbors detail | json), Onyx C(show lldp interfaces ethernet remote), NVUE
    C(nv show interface lldp)).
  - It reads the port counters twice, I(counter_interval) seconds apart, and returns the delta - EOS the error,
    discard and PFC pause counters (C(show interfaces counters errors|discards | json),
    C(show priority-flow-control counters | json)); Onyx the Rx/Tx error and discard packets
    (C(show interfaces ethernet | json-print); its PFC pause counters are not read); NVUE the error, drop and
    overrun counters (C(nv show interface --view counters)) and, on every switch port that is up, the PFC pause
    frames (C(nv show interface <port> counters qos pfc-stats)).
  - While the interval runs it reads the optics and the environment once - EOS the transceivers' DOM readings with
    the modules' thresholds (C(show interfaces transceiver dom thresholds | json)) and the PSUs, fans and
    temperatures (C(show system environment power|cooling|temperature | json)); NVUE
    C(nv show platform environment) and, per switch port that is up,
    C(nv show interface <port> transceiver thresholds). Onyx's are not read.
  - It decides nothing; module_utils/switch/eval.py compares the readings with the pod model (validate.yml
    tag C(switches)). A show output that does not parse is returned in C(errors).
  - "Runs on the controller (C(connection: local)). The password is never logged or returned."
version_added: "0.2.0"
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.switch_connection
options:
  counter_interval:
    description: Seconds between the two counter reads.
    type: float
    default: 5
notes:
  - Read-only; supports check mode (it behaves the same) and always returns C(changed=false).
"""

EXAMPLES = r"""
- name: Read a switch's state for validation
  switch_validate:
    platform: eos
    host: "{{ ansible_host }}"
    username: admin
    password: "{{ vault_switch_password }}"
    config: "{{ lookup('ansible.builtin.file', 'build/data-sw1/running.cfg') }}"
    lossless_expect: {pfc_priority: 3, ports: [Ethernet1/1]}
    known_hosts_file: ~/.ssh/known_hosts
  delegate_to: localhost
"""

RETURN = r"""
drift:
  description: C(changed) (the running config differs from the model in the managed scope) and C(commands)
    (what the deploy would send).
  returned: success
  type: dict
port_config:
  description: Per port, from the running config, C(mtu), C(speed) (Gbit/s), C(shutdown), C(trust), C(pfc),
    C(pfc_priorities).
  returned: success
  type: dict
lossless:
  description: The lossless-RoCE check of switch_verify (C(ok), C(problems), C(parsed), C(expected)).
  returned: when lossless_expect is set
  type: dict
status:
  description: Per port, C(oper) (the switch's word), C(up), C(speed_gbps).
  returned: success, except on mlnx-ib
  type: dict
lldp:
  description: Per port, the LLDP neighbours (C(system_name), C(port_id), C(port_description), C(chassis_id)).
  returned: success, except on mlnx-ib
  type: dict
counters:
  description: C(first), C(second) and C(delta) ({kind -> {port -> {counter -> n}}}; kinds EOS errors, discards,
    pause; Onyx interfaces; NVUE interfaces, pause) and C(interval_s).
  returned: on EOS, Onyx and NVUE
  type: dict
optics:
  description: Per port, the transceiver's C(media_type), C(serial) and C(params) (rx_power, tx_power, temperature,
    tx_bias, voltage, each with C(unit), C(channels) and the module's C(thresholds)).
  returned: on EOS and NVUE
  type: dict
environment:
  description: EOS C(power) (per PSU), C(cooling) (status and fans), C(temperature) (status and sensors); NVUE
    C(platform) (the Name/Type/State rows). A part whose output did not parse is null (see C(errors)).
  returned: on EOS and NVUE
  type: dict
errors:
  description: Show commands whose output could not be read, with the parser's message.
  returned: always
  type: dict
"""

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import switch_module
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.push import PushError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.readings import SwitchValidate


def main() -> None:
    module = switch_module("switch_validate", counter_interval=dict(type="float", default=5))
    try:
        result = SwitchValidate(module.params).run()
    except PushError as exc:
        module.fail_json(msg="%s: %s" % (module.params.get("name") or module.params["host"], exc.msg), **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
