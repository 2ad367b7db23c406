"""The switch validation stage against the fake EOS switch on 127.0.0.1: module_utils/switch_validate.py reads it
(read-only, the deploy's netmiko session) and module_utils/switch/eval.py compares with the pod model of the
pod-in-a-box inventory. Converged -> every check passes; each fault is found and named.

Every connection goes to 127.0.0.1 (the fake server); nothing else is contacted.
"""
from __future__ import annotations

import copy
import socket

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages, registry
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.eval import evaluate, markdown
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import structured_config
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.push import SwitchPush
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.readings import SwitchValidate
from test_switch_helpers import pod_model_of

from sim.fakeswitch.cli import Device  # noqa: E402
from sim.fakeswitch.server import FakeSwitchServer  # noqa: E402

SW = "sim-sw1"


def _wiring(structured):
    """What the converged pod has cabled to each port: the model's peers (the simulator writes the same from its
    own pod shape)."""
    out = {}
    for iface in structured["interfaces"]:
        peer = iface.get("peer")
        if peer:
            out[iface["name"]] = {"host": peer["host"], "nic": peer["nic"], "speed": iface.get("speed", 100)}
        elif iface.get("channel_group"):
            pc = next(p for p in structured["port_channels"] if p["id"] == iface["channel_group"]["id"])
            out[iface["name"]] = {"host": pc.get("peer", "?"), "nic": iface["name"], "speed": iface.get("speed", 100)}
    return out


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    model = pod_model_of("sim")
    structured = structured_config(model, SW)
    config = render(structured)
    server = FakeSwitchServer(str(tmp_path_factory.mktemp("fakeswitch")))
    server.add(SW, "eos", wiring=_wiring(structured))
    server.start()
    params = {"platform": "eos", "host": "127.0.0.1", "port": server.switches[SW]["port"], "name": SW,
              "username": "admin", "password": "admin", "config": config, "known_hosts_file": server.known_hosts_path(),
              "allow_management_change": True, "counter_interval": 0, "connect_timeout": 10, "command_timeout": 30,
              "lossless_expect": {"pfc_priority": 3, "ports": [i["name"] for i in structured["interfaces"]
                                                               if i.get("qos")]}}
    SwitchPush(dict(params, verify_lossless=False)).run(False)
    converged = server.state(SW)
    yield {"server": server, "params": params, "structured": structured, "converged": converged}
    server.stop()


@pytest.fixture
def sw(pod):
    pod["server"].set_state(SW, copy.deepcopy(pod["converged"]))
    return pod


def cli(pod, *lines):
    """Type lines at the fake switch's console (as `sim/podsim switch --cli` does)."""
    path = pod["server"].switches[SW]["path"]
    from sim.fakeswitch.server import load_state, write_state
    dev = Device(load_state(path), lambda st: write_state(path, st))
    session = dev.session()
    for line in ("enable", "configure") + lines + ("end",):
        dev.state = load_state(path)
        out, _ = session.handle(line)
        assert not out.startswith("%"), (line, out)


def fault(pod, **faults):
    st = pod["server"].state(SW)
    st["faults"] = faults
    pod["server"].set_state(SW, st)


def run(pod, params=None):
    record = {"name": SW, "platform": "eos", "structured": pod["structured"]}
    try:
        record["result"] = SwitchValidate(params or pod["params"]).run()
    except Exception as exc:  # noqa: BLE001 - the playbook records the module's failure message the same way
        record["error"] = getattr(exc, "msg", str(exc))
    checks = [c.to_dict() for c in evaluate({"expected": [SW], "switches": [record]}, {}, {})]
    return record, checks


def bad(checks):
    return [c for c in checks if c["status"] in ("fail", "error")]


