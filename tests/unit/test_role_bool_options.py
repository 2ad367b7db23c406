"""Every boolean role option is read through ``| bool`` wherever a role's tasks or templates decide on it.

``-e dgx_network_verify=false`` on the command line gives the *string* "false". The role's argument_specs
validation accepts it (it converts a copy), but a bare ``when: dgx_network_verify and not ansible_check_mode``
is then true - "false" is a non-empty string - and the mesh ran although the user turned it off (found in
session 16 while bisecting the 16-DGX hang). ``| bool`` reads "false", "no", "0" and false alike.
Parsed, not grepped: ``when``-style keys are whole expressions, other strings only inside ``{{ }}`` / ``{% %}``;
task names and plain text are not expressions.
"""
from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from inventory_util import ROOT

CONDITION_KEYS = ("when", "failed_when", "changed_when", "until")
JINJA = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.S)


def bool_options(role: str) -> set:
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as fh:
        specs = yaml.safe_load(fh)["argument_specs"]
    return {name for entry in specs.values() for name, opt in (entry.get("options") or {}).items()
            if opt.get("type") == "bool"}


def expressions(node, key=None):
    """Every Jinja expression in a parsed task file: (key, expression)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "name":
                continue
            yield from expressions(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item, key)
    elif isinstance(node, str):
        if key in CONDITION_KEYS:
            yield key, node
        for m in JINJA.finditer(node):
            yield key, m.group(1) or m.group(2)


def bare_uses(options: set, expression: str) -> list:
    return [name for name in sorted(options)
            if re.search(r"\b%s\b(?!\s*\|\s*bool\b)(?!\s*\|\s*default\([^)]*\)\s*\|\s*bool\b)" % re.escape(name),
                         expression)]


ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
               for p in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")))


@pytest.mark.parametrize("role", ROLES)
def test_boolean_options_are_read_through_the_bool_filter(role):
    options = bool_options(role)
    bare = []
    base = os.path.join(ROOT, "roles", role)
    task_files = glob.glob(os.path.join(base, "tasks", "*.yml")) + glob.glob(os.path.join(base, "handlers", "*.yml"))
    for path in sorted(task_files):
        with open(path) as fh:
            data = yaml.safe_load(fh)
        for key, expr in expressions(data):
            bare += ["%s (%s): %s" % (os.path.relpath(path, ROOT), key, name) for name in bare_uses(options, expr)]
    for path in sorted(glob.glob(os.path.join(base, "templates", "*"))):
        with open(path) as fh:
            text = fh.read()
        for m in JINJA.finditer(text):
            expr = m.group(1) or m.group(2)
            bare += ["%s: %s" % (os.path.relpath(path, ROOT), name) for name in bare_uses(options, expr)]
    assert not bare, "boolean options used without | bool (a '-e name=false' string would count as true):\n" + \
        "\n".join(bare)


def test_the_check_finds_a_bare_use():
    assert bare_uses({"x_verify"}, " x_verify and not ansible_check_mode") == ["x_verify"]
    assert bare_uses({"x_verify"}, " x_verify | bool and y") == []
    assert bare_uses({"x_verify"}, " x_verify_fail") == []
    task = {"name": "uses x_verify", "when": "x_verify", "debug": {"msg": "{{ 1 if x_verify else 2 }}"}}
    found = list(expressions([task]))
    assert [bare_uses({"x_verify"}, e) for _, e in found] == [["x_verify"], ["x_verify"]]
