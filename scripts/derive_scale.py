#!/usr/bin/env python3
"""Time the controller-side derivations that read the whole pod, per DGX against once per play (issue 19).

    .venv/bin/python scripts/derive_scale.py [--dgx 16 64 128]

For each size, a pod generated from the 004 reference (tests/unit/big_pod.py) and three plays on its DGX, each
with ``connection: local`` and run inside ``unshare -n`` (no host is contacted; the inventory's addresses are
real-world ones):
- ``none``: the three tasks below, skipped - Ansible's own cost of three tasks on every DGX;
- ``per-host``: the NFS mount plan, the ping targets and the containers' pinned known_hosts derived by every DGX for
  itself with the one-host filters (``pod_nfs_mount_plan``, ``pod_ping_targets``, ``ngc_container_host_keys`` +
  ``ngc_known_hosts``), as the roles did before: each reads every node's variables;
- ``once``: all three derived once for the play (``pod_nfs_mount_plans``, ``pod_ping_target_map``,
  ``ngc_pod_known_hosts``, ``run_once``), and every DGX picks its own entry, as roles/nfs_client, roles/dgx_network
  and roles/ngc_container do now.
Every play first registers a container host key on each DGX, as roles/ngc_container/tasks/keys.yml does.
Prints wall and CPU seconds and the derivations' cost (the play minus ``none``).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import big_pod  # noqa: E402
import task_floor  # noqa: E402

PROFILE_NFS = "(pod | pod_ra_profile).nfs | default({})"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDerivescaleDerivescaleDerivescaleDerivescale1"
PLAYS = {
    "none": [("NFS plan", "p", "inventory_hostname", "false"), ("Ping targets", "q", "inventory_hostname", "false"),
             ("Known hosts", "k", "inventory_hostname", "false")],
    "per-host": [
        ("NFS plan", "p", "inventory_hostname | pod_nfs_mount_plan(hostvars, groups, pod, %s, 'kernel', '')"
         % PROFILE_NFS, "true"),
        ("Ping targets", "q", "inventory_hostname | pod_ping_targets(hostvars, groups, pod)", "true"),
        ("Known hosts", "k", "groups['dgx'] | ngc_container_host_keys(hostvars, 'none', '')"
         " | ngc_known_hosts(hostvars, pod, 2222)", "true")],
    "once": [
        ("NFS plan", "p", "m_nfs.plans[inventory_hostname]", "true"),
        ("Ping targets", "q", "m_ping[inventory_hostname]", "true"),
        ("Known hosts", "k", "m_kh", "true")],
}
# every DGX's container host key, as roles/ngc_container/tasks/keys.yml registers it (one key for all: the
# known_hosts text only refuses an alias claimed twice)
KEYS = ("    - name: The container host keys as collected\n      ansible.builtin.set_fact:\n"
        "        ngc_container_node_keys: {public_key: \"%s\"}\n" % KEY)
ONCE = ("    - name: The maps, once for the play\n      ansible.builtin.set_fact:\n"
        "        m_nfs: \"{{ ansible_play_hosts | pod_nfs_mount_plans(hostvars, groups, pod, %s, 'kernel', '') }}\"\n"
        "        m_ping: \"{{ ansible_play_hosts | pod_ping_target_map(hostvars, groups, pod) }}\"\n"
        "        m_kh: \"{{ groups['dgx'] | ngc_pod_known_hosts(hostvars, 'none', pod, 2222) }}\"\n"
        "      run_once: true\n" % PROFILE_NFS)


def play_text(kind: str) -> str:
    """The playbook of one kind (``none``, ``per-host``, ``once``)."""
    out = "- name: Derivations, %s\n  hosts: dgx\n  connection: local\n  gather_facts: false\n  tasks:\n" % kind
    out += KEYS
    if kind == "once":
        out += ONCE
    for name, var, expr, when in PLAYS[kind]:
        out += "    - name: %s\n      ansible.builtin.set_fact:\n        %s: \"{{ %s }}\"\n      when: %s\n" % (
            name, var, expr, when)
    return out


def run(inventory: str, playbook: str) -> tuple:
    """(wall seconds, CPU seconds of ansible-playbook and its children) of one play, with no network."""
    try:
        return task_floor.run_playbook(inventory, playbook, task_floor.playbook_env(), ("unshare", "-n"),
                                       "derive_scale")
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dgx", type=int, nargs="+", default=[16, 64, 128])
    args = ap.parse_args()
    print("| DGX | none: wall / CPU s | per-host: wall / CPU s | once: wall / CPU s "
          "| derivations per-host -> once, wall s |")
    print("|---|---|---|---|---|")
    for n in args.dgx:
        with tempfile.TemporaryDirectory(prefix="derive-scale-") as tmp:
            inv = big_pod.generate(tmp, n)
            got = {}
            for kind in ("none", "per-host", "once"):
                path = os.path.join(tmp, kind + ".yml")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(play_text(kind))
                got[kind] = run(inv, path)
        base = got["none"][0]
        print("| %d | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f -> %.1f |" % (
            n, *got["none"], *got["per-host"], *got["once"], got["per-host"][0] - base, got["once"][0] - base))


if __name__ == "__main__":
    main()
