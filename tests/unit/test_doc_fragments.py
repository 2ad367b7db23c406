"""The doc fragments of the in-repo collection (ansible_collections/dgxpod/toolkit/plugins/doc_fragments/) say the
same as the argument specs they document: every option, its type, default, required and choices. ansible-doc
merging them into each module is tested by test_module_docs.py (and the rendered option list by hand)."""
from __future__ import annotations

import importlib.util
import os

import pytest
import yaml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.mpi_job import mpi_container_argument_spec
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_run import mm_argument_spec
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.launch import ARGUMENT_SPEC as SLURM_ARGUMENT_SPEC
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import connection_argument_spec

from inventory_util import ROOT

FRAGMENTS = os.path.join(ROOT, "ansible_collections", "dgxpod", "toolkit", "plugins", "doc_fragments")


def _fragment(name, attr="DOCUMENTATION"):
    spec = importlib.util.spec_from_file_location("fragment_" + name, os.path.join(FRAGMENTS, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return yaml.safe_load(getattr(mod.ModuleDocFragment, attr))["options"]


def _as_spec(options):
    out = {}
    for name, o in options.items():
        assert o.get("description"), name
        spec = {"type": o["type"]}
        for key in ("required", "default", "choices", "elements"):
            if key in o:
                spec[key] = o[key]
        out[name] = spec
    return out


def _plain(spec):
    return {name: {k: v for k, v in s.items() if k != "no_log"} for name, s in spec.items()}


@pytest.mark.parametrize("fragment,attr,spec", [
    ("mpi_container", "DOCUMENTATION", mpi_container_argument_spec()),
    ("switch_connection", "DOCUMENTATION", connection_argument_spec()),
    ("slurm_launch", "DOCUMENTATION", SLURM_ARGUMENT_SPEC),
    # command_timeout: each Spectrum Scale module documents its own default (60 s a read, 300 s a join)
    ("scale_commands", "DOCUMENTATION", {k: v for k, v in mm_argument_spec(60).items() if k != "command_timeout"}),
])
def test_fragment_documents_its_argument_spec(fragment, attr, spec):
    assert _as_spec(_fragment(fragment, attr)) == _plain(spec)


def test_engine_fragment_is_the_engine_part_of_the_mpi_container_one():
    engine = _fragment("mpi_container", "ENGINE")
    assert set(engine) == {"engine", "engine_args"}
    assert {k: v for k, v in _fragment("mpi_container").items() if k in engine} == engine
