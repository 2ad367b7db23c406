"""Shared test set-up: make the project's module_utils importable as Ansible would.

module_utils/ and library/ are on sys.path by pyproject.toml ``pythonpath`` (the one place the tests' import path
is set); a script that imports this file outside pytest (tests/unit/big_pod.py) puts them there first."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Modules import their helpers as ansible.module_utils.<name> (as Ansible packs them); tests import the same
# files by their plain names. One finder maps the first form to the second, so both names give the same module
# object (one CheckResult class, one registry of stages) whichever is imported first.
_OURS = {f[:-3] for f in os.listdir(os.path.join(ROOT, "module_utils")) if f.endswith(".py")}


class _ProjectModuleUtils(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    PREFIX = "ansible.module_utils."

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(self.PREFIX) and fullname[len(self.PREFIX):] in _OURS:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(spec.name[len(self.PREFIX):])

    def exec_module(self, module):
        pass  # already executed under its plain name


sys.meta_path.insert(0, _ProjectModuleUtils())


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
