"""scripts/drill.py without a pod: how a report is judged (found, missed, wrong node, false alarm, the fallback
rule before results.json has findings), the validate.yml arguments per fault, the drill's order of runs with a
fake simulator and playbook runner, and the table it prints and keeps in docs/validation.md."""
from __future__ import annotations

import copy
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import drill  # noqa: E402
import faults as fl  # noqa: E402
import podmodel as pm  # noqa: E402

MTU = fl.get("nic_mtu")


def finding(host="sim-dgx3", root=("network", "sim-dgx3"), explains=(("network", "sim-dgx1"),),
            cause="enp132s0: MTU 1500, model 9000", summary=None):
    return {"id": "f1", "host": host, "subject": "enp132s0", "cause": cause, "status": "fail",
            "root": {"check": root[0], "host": root[1]} if root else None,
            "explains": [{"check": c, "host": h, "status": "fail"} for c, h in explains],
            "summary": summary or "%s %s" % (host, cause)}


def judge(results, fault=MTU, node="sim-dgx3"):
    return drill.judge_fault(results, fault.targets(pm.pod_shape(4, 2), node), fault.checks, fault.keywords)


# --------------------------------------------------------------------------- judging

def test_the_top_finding_naming_node_check_and_cause_is_found():
    v = judge({"findings": [finding(), finding(host="sim-dgx1", cause="ping")], "checks": []})
    assert v.ok and v.how == "findings" and v.top.startswith("sim-dgx3: sim-dgx3 enp132s0: MTU 1500")


def test_a_check_among_what_the_finding_explains_counts_and_the_keyword_may_be_in_the_summary():
    f = finding(root=None, explains=[("nfs_mounts", "sim-dgx1"), ("network", "sim-dgx3")], cause="jumbo frames lost",
                summary="sim-dgx3 enp132s0 MTU 1500")
    assert judge({"findings": [f]}).ok


def test_the_wrong_node_on_top_is_a_miss_even_if_the_right_one_is_second():
    v = judge({"findings": [finding(host="sim-dgx1", root=("network", "sim-dgx1")), finding()]})
    assert not v.ok and "top finding is about sim-dgx1, not sim-dgx3" in v.why


def test_a_top_finding_without_the_expected_check_or_keyword_is_a_miss():
    v = judge({"findings": [finding(root=("nfs_mounts", "sim-dgx3"), explains=(), cause="slow reads",
                                    summary="sim-dgx3 slow reads")]})
    assert not v.ok
    assert "explains ['nfs_mounts'], none of network" in v.why and "none of 'mtu' in its cause" in v.why


def test_no_findings_at_all_is_a_miss():
    v = judge({"findings": [], "checks": [{"check": "network", "host": "sim-dgx3", "status": "fail"}]})
    assert not v.ok and v.how == "findings" and v.why == "the report has no finding"


def test_a_switch_fault_is_found_on_the_switch_port():
    fault = fl.get("switch_port_mtu")
    f = finding(host="sim-sw2 Ethernet3/1", root=("switch_port_mtu", "sim-sw2 Ethernet3/1"), explains=(),
                cause="sim-sw2 Ethernet3/1 (sim-dgx3 enp132s0): MTU 1500, model 9214")
    assert judge({"findings": [f]}, fault).ok
    assert not judge({"findings": [finding()]}, fault).ok  # the DGX named instead of the switch


def test_host_matching_is_by_name_not_prefix():
    assert drill.host_matches("sim-dgx3", ["sim-dgx3"]) and drill.host_matches("sim-dgx3 enp132s0", ["sim-dgx3"])
    assert not drill.host_matches("sim-dgx30", ["sim-dgx3"]) and not drill.host_matches(None, ["sim-dgx3"])
    assert drill.check_about("sim-dgx1<->sim-dgx3", ["sim-dgx3"])
    assert not drill.check_about("sim-dgx1<->sim-dgx30", ["sim-dgx3"])


