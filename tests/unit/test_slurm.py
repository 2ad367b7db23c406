"""Slurm as the pod's scheduler (issue 20): slurm.conf/gres.conf from the model (golden), the parsers of
sinfo / scontrol / slurmd -C on output captured from a real Slurm 22.05.8, and which DGX a run drains."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from inventory_util import ROOT, hostvars
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import conf as slurm_conf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import parse as slurm_parse

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "slurm")
REGEN = os.environ.get("SLURM_GOLDEN_REGEN") == "1"  # rewrite the golden files (then review the diff)


def _read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


@pytest.fixture(scope="module")
def dgxpod():
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = {"dgx": ["DGX1-%d" % i for i in range(1, 10)], "storage": ["isilon-%d" % i for i in range(1, 9)],
              "switches": [h for h in hv if "switches" in hv[h]["group_names"]]}
    pod = dict(hv["DGX1-1"]["pod"], slurm={"controller": "DGX1-1", "partition": "dgx1"})
    return Pod.from_hostvars(hv, groups, pod)


def _golden(name, text):
    path = os.path.join(FIX, name)
    if REGEN:
        with open(path, "w") as fh:
            fh.write(text)
    assert text == _read(name), "%s changed: review, then SLURM_GOLDEN_REGEN=1 to rewrite it" % name


def test_the_004_pod_as_a_slurm_cluster_golden(dgxpod):
    files = slurm_conf.render_all(dgxpod)
    _golden("004_slurm.conf", files["slurm.conf"])
    _golden("004_gres.conf", files["gres.conf"])
    conf = files["slurm.conf"]
    # the controller's address written out (the "Unable to contact slurm controller" trap)
    assert "SlurmctldHost=DGX1-1(10.55.66.231)\n" in conf
    assert "NodeName=DGX1-9 NodeAddr=10.55.66.163 CPUs=80 SocketsPerBoard=2 CoresPerSocket=20 ThreadsPerCore=2 " \
           "RealMemory=500000 Gres=gpu:8 State=UNKNOWN" in conf
    assert "PartitionName=dgx1 Nodes=%s Default=YES" % ",".join("DGX1-%d" % i for i in range(1, 10)) in conf
    assert "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n" in conf
    assert "NodeName=DGX1-1 Name=gpu File=/dev/nvidia[0-7]" in files["gres.conf"]


def test_output_is_deterministic_and_reported_hardware_wins(dgxpod):
    reported = {"DGX1-2": slurm_parse.parse_slurmd_c(_read("slurmd_C.txt"))}
    a = slurm_conf.render_all(dgxpod, reported)
    b = slurm_conf.render_all(dgxpod, dict(reported))
    assert a == b
    assert "NodeName=DGX1-2 NodeAddr=10.55.66.235 CPUs=2 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 " \
           "RealMemory=24105 Gres=gpu:8" in a["slurm.conf"]


def test_choices_and_overrides(dgxpod):
    files = slurm_conf.render_all(dgxpod, overrides={"proctrack": "cgroup", "mpi_default": "pmix",
                                                      "cluster_name": "lab"}, gpu_device_prefix="/run/g/nvidia")
    conf = files["slurm.conf"]
    assert "ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup,task/affinity\n" in conf
    assert "MpiDefault=pmix" in conf and "ClusterName=lab\n" in conf
    assert "File=/run/g/nvidia[0-7]" in files["gres.conf"]
    with pytest.raises(slurm_conf.SlurmConfError, match="mpi_default"):
        slurm_conf.render_all(dgxpod, overrides={"mpi_default": "openmpi"})
    with pytest.raises(slurm_conf.SlurmConfError, match="partition"):
        slurm_conf.render_all(dgxpod, overrides={"partition": "bad name"})


def test_a_node_without_a_gpu_count_is_refused():
    with pytest.raises(slurm_conf.SlurmConfError, match="DGX9: its GPU count is unknown"):
        slurm_conf.slurm_plan({}, "p", {"name": "c", "address": None}, [{"name": "DGX9", "gpus": None}])


def test_cluster_name_is_what_slurmdbd_accepts():
    assert slurm_conf.cluster_name("Pod-in-a-Box 004") == "pod-in-a-box-004"
    assert slurm_conf.cluster_name("") == "pod"


# ----------------------------------------------------------------------------- parsers (real 22.05.8 output)
@pytest.mark.parametrize("name,state,drain,reason", [
    ("idle", "idle", False, None),
    ("draining", "draining", True, "check: nccl_busbw low (DGX1-2 at 40% of peers)"),
    ("drained", "drained", True, "check: nccl_busbw low (DGX1-2 at 40% of peers)"),
    ("down", "drained", True, "slurmd stopped for maintenance"),  # DOWN+DRAIN: sinfo says drain
])
def test_sinfo_and_scontrol_agree_on_real_output(name, state, drain, reason):
    s = slurm_parse.parse_sinfo(_read("sinfo_%s.txt" % name))
    c = slurm_parse.parse_scontrol_nodes(_read("scontrol_%s.txt" % name))
    assert slurm_parse.node_states(s) == slurm_parse.node_states(c) == {
        "vm": {"state": state, "drain": drain, "responding": True, "reason": reason}}


def test_scontrol_fields_with_spaces_and_the_reason_author():
    row = slurm_parse.parse_scontrol_nodes(_read("scontrol_drained.txt"))[0]
    assert row["fields"]["OS"].startswith("Linux ") and " SMP " in row["fields"]["OS"]
    assert row["fields"]["Gres"] == "gpu:2" and row["fields"]["RealMemory"] == "24105"
    assert row["reason_by"].startswith("root@2026-")


def test_sinfo_suffixes_and_many_nodes():
    text = ("DGX1-1|idle|none\nDGX1-2|drain*|check: gpu_ecc: 2 uncorrectable\nDGX1-3|mix|none\n"
            "DGX1-4|down*|Not responding\nDGX1-1|idle|none\nDGX1-5|drng|reason|with a bar\n")
    rows = slurm_parse.node_states(slurm_parse.parse_sinfo(text))
    assert list(rows) == ["DGX1-1", "DGX1-2", "DGX1-3", "DGX1-4", "DGX1-5"]
    assert rows["DGX1-2"] == {"state": "drained", "drain": True, "responding": False,
                              "reason": "check: gpu_ecc: 2 uncorrectable"}
    assert rows["DGX1-3"]["state"] == "mixed" and rows["DGX1-5"]["reason"] == "reason|with a bar"
    assert sorted(slurm_parse.unhealthy(rows)) == ["DGX1-2", "DGX1-4", "DGX1-5"]
    with pytest.raises(ValueError):
        slurm_parse.parse_sinfo("PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n")


def test_slurmd_c():
    hw = slurm_parse.parse_slurmd_c(_read("slurmd_C.txt"))
    assert hw == {"NodeName": "vm", "CPUs": 2, "Boards": 1, "SocketsPerBoard": 1, "CoresPerSocket": 2,
                  "ThreadsPerCore": 1, "RealMemory": 24105}
    with pytest.raises(ValueError):
        slurm_parse.parse_slurmd_c("slurmd: error: ...")


# ----------------------------------------------------------------------------- preflight (pod.scheduler / pod.slurm)
def _with_slurm(tmp_path, slurm, scheduler="slurm"):
    from inventory_util import copy_inventory, edit_yaml, preflight
    inv = copy_inventory("dgxpod", str(tmp_path))

    def change(d):
        if scheduler is not None:
            d["pod"]["scheduler"] = scheduler
        if slurm is not None:
            d["pod"]["slurm"] = slurm
    edit_yaml(os.path.join(inv, "group_vars", "all", "pod.yml"), change)
    return preflight(inv)


def _texts(result, severity="error"):
    findings, _summary = result
    return [f.format() for f in findings if f.severity == severity]


def test_preflight_accepts_a_slurm_pod(tmp_path):
    assert _texts(_with_slurm(tmp_path, {"controller": "DGX1-1", "partition": "dgx1"})) == []


@pytest.mark.parametrize("slurm,key,words", [
    ({"controller": "DGX1-10"}, "pod.slurm.controller", "'DGX1-10' is not a host in this inventory"),
    ({"controller": "isilon-1"}, "pod.slurm.controller", "'isilon-1' is in group 'storage', not 'dgx'"),
    ({"controller": "DGX1-1", "partition": "dgx 1"}, "pod.slurm.partition", "not a usable partition name"),
    ({"controller": "DGX1-1", "cluster_name": "Pod004"}, "pod.slurm.cluster_name", "not a usable ClusterName"),
    ({"controller": "DGX1-1", "mpi_default": "openmpi"}, "pod.slurm.mpi_default", "is not one of none, pmi2, pmix"),
    ({"partition": "dgx"}, "pod.slurm.controller", "required key is missing"),
    (None, "pod.slurm", "pod.scheduler is slurm but pod.slurm is not set"),
])
def test_preflight_names_the_slurm_field(tmp_path, slurm, key, words):
    errs = _texts(_with_slurm(tmp_path, slurm))
    assert any(key + ":" in t and words in t and "group_vars/all/pod.yml" in t for t in errs), errs


def test_preflight_warns_about_slurm_without_the_scheduler(tmp_path):
    result = _with_slurm(tmp_path, {"controller": "DGX1-1"}, scheduler=None)
    assert _texts(result) == []
    assert any("pod.slurm" in t and "pod.scheduler is 'none'" in t for t in _texts(result, "warning"))


# ----------------------------------------------------------------------------- which DGX a run drains
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import drain as slurm_drain  # noqa: E402

DGX = ["DGX1-%d" % i for i in range(1, 9)]


def _finding(fid, host, cause, check, status="fail", n=1):
    return {"id": fid, "host": host, "subject": host, "cause": cause, "status": status,
            "root": {"check": check, "host": host}, "explains": [{"check": check, "host": host}] * n}


def test_the_dgx_a_finding_names_is_drained_with_check_and_cause():
    doc = {"findings": [_finding("F1", "DGX1-3", "enp132s0 at 40% of its peers", "iperf_pair", n=6),
                        _finding("F2", "sim-isilon2", "does not answer", "nfs_mounts", "error"),
                        _finding("F3", "DGX1-3", "GPU 2 ECC errors", "gpu_ecc"),
                        _finding("F4", "pod", "storage_sizing short", "storage_sizing")]}
    plan = slurm_drain.drain_plan(doc, DGX)
    assert plan["drain"] == [{"node": "DGX1-3", "finding": "F1",
                              "reason": "dgxpod iperf_pair: enp132s0 at 40% of its peers (+1 more finding)"}]
    assert [(s["host"], s["finding"]) for s in plan["skipped"]] == [("sim-isilon2", "F2"), ("pod", "F4")]
    assert plan["refused"] is None


def test_a_pod_wide_fault_drains_nothing():
    doc = {"findings": [_finding("F%d" % i, h, "NCCL busbw low", "nccl_busbw") for i, h in enumerate(DGX[:5])]}
    plan = slurm_drain.drain_plan(doc, DGX)
    assert plan["drain"] == [] and "5 of 8 DGX named" in plan["refused"]
    assert len(slurm_drain.drain_plan(doc, DGX, max_fraction=1.0)["drain"]) == 5


def test_old_results_without_findings_and_long_reasons():
    doc = {"checks": [{"check": "gpu_count", "host": "DGX1-2", "status": "fail", "detail": "7 of 8 GPUs " * 40},
                      {"check": "ping", "host": "DGX1-4", "status": "pass"}]}
    plan = slurm_drain.drain_plan(doc, DGX)
    assert [d["node"] for d in plan["drain"]] == ["DGX1-2"]
    assert plan["drain"][0]["reason"].startswith("dgxpod gpu_count: 7 of 8 GPUs 7 of 8")
    assert len(plan["drain"][0]["reason"]) == slurm_drain.REASON_MAX and plan["drain"][0]["reason"].endswith("...")


def test_resume_undoes_only_the_toolkits_drains():
    states = {"DGX1-1": {"drain": True, "reason": "dgxpod gpu_ecc: GPU 2"},
              "DGX1-2": {"drain": True, "reason": "disk replacement"},
              "DGX1-3": {"drain": False, "reason": None}}
    assert slurm_drain.resume_plan(states) == ["DGX1-1"]
    assert slurm_drain.resume_plan(states, only_ours=False) == ["DGX1-1", "DGX1-2"]
    assert slurm_drain.resume_plan(states, nodes=["DGX1-2"], only_ours=False) == ["DGX1-2"]


def test_the_filters_read_hostvars(dgxpod):
    import importlib.util
    spec = importlib.util.spec_from_file_location("slurm_filters", os.path.join(ROOT, "filter_plugins", "slurm.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    filters = mod.FilterModule().filters()
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = {"dgx": ["DGX1-%d" % i for i in range(1, 10)]}
    pod = dict(hv["DGX1-1"]["pod"], slurm={"controller": "DGX1-1", "partition": "dgx1"})
    files = filters["slurm_conf_files"](pod, hv, groups, {"DGX1-4": _read("slurmd_C.txt")})
    assert files["slurm.conf"].count("\nNodeName=") == 9 and "NodeName=DGX1-4 NodeAddr=10.55.66.243 CPUs=2 " in \
        files["slurm.conf"]
    plan = filters["slurm_drain_plan"]({"findings": [_finding("F1", "DGX1-4", "slow", "nccl_busbw")]}, groups["dgx"])
    assert plan["drain"][0]["node"] == "DGX1-4"
    assert filters["slurm_gpu_count"]({"dgx_model": "dgx2"}) == 16 and filters["slurm_gpu_count"]({"gpus": 2}) == 2
    nodes = {"DGX1-1": {"state": "idle", "responding": True}, "DGX1-2": {"state": "drained", "responding": True,
                                                                          "reason": "dgxpod x: y"},
             "DGX1-3": {"state": "idle", "responding": False}, "DGX1-4": {"state": "invalid", "reason": "gres"}}
    assert filters["slurm_not_ready"](nodes, ["DGX1-1", "DGX1-2", "DGX1-3", "DGX1-4", "DGX1-5"]) == [
        "DGX1-3: idle, not responding", "DGX1-4: invalid (gres)", "DGX1-5: not a Slurm node"]


def test_one_named_dgx_drains_even_in_a_small_pod():
    doc = {"findings": [_finding("F1", "DGX1-1", "slow", "nccl_busbw")]}
    assert [d["node"] for d in slurm_drain.drain_plan(doc, ["DGX1-1"])["drain"]] == ["DGX1-1"]
    two = {"findings": doc["findings"] + [_finding("F2", "DGX1-2", "slow", "nccl_busbw")]}
    assert slurm_drain.drain_plan(two, ["DGX1-1", "DGX1-2", "DGX1-3"])["refused"]


def test_the_slurm_check_names_state_and_reason():
    states = slurm_parse.node_states(slurm_parse.parse_sinfo(_read("sinfo_drained.txt")) +
                                     slurm_parse.parse_sinfo("DGX1-2|idle|none\nDGX1-3|idle*|Not responding\n"))
    checks = {c["host"]: c for c in slurm_drain.slurm_checks(states, ["vm", "DGX1-2", "DGX1-3", "DGX1-4"])}
    assert checks["DGX1-2"]["status"] == "pass" and "cause" not in checks["DGX1-2"] or not checks["DGX1-2"].get("cause")
    assert checks["vm"]["status"] == "fail"
    assert checks["vm"]["cause"] == "drained in Slurm: check: nccl_busbw low (DGX1-2 at 40% of peers)"
    assert checks["DGX1-3"]["cause"] == "idle, not responding in Slurm: Not responding"
    assert checks["DGX1-4"]["measured"] == "absent" and "not a node of slurmctld" in checks["DGX1-4"]["cause"]
    assert all((c["category"], c["subject"]) == ("service_state", {"node": h}) for h, c in checks.items())


def test_the_slurm_play_is_skipped_whole_on_a_pod_without_slurm(tmp_path):
    """site.yml imports playbooks/slurm.yml for every pod: without pod.scheduler it must do nothing and not
    fail (a static role's delegate_to to the controller is templated before its when: CI caught that)."""
    inv = tmp_path / "hosts.json"
    inv.write_text(json.dumps({"all": {"children": {"dgx": {"hosts": {"dgx-x": {
        "ansible_connection": "local", "ansible_python_interpreter": os.path.join(ROOT, ".venv", "bin", "python"),
        "pod": {"name": "no-slurm"}}}}}}}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_FACT_CACHING="memory")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", str(inv),
                          "playbooks/slurm.yml"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "skipping: [dgx-x]" in res.stdout and "failed=0" in res.stdout
