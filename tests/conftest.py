"""Shared test set-up: pytest options and markers. The import path is pyproject.toml ``pythonpath`` (the one place
it is set): "." for the collection's module_utils (``ansible_collections.dgxpod.toolkit.plugins.module_utils.<package>
.<name>``, as every module, plugin and test imports them) and filter_plugins, library/ for the modules."""
from __future__ import annotations

import os

from ansible.plugins.loader import init_plugin_loader
from ansible.utils.collection_loader import AnsibleCollectionConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Ansible's collection loader before any test imports a module_util: the vars and filter plugins the tests load
# through Ansible import the same ansible_collections.dgxpod.toolkit packages, and Ansible's loader refuses a
# collection package that plain Python imported first ("collection metadata was not loaded"). Installed once,
# so every import of ansible_collections.* (test, plugin, module_util) goes through it and gives one module object.
if AnsibleCollectionConfig.collection_finder is None:
    init_plugin_loader([ROOT])

def pytest_addoption(parser):
    group = parser.getgroup("pod", "post-deploy checks against a pod inventory (tests/infra)")
    group.addoption("--pod-inventory", default=None,
                    help="run tests/infra against this inventory directory (e.g. inventories/sim)")
    group.addoption("--pod-group", default="dgx", help="inventory group whose hosts tests/infra checks")


def pytest_ignore_collect(collection_path, config):
    # tests/infra checks a deployed pod; it runs only when an inventory is named.
    if "infra" in collection_path.parts and not config.getoption("--pod-inventory"):
        return True
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: needs root and builds the pod-in-a-box simulator")
