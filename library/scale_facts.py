#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: read this node's Spectrum Scale state (membership, daemon, config, mounts) as facts."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: scale_facts
short_description: Read a node's IBM Spectrum Scale state (cluster, daemon, configuration, mounts)
description:
  - Runs C(mmlscluster), C(mmgetstate), C(mmlsconfig) and C(mmlsmount all -L) on the node and parses their
    human-readable output (parsers in C(module_utils/storage/scale_parsers.py)). Changes nothing.
  - Reports whether the Scale packages are installed (the commands exist and run), whether the node is in a
    cluster and which, the daemon state, the configuration that applies to the node, which file systems it
    mounts, and whether the portability layer (GPL) is built for the running kernel.
  - With I(expected_cluster), fails when the node belongs to another cluster, naming the host, the cluster
    it is in and the expected one.
  - Every command runs with a time limit (I(command_timeout)).
version_added: "0.1.0"
options:
  node:
    description: The name Spectrum Scale knows this node by (daemon or admin node name; short names match).
    type: str
    required: true
  expected_cluster:
    description: Fail when the node is a member of a cluster with another name.
    type: str
  gpl_module:
    description:
      - The kernel module the portability layer build (C(mmbuildgpl)) produces; C({kernel}) is replaced by the
        running kernel release. Its presence means the GPL is built.
    type: str
    default: /lib/modules/{kernel}/extra/mmfs26.ko
  command_timeout:
    description: Seconds each command may take.
    type: int
    default: 60
  want_config:
    description: Attributes whose values for this node are compared (result C(config_differs)).
    type: dict
    default: {}
  want_filesystems:
    description: File systems this node should mount (result C(not_mounted)).
    type: list
    elements: str
    default: []
notes:
  - Supports check mode (it only reads).
extends_documentation_fragment:
  - dgxpod.toolkit.toolkit_module
  - dgxpod.toolkit.scale_commands
"""

EXAMPLES = r"""
- name: Read the node's Spectrum Scale state
  scale_facts:
    node: "{{ inventory_hostname }}"
    expected_cluster: ess3000.pod
  register: scale_node
