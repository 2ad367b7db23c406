"""The push path (module_utils/switch/push.py, as library/switch_config.py runs it) against the fake switch server
on 127.0.0.1, with stock netmiko: converge, idempotence, drift, a rejected line, a dropped connection, backups.

Every connection goes to 127.0.0.1 (the fake server); nothing else is contacted.
"""
from __future__ import annotations

import os
import re
import time

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.push import PushError, SwitchPush
from test_switch_helpers import GOLDEN

from sim.fakeswitch.cli import new_state  # noqa: E402
from sim.fakeswitch.server import FakeSwitchServer  # noqa: E402

USERS = {"eos": "admin", "onyx": "admin", "cumulus": "cumulus"}
ONYX_CFG = """## an Onyx data switch (hand-written; no reference pod runs Onyx)
hostname sw-onyx
lacp
interface port-channel 10
interface port-channel 10 description "peer link to sw-b"
interface ethernet 1/1 mtu 9216 force
interface ethernet 1/1 speed 100G force
interface ethernet 1/1 description "DGX1-1 enp5s0"
interface ethernet 1/31 channel-group 10 mode active
spanning-tree mode mst
roce lossless
ip routing
ip route vrf default 0.0.0.0/0 10.55.67.1
"""


def _golden(pod, switch, new_name):
    with open(os.path.join(GOLDEN, pod, switch + ".cfg"), encoding="utf-8") as fh:
        return _without_management(fh.read(), switch, new_name)


def _without_management(text, switch, new_name):
    # the fake's management address is not the inventory's: leave the management interface out
    lines, skip = [], False
    for line in text.replace(switch, new_name).splitlines():
        if line.startswith(("interface Management1", "nv set interface eth0", "interface mgmt0")):
            skip = line.startswith("interface Management1")
            continue
        if skip and line.startswith("   "):
            continue
        skip = False
        lines.append(line)
    return "\n".join(lines) + "\n"


CONFIGS = {"eos": _golden("dgxpod", "data-sw1", "sw-eos"), "onyx": ONYX_CFG,
           "cumulus": _golden("dgxa100-powerscale", "sn3700v-1", "sw-cumulus") + "nv set qos roce mode lossless\n"}
EXPECT = {"eos": {"pfc_priority": 3, "ports": ["Ethernet1/1", "Ethernet19/1"]}, "onyx": {"pfc_priority": 3},
          "cumulus": {"pfc_priority": 3}}


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    server = FakeSwitchServer(str(tmp_path_factory.mktemp("fakeswitch")))
    for platform in USERS:
        server.add("sw-" + platform, platform)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fresh(fake):
    """Reset every fake switch to factory state before a test."""
    for platform in USERS:
        fake.set_state("sw-" + platform, new_state(platform, "sw-" + platform))
    return fake


def params(fake, platform, tmp_path, **extra):
    p = dict(platform=platform, host="127.0.0.1", port=fake.switches["sw-" + platform]["port"],
             name="sw-" + platform, username=USERS[platform], password=USERS[platform], config=CONFIGS[platform],
             backup_dir=str(tmp_path / "backups"), known_hosts_file=fake.known_hosts_path(), connect_timeout=10,
             command_timeout=30, verify_lossless=True, lossless_expect=EXPECT[platform])
    p.update(extra)
    assert p["host"] == "127.0.0.1"
    return p


def run(p, check=False):
    return SwitchPush(p).run(check)


@pytest.mark.parametrize("platform", sorted(USERS))
def test_converge_then_idempotent_then_backup(fresh, platform, tmp_path):
    p = params(fresh, platform, tmp_path)
    t0 = time.time()
    first = run(p)
    assert first["changed"] and first["commands"]
    assert first["lossless"]["ok"], first["lossless"]
    assert os.path.exists(first["backup_path"])
    with open(first["backup_path"], encoding="utf-8") as fh:
        assert "sw-%s" % platform in fh.read()
    second = run(p)
    assert second["changed"] is False and second["commands"] == []
    assert "backup_path" not in second
    assert fresh.state("sw-" + platform)["saves"] >= 1
    assert time.time() - t0 < 60


