#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: validate the pod model before anything is contacted."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_preflight
short_description: Validate a DGX pod model (schema and cross-checks) on the controller
description:
  - Checks the pod model held in the inventory (see docs/pod-model.md) - types, required keys,
    unknown keys, and cross-checks such as duplicate IPs or host names, an address outside its
    fabric subnet, a NIC cabled to a port that does not exist or to a port already in use, a host
    MTU that does not fit the switch port MTU, an unknown RA profile, a bad switch VLAN or SVI
    address, and a NIC whose address is outside the SVI subnet of the VLAN of its switch port.
  - Also two NICs of one host on one fabric (subnet), a DGX with no data NIC, a switch port used whole while
    one of its breakout lanes is cabled, an NFS export that is not an absolute path, a scripts mount on a data
    mount's path, a scripts server no DGX can reach over a storage fabric, a Spectrum Scale file system listed
    twice; and, reading the inventory files themselves, a key written twice in one mapping, a file Ansible
    cannot parse (a tab) and a host_vars/group_vars file named like a host or group but for the case.
  - Each finding names the inventory file and line that defines the key, the key, and the fix. A finding on a
    value the host inherits from group_vars names the group_vars line; the same mistake in many hosts is one
    finding that lists the other hosts (C(more_hosts)).
  - Reads only the variables passed to it and the inventory files (to name the file); contacts no
    host or switch. Meant to run on localhost before any other play.
version_added: "0.1.0"
options:
  hosts:
    description:
      - "Per-host model variables: a mapping of host name to that host's C(group_names), C(pod),
        C(nics), C(dgx_model), C(gpus), C(storage_node), C(switch) and C(ansible_host).
        Build it with the C(pod_model_vars) filter."
      - Without it, only the inventory files are read (see O(inventory_groups)).
    type: dict
  inventory_groups:
    description:
      - "The inventory's groups (the C(groups) magic variable). With it and without O(hosts), only the inventory
        files are read: a file Ansible cannot parse (a tab in the indentation), a key written twice in one mapping,
        a host_vars/group_vars file named like a host or group but for the case. Run this first: it reads no
        host's variables, so it reports such a file with its line before Ansible fails on it with no file named."
    type: dict
  inventory_sources:
    description:
      - The inventory sources (C(ansible_inventory_sources)); used to name the file that defines
        a key in each finding.
    type: list
    elements: path
    default: []
  profiles_dir:
    description: Directory of RA profile files (C(<name>.yml)); C(pod.ra_profile) must name one.
    type: path
    required: true
  pfc_priority:
    description:
      - The PFC no-drop priority the DGX hosts use on RoCE-lossless fabrics (C(dgx_network_pfc_priority)).
        Every switch port facing such a NIC must have PFC on this priority.
    type: int
    default: 3
  host_pfc_priorities:
    description:
      - Per-host PFC priority where a host sets its own C(dgx_network_pfc_priority), as a dict of host to priority;
        hosts not listed use O(pfc_priority).
    type: dict
    default: {}
  switch_options:
    description:
      - Per-switch C(switch_config_options) as set in the inventory, as a dict of switch to options.
        The switch side of the PFC cross-check uses each switch's own C(pfc_priority), as the switch_config role does.
    type: dict
    default: {}
  fail_on_warnings:
    description: Treat warnings as errors.
    type: bool
    default: false
notes:
  - Supports check mode (it never changes anything).
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Validate the pod model
  pod_preflight:
    hosts: "{{ groups['all'] | pod_model_vars(hostvars) }}"
    inventory_sources: "{{ ansible_inventory_sources }}"
    profiles_dir: "{{ playbook_dir }}/../profiles"
"""

RETURN = r"""
problems:
  description: On failure, one readable line per error (file:line, key, problem, fix).
  returned: failed
  type: list
  elements: str
findings:
  description: Every finding, errors first.
  returned: success
  type: list
  elements: dict
  sample:
    - severity: error
      source: inventories/dgxpod/host_vars/DGX1-2.yml:9
      host: DGX1-2
      key: nics[0].address
      message: 10.55.5.231 is already used by DGX1-1 nics[0]
      fix: give every NIC its own address
      text: "ERROR inventories/dgxpod/host_vars/DGX1-2.yml:9: nics[0].address (host DGX1-2): ..."
errors:
  description: Number of errors.
  returned: always
  type: int
warnings_count:
  description: Number of warnings.
  returned: always
  type: int
summary:
  description: Counts of what the model holds (hosts per role group, fabrics, cabled ports).
  returned: always
  type: dict
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.model import (errors, group_findings,
    model_from_hostvars, natural_key, validate)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.sources import locate, locate_scope, scan_inventory
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import cross_check


