"""One import style (docs/architecture.md, "Imports"): the module_utils are packages of the in-repo collection and
every module, module_util, plugin, test and script imports them by their full name,
``ansible_collections.dgxpod.toolkit.plugins.module_utils.<package>.<name>``: no plain names, no
``ansible.module_utils.<ours>``, no try/except ImportError, no file that edits sys.path. A real ansible-playbook run
on localhost loads every filter plugin that uses module_utils and gets the same answers Python does."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys

import yaml
from inventory_util import ROOT

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
PACKAGE = "ansible_collections.dgxpod.toolkit.plugins.module_utils"
MODULE_UTILS = os.path.join("ansible_collections", "dgxpod", "toolkit", "plugins", "module_utils")
PRODUCT = ("roles", MODULE_UTILS, "library", "filter_plugins", "vars_plugins", "strategy_plugins")
EVERYWHERE = PRODUCT + ("tests", "scripts", "sim")


SIM_STATE = os.path.join(ROOT, "sim", ".state")


def _py_files(*dirs):
    """The .py files under ``dirs``, not the simulator's run state (sim/.state: the nodes' image layers while a
    pod-in-a-box is up) - not code of this repository."""
    for d in dirs:
        for base, subdirs, files in os.walk(os.path.join(ROOT, d)):
            subdirs[:] = [s for s in subdirs if os.path.join(base, s) != SIM_STATE]
            for f in files:
                if f.endswith(".py"):
                    yield os.path.join(base, f)


def _ours():
    """The plain names the module_utils had or could be imported by before they were packages: each file's name
    and its package-prefixed name (``pod/types.py``: ``pod_types``; ``slurm/job.py``: ``slurm_job``), leaving
    out the standard library's (``types``, ``cmd``), plus storage_plan (now storage/nfs_plan.py)."""
    out = {"storage_plan"}
    for path in _py_files(MODULE_UTILS):
        pkg, name = os.path.relpath(path, os.path.join(ROOT, MODULE_UTILS))[:-3].split(os.sep)
        if name != "__init__":
            out |= {name, "%s_%s" % (pkg, name)}
    return out - set(sys.stdlib_module_names)


def test_no_product_file_edits_sys_path():
    offenders = [os.path.relpath(p, ROOT) for p in _py_files(*PRODUCT)
                 if re.search(r"sys\.path\.(insert|append)|sys\.path\[", open(p).read())]
    assert offenders == []


def test_module_utils_are_packages_of_the_collection():
    """No flat module_utils/ left (an old checkout may keep the empty directory or its __pycache__: no .py file
    there); every package says in its __init__ docstring what is in it; each file in one."""
    old = os.path.join(ROOT, "module_utils")
    assert not os.path.isdir(old) or [f for f in os.listdir(old) if f.endswith(".py")] == []
    root = os.path.join(ROOT, MODULE_UTILS)
    packages = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and d != "__pycache__"]
    assert len(packages) >= 8
    for d in packages:
        init = os.path.join(root, d, "__init__.py")
        assert os.path.exists(init), d
        assert ast.get_docstring(ast.parse(open(init).read())), d
    assert [f for f in os.listdir(root) if f.endswith(".py")] == []  # only packages at the top


