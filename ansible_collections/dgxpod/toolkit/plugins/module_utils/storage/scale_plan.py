# -*- coding: utf-8 -*-
"""Plan a Spectrum Scale client join from the pod model and the cluster's state - pure functions.

``verbs_ports`` derives mmchconfig verbsPorts from the model; ``foreign_cluster_error`` words the refusal
for a node that already belongs to another cluster; ``plan_join`` lists the mm* commands (run on an
existing cluster member) that bring one node from its current state to a started, mounting client.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import effective_config, same_node

LICENSES = ("client", "fpo", "server")


def verbs_ports(nics: List[Dict[str, Any]], fabrics: List[Dict[str, Any]], port: int = 1) -> List[str]:
    """'<rdma_device>/<port>' for each NIC on an InfiniBand fabric that carries storage, in model order.

    NICs without an rdma_device, on Ethernet fabrics or on fabrics that do not carry storage are left out
    (Scale's verbs RDMA runs over the IB ports; RoCE would need verbsRdmaCm and is not planned here)."""
    by_name = {f.get("name"): f for f in fabrics or [] if isinstance(f, dict)}
    out: List[str] = []
    for nic in nics or []:
        fabric = by_name.get(nic.get("fabric"))
        dev = nic.get("rdma_device")
        if not fabric or not dev or fabric.get("kind") != "infiniband":
            continue
        if "storage" not in (fabric.get("carries") or []):
            continue
        entry = "%s/%d" % (dev, port)
        if entry not in out:
            out.append(entry)
    return out


def foreign_cluster_error(host: str, cluster: Optional[str], expected: str) -> Optional[str]:
    """The message for a node that is a member of another cluster, or None when it is not."""
    if not cluster or cluster == expected:
        return None
    return ("%s already belongs to Spectrum Scale cluster '%s', not to the pod's cluster '%s'. A node can be in "
            "only one cluster: remove it from '%s' (mmdelnode -N %s, run in that cluster) or fix "
            "pod.storage.scale.cluster_name, then run again." % (host, cluster, expected, cluster, host))


def find_node(cluster: Dict[str, Any], node: str) -> Optional[Dict[str, Any]]:
    for n in cluster.get("nodes") or []:
        if same_node(n.get("daemon_name"), node) or same_node(n.get("admin_name"), node):
            return n
    return None


def plan_join(node: str, cluster: Dict[str, Any], licenses: Dict[str, Dict[str, str]], config: Dict[str, Any],
              states: List[Dict[str, Any]], mounts: Dict[str, Dict[str, Any]], want_config: Dict[str, str],
              filesystems: List[str], license: str = "client", start: bool = True) -> Dict[str, Any]:
    """Steps (argv lists, plus ['wait-active'] markers) that make ``node`` a licensed, configured, active
    member that mounts ``filesystems``; and the reasons, one per step, for the change report."""
    steps: List[List[str]] = []
    reasons: List[str] = []
    member = find_node(cluster, node) is not None
    if not member:
        steps.append(["mmaddnode", "-N", node])
        reasons.append("%s is not a member of %s" % (node, cluster.get("cluster_name")))
    lic = next((v for k, v in (licenses or {}).items() if same_node(k, node)), None)
    designated = (lic or {}).get("designated", "none")
    if not member or designated not in LICENSES or (license == "server" and designated != "server"):
        steps.append(["mmchlicense", license, "--accept", "-N", node])
        reasons.append("licence %s -> %s" % (designated if member else "none", license))
    current = effective_config(config, node) if member else {}
    changes = [(k, str(v)) for k, v in sorted((want_config or {}).items()) if current.get(k) != str(v)]
    if changes:
        steps.append(["mmchconfig", ",".join("%s=%s" % kv for kv in changes), "-N", node])
        reasons.append("config " + ", ".join("%s %s -> %s" % (k, current.get(k, "(default)"), v) for k, v in changes))
    state = next((s["state"] for s in states or [] if same_node(s.get("name"), node)), "down") if member else "down"
    if start:
        restarted = False
        if changes and state == "active":
            steps.append(["mmshutdown", "-N", node])
            reasons.append("restart the daemon so that %s take effect" % ", ".join(k for k, _ in changes))
            state, restarted = "down", True
        if state != "active":
            steps.append(["mmstartup", "-N", node])
            reasons.append("daemon %s -> active" % state)
            steps.append(["wait-active"])
            reasons.append("wait until the daemon is active")
        for fs in filesystems or []:
            mounted = any(same_node(n.get("name"), node) for n in (mounts.get(fs) or {}).get("nodes") or [])
            if restarted or not mounted:
                steps.append(["mmmount", fs, "-N", node])
                reasons.append("mount %s" % fs)
    return {"steps": steps, "reasons": reasons, "changed": bool(steps)}
