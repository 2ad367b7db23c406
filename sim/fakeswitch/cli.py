# -*- coding: utf-8 -*-
"""The three switch CLIs the fake server speaks: Arista EOS, NVIDIA Onyx (MLNX-OS) and Cumulus Linux NVUE.

Pure Python, no I/O: a ``Device`` holds one switch's persistent state (a JSON-able dict: running config,
startup config, uncommitted EOS sessions, pending NVUE revision, fault settings) and a ``Session`` is one
SSH login that turns lines typed into output, the way the real CLI does it - as far as stock netmiko
(``arista_eos``, ``mellanox_mlnxos``, ``cumulus_linux``) and library/switch_config.py need:

- prompts and modes (exec, enable, config, interface sub-modes, EOS ``configure session``);
- ``terminal length/width``, ``show version``, ``show running-config``, saving, ``show`` commands for the
  lossless check (generated from the running config in the vendors' output format);
- a command grammar per context; anything else gets the vendor's error text (``% Invalid input``,
  ``% Unrecognized command``, ``Error: ...``, ``-bash: ...: command not found``);
- faults from ``state["faults"]``: ``reject`` (a regex: matching config lines fail as invalid),
  ``drop_after_lines`` (close the connection when the K+1-th config line arrives, before applying it;
  ``drop_times`` says how many connections this hits, default 1), ``delay`` (seconds before every reply),
  ``ignore`` (a regex: matching config lines are accepted without error but not applied - a switch that
  does not converge), ``drop_after_commit`` (a count: the next N EOS ``commit``s / NVUE
  ``nv config apply -y`` take effect, then the connection drops before the reply).

This is a test double for CI and the pod-in-a-box; it is not a switch.
One file per vendor: base.py (Device, Session, state), eos.py, onyx.py, cumulus.py; this module is what the
server and the tests import. The vendor files mirror the product's vendor split (module_utils/switch_*)
on purpose: this is the deliberate fake-switch twin of the real CLIs' grammar, not shared code.
"""
from __future__ import annotations

try:
    from .base import DEFAULT_USERS, PLATFORMS, Device, Reply, Session, new_state, session_class, state_summary
    from .cumulus import CumulusSession, nv_key, nv_line, nv_show_qos_roce, nv_tokens
    from .eos import EosConfig, EosSession, eos_key, eos_render, eos_show_pfc
    from .onyx import OnyxSession, onyx_key, onyx_render, onyx_show_roce
except ImportError:  # imported as a plain module (sim/fakeswitch on sys.path)
    from base import (DEFAULT_USERS, PLATFORMS, Device, Reply, Session, new_state,  # type: ignore
                      session_class, state_summary)
    from cumulus import CumulusSession, nv_key, nv_line, nv_show_qos_roce, nv_tokens  # type: ignore
    from eos import EosConfig, EosSession, eos_key, eos_render, eos_show_pfc  # type: ignore
    from onyx import OnyxSession, onyx_key, onyx_render, onyx_show_roce  # type: ignore

__all__ = ["DEFAULT_USERS", "PLATFORMS", "Device", "Reply", "Session", "new_state", "session_class", "state_summary",
           "CumulusSession", "nv_key", "nv_line", "nv_show_qos_roce", "nv_tokens", "EosConfig", "EosSession",
           "eos_key", "eos_render", "eos_show_pfc", "OnyxSession", "onyx_key", "onyx_render", "onyx_show_roce"]
