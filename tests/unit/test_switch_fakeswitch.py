"""The fake switch CLIs (sim/fakeswitch/cli.py) without SSH: modes, config semantics, vendor errors, faults."""
from __future__ import annotations



from sim.fakeswitch.cli import Device, eos_render, new_state, onyx_render  # noqa: E402


def session(platform, **faults):
    st = new_state(platform, "sw1")
    st["faults"] = faults
    dev = Device(st)
    return dev, dev.session()


def feed(sess, *lines):
    return [sess.handle(x) for x in lines]


def test_eos_modes_prompts_and_errors():
    dev, s = session("eos")
    assert s.prompt() == "sw1>"
    assert feed(s, "terminal length 0")[0][0] == "Pagination disabled."
    assert "% Invalid input" in feed(s, "configure terminal")[0][0]  # not in exec mode
    feed(s, "enable", "configure terminal", "interface Ethernet1/1")
    assert s.prompt() == "sw1(config-if-Et1/1)#"
    out = feed(s, "mtu 9214", "bogus", "ip routing")  # ip routing falls through to the parent mode
    assert out[1][0].startswith("% Invalid input") and s.prompt() == "sw1(config)#"
    feed(s, "interface Ethernet1/1", "mtu 1500", "no description", "end")
    text = eos_render(dev.state["running"], "sw1")
    assert "   mtu 1500" in text and "mtu 9214" not in text and "\nip routing\n" in text


def test_eos_session_commit_and_abort():
    dev, s = session("eos")
    feed(s, "enable", "configure session a1", "hostname sw2", "interface Ethernet2/1", "mtu 9214")
    assert s.prompt() == "sw1(config-s-a1-if-Et2/1)#"
    diff = feed(s, "show session-config diffs")[0][0]
    assert "+hostname sw2" in diff and "+   mtu 9214" in diff
    before = eos_render(dev.state["running"], "sw1")
    feed(s, "abort")
    assert eos_render(dev.state["running"], "sw1") == before and dev.state["sessions"] == {}
    feed(s, "configure session a2", "hostname sw2", "commit")
    assert dev.state["hostname"] == "sw2" and s.prompt() == "sw2#"


def test_eos_faults_reject_and_drop():
    dev, s = session("eos", reject="^mtu", drop_after_lines=2)
    feed(s, "enable", "configure terminal")
    out = feed(s, "interface Ethernet1/1", "mtu 9214", "description x")
    assert out[1][0].startswith("% Invalid") and out[2] == ("", "drop")
    assert dev.state["faults"]["drop_times"] == 0


def test_onyx_flat_lines_negation_and_errors():
    dev, s = session("onyx")
    assert s.prompt().endswith("> ")
    feed(s, "enable", "configure terminal", "interface ethernet 1/1 mtu 1500 force",
         "interface ethernet 1/1 mtu 9216 force", 'interface ethernet 1/1 description "a b"', "roce lossless")
    assert "interface ethernet 1/1 mtu 9216 force" in dev.state["running"]
    assert "interface ethernet 1/1 mtu 1500 force" not in dev.state["running"]
    feed(s, "interface ethernet 1/1 no description", "no roce")
    assert not any("description" in x or x.startswith("roce") for x in dev.state["running"])
    assert feed(s, "bogus")[0][0].startswith('% Unrecognized command "bogus"')
    assert "## Interface Ethernet configuration" in onyx_render(dev.state["running"], "sw1")


def test_cumulus_pending_apply_detach_and_errors():
    dev, s = session("cumulus")
    feed(s, "nv set interface swp1 link mtu 9216", "nv set interface swp1 description 'DGX A'")
    assert dev.state["running"] == ["nv set system hostname sw1"]  # nothing applied yet
    assert "nv set interface swp1 link mtu 9216" in feed(s, "nv config diff")[0][0]
    feed(s, "nv config apply -y")
    assert "nv set interface swp1 description 'DGX A'" in dev.state["running"]
    feed(s, "nv set interface swp1 link mtu 1500", "nv config detach", "nv config apply -y")
    assert "nv set interface swp1 link mtu 9216" in dev.state["running"]
    assert feed(s, "nv set interface swp1 link bogus 1")[0][0].startswith("Error:")
    assert feed(s, "frobnicate")[0][0] == "-bash: frobnicate: command not found"
    feed(s, "nv unset interface swp1 link mtu", "nv config apply -y")
    assert not any("mtu" in x for x in dev.state["running"])
