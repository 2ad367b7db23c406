# -*- coding: utf-8 -*-
"""Find the inventory file (and line) that defines a pod-model key.

Ansible merges host_vars, group_vars and inline inventory vars before preflight sees them; to tell the
user *which file* to fix, this module searches the inventory directory in Ansible's precedence order
(host before group, specific group before ``all``) for the first file that defines the variable, then
walks the YAML node tree to the deepest line of the key path. Pure file reading; YAML is composed, not
constructed, so vaulted values and custom tags are harmless.
"""
from __future__ import annotations

import difflib
import os
import re
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import yaml

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import MODEL_VARS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding, GROUP_LIST as GROUP_HOSTS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.text_checks import lookalike_near

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


def _inventory_files(inv: str) -> List[str]:
    if os.path.isfile(inv):
        return [inv]
    if not os.path.isdir(inv):
        return []
    return [os.path.join(inv, f) for f in sorted(os.listdir(inv))
            if os.path.isfile(os.path.join(inv, f)) and f.endswith((".yml", ".yaml"))]


# The parser Ansible uses: libyaml when PyYAML has it (it takes a tab after "key:" that the pure-Python one
# refuses), so a file is called unreadable only when Ansible cannot read it either.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Composed files, keyed by path and (mtime, size): a run locates thousands of keys in the same few files.
_COMPOSED: Dict[str, Tuple[Tuple[int, int], Optional[yaml.Node], Optional[Exception]]] = {}


