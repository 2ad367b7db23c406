# -*- coding: utf-8 -*-
"""Text in the inventory files that is not what it looks like (issue 46, class 6), read from the files themselves:

- characters pasted from a PDF or a word processor that look like ASCII but are not: a non-breaking space (in the
  indentation YAML cannot read the file; inside a value it becomes part of it), typographic quotes (“10.0.0.1”
  is a string with the quotes in it, not a quoted string), en dashes, zero-width spaces;
- YAML 1.1 booleans where a string is meant: Ansible's parser reads an unquoted ``on``, ``off``, ``yes``, ``no``
  (any case) as true/false, so ``name: on`` is the boolean true, written back as "True";
- a comment inside a quoted value (``address: "10.55.5.231  # DGX1-1"``): YAML starts a comment only outside
  quotes, so the comment is part of the value.

Each finding names the file and line, the key path where the file can be parsed, what the text really is and what
to type instead. ``explained`` drops the findings these make elsewhere (a schema error on the same key, a parse
error of the same file), so one mistake is one line. Pure file reading (PyYAML's composer, as preflight.sources)."""
from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import yaml

from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import (Field, Finding, HOST_SCHEMAS,
    POD_SCHEMA)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.settings_checks import ENV_VARS

# character -> (what it is, what to type instead)
LOOKALIKES: Dict[str, Tuple[str, str]] = {
    "\u00a0": ("a non-breaking space (U+00A0)", "an ordinary space"),
    "\u202f": ("a narrow non-breaking space (U+202F)", "an ordinary space"),
    "\u2007": ("a figure space (U+2007)", "an ordinary space"),
    "\u2009": ("a thin space (U+2009)", "an ordinary space"),
    "\u3000": ("an ideographic space (U+3000)", "an ordinary space"),
    "\u200b": ("a zero-width space (U+200B)", "nothing (delete it)"),
    "\u200c": ("a zero-width non-joiner (U+200C)", "nothing (delete it)"),
    "\u200d": ("a zero-width joiner (U+200D)", "nothing (delete it)"),
    "\u2060": ("a word joiner (U+2060)", "nothing (delete it)"),
    "\ufeff": ("a byte order mark (U+FEFF)", "nothing (delete it)"),
    "\u00ad": ("a soft hyphen (U+00AD)", "nothing (delete it)"),
    "\u201c": ("a typographic opening quote \u201c (U+201C)", 'a straight quote "'),
    "\u201d": ("a typographic closing quote \u201d (U+201D)", 'a straight quote "'),
    "\u201e": ("a typographic low quote \u201e (U+201E)", 'a straight quote "'),
    "\u201f": ("a typographic reversed quote \u201f (U+201F)", 'a straight quote "'),
    "\u2018": ("a typographic opening quote \u2018 (U+2018)", "a straight quote '"),
    "\u2019": ("a typographic closing quote \u2019 (U+2019)", "a straight quote '"),
    "\u201a": ("a typographic low quote \u201a (U+201A)", "a straight quote '"),
    "\u2032": ("a prime \u2032 (U+2032)", "a straight quote '"),
    "\u2033": ("a double prime \u2033 (U+2033)", 'a straight quote "'),
    "\u00ab": ("a guillemet \u00ab (U+00AB)", 'a straight quote "'),
    "\u00bb": ("a guillemet \u00bb (U+00BB)", 'a straight quote "'),
    "\u2010": ("a hyphen (U+2010)", "an ASCII '-'"),
    "\u2011": ("a non-breaking hyphen (U+2011)", "an ASCII '-'"),
    "\u2012": ("a figure dash (U+2012)", "an ASCII '-'"),
    "\u2013": ("an en dash \u2013 (U+2013)", "an ASCII '-'"),
    "\u2014": ("an em dash \u2014 (U+2014)", "an ASCII '-'"),
    "\u2212": ("a minus sign \u2212 (U+2212)", "an ASCII '-'"),
    "\uff1a": ("a full-width colon \uff1a (U+FF1A)", "an ASCII ':'"),
    "\u2024": ("a one-dot leader (U+2024)", "an ASCII '.'"),
}
_SPACES = {"\u00a0", "\u202f", "\u2007", "\u2009", "\u3000"}
# What YAML 1.1 (PyYAML/libyaml, Ansible's parser) reads as a boolean when unquoted.
_YAML11_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_BOOL_TAG = "tag:yaml.org,2002:bool"
# Role variables whose value is a string (an unquoted on/yes there is a boolean, written back as True).
_STR_SETTINGS = ("ngc_container_base_image", "ngc_container_base_tag", "ngc_container_image", "ngc_container_from",
                 "ngc_container_name", "pod_training_slurm_partition", "dgx_network_renderer")
_COMMENT_IN_QUOTES = re.compile(r"\s#(\s|$)")


