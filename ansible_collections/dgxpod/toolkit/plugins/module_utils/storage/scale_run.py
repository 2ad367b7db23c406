# -*- coding: utf-8 -*-
"""Run Spectrum Scale commands with a time limit (shared by the scale_* modules).

AnsibleModule.run_command has no timeout; an mm command that waits on an unreachable node would hold
the play forever. These helpers run it the one way (module_utils/common/run.py: a bound, the process group
killed, LC_ALL=C), and say which command timed out.
"""
from __future__ import annotations

import os
import shutil
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool

MM_BIN_DIR = "/usr/lpp/mmfs/bin"


def mm_argument_spec(command_timeout: int) -> Dict[str, Dict[str, Any]]:
    """The options of the modules that run mm commands (scale_facts, scale_client): where the commands are
    (documented once, in the doc fragment dgxpod.toolkit.scale_commands) and how long each may take (each
    module documents its own default). A fresh dict each call."""
    return {"bin_dir": {"type": "path", "default": MM_BIN_DIR},
            "command_timeout": {"type": "int", "default": int(command_timeout)}}


def find_tool(bin_dir: str, tool: str) -> Optional[str]:
    """``bin_dir/tool`` if it exists (Scale installs to /usr/lpp/mmfs/bin, not on PATH), else PATH."""
    path = os.path.join(bin_dir or "", tool)
    if bin_dir and os.access(path, os.X_OK):
        return path
    return shutil.which(tool)


def run_mm(bin_dir: str, argv: List[str], timeout: float) -> Tuple[int, str, str]:
    """(rc, stdout, stderr); rc 127 when the tool is not installed, 124 when it ran out of time."""
    exe = find_tool(bin_dir, argv[0])
    if exe is None:
        return 127, "", "%s: not found in %s or on PATH (Spectrum Scale not installed?)" % (argv[0], bin_dir)
    res = run_tool([exe] + list(argv[1:]), timeout)
    if res.timed_out:
        return 124, "", "'%s' did not finish within %ss" % (" ".join(argv), timeout)
    return res.rc, res.stdout, res.stderr