def _compose_file(path: str) -> Tuple[Optional[yaml.Node], Optional[Exception]]:
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, exc
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _COMPOSED.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1], hit[2]
    node: Optional[yaml.Node] = None
    error: Optional[Exception] = None
    try:
        with open(path, encoding="utf-8") as fh:
            node = yaml.compose(fh, Loader=_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        error = exc
    _COMPOSED[path] = (stamp, node, error)
    return node, error


def _compose(path: str) -> Optional[yaml.Node]:
    return _compose_file(path)[0]


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


def locate(inventory_dirs: Sequence[str], host: Optional[str], groups: Sequence[str], var: str,
           path: str) -> Optional[str]:
    """Return 'file:line' (or 'file') of the definition of ``var`` for ``host``; None if not found.

    ``path`` is the key path within the variable (``nics[1].address``); when the variable itself is
    missing, the file where it belongs is suggested instead (host_vars/<host>.yml, group_vars/all)."""
    return locate_scope(inventory_dirs, host, groups, var, path)[0]


def locate_scope(inventory_dirs: Sequence[str], host: Optional[str], groups: Sequence[str], var: str,
                 path: str) -> Tuple[Optional[str], Optional[int]]:
    """``locate`` and the scope of the definition: 0 the host's own (host_vars, inline host vars), 1 a group's,
    2 group 'all'; None when no file defines the variable (the source is then a suggestion). The definition is the
    one Ansible keeps: the last in its read order (``read_order``), e.g. the later of two files of group_vars/all/."""
    parts = split_path(path)
    if not parts or parts[0] != var:
        parts = [var] + parts
    for rank, f, root in reversed(read_order(inventory_dirs, host, groups)):
        if isinstance(root, yaml.MappingNode) and _get(root, var) is not None:
            line = _deepest_line(root, parts)
            return ("%s:%d" % (_rel(f), line) if line else _rel(f)), rank
    for inv in inventory_dirs:
        if var in ("inventory", "ansible_host") and host:
            for f in _inventory_files(inv):
                root = _compose(f)
                for node in _find_host_nodes(root, host):
                    return "%s:%d" % (_rel(f), node.start_mark.line + 1), 0
    if inventory_dirs:
        base = inventory_dirs[0] if os.path.isdir(inventory_dirs[0]) else os.path.dirname(inventory_dirs[0])
        if var in _HOME:
            return _rel(os.path.join(base, _HOME[var])), None
        if host and var != "inventory":
            return _rel(os.path.join(base, "host_vars", host + ".yml")), None
    return None, None


def _ansible_var_files(base: str, name: str) -> List[str]:
    """The files host_group_vars reads for host_vars/<name> or group_vars/<name>, in its order (a later file's
    value replaces an earlier one's): the first of <name>, <name>.yml, .yaml, .json that exists - a directory is
    read whole (sorted, recursively; hidden and '~' files skipped) and <name>.yml beside it is not read at all."""
    for ext in ("", ".yml", ".yaml", ".json"):
        cand = os.path.join(base, name + ext)
        if os.path.isdir(cand):
            return _dir_var_files(cand)
        if os.path.exists(cand):
            return [cand]
    return []


def _var_file_candidates(base: str, name: str) -> List[str]:
    """Every path host_group_vars could read for host_vars/<name> or group_vars/<name>, in the order it tries them
    (DataLoader.find_vars_files: <name> - a file or a directory -, <name>.yml, .yaml, .json): only the first that
    exists is read (``_ansible_var_files``); the others are ignored whole."""
    return [os.path.join(base, name + ext) for ext in ("", ".yml", ".yaml", ".json")
            if os.path.exists(os.path.join(base, name + ext))]


def _top_keys(files: Sequence[str]) -> Dict[str, str]:
    """{top-level key: 'file:line' of the last file of ``files`` that sets it} (a later file's value wins, as in
    host_group_vars' combine_vars)."""
    keys: Dict[str, str] = {}
    for f in files:
        root = _compose(f)
        if isinstance(root, yaml.MappingNode):
            for k, _v in root.value:
                if isinstance(k, yaml.ScalarNode):
                    keys[k.value] = "%s:%d" % (_rel(f), k.start_mark.line + 1)
    return keys


class Shadowed(NamedTuple):
    """A var file Ansible never reads (``shadowed_var_files``)."""

    unread: str            # the file not read (group_vars/all.yml)
    read: str              # the path read instead (group_vars/all, a directory, or group_vars/all.yml)
    read_files: List[str]  # the files read from it, in Ansible's order
    label: str             # what they are for: 'group_vars/all', 'host_vars/dgx-1'
    host: Optional[str]    # the host of host_vars, None for group_vars


def shadowed_var_files(inventory_sources: Sequence[str]) -> List[Shadowed]:
    """Var files Ansible never reads because another path for the same host or group comes first: group_vars/all.yml
    beside a group_vars/all/ directory (the directory is read, whole; all.yml not at all), host_vars/dgx-1.yaml
    beside host_vars/dgx-1.yml. Ansible says nothing about them (ansible-core 2.19: host_group_vars.get_vars ->
    DataLoader.find_vars_files, which stops at the first of <name>, <name>.yml, .yaml, .json that exists)."""
    out: List[Shadowed] = []
    for inv in inventory_sources:
        base = inv if os.path.isdir(inv) else os.path.dirname(inv)
        for kind in ("host_vars", "group_vars"):
            folder = os.path.join(base, kind)
            try:
                entries = sorted(os.listdir(folder))
            except OSError:
                continue
            for name in sorted({_strip_ext(e) for e in entries if not e.startswith(".") and not e.endswith("~")}):
                found = _var_file_candidates(folder, name)
                out += [Shadowed(unread, found[0], _ansible_var_files(folder, name), "%s/%s" % (kind, name),
                                 name if kind == "host_vars" else None) for unread in found[1:]]
    return out


def shadowed_findings(inventory_sources: Sequence[str]) -> List[Finding]:
    """A warning per var file Ansible never reads (``shadowed_var_files``), on that file: both paths, that the one
    read wins for every key the two share (nothing is merged), the keys only the unread file sets (so not set at
    all), and the fix (keep one: move its keys into the one read)."""
    out: List[Finding] = []
    for sh in shadowed_var_files(inventory_sources):
        is_dir = os.path.isdir(sh.read)
        read_text = _rel(sh.read) + ("/" if is_dir else "")
        mine, theirs = _top_keys([sh.unread]), _top_keys(sh.read_files)
        both = ["%s (%s)" % (k, theirs[k]) for k in mine if k in theirs]
        lost = [k for k in mine if k not in theirs]
        said = []
        if both:
            said.append("set in both, %s's value is in force for %s" % (read_text, _listed(both)))
        if lost:
            said.append("set only here, and so not set at all: %s" % _listed(lost))
        name = os.path.basename(sh.label)
        message = ("%s is never read: Ansible reads %s instead. For %s its host_group_vars plugin reads the first "
                   "that exists of %s, %s.yml, %s.yaml, %s.json (DataLoader.find_vars_files) and ignores the others, "
                   "so nothing of this file is merged%s" % (
                       _rel(sh.unread), read_text, sh.label,
                       name + ("/ (a directory: every file in it)" if is_dir else ""), name, name, name,
                       (": " + "; ".join(said)) if said else " (it sets no key today)"))
        if is_dir:
            fix = ("keep one: move this file's keys into a file inside %s (e.g. %s), keeping the value you mean for "
                   "a key set in both, then delete %s" % (read_text, _rel(os.path.join(sh.read, os.path.basename(
                       sh.unread))), _rel(sh.unread)))
        else:
            fix = ("keep one: merge this file's keys into %s (the file Ansible reads), keeping the value you mean for "
                   "a key set in both, then delete %s" % (read_text, _rel(sh.unread)))
        out.append(Finding(sh.host, "file", "file", message, fix, severity="warning", source=_rel(sh.unread)))
    return out


def unread_file_keys(inventory_sources: Sequence[str]) -> Dict[str, str]:
    """{top-level key: the never-read file that sets it} (``shadowed_var_files``), for the hint on a 'required ...
    not set' error."""
    out: Dict[str, str] = {}
    for sh in shadowed_var_files(inventory_sources):
        for k in _top_keys([sh.unread]):
            out.setdefault(k, _rel(sh.unread))
    return out


def _listed(items: Sequence[str], most: int = 6) -> str:
    return ", ".join(items[:most]) + (", ..." if len(items) > most else "")


def _dir_var_files(path: str) -> List[str]:
    found: List[str] = []
    try:
        entries = sorted(os.listdir(path))
    except OSError:
        return found
    for entry in entries:
        if entry.startswith(".") or entry.endswith("~"):
            continue
        full = os.path.join(path, entry)
        ext = os.path.splitext(entry)[1]
        if os.path.isdir(full) and not ext:
            found += _dir_var_files(full)
        elif os.path.isfile(full) and (not ext or ext in (".yml", ".yaml", ".json")):
            found.append(full)
    return found


def _group_depths(node: Optional[yaml.Node]) -> Dict[str, int]:
    """Depth of each group of a YAML inventory (its 'children' tree): 1 under 'all', one more per level."""
    depths: Dict[str, int] = {}

    def walk(name: str, gnode: yaml.Node, depth: int) -> None:
        if depths.get(name, -1) >= depth:
            return
        depths[name] = depth
        children = _get(gnode, "children")
        if isinstance(children, yaml.MappingNode):
            for k, v in children.value:
                if isinstance(k, yaml.ScalarNode):
                    walk(k.value, v, depth + 1)

    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                walk(k.value, v, 0 if k.value == "all" else 1)
    return depths


def _inline_named(node: Optional[yaml.Node], host: str, groups: Sequence[str]
                  ) -> Iterator[Tuple[int, str, yaml.Node]]:
    """(rank, group, vars-mapping) of a hosts file: rank 0 the host's own inline vars, 1 a group's, 2 'all''s."""
    def walk(group_name: str, gnode: yaml.Node) -> Iterator[Tuple[int, str, yaml.Node]]:
        if not isinstance(gnode, yaml.MappingNode):
            return
        hosts = _get(gnode, "hosts")
        hnode = _get(hosts, host) if hosts is not None else None
        if isinstance(hnode, yaml.MappingNode):
            yield 0, group_name, hnode
        gvars = _get(gnode, "vars")
        if isinstance(gvars, yaml.MappingNode) and (group_name == "all" or group_name in groups):
            yield (2 if group_name == "all" else 1), group_name, gvars
        children = _get(gnode, "children")
        if isinstance(children, yaml.MappingNode):
            for k, v in children.value:
                yield from walk(k.value, v)

    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield from walk(k.value, v)


def read_order(inventory_dirs: Sequence[str], host: Optional[str], groups: Sequence[str]
               ) -> List[Tuple[int, str, Optional[yaml.Node]]]:
    """Every place Ansible reads a host's variables from, lowest precedence first (the last that sets a variable
    wins, whole: a mapping is replaced, not merged): (scope, file, the vars mapping) with scope 0 host, 1 group,
    2 'all'. Ansible's default order (VARIABLE_PRECEDENCE): inline 'all' vars, inline group vars, group_vars/all,
    group_vars/<group>, inline host vars, host_vars/<host>; groups by depth, then name (ansible_group_priority is
    not read)."""
    out: List[Tuple[int, str, Optional[yaml.Node]]] = []
    groups = [g for g in groups if g != "all"]
    for inv in inventory_dirs:
        base = inv if os.path.isdir(inv) else os.path.dirname(inv)
        inline: List[Tuple[int, str, str, yaml.Node]] = []
        depths: Dict[str, int] = {}
        for f in _inventory_files(inv):
            node = _compose(f)
            for g, d in _group_depths(node).items():
                depths[g] = max(d, depths.get(g, 0))
            inline += [(rank, g, f, scope) for rank, g, scope in _inline_named(node, host or "", groups)]
        ordered_groups = sorted(groups, key=lambda g: (depths.get(g, 1), g))
        gpos = {g: i for i, g in enumerate(ordered_groups)}
        out += [(2, f, scope) for rank, _g, f, scope in inline if rank == 2]
        out += [(1, f, scope) for _r, _g, f, scope in sorted(
            (item for item in inline if item[0] == 1), key=lambda item: gpos.get(item[1], -1))]
        out += [(2, f, _compose(f)) for f in _ansible_var_files(os.path.join(base, "group_vars"), "all")]
        for g in ordered_groups:
            out += [(1, f, _compose(f)) for f in _ansible_var_files(os.path.join(base, "group_vars"), g)]
        out += [(0, f, scope) for rank, _g, f, scope in inline if rank == 0]
        if host:
            out += [(0, f, _compose(f)) for f in _ansible_var_files(os.path.join(base, "host_vars"), host)]
    return out


def _plain(node: Optional[yaml.Node]) -> Any:
    """A composed node as plain data (scalars as their text), to compare two definitions."""
    if isinstance(node, yaml.MappingNode):
        return tuple(sorted((str(_plain(k)), repr(_plain(v))) for k, v in node.value))
    if isinstance(node, yaml.SequenceNode):
        return tuple(_plain(v) for v in node.value)
    return node.value if isinstance(node, yaml.ScalarNode) else None


def defined_twice(inventory_dirs: Sequence[str], hosts: Dict[str, Sequence[str]]) -> List[Finding]:
    """A model variable holding a mapping or list (``pod``, ``switch``, ``storage_node``, ``nics``) set in two files
    Ansible reads for the same host: the one read last replaces the other whole (Ansible does not merge them), so
    the keys only the other sets are gone for those hosts. One finding per pair of places, on the one that wins,
    naming both; an error unless the two say the same (then a warning: keep one)."""
    seen: Dict[Tuple[str, Tuple[Tuple[str, int], ...]], List[str]] = {}
    nodes: Dict[Tuple[str, Tuple[Tuple[str, int], ...]], List[yaml.Node]] = {}
    for host in sorted(hosts):
        order = read_order(inventory_dirs, host, list(hosts[host] or []))
        for var in MODEL_VARS:
            defs = [(f, root) for _rank, f, root in order if isinstance(root, yaml.MappingNode)
                    and _get(root, var) is not None]
            values = [_get(root, var) for _f, root in defs]
            if len(defs) < 2 or not any(isinstance(v, (yaml.MappingNode, yaml.SequenceNode)) for v in values):
                continue
            places = tuple((_rel(f), _key_line(root, var) or 0) for f, root in defs)
            seen.setdefault((var, places), []).append(host)
            nodes[(var, places)] = values  # the same nodes for every host of the record
    out: List[Finding] = []
    for (var, places), names in seen.items():
        values = nodes[(var, places)]
        winner, win_node = "%s:%d" % places[-1], values[-1]
        others = ["%s:%d" % p for p in places[:-1]]
        lost: List[str] = []
        for node in values[:-1]:
            if isinstance(node, yaml.MappingNode) and isinstance(win_node, yaml.MappingNode):
                have = {k.value for k, _v in win_node.value if isinstance(k, yaml.ScalarNode)}
                lost += [k.value for k, _v in node.value if isinstance(k, yaml.ScalarNode) and k.value not in have
                         and k.value not in lost]
        same = all(_plain(v) == _plain(win_node) for v in values[:-1])
        whom = ", ".join(names[:GROUP_HOSTS]) + (" and %d more" % (len(names) - GROUP_HOSTS)
                                                  if len(names) > GROUP_HOSTS else "")
        what = ("so %s of %s %s not set for them" % (", ".join("%s.%s" % (var, k) for k in lost[:6]) + (
            ", ..." if len(lost) > 6 else ""), " and ".join(others), "is" if len(lost) == 1 else "are")
            if lost else "so the values of %s do not apply to them" % " and ".join(others) if not same
            else "the two say the same today")
        out.append(Finding(
            None, var, var, "'%s' is set in %d files Ansible reads for %s: %s; the one read last (%s) replaces "
            "the whole %s (a mapping or list is replaced, not merged), %s" % (
                var, len(places), whom, ", ".join(others + [winner]), winner,
                "mapping" if isinstance(win_node, yaml.MappingNode) else "list", what),
            "keep one '%s:' - move the keys %s sets into the '%s:' of %s, then delete the one at %s%s" % (
                var, winner, var, others[0], winner, " (one pod: mapping per inventory, group_vars/all/pod.yml)"
                if var == "pod" else ""),
            severity="warning" if same else "error", source=winner))
    return out


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


# --------------------------------------------------------------------------- reading the files themselves
def inventory_yaml_files(inventory_sources: Sequence[str]) -> List[Tuple[str, str, Optional[str]]]:
    """Every file Ansible reads for the inventory: (path, kind, name) with kind 'inventory', 'host_vars' or
    'group_vars' and name the host or group the file is for (the first path component under the folder)."""
    out: List[Tuple[str, str, Optional[str]]] = []
    seen = set()
    for inv in inventory_sources:
        base = inv if os.path.isdir(inv) else os.path.dirname(inv)
        for f in _inventory_files(inv):
            if f not in seen:
                seen.add(f)
                out.append((f, "inventory", None))
        for kind in ("host_vars", "group_vars"):
            folder = os.path.join(base, kind)
            if not os.path.isdir(folder):
                continue
            for entry in sorted(os.listdir(folder)):
                if entry.startswith("."):
                    continue
                full = os.path.join(folder, entry)
                name = _strip_ext(entry) if os.path.isfile(full) else entry
                files = [full] if os.path.isfile(full) else [
                    os.path.join(root, f) for root, _dirs, fs in sorted(os.walk(full)) for f in sorted(fs)
                    if f.endswith((".yml", ".yaml", ".json")) or "." not in f]
                for f in files:
                    if f not in seen and (f.endswith((".yml", ".yaml", ".json")) or "." not in os.path.basename(f)):
                        seen.add(f)
                        out.append((f, kind, name))
    return out


def _strip_ext(entry: str) -> str:
    for ext in (".yml", ".yaml", ".json"):
        if entry.endswith(ext):
            return entry[:-len(ext)]
    return entry


def scan_inventory(inventory_sources: Sequence[str], host_names: Iterable[str],
                   group_names: Iterable[str]) -> List[Finding]:
    """Problems Ansible hides or reports without a place, found by reading the inventory files directly:

    - a file Ansible cannot parse (a tab in the indentation, most often): file:line and the character;
    - a key written twice in one mapping (Ansible warns and keeps the last value): both lines;
    - a host_vars/group_vars file whose name matches a host or group only when case is ignored (Ansible
      matches names case-sensitively, so the file is silently not read)."""
    hosts = set(host_names)
    known = {"host_vars": ("host", hosts), "group_vars": ("group", set(group_names) | {"all"})}
    out: List[Finding] = []
    for path, kind, name in inventory_yaml_files(inventory_sources):
        host = name if kind == "host_vars" and name in hosts else None
        what, names = known.get(kind, (None, set()))
        real = {n.lower(): n for n in names}.get(name.lower()) if name is not None and name not in names else None
        if real is not None:
            out.append(Finding(real if kind == "host_vars" else None, "file", "file",
                               "%s is not read for %s %s: Ansible matches %s names to %s names case-sensitively "
                               "('%s' is not '%s'), so none of its values apply"
                               % (_rel(path), what, real, kind, what, name, real),
                               "rename it to %s" % _rel(_renamed(path, name, real)), source=_rel(path)))
        node, error = _compose_file(path)
        if error is not None:
            out.append(_parse_finding(path, host, error))
            continue
        for key_path, first, second in _duplicate_keys(node):
            var = split_path(key_path)[0] if key_path else "file"
            out.append(Finding(host, str(var), key_path, "'%s' is written twice in one mapping (lines %d and %d): "
                               "Ansible only warns, keeps the last value (line %d) and drops line %d's" % (
                                   key_path.rsplit(".", 1)[-1], first, second, second, first),
                               "keep one of the two lines (the one with the value you mean) and delete the other",
                               source="%s:%d" % (_rel(path), second)))
    return out


# Keys of a NIC or a fabric written at the top level of a host_vars/group_vars file: Ansible takes them as
# variables of their own, which nothing reads (the MTU stays the fabric's).
_WRONG_LEVEL = {
    "mtu": "nics[].mtu (one NIC) or pod.fabrics[].mtu (the fabric)", "address": "nics[].address",
    "fabric": "nics[].fabric", "switch_port": "nics[].switch_port", "rdma_device": "nics[].rdma_device",
    "speed": "nics[].speed", "default_route": "nics[].default_route", "subnet": "pod.fabrics[].subnet",
    "gateway": "pod.fabrics[].gateway", "roce": "pod.fabrics[].roce", "fabrics": "pod.fabrics",
    "ra_profile": "pod.ra_profile", "scheduler": "pod.scheduler", "hosts_fabric": "pod.hosts_fabric",
}


def _near_model_var(key: str) -> Optional[str]:
    """The model variable ``key`` misspells (``nic``, ``NICs``, ``dgx-model``, ``storage-node``), else None."""
    norm = key.lower().replace("-", "_")
    for var in MODEL_VARS:
        if key == var:
            return None
        if norm == var or (abs(len(norm) - len(var)) <= 1 and norm[:1] == var[:1] and
                           difflib.SequenceMatcher(None, norm, var).ratio() >= 0.85):
            return var
    return None


def unread_inventory_values(inventory_sources: Sequence[str], host_names: Iterable[str],
                            group_names: Iterable[str]) -> List[Finding]:
    """Values Ansible silently leaves unread (warnings; the errors they cause say where to look):

    - a host_vars/group_vars file for no host or group of the inventory (``host_vars/DGX1-10.yml``, a typo or a
      host that was removed); names that differ only by case are ``scan_inventory``'s;
    - a top-level key that misspells a model variable (``nic:``, ``dgx-model:``): the model variable stays unset;
    - a NIC or fabric key at the top level (``mtu: 9000`` beside ``nics:``): a variable nothing reads."""
    hosts, groups = set(host_names), set(group_names) | {"all", "ungrouped"}
    known = {"host_vars": ("host", hosts), "group_vars": ("group", groups)}
    files = inventory_yaml_files(inventory_sources)
    has_file = {(kind, name) for _path, kind, name in files}
    out: List[Finding] = []
    for path, kind, name in files:
        if kind not in known or name is None:
            continue
        what, names = known[kind]
        if name not in names:
            if name.lower() not in {n.lower() for n in names}:
                # the file is most likely meant for a host (group) with a similar name that has no file of its own
                orphans = sorted(n for n in names if (kind, n) not in has_file)
                close = difflib.get_close_matches(name, orphans, n=1, cutoff=0.8)
                out.append(Finding(None, "file", "file", "%s is not read: the inventory has no %s '%s'" % (
                    _rel(path), what, name), ("rename it to %s if it is for %s %s" % (
                        _rel(_renamed(path, name, close[0])), what, close[0])) if close else
                    "add %s to the inventory (hosts.yml), or delete the file" % name, severity="warning",
                    source=_rel(path)))
            continue
        node = _compose(path)
        if not isinstance(node, yaml.MappingNode):
            continue
        host = name if kind == "host_vars" else None
        for k, _v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                continue
            var = _near_model_var(k.value)
            where = "%s:%d" % (_rel(path), k.start_mark.line + 1)
            if var is not None:
                out.append(Finding(host, k.value, k.value, "'%s' is not a variable the toolkit reads, so %s stays "
                                   "unset here" % (k.value, var), "did you mean '%s'?" % var, severity="warning",
                                   source=where))
            elif k.value in _WRONG_LEVEL:
                out.append(Finding(host, k.value, k.value, "'%s' at the top level of the file is a variable of its "
                                   "own that nothing reads" % k.value, "move it to %s" % _WRONG_LEVEL[k.value],
                                   severity="warning", source=where))
    return out


def unreadable_var_files(base: str) -> List[Finding]:
    """Parse errors (file:line) of the host_vars and group_vars files under ``base`` (what host_group_vars reads)."""
    out = []
    for path, kind, name in inventory_yaml_files([base]):
        if kind != "inventory":
            node, error = _compose_file(path)
            del node
            if error is not None:
                out.append(_parse_finding(path, name if kind == "host_vars" else None, error))
    return out


def _renamed(path: str, name: str, real: str) -> str:
    folder = os.path.dirname(path)
    while os.path.basename(folder) not in ("host_vars", "group_vars") and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    rel = os.path.relpath(path, folder)
    first, _sep, rest = rel.partition(os.sep)
    renamed = os.path.join(folder, real + first[len(name):])
    return os.path.join(renamed, rest) if rest else renamed


def _parse_finding(path: str, host: Optional[str], error: Exception) -> Finding:
    mark = getattr(error, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    col = mark.column + 1 if mark is not None else None
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        lines = []
    tab_line = None
    if line is not None:  # the parser stops at or just after the tab
        for n in (line, line - 1, line + 1):
            if 1 <= n <= len(lines) and "\t" in lines[n - 1]:
                tab_line = n
                break
    if tab_line is None and "\t" in problem:
        tab_line = next((n for n, text in enumerate(lines, 1) if "\t" in text), None)
    if tab_line is not None:
        column = lines[tab_line - 1].index("\t") + 1
        return Finding(host, "file", "file", "a tab character at line %d, column %d: YAML indents with spaces only, "
                       "so Ansible cannot read this file" % (tab_line, column),
                       "replace the tab with spaces (as many as the lines around it use)",
                       source="%s:%d" % (_rel(path), tab_line))
    odd = lookalike_near(lines, line)  # a non-breaking space or an en dash pasted from a PDF (issue 46)
    if odd is not None:
        return Finding(host, "file", "file", odd[1], odd[2], source="%s:%d" % (_rel(path), odd[0]))
    return Finding(host, "file", "file", "Ansible cannot read this file: %s%s" % (
        problem, " (column %d)" % col if col else ""), "correct the YAML at that line",
        source="%s:%d" % (_rel(path), line) if line else _rel(path))


def _duplicate_keys(root: Optional[yaml.Node]) -> List[Tuple[str, int, int]]:
    """(key path, first line, second line) of every key written twice in one mapping."""
    found: List[Tuple[str, int, int]] = []
    visited = set()

    def walk(node: yaml.Node, path: str) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: Dict[str, int] = {}
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode) or k.value == "<<":
                    continue
                child = "%s.%s" % (path, k.value) if path else k.value
                if k.value in seen:
                    found.append((child, seen[k.value], k.start_mark.line + 1))
                else:
                    seen[k.value] = k.start_mark.line + 1
                walk(v, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, "%s[%d]" % (path, i))

    if root is not None:
        walk(root, "")
    return found
