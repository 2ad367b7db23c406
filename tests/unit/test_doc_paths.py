"""Every repository path a document names exists (issue 38 item 8): a move that leaves a doc behind fails here.

The documents: README.md, docs/*.md, roles/*/README.md, and playbooks/*.yml and playbooks/tasks/*.yml (their
comments and task names). What is read as a path, in backticks or not:

- a token with a ``/`` whose first part is a top-level directory of the repository (``roles/``, ``sim/``,
  ``tests/`` ...) or ``module_utils``, or which ends in a file extension (``.py``, ``.yml``, ``.md`` ...);
- a bare ``name.py`` (some Python file of the repository has that name: ``slurm_eval.py`` is gone);
- a dotted name under a module_utils package, ``pod.eval.build_results()`` -> ``module_utils/pod/eval``
  (``pod.<model key>.*`` is the inventory's model, not a module).

It exists when it names a file or directory from the repository root, from the document's directory (a role
README's ``defaults/main.yml``) or one above it, in the collection's module_utils (docs write ``module_utils/<x>`` and
``<package>/<name>.py`` for ``ansible_collections/dgxpod/toolkit/plugins/module_utils/<x>``), or in some role
(``meta/argument_specs.yml``); ``x/y.attr`` and ``library/pod_nccl`` name ``x/y.py`` and ``library/pod_nccl.py``.
A placeholder is a glob that must match (``profiles/<ra>.yml``, ``playbooks/validate_{stage}.yml``), as is a glob;
a brace list is expanded (``library/pod_{iperf,fio}.py`` is two paths); ``path:line``, ``path#anchor`` and
``path::test`` name the path.

Not paths: URLs and domain names (``docs.nvidia.com/...``), absolute paths (``/etc/hosts``), a home or a
variable (``~/``, ``$OUT/``), Jinja, what a run writes or a tool installs (``results/``, ``build/``,
``collections/``, hidden or ``__pycache__`` directories), an inventory's own ``group_vars/``/``host_vars/``, a
path under a placeholder directory (``<build_dir>/...``), prose (``pass/fail``, ``network/iperf``) and the
names in NOT_PATHS (other projects' files, the RA's mount names).
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
from typing import Iterator, List, Tuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTION = os.path.join(ROOT, "ansible_collections", "dgxpod", "toolkit")
MU = os.path.join(COLLECTION, "plugins", "module_utils")

EXTENSIONS = ("py", "yml", "yaml", "md", "j2", "json", "sh", "cfg", "toml", "txt", "html", "png", "svg", "csv",
              "ini", "xml")
# first parts that are not the repository's: what a run writes, what ansible-galaxy installs (git-ignored), and an
# inventory's own files (group_vars/dgx.yml of whichever inventory the text speaks of)
NOT_OURS = {"results", "collections", "build", "group_vars", "host_vars"}
# names that look like repository paths and are not: {path: why}
NOT_PATHS = {
    "scripts/logs": "the RA's NFS export names (a scripts/logs mount)",
    "scripts/data": "the RA's NFS export names (a scripts/data mount)",
    "inventories/big/host_vars/DGX-1.yml": "an example inventory in a sample preflight message",
    "ansible_mitogen/affinity.py": "Mitogen's source",
    "docs/vf-setup.md": "a file of k8snetworkplumbingwg/sriov-cni (a fixture's provenance)",
    "exercises2/soft-roce/mellanox/mlnx_qos.md": "a file of magnate3/linux-riscv-dev (a fixture's provenance)",
    "tests/units/anta_tests/test_connectivity.py": "a file of aristanetworks/anta (a fixture's provenance)",
    "tests/units/anta_tests/test_interfaces.py": "a file of aristanetworks/anta (a fixture's provenance)",
    "shared/design/POD_IN_A_BOX.md": "the design notes outside the repository",
    "round_robin_mpi.py": "the RA's training script",
    "train.py": "the RA's training script",
    "tf_cnn_benchmarks.py": "the RA's training script",
}


def _top_level() -> set:
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        tops = {f.split("/", 1)[0] for f in files.splitlines() if "/" in f}
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: what is on disk
        tops = {d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d))}
    return {t for t in tops if not t.startswith(".")} | {".ci"}


TOP = _top_level()
MU_PACKAGES = {d for d in os.listdir(MU) if os.path.isdir(os.path.join(MU, d)) and not d.startswith("__")}
# pod.<key>.<key> in a doc is the inventory's model (pod.validation.expectations), not module_utils/pod/<key>.py
POD_KEYS = {"validation", "storage", "slurm", "fabrics", "switches", "hosts"}


def documents() -> List[str]:
    docs = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) \
        + sorted(glob.glob("roles/*/README.md", root_dir=ROOT))
    plays = sorted(glob.glob("playbooks/*.yml", root_dir=ROOT)) + sorted(glob.glob("playbooks/tasks/*.yml",
                                                                                   root_dir=ROOT))
    return docs + plays


def text_lines(doc: str) -> Iterator[Tuple[int, str]]:
    """(line number, text) of every line of a document (a playbook's comments, task names and code alike)."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
        yield from enumerate(fh, 1)


TOKEN = re.compile(r"[^\s`'\"()\[\]|]+")


def _split_commas(tok: str) -> List[str]:
    """Split at commas outside braces (``a/b,c/d`` is two tokens; ``x/{a,b}.py`` one)."""
    out, depth, cur = [], 0, ""
    for ch in tok:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth <= 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _expand(tok: str) -> List[str]:
    m = re.search(r"\{([^{}]*,[^{}]*)\}", tok)
    if not m:
        return [tok]
    return [x for part in m.group(1).split(",") for x in _expand(tok[:m.start()] + part + tok[m.end():])]


def _clean(tok: str) -> str:
    lead = len(tok) - len(tok.lstrip("*"))
    if lead:  # Markdown emphasis around a path (**roles/slurm**), not a glob's own *
        tok = tok[lead:-lead] if tok.endswith("*" * lead) and len(tok) > 2 * lead else tok[lead:]
    tok = re.sub(r"[.,;:!?>]+$", "", tok)
    tok = re.sub(r"::.*$", "", tok)  # a pytest node id names its file
    tok = re.sub(r"#.*$", "", tok)  # a Markdown anchor
    return re.sub(r"(\.\w+):\d+(?:-\d+)?(?::\d+)?$", r"\1", tok)  # path:line


def _hidden(parts: List[str]) -> bool:
    """A hidden or generated directory below the first part (sim/.state, __pycache__); "report.md/.html"."""
    return any((p.startswith(".") and p not in (".", "..")) or p == "__pycache__" for p in parts[1:])


def candidates(line: str, variables: frozenset = frozenset()) -> Iterator[str]:
    """The repository paths a line names (placeholders, URLs, absolute paths left out); a bare ``name.py`` too.
    ``variables``: the names the document registers (a playbook's ``register: preflight``): ``preflight.summary.pod``
    is that variable, not module_utils/preflight/summary.py."""
    ext = re.compile(r"\.(%s)$" % "|".join(EXTENSIONS))
    for raw in TOKEN.findall(line):
        for tok in _split_commas(raw):
            tok = _clean(tok)
            if tok.startswith("<"):
                continue  # under a directory the text names: <build_dir>/<switch>/running.cfg
            tok = re.sub(r"<[\w.-]+>", "*", tok)  # a placeholder is a glob: profiles/<ra>.yml must match
            if "://" in tok or re.search(r"[<>$~@=%\\]|\{\{|\}\}|\.\.\.", tok) or tok in NOT_PATHS:
                continue
            if "/" not in tok:
                if re.fullmatch(r"[A-Za-z]\w*\.py", tok):
                    yield tok  # a Python file by its name: it is somewhere in the repository
                dotted = re.fullmatch(r"(\w+)\.(\w+)\.\w+(?:\.\w+)*(?:\(\))?", tok)
                if dotted and dotted.group(1) in MU_PACKAGES and not ext.search(tok) \
                        and not (dotted.group(1) == "pod" and dotted.group(2) in POD_KEYS) \
                        and dotted.group(1) not in variables:
                    yield "module_utils/%s/%s" % dotted.groups()  # pod.eval.build_results: pod/eval(.py)
                continue
            if tok.startswith("/") or re.match(r"^\w+:", tok):
                continue
            parts = [p for p in tok.split("/") if p not in (".", "..")]
            first = parts[0] if parts else ""
            if not first or first in NOT_OURS or (first.startswith(".") and first not in TOP) or _hidden(parts):
                continue
            if "." in first and first not in TOP and not ext.search(first):
                continue  # a domain name (docs.nvidia.com/...)
            if not ext.search(tok.rstrip("/")) and first not in TOP | {"module_utils", "plugins"}:
                continue  # "pass/fail", "iperf3/fio", "network/iperf" (a module_utils package: named with its file)
            for path in _expand(tok):
                yield re.sub(r"\{\w+\}", "*", path)  # a placeholder in braces ({stage}) too


def _python_files() -> set:
    out = set()
    for _dirpath, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in NOT_OURS and d != "__pycache__"]
        out.update(f for f in files if f.endswith(".py"))
    return out


