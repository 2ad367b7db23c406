"""Helpers shared by the switch tests (imported by test_switch_*.py): reference pod models, paths."""
from __future__ import annotations

import functools
import os
from typing import Any, Dict

from inventory_util import REFERENCE, ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import model_from_hostvars

GOLDEN = os.path.join(ROOT, "tests", "golden", "switches")
FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "switch")
INVENTORY_FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "inventories")
# Test pods with golden switch configs besides the reference ones (no reference pod runs Onyx).
TEST_PODS = ["onyx-pod"]
__all__ = ["GOLDEN", "FIXTURES", "REFERENCE", "ROOT", "TEST_PODS", "inventory_path", "pod_model_of"]


def inventory_path(inv: str) -> str:
    """A reference inventory (inventories/<inv>) or a test inventory (tests/unit/fixtures/inventories/<inv>)."""
    fixture = os.path.join(INVENTORY_FIXTURES, inv)
    return fixture if os.path.isdir(fixture) else os.path.join(ROOT, "inventories", inv)


@functools.cache
def _model(inv: str) -> Dict[str, Any]:
    return model_from_hostvars(hostvars(inventory_path(inv)))


def pod_model_of(inv: str) -> Dict[str, Any]:
    """The pod model of a reference or test inventory, as Ansible sees it (a fresh deep copy each call)."""
    import copy
    return copy.deepcopy(_model(inv))


def eos_section(lines, header):
    """The indented lines of an EOS section (``interface Ethernet1/1``, ``vlan 10``) in rendered config lines."""
    i = lines.index(header)
    out = []
    for ln in lines[i + 1:]:
        if not ln.startswith("   "):
            break
        out.append(ln)
    return out
