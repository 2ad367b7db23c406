"""What every podsim module uses: where the state and the inventory live, logging, running a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SIM_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # sim/
REPO = os.path.dirname(SIM_DIR)


def state_dir() -> str:
    return os.path.abspath(os.environ.get("PODSIM_STATE", os.path.join(SIM_DIR, ".state")))


def inventory_path() -> str:
    return os.environ.get("PODSIM_INVENTORY", os.path.join(REPO, "inventories", "sim", "hosts.yml"))


class Paths:
    def __init__(self, root: str):
        self.root = root
        self.state = os.path.join(root, "state.json")
        self.lock = os.path.join(root, "lock")
        self.key = os.path.join(root, "id_ed25519")
        self.known_hosts = os.path.join(root, "known_hosts")
        self.ifs = os.path.join(root, "ifs")
        self.keys = os.path.join(root, "keys")  # per-node host keys, kept across down
        self.nodes = os.path.join(root, "nodes")  # per-node runtime dirs, removed by down

    def node(self, name: str) -> str:
        return os.path.join(self.nodes, name)

    def hostkey(self, name: str) -> str:
        return os.path.join(self.keys, name, "ssh_host_ed25519_key")


def log(msg: str) -> None:
    print("podsim: " + msg, flush=True)


def die(msg: str, code: int = 1) -> None:
    print("podsim: error: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def require_root() -> None:
    if os.geteuid() != 0:
        die("must run as root (network namespaces, bridges, mounts)")


def run(cmd: list[str], check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, input=input, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, (p.stderr or p.stdout).strip()))
    return p


def ip_json(args: list[str]) -> list:
    p = run(["ip", "-j"] + args, check=False)
    if p.returncode != 0 or not p.stdout.strip():
        return []
    return json.loads(p.stdout)


def write_file(path: str, text: str, mode: int = 0o644, only_if_missing: bool = False) -> None:
    if only_if_missing and os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
