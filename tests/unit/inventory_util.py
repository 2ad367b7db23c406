"""Load an inventory directory the way Ansible does and run preflight on it (no network)."""
from __future__ import annotations

import os
import re
import shutil
from typing import Any, Callable, Dict, List

import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible.vars.manager import VariableManager

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = os.path.join(ROOT, "profiles")
REFERENCE = ["dgxpod", "dgxa100-powerscale", "dgx-ess3000", "dgxh100-pod"]


def _init_ansible() -> None:
    """Ansible's collection loader, as its CLIs set it up (the Python API needs it since ansible-core 2.15): the vars
    plugin pod_inventory_files imports the project's module_utils through ansible_collections/ (docs/architecture.md,
    "Imports"). The project root first, whichever ansible.cfg the caller's directory has; done once a process."""
    from ansible.plugins.loader import init_plugin_loader
    from ansible.utils.collection_loader import AnsibleCollectionConfig
    if AnsibleCollectionConfig.collection_finder is None:
        init_plugin_loader([ROOT])


# At import, so a script that imports this file before any module_util (scripts/plan_perf.py, switch_scale.py)
# has every ansible_collections.* import go through Ansible's loader, as pytest does (tests/conftest.py).
_init_ansible()


def hostvars(inv_dir: str) -> Dict[str, Dict[str, Any]]:
    _init_ansible()
    loader = DataLoader()
    inv = InventoryManager(loader=loader, sources=[inv_dir])
    vm = VariableManager(loader=loader, inventory=inv)
    out = {}
    for host in inv.get_hosts():
        hv = vm.get_vars(host=host, include_hostvars=False)
        # templated as Ansible does when a play reads them (inventories/sim's pod.scheduler is a template)
        out[host.name] = Templar(loader=loader, variables=hv).template({k: v for k, v in hv.items()})
        out[host.name]["group_names"] = sorted(g.name for g in host.get_groups() if g.name != "all")
    return out


def preflight(inv_dir: str):
    import pod_preflight  # library/pod_preflight.py
    hv = hostvars(inv_dir)
    return pod_preflight.run(hv, [inv_dir], PROFILES)


def copy_inventory(name: str, dest: str) -> str:
    target = os.path.join(dest, name)
    shutil.copytree(os.path.join(ROOT, "inventories", name), target)
    return target


def edit_yaml(path: str, change: Callable[[Any], Any]) -> None:
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    result = change(data)
    if isinstance(result, dict):  # a change may return a whole new document
        data = result
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)


def texts(findings, severity: str = "error") -> List[str]:
    return [f.format() for f in findings if f.severity == severity]


def error_finding(inv, findings, want_file, want_key, want_msg, want_fix):
    """The error finding for ``want_key`` whose message has ``want_msg``: it says ``want_fix``, names the file
    (``want_file`` under ``inv``) it is in and formats as ``ERROR <key> ... Fix: ...``."""
    match = [f for f in findings if f.severity == "error" and f.key() == want_key and want_msg in f.message]
    assert match, "no error for %s with %r; got:\n%s" % (want_key, want_msg, "\n".join(texts(findings)))
    f = match[0]
    assert want_fix in f.fix, f.format()
    assert f.source and os.path.abspath(f.source.split(":")[0]) == os.path.join(inv, want_file), f.format()
    text = f.format()
    assert text.startswith("ERROR ") and want_key in text and "Fix:" in text
    return f


# The files a preflight case edits in a copy of a reference inventory (test_preflight_kinds, test_preflight_mistakes)
HV = "host_vars/%s.yml"
POD = "group_vars/all/pod.yml"


def nic_edit(i: int, **values: Any) -> Callable[[Any], None]:
    """An ``edit_yaml`` change: update a host_vars file's ``nics[i]`` with ``values``."""
    def change(d):
        d["nics"][i].update(values)
    return change


def storage_edit(**values: Any) -> Callable[[Any], None]:
    """An ``edit_yaml`` change: update the pod file's ``pod.storage`` with ``values``."""
    def change(d):
        d["pod"]["storage"].update(values)
    return change


def assert_case_rejected(tmp_path: Any, case: tuple) -> None:
    """One preflight case (id, reference inventory, file to edit, change, expected file, key, message fragment, fix
    fragment): the mistake made in a copy is one error naming the file and its line, the key and the fix."""
    _id, ref, edit_file, change, want_file, want_key, want_msg, want_fix = case
    inv = copy_inventory(ref, str(tmp_path))
    edit_yaml(os.path.join(inv, edit_file), change)
    findings, _ = preflight(inv)
    f = error_finding(inv, findings, want_file, want_key, want_msg, want_fix)
    assert re.search(r":\d+$", f.source), f.format()  # a line, not only a file