def test_fallback_without_findings_needs_a_failed_check_of_that_name_about_that_host():
    checks = [{"check": "network", "host": "sim-dgx1", "status": "fail", "cause": "ping to sim-dgx3 at MTU 9000"},
              {"check": "network", "host": "sim-dgx3", "status": "fail", "cause": "enp132s0 mtu: 1500 -> 9000"},
              {"check": "identity", "host": "sim-dgx3", "status": "pass"}]
    v = judge({"checks": checks})
    assert v.ok and v.how == "fallback" and v.top == "network sim-dgx3: enp132s0 mtu: 1500 -> 9000"
    v = judge({"checks": checks[:1] + checks[2:]})
    assert not v.ok and v.how == "fallback" and v.why == "no failed network check about sim-dgx3"
    assert v.top.startswith("network sim-dgx1: ping")
    pairs = [{"check": "iperf_relative", "host": "sim-dgx1<->sim-dgx2", "status": "fail", "cause": "enp12s0 slow"}]
    assert judge({"checks": pairs}, fl.get("slow_nic"), "sim-dgx2").ok
    assert not judge({"checks": pairs}, fl.get("slow_nic"), "sim-dgx3").ok


def test_a_healthy_run_passes_only_with_nothing_failed_no_finding_and_rc_0():
    ok = {"checks": [{"check": "network", "host": "sim-dgx1", "status": "pass"},
                     {"check": "gpu_count", "host": "sim-dgx1", "status": "skipped"}], "findings": []}
    v = drill.judge_healthy(ok, 0)
    assert v.ok and v.top == "1 checks passed"
    alarm = copy.deepcopy(ok)
    alarm["checks"][0].update(status="error", reason="host unreachable")
    v = drill.judge_healthy(alarm, 2)
    assert not v.ok and v.top == "network sim-dgx1: host unreachable" and v.why.startswith("false alarm: 1 failed")
    alarm = dict(ok, findings=[finding()])
    assert not drill.judge_healthy(alarm, 0).ok
    assert not drill.judge_healthy(ok, 2).ok  # e.g. preflight failed: no check failed but the run did


def test_validate_args_skip_the_expensive_stages_a_fault_does_not_ask_for():
    base = ["ansible-playbook", "validate.yml", "-i", "inventories/sim"]
    assert drill.validate_args((), preflight=True) == base + ["--skip-tags", "iperf,fio,nccl,training,checkpoint"]
    assert drill.validate_args(("network",), preflight=True) == base + [
        "--tags", "network", "--skip-tags", "iperf,fio,nccl,training,checkpoint"]
    assert drill.validate_args(("iperf",), preflight=True) == base + ["--tags", "iperf", "--skip-tags",
                                                                      "fio,nccl,training,checkpoint"]
    # the narrow runs leave out the preflight (the drill's first and last runs check the model)
    assert drill.validate_args(("network",)) == base + ["--tags", "network", "--skip-tags",
                                                        "iperf,fio,nccl,training,checkpoint,preflight"]
    assert drill.validate_args(("iperf", "fio", "nccl", "training", "checkpoint")) == base + [
        "--tags", "iperf,fio,nccl,training,checkpoint", "--skip-tags", "preflight"]


def test_the_preflight_tag_leaves_out_only_the_preflight():
    """validate.yml's preflight import is tagged always and preflight: it runs with any --tags, and
    --skip-tags preflight (the drill's narrow runs) leaves it out and nothing else."""
    with open(os.path.join(ROOT, "validate.yml")) as fh:
        imports = yaml.safe_load(fh)
    tagged = [i for i in imports if "preflight" in (i.get("tags") or [])]
    assert [i["ansible.builtin.import_playbook"] for i in tagged] == ["playbooks/preflight.yml"]
    assert "always" in tagged[0]["tags"]
    with open(os.path.join(ROOT, "playbooks", "preflight.yml")) as fh:
        assert all("preflight" not in (p.get("tags") or []) for p in yaml.safe_load(fh))
    for other in imports[1:]:
        assert "preflight" not in (other.get("tags") or []), other


