"""The simulator's node health stand-ins (sim/standins/podsim_node.py): TEST DOUBLES for journalctl -k, dmesg, lscpu,
numactl, ipmitool, nvme, smartctl, nvbandwidth and the proc files. Their outputs must parse with the toolkit's own
parsers (module_utils/node/, gpu/bandwidth_parse.py), the healthy node must pass the node stage with no false alarm
(through library/dgx_node_health.gather and node/eval.py, as on the pod-in-a-box), and each fault must change what
the tools print so that the check the drill expects fails naming the device and what to do."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

import dgx_node_health as mod  # noqa: E402  (library/)
import podsim_hw as hw  # noqa: E402
import podsim_node as node  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_eval import bandwidth_checks
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_parse import parse_nvbandwidth
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import eval as node_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.bmc_parse import parse_sdr_elist, parse_sel_elist
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.inventory_parse import (
    parse_lscpu, parse_meminfo, parse_numactl_hardware, parse_nvme_list, parse_smartctl_nvme, parse_swaps)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import parse_kernel_log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANDINS = os.path.join(ROOT, "sim", "standins")
BOOT = 1764300000.0
NOW = BOOT + 86400.0 * 2  # two days after boot: the boot messages fall before a 24 h window


@pytest.fixture
def state():
    return hw.default_state("sim-dgx1", 1)


def faulty(state, at=NOW - 600.0, **faults):
    s = dict(state, node_faults=faults, node_faults_at={k: at for k in faults})
    return s


def standin_runner(state, now=NOW):
    """run(cmd, timeout) as the module calls it, answered by the stand-ins' renderers (the pod-in-a-box's tools)."""
    def run(cmd, timeout):
        tool, args = cmd[0], cmd[1:]
        if tool == "journalctl":
            return 0, node.render_journal(state, BOOT, now, node._since(args)), ""
        if tool == "dmesg":
            return 0, node.render_dmesg(state, BOOT, now), ""
        if tool == "lscpu":
            return 0, node.render_lscpu_json(), ""
        if tool == "numactl":
            return 0, node.render_numactl(state), ""
        if tool == "ipmitool":
            sel = args[0] == "sel"
            return 0, node.render_sel_elist(state, BOOT, now) if sel else node.render_sdr_elist(state), ""
        if tool == "nvme":
            return 0, node.render_nvme_list(state), ""
        if tool == "smartctl":
            rc, text = node.render_smartctl(state, args[-1], now)
            return rc, text, ""
        if tool == "nvidia-smi":
            return 0, hw.render_query_gpu(state, ["index", "pci.bus_id"], noheader=True), ""
        if tool == "df":
            return 0, ("Filesystem 1-blocks Used Available Capacity Mounted on\n"
                       "/dev/sda2 1967317499904 402653184000 1464645316608 22% /\n"), ""
        if tool == "uname":
            return 0, "4.15.0-1063-nvidia\n", ""
        raise AssertionError("the module ran %s" % cmd)
    return run


def stand_in_tree(tmp_path, state):
    """The stand-in tree (/etc/podsim/sysfs) as podsim up writes it: the HCAs' sysfs and the proc files."""
    hw.write_fake_sysfs(str(tmp_path), state, {h["netdev"]: [] for h in state["hcas"].values()},
                        live_class_net=str(tmp_path / "none"))
    node.write_node_files(str(tmp_path), state, BOOT)
    return str(tmp_path)


def staged(tmp_path, state):
    """The node stage's results for one simulated DGX (the module's gather on the stand-ins, then node/eval.py)."""
    root = stand_in_tree(tmp_path, state)
    reading = mod.gather(standin_runner(state), lambda name: "/usr/local/sbin/" + name, fs_root=root, now=NOW)
    record = {"window_hours": 24, "nodes": {"sim-dgx1": {"dgx_node": reading, "error": None, "unreachable": False,
                                                          "dgx_model": "dgx1"}}}
    return reading, node_eval.evaluate(record, {})


def by_check(results, name):
    return [r for r in results if r.check == name]


# --------------------------------------------------------------------------- formats parse with the toolkit's parsers

