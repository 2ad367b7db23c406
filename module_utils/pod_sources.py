# -*- coding: utf-8 -*-
"""Find the inventory file (and line) that defines a pod-model key.

Ansible merges host_vars, group_vars and inline inventory vars before preflight sees them; to tell the
user *which file* to fix, this module searches the inventory directory in Ansible's precedence order
(host before group, specific group before ``all``) for the first file that defines the variable, then
walks the YAML node tree to the deepest line of the key path. Pure file reading; YAML is composed, not
constructed, so vaulted values and custom tags are harmless.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import yaml

_YAML_EXT = (".yml", ".yaml", ".json", "")
# Where a missing variable belongs (suggested when no file defines it yet).
_HOME = {"pod": os.path.join("group_vars", "all", "pod.yml"), "dgx_model": os.path.join("group_vars", "dgx.yml")}
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def split_path(path: str) -> List[Union[str, int]]:
    """``nics[1].address`` -> ['nics', 1, 'address']."""
    parts: List[Union[str, int]] = []
    for name, index in _PATH_TOKEN.findall(path):
        parts.append(int(index) if index else name)
    return parts


def _var_files(base: str, name: str) -> List[str]:
    """Files Ansible reads for host_vars/<name> or group_vars/<name>."""
    found = []
    for ext in _YAML_EXT:
        cand = os.path.join(base, name + ext)
        if os.path.isfile(cand):
            found.append(cand)
    folder = os.path.join(base, name)
    if os.path.isdir(folder):
        for root, _dirs, files in sorted(os.walk(folder)):
            for f in sorted(files):
                if f.endswith((".yml", ".yaml", ".json")) or "." not in f:
                    found.append(os.path.join(root, f))
    return found


def _inventory_files(inv: str) -> List[str]:
    if os.path.isfile(inv):
        return [inv]
    if not os.path.isdir(inv):
        return []
    return [os.path.join(inv, f) for f in sorted(os.listdir(inv))
            if os.path.isfile(os.path.join(inv, f)) and f.endswith((".yml", ".yaml"))]


def _compose(path: str) -> Optional[yaml.Node]:
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.compose(fh, Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None


def _get(node: Optional[yaml.Node], key: Union[str, int]) -> Optional[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == str(key):
                return v
    elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key]
    return None


def _key_line(node: yaml.MappingNode, key: str) -> Optional[int]:
    for k, _v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k.start_mark.line + 1
    return None


def _deepest_line(container: yaml.Node, parts: Sequence[Union[str, int]]) -> Optional[int]:
    """Line of the deepest node along ``parts`` that exists (parts[0] must exist in container)."""
    if not isinstance(container, yaml.MappingNode):
        return None
    line = _key_line(container, str(parts[0]))
    if line is None:
        return None
    node = _get(container, parts[0])
    for part in parts[1:]:
        nxt = _get(node, part)
        if nxt is None:
            break
        if isinstance(node, yaml.MappingNode):
            line = _key_line(node, str(part)) or line
        else:
            line = nxt.start_mark.line + 1
        node = nxt
    return line


def _inline_scopes(node: Optional[yaml.Node], host: str, groups: Sequence[str]
                   ) -> Iterator[Tuple[int, yaml.Node]]:
    """Yield (rank, vars-mapping) for inline vars of the host, its groups and 'all' in a hosts file.

    rank 0 = the host's own vars, 1 = a group's vars, 2 = 'all' vars (Ansible's precedence order)."""
    def walk(group_name: str, gnode: yaml.Node) -> Iterator[Tuple[int, yaml.Node]]:
        if not isinstance(gnode, yaml.MappingNode):
            return
        hosts = _get(gnode, "hosts")
        hnode = _get(hosts, host) if hosts is not None else None
        if isinstance(hnode, yaml.MappingNode):
            yield 0, hnode
        gvars = _get(gnode, "vars")
        if isinstance(gvars, yaml.MappingNode) and (group_name == "all" or group_name in groups):
            yield (2 if group_name == "all" else 1), gvars
        children = _get(gnode, "children")
        if isinstance(children, yaml.MappingNode):
            for k, v in children.value:
                yield from walk(k.value, v)

    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from walk(k.value, v)


def locate(inventory_dirs: Sequence[str], host: Optional[str], groups: Sequence[str], var: str,
           path: str) -> Optional[str]:
    """Return 'file:line' (or 'file') of the definition of ``var`` for ``host``; None if not found.

    ``path`` is the key path within the variable (``nics[1].address``); when the variable itself is
    missing, the file where it belongs is suggested instead (host_vars/<host>.yml, group_vars/all)."""
    parts = split_path(path)
    if not parts or parts[0] != var:
        parts = [var] + parts
    for inv in inventory_dirs:
        base = inv if os.path.isdir(inv) else os.path.dirname(inv)
        ordered: List[Tuple[int, str, Optional[yaml.Node]]] = []  # (rank, file, inline-scope)
        if host:
            ordered += [(0, f, None) for f in _var_files(os.path.join(base, "host_vars"), host)]
        for g in list(groups)[::-1]:
            if g != "all":
                ordered += [(1, f, None) for f in _var_files(os.path.join(base, "group_vars"), g)]
        ordered += [(2, f, None) for f in _var_files(os.path.join(base, "group_vars"), "all")]
        for f in _inventory_files(inv):
            for rank, scope in _inline_scopes(_compose(f), host or "", groups):
                ordered.append((rank, f, scope))
        ordered.sort(key=lambda item: item[0])  # stable: files before inline within a rank
        for _rank, f, scope in ordered:
            root = scope if scope is not None else _compose(f)
            if isinstance(root, yaml.MappingNode) and _get(root, var) is not None:
                line = _deepest_line(root, parts)
                return "%s:%d" % (_rel(f), line) if line else _rel(f)
        if var in ("inventory", "ansible_host") and host:
            for f in _inventory_files(inv):
                root = _compose(f)
                for node in _find_host_nodes(root, host):
                    return "%s:%d" % (_rel(f), node.start_mark.line + 1)
    if inventory_dirs:
        base = inventory_dirs[0] if os.path.isdir(inventory_dirs[0]) else os.path.dirname(inventory_dirs[0])
        if var in _HOME:
            return _rel(os.path.join(base, _HOME[var]))
        if host and var != "inventory":
            return _rel(os.path.join(base, "host_vars", host + ".yml"))
    return None


def _find_host_nodes(node: Any, host: str) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "hosts" and isinstance(v, yaml.MappingNode):
                for hk, _hv in v.value:
                    if hk.value == host:
                        yield hk
            yield from _find_host_nodes(v, host)


def _rel(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