# --------------------------------------------------------------------------- the drill's runs (fakes)

class Ctx:
    def __init__(self):
        self.log = []
        self.recs = {}

    def pod(self):
        return pm.pod_shape(4, 2)

    def records(self):
        return dict(self.recs)

    def save_records(self, r):
        self.recs = dict(r)


class FakeFault:
    def __init__(self, name, layer="host-network", node="sim-dgx3", tags=("network",), checks=("network",),
                 keywords=("mtu",), broken_clear=False):
        self.name, self.layer, self.node, self.tags = name, layer, node, tags
        self.checks, self.keywords = checks, keywords
        self.summary, self.broken_clear, self.single = name, broken_clear, False

    def targets(self, pod, node):
        return (node,)

    def inject(self, ctx, node, rec):
        ctx.log.append("inject " + self.name)

    def clear(self, ctx, node, rec):
        ctx.log.append("clear " + self.name)
        if self.broken_clear:
            raise RuntimeError("cannot")


@pytest.fixture
def catalogue(monkeypatch):
    fs = [FakeFault("a"), FakeFault("b", tags=("storage",), checks=("nfs_mounts",), keywords=("mount",)),
          FakeFault("c", broken_clear=True)]
    monkeypatch.setattr(fl, "BY_NAME", {f.name: f for f in fs})
    return fs


def run_drill(catalogue, results_for):
    ctx = Ctx()
    clock = iter(range(0, 10000, 10))

    def run(argv):  # validate.yml fails (rc 2) right after an inject
        faulty = bool(ctx.log) and ctx.log[-1].startswith("inject")
        ctx.log.append("validate " + argv[argv.index("--tags") + 1] if "--tags" in argv else "validate state-only")
        return 2 if faulty else 0

    d = drill.Drill(ctx, run, lambda since: results_for(ctx.log), clock=lambda: next(clock), say=lambda s: None,
                    wall=lambda: 0.0)
    ok = d.all(catalogue)
    return ok, d.rows, ctx.log


def healthy_or(fault_results):
    def results_for(log):
        last_inject = max((i for i, x in enumerate(log) if x.startswith("inject")), default=-1)
        last_clear = max((i for i, x in enumerate(log) if x.startswith("clear")), default=-1)
        if last_inject > last_clear:
            return fault_results[log[last_inject].split()[1]]
        return {"checks": [{"check": "network", "host": "sim-dgx1", "status": "pass"}], "findings": []}
    return results_for


def test_the_drill_runs_healthy_before_between_and_after_and_reports_each_fault(catalogue):
    found = {"findings": [finding()]}
    ok, rows, log = run_drill(catalogue, healthy_or({"a": found, "b": {"findings": [finding()]}, "c": found}))
    assert log == ["validate state-only", "inject a", "validate network", "clear a", "validate network",
                   "inject b", "validate storage", "clear b", "validate storage",
                   "inject c", "validate network", "clear c", "validate state-only"]
    assert [(r.fault, r.found) for r in rows] == [
        ("(healthy before)", "ok"), ("a", "yes"), ("(healthy after a)", "ok"), ("b", "NO"), ("(healthy after b)", "ok"),
        ("c", "ERROR"), ("(healthy after)", "ok")]
    assert "explains ['network'], none of nfs_mounts" in rows[3].why and rows[5].why == "clear failed: cannot"
    assert not ok
    assert all(r.seconds == 10 or r.fault in ("a", "b", "c") for r in rows)


def test_a_false_alarm_fails_the_drill_even_when_every_fault_is_found(catalogue):
    found = {"findings": [finding()]}

    def results_for(log):
        if log[-1] == "validate state-only" and len(log) == 1:
            return {"checks": [{"check": "nfs_mounts", "host": "sim-dgx2", "status": "fail", "cause": "stale"}]}
        return healthy_or({"a": found})(log)
    ok, rows, _ = run_drill(catalogue[:1], results_for)
    assert not ok and [(r.fault, r.found) for r in rows] == [("(healthy before)", "FALSE ALARM"), ("a", "yes"),
                                                             ("(healthy after)", "ok")]


