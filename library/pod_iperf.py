#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: iperf3 server (start/stop) or client (run one test, return parsed JSON)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_iperf
short_description: Run iperf3 between two pod NICs - start/stop a one-off server, or run a client test
description:
  - I(role=server), I(state=started) starts C(iperf3 -s -1 -B <bind> -p <port>) detached from the task,
    wrapped in C(timeout <lifetime>) so that it exits by itself even if nobody stops it, waits until the
    port listens and returns its I(pid).
  - I(role=server), I(state=stopped) stops the server given by I(pid), and any other iperf3 server on
    I(port) (found in C(/proc)); safe to call when none runs. Playbooks call it in an C(always) block.
  - I(role=client) runs C(iperf3 -c <server> -B <bind> -p <port> -P <streams> -t <duration> -J) (C(-R) with
    I(reverse) the server sends) bounded by I(timeout) and returns the parsed result (module_utils/perf/iperf_parse).
  - I(role=servers) starts (or, I(state=stopped), stops) every server in I(listen) at once; these serve
    test after test (no C(-1)) until stopped or I(lifetime) runs out. A host's whole iperf3 schedule needs
    one such call.
  - I(role=clients) runs this host's tests of a whole schedule (I(tests)) in one task, each at
    I(start_at) + its C(offset), each in a thread of its own (tests with the same start run at once; one
    that overruns delays no other). Every host of a round launches its
    part at the same moment, so a round costs its test duration, not one SSH launch per test from the
    controller (issue 19). A server still busy with the previous round is retried for I(busy_retry) seconds.
  - A missing iperf3, a refused connection or a timeout give I(status=error) with a I(reason), not a task
    failure, so the playbook records the test as C(error) and goes on (set I(fail_on_error) to fail instead).
  - Check mode runs nothing and returns the command that would run.
