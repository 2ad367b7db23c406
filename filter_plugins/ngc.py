# -*- coding: utf-8 -*-
"""Filters for the MPI container mesh (roles/ngc_container)."""
from __future__ import annotations

import os

from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.ngc_container import (authorized_keys,  # noqa: E501
    known_hosts, known_hosts_keys, merge_pinned_keys, node_aliases, inspect_status, ulimit_refusal)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.eval import containers_record
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.records import host_readings


def ngc_known_hosts(host_keys, hostvars, pod, port=2222):
    """Pinned known_hosts text from {node: "<type> <base64>"} (the containers' host keys as collected):
    each node under its name (and name.domain) and its compute-fabric addresses, as [alias]:port."""
    entries = {node: {"pubkey": key, "aliases": node_aliases(node, hostvars[node].get("nics") or [], pod)}
               for node, key in host_keys.items()}
    return known_hosts(entries, int(port))


def _node_key(node_vars):
    """The container host key a node gave in this run, from its variables (tasks/keys.yml and drift.yml register
    library/pod_ssh_key's result as ngc_container_node_keys: its public_key), or None."""
    read = (node_vars or {}).get("ngc_container_node_keys") or {}
    key = read.get("public_key") if isinstance(read, dict) else None
    return key.strip() if isinstance(key, str) and key.strip() else None


def _collected_key(hostvars, node):
    """The container host key ``node`` gave in this run, or None (``_node_key`` of its variables)."""
    return _node_key(hostvars.get(node))


def _remembered_key(cache_dir, node):
    """The key remembered on the controller for ``node`` from an earlier run (cache_dir/<node>.pub, stripped), or
    None when there is no such file."""
    path = os.path.join(cache_dir, node + ".pub")
    if not os.path.isfile(path):
        return None
    with open(path) as fh:
        return fh.read().strip()


def ngc_container_host_keys(nodes, hostvars, cache_dir, previous_known_hosts=""):
    """{node: "<type> <base64>"} for every node of the mesh (module_utils/containers/ngc_container.merge_pinned_keys):
    the key collected in this run (hostvars[node].ngc_container_node_keys), else the one remembered on the
    controller from an earlier run (cache_dir/<node>.pub), else the one pinned in this node's current
    known_hosts (``previous_known_hosts``, its text). A node seen in no run yet is left out (it has no
    container to pin); a node no longer in ``nodes`` is dropped."""
    nodes = list(nodes)
    fresh, remembered = {}, {}
    for node in nodes:
        key = _collected_key(hostvars, node)
        if key:
            fresh[node] = key
        cached = _remembered_key(cache_dir, node)
        if cached is not None:
            remembered[node] = cached
    return merge_pinned_keys(nodes, fresh, remembered, known_hosts_keys(previous_known_hosts or ""))


def ngc_pod_known_hosts(nodes, hostvars, cache_dir, pod, port=2222):
    """The pinned known_hosts text of the whole mesh, derived once for the play (issue 19): the same text
    ``ngc_container_host_keys`` + ``ngc_known_hosts`` give every node, reading each member's variables once.

    That text is the same on every node when every member has a key collected in this run or remembered on the
    controller; then this returns it. When some member has neither, that member's entry comes from each node's
    own known_hosts of the last run, so the text is per node: this returns '' and the role derives it per node."""
    fresh, remembered, nics = {}, {}, {}
    for node in nodes:
        hv = hostvars.get(node) or {}  # one read of the member's variables
        key = _node_key(hv)
        if key:
            fresh[node] = key
        else:
            cached = _remembered_key(cache_dir, node)
            if not cached:
                return ""
            remembered[node] = cached
        nics[node] = hv.get("nics") or []
    keys = merge_pinned_keys(list(nodes), fresh, remembered, {})
    return known_hosts({node: {"pubkey": key, "aliases": node_aliases(node, nics[node], pod)}
                        for node, key in keys.items()}, int(port))


def ngc_host_key_files(nodes, hostvars, cache_dir):
    """pod_files entries that remember on the controller (cache_dir/<node>.pub) the container host key each node
    gave in this run (hostvars[node].ngc_container_node_keys); nodes without one are left out."""
    out = []
    for node in nodes:
        key = _collected_key(hostvars, node)
        if key:
            out.append({"path": os.path.join(cache_dir, node + ".pub"), "mode": "0644", "label": node,
                        "content": key + "\n"})
    return out


def ngc_authorized_keys(pubkeys, options=""):
    """authorized_keys text for the pod's MPI public key(s)."""
    if isinstance(pubkeys, str):
        pubkeys = [pubkeys]
    return authorized_keys(pubkeys, options or "")


def ngc_ulimit_refusal(error, ulimits, proc_limits=""):
    """Why the engine refused a --ulimit, naming the variable to change (module_utils/containers/ngc_container),
    or ''."""
    return ulimit_refusal(str(error or ""), dict(ulimits or {}), str(proc_limits or ""))


def ngc_container_status(text):
    """running/exited/.../absent from `<engine> container inspect` output (module_utils/containers/ngc_container)."""
    return inspect_status(str(text or ""))


def mpi_containers_record(hosts, hostvars, fact="ngc_container_reading"):
    """pod_stages.containers (module_utils/containers/eval.py) from every DGX's ``ngc_container_reading``
    (roles/ngc_container tasks/check.yml; a host without it - unreachable, or its play failed before - is an error
    naming it)."""
    return containers_record(host_readings(list(hosts or []), hostvars, str(fact)))


class FilterModule:
    def filters(self):
        return {"ngc_known_hosts": ngc_known_hosts, "ngc_authorized_keys": ngc_authorized_keys,
                "ngc_container_host_keys": ngc_container_host_keys, "ngc_ulimit_refusal": ngc_ulimit_refusal,
                "ngc_container_status": ngc_container_status, "ngc_host_key_files": ngc_host_key_files,
                "ngc_pod_known_hosts": ngc_pod_known_hosts, "mpi_containers_record": mpi_containers_record}