@pytest.mark.parametrize("platform", sorted(USERS))
def test_check_mode_changes_nothing(fresh, platform, tmp_path):
    before = fresh.state("sw-" + platform)["running"]
    res = run(params(fresh, platform, tmp_path), check=True)
    assert res["changed"] and res["commands"] and res["diff"]["after"]
    assert fresh.state("sw-" + platform)["running"] == before
    assert not (tmp_path / "backups").exists()


def test_eos_drift_shows_in_check_mode_and_is_fixed(fresh, tmp_path):
    p = params(fresh, "eos", tmp_path)
    run(p)
    state = fresh.state("sw-eos")
    for item in state["running"]:
        if item[0] == "interface Ethernet1/1":
            item[1] = [c if not c.startswith("mtu") else "mtu 1500" for c in item[1]]
    fresh.set_state("sw-eos", state)
    drift = run(p, check=True)
    assert drift["changed"] and drift["commands"] == ["interface Ethernet1/1", "   mtu 9214", "exit"]
    assert "mtu 1500" in drift["diff"]["before"]
    fixed = run(p)
    assert fixed["changed"] and run(p)["changed"] is False


def test_eos_rejected_line_aborts_session_running_byte_identical(fresh, tmp_path):
    p = params(fresh, "eos", tmp_path)
    running_before = fresh.state("sw-eos")["running"]
    from sim.fakeswitch.cli import eos_render
    text_before = eos_render(running_before, "sw-eos")
    fresh.set_faults("sw-eos", reject=r"^priority-flow-control priority 3")
    with pytest.raises(PushError) as err:
        run(p)
    assert "aborted" in err.value.msg and "Invalid" in err.value.msg
    state = fresh.state("sw-eos")
    assert eos_render(state["running"], "sw-eos") == text_before
    assert state["sessions"] == {} and state["commits"] == 0
    assert os.path.exists(err.value.result["backup_path"])


@pytest.mark.parametrize("platform", sorted(USERS))
def test_dropped_connection_leaves_old_or_new(fresh, platform, tmp_path):
    # netmiko notices a closed channel only when a read times out: keep the command timeout short here
    p = params(fresh, platform, tmp_path, command_timeout=4)
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.diff import remediation
    old = fresh.state("sw-" + platform)["running"]
    fresh.set_faults("sw-" + platform, drop_after_lines=5, drop_times=1)
    with pytest.raises(PushError) as err:
        run(p)
    assert "connection" in err.value.msg or "dropped" in err.value.msg
    now = fresh.state("sw-" + platform)
    if platform == "onyx":
        assert err.value.result.get("restored") is True, err.value.msg
    # never a mix: either exactly the old running config, or one that needs no change
    new_ok = not remediation(platform, _show(fresh, platform), CONFIGS[platform]).changed
    assert now["running"] == old or new_ok, err.value.msg
    assert now["running"] == old  # with a drop before the commit/apply, it is the old one
    fresh.set_faults("sw-" + platform)
    assert run(p)["changed"] and run(p)["changed"] is False  # the next run converges


@pytest.mark.parametrize("platform", ["eos", "cumulus"])
def test_drop_after_the_commit_took_effect_goes_on_to_save_and_verify(fresh, platform, tmp_path):
    """The commit/apply took effect and only its reply was lost: the module reconnects, finds the new config,
    and still saves and verifies it - otherwise a re-run would say changed=0 and the switch would lose the
    change at its next reload (startup config never written)."""
    p = params(fresh, platform, tmp_path, command_timeout=4)
    fresh.set_faults("sw-" + platform, drop_after_commit=1)
    res = run(p)
    st = fresh.state("sw-" + platform)
    assert st["faults"]["drop_after_commit"] == 0  # the fault did fire
    assert res["changed"] and res["after_drop"] == "the running config is the new one"
    assert any("found the new config" in w for w in res["warnings"])
    assert res.get("saved") is True and st["startup"] == st["running"]
    assert res["lossless"]["ok"]
    assert os.path.exists(res["backup_path"])
    assert run(p)["changed"] is False


