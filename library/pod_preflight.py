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
  - Also values written as other tools take them (an address with its prefix, a subnet with a netmask, IPv6), empty
    or padded names, a storage node with no NIC on a storage fabric, NFS options the RA forbids (nolock on the scripts
    mount), a PFC priority outside 0..7, a storage protocol or DGX model the RA profile is not for; and, as
    warnings, a host_vars/group_vars file for no host or group, a top-level key Ansible reads as a variable
    nothing uses (C(nic:), C(mtu:) beside C(nics:)), and a var file Ansible never reads because another path for
    the same group or host comes first (C(group_vars/all.yml) beside a C(group_vars/all/) directory - only the
    directory is read; C(host_vars/h.yaml) beside C(host_vars/h.yml)).
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
  settings:
    description:
      - "Role variables the inventory sets beside the model, per host (the C(pod_settings_vars) filter): the NCCL/MPI
        environments, the container image and tag, ports, ranks per node. Checked against the model: HCAs no NIC
        has, a tag pasted twice or empty, two daemons on one port, more ranks than the DGX model's GPUs."
      - Without it, they are read from O(hosts).
    type: dict
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
import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import load_profile
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import model_from_hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.model import (errors, Finding, group_findings,
    natural_key, validate)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import (locate, locate_scope,
    scan_inventory, unread_inventory_values)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import cross_check
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.settings_checks import (check_settings,
    SETTINGS_VARS)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import inventory_yaml_files
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.text_checks import explained, scan_text
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import check_pod_validation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import (defined_twice,
    shadowed_findings, unread_file_keys)


def _groups(hosts, host):
    return (hosts.get(host) or {}).get("group_names") or [] if host else []


