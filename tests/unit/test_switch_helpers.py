"""Helpers shared by the switch tests (imported by test_switch_*.py): reference pod models, paths."""
from __future__ import annotations

import functools
import os
from typing import Any, Dict

from inventory_util import REFERENCE, ROOT, hostvars
from pod_model import model_from_hostvars

GOLDEN = os.path.join(ROOT, "tests", "golden", "switches")
FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "switch")
__all__ = ["GOLDEN", "FIXTURES", "REFERENCE", "ROOT", "pod_model_of"]


@functools.cache
def _model(inv: str) -> Dict[str, Any]:
    return model_from_hostvars(hostvars(os.path.join(ROOT, "inventories", inv)))


def pod_model_of(inv: str) -> Dict[str, Any]:
    """The pod model of a reference inventory, as Ansible sees it (a fresh deep copy each call)."""
    import copy
    return copy.deepcopy(_model(inv))