def test_converged_switch_passes_every_check_and_changes_nothing(sw):
    before = sw["server"].state(SW)["running"]
    record, checks = run(sw)
    assert not bad(checks), bad(checks)
    kinds = {c["check"] for c in checks}
    assert kinds == {"switch_drift", "switch_port_mtu", "switch_lossless", "switch_port_status", "switch_counters",
                     "switch_lldp", "switch_optic_rx_power", "switch_optic_tx_power", "switch_optic_tx_bias",
                     "switch_optic_temperature", "switch_optic_voltage", "switch_psu", "switch_fans",
                     "switch_temperature"}
    cabled = [i["name"] for i in sw["structured"]["interfaces"] if i.get("peer") or i.get("channel_group")]
    assert sorted(c["host"] for c in checks if c["check"] == "switch_optic_rx_power") == sorted(
        "sim-sw1 %s" % p for p in cabled)  # the model's cabled ports only
    assert [c["host"] for c in checks if c["check"] == "switch_psu"] == ["sim-sw1 PSU 1", "sim-sw1 PSU 2"]
    ports = [i["name"] for i in sw["structured"]["interfaces"]]
    assert len([c for c in checks if c["check"] == "switch_lldp"]) == len(ports)
    assert sw["server"].state(SW)["running"] == before  # read-only
    assert record["result"]["counters"]["delta"]["errors"]["Ethernet1/1"]["inErrors"] == 0
    # what each check is about, as data (issue 38): a port with the node and NIC the model cables to it (an
    # inter-switch port-channel member: the port only), or the switch as a whole
    about = {(c["check"], c["host"]): (c["category"], c["subject"]) for c in checks}
    assert about[("switch_lldp", "sim-sw1 Ethernet9/1")] == ("port_state", {
        "node": "sim-isilon1", "nic": "40gige-2", "switch": "sim-sw1", "port": "Ethernet9/1"})
    assert about[("switch_port_mtu", "sim-sw1 Ethernet31/1")] == ("port_state", {"switch": "sim-sw1",
                                                                                 "port": "Ethernet31/1"})
    assert about[("switch_drift", "sim-sw1")] == ("switch_state", {"switch": "sim-sw1"})
    assert {c["category"] for c in checks if " " in c["host"] and c["check"] != "switch_psu"} == {"port_state"}


def test_a_lowered_port_mtu_is_found_naming_switch_port_peer_and_model(sw):
    cli(sw, "interface Ethernet1/1", "mtu 1500")
    _, checks = run(sw)
    (mtu,) = [c for c in bad(checks) if c["check"] == "switch_port_mtu"]
    assert mtu["host"] == "sim-sw1 Ethernet1/1" and (mtu["measured"], mtu["expected"]) == (1500, 9214)
    assert mtu["category"] == "port_state" and mtu["subject"] == {"node": "sim-dgx1", "nic": "enp5s0",
                                                                  "switch": "sim-sw1", "port": "Ethernet1/1"}
    assert "sim-dgx1 enp5s0" in mtu["cause"] and "do not fit" in mtu["cause"] and "model 9214" in mtu["cause"]
    drift = next(c for c in checks if c["check"] == "switch_drift")
    assert drift["status"] == "fail" and "mtu 9214" in drift["cause"]
    assert {c["check"] for c in bad(checks)} == {"switch_port_mtu", "switch_drift"}


def test_a_removed_pfc_line_is_found(sw):
    cli(sw, "interface Ethernet2/1", "no priority-flow-control priority 3 no-drop")
    _, checks = run(sw)
    (ll,) = [c for c in bad(checks) if c["check"] == "switch_lossless"]
    assert ll["host"] == "sim-sw1 Ethernet2/1"
    assert "priority-flow-control priority 3 no-drop" in ll["cause"] and "sim-dgx2 enp5s0" in ll["cause"]
    assert "RA lossless RoCE" in ll["source"]


def test_a_port_down_is_found_and_its_lldp_is_not_blamed(sw):
    fault(sw, port_down="Ethernet3/1")
    _, checks = run(sw)
    (st,) = [c for c in bad(checks) if c["check"] == "switch_port_status"]
    assert st["host"] == "sim-sw1 Ethernet3/1" and "link notconnect" in st["cause"] and "sim-dgx3 enp5s0" in st["cause"]
    lldp = next(c for c in checks if c["check"] == "switch_lldp" and c["host"] == "sim-sw1 Ethernet3/1")
    assert lldp["status"] == "skipped"
    assert [c["check"] for c in bad(checks)] == ["switch_port_status"]


