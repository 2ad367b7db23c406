"""Shared test set-up: make the project's module_utils importable as Ansible would."""
from __future__ import annotations

import importlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "module_utils"))
sys.path.insert(0, os.path.join(ROOT, "library"))
# Modules import their helpers as ansible.module_utils.<name>; map them to the project's copies.
for _name in ("pod_model", "pod_sources", "switch_model", "pod_derive", "storage_plan"):
    sys.modules.setdefault("ansible.module_utils." + _name, importlib.import_module(_name))


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