def _schema_of(var: str) -> Optional[Any]:
    """The Field (or Schema) of a top-level variable, for the YAML 1.1 boolean check."""
    if var == "pod":
        return Field("dict", schema=POD_SCHEMA)
    for schema in HOST_SCHEMAS.values():
        if var in schema:
            return schema[var]
    if var in ENV_VARS:
        return Field("dict", values=Field("str"))
    if var in _STR_SETTINGS:
        return Field("str")
    return None


def _rel(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _code_part(line: str) -> str:
    """The line without its comment: '#' at the start or after a blank, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == 0 or line[i - 1] in " \t:[{,-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _var_scopes(root: Optional[yaml.Node], kind: str, name: Optional[str]
                ) -> List[Tuple[Optional[str], yaml.MappingNode]]:
    """(host, mapping of variables) in a file: a host_vars/group_vars file is one; an inventory file holds each
    host's inline vars and each group's ``vars``."""
    if not isinstance(root, yaml.MappingNode):
        return []
    if kind != "inventory":
        return [(name if kind == "host_vars" else None, root)]
    found: List[Tuple[Optional[str], yaml.MappingNode]] = []

    def walk(node: yaml.Node) -> None:
        if not isinstance(node, yaml.MappingNode):
            return
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                continue
            if k.value == "hosts" and isinstance(v, yaml.MappingNode):
                for hk, hv in v.value:
                    if isinstance(hk, yaml.ScalarNode) and isinstance(hv, yaml.MappingNode):
                        found.append((hk.value, hv))
            elif k.value == "vars" and isinstance(v, yaml.MappingNode):
                found.append((None, v))
            elif k.value == "children" and isinstance(v, yaml.MappingNode):
                for _gk, gv in v.value:
                    walk(gv)
            elif isinstance(v, yaml.MappingNode) and node is root:
                walk(v)
    walk(root)
    return found


def _line_paths(scopes: Sequence[Tuple[Optional[str], yaml.MappingNode]]) -> Dict[int, Tuple[Optional[str], str]]:
    """line -> (host, deepest key path that starts on it)."""
    lines: Dict[int, Tuple[Optional[str], str]] = {}

    def walk(node: yaml.Node, path: str, host: Optional[str]) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    sub = "%s.%s" % (path, k.value) if path else k.value
                    lines[k.start_mark.line + 1] = (host, sub)
                    walk(v, sub, host)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                sub = "%s[%d]" % (path, i)
                lines.setdefault(item.start_mark.line + 1, (host, sub))
                walk(item, sub, host)
        elif isinstance(node, yaml.ScalarNode):
            for n in range(node.start_mark.line + 1, node.end_mark.line + 2):
                lines.setdefault(n, (host, path))

    for host, scope in scopes:
        walk(scope, "", host)
    return lines


def _finding(host: Optional[str], path: str, message: str, fix: str, source: str) -> Finding:
    var = re.split(r"[.\[]", path, maxsplit=1)[0] if path else "file"
    f = Finding(host, var, path or "file", message, fix, source=source)
    f.text_check = True  # type: ignore[attr-defined]
    return f


def describe_lookalikes(line: str, n: int) -> Optional[Tuple[str, str]]:
    """(message, fix) for the look-alike characters of line ``n`` outside its comment, or None."""
    if n == 1 and line.startswith("\ufeff"):
        line = line[1:]  # a byte order mark at the start of the file is read as such
    code = _code_part(line)
    found = [(i, ch) for i, ch in enumerate(code) if ch in LOOKALIKES]
    if not found:
        return None
    col, ch = found[0]
    what, instead = LOOKALIKES[ch]
    indent = all(c == " " or c in _SPACES for c in code[:col + 1]) and ch in _SPACES
    kinds = sorted({LOOKALIKES[c][0] for _i, c in found})
    where = "in the indentation" if indent else "at column %d" % (col + 1)
    if indent:
        meaning = "it looks like a space, but YAML indents with spaces only, so the line is not where it looks " \
                  "(Ansible cannot read the file, or reads the key as text)"
    elif ch in _SPACES or what.startswith(("a zero", "a word", "a byte", "a soft")):
        meaning = "it looks like a space or nothing, but it becomes part of the value or key"
    elif "quote" in what or "prime" in what or "guillemet" in what:
        meaning = "YAML quotes with ' and \" only: this one is a character of the value, so the value has the " \
                  "quotes in it"
    else:
        meaning = "it looks like ASCII but is another character, so the text is not what it reads as"
    return ("%s %s of line %d (pasted from a PDF or a word processor?): %s%s" % (
        what, where, n, meaning, "; the line also has %s" % ", ".join(k for k in kinds if k != what)
        if len(kinds) > 1 else ""),
        "retype line %d with %s in place of %s" % (n, instead, what.split(" (")[0]))


def lookalike_near(lines: Sequence[str], line: Optional[int]) -> Optional[Tuple[int, str, str]]:
    """(line, message, fix) of the look-alike character that most likely made a file unreadable: on the line the
    parser stopped at or next to it, else the first in the file. None when the file has none."""
    order = [n for n in ((line, line - 1, line + 1) if line else ()) if 1 <= n <= len(lines)]
    order += [n for n in range(1, len(lines) + 1) if n not in order]
    for n in order:
        got = describe_lookalikes(lines[n - 1], n)
        if got is not None:
            return n, got[0], got[1]
    return None


def _lookalikes(path: str, lines: List[str], paths: Dict[int, Tuple[Optional[str], str]],
                host: Optional[str]) -> List[Finding]:
    out: List[Finding] = []
    for n, line in enumerate(lines, 1):
        got = describe_lookalikes(line, n)
        if got is not None:
            h, key = paths.get(n, (host, ""))
            out.append(_finding(h if h is not None else host, key, got[0], got[1], "%s:%d" % (_rel(path), n)))
    return out


def _values(path: str, scopes: Sequence[Tuple[Optional[str], yaml.MappingNode]]) -> List[Finding]:
    """YAML 1.1 booleans where the schema wants a string; a comment inside a quoted value."""
    out: List[Finding] = []

    def walk(node: yaml.Node, spec: Any, key: str, host: Optional[str]) -> None:
        if isinstance(spec, dict):
            spec = Field("dict", schema=spec)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    continue
                sub_spec = None
                if isinstance(spec, Field):
                    sub_spec = (spec.schema or {}).get(k.value) if spec.schema is not None else spec.values
                walk(v, sub_spec, "%s.%s" % (key, k.value) if key else k.value, host)
        elif isinstance(node, yaml.SequenceNode):
            item = spec.item if isinstance(spec, Field) else None
            for i, child in enumerate(node.value):
                walk(child, item, "%s[%d]" % (key, i), host)
        elif isinstance(node, yaml.ScalarNode):
            source = "%s:%d" % (_rel(path), node.start_mark.line + 1)
            if not node.style and node.tag == _BOOL_TAG and _YAML11_BOOL.match(node.value) and \
                    isinstance(spec, Field) and spec.kind == "str":
                read = "true" if node.value.lower() in ("yes", "on", "true") else "false"
                out.append(_finding(host, key, "'%s' is unquoted, so YAML 1.1 (Ansible's parser) reads it as the "
                                    "boolean %s, not the string '%s' (written back as '%s')" % (
                                        node.value, read, node.value, read.capitalize()),
                                    "quote it: %s: \"%s\"" % (key.rsplit(".", 1)[-1], node.value), source))
            elif node.style in ("'", '"') and _COMMENT_IN_QUOTES.search(node.value):
                value, _hash, comment = node.value.partition("#")
                out.append(_finding(host, key, "the quoted value %s%s%s holds a comment ('#%s'): YAML starts a "
                                    "comment only outside quotes, so it is part of the value" % (
                                        node.style, node.value, node.style, comment.rstrip()),
                                    "close the quote before the comment: %s%s%s  #%s" % (
                                        node.style, value.rstrip(), node.style, comment.rstrip()), source))

    for host, scope in scopes:
        for k, v in scope.value:
            if isinstance(k, yaml.ScalarNode):
                walk(v, _schema_of(k.value), k.value, host)
    return out


def scan_text(files: Iterable[Tuple[str, str, Optional[str]]], host_names: Iterable[str]) -> List[Finding]:
    """The text checks on the inventory files (``sources.inventory_yaml_files``: (path, kind, name))."""
    hosts = set(host_names)
    out: List[Finding] = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path, kind, name in files:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        host = name if kind == "host_vars" and name in hosts else None
        try:
            root = yaml.compose(text, Loader=loader)
        except yaml.YAMLError:
            root = None
        scopes = _var_scopes(root, kind, host)
        out += _lookalikes(path, text.splitlines(), _line_paths(scopes), host)
        out += _values(path, scopes)
    return out


def _has_lookalike(text: Optional[str]) -> bool:
    return bool(text) and any(ch in LOOKALIKES for ch in text)  # type: ignore[union-attr]


def explained(findings: List[Finding], text: List[Finding]) -> List[Finding]:
    """``findings`` without those a text finding explains: the same key at the same place, anything whose key or
    message holds a look-alike character of a file with one, and the parse error of a file with one."""
    by_place = {(f.source, f.key()) for f in text}
    files = {(f.source or "").rsplit(":", 1)[0] for f in text}
    kept = []
    for f in findings:
        if getattr(f, "text_check", False):
            kept.append(f)
            continue
        file = (f.source or "").rsplit(":", 1)[0]
        if (f.source, f.key()) in by_place:
            continue
        if file in files and f.var == "file" and f.message.startswith("Ansible cannot read"):
            continue
        if files and (_has_lookalike(f.key()) or _has_lookalike(f.message)):
            continue
        kept.append(f)
    return kept
