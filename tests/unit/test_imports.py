"""One import style (docs/architecture.md, "Imports"): the filter and vars plugins reach module_utils/ through the one
bootstrap in ansible_collections/dgxpod/toolkit, never by editing sys.path themselves; a real ansible-playbook run
on localhost loads every filter plugin that uses module_utils and gets the same answers Python does."""
from __future__ import annotations

import os
import re
import subprocess

import yaml
from inventory_util import ROOT

from ansible_collections.dgxpod.toolkit.plugins.module_utils import project_module_utils as bootstrap

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
PRODUCT = ("roles", "module_utils", "library", "filter_plugins", "vars_plugins")
BOOTSTRAP_IMPORT = "import ansible_collections.dgxpod.toolkit.plugins.module_utils.project_module_utils"


def _py_files(*dirs):
    for d in dirs:
        for base, _dirs, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith(".py"):
                    yield os.path.join(base, f)


def test_no_product_file_edits_sys_path():
    offenders = [os.path.relpath(p, ROOT) for p in _py_files(*PRODUCT)
                 if re.search(r"sys\.path\.(insert|append)|sys\.path\[", open(p).read())]
    assert offenders == []


def test_every_plugin_that_imports_module_utils_starts_with_the_bootstrap():
    ours = {f[:-3] for f in os.listdir(os.path.join(ROOT, "module_utils")) if f.endswith(".py")}
    checked = 0
    for path in _py_files("filter_plugins", "vars_plugins"):
        text = open(path).read()
        uses = [m.start() for m in re.finditer(r"(?m)^(?:from|import) (\w+)", text) if m.group(1) in ours]
        if uses:
            checked += 1
            assert BOOTSTRAP_IMPORT in text and text.index(BOOTSTRAP_IMPORT) < min(uses), os.path.relpath(path, ROOT)
    assert checked >= 8  # seven filter files and the vars plugin


def test_module_utils_dirs_keep_ansibles_order_then_the_projects(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    project = os.path.realpath(os.path.join(ROOT, "module_utils"))
    assert bootstrap.module_utils_dirs([str(b), str(a)]) == [str(b), str(a), project]
    # a missing directory is left out, a repeated one (or the project's own, named another way) counted once
    assert bootstrap.module_utils_dirs([str(tmp_path / "gone"), str(a), str(a) + "/", project + "/../module_utils"]) \
        == [str(a), project]
    assert bootstrap.module_utils_dirs([]) == [project]


PLAY = """
- name: Every filter plugin that uses module_utils, on the controller
  hosts: localhost
  gather_facts: false
  vars:
    ansible_connection: local
  tasks:
    - name: One filter of each plugin file
      ansible.builtin.copy:
        dest: "{{ out }}"
        mode: "0644"
        content: "{{ proof | to_nice_json }}"
      vars:
        proof:
          nccl: "{{ ['a', 'b', 'c', 'd'] | pod_nccl_pair_rounds }}"
          ngc: "{{ ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDZ mpi'] | ngc_authorized_keys }}"
          perf: "{{ ['/mnt/a'] | pod_fio_files(2) }}"
          pod: "{{ groups['all'] | pod_hosts_entries(hostvars, groups, pod) }}"
          slurm: "{{ {} | slurm_drain_plan(groups['dgx']) }}"
          switch: "{{ groups['all'] | pod_model_vars(hostvars) | switch_structured('sim-sw1') | switch_render }}"
          training: "{{ hostvars | pod_training_mount_map(groups['dgx']) }}"
"""


def test_filters_load_in_a_real_playbook_run(tmp_path):
    """ansible-playbook from another directory (only ANSIBLE_CONFIG names the project), the simulator's inventory
    read for its variables only (the play runs on localhost, connection local, and contacts nobody)."""
    play, out = tmp_path / "proof.yml", tmp_path / "proof.json"
    play.write_text(PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="False")
    env.pop("PYTHONPATH", None)
    res = subprocess.run([ANSIBLE_PLAYBOOK, "-i", os.path.join(ROOT, "inventories", "sim"), str(play),
                          "-e", "out=%s" % out], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "Skipping plugin" not in res.stdout + res.stderr
    got = yaml.safe_load(out.read_text())

    from filter_plugins import ngc, perf, slurm
    assert got["nccl"][0] == {"round": 1, "pairs": [["a", "d"], ["b", "c"]]} and len(got["nccl"]) == 3
    assert got["ngc"] == ngc.ngc_authorized_keys(["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDZ mpi"])
    assert got["perf"] == perf.pod_fio_files(["/mnt/a"], 2)
    assert {"name": "sim-dgx1", "address": "198.18.66.11"} in got["pod"]
    assert got["slurm"] == slurm.slurm_drain_plan({}, ["sim-dgx1"])
    assert got["switch"].splitlines()[1] == "hostname sim-sw1"
    assert isinstance(got["training"], dict)


def test_module_utils_imports_are_at_module_scope():
    """Mitogen's module finder (mitogen.imports.codeobj_imports) ships only the imports it sees at module scope:
    one inside a function made pod_report_write fail under ANSIBLE_STRATEGY=mitogen_linear (module_utils/stages.py).
    """
    import ast
    ours = {f[:-3] for f in os.listdir(os.path.join(ROOT, "module_utils")) if f.endswith(".py")}
    offenders = []
    for path in _py_files("module_utils", "library"):
        tree = ast.parse(open(path).read(), path)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("ansible.module_utils"):
                    continue
                names = [a.name for a in node.names] if node.module == "ansible.module_utils" else [node.module]
                if any(n.split(".")[-1] in ours for n in names):  # the project's, not Ansible's own (basic, ...)
                    offenders.append("%s:%d from %s import %s" % (os.path.relpath(path, ROOT), node.lineno,
                                                                  node.module, names))
    assert not offenders, offenders