def _pfc_value(value):
    """A PFC priority (0..7, an int or its digits as Ansible may template it), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and 0 <= value <= 7 else None


def check_pfc_priorities(pfc_priority, host_pfc_priorities, switch_options):
    """The PFC priorities the hosts and switches are given: 802.1p priorities 0..7 (the RAs' RoCE uses 3)."""
    out = []
    fix = "use a priority from 0 to 7; RoCE lossless uses 3 (the switches' default)"
    if _pfc_value(pfc_priority) is None:
        out.append(Finding(None, "dgx_network_pfc_priority", "dgx_network_pfc_priority", "PFC priority %r is not "
                           "an 802.1p priority (0..7)" % (pfc_priority,), fix))
    for host, value in sorted((host_pfc_priorities or {}).items()):
        if _pfc_value(value) is None:
            f = Finding(host, "dgx_network_pfc_priority", "dgx_network_pfc_priority", "PFC priority %r is not an "
                        "802.1p priority (0..7)" % (value,), fix)
            f.cause = (host, "dgx_network_pfc_priority", "dgx_network_pfc_priority", fix)
            out.append(f)
    for switch, opts in sorted((switch_options or {}).items()):
        if isinstance(opts, dict) and opts.get("pfc_priority") is not None and _pfc_value(opts["pfc_priority"]) \
                is None:
            path = "switch_config_options.pfc_priority"
            f = Finding(switch, "switch_config_options", path, "PFC priority %r is not an 802.1p priority (0..7)" % (
                opts["pfc_priority"],), fix)
            f.cause = (switch, "switch_config_options", path, fix)
            out.append(f)
    return out


def _load_profile(profiles_dir, name):
    """The profile (module_utils/pod/profile.py, the one reader), or {} when it cannot be read."""
    try:
        return load_profile(name, profiles_dir)
    except ValueError:
        return {}


def check_profile(model, profiles_dir, profiles):
    """The pod against its RA profile: the storage protocol the RA is for (an error: the mounts and the storage
    checks would follow another RA) and its DGX models (a warning: sizing and thresholds would be another DGX's)."""
    pod = model.get("pod") if isinstance(model.get("pod"), dict) else {}
    name = pod.get("ra_profile")
    if not isinstance(name, str) or name not in profiles:
        return []
    profile = _load_profile(profiles_dir, name)
    others = {p: _load_profile(profiles_dir, p) for p in profiles if p != name}
    out = []
    any_host = next(iter(model.get("hosts") or {}), None)
    storage = pod.get("storage") if isinstance(pod.get("storage"), dict) else {}
    want, have = profile.get("storage_protocol"), storage.get("protocol")
    if isinstance(want, str) and isinstance(have, str) and have in ("nfs", "spectrum-scale") and have != want:
        fit = [p for p, prof in sorted(others.items()) if prof.get("storage_protocol") == have]
        out.append(Finding(any_host, "pod", "pod.storage.protocol", "RA profile '%s' is for %s storage, not %s" % (
            name, want, have), "set protocol: %s, or choose the RA profile of this storage%s" % (
                want, " (%s)" % ", ".join(fit) if fit else "")))
    models = profile.get("dgx_models")
    if isinstance(models, list) and models:
        for host, info in (model.get("hosts") or {}).items():
            dgx_model = (info.get("vars") or {}).get("dgx_model")
            if "dgx" in (info.get("groups") or []) and isinstance(dgx_model, str) and dgx_model in DGX_MODELS \
                    and dgx_model not in models:
                fit = [p for p, prof in sorted(others.items()) if dgx_model in (prof.get("dgx_models") or [])]
                out.append(Finding(host, "dgx_model", "dgx_model", "RA profile '%s' is for %s, not %s: validate.yml "
                                   "would size and judge the pod as the RA's DGX" % (name, ", ".join(models),
                                                                                    dgx_model),
                                   "check dgx_model, or choose the RA profile for %s%s" % (
                                       dgx_model, " (%s)" % ", ".join(fit) if fit else ""), severity="warning"))
    return out


def _hint_unread(findings, unread):
    """Add to a 'required ... not set' error the unread file or misspelt key that most likely meant to set it."""
    for f in findings:
        if f.severity != "error" or not f.message.startswith("required for hosts"):
            continue
        for u in unread:
            if u.host in (f.host, None) and ("did you mean '%s'?" % f.var) == u.fix:
                f.fix += " (%s sets '%s' instead, which Ansible does not read as %s)" % (u.source, u.var, f.var)
                break
            if u.host is None and u.var == "file" and u.fix.endswith("for host %s" % f.host):
                f.fix += " (%s is not read: no host has that name)" % u.source
                break


def _hint_twice(findings, twice):
    """A key called missing (or wrong) in a variable that two files set: say which file's value was dropped."""
    for f in findings:
        for t in twice:
            if t.severity == "error" and t.var == f.var and f.source and f.source.split(":")[0] == \
                    t.source.split(":")[0]:
                f.fix += " (%s is also set elsewhere and replaced by this file's: see the error on %s)" % (
                    t.var, t.source)
                break


def _hint_shadowed(findings, unread_keys):
    """A variable called missing that a var file Ansible never reads sets (group_vars/all.yml beside
    group_vars/all/): say so on the error, the warning on that file says why."""
    for f in findings:
        if f.severity == "error" and f.var in unread_keys and f.message.startswith((
                "required for hosts", "the %s variable is not defined" % f.var)):
            f.fix += " (%s sets '%s' but Ansible never reads that file: see the warning on it)" % (
                unread_keys[f.var], f.var)


def run(hosts, inventory_sources, profiles_dir, pfc_priority=3, host_pfc_priorities=None, switch_options=None,
        settings=None):
    """Validate; return (findings, summary). Pure apart from reading inventory and profile files. ``settings``:
    {host: {role variable: value}} of preflight.settings_checks.SETTINGS_VARS (default: read from ``hosts``)."""
    profiles = sorted(os.path.splitext(os.path.basename(p))[0]
                      for p in glob.glob(os.path.join(profiles_dir, "*.yml")))
    model = model_from_hostvars(hosts)
    findings = validate(model, profiles)
    findings += check_pfc_priorities(pfc_priority, host_pfc_priorities, switch_options)
    findings += check_profile(model, profiles_dir, profiles)
    if settings is None:
        settings = {h: {k: v for k, v in (hv or {}).items() if k in SETTINGS_VARS} for h, hv in hosts.items()}
    findings += check_settings(model, settings)
    findings += check_pod_validation(model, profiles_dir, profiles)
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
    group_names = {g for h in hosts.values() for g in (h or {}).get("group_names") or []}
    files = scan_inventory(inventory_sources, hosts, group_names)
    unread = unread_inventory_values(inventory_sources, hosts, group_names)
    _hint_unread(findings, unread)
    files += unread
    twice = defined_twice(inventory_sources, {h: _groups(hosts, h) for h in hosts})  # issue 46: one replaces the other
    _hint_twice(findings, twice)
    files += twice
    files += shadowed_findings(inventory_sources)  # issue 46: group_vars/all.yml beside group_vars/all/ is not read
    _hint_shadowed(findings, unread_file_keys(inventory_sources))
    misnamed = {f.host: f.source for f in files if f.host and "case-sensitively" in f.message}
    for f in findings:
        if f.host in misnamed and f.message.startswith("required for hosts"):
            f.fix += " (%s exists but is not read: its name differs from %s in case)" % (misnamed[f.host], f.host)
    text = scan_text(inventory_yaml_files(inventory_sources), hosts)  # look-alike characters, on/yes, '# in quotes'
    findings = group_findings(explained(files + findings, text) + text)
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
    text = scan_text(inventory_yaml_files(inventory_sources), host_names)
    return group_findings(explained(scan_inventory(inventory_sources, host_names, list(inventory_groups or {}))
                                    + shadowed_findings(inventory_sources), text) + text)


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
            settings=dict(type="dict"),
        ),
        required_one_of=[("hosts", "inventory_groups")],
        supports_check_mode=True,
    )
    p = module.params
    if not os.path.isdir(p["profiles_dir"]):
        module.fail_json(msg="profiles_dir %s is not a directory" % p["profiles_dir"])
    try:
        if p["hosts"] is None:
            findings, summary = scan_files(p["inventory_groups"], p["inventory_sources"]), {}
        else:
            findings, summary = run(p["hosts"], p["inventory_sources"], p["profiles_dir"], p["pfc_priority"],
                                    p["host_pfc_priorities"], p["switch_options"], p["settings"])
    except Exception as exc:  # noqa: BLE001 - a check that crashes must say so, not 'result deserialization failed'
        module.fail_json(msg="preflight itself failed on this model (a bug in a check - please report it with the "
                         "inventory): %s: %s" % (type(exc).__name__, exc), traceback=traceback.format_exc())
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