def test_a_speed_change_is_found(sw):
    fault(sw, port_speed="Ethernet4/1:40")
    _, checks = run(sw)
    (st,) = bad(checks)
    assert st["host"] == "sim-sw1 Ethernet4/1" and "speed 40G, model 100G" in st["cause"]


def test_a_swapped_cable_names_both_ports_and_both_nics(sw):
    fault(sw, swap="Ethernet1/1,Ethernet2/1")
    _, checks = run(sw)
    lldp = [c for c in bad(checks) if c["check"] == "switch_lldp"]
    assert [c["host"] for c in lldp] == ["sim-sw1 Ethernet1/1", "sim-sw1 Ethernet2/1"]
    assert [(c["subject"]["node"], c["subject"]["nic"], c["subject"]["port"]) for c in lldp] == [
        ("sim-dgx1", "enp5s0", "Ethernet1/1"), ("sim-dgx2", "enp5s0", "Ethernet2/1")]  # the model's cabling
    cause = lldp[0]["cause"]
    assert cause.startswith("cables swapped: sim-sw1 Ethernet1/1 has sim-dgx2 enp5s0 (model: sim-dgx1 enp5s0)")
    assert "sim-sw1 Ethernet2/1 has sim-dgx1 enp5s0 (model: sim-dgx2 enp5s0)" in cause
    assert len(bad(checks)) == 2


def test_rising_counters_are_found_per_port(sw):
    fault(sw, errors_rising="Ethernet5/1", pause_rising="Ethernet9/1")
    _, checks = run(sw)
    found = {c["host"]: c["cause"] for c in bad(checks)}
    assert set(found) == {"sim-sw1 Ethernet5/1", "sim-sw1 Ethernet9/1"}
    assert "frames received with errors +7 (inErrors)" in found["sim-sw1 Ethernet5/1"]
    assert "FCS errors (bad frames: cable/optic) +7 (fcsErrors)" in found["sim-sw1 Ethernet5/1"]
    assert "sim-dgx1 enp12s0" in found["sim-sw1 Ethernet5/1"]
    assert "PFC pause frames received (the peer asks this port to stop sending) +1000 (rxFrames)" in found[
        "sim-sw1 Ethernet9/1"] and "sim-isilon1 40gige-2" in found["sim-sw1 Ethernet9/1"]
    (pause,) = [c for c in bad(checks) if c["host"] == "sim-sw1 Ethernet9/1"]
    assert pause["measured"].startswith("PFC pause frames received (the peer asks this port to stop sending) +1000")


def test_an_optic_with_low_rx_power_names_switch_port_peer_and_the_module_threshold(sw):
    fault(sw, optic_rx_low="Ethernet2/1")
    _, checks = run(sw)
    (rx,) = bad(checks)
    assert (rx["check"], rx["host"], rx["category"]) == ("switch_optic_rx_power", "sim-sw1 Ethernet2/1", "port_state")
    assert rx["subject"] == {"switch": "sim-sw1", "port": "Ethernet2/1"}
    assert rx["measured"] < rx["expected"] == -9.5
    assert "sim-sw1 port Ethernet2/1 (to sim-dgx2 enp5s0)" in rx["cause"] and "Rx power -14" in rx["cause"]
    assert "low-warning -9.50 and low-alarm -12.50" in rx["cause"]


def test_a_failed_psu_and_a_failed_fan_are_found_naming_the_switch(sw):
    fault(sw, psu_failed="2", fan_failed="3/1")
    _, checks = run(sw)
    found = {c["check"]: c for c in bad(checks)}
    assert set(found) == {"switch_psu", "switch_fans"}
    assert found["switch_psu"]["host"] == "sim-sw1 PSU 2" and "state powerLoss" in found["switch_psu"]["cause"]
    assert "fan 3/1 (slot 3): failed" in found["switch_fans"]["cause"]
    assert {c["category"] for c in found.values()} == {"switch_state"}
    assert {c["subject"]["switch"] for c in found.values()} == {"sim-sw1"}