def test_every_healthy_output_parses_with_the_toolkits_parsers(state):
    assert parse_lscpu(node.render_lscpu_json())["sockets"] == 2
    assert parse_numactl_hardware(node.render_numactl(state))["nodes"] == 2
    mem = parse_meminfo(node.render_meminfo(state))
    assert mem["mem_total_kib"] == node.MEMTOTAL_KB and mem["hardware_corrupted_kib"] == 0
    assert parse_swaps(node.SWAPS_HEADER) == []
    assert parse_nvme_list(node.render_nvme_list(state)) == []
    sel = parse_sel_elist(node.render_sel_elist(state, BOOT, NOW))
    assert [e["event"] for e in sel["entries"]] == ["Log area reset/cleared", "S0/G0: working"]
    assert len(parse_sdr_elist(node.render_sdr_elist(state))["sensors"]) == 11
    log = parse_kernel_log(node.render_journal(state, BOOT, NOW))
    assert [e["kind"] for e in log["events"]] == ["link"] * 4
    dmesg = parse_kernel_log(node.render_dmesg(state, BOOT, NOW))["events"]
    assert [(e["bus_id"], e["state"], int(e["time"])) for e in dmesg] == [
        (e["bus_id"], e["state"], int(e["time"])) for e in log["events"]]
    bw = parse_nvbandwidth(node.render_nvbandwidth(state, list(node.NVBANDWIDTH_TESTS))[1])
    assert bw is not None


def test_journal_honours_since_and_says_no_entries():
    s = hw.default_state("sim-dgx2", 2)
    assert node.render_journal(s, BOOT, NOW, since=NOW - 3600) == "-- No entries --\n"
    lines = node.render_journal(s, BOOT, NOW).splitlines()
    assert lines[0].startswith("2025-11-28T03:20:09+00:00 sim-dgx2 kernel: NVRM: loading NVIDIA UNIX x86_64")
    assert lines[1].endswith("kernel: mlx5_core 0000:05:00.0 enp5s0: Link up")


def test_healthy_node_passes_every_check_no_false_alarm(tmp_path, state):
    reading, results = staged(tmp_path, state)
    assert reading["errors"] == {} and reading["kernel_log_source"] == "journalctl"
    bad = [(r.check, r.status, r.cause or r.reason) for r in results if r.status in ("fail", "error")]
    assert bad == []
    passed = {r.check for r in results if r.status == "pass"}
    assert {"kernel_xid", "kernel_aer", "kernel_link_flap", "host_cpu", "host_memory", "host_numa", "host_nvme",
            "host_disk_space", "host_kernel", "bmc_sel", "bmc_sensors"} <= passed
    assert {r.check for r in results if r.status == "skipped"} == {"host_swap"}  # NVIDIA documents no swap size


# --------------------------------------------------------------------------- each fault fails its check

@pytest.mark.parametrize("faults, check, words, subject", [
    ({"xid79": 3}, "kernel_xid", ("Xid 79", "GPU 3"), {"gpu": 3}),
    ({"xid48": 2}, "kernel_xid", ("Xid 48", "GPU 2"), {"gpu": 2}),
    ({"aer_hca": "mlx5_1"}, "kernel_aer", ("mlx5_1", "uncorrected"), {"hca": "mlx5_1", "nic": "enp12s0"}),
    ({"link_flap": "mlx5_2"}, "kernel_link_flap", ("enp132s0", "went down"), {"hca": "mlx5_2"}),
    ({"dimm_missing": True}, "host_memory", ("missing", "DIMM"), {}),
    ({"dimm_missing": True}, "bmc_sel", ("Memory Device Disabled", "CPU 2 DIMM 5"), {}),
    ({"nvme_critical": True}, "host_nvme", ("critical warning 0x04",), {}),
    ({"psu_failed": 2}, "bmc_sensors", ("PSU2", "Failure detected"), {}),
    ({"psu_failed": 2}, "bmc_sel", ("PSU2", "Failure detected"), {}),
])
def test_each_fault_fails_its_check_naming_the_device(tmp_path, state, faults, check, words, subject):
    _, results = staged(tmp_path, faulty(state, **faults))
    failed = [r for r in results if r.status == "fail"]
    mine = [r for r in failed if r.check == check]
    assert mine, [(r.check, r.status, r.cause) for r in results if r.status != "pass"]
    text = " ".join(r.cause for r in mine)
    for w in words:
        assert w.lower() in text.lower(), text
    subj = mine[0].problems[0].subject if mine[0].problems else mine[0].subject
    for k, v in subject.items():
        assert getattr(subj, k) == v or getattr(mine[0].subject, k) == v, (subj, mine[0].subject)