def test_one_import_style_everywhere():
    """Every import of a module_util names it in full; the old forms (plain name, ansible.module_utils.<ours>,
    a try/except ImportError pair of both) are gone from every file, product or not."""
    ours = _ours()
    offenders = []
    seen = 0
    for path in _py_files(*EVERYWHERE):
        tree = ast.parse(open(path).read(), path)
        rel = os.path.relpath(path, ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
                if node.module == "ansible.module_utils":
                    names = ["ansible.module_utils." + a.name for a in node.names]
            else:
                continue
            for name in names:
                if name.startswith(PACKAGE + "."):
                    seen += 1
                plain = name[len("ansible.module_utils."):] if name.startswith("ansible.module_utils.") else name
                if plain.split(".")[0] in ours and not name.startswith("ansible.module_utils.basic"):
                    offenders.append("%s:%d %s" % (rel, node.lineno, name))
    assert not offenders, offenders
    assert seen > 150


def test_module_utils_imports_are_at_module_scope():
    """Mitogen's module finder (mitogen.imports.codeobj_imports) ships only the imports it sees at module scope:
    one inside a function made pod_report_write fail under ANSIBLE_STRATEGY=mitogen_linear (report/stages.py)."""
    offenders = []
    for path in _py_files(MODULE_UTILS, "library"):
        tree = ast.parse(open(path).read(), path)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                    offenders.append("%s:%d from %s" % (os.path.relpath(path, ROOT), node.lineno, node.module))
    assert not offenders, offenders


def _floors_script():
    """scripts/import_floors.py, which holds the one FLOORS table (the script prints the graph, this test enforces
    it)."""
    spec = importlib.util.spec_from_file_location("import_floors_script", os.path.join(ROOT, "scripts",
                                                                                        "import_floors.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The floors of the module_utils packages (issue 38 item 4), bottom first: a package imports its own floor and those
# below, never one above; a new package gets a floor in scripts/import_floors.py FLOORS.
FLOORS = _floors_script().FLOORS
# Files outside module_utils that import it: each directory is a package of its own for the private-name rule.
IMPORTERS = ("library", "filter_plugins", "vars_plugins", "callback_plugins", "strategy_plugins")


def _module_name(path):
    """module_utils/<package>/<name>.py -> "package.name" (``__init__``: "package")."""
    rel = os.path.relpath(path, os.path.join(ROOT, MODULE_UTILS))[:-3].split(os.sep)
    return rel[0] if rel[-1] == "__init__" else ".".join(rel)


def _imports_of(path, modules):
    """(imported module, [names taken from it], line, {alias: module}) of every module_utils import in a file;
    ``from <PACKAGE>.drift import eval as drift_eval`` imports the module drift.eval."""
    out, aliases = [], {}
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
            base = node.module[len(PACKAGE) + 1:]
            names = []
            for a in node.names:
                sub = "%s.%s" % (base, a.name)
                if sub in modules:
                    out.append((sub, [], node.lineno))
                    aliases[a.asname or a.name] = sub
                else:
                    names.append(a.name)
            if names:
                out.append((base, names, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PACKAGE + "."):
                    out.append((a.name[len(PACKAGE) + 1:], [], node.lineno))
                    if a.asname:
                        aliases[a.asname] = a.name[len(PACKAGE) + 1:]
    return out, aliases


def _module_utils():
    return {_module_name(p): p for p in _py_files(MODULE_UTILS)}


def test_module_utils_packages_are_on_floors():
    """Every package has a floor (FLOORS), preflight is a package of its own above the model, the model holds no
    preflight check (pod defines no Finding), and no module imports a package on a higher floor than its own."""
    modules = _module_utils()
    packages = {m.split(".")[0] for m in modules}
    problems = ["package %s has no floor: add it to FLOORS" % p for p in sorted(packages - set(FLOORS))]
    problems += ["FLOORS names package %s, which does not exist" % p for p in sorted(set(FLOORS) - packages)]
    problems += ["%s defines Finding: the preflight finding lives in the preflight package" % m
                 for m, p in sorted(modules.items())
                 if m.split(".")[0] == "pod" and re.search(r"^class Finding\b", open(p).read(), re.M)]
    for mod, path in sorted(modules.items()):
        here = FLOORS.get(mod.split(".")[0], 0)
        for imported, _, line in _imports_of(path, modules)[0]:
            there = FLOORS.get(imported.split(".")[0], 0)
            if there > here:
                problems.append("%s:%d %s (floor %d) imports %s (floor %d)" % (
                    os.path.relpath(path, ROOT), line, mod, here, imported, there))
    assert problems == [], "\n".join(problems)


def test_no_private_name_is_imported_across_packages():
    """A name ``_x`` of a module_util is its package's own: no other package (nor a module, filter or plugin)
    imports it or reads it from an imported module (``mod._x``). Make it public, or move the caller."""
    modules = _module_utils()
    files = [(m.split(".")[0], p) for m, p in modules.items()]
    files += [(d, p) for d in IMPORTERS for p in _py_files(d)]
    offenders = []
    for pkg, path in files:
        imported, aliases = _imports_of(path, modules)
        rel = os.path.relpath(path, ROOT)
        for mod, names, line in imported:
            offenders += ["%s:%d imports %s from %s" % (rel, line, n, mod) for n in names
                          if n.startswith("_") and not n.startswith("__") and mod.split(".")[0] != pkg]
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and aliases[node.value.id].split(".")[0] != pkg:
                offenders.append("%s:%d reads %s.%s" % (rel, node.lineno, aliases[node.value.id], node.attr))
    assert offenders == [], "\n".join(offenders)


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
