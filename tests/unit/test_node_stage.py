"""The node stage (module_utils/node/eval.py, registered in report/stages.py after gpu; playbooks/validate_node.yml):
its record as the playbook builds it (pod_read_record per DGX, pod_stage_hosts on localhost), a DGX that gave no
reading or whose module failed as one error naming it, the kernel and inventory/BMC evaluators on every DGX that
answered, expectations.node thresholds reaching them, the report's per-DGX table, and preflight naming a misspelt
expectations.node key."""
from __future__ import annotations

import importlib
import os

import yaml

from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import eval as node_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import (
    NODE_KEYS, check_node_expectations, check_validation)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.records import read_record
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages, registry
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NO_RESULT, NODE_STATE
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import parse_kernel_log
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.inventory_eval import DEFAULTS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_eval import THRESHOLDS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
stage_filters = importlib.import_module("filter_plugins.stages")

# drivers/pci/pcie/aer.c lines as test_kernel_log.py composes them (an HCA's corrected errors, 3 of them)
AER3 = "".join("[ %d.0] mlx5_core 0000:0c:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
               "(Receiver ID)\n[ %d.0] mlx5_core 0000:0c:00.0: AER:    [ 0] RxErr\n" % (i, i) for i in (1, 2, 3))


def reading(kernel_text="", **readings):
    """A dgx_node as library/dgx_node_health returns it (kernel log parsed, the other readings as given)."""
    errors = {k: "ipmitool is not installed" for k in ("sel", "sdr")}
    return {"kernel_log": parse_kernel_log(kernel_text), "kernel_log_source": "dmesg", "since": None, "until": None,
            "boot_time": None, "gpus": [{"index": 0, "bus_id": "0000:07:00.0"}],
            "hcas": [{"hca": "mlx5_1", "bus_id": "0000:0c:00.0", "netdev": "enp12s0"}],
            "readings": dict({"sel": None, "sdr": None, "uname_r": "5.15.0-1042-nvidia"}, **readings),
            "errors": errors}


def record(**nodes):
    return {"window_hours": 24, "nodes": nodes}


def ok(rd, model="dgx1"):
    return {"dgx_node": rd, "error": None, "unreachable": False, "dgx_model": model}


def test_registered_after_gpu_with_its_tag_and_report_sections():
    names = [s.name for s in registry()]
    assert names.index("node") == names.index("gpu") + 1
    st = registry()[names.index("node")]
    assert (st.tag, st.evaluate, st.markdown, st.html) == ("node", node_eval.evaluate, node_eval.markdown,
                                                            node_eval.html)


def test_a_dgx_without_reading_or_whose_module_failed_is_one_error_naming_it():
    res = node_eval.evaluate(record(**{"sim-dgx1": None, "sim-dgx2": {"dgx_node": None, "error": "MODULE FAILURE",
                                                                      "unreachable": False, "dgx_model": "dgx1"},
                                       "sim-dgx3": {"dgx_node": None, "error": "x", "unreachable": True}}), {})
    assert [(r.check, r.host, r.status) for r in res] == [("node_health", "sim-dgx1", "error"),
                                                           ("node_health", "sim-dgx2", "error"),
                                                           ("node_health", "sim-dgx3", "error")]
    assert res[0].reason == NO_RESULT and res[0].unreachable and res[0].category == NODE_STATE
    assert "sim-dgx2: dgx_node_health failed: MODULE FAILURE" == res[1].reason and not res[1].unreachable


def test_both_evaluators_judge_every_dgx_that_answered():
    res = node_eval.evaluate(record(**{"sim-dgx1": ok(reading()), "sim-dgx2": ok(reading(AER3))}), {})
    checks = {(r.host, r.check): r for r in res}
    for host in ("sim-dgx1", "sim-dgx2"):
        for name in ("kernel_xid", "kernel_aer", "kernel_link_flap", "host_cpu", "host_memory", "bmc_sel",
                     "host_kernel"):
            assert (host, name) in checks, (host, name)
        assert checks[(host, "bmc_sel")].status == "skipped" and "ipmitool is not installed" in checks[
            (host, "bmc_sel")].reason
        assert checks[(host, "host_cpu")].status == "skipped"  # lscpu not read: a reason, not a pass
    assert checks[("sim-dgx2", "kernel_aer")].status == "pass" and checks[("sim-dgx2", "kernel_aer")].measured == 3
    assert all(r.category and r.subject.node == r.host for r in res)


def test_expectations_node_reach_the_kernel_checks():
    rec = record(**{"sim-dgx2": ok(reading(AER3))})
    exp = {"node": {"kernel_aer_corrected_max": {"value": 2, "source": "site policy"}}}
    [aer] = [r for r in node_eval.evaluate(rec, exp) if r.check == "kernel_aer"]
    assert aer.status == "fail" and aer.subject.hca == "mlx5_1" and "site policy" in aer.source


def test_an_unread_kernel_log_is_an_error_with_the_modules_reason():
    rd = dict(reading(), kernel_log=None, errors={"kernel_log": "dmesg: exit 1: Operation not permitted"})
    [k] = [r for r in node_eval.evaluate(record(**{"sim-dgx1": ok(rd)}), {}) if r.check.startswith("kernel_")]
    assert k.check == "kernel_log" and k.status == "error" and "Operation not permitted" in k.reason


