#!/usr/bin/env python3
"""The import graph between the module_utils packages, the private names imported across modules, and the floors
(issue 38 item 4). Pure: reads the source with ``ast``, imports nothing of ours, no network.

    scripts/import_floors.py            # the graph, the upward imports, the private names, the proposed floors
    scripts/import_floors.py --json     # the same as data

A module is a file ``<package>/<name>.py`` under the collection's module_utils, named ``package.name`` here. Its
floor is its package's (FLOORS), or the module's own where a module is to move (MOVES, the proposal: file -> the
package it belongs in). An import is *upward* when the importer's floor is below the imported module's; a name
``_x`` imported from another module is *private across modules* (across packages when the packages differ).
With ``--proposed`` the modules are placed as MOVES says, to show what is left after the moves.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MU = os.path.join(ROOT, "ansible_collections", "dgxpod", "toolkit", "plugins", "module_utils")
PACKAGE = "ansible_collections.dgxpod.toolkit.plugins.module_utils"

# The floors, bottom (0) to top (the one table: tests/unit/test_imports.py enforces it). A package may import its own
# floor and those below, never one above.
FLOORS: Dict[str, int] = {
    # 0 ground: the result type, the hardware catalogue, shared helpers (run a tool, parse errors)
    "result": 0, "catalog": 0, "common": 0,
    # 1 the model: the typed pod, the derivations from it, the RA profile and merged expectations
    "pod": 1,
    # 2 preflight: checks the model (schema, switch/slurm checks, file:line sources)
    "preflight": 2,
    # 3 per concern: parsers, planning, evaluators (each package its own; none imports another's private names)
    "network": 3, "gpu": 3, "switch": 3, "storage": 3, "perf": 3, "nccl": 3, "containers": 3, "training": 3,
    "slurm": 3, "drift": 3, "node": 3,
    # 4 the report: the stage registry, findings, rendering, the results document
    "report": 4,
}
FLOOR_NAMES = {0: "ground (result, catalogue, common)", 1: "model (pod)", 2: "preflight",
               3: "concerns (parsers, planning, evaluators)", 4: "report"}

# The moves the floors need (module -> its new package.module; None: the module goes). Empty: issue 38 item 4 applied
# them (pod.model/schema/switch_checks/slurm_checks/sources -> preflight.*; the shims report.checks and pod.eval
# went). A later reshuffle lists its moves here to see, with --proposed, what is left after them.
MOVES: Dict[str, str] = {}


# Names that move apart from their module, and private names imported by another module made public
# (module.name -> module.name). Empty: issue 38 item 4 applied them (model_from_hostvars, MODEL_VARS,
# switch_port_mtu, vlan_id -> pod.types; common.parse_util's lines, complete_lines, content_lines, parse_int;
# gpu.parse.refuse_failure; perf.plan.iperf_test; preflight.schema's ip_of, ipif_of, net_of, addr_owner,
# HOSTNAME_RE; preflight.switch_checks' check_switches, check_cabling).
NAME_MOVES: Dict[str, str] = {}


def modules() -> Dict[str, str]:
    """{package.name: path} of every module_utils module (``__init__`` as ``package``)."""
    out = {}
    for pkg in sorted(os.listdir(MU)):
        d = os.path.join(MU, pkg)
        if not os.path.isdir(d) or pkg.startswith("__"):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".py"):
                out[pkg if f == "__init__.py" else "%s.%s" % (pkg, f[:-3])] = os.path.join(d, f)
    return out


def _resolve(mod: str, base: str, names: List[str], known: Dict[str, str]) -> List[Tuple[str, List[str]]]:
    """``from <PACKAGE>.<base> import names`` -> [(module, [names imported from it])]: a name that is itself a
    module (``from ...drift import eval as drift_eval``) is that module."""
    out: Dict[str, List[str]] = defaultdict(list)
    for n in names:
        sub = "%s.%s" % (base, n)
        if sub in known:
            out[sub]
        else:
            out[base].append(n)
    return list(out.items())


def imports(known: Dict[str, str]) -> List[Dict[str, object]]:
    """Every import of a module_util by a module_util: {importer, imported, names, line}."""
    rows = []
    for mod, path in known.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE + "."):
                base = node.module[len(PACKAGE) + 1:]
                for target, names in _resolve(mod, base, [a.name for a in node.names], known):
                    rows.append({"importer": mod, "imported": target, "names": names, "line": node.lineno})
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith(PACKAGE + "."):
                        rows.append({"importer": mod, "imported": a.name[len(PACKAGE) + 1:], "names": [],
                                     "line": node.lineno})
    return rows


def importers_of(targets: List[str]) -> Dict[str, List[str]]:
    """{module: [file:line of every import of it]} over the whole repository (module_utils, modules, plugins,
    scripts, tests, the simulator): who must change when it moves."""
    out: Dict[str, List[str]] = {t: [] for t in targets}
    known = modules()
    for top in ("ansible_collections", "library", "filter_plugins", "vars_plugins", "callback_plugins",
                "strategy_plugins", "scripts", "tests", "sim"):
        for base, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                path = os.path.join(base, f)
                try:
                    tree = ast.parse(open(path, encoding="utf-8").read(), path)
                except SyntaxError:
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
                        base_mod = node.module[len(PACKAGE) + 1:]
                        for target, _ in _resolve("", base_mod, [a.name for a in node.names], known):
                            if target in out:
                                out[target].append("%s:%d" % (os.path.relpath(path, ROOT), node.lineno))
    return out


def package(mod: str, proposed: bool) -> str:
    if proposed and MOVES.get(mod):
        mod = MOVES[mod]
    return mod.split(".", 1)[0]


def floor(mod: str, proposed: bool) -> int:
    return FLOORS.get(package(mod, proposed), -1)


def analyse(proposed: bool = False) -> Dict[str, object]:
    known = modules()
    rows = [r for r in imports(known) if not (proposed and MOVES.get(r["importer"], "") is None)]
    graph: Dict[str, Dict[str, List[str]]] = defaultdict(lambda: defaultdict(list))
    upward, private, unknown = [], [], set()
    for r in rows:
        a, b = r["importer"], r["imported"]
        pa, pb = package(a, proposed), package(b, proposed)
        if pa not in FLOORS:
            unknown.add(pa)
        if pb not in FLOORS:
            unknown.add(pb)
        if pa != pb:
            graph[pa][pb].append("%s:%d -> %s" % (a, r["line"], b))
        if floor(a, proposed) < floor(b, proposed):
            upward.append("%s (%s, floor %d) imports %s (%s, floor %d) line %d"
                          % (a, pa, floor(a, proposed), b, pb, floor(b, proposed), r["line"]))
        for n in r["names"]:
            if n.startswith("_") and not n.startswith("__"):
                private.append({"importer": a, "imported": b, "name": n, "line": r["line"],
                                "across_packages": pa != pb})
    return {"graph": {k: dict(v) for k, v in sorted(graph.items())}, "upward": upward, "private": private,
            "unknown_packages": sorted(unknown)}


def report(res: Dict[str, object], out=sys.stdout) -> None:
    w = out.write
    w("== import graph between module_utils packages (importer -> imported: by file, line)\n")
    for pa, deps in res["graph"].items():
        w("%s (floor %s)\n" % (pa, FLOORS.get(pa, "?")))
        for pb, where in sorted(deps.items()):
            w("  -> %s (floor %s): %d import(s)\n" % (pb, FLOORS.get(pb, "?"), len(where)))
            for x in where:
                w("       %s\n" % x)
    w("\n== upward imports (a lower floor imports a higher one): %d\n" % len(res["upward"]))
    for x in res["upward"]:
        w("  %s\n" % x)
    priv = res["private"]
    w("\n== private names imported across modules: %d (%d across packages)\n"
      % (len(priv), sum(p["across_packages"] for p in priv)))
    for p in priv:
        w("  %s%s imports %s from %s (line %d)\n" % ("[across packages] " if p["across_packages"] else "",
                                                   p["importer"], p["name"], p["imported"], p["line"]))
    if res["unknown_packages"]:
        w("\n== packages without a floor in FLOORS: %s\n" % ", ".join(res["unknown_packages"]))
    w("\n== who imports the modules to move\n")
    for mod, where in importers_of([m for m in MOVES if m in modules()]).items():
        w("  %s -> %s: %d import(s)\n" % (mod, MOVES[mod] or "(goes)", len(where)))
        for x in sorted(set(where)):
            w("       %s\n" % x)
    w("\n== proposed floors (bottom first)\n")
    for f in sorted(FLOOR_NAMES):
        w("  %d %s: %s\n" % (f, FLOOR_NAMES[f], ", ".join(sorted(p for p, v in FLOORS.items() if v == f))))
    w("\n== proposed moves\n")
    for a, b in MOVES.items():
        w("  %s -> %s\n" % (a, b or "(goes)"))
    w("\n== proposed name moves and renames (private names imported by another module made public)\n")
    for a, b in NAME_MOVES.items():
        w("  %s -> %s\n" % (a, b))


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the analysis as JSON")
    ap.add_argument("--proposed", action="store_true", help="place modules as MOVES proposes")
    ns = ap.parse_args(argv)
    res = analyse(ns.proposed)
    if ns.json:
        json.dump(res, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
