# -*- coding: utf-8 -*-
"""Documentation fragment: which switch and how to reach it, for the switch modules (switch_config,
switch_validate). The options are module_utils/switch/model.py ``connection_argument_spec()``; keep the two alike.

Used as ``extends_documentation_fragment: [dgxpod.toolkit.switch_connection]``. A module's own entry for an option
wins over this one."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  platform:
    description: CLI family; selects the netmiko device type and the diff method.
    type: str
    required: true
    choices: [eos, onyx, cumulus, mlnx-ib]
  host:
    description: Address to connect to (the switch's management address, or 127.0.0.1 for the fake switch).
    type: str
    required: true
  port:
    description: SSH port.
    type: int
    default: 22
  name:
    description: Switch name, used in messages and backup file names.
    type: str
  username:
    description: Login user.
    type: str
    required: true
  password:
    description: Login password (keep it in ansible-vault).
    type: str
    required: true
  enable_secret:
    description: Enable password (EOS/Onyx), when it differs from I(password).
    type: str
  config:
    description: The desired configuration text (rendered by the switch_config role); the diff is computed against
      it.
    type: str
    required: true
  lossless_expect:
    description: What the lossless-RoCE check expects, C({pfc_priority, ports}); empty means nothing has to be
      lossless.
    type: dict
    default: {}
  host_key_checking:
    description: Verify the switch's SSH host key (RejectPolicy) against I(known_hosts_file) or ~/.ssh/known_hosts.
    type: bool
    default: true
  known_hosts_file:
    description: known_hosts file holding the switch's host key.
    type: path
  connect_timeout:
    description: Seconds for the TCP connect, the SSH banner and authentication.
    type: int
    default: 10
  command_timeout:
    description: Seconds to wait for one command's output.
    type: int
    default: 60
"""
