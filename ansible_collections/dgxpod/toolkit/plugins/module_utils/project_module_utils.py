# -*- coding: utf-8 -*-
"""Make the project's module_utils importable by plain name in controller-side plugins (filters, vars plugins).

Ansible packs ``module_utils/`` (ansible.cfg ``module_utils``) into a module's payload as
``ansible.module_utils.<name>``, but does not make it importable on the controller (ansible/ansible#27748,
#52871): a filter plugin that imports a module_util finds nothing. Code in a collection is importable on the
controller, so this one file lives in a collection (ansible.cfg ``collections_path`` names the repository root)
and every controller plugin starts with::

    import ansible_collections.dgxpod.toolkit.plugins.module_utils.project_module_utils  # noqa: F401

then imports the module_utils by plain name (``from pod_derive import nic_plan``), as the unit tests do
(pyproject.toml ``pythonpath``). The directories are Ansible's own setting (``DEFAULT_MODULE_UTILS_PATH``, the
ones it packs modules from), then the project's ``module_utils/`` if that setting does not name it (Ansible run
with another config file). docs/architecture.md, "Imports".
"""
from __future__ import annotations

import os
import sys

_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 5))


def module_utils_dirs(configured=None):
    """The existing module_utils directories, in Ansible's order (``configured``: default Ansible's setting), then
    the project's own if not among them; each once, as a real path."""
    if configured is None:
        from ansible import constants as C
        configured = C.DEFAULT_MODULE_UTILS_PATH or []
    out = []
    for path in list(configured) + [os.path.join(_ROOT, "module_utils")]:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in out:
            out.append(real)
    return out


_ON_PATH = {os.path.realpath(p) for p in sys.path if p}
for _path in reversed(module_utils_dirs()):
    if _path not in _ON_PATH:
        sys.path.insert(0, _path)
