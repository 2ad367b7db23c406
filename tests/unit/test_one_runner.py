"""One way for a module to run a tool (issue 38): every file in library/ and module_utils/ runs commands through
module_utils/common/run.py (run_tool, start_tool: bounded, the process group killed, LC_ALL=C), never subprocess,
AnsibleModule.run_command, os.system/popen/exec*/spawn*, pty or asyncio's subprocesses directly. The one fork
allowed besides is common/bounded_run.call_bounded's: a Python function in a child, not a tool."""
from __future__ import annotations

import ast
import os

from inventory_util import ROOT

MODULE_UTILS = os.path.join("ansible_collections", "dgxpod", "toolkit", "plugins", "module_utils")
RUNNER = os.path.join(MODULE_UTILS, "common", "run.py")
FORK_ALLOWED = {os.path.join(MODULE_UTILS, "common", "bounded_run.py")}
MODULES = ("subprocess", "pty", "popen2", "commands")
OS_CALLS = ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp")
OS_PREFIXES = ("exec", "spawn")


def _os_call(name):
    return name in OS_CALLS or name.startswith(OS_PREFIXES)


def offences(source, rel="<text>"):
    """["<file>:<line>: <what>"] for each way ``source`` runs a process other than through common/run.py."""
    out = []
    fork_ok = rel in FORK_ALLOWED
    for node in ast.walk(ast.parse(source, rel)):
        if isinstance(node, ast.Import):
            out += ["%s:%d: import %s" % (rel, node.lineno, a.name) for a in node.names
                    if a.name.split(".")[0] in MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in MODULES or node.module == "asyncio.subprocess":
                out.append("%s:%d: from %s import" % (rel, node.lineno, node.module))
            elif node.module == "os":
                out += ["%s:%d: from os import %s" % (rel, node.lineno, a.name) for a in node.names
                        if _os_call(a.name) and not (fork_ok and a.name == "fork")]
        elif isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr == "run_command":
                out.append("%s:%d: .run_command" % (rel, node.lineno))
            elif base == "os" and _os_call(node.attr) and not (fork_ok and node.attr == "fork"):
                out.append("%s:%d: os.%s" % (rel, node.lineno, node.attr))
            elif base == "asyncio" and node.attr.startswith("create_subprocess"):
                out.append("%s:%d: asyncio.%s" % (rel, node.lineno, node.attr))
            elif node.attr == "Popen":
                out.append("%s:%d: .Popen" % (rel, node.lineno))
    return out


def _product_files():
    for d in ("library", MODULE_UTILS):
        for base, subdirs, files in os.walk(os.path.join(ROOT, d)):
            subdirs[:] = [s for s in subdirs if s != "__pycache__"]
            for f in sorted(files):
                if f.endswith(".py"):
                    yield os.path.relpath(os.path.join(base, f), ROOT)


def test_every_module_runs_tools_through_the_runner():
    found = []
    seen = 0
    for rel in _product_files():
        if rel == RUNNER:
            continue
        seen += 1
        with open(os.path.join(ROOT, rel)) as fh:
            found += offences(fh.read(), rel)
    assert seen > 50  # library/ and module_utils/ were read
    assert found == [], "run tools with module_utils/common/run.py (run_tool / start_tool):\n" + "\n".join(found)


def test_the_rule_catches_every_other_way():
    """Each way the modules ran commands before issue 38 (and the other ways Python has) is caught."""
    bad = {
        "import subprocess\nsubprocess.run(['ls'])": 1,
        "from subprocess import run, PIPE": 1,
        "rc, out, err = module.run_command(['ip', 'link'])": 1,
        "import os\nos.system('ls')": 1,
        "import os\nos.popen('ls')": 1,
        "import os\nos.execvp('ls', ['ls'])": 1,
        "import os\nos.spawnlp(os.P_WAIT, 'ls', 'ls')": 1,
        "import os\nos.posix_spawnp('ls', ['ls'], {})": 1,
        "import os\npid = os.fork()": 1,
        "from os import system": 1,
        "import pty\npty.spawn(['ls'])": 1,
        "import asyncio\nasyncio.create_subprocess_exec('ls')": 1,
        "p = sp.Popen(['ls'])": 1,
    }
    for source, count in bad.items():
        assert len(offences(source)) >= count, source
    good = ("from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool\n"
            "r = run_tool(['ip', '-j', 'addr', 'show'], 30)\nrun = r.rc\nos.path.join('a')\n")
    assert offences(good) == []
    assert offences("import os\npid = os.fork()", next(iter(FORK_ALLOWED))) == []  # call_bounded's child