def test_full_state_only_runs_open_and_close_the_drill_and_each_fault_is_followed_by_its_narrow_tags(monkeypatch):
    fs = [FakeFault("f%d" % i) for i in range(1, 7)]
    monkeypatch.setattr(fl, "BY_NAME", {f.name: f for f in fs})
    ok, rows, log = run_drill(fs, healthy_or({f.name: {"findings": [finding()]} for f in fs}))
    assert ok
    assert [(r.fault, r.tags) for r in rows if r.fault.startswith("(")] == [
        ("(healthy before)", "state-only")] + [("(healthy after f%d)" % i, "network") for i in range(1, 6)] + [
        ("(healthy after)", "state-only")]
    assert log.count("validate state-only") == 2


def test_the_plan_runs_the_preflight_only_in_the_full_runs_and_keeps_a_last_benchmark_faults_narrow_run():
    net, perf = FakeFault("net"), FakeFault("perf", tags=("iperf",))
    steps = drill.plan([net, perf])
    assert steps == [("healthy", "before", (), True, ()), ("fault", net),
                     ("healthy", "after net", ("network",), False, ()), ("fault", perf),
                     ("healthy", "after perf", ("iperf",), False, ()), ("healthy", "after", (), True, ())]
    # a last fault whose stage the closing state-only run covers needs no narrow run of its own
    assert drill.plan([perf, net])[-2:] == [("fault", net), ("healthy", "after", (), True, ())]


def test_the_healthy_run_after_a_fault_with_stage_options_runs_with_them():
    opt = FakeFault("opt", tags=("gpu",))
    opt.extra_vars = ("gpu_nvbandwidth=true",)
    steps = drill.plan([opt])
    assert steps[-2:] == [("healthy", "after opt", ("gpu",), False, ("gpu_nvbandwidth=true",)),
                          ("healthy", "after", (), True, ())]
    argvs = []
    d = drill.Drill(Ctx(), lambda argv: argvs.append(argv) or 0, lambda since: {"checks": [], "findings": []},
                    say=lambda s: None)
    d.healthy(*steps[-2][1:])
    assert argvs[0][argvs[0].index("-e") + 1] == "gpu_nvbandwidth=true"
    assert drill.state_only_covers(("network", "drift")) and not drill.state_only_covers(("iperf",))


def test_a_fault_row_splits_its_seconds_into_inject_validate_and_clear(monkeypatch):
    f = FakeFault("a")
    monkeypatch.setattr(fl, "BY_NAME", {"a": f})
    clock = iter([0.0, 2.0, 32.0, 40.0])
    d = drill.Drill(Ctx(), lambda argv: 2, lambda since: {"findings": [finding()]}, clock=lambda: next(clock),
                    say=lambda s: None)
    assert d.fault(f) and (d.rows[0].seconds, d.rows[0].phases) == (40.0, "2 / 30 / 8")
    broken = FakeFault("b", broken_clear=True)
    monkeypatch.setattr(fl, "BY_NAME", {"b": broken})
    monkeypatch.setattr(broken, "inject", lambda ctx, node, rec: (_ for _ in ()).throw(RuntimeError("no")))
    clock = iter([0.0, 5.0])
    assert not d.fault(broken) and d.rows[1].phases == "0 / 0 / 5" and d.rows[1].found == "ERROR"


def test_a_fault_found_but_validate_passing_is_a_miss(monkeypatch):
    f = FakeFault("a")
    monkeypatch.setattr(fl, "BY_NAME", {"a": f})
    d = drill.Drill(Ctx(), lambda argv: 0, lambda since: {"findings": [finding()]}, clock=lambda: 0.0,
                    say=lambda s: None)
    assert not d.fault(f) and d.rows[0].why == "validate.yml exited 0 with the fault in place"