def test_drop_during_commit_that_did_not_take_effect_fails_naming_the_old_config(fresh, tmp_path):
    # the drop hits the commit line itself (before it is applied): the session is never committed
    p = params(fresh, "eos", tmp_path, command_timeout=4)
    old = fresh.state("sw-eos")["running"]
    n = len([c for c in run(p, check=True)["commands"] if c.strip() not in ("exit", "end")])
    fresh.set_faults("sw-eos", drop_after_lines=n, drop_times=1)
    with pytest.raises(PushError) as err:
        run(p)
    assert "commit" in err.value.msg and "unchanged (old)" in err.value.msg, err.value.msg
    st = fresh.state("sw-eos")
    assert st["running"] == old and st["commits"] == 0


@pytest.mark.parametrize("platform", sorted(USERS))
def test_a_switch_that_does_not_apply_a_line_fails_as_not_converged(fresh, platform, tmp_path):
    """The switch accepts a line without error but does not apply it (a silently normalised or ignored
    command): the re-read after the push still differs, the run fails naming the line and the backup, and
    nothing is saved."""
    p = params(fresh, platform, tmp_path)
    ignore = {"eos": r"^priority-flow-control priority 3", "onyx": r"^roce lossless",
              "cumulus": r"^nv set qos roce mode"}[platform]
    fresh.set_faults("sw-" + platform, ignore=ignore)
    with pytest.raises(PushError) as err:
        run(p)
    msg = err.value.msg
    assert "did not converge" in msg and err.value.result["backup_path"] in msg, msg
    assert re.search(ignore.lstrip("^"), msg), msg
    assert fresh.state("sw-" + platform)["saves"] == 0


def _show(fake, platform):
    from sim.fakeswitch import cli
    st = fake.state("sw-" + platform)
    if platform == "eos":
        return cli.eos_render(st["running"], st["hostname"])
    if platform == "onyx":
        return cli.onyx_render(st["running"], st["hostname"])
    return "\n".join(st["running"])


def test_wrong_password_and_unknown_host_key_fail_without_leaking(fresh, tmp_path):
    p = params(fresh, "eos", tmp_path, password="s3cret-Wrong")
    with pytest.raises(PushError) as err:
        run(p)
    assert "s3cret-Wrong" not in err.value.msg and "cannot connect" in err.value.msg
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(PushError) as err:
        run(params(fresh, "eos", tmp_path, known_hosts_file=str(empty)))
    assert "cannot connect" in err.value.msg


def test_management_change_is_refused_by_default(fresh, tmp_path):
    cfg = CONFIGS["eos"].replace("end\n", "interface Management1\n   ip address 198.18.67.251/24\n!\nend\n")
    with pytest.raises(PushError, match="management interface"):
        run(params(fresh, "eos", tmp_path, config=cfg))
    res = run(params(fresh, "eos", tmp_path, config=cfg, allow_management_change=True))
    assert res["changed"]


def test_lossless_verify_fails_on_a_port_without_pfc(fresh, tmp_path):
    p = params(fresh, "eos", tmp_path, lossless_expect={"pfc_priority": 3, "ports": ["Ethernet30/1"]})
    res = run(p)
    assert res["lossless"]["ok"] is False and "Ethernet30/1" in res["lossless"]["problems"][0]


def test_slow_replies_within_and_beyond_the_command_timeout(fresh, tmp_path):
    p = params(fresh, "cumulus", tmp_path)
    run(p)
    fresh.set_faults("sw-cumulus", delay=0.2)
    t0 = time.time()
    assert run(p)["changed"] is False  # a few commands, each 0.2 s late: fine
    assert time.time() - t0 > 0.6
    fresh.set_faults("sw-cumulus", delay=3)
    with pytest.raises(PushError):
        run(params(fresh, "cumulus", tmp_path, command_timeout=1, connect_timeout=2))
    fresh.set_faults("sw-cumulus")


