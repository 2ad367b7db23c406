"""Run a role's playbook for real on localhost without network (`unshare -n`), as the role tests do, and read
the recap."""
from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict

from inventory_util import ROOT

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
ANSIBLE = os.path.join(ROOT, ".venv", "bin", "ansible")


def run_module(name: str, args: Dict[str, Any], check: bool = False, diff: bool = False) -> Dict[str, Any]:
    """One of the project's modules run once on localhost (connection local) through `ansible`, with the project's
    ansible.cfg: its result as the json callback reports it."""
    argv = [ANSIBLE, "localhost", "-c", "local", "-m", name, "-a", json.dumps(args)]
    argv += ["--check"] * check + ["--diff"] * diff
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    return doc["plays"][0]["tasks"][0]["hosts"]["localhost"]


def run_offline(inv: str, play: str, *extra: str) -> str:
    """stdout of `ansible-playbook -i inv play *extra` inside `unshare -n` with the project's ansible.cfg and roles;
    the test fails with the end of the output when the play fails."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"),
               PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])
    res = subprocess.run(["unshare", "-n", ANSIBLE_PLAYBOOK, "-i", inv, play, *extra], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    return res.stdout


def changed_by_host(out: str, prefix: str = "node-") -> Dict[str, int]:
    """{host: changed=} from the PLAY RECAP lines of the hosts whose names start with ``prefix``."""
    recap = [ln for ln in out.splitlines() if ln.startswith(prefix) and "changed=" in ln]
    return {ln.split()[0]: int(ln.split("changed=")[1].split()[0]) for ln in recap}
