"""Preflight, issue 46 (bad input, round 3), class 1 continued: a var file beside another path for the same group or
host. Ansible (ansible-core 2.19, plugins/vars/host_group_vars.py -> parsing/dataloader.py find_vars_files) tries
<name>, <name>.yml, <name>.yaml, <name>.json in that order and reads only the first that exists - a directory
whole - so group_vars/all.yml beside group_vars/all/ is never read: nothing of it is merged, the directory wins for
every key, and Ansible says nothing. Each case makes that mistake in a copy of a reference inventory and asserts
that Ansible itself ignores the file (its hostvars) and that preflight warns on it, naming both paths, which one
wins and the fix."""
from __future__ import annotations

import os

import pytest
import yaml

from inventory_util import REFERENCE, copy_inventory, edit_yaml, hostvars, preflight, texts
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.sources import (shadowed_findings,
    shadowed_var_files)


def _write(inv, rel, data):
    path = os.path.join(inv, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)
    return path


def _shown(path):
    """A path as preflight prints it (relative to the working directory unless that climbs out of it)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _warnings_on(findings, inv, rel):
    """The warnings whose source is the file ``rel`` of ``inv``."""
    want = os.path.join(inv, rel)
    return [f for f in findings if f.severity == "warning" and f.source
            and os.path.abspath(f.source.split(":")[0]) == want]


def _first_host(inv, group="dgx"):
    with open(os.path.join(inv, "hosts.yml"), encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)

    def walk(name, node):
        if name == group and (node or {}).get("hosts"):
            return sorted(node["hosts"])[0]
        for child, sub in ((node or {}).get("children") or {}).items():
            found = walk(child, sub)
            if found:
                return found
        return None

    return next(h for name, node in doc.items() for h in [walk(name, node)] if h)


@pytest.mark.parametrize("ref", REFERENCE)
def test_group_vars_all_yml_beside_the_directory(tmp_path, ref):
    """group_vars/all.yml beside group_vars/all/: a key only it sets is not set, a key both set keeps the
    directory's value; one warning on all.yml naming both paths, which wins, the keys and the fix."""
    inv = copy_inventory(ref, str(tmp_path))
    theirs = sorted(os.listdir(os.path.join(inv, "group_vars", "all")))[0]
    with open(os.path.join(inv, "group_vars", "all", theirs), encoding="utf-8") as fh:
        shared = next(iter(yaml.safe_load(fh)))  # a key the directory sets (pod, in pod.yml)
    _write(inv, "group_vars/all.yml", {"ntp_servers_extra": ["10.0.0.1"], shared: {"name": "from-all-yml"}})
    host = _first_host(inv)
    hv = hostvars(inv)[host]
    assert "ntp_servers_extra" not in hv and hv[shared] != {"name": "from-all-yml"}  # what Ansible does
    findings, _ = preflight(inv)
    assert not [f for f in findings if f.severity == "error"], texts(findings)
    (w,) = _warnings_on(findings, inv, "group_vars/all.yml")
    text = w.format()
    assert text.startswith("WARNING ") and "group_vars/all.yml is never read" in w.message, text
    folder = _shown(os.path.join(inv, "group_vars", "all"))
    assert "Ansible reads %s/ instead" % folder in w.message, text
    assert "nothing of this file is merged" in w.message and "find_vars_files" in w.message, text
    assert "set only here, and so not set at all: ntp_servers_extra" in w.message, text
    assert "set in both, %s/'s value is in force for %s (%s/%s:" % (folder, shared, folder, theirs) in w.message, text
    assert w.fix.startswith("keep one: move this file's keys into a file inside") and "then delete" in w.fix, text
    assert os.path.join("group_vars", "all", "all.yml") in w.fix, text