version_added: "0.2.0"
options:
  role:
    description: C(server) or C(client) (one test), C(servers) or C(clients) (a host's whole schedule).
    type: str
    choices: [server, client, servers, clients]
    required: true
  listen:
    description: Role C(servers) - the servers to start or stop, each C({bind, port}) (C(pid) when stopping).
    type: list
    elements: dict
  tests:
    description:
      - Role C(clients) - this host's tests, each C({id, server, port, bind, reverse, offset}); C(offset) is
        seconds after I(start_at). I(streams), I(duration), I(length), I(omit) and I(timeout) apply to all.
    type: list
    elements: dict
  busy_retry:
    description: Role C(clients) - seconds to retry a test whose server is still busy (then C(late_by) is set).
    type: float
    default: 5.0
  state:
    description: Server only - C(started) or C(stopped).
    type: str
    choices: [started, stopped]
    default: started
  bind:
    description: Local address to bind (server - listen address; client - source address, selects the NIC).
    type: str
  port:
    description: TCP port of the server.
    type: int
    default: 5201
  pid:
    description: Server, I(state=stopped) - the pid returned by I(state=started).
    type: int
  lifetime:
    description: Server - seconds after which the server is killed even if never stopped.
    type: int
    default: 900
  server:
    description: Client - address of the server.
    type: str
  streams:
    description: Client - parallel streams (C(-P)); 004 uses 2.
    type: int
    default: 2
  duration:
    description: Client - seconds to transmit (C(-t)); 004 uses 300, a quick profile 5-10.
    type: int
    default: 10
  omit:
    description: Client - seconds of TCP slow start to leave out of the result (C(-O)).
    type: int
    default: 0
  length:
    description: Client - buffer length (C(-l)); 004 uses 65536.
    type: str
  reverse:
    description: Client - the server sends (C(-R)); used for storage -> DGX tests.
    type: bool
    default: false
  timeout:
    description: Client - seconds before the client is killed (default duration + omit + 30).
    type: int
  start_at:
    description:
      - Client - wall-clock time (seconds since the epoch) to start at. The playbook launches the clients
        of a round one after another (asynchronously); with a common I(start_at) they all transmit at the
        same time, so every pair of a round is measured under the same load. Hosts need synchronised
        clocks (NTP); a time in the past starts at once; at most 600 s of waiting.
    type: float
  iperf3_path:
    description: iperf3 binary (default - found in PATH).
    type: str
  fail_on_error:
    description: Fail the task when the test could not run (default - return I(status=error)).
    type: bool
    default: false
notes:
  - Supports check mode - nothing is started or run; I(cmd) shows what would run.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Start the server on the DGX NIC of this fabric
  pod_iperf:
    role: server
    bind: 198.18.5.12
    port: 5201
  register: srv

- name: Run the test, always stop the server
  block:
    - name: Client on the peer
      pod_iperf:
        role: client
        bind: 198.18.5.11
        server: 198.18.5.12
        port: 5201
        streams: 2
        duration: 10
      delegate_to: sim-dgx1
      register: test
  always:
    - name: Stop the server
      pod_iperf:
        role: server
        state: stopped
        port: 5201
        pid: "{{ srv.pid | default(omit) }}"
"""

RETURN = r"""
servers:
  description: Role C(servers), started - per server C(bind), C(port), C(status), C(pid) or C(reason).
  returned: role=servers
  type: list
tests:
  description:
    - Role C(clients) - per test its C(id), C(status), C(reason), C(result), C(started_at) (epoch seconds)
      and C(late_by) (seconds after its planned start, when over 2).
  returned: role=clients
  type: list
status:
  description: C(ok), C(error) (could not run - see I(reason)) or C(skipped) (check mode).
  returned: always
  type: str
reason:
  description: Why the test could not run.
  returned: when status is error
  type: str
cmd:
  description: The command line run (or that would run, in check mode).
  returned: always
  type: list
  elements: str
pid:
  description: Server started - pid of the server process (the C(timeout) wrapper, leader of its process group).
  returned: role=server, state=started
  type: int
stopped:
  description: Server stopped - pids that were signalled.
  returned: role=server, state=stopped
  type: list
  elements: int
result:
  description: Client - parsed iperf3 result (sent_bps, received_bps, retransmits, host_cpu_percent,
    remote_cpu_percent, streams, version, ...; see module_utils/perf/iperf_parse.py).
  returned: role=client
  type: dict
"""

import os
import signal
import socket
import threading
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool, start_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_parse import parse_iperf3
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.cmd import (iperf_client_argv, iperf_server_argv,
    is_our_iperf_server, listening_ports)


def _listening_ports():
    ports = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as fh:
                ports.update(listening_ports(fh.read()))
        except OSError:
            continue
    return ports


def _listening(port):
    return port in _listening_ports()


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            return [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def _netns(pid="self"):
    try:
        return os.readlink("/proc/%s/ns/net" % pid)
    except OSError:
        return None


def _servers_on_ports(ports):
    """{port: [pid, ...]}: the iperf3 servers on these ports in this network namespace, in one pass over /proc.
    Only this namespace: where hosts share a PID namespace but not the network (containers, the simulator's
    nodes), another host's server on the same port is not ours to kill."""
    mine = _netns()
    out = {int(p): [] for p in ports}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        cmd = _cmdline(int(entry))
        if not any(a.endswith("iperf3") for a in cmd):
            continue
        for port in out:
            if is_our_iperf_server(cmd, port) and _netns(entry) == mine:
                out[port].append(int(entry))
    return out


def _servers_on(port):
    return _servers_on_ports([port])[int(port)]


def _alive(pids):
    return [pid for pid in pids if os.path.exists("/proc/%d" % pid) and not _zombie(pid)]


def _kill(pids):
    """SIGTERM every process (its process group: the timeout wrapper leads its own) at once, SIGKILL what is
    still there after 1 s; returns the pids. Signalled together, so stopping a host's servers costs one wait,
    not one a server (each round has servers of its own: perf/plan.round_ports)."""
    pids = list(dict.fromkeys(pids))
    left = pids
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                try:
                    os.killpg(pid, sig)
                except OSError:
                    os.kill(pid, sig)
            except OSError:
                pass
        for _ in range(20):
            left = _alive(left)
            if not left:
                return pids
            time.sleep(0.05)
    return pids


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def stop_servers(port, pid=None):
    """Stop the server ``pid`` (if it is ours) and any other iperf3 server on ``port`` in this namespace."""
    return stop_all([(port, pid)])


def stop_all(items):
    """Stop every (port, pid) of ``items`` at once: the pid if it is an iperf3 server on that port, and any
    other iperf3 server on those ports in this namespace. Returns the pids stopped."""
    pids = [pid for port, pid in items if pid and is_our_iperf_server(_cmdline(pid), port)]
    for found in _servers_on_ports([port for port, _ in items]).values():
        pids += found
    return _kill(pids) if pids else []


def start_server(argv, bind, port):
    """Start one server (argv from iperf_server_argv), wait until it listens: {status, pid | reason}."""
    return start_servers([(argv, bind, port)])[0]


def start_servers(specs):
    """Start every server of ``specs`` [(argv, bind, port)] at once and wait (5 s at most) until each listens:
    [{status, pid | reason}] in order. A server left on a port by an interrupted run is stopped first; a port
    another program holds is an error naming it."""
    ports = [int(port) for _, _, port in specs]
    busy = _listening_ports() & set(ports)
    if busy:
        stale = [pid for found in _servers_on_ports(sorted(busy)).values() for pid in found]
        if stale:
            _kill(stale)  # servers left from an interrupted run
        busy = _listening_ports() & set(ports)
    results = [None] * len(specs)
    procs = {}
    for i, (argv, _bind, port) in enumerate(specs):
        if int(port) in busy:
            results[i] = {"status": "error", "reason": "port %d is already in use on this host" % int(port)}
            continue
        # common/run.py's background road: its own process group, /dev/null in and out, left running
        procs[i] = start_tool(argv, capture=False)
    pending = dict(procs)
    for _ in range(100):
        now = _listening_ports() if pending else set()
        for i, proc in list(pending.items()):
            if ports[i] in now:
                results[i] = {"status": "ok", "pid": proc.pid}
                del pending[i]
            elif proc.poll() is not None:
                del pending[i]
        if not pending:
            break
        time.sleep(0.05)
    failed = [i for i in procs if results[i] is None]
    if failed:
        _kill([procs[i].pid for i in failed if procs[i].pid])
    for i in failed:
        results[i] = {"status": "error", "reason": "iperf3 server did not start listening on %s:%d (exit %s)"
                      % (specs[i][1], ports[i], procs[i].poll())}
    return results


def server(module, p, iperf3):
    if p["state"] == "stopped":
        if module.check_mode:
            module.exit_json(changed=False, status="skipped", cmd=[], stopped=[])
        stopped = stop_servers(p["port"], p["pid"])
        module.exit_json(changed=bool(stopped), status="ok", cmd=[], stopped=stopped)
    if not p["bind"]:
        module.fail_json(msg="bind is required for role=server, state=started")
    timeout_bin = module.get_bin_path("timeout")
    argv = iperf_server_argv(iperf3 or "iperf3", p["bind"], p["port"], p["lifetime"], timeout_bin)
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", cmd=argv)
    if not iperf3:
        module.exit_json(changed=False, status="error", reason="iperf3 is not installed on this host", cmd=argv)
    out = start_server(argv, p["bind"], p["port"])
    module.exit_json(changed=out["status"] == "ok", cmd=argv, **out)


def servers(module, p, iperf3):
    """role=servers: every listed server at once (started: serving test after test; stopped: all gone)."""
    listen = []
    for item in p["listen"] or []:
        if not isinstance(item, dict) or not item.get("port") or (p["state"] == "started" and not item.get("bind")):
            module.fail_json(msg="listen entries need bind and port: %r" % (item,))
        listen.append({"bind": item.get("bind"), "port": int(item["port"]), "pid": item.get("pid")})
    if p["state"] == "stopped":
        if module.check_mode:
            module.exit_json(changed=False, status="skipped", stopped=[])
        stopped = stop_all([(item["port"], item["pid"]) for item in listen])
        module.exit_json(changed=bool(stopped), status="ok", stopped=stopped)
    timeout_bin = module.get_bin_path("timeout")
    out = []
    for item in listen:
        argv = iperf_server_argv(iperf3 or "iperf3", item["bind"], item["port"], p["lifetime"], timeout_bin,
                                 one_off=False)
        entry = {"bind": item["bind"], "port": item["port"], "cmd": argv}
        if module.check_mode:
            entry.update(status="skipped")
        elif not iperf3:
            entry.update(status="error", reason="iperf3 is not installed on this host")
        out.append(entry)
    if not module.check_mode and iperf3:  # all at once: one wait for every server to listen
        started = start_servers([(e["cmd"], e["bind"], e["port"]) for e in out])
        for i, entry in enumerate(out):
            entry.update(started[i])
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", servers=out)
    module.exit_json(changed=any(e["status"] == "ok" for e in out), status="ok", servers=out)


def tool_version(path):
    """First line of `<tool> --version` ("iperf 3.12 (cJSON 1.7.15)"), or "version unknown"."""
    res = run_tool([path, "--version"], 10)
    lines = [x.strip() for x in (res.stdout or res.stderr).splitlines() if x.strip()]
    return lines[0] if res.ok and lines else "version unknown"


BUSY = "server is busy"


def _client_argv(iperf3, t):
    return iperf_client_argv(iperf3 or "iperf3", t["server"], t["port"], t.get("bind"), t["streams"], t["duration"],
                             t.get("reverse", False), t.get("length"), t.get("omit", 0))


def run_test(iperf3, t, start_at=None, busy_retry=0.0):
    """One client test; ``t`` holds server, port, bind, streams, duration, reverse, length, omit, timeout.
    Waits for ``start_at``; a server still busy with the previous round's test is retried for up to
    ``busy_retry`` seconds (the result then says how late it started: ``late_by``)."""
    argv = _client_argv(iperf3, t)
    if not iperf3:
        return {"status": "error", "reason": "iperf3 is not installed on this host", "cmd": argv, "result": {}}
    limit = t.get("timeout") or (t["duration"] + t.get("omit", 0) + 30)
    if start_at:
        time.sleep(max(0.0, min(600.0, start_at - time.time())))
    give_up = time.time() + busy_retry
    while True:
        began = time.time()
        out = _one_client(iperf3, argv, t, limit)
        if BUSY not in (out.get("reason") or "") or time.time() >= give_up:
            break
        time.sleep(0.5)
    out["started_at"] = round(began, 3)
    if start_at and began - start_at > 2:
        out["late_by"] = round(began - start_at, 1)
    return out


def _one_client(iperf3, argv, t, limit):
    res = run_tool(argv, limit)
    out, rc, err = res.stdout, res.rc, res.stderr
    if res.timed_out:
        return {"status": "error", "cmd": argv, "result": {},
                "reason": "iperf3 client to %s:%d did not finish in %ds" % (t["server"], t["port"], limit)}
    try:
        parsed = parse_iperf3(out)
    except ValueError as exc:
        # never a number from a half-read output: an error naming this node and the iperf3 that printed it
        return {"status": "error", "cmd": argv, "result": {},
                "reason": "%s: iperf3 %s -> %s:%d printed output that cannot be read (%s, exit %s): %s%s" % (
                    socket.gethostname().split(".")[0], t.get("bind") or "", t["server"], t["port"],
                    tool_version(iperf3), rc, exc, "; stderr: " + err.strip()[-300:] if err.strip() else "")}
    if parsed["status"] != "ok":
        reason = parsed["error"] or (err.strip() or "iperf3 exited %d" % rc)
        return {"status": "error", "reason": "iperf3 %s -> %s:%d: %s" % (t.get("bind") or "", t["server"], t["port"],
                                                                       reason), "cmd": argv, "result": parsed}
    return {"status": "ok", "cmd": argv, "result": parsed}


COMMON = ("streams", "duration", "omit", "length", "timeout")


def client(module, p, iperf3):
    if not p["server"]:
        module.fail_json(msg="server is required for role=client")
    t = dict((k, p[k]) for k in COMMON + ("server", "port", "bind", "reverse"))
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", cmd=_client_argv(iperf3, t), result={})
    return run_test(iperf3, t, p["start_at"])


def clients(module, p, iperf3):
    """role=clients: this host's tests of a whole schedule. Each test starts at I(start_at) + its
    I(offset), in a thread of its own."""
    tests = []
    for item in p["tests"] or []:
        if not isinstance(item, dict) or not item.get("server") or not item.get("port") or not item.get("id"):
            module.fail_json(msg="tests entries need id, server and port: %r" % (item,))
        t = dict((k, p[k]) for k in COMMON)
        t.update(id=str(item["id"]), server=item["server"], port=int(item["port"]), bind=item.get("bind"),
                 reverse=bool(item.get("reverse", False)), offset=float(item.get("offset") or 0))
        tests.append(t)
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", tests=[
            {"id": t["id"], "status": "skipped", "result": {}, "cmd": _client_argv(iperf3, t)} for t in tests])
    base = p["start_at"] or time.time()
    results = {}
    # one thread a test, each waiting for its own start: a test that overruns its round (a slow link's
    # buffered data still draining) delays nothing of this host's on other NICs
    threads = []
    for t in tests:
        def work(t=t, at=base + t["offset"]):
            results[t["id"]] = run_test(iperf3, t, at, p["busy_retry"])
        th = threading.Thread(target=work)
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    out = []
    for t in tests:
        r = dict(results.get(t["id"]) or {"status": "error", "reason": "not run", "result": {}})
        r["id"] = t["id"]
        out.append(r)
    return {"status": "ok", "tests": out}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            role=dict(type="str", required=True, choices=["server", "client", "servers", "clients"]),
            listen=dict(type="list", elements="dict"),
            tests=dict(type="list", elements="dict"),
            busy_retry=dict(type="float", default=5.0),
            state=dict(type="str", default="started", choices=["started", "stopped"]),
            bind=dict(type="str"),
            port=dict(type="int", default=5201),
            pid=dict(type="int"),
            lifetime=dict(type="int", default=900),
            server=dict(type="str"),
            streams=dict(type="int", default=2),
            duration=dict(type="int", default=10),
            omit=dict(type="int", default=0),
            length=dict(type="str"),
            reverse=dict(type="bool", default=False),
            timeout=dict(type="int"),
            start_at=dict(type="float"),
            iperf3_path=dict(type="str"),
            fail_on_error=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    iperf3 = p["iperf3_path"] or module.get_bin_path("iperf3")
    if p["iperf3_path"] and not os.access(p["iperf3_path"], os.X_OK):
        iperf3 = None
    if p["role"] == "server":
        server(module, p, iperf3)
    if p["role"] == "servers":
        servers(module, p, iperf3)
    if p["role"] == "clients":
        module.exit_json(changed=False, **clients(module, p, iperf3))
    out = client(module, p, iperf3)
    if out["status"] == "error" and p["fail_on_error"]:
        module.fail_json(msg=out["reason"], **out)
    module.exit_json(changed=False, **out)


if __name__ == "__main__":
    main()
