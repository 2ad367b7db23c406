"""scripts/derive_scale.py: its three plays are what they say (the one-host filters per DGX, or the maps and the
mesh's known_hosts once for the play) and all three run on a generated 4-DGX pod with no network."""
from __future__ import annotations

import os

import yaml

import derive_scale as ds
import big_pod


def _tasks(kind):
    return yaml.safe_load(ds.play_text(kind))[0]["tasks"]


def test_the_plays_derive_what_they_say():
    none, per_host, once = _tasks("none"), _tasks("per-host"), _tasks("once")
    # every play first registers each DGX's container host key, as roles/ngc_container/tasks/keys.yml does
    for tasks in (none, per_host, once):
        assert "ngc_container_node_keys" in tasks[0]["ansible.builtin.set_fact"]
    assert [t["when"] for t in none[1:]] == [False, False, False]
    assert "pod_nfs_mount_plan(" in per_host[1]["ansible.builtin.set_fact"]["p"]
    assert "pod_ping_targets(" in per_host[2]["ansible.builtin.set_fact"]["q"]
    assert "ngc_container_host_keys(" in per_host[3]["ansible.builtin.set_fact"]["k"]
    assert once[1]["run_once"] is True and set(once[1]["ansible.builtin.set_fact"]) == {"m_nfs", "m_ping", "m_kh"}
    assert "pod_nfs_mount_plans(" in once[1]["ansible.builtin.set_fact"]["m_nfs"]
    assert "ngc_pod_known_hosts(" in once[1]["ansible.builtin.set_fact"]["m_kh"]
    assert [t["ansible.builtin.set_fact"] for t in once[2:]] == [
        {"p": "{{ m_nfs.plans[inventory_hostname] }}"}, {"q": "{{ m_ping[inventory_hostname] }}"},
        {"k": "{{ m_kh }}"}]


def test_all_three_plays_run_on_a_generated_pod(tmp_path):
    inv = big_pod.generate(str(tmp_path), 4)
    for kind in ("none", "per-host", "once"):
        path = os.path.join(str(tmp_path), kind + ".yml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(ds.play_text(kind))
        wall, cpu = ds.run(inv, path)
        assert wall > 0 and cpu > 0, kind