def test_an_unreachable_switch_is_error_naming_it(sw):
    with socket.socket() as s:  # bound, never listened on: refuses while held, and no other test can take it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        _, checks = run(sw, dict(sw["params"], port=port, connect_timeout=3))
    (err,) = checks
    assert (err["check"], err["host"], err["status"]) == ("switch_connect", SW, "error")
    assert (err["category"], err["subject"]) == ("switch_state", {"switch": SW})
    assert "cannot read sim-sw1" in err["reason"]


def test_a_switch_that_recorded_nothing_is_error_and_the_stage_is_registered(sw):
    only = [s for s in registry() if s.name == "switches"]
    checks, meas = evaluate_stages({"switches": {"expected": ["sim-sw1", "sim-sw2"], "switches": []}}, {}, {},
                                   stages=only)
    assert {(c["check"], c["host"], c["status"]) for c in checks} == {("switch_connect", "sim-sw1", "error"),
                                                                      ("switch_connect", "sim-sw2", "error")}
    assert "switches" in meas
    assert {c["stage"] for c in checks} == {"switches"}  # the registry says which stage decided each check
    left, _ = evaluate_stages({}, {}, {}, run_tags=["network"])
    assert [c["status"] for c in left if c["check"] == "switches"] == ["skipped"]
    (row,) = [c for c in left if c["check"] == "switches"]
    assert (row["category"], row["subject"], row["stage"]) == ("pod_state", {}, "switches")


def test_the_report_has_a_port_table_marking_the_failed_port(sw):
    fault(sw, port_down="Ethernet3/1")
    record, checks = run(sw)
    doc = {"measurements": {"switches": {"switches": [record]}}, "checks": checks}
    text = "\n".join(markdown(doc))
    assert "### sim-sw1" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| Ethernet3/1 "))
    assert "notconnect" in row and "FAIL: port_status" in row
    ok_row = next(ln for ln in text.splitlines() if ln.startswith("| Ethernet1/1 "))
    assert "sim-dgx1 enp5s0" in ok_row and ok_row.endswith("| ok |")


@pytest.mark.parametrize("inv,switch,platform", [("onyx-pod", "sn2700-1", "onyx"),
                                                 ("dgxa100-powerscale", "sn3700v-1", "cumulus")])
def test_onyx_and_nvue_switches_converged_pass_and_a_port_down_and_a_swap_are_found(tmp_path, inv, switch, platform):
    structured = structured_config(pod_model_of(inv), switch)
    cabled = [i["name"] for i in structured["interfaces"] if i.get("peer")]
    server = FakeSwitchServer(str(tmp_path))
    server.add(switch, platform, wiring=_wiring(structured))
    server.start()
    try:
        params = {"platform": platform, "host": "127.0.0.1", "port": server.switches[switch]["port"], "name": switch,
                  "username": "cumulus" if platform == "cumulus" else "admin",
                  "password": "cumulus" if platform == "cumulus" else "admin", "config": render(structured),
                  "known_hosts_file": server.known_hosts_path(), "allow_management_change": True,
                  "counter_interval": 0, "lossless_expect": {"pfc_priority": 3} if structured.get("qos") else {}}
        SwitchPush(params).run(False)

        def checks(**faults):
            st = server.state(switch)
            st["faults"] = faults
            server.set_state(switch, st)
            rec = {"name": switch, "platform": platform, "structured": structured,
                   "result": SwitchValidate(params).run()}
            return [c.to_dict() for c in evaluate({"expected": [switch], "switches": [rec]}, {}, {})]

        healthy = checks()
        assert not bad(healthy), bad(healthy)
        assert {c["check"] for c in healthy if c["status"] == "pass"} >= {"switch_drift", "switch_port_mtu",
                                                                         "switch_port_status", "switch_lldp"}
        counters = [c for c in healthy if c["check"] == "switch_counters"]
        assert len(counters) == len(structured["interfaces"]) and {c["status"] for c in counters} == {"pass"}
        env = {c["check"]: c["status"] for c in healthy if c["check"] in ("switch_environment", "switch_optics")}
        assert env == ({"switch_environment": "skipped", "switch_optics": "skipped"} if platform == "onyx" else
                       {"switch_environment": "pass"})
        optics = sorted(c["host"] for c in healthy if c["check"] == "switch_optic_rx_power")
        linked = [i["name"] for i in structured["interfaces"] if i.get("peer") or i.get("channel_group")]
        assert optics == ([] if platform == "onyx" else sorted("%s %s" % (switch, p) for p in linked))
        # errors rising (both), pause frames rising (NVUE; Onyx's pause counters are not read), named by meaning
        rising = bad(checks(errors_rising=cabled[0], pause_rising=cabled[1]))
        want = [("switch_counters", "%s %s" % (switch, cabled[0]))]
        if platform == "cumulus":
            want.append(("switch_counters", "%s %s" % (switch, cabled[1])))
        assert [(c["check"], c["host"]) for c in rising] == want
        assert "frames received with errors +7" in rising[0]["cause"] and rising[0]["subject"]["node"]
        if platform == "cumulus":
            assert ("PFC pause frames received (the peer asks this port to stop sending) +1000 (rx-pause-frames)"
                    in rising[1]["cause"])
            fan = bad(checks(fan_failed="FAN2/1"))
            assert [(c["check"], c["host"]) for c in fan] == [("switch_environment", switch)]
            assert "fan FAN2/1: fail" in fan[0]["cause"]
            (rx,) = bad(checks(optic_rx_low=cabled[1]))
            assert (rx["check"], rx["host"]) == ("switch_optic_rx_power", "%s %s" % (switch, cabled[1]))
            assert "Rx power -14.20 dBm" in rx["cause"] and "low-alarm -13.31" in rx["cause"]
        else:
            assert "PFC pause: not read" in rising[0]["expected"]
        down = bad(checks(port_down=cabled[0]))
        assert [(c["check"], c["host"]) for c in down] == [("switch_port_status", "%s %s" % (switch, cabled[0]))]
        swapped = bad(checks(swap="%s,%s" % (cabled[0], cabled[1])))
        assert [c["host"] for c in swapped] == ["%s %s" % (switch, p) for p in cabled[:2]]
        assert swapped[0]["cause"].startswith("cables swapped: %s %s has" % (switch, cabled[0]))
    finally:
        server.stop()