PY_FILES = _python_files()


def exists(path: str, doc: str) -> bool:
    """The path names a file or directory; ``pod/eval.build_results`` or ``library/pod_nccl`` (a Python name)
    names ``pod/eval.py`` and ``library/pod_nccl.py``; ``meta/argument_specs.yml`` (a role's) any role's."""
    if "/" not in path:
        return path in PY_FILES
    rel = path[len("module_utils/"):] if path.startswith("module_utils/") else path
    here = os.path.dirname(os.path.join(ROOT, doc))
    bases = [ROOT, MU, os.path.join(COLLECTION, "plugins"), COLLECTION]
    while here.startswith(ROOT + os.sep):  # the document's directory and those above it (playbooks/tasks: playbooks)
        bases.append(here)
        here = os.path.dirname(here)
    bases += sorted(glob.glob(os.path.join(ROOT, "roles", "*")))
    head, _, last = path.rpartition("/")
    names = [path, rel]
    if "." in last and not re.search(r"\.(%s)$" % "|".join(EXTENSIONS), last):
        names += [head + "/" + last.split(".", 1)[0] + ".py"]  # a module's attribute
    elif "." not in last and last:
        names += [path + ".py"]  # a Python module's name
    for base in bases:
        for p in names:
            full = os.path.normpath(os.path.join(base, p[len("module_utils/"):] if base == MU and
                                                 p.startswith("module_utils/") else p))
            if any(ch in p for ch in "*?["):
                if glob.glob(full):
                    return True
            elif os.path.exists(full):
                return True
    return False


