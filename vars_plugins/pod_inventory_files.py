# -*- coding: utf-8 -*-
"""Vars plugin: name the file and line of an inventory file Ansible cannot parse, before Ansible reads it."""
from __future__ import annotations

import os

from ansible.errors import AnsibleParserError
from ansible.plugins.vars import BaseVarsPlugin

from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import unreadable_var_files

DOCUMENTATION = r"""
---
name: pod_inventory_files
short_description: Stop with the file and line of an unreadable inventory YAML file (a tab in the indentation)
description:
  - Runs before C(host_group_vars) (see C(vars_plugins_enabled) in ansible.cfg). On the first call for an
    inventory directory it parses every host_vars and group_vars file the way Ansible will, and stops
    with C(file:line) and the fix when one cannot be parsed. Ansible's own message for such a file
    ("YAML parsing failed - Tabs are usually invalid in YAML") names neither, and for host_vars it surfaces from
    inside a filter of the preflight play.
  - Keys written twice and misnamed host_vars files do not stop Ansible; the C(pod_preflight) module reports them.
  - Returns no variables.
version_added: "0.1.0"
options: {}
"""

_SCANNED = {}


class VarsModule(BaseVarsPlugin):
    REQUIRES_ENABLED = True

    def get_vars(self, loader, path, entities, cache=True):
        super().get_vars(loader, path, entities)
        path = os.path.realpath(path)
        if path not in _SCANNED:
            _SCANNED[path] = unreadable_var_files(path) if os.path.isdir(path) else []
        if _SCANNED[path]:
            raise AnsibleParserError("inventory file(s) Ansible cannot parse:\n" + "\n".join(
                f.format() for f in _SCANNED[path]))
        return {}
