"""The RA profile and the merged expectations are read one way (issue 38 item 6): a pod's override of an NCCL
threshold (pod.validation.expectations) reaches both the decision whether to localise (playbooks/validate_nccl.yml)
and the report's evaluation (roles/pod_report -> library/pod_report_write.py), whether the override is a bare value
or a {value, source}.

The playbook's and the role's own expressions are run by ansible-playbook (on localhost, inside ``unshare -n``)
against a copy of the simulator's inventory (read for its variables only), so the test follows the wiring, not a
copy of it."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess

import pytest
import yaml

from inventory_util import ROOT, copy_inventory, edit_yaml, hostvars

from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import multi_node_expectation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import (deep_merge, load_profile,
    merged_expectations)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import expectation

ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
PROFILES = os.path.join(ROOT, "profiles")
FRACTION = 0.1  # the pod's override of nccl.multi_node_fraction_of_nics (the profile says 0.8)
OVERRIDES = {
    "bare": FRACTION,
    "with_source": {"value": FRACTION, "source": "this pod's acceptance test plan"},
}


def _load(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _play(out):
    """One localhost play: validate_nccl.yml's plan tasks, its localisation decision, and the expectations the
    pod_report role hands to pod_report_write (its default and its task's arguments as written there)."""
    nccl = _load("playbooks/validate_nccl.yml")
    plan = next(p for p in nccl if p["name"] == "NCCL - plan the runs")
    decide = next(p for p in nccl if p["name"] == "NCCL - decide whether to localise")
    task = copy.deepcopy(decide["tasks"][0])
    task["ansible.builtin.set_fact"] = {"pod_nccl_localisation":
                                        task["ansible.builtin.set_fact"]["pod_nccl_localisation"]}
    defaults = _load("roles/pod_report/defaults/main.yml")
    write = next(t for t in _load("roles/pod_report/tasks/main.yml") if "pod_report_write" in t)
    args = write["pod_report_write"]
    report = {"expectations": args["expectations"], "overrides": args.get("overrides", {})}
    play = {"name": "proof", "hosts": "localhost", "gather_facts": False,
            "vars": dict(plan.get("vars") or {}, pod_report_expectations=defaults["pod_report_expectations"],
                         pod_report_pod="{{ hostvars[groups['all'][0]].pod }}"),
            "tasks": plan["tasks"] + [task,
                                      {"ansible.builtin.set_fact": {"proof_report": report}},
                                      {"ansible.builtin.copy": {"dest": str(out), "mode": "0644", "content":
                                       "{{ {'localisation': pod_nccl_localisation, 'report': proof_report,"
                                       " 'topo': pod_nccl_topo} | to_json }}"}}]}
    return [play]


def _all_run(busbw):
    rows = [{"size": s, "out_of_place": {"busbw": busbw, "wrong": 0}, "in_place": {"busbw": busbw, "wrong": 0}}
            for s in (1 << 26, 1 << 27, 1 << 28, 1 << 29)]
    return {"ok": True, "rows": rows, "footer": {"out_of_bounds_ok": True}, "nodes": []}


@pytest.mark.parametrize("kind", sorted(OVERRIDES))
def test_a_pod_override_reaches_the_localisation_and_the_report(tmp_path, kind):
    inv = copy_inventory("sim", str(tmp_path))

    def pod_file(doc):
        pod = doc["pod"]
        pod["simulated"] = False  # a hardware figure is compared on a real pod only
        pod.setdefault("validation", {}).setdefault("expectations", {}).setdefault("nccl", {})[
            "multi_node_fraction_of_nics"] = OVERRIDES[kind]
    edit_yaml(os.path.join(inv, "group_vars", "all", "pod.yml"), pod_file)
    edit_yaml(os.path.join(inv, "group_vars", "all", "nccl.yml"),
              lambda d: d["pod_nccl_runs"].update(localise="on-failure"))
    hv = hostvars(inv)
    dgx = sorted(h for h, v in hv.items() if "dgx" in v["group_names"])
    pod = hv[dgx[0]]["pod"]
    # the all-node run reached 40% of the NICs' bandwidth: short of the profile's 80%, above the pod's 10%
    from filter_plugins.nccl import pod_nccl_topology
    topo = pod_nccl_topology(pod, hv, dgx)
    line_rate = multi_node_expectation(topo, 1.0)
    assert line_rate
    os.makedirs(os.path.join(inv, "host_vars"), exist_ok=True)
    with open(os.path.join(inv, "host_vars", dgx[0] + ".yml"), "w") as fh:
        yaml.safe_dump({"pod_nccl_all": _all_run(round(line_rate * 0.4, 3))}, fh)

    play, out = tmp_path / "proof.yml", tmp_path / "proof.json"
    play.write_text(yaml.safe_dump(_play(out), sort_keys=False))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="False")
    env.pop("PYTHONPATH", None)
    res = subprocess.run(["unshare", "-n", ANSIBLE_PLAYBOOK, "-i", inv, str(play), "-e", "pod_nccl_profile=quick"],
                         cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    got = json.loads(out.read_text())

    # the localisation decision used the pod's 10%: the run passed, no pairs
    assert got["localisation"] == {"run": False, "why": "the all-node run passed"}, got["localisation"]
    # the report's evaluation (pod_report_write merges what the role hands it) reads the same 10%
    exp = deep_merge(got["report"]["expectations"], got["report"]["overrides"])
    value, source = expectation(exp, "nccl", "multi_node_fraction_of_nics")
    assert value == FRACTION
    assert source == ("this pod's acceptance test plan" if kind == "with_source" else
                      "pod override (profile: 0.8, %s)" % load_profile("isilon-f800-dgx1", PROFILES)["expectations"][
                          "nccl"]["multi_node_fraction_of_nics"]["source"])
    # and it is what the one merge gives
    assert exp == merged_expectations(load_profile("isilon-f800-dgx1", PROFILES), pod)


def test_merged_expectations_is_the_profile_with_the_pod_on_top():
    profile = {"expectations": {"nccl": {"plateau_sizes": {"value": 3, "source": "toolkit rule"},
                                         "multi_node_fraction_of_nics": {"value": 0.8, "source": "RA"}},
                                "network": {"relative_fraction_of_peers": {"value": 0.8, "source": "rule"}}}}
    pod = {"validation": {"expectations": {"nccl": {"plateau_sizes": 2,
                                                    "multi_node_fraction_of_nics": {"value": 0.5, "source": "plan"}}}}}
    exp = merged_expectations(profile, pod)
    assert expectation(exp, "nccl", "plateau_sizes") == (2, "pod override (profile: 3, toolkit rule)")
    assert expectation(exp, "nccl", "multi_node_fraction_of_nics") == (0.5, "plan")
    assert expectation(exp, "network", "relative_fraction_of_peers") == (0.8, "rule")
    assert merged_expectations(profile, {}) == profile["expectations"]
    assert merged_expectations({}, None) == {}
    # the profile is not changed by a merge
    assert profile["expectations"]["nccl"]["plateau_sizes"] == {"value": 3, "source": "toolkit rule"}


# a profile file named in a template (lookup, include_vars), the pod's overrides taken in Jinja
READ_BY_HAND = re.compile(r"""profiles/['"]?\s*~|profiles/\{\{|validation\.expectations\s*\||"""
                          r"""validation \| default\(\{\}\)\)\.expectations""")


def test_the_profile_is_loaded_one_way():
    """Every playbook, role and filter reads the RA profile through the pod_ra_profile / pod_expectations filters
    (pod/profile.py): no lookup of profiles/<name>.yml, no include_vars of it, no Jinja merge of expectations."""
    offenders = []
    for d in ("playbooks", "roles"):
        for base, _dirs, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if not f.endswith((".yml", ".yaml", ".j2")):
                    continue
                path = os.path.join(base, f)
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    code = line.split("#", 1)[0]
                    if READ_BY_HAND.search(code):
                        offenders.append("%s:%d: %s" % (os.path.relpath(path, ROOT), n, line.strip()))
    assert offenders == []