"""

RETURN = r"""
scale:
  description: The node's Spectrum Scale state.
  returned: always
  type: dict
  contains:
    installed: {description: The mm commands exist and run., type: bool}
    member: {description: The node is in a cluster., type: bool}
    cluster_name: {description: The cluster it is in (null when none)., type: str}
    cluster_id: {description: That cluster's id., type: str}
    nodes: {description: Members as mmlscluster lists them., type: list}
    state:
      description: Daemon state of this node (active, arbitrating, down, unknown, unresponsive; down when not a member).
      type: str
    config: {description: Configuration values that apply to this node (common + node-specific)., type: dict}
    filesystems: {description: File systems of the cluster (mmlsconfig)., type: list}
    mounted: {description: File system name -> this node has it mounted (mmlsmount all -L)., type: dict}
    gpl_built: {description: The portability layer module exists for the running kernel., type: bool}
    gpl_module: {description: The path checked., type: str}
    kernel: {description: Running kernel release., type: str}
    config_differs: {description: "Keys of want_config whose value differs (as 'key: have -> want').", type: list}
    not_mounted: {description: Entries of want_filesystems this node does not mount., type: list}
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import (effective_config,
    parse_mmgetstate, parse_mmlscluster, parse_mmlsconfig, parse_mmlsmount, same_node)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_plan import find_node, foreign_cluster_error
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_run import mm_argument_spec, run_mm


def read(module, node):
    p = module.params
    kernel = os.uname().release
    gpl = p["gpl_module"].replace("{kernel}", kernel)
    facts = dict(installed=False, member=False, cluster_name=None, cluster_id=None, nodes=[], state="down", config={},
                 filesystems=[], mounted={}, gpl_built=os.path.exists(gpl), gpl_module=gpl, kernel=kernel)

    def mm(*argv):
        rc, out, err = run_mm(p["bin_dir"], list(argv), p["command_timeout"])
        if rc == 124:
            module.fail_json(msg="%s on %s" % (err, node), scale=facts)
        return rc, out, err

    def parsed(parser, argv, out):
        """The parser's value, or a failure naming the node, the command and the Scale version seen."""
        try:
            return parser(out)
        except ValueError as exc:
            module.fail_json(msg="%s: '%s' printed output that cannot be read (Spectrum Scale %s): %s"
                             % (node, " ".join(argv), scale_version(), exc), scale=facts)

    def scale_version():
        rc, out, _ = run_mm(p["bin_dir"], ["mmdiag", "--version"], p["command_timeout"])
        m = re.search(r"Current GPFS build:\s*\"?([0-9][0-9.]*[0-9])", out or "") if rc == 0 else None
        if m:
            return m.group(1)
        level = (facts.get("config") or {}).get("minReleaseLevel")
        return "minReleaseLevel %s" % level if level else "version unknown (mmdiag --version)"

    rc, out, err = mm("mmlscluster")
    if rc == 127:
        return facts
    facts["installed"] = True
    cluster = parsed(parse_mmlscluster, ["mmlscluster"], out + err)
    if not cluster["member"]:
        if rc != 0 and "does not belong" not in (out + err):
            module.fail_json(msg="mmlscluster failed on %s: %s" % (node, (err or out).strip()), scale=facts)
        return facts
    facts.update(member=True, cluster_name=cluster.get("cluster_name"), cluster_id=cluster.get("cluster_id"),
                 nodes=cluster["nodes"])
    if find_node(cluster, node) is None:
        module.warn("%s: mmlscluster of %s does not list '%s' (set spectrum_scale_client_node_name to the name "
                    "Scale knows this node by)" % (node, facts["cluster_name"], node))
    # a command that fails says so itself (its state/config/mounts stay unknown/empty, as before); output of a
    # command that succeeded but cannot be read is a failure, never an empty or partial answer
    rc, out, err = mm("mmgetstate")
    states = parsed(parse_mmgetstate, ["mmgetstate"], out) if rc == 0 else []
    facts["state"] = next((s["state"] for s in states if same_node(s["name"], node)),
                          states[0]["state"] if states else "unknown")
    rc, out, err = mm("mmlsconfig")
    config = parsed(parse_mmlsconfig, ["mmlsconfig"], out) if rc == 0 else {"common": {}, "filesystems": []}
    facts["config"] = effective_config(config, node)
    facts["filesystems"] = config["filesystems"]
    rc, out, err = mm("mmlsmount", "all", "-L")
    mounts = parsed(parse_mmlsmount, ["mmlsmount", "all", "-L"], out) if rc == 0 else {}
    facts["mounted"] = {fs: any(same_node(n["name"], node) for n in m["nodes"] or []) for fs, m in mounts.items()}
    return facts


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mm_argument_spec(command_timeout=60),
            node=dict(type="str", required=True),
            expected_cluster=dict(type="str"),
            gpl_module=dict(type="str", default="/lib/modules/{kernel}/extra/mmfs26.ko"),
            want_config=dict(type="dict", default={}),
            want_filesystems=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    node = module.params["node"]
    facts = read(module, node)
    if module.params["expected_cluster"]:
        msg = foreign_cluster_error(node, facts["cluster_name"], module.params["expected_cluster"])
        if msg:
            module.fail_json(msg=msg, scale=facts)
    facts["config_differs"] = ["%s: %s -> %s" % (k, facts["config"].get(k, "(default)"), v)
                               for k, v in sorted(module.params["want_config"].items())
                               if facts["config"].get(k) != str(v)]
    facts["not_mounted"] = [fs for fs in module.params["want_filesystems"] if not facts["mounted"].get(fs)]
    module.exit_json(changed=False, scale=facts)


if __name__ == "__main__":
    main()