def test_select_and_list():
    assert [f.name for f in drill.select("nic_mtu,gpu_ecc")] == ["nic_mtu", "gpu_ecc"]
    assert drill.select(None) == list(fl.CATALOGUE)
    with pytest.raises(SystemExit, match="no fault nope"):
        drill.select("nic_mtu,nope")
    assert drill.main(["--list"]) == 0


# --------------------------------------------------------------------------- the table

def test_the_table_and_the_doc_section():
    rows = [drill.Row("(healthy before)", "all", "state-only", "ok", "120 checks passed", 41.2),
            drill.Row("nic_mtu", "sim-dgx3", "network", "yes (fallback)", "network sim-dgx3: enp132s0 | mtu", 20.4),
            drill.Row("gpu_ecc", "sim-dgx2", "gpu", "NO", "x" * 200, 9.6, "top finding is about sim-dgx1")]
    rows[2].phases = "1 / 8 / 1"
    table = drill.render_table(rows)
    lines = table.splitlines()
    assert lines[0] == "| fault | node | tags | found? | top finding | s | inject / validate / clear s |"
    assert lines[3] == ("| nic_mtu | sim-dgx3 | network | yes (fallback) | network sim-dgx3: enp132s0 \\| mtu "
                        "| 20 |  |")
    assert lines[4].startswith("| gpu_ecc | sim-dgx2 | gpu | NO | xxx") and "…" in lines[4]
    assert lines[4].endswith(" | 10 | 1 / 8 / 1 |")
    summary = drill.summary_line(rows, 71.2)
    assert summary == ("1/2 faults found (1 by the fallback rule: no findings in results.json), 1/1 healthy runs "
                       "passed (false alarms: 0), 1.2 min")
    doc = "# V\n\nintro\n\n%s\nold\n%s\n\n## Next\n" % (drill.BEGIN, drill.END)
    new = drill.update_doc(doc, table, "2026-11-23 18:00 UTC", summary)
    assert new.startswith("# V\n\nintro\n\n" + drill.BEGIN + "\nLatest drill: 2026-11-23 18:00 UTC — 1/2 faults")
    assert new.endswith(drill.END + "\n\n## Next\n") and "old" not in new and table in new
    assert drill.update_doc(new, table, "2026-11-24 18:00 UTC", summary).count(drill.BEGIN) == 1
    appended = drill.update_doc("# V\n", table, "t", summary)
    assert "## Fault drill (`make drill`)" in appended and appended.endswith(drill.END + "\n")


def test_the_docs_keep_the_drill_markers():
    with open(os.path.join(ROOT, "docs", "validation.md")) as fh:
        text = fh.read()
    assert text.count(drill.BEGIN) == 1 and text.count(drill.END) == 1
    assert text.index(drill.BEGIN) < text.index(drill.END)


def test_a_single_finding_fault_fails_when_the_jobs_add_findings_of_their_own():
    two = {"findings": [finding(), finding(host="sim-dgx1", cause="train_job: gloo timeout")], "checks": []}
    v = drill.judge_fault(two, ("sim-dgx3",), ("network",), ("mtu",), single=True)
    assert not v.ok and "2 findings, not one" in v.why and "gloo timeout" in v.why
    assert drill.judge_fault({"findings": [finding()], "checks": []}, ("sim-dgx3",), ("network",), ("mtu",),
                             single=True).ok
    assert fl.get("nic_mtu_jobs").single and not fl.get("nic_mtu").single


def test_the_stale_hosts_line_goes_above_the_managed_block_and_the_block_is_kept():
    text = ("127.0.0.1\tlocalhost\n# BEGIN dgxpod toolkit: pod sim (managed)\n198.18.66.11\tsim-dgx1\n"
            "198.18.66.13\tsim-dgx3\n# END dgxpod toolkit: pod sim (managed)\n")
    new = fl.mechanisms.hosts_with_stale_line(text, "sim-dgx3")
    lines = new.splitlines()
    assert lines[1].split() == [fl.wrong_address("198.18.66.13"), "sim-dgx3"] and lines[1].split()[0] != "198.18.66.13"
    assert "\n".join(lines[:1] + lines[2:]) + "\n" == text