def _groups(hosts, host):
    return (hosts.get(host) or {}).get("group_names") or [] if host else []


def run(hosts, inventory_sources, profiles_dir, pfc_priority=3, host_pfc_priorities=None, switch_options=None):
    """Validate; return (findings, summary). Pure apart from reading inventory and profile files."""
    profiles = sorted(os.path.splitext(os.path.basename(p))[0]
                      for p in glob.glob(os.path.join(profiles_dir, "*.yml")))
    model = model_from_hostvars(hosts)
    findings = validate(model, profiles)
    if not errors(findings):
        # host/switch QoS and subnet agreement needs a sound model (it derives each switch's config); MTU is
        # checked above already, so only the PFC and VLAN subnet findings are added here
        findings += [f for f in cross_check(model, None, pfc_priority, switch_options or {},
                                            host_pfc_priorities or {})
                     if f.message.startswith(("PFC mismatch", "VLAN subnet mismatch"))]
    for f in findings:
        if f.cause is not None:
            # an inherited value: name the group_vars line that sets it, not every host's NIC
            c_host, c_var, c_path, c_fix = f.cause
            source, scope = locate_scope(inventory_sources, c_host, _groups(hosts, c_host), c_var, c_path)
            if source is not None and scope in (1, 2):
                f.source, f.var, f.path, f.fix, f.inherited = source, c_var, c_path, c_fix, True
        if f.source is None:
            f.source = locate(inventory_sources, f.host, _groups(hosts, f.host), f.var, f.path)
    files = scan_inventory(inventory_sources, hosts, {g for h in hosts.values() for g in (h or {}).get(
        "group_names") or []})
    misnamed = {f.host: f.source for f in files if f.host and "case-sensitively" in f.message}
    for f in findings:
        if f.host in misnamed and f.message.startswith("required for hosts"):
            f.fix += " (%s exists but is not read: its name differs from %s in case)" % (misnamed[f.host], f.host)
    findings = group_findings(files + findings)
    findings.sort(key=lambda f: (f.severity != "error", natural_key(f.source), f.path))
    roles = {}
    for info in model["hosts"].values():
        for g in info["groups"]:
            if g in ("dgx", "storage", "switches"):
                roles[g] = roles.get(g, 0) + 1
    pod = model.get("pod") if isinstance(model.get("pod"), dict) else {}
    summary = {"pod": pod.get("name"), "ra_profile": pod.get("ra_profile"),
               "simulated": bool(pod.get("simulated")), "hosts": roles,
               "fabrics": len(pod.get("fabrics") or []) if isinstance(pod.get("fabrics"), list) else 0,
               "profiles": profiles}
    return findings, summary


def scan_files(inventory_groups, inventory_sources):
    """The inventory files alone (no host variables): parse errors, duplicate keys, misnamed var files."""
    host_names = sorted({h for members in (inventory_groups or {}).values() for h in members or []})
    return group_findings(scan_inventory(inventory_sources, host_names, list(inventory_groups or {})))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            hosts=dict(type="dict"),
            inventory_groups=dict(type="dict"),
            inventory_sources=dict(type="list", elements="path", default=[]),
            profiles_dir=dict(type="path", required=True),
            fail_on_warnings=dict(type="bool", default=False),
            pfc_priority=dict(type="int", default=3),
            host_pfc_priorities=dict(type="dict", default={}),
            switch_options=dict(type="dict", default={}),
        ),
        required_one_of=[("hosts", "inventory_groups")],
        supports_check_mode=True,
    )
    p = module.params
    if not os.path.isdir(p["profiles_dir"]):
        module.fail_json(msg="profiles_dir %s is not a directory" % p["profiles_dir"])
    if p["hosts"] is None:
        findings, summary = scan_files(p["inventory_groups"], p["inventory_sources"]), {}
    else:
        findings, summary = run(p["hosts"], p["inventory_sources"], p["profiles_dir"], p["pfc_priority"],
                                p["host_pfc_priorities"], p["switch_options"])
    errs = errors(findings)
    warns = [f for f in findings if f.severity != "error"]
    result = dict(changed=False, findings=[f.as_dict() for f in findings], errors=len(errs),
                  warnings_count=len(warns), summary=summary)
    bad = errs + (warns if p["fail_on_warnings"] else [])
    if bad:
        # Only the readable lines on failure: the callback prints every key of a failed result.
        module.fail_json(msg="pod model: %d error(s); no host or switch was contacted. Fix the "
                         "inventory and run again." % len(bad),
                         problems=[f.format() for f in bad], errors=len(errs),
                         warnings_count=len(warns))
    for w in warns:
        module.warn(w.format())
    module.exit_json(**result)


if __name__ == "__main__":
    main()
