# -*- coding: utf-8 -*-
"""What every module of the toolkit (library/) says the same way: who wrote it. Each module's DOCUMENTATION ends
with ``extends_documentation_fragment: dgxpod.toolkit.toolkit_module`` (first in the list when it takes other
fragments) instead of its own ``author:`` block; ``ansible-doc`` shows the author as before."""
from __future__ import annotations


class ModuleDocFragment:
    # Ansible requires options (or attributes) in a fragment; this one adds none.
    DOCUMENTATION = r"""
options: {}
author:
  - DGX pod toolkit contributors
"""