def registered(doc: str) -> frozenset:
    """The variables a playbook or task file registers (``register: preflight``); none in Markdown."""
    if not doc.endswith((".yml", ".yaml")):
        return frozenset()
    return frozenset(re.findall(r"^\s*register:\s*(\w+)\s*$", open(os.path.join(ROOT, doc)).read(), re.M))


def missing(doc: str) -> List[str]:
    variables = registered(doc)
    return ["%s:%d: %s" % (doc, n, p) for n, line in text_lines(doc) for p in candidates(line, variables)
            if not exists(p, doc)]


@pytest.mark.parametrize("doc", documents())
def test_every_path_a_document_names_exists(doc):
    gone = missing(doc)
    assert gone == [], "paths that do not exist (a stale name after a move?):\n" + "\n".join(gone)


def test_the_path_reader():
    line = ("`module_utils/pod/types.py`, pod/derive.py and `library/pod_{iperf,fio}.py`; roles/*/README.md; "
            "see https://github.com/x/y.py, docs.nvidia.com/a/b.html, /etc/hosts, results/latest/report.md, "
            "profiles/<ra>.yml, <build_dir>/<switch>/running.cfg, ~/.ssh/config, sim/.state/x.json, pass/fail, "
            "iperf3/fio, network/iperf (sim/standins/) [x](../../docs/slurm.md#top) library/pod_preflight.py:273 "
            "`**roles/slurm**` tests/unit/test_x.py::test_y pod.eval.build_results() pod.validation.expectations "
            "slurm_eval.py nccl.env.j2 scripts/logs")
    assert list(candidates(line)) == [
        "module_utils/pod/types.py", "pod/derive.py", "library/pod_iperf.py", "library/pod_fio.py",
        "roles/*/README.md", "profiles/*.yml", "sim/standins/", "../../docs/slurm.md", "library/pod_preflight.py",
        "roles/slurm", "tests/unit/test_x.py", "module_utils/pod/eval", "slurm_eval.py"]
    assert list(candidates("{{ preflight.summary.pod }} preflight.model.validate", frozenset({"preflight"}))) == []
    assert list(candidates("preflight.model.validate")) == ["module_utils/preflight/model"]
    assert "preflight" in registered("playbooks/preflight.yml")
    assert exists("module_utils/pod/types.py", "docs/x.md") and exists("pod/derive.py", "docs/x.md")
    assert exists("../../docs/slurm.md", "roles/slurm/README.md") and exists("defaults/main.yml",
                                                                             "roles/slurm/README.md")
    assert exists("library/pod_nccl", "docs/x.md") and exists("module_utils/slurm/job.salloc_argv", "docs/x.md")
    assert exists("meta/argument_specs.yml", "docs/x.md") and exists("profiles/*.yml", "docs/x.md")
    assert not exists("module_utils/drift_eval.py", "docs/architecture.md")
    assert not exists("module_utils/*_eval.py", "docs/architecture.md")
    assert not exists("roles/*/nothing_here.yml", "README.md") and not exists("slurm_eval.py", "README.md")