def test_a_fault_outside_the_window_is_not_judged(tmp_path, state):
    _, results = staged(tmp_path, faulty(state, at=NOW - 3 * 86400, xid79=3))
    assert by_check(results, "kernel_xid")[0].status == "pass"


def test_half_host_to_device_bandwidth_fails_the_peers_check(state):
    def record(s, name):
        _, text = node.render_nvbandwidth(s, list(node.NVBANDWIDTH_TESTS))
        return name, {"status": "ok", "dgx_model": "dgx1", "facts": {"nvbandwidth": {
            "result": parse_nvbandwidth(text), "error": None}}}
    nodes = dict([record(state, "sim-dgx1"), record(hw.default_state("sim-dgx2", 2), "sim-dgx2")])
    healthy = bandwidth_checks(nodes, {})
    assert [r for r in healthy if r.status == "fail" and not r.absolute] == []
    nodes = dict([record(faulty(state, h2d_half=5), "sim-dgx1"), record(hw.default_state("sim-dgx2", 2), "sim-dgx2")])
    [bad] = [r for r in bandwidth_checks(nodes, {}) if r.status == "fail" and not r.absolute]
    assert bad.check == "gpu_bandwidth_h2d_peers" and bad.subject.node == "sim-dgx1" and bad.subject.gpu == 5


def test_faults_parse_and_refuse_unknown_keys():
    assert node.parse_faults(["xid79=3", "aer_hca=mlx5_1", "dimm_missing=1", "psu_failed=2"]) == {
        "xid79": 3, "aer_hca": "mlx5_1", "dimm_missing": True, "psu_failed": 2}
    for bad in ("xid=3", "aer_hca=enp5s0", "psu_failed"):
        with pytest.raises(ValueError):
            node.parse_faults([bad])


def test_smartctl_of_a_missing_drive_is_smartctls_open_failure(state):
    rc, text = node.render_smartctl(state, "/dev/nvme0", NOW)
    assert rc == 1 and "Unable to detect device type" in text
    rc, text = node.render_smartctl(faulty(state, nvme_critical=True), "/dev/nvme0", NOW)
    smart = parse_smartctl_nvme(text)
    assert rc == 8 and smart["critical_warning"] == 4 and smart["passed"] is False


# --------------------------------------------------------------------------- the launcher, as a node runs it

