# -*- coding: utf-8 -*-
"""Documentation fragment: where the Spectrum Scale modules (scale_facts, scale_client) find the mm commands. The
options are module_utils/storage/scale_run.py ``mm_argument_spec()`` without ``command_timeout``, which each module
documents itself (its default differs: a read, or a join that may wait on the cluster).

Used as ``extends_documentation_fragment: [dgxpod.toolkit.scale_commands]``."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  bin_dir:
    description: Where the mm commands are; commands not found there are looked up on PATH.
    type: path
    default: /usr/lpp/mmfs/bin
"""