@pytest.mark.parametrize("platform,reject,after", [
    # Onyx has no sessions: the lines before the rejected one are live until the module restores the backup
    ("onyx", r"^roce lossless", "restored"),
    # NVUE: nothing is applied before nv config apply; the pending revision is detached
    ("cumulus", r"link mtu 9216", "detach")])
def test_rejected_line_leaves_the_running_config_as_before(fresh, tmp_path, platform, reject, after):
    p = params(fresh, platform, tmp_path)
    before = fresh.state("sw-" + platform)["running"]
    fresh.set_faults("sw-" + platform, reject=reject)
    with pytest.raises(PushError) as err:
        run(p)
    assert "rejected a line" in err.value.msg, err.value.msg
    assert after in err.value.msg
    if platform == "onyx":
        assert err.value.result.get("restored") is True
    state = fresh.state("sw-" + platform)
    assert state["running"] == before and state["saves"] == 0 and state["startup"] is None
    assert state["pending"] in (None, [], {})  # NVUE: no pending revision left behind
    assert os.path.exists(err.value.result["backup_path"])
    fresh.set_faults("sw-" + platform)
    assert run(p)["changed"] and run(p)["changed"] is False


# ---------------------------------------------------------------------------------------------- VLANs
def _vlan_configs():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import structured_config
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render
    from test_switch_vlans import _eos_with_vlans, _nvue_with_vlans
    return {"eos": _without_management(render(structured_config(_eos_with_vlans(), "data-sw1")), "data-sw1", "sw-eos"),
            "onyx": _golden("onyx-pod", "sn2700-1", "sw-onyx"),
            "cumulus": _without_management(render(structured_config(_nvue_with_vlans(), "sn3700v-1")), "sn3700v-1",
                                           "sw-cumulus")}


# per platform: (the port's access VLAN line as the fake stores it, the drifted line, an unmanaged VLAN)
VLAN_DRIFT = {
    "eos": ("switchport access vlan 105", "switchport access vlan 999", ["vlan 999", ["name other-team"]]),
    "onyx": ("interface ethernet 1/1 switchport access vlan 10", "interface ethernet 1/1 switchport access vlan 30",
             "vlan 30"),
    "cumulus": ("nv set interface swp1 bridge domain br_default access 11",
                "nv set interface swp1 bridge domain br_default access 99", "nv set bridge domain br_default vlan 99"),
}


def _drift(state, platform, old, new):
    if platform == "eos":
        item = next(it for it in state["running"] if it[0] == "interface Ethernet1/1")
        assert old in item[1]
        item[1] = [new if c == old else c for c in item[1]]
    else:
        assert old in state["running"]
        state["running"] = [new if x == old else x for x in state["running"]]


@pytest.mark.parametrize("platform", sorted(USERS))
def test_vlan_config_converges_is_idempotent_and_fixes_access_vlan_drift(fresh, platform, tmp_path):
    cfg = _vlan_configs()[platform]
    old, new, unmanaged = VLAN_DRIFT[platform]
    state = fresh.state("sw-" + platform)
    state["running"].append(unmanaged)  # a VLAN someone else configured: never removed
    fresh.set_state("sw-" + platform, state)
    p = params(fresh, platform, tmp_path, config=cfg, verify_lossless=False)
    first = run(p)
    assert first["changed"] and first["commands"]
    assert run(p)["changed"] is False
    _drift(state := fresh.state("sw-" + platform), platform, old, new)
    fresh.set_state("sw-" + platform, state)
    drift = run(p, check=True)
    assert drift["changed"] and any(old.split("nv set ")[-1].strip() in c for c in drift["commands"]), drift
    assert not any("other-team" in c or c.startswith(("no vlan", "nv unset bridge")) for c in drift["commands"])
    fixed = run(p)
    assert fixed["changed"]
    again = run(p)
    assert again["changed"] is False, again["commands"]
    running = fresh.state("sw-" + platform)["running"]
    assert unmanaged in running
    if platform == "eos":
        assert old in next(it for it in running if it[0] == "interface Ethernet1/1")[1]
    else:
        assert old in running and new not in running