@pytest.mark.parametrize("faults,check,words", [
    ({"optic_rx_low": "Ethernet2/1"}, "switch_optic_rx_power", ("Ethernet2/1", "Rx power", "threshold")),
    ({"psu_failed": "2"}, "switch_psu", ("PSU 2", "powerLoss")),
    ({"fan_failed": "3/1"}, "switch_fans", ("fan 3/1", "failed")),
    ({"pause_rising": "Ethernet9/1"}, "switch_counters", ("Ethernet9/1", "PFC pause frames received"))])
def test_the_top_finding_names_the_switch_the_part_and_what_is_wrong(sw, faults, check, words):
    """What the drill judges (scripts/drill.py judge_fault): the report's first finding is about the switch, explains
    the fault's check and says what is wrong."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
    fault(sw, **faults)
    _, checks = run(sw)
    top = build_findings(checks)[0]
    assert top["host"].startswith("sim-sw1"), top
    named = {(top.get("root") or {}).get("check")} | {e.get("check") for e in top.get("explains") or []}
    assert check in named, top
    text = "%s %s" % (top.get("cause"), top.get("summary"))
    assert all(w in text for w in words), text


def test_the_role_keeps_the_optics_and_environment_readings_for_the_report(sw):
    """roles/switch_config tasks/validate.yml keeps what switch_validate returned through switch_validation_record:
    the optics and environment readings must reach the evaluator (they were dropped once: no optic check ran)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.record import switch_validation_record
    fault(sw, psu_failed="1")
    readings = SwitchValidate(sw["params"]).run()
    rec = switch_validation_record(SW, "eos", sw["structured"], readings)
    assert {"optics", "environment", "counters"} <= set(rec["result"])
    checks = [c.to_dict() for c in evaluate({"expected": [SW], "switches": [rec]}, {}, {})]
    assert [(c["check"], c["host"]) for c in bad(checks)] == [("switch_psu", "sim-sw1 PSU 1")]
    assert len([c for c in checks if c["check"].startswith("switch_optic_")]) == 5 * len(
        [i for i in sw["structured"]["interfaces"] if i.get("peer") or i.get("channel_group")])