def test_host_vars_file_beside_the_hosts_directory(tmp_path):
    """host_vars/<host>.yml beside host_vars/<host>/ (a user splitting a host's file): the directory is read, the
    .yml not; the warning is the host's."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    host = _first_host(inv)
    os.makedirs(os.path.join(inv, "host_vars", host))
    os.rename(os.path.join(inv, "host_vars", host + ".yml"), os.path.join(inv, "host_vars", host, "main.yml"))
    _write(inv, "host_vars/%s.yml" % host, {"ansible_user": "admin"})
    assert hostvars(inv)[host].get("ansible_user") != "admin"
    findings, _ = preflight(inv)
    (w,) = _warnings_on(findings, inv, "host_vars/%s.yml" % host)
    assert w.host == host and "not set at all: ansible_user" in w.message, w.format()
    assert "host_vars/%s/" % host in w.message and "(a directory: every file in it)" in w.message, w.format()


def test_yml_beside_yaml_of_one_group(tmp_path):
    """group_vars/dgx.yaml beside group_vars/dgx.yml: .yml comes first, .yaml is never read."""
    inv = copy_inventory("dgxa100-powerscale", str(tmp_path))
    _write(inv, "group_vars/dgx.yaml", {"dgx_model": "dgxh100", "extra_setting": 1})
    host = _first_host(inv)
    assert hostvars(inv)[host]["dgx_model"] != "dgxh100"
    findings, _ = preflight(inv)
    (w,) = _warnings_on(findings, inv, "group_vars/dgx.yaml")
    assert "Ansible reads %s instead" % _shown(os.path.join(inv, "group_vars", "dgx.yml")) in w.message
    assert "value is in force for dgx_model (" in w.message and "not set at all: extra_setting" in w.message, w.format()
    assert w.fix.startswith("keep one: merge this file's keys into") and "group_vars/dgx.yml" in w.fix, w.format()
    assert w.host is None


def test_a_missing_variable_names_the_unread_file_that_sets_it(tmp_path):
    """The pod moved out of group_vars/all/pod.yml into group_vars/all.yml while the directory stays (it has the
    other files): the error on the missing pod says the unread file sets it; the warning says why."""
    inv = copy_inventory("dgx-ess3000", str(tmp_path))
    folder = os.path.join(inv, "group_vars", "all")
    pod_file = os.path.join(folder, "pod.yml")
    with open(pod_file, encoding="utf-8") as fh:
        pod = yaml.safe_load(fh)["pod"]
    os.remove(pod_file)
    if not os.listdir(folder):
        _write(inv, "group_vars/all/other.yml", {"ntp_servers_extra": []})
    _write(inv, "group_vars/all.yml", {"pod": pod})
    findings, _ = preflight(inv)
    missing = [f for f in findings if f.severity == "error" and f.var == "pod" and "not defined" in f.message]
    assert missing, texts(findings)
    assert "%s sets 'pod' but Ansible never reads that file" % _shown(os.path.join(inv, "group_vars", "all.yml")) \
        in missing[0].fix, missing[0].format()
    assert _warnings_on(findings, inv, "group_vars/all.yml")


def test_an_empty_unread_file_and_the_file_only_scan(tmp_path):
    """An empty all.yml beside all/: still the warning (it sets no key today); and the inventory-only scan
    (pod_preflight's first pass, no host variables) gives it too."""
    import pod_preflight  # library/pod_preflight.py
    inv = copy_inventory("dgxpod", str(tmp_path))
    open(os.path.join(inv, "group_vars", "all.yml"), "w").close()
    (sh,) = shadowed_var_files([inv])
    assert (os.path.basename(sh.unread), os.path.basename(sh.read), sh.label) == ("all.yml", "all", "group_vars/all")
    assert "it sets no key today" in shadowed_findings([inv])[0].message
    found = pod_preflight.scan_files({"all": [], "dgx": []}, [inv])
    assert _warnings_on(found, inv, "group_vars/all.yml")


@pytest.mark.parametrize("ref", REFERENCE + ["sim"])
def test_no_shadowed_file_in_the_shipped_inventories(ref):
    from inventory_util import ROOT
    assert shadowed_var_files([os.path.join(ROOT, "inventories", ref)]) == []


def test_an_edit_of_the_directory_is_not_a_shadow(tmp_path):
    """Two files inside group_vars/all/ are both read (that is defined_twice's, not this check's)."""
    inv = copy_inventory("dgxpod", str(tmp_path))
    edit_yaml(os.path.join(inv, "group_vars", "dgx.yml"), lambda d: d)
    _write(inv, "group_vars/all/zz.yml", {"ntp_servers_extra": []})
    assert shadowed_var_files([inv]) == []
