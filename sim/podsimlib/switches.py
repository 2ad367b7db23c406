"""The fake switches (sim/fakeswitch): one SSH server process serving every switch of the pod on
127.0.0.1, their cabling, their reset at `down`, and the fault keys `podsim switch --fault` accepts."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import podmodel as pm

from .common import REPO, Paths, die
from .procs import alive, record, wait_tcp
from .state import State


FAKE_SWITCH_BASE_PORT = 8220  # sim-swN listens on 127.0.0.1:(8220 + N); inventories/sim/group_vars/switches.yml


def fake_switch_args(paths: Paths, pod: pm.Pod) -> list[str]:
    sw_dir = os.path.join(paths.root, "switches")
    args = [sys.executable, "-m", "sim.fakeswitch", "--state-dir", sw_dir, "--ready-file",
            os.path.join(sw_dir, "ready.json")]
    for name in pm.SWITCHES:
        args += ["--switch", "%s=eos:%d" % (name, FAKE_SWITCH_BASE_PORT + int(name.rsplit("sw", 1)[1]))]
    return args


def ensure_fake_switches(st: State, paths: Paths, pod: pm.Pod, actions: list[str]) -> None:
    """One fake switch SSH server process (asyncssh, sim/fakeswitch) serving every switch of the pod on
    127.0.0.1, recorded like the nodes' daemons. Its config state (the state dir's switches/) lives until
    ``down`` (reset_fake_switches)."""
    rec = st.data.get("fakeswitch")
    if alive(rec):
        write_switch_wiring(paths, pod)
        return
    os.makedirs(os.path.join(paths.root, "switches"), exist_ok=True)
    logf = open(os.path.join(paths.root, "switches", "fakeswitch.log"), "a")
    p = subprocess.Popen(fake_switch_args(paths, pod), cwd=REPO, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                         start_new_session=True, close_fds=True)
    st.data["fakeswitch"] = record(p.pid)
    ports = [("127.0.0.1", FAKE_SWITCH_BASE_PORT + int(n.rsplit("sw", 1)[1])) for n in pm.SWITCHES]
    late = wait_tcp(ports, 20)
    if late:
        die("fake switch server not listening after 20 s on %s (see %s/switches/fakeswitch.log)" % (
            ", ".join("%s:%d" % a for a in late), paths.root))
    write_switch_wiring(paths, pod)
    actions.append("started fake switches %s (pid %d)" % (", ".join(pm.SWITCHES), p.pid))


def write_switch_wiring(paths: Paths, pod: pm.Pod) -> None:
    """Tell each fake switch what is cabled to its ports (LLDP neighbours, link state): pm.switch_wiring."""
    from fakeswitch.server import set_wiring, state_path

    sw_dir = os.path.join(paths.root, "switches")
    for name, wiring in pm.switch_wiring(pod).items():
        path = state_path(sw_dir, name)
        if os.path.exists(path):
            set_wiring(path, wiring)


def reset_fake_switches(paths: Paths) -> None:
    """``down`` leaves no config behind on the switches either: their state files go (the server's host key
    stays, like the nodes' keys), so the next ``up`` starts factory-fresh switches and its first deploy
    pushes their whole config, as it does the nodes'."""
    sw_dir = os.path.join(paths.root, "switches")
    for name in pm.SWITCHES:
        for f in (name + ".json", "ready.json"):
            if os.path.exists(os.path.join(sw_dir, f)):
                os.unlink(os.path.join(sw_dir, f))


SWITCH_FAULTS = {"reject": str, "ignore": str, "drop_after_lines": int, "drop_times": int,
                 "drop_after_commit": int, "delay": float,
                 # operational faults (sim/fakeswitch/eos_show.py): ports, comma-separated
                 "port_down": "ports", "port_speed": "port:gbps", "swap": "two ports", "errors_rising": "ports",
                 "discards_rising": "ports", "pause_rising": "ports",
                 # optics and environment (eos_show.py): a port's optic receives too little light, a PSU lost its
                 # input, a fan failed
                 "optic_rx_low": "ports", "psu_failed": "psus", "fan_failed": "fans"}
_PORT = r"Ethernet\d+(?:/\d+)*"
_FAN = r"(?:PowerSupply)?\d+/\d+"
_PORT_FAULT = {"ports": re.compile(r"^%s(,%s)*$" % (_PORT, _PORT)),
               "port:gbps": re.compile(r"^%s:\d+(,%s:\d+)*$" % (_PORT, _PORT)),
               "two ports": re.compile(r"^%s,%s$" % (_PORT, _PORT)),
               "psus": re.compile(r"^\d+(,\d+)*$"), "fans": re.compile(r"^%s(,%s)*$" % (_FAN, _FAN))}


def parse_switch_faults(specs: list[str]) -> dict:
    """``--fault KEY=VALUE`` items -> the fake switch's fault dict (sim/fakeswitch/cli.py), checked."""
    faults: dict = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or key not in SWITCH_FAULTS:
            raise ValueError("bad --fault %r: use KEY=VALUE with KEY one of %s" % (spec, ", ".join(SWITCH_FAULTS)))
        kind = SWITCH_FAULTS[key]
        if isinstance(kind, str):  # a port list
            if not _PORT_FAULT[kind].match(value):
                raise ValueError("bad --fault %s=%r: expected %s, e.g. %s" % (
                    key, value, kind, {"ports": "Ethernet1/1,Ethernet2/1", "port:gbps": "Ethernet1/1:40",
                                       "two ports": "Ethernet1/1,Ethernet2/1", "psus": "2",
                                       "fans": "3/1,PowerSupply1/1"}[kind]))
            faults[key] = value
            continue
        try:
            faults[key] = SWITCH_FAULTS[key](value)
            if SWITCH_FAULTS[key] is str:
                re.compile(value)
            elif faults[key] < 0:
                raise ValueError("negative")
        except (ValueError, re.error) as e:
            raise ValueError("bad --fault %s=%r: %s" % (key, value, e)) from None
    return faults