def test_the_launcher_picks_the_tool_from_its_name(tmp_path, state):
    path = tmp_path / "hardware.json"
    path.write_text(json.dumps(faulty(state, psu_failed=3)))
    env = dict(os.environ, PODSIM_HW_STATE=str(path))
    out = subprocess.run([os.path.join(STANDINS, "ipmitool"), "sdr", "elist"], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert "PSU3 Status      | 72h | ok  | 10.3 | Presence detected, Failure detected" in out
    res = subprocess.run([os.path.join(STANDINS, "journalctl"), "-k", "-o", "short-iso", "--no-pager", "--since",
                          "@0"], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and parse_kernel_log(res.stdout)["events"]
    for tool in ("journalctl", "dmesg", "lscpu", "numactl", "ipmitool", "nvme", "smartctl", "nvbandwidth"):
        assert os.readlink(os.path.join(STANDINS, tool)) == "podsim-node", tool
    with contextlib.redirect_stderr(io.StringIO()):
        assert node.main(["/x/" + "lscpu"]) == 1  # only -J
    assert sys.modules["podsim_node"] is node


def test_the_verb_keeps_the_inject_time_and_rewrites_meminfo(tmp_path, state):
    nd = tmp_path / "nodes" / "sim-dgx1" / "etc.upper" / "podsim"
    nd.mkdir(parents=True)
    (nd / "hardware.json").write_text(json.dumps(state))
    (tmp_path / "state.json").write_text("{}")
    env = dict(os.environ, PODSIM_STATE=str(tmp_path))
    run = [sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "node", "sim-dgx1"]
    out = subprocess.run(run + ["--fault", "dimm_missing=1"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"dimm_missing": True}
    saved = json.loads((nd / "hardware.json").read_text())
    assert set(saved["node_faults_at"]) == {"dimm_missing"}
    mem = parse_meminfo((nd / "sysfs" / "proc" / "meminfo").read_text())
    assert mem["mem_total_kib"] == node.MEMTOTAL_KB - node.DIMM_KB
    out = subprocess.run(run + ["--clear"], env=env, capture_output=True, text=True)
    assert json.loads(out.stdout) == {}
    assert parse_meminfo((nd / "sysfs" / "proc" / "meminfo").read_text())["mem_total_kib"] == node.MEMTOTAL_KB


def test_up_writes_the_proc_files_into_a_dgx_built_before_them_and_then_changes_nothing(tmp_path, state):
    import podmodel as pm
    from podsimlib.common import Paths
    from podsimlib.up import Up, node_health_files

    paths = Paths(str(tmp_path))
    etc = tmp_path / "nodes" / "sim-dgx1" / "etc.upper" / "podsim"
    etc.mkdir(parents=True)
    (etc / "hardware.json").write_text(json.dumps(faulty(state, dimm_missing=True)))
    up = Up(None, pm.pod_shape(2, 1), paths, None)
    node_health_files(up)  # sim-dgx2 has no stand-in state (rebuilt by create_namespaces), storage nodes none
    assert up.actions == ["wrote sim-dgx1's node health stand-in files"]
    mem = parse_meminfo((etc / "sysfs" / "proc" / "meminfo").read_text())
    assert mem["mem_total_kib"] == node.MEMTOTAL_KB - node.DIMM_KB
    assert (etc / "sysfs" / "proc" / "stat").read_text().startswith("btime ")
    again = Up(None, pm.pod_shape(2, 1), paths, None)
    node_health_files(again)
    assert again.actions == []


# --------------------------------------------------------------------------- the drill's judgement, without a pod

def pod_results(states, tmp_path):
    """results.json's checks and findings for a 4-DGX pod-in-a-box whose node stage read ``states`` (one per DGX,
    through the module's gather on the stand-ins), as pod_report_write builds them for --tags node."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import with_findings
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
    nodes = {}
    for name, st in states.items():
        root = stand_in_tree(tmp_path / name, st)
        nodes[name] = {"dgx_node": mod.gather(standin_runner(st), lambda t: "/usr/local/sbin/" + t, fs_root=root,
                                              now=NOW), "error": None, "unreachable": False, "dgx_model": "dgx1"}
    doc = build_results({"pod": "sim", "simulated": True}, {}, {}, {"node": {"window_hours": 24, "nodes": nodes}},
                        run_tags=["node"])
    return with_findings(doc)


def healthy_states():
    return {"sim-dgx%d" % i: hw.default_state("sim-dgx%d" % i, i) for i in range(1, 5)}


def test_the_healthy_pod_in_a_box_passes_the_node_stage_as_the_drill_judges_it(tmp_path):
    import drill
    v = drill.judge_healthy(pod_results(healthy_states(), tmp_path), 0)
    assert v.ok, v


@pytest.mark.parametrize("name", ["node_xid79", "node_xid48", "node_aer_hca", "node_link_flap", "node_dimm_missing",
                                  "node_nvme_critical", "node_psu_failed"])
def test_each_node_fault_is_the_top_finding_with_node_check_and_words(tmp_path, name):
    import drill
    import faults
    import podmodel as pm
    f = faults.BY_NAME[name]
    states = healthy_states()
    ctx_argv = []
    f.inject(type("Ctx", (), {"run": lambda self, argv, **kw: ctx_argv.append(argv) or ""})(), f.node, {})
    [argv] = ctx_argv  # podsim node NODE --fault K=V: apply it to the node's state as the verb does
    states[f.node] = faulty(states[f.node], **node.parse_faults([argv[-1]]))
    results = pod_results(states, tmp_path)
    v = drill.judge_fault(results, f.targets(pm.pod_shape(4, 2), f.node), f.checks, f.keywords, f.single)
    assert v.ok, (v, results["findings"][:2])
    assert len(results["findings"]) == 1, results["findings"]