def test_the_report_table_has_a_row_per_dgx_with_the_worst_status_per_column():
    rec = record(**{"sim-dgx1": ok(reading()), "sim-dgx2": None})
    checks, measurements = evaluate_stages({"node": rec}, {"node": {"kernel_aer_corrected_max": 0}}, {},
                                           run_tags=["node"])
    doc = {"checks": checks, "measurements": measurements}
    rows = {r["node"]: r for r in node_eval.summary(doc)}
    assert rows["sim-dgx2"]["log"] == "no reading"
    assert rows["sim-dgx1"]["log"] == "dmesg" and rows["sim-dgx1"]["BMC"] == "skipped"
    md = node_eval.markdown(doc)
    assert md[1] == "## Node health (kernel log of the last 24 h, host inventory, BMC)"
    assert any(line.startswith("| sim-dgx1 | dmesg | 0 |") for line in md)
    assert "<h2>Node health" in node_eval.html(doc)[0]


def test_the_record_the_playbook_builds_reads_as_the_evaluator_expects():
    """validate_node.yml: each DGX keeps pod_read_record(result, 'dgx_node') + its dgx_model; localhost records
    pod_stage_hosts over groups['dgx'] (a DGX that never ran the task is None)."""
    good = dict(read_record({"changed": False, "dgx_node": reading()}, "dgx_node"), dgx_model="dgx1")
    failed = dict(read_record({"failed": True, "msg": "boom"}, "dgx_node"), dgx_model="dgx1")
    hv = {"sim-dgx1": {"node_health_reading": good}, "sim-dgx2": {"node_health_reading": failed}, "sim-dgx3": {}}
    nodes = stage_filters.pod_stage_hosts(["sim-dgx1", "sim-dgx2", "sim-dgx3"], hv, "node_health_reading")
    res = node_eval.evaluate(record(**nodes), {})
    errors = {r.host: r.reason for r in res if r.check == "node_health"}
    assert set(errors) == {"sim-dgx2", "sim-dgx3"} and "boom" in errors["sim-dgx2"]
    assert any(r.host == "sim-dgx1" and r.check == "kernel_xid" for r in res)


def test_the_playbook_runs_the_module_on_every_dgx_and_records_pod_stages_node():
    with open(os.path.join(ROOT, "playbooks", "validate_node.yml")) as fh:
        plays = yaml.safe_load(fh)
    assert [p["hosts"] for p in plays] == ["localhost", "dgx", "localhost"]
    assert all(p["tags"] == ["node"] for p in plays)
    read = plays[1]["tasks"][0]
    assert read["dgx_node_health"]["fs_root"].startswith("{{ dgx_network_sysfs_root") and read["ignore_errors"]
    rec = plays[2]["tasks"][0]
    assert rec["ansible.builtin.import_tasks"] == "tasks/record_stage.yml"
    assert rec["vars"]["record_stage_name"] == "node"
    with open(os.path.join(ROOT, "validate.yml")) as fh:
        imports = yaml.safe_load(fh)
    names = [i.get("ansible.builtin.import_playbook") for i in imports]
    node = names.index("playbooks/validate_node.yml")
    assert names[node - 1] == "playbooks/validate_gpu.yml" and imports[node]["tags"] == ["node"]


def test_preflight_knows_every_threshold_the_evaluators_read_and_names_a_misspelt_one():
    assert set(THRESHOLDS) | set(DEFAULTS) | {"swap_max_gb", "memory_gb", "sel_since"} == set(NODE_KEYS)
    pod = {"validation": {"expectations": {"node": {"kernel_aer_corected_max": 5, "root_min_free_pct": 0.1,
                                                    "raid_mount": "raid", "kernel_link_flaps_max": 0,
                                                    "sel_since": "2026-11-01T00:00:00",
                                                    "swap_max_gb": {"value": 0, "source": "site"}}}}}
    found = {f.path: f for f in check_validation(pod, None, [])}
    assert set(found) == {"pod.validation.expectations.node.kernel_aer_corected_max",
                          "pod.validation.expectations.node.root_min_free_pct",
                          "pod.validation.expectations.node.raid_mount",
                          "pod.validation.expectations.node.swap_max_gb.value"}
    assert found["pod.validation.expectations.node.kernel_aer_corected_max"].fix == \
        "did you mean 'kernel_aer_corrected_max'?"
    assert "write 10" in found["pod.validation.expectations.node.root_min_free_pct"].fix
    # the category itself misspelt, or a node key put under pod.validation directly
    close = check_validation({"validation": {"expectations": {"nodes": {"kernel_window_hours": 48}}}}, None, [])
    assert close and close[0].fix == "did you mean 'node'?"
    assert check_node_expectations({"kernel_window_hours": 48, "memory_gb": 1024, "raid_min_free_pct": 5}) == []
    import datetime
    [dated] = check_node_expectations({"sel_since": datetime.datetime(2026, 11, 1)})
    assert "quote it" in dated.fix
