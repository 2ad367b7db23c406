"""Every module in library/ documents itself for ansible-doc (DOCUMENTATION, EXAMPLES, RETURN parse)."""
from __future__ import annotations

import glob
import json
import os
import subprocess

import pytest

from inventory_util import ROOT

MODULES = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "library", "*.py")))


@pytest.mark.parametrize("module", MODULES)
def test_ansible_doc(module):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-doc"), "--json", module],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)[module]
    assert doc["doc"]["short_description"]
    assert doc["examples"].strip() and doc["return"]
    assert "check mode" in json.dumps(doc["doc"]).lower() or "check_mode" in json.dumps(doc).lower()


@pytest.mark.parametrize("module", MODULES)
def test_ansible_doc_renders_as_text(module):
    """The text page too: it reads every description line as a string, so a plain YAML line holding ': '
    (parsed as a mapping; --json shows it without complaint) fails here. The author comes from the
    dgxpod.toolkit.toolkit_module fragment."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-doc"), "-M", "library", "-t", "module", module],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "DGX pod toolkit contributors" in res.stdout
