"""pod_iperf, pod_fio and the report role, run by Ansible on localhost (iperf3 on 127.0.0.1 only, fio in a
temporary directory). Needs the Debian iperf3 and fio packages (scripts/setup.sh installs them)."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from inventory_util import ROOT

ANSIBLE = os.path.join(ROOT, ".venv", "bin", "ansible")
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="json",
           ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_FACT_CACHING="memory")
needs = pytest.mark.skipif(not (shutil.which("iperf3") and shutil.which("fio")), reason="iperf3/fio not installed")


def run_tasks(tmp_path, tasks):
    """Run module tasks in one playbook on localhost (one Ansible start-up); {task name: result}.
    Task i registers r<i>."""
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False,
             "tasks": [dict({t[0]: t[2]}, name=t[1], ignore_errors=True, check_mode=bool(t[3:] and t[3]),
                            register="r%d" % i) for i, t in enumerate(tasks)]}]
    path = tmp_path / "play.json"
    path.write_text(json.dumps(play))
    res = subprocess.run([PLAYBOOK, str(path)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    out = json.loads(res.stdout[res.stdout.index("{"):])
    return {t["task"]["name"]: t["hosts"]["localhost"] for t in out["plays"][0]["tasks"]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_HELD = []


def refused_port():
    """A port that refuses connections for the rest of the session: bound here and never listened on, so no
    other test (or xdist worker) can start a server on it - a port merely free a moment ago can be taken by the
    next iperf3 server, and the test expecting a refusal then finds a server."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return s.getsockname()[1]


def iperf_servers(port):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                args = fh.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"iperf3") for a in args) and b"-s" in args and str(port).encode() in args:
            with open("/proc/%s/stat" % pid) as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(pid))
    return found


@needs
def test_iperf_server_client_stop_and_errors(tmp_path):
    port, port2 = free_port(), free_port()
    srv = {"role": "server", "bind": "127.0.0.1", "port": port, "lifetime": 60}
    r = run_tasks(tmp_path, [
        ("pod_iperf", "start", srv),
        ("pod_iperf", "client", {"role": "client", "bind": "127.0.0.1", "server": "127.0.0.1", "port": port,
                                 "streams": 2, "duration": 1}),
        ("pod_iperf", "stop", {"role": "server", "state": "stopped", "port": port, "pid": "{{ r0.pid }}"}),
        ("pod_iperf", "start unused", dict(srv, port=port2)),
        ("pod_iperf", "stop by port", {"role": "server", "state": "stopped", "port": port2}),
        ("pod_iperf", "refused", {"role": "client", "server": "127.0.0.1", "port": port2, "duration": 1}),
        ("pod_iperf", "missing", {"role": "client", "server": "127.0.0.1", "iperf3_path": "/nonexistent/iperf3"}),
        ("pod_iperf", "dry", dict(srv, port=port2), True),
    ])
    assert r["start"]["status"] == "ok" and r["start"]["pid"]
    assert r["client"]["status"] == "ok", r["client"]
    assert r["client"]["result"]["received_bps"] > 1e8 and len(r["client"]["result"]["streams"]) == 2
    assert r["stop"]["status"] == "ok" and not iperf_servers(port)
    assert r["start unused"]["pid"] in r["stop by port"]["stopped"] and not iperf_servers(port2)
    assert r["refused"]["status"] == "error" and "Connection refused" in r["refused"]["reason"]
    assert not r["refused"].get("failed")
    assert r["missing"]["status"] == "error" and "not installed" in r["missing"]["reason"]
    assert r["dry"]["status"] == "skipped" and "-s" in r["dry"]["cmd"] and not iperf_servers(port2)


@needs
def test_iperf_servers_start_together_and_stop_together_and_a_held_port_is_named():
    """pod_iperf's start_servers/stop_all (role=servers): every server launched before one wait for all of them
    to listen (each round has servers of its own, perf/plan.round_ports); a port another program holds is an
    error naming it while the others start; a server left on a port is replaced; stop_all leaves none."""
    sys.path.insert(0, os.path.join(ROOT, "library"))
    import pod_iperf
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.cmd import iperf_server_argv
    ports = [free_port() for _ in range(4)]
    held = socket.socket()
    held.bind(("127.0.0.1", ports[3]))
    held.listen(1)
    specs = [(iperf_server_argv(shutil.which("iperf3"), "127.0.0.1", p, 60, shutil.which("timeout"), one_off=False),
              "127.0.0.1", p) for p in ports]
    try:
        res = pod_iperf.start_servers(specs)
        assert [r["status"] for r in res] == ["ok", "ok", "ok", "error"], res
        assert res[3]["reason"] == "port %d is already in use on this host" % ports[3]
        assert all(iperf_servers(p) for p in ports[:3])
        again = pod_iperf.start_servers(specs[:1])  # a server of an interrupted run on the port: replaced
        assert again[0]["status"] == "ok" and again[0]["pid"] != res[0]["pid"]
        stopped = pod_iperf.stop_all([(p, None) for p in ports[:3]])
        assert {again[0]["pid"], res[1]["pid"], res[2]["pid"]} <= set(stopped)  # and the iperf3 under each wrapper
        assert not any(iperf_servers(p) for p in ports)
    finally:
        held.close()
        pod_iperf.stop_all([(p, None) for p in ports])


def test_iperf_servers_and_clients_run_a_host_schedule(tmp_path):
    """role=servers starts servers that serve test after test; role=clients runs its tests at their offsets
    (two at once, then one on a server that already served a test); stopping leaves nothing."""
    a, b = free_port(), free_port()
    listen = [{"bind": "127.0.0.1", "port": a}, {"bind": "127.0.0.1", "port": b}]
    tests = [{"id": "r1:x", "server": "127.0.0.1", "port": a, "bind": "127.0.0.1", "offset": 0},
             {"id": "r1:y", "server": "127.0.0.1", "port": b, "bind": "127.0.0.1", "reverse": True, "offset": 0},
             {"id": "r2:x", "server": "127.0.0.1", "port": a, "bind": "127.0.0.1", "offset": 2.5},
             {"id": "r2:z", "server": "127.0.0.1", "port": refused_port(), "offset": 2.5}]
    r = run_tasks(tmp_path, [
        ("pod_iperf", "servers", {"role": "servers", "listen": listen, "lifetime": 60}),
        ("pod_iperf", "clients", {"role": "clients", "tests": tests, "duration": 1, "streams": 1,
                                  "start_at": "{{ now().timestamp() + 0.5 }}", "busy_retry": 0}),
        ("pod_iperf", "stop", {"role": "servers", "state": "stopped", "listen": "{{ r0.servers }}"}),
        ("pod_iperf", "dry", {"role": "clients", "tests": tests[:1]}, True),
    ])
    started = r["servers"]["servers"]
    assert [s["status"] for s in started] == ["ok", "ok"] and all(s["pid"] for s in started), started
    assert "-1" not in started[0]["cmd"]  # serves every round, not one test
    got = {t["id"]: t for t in r["clients"]["tests"]}
    assert [t["id"] for t in r["clients"]["tests"]] == ["r1:x", "r1:y", "r2:x", "r2:z"]
    assert all(got[i]["status"] == "ok" and got[i]["result"]["received_bps"] > 1e7 for i in ("r1:x", "r1:y", "r2:x"))
    assert "-R" in got["r1:y"]["cmd"] and "-R" not in got["r1:x"]["cmd"]
    assert got["r2:z"]["status"] == "error" and "Connection refused" in got["r2:z"]["reason"]
    # the two round-1 tests ran together, round 2 from its offset
    s1, s2 = (got[i]["started_at"] for i in ("r1:x", "r1:y"))
    assert abs(s1 - s2) < 1.0 and got["r2:x"]["started_at"] - s1 >= 1.0, got  # 2.5 s planned; late under load
    assert {s["pid"] for s in started} <= set(r["stop"]["stopped"])
    assert not iperf_servers(a) and not iperf_servers(b)
    assert r["dry"]["status"] == "skipped" and r["dry"]["tests"][0]["status"] == "skipped"


@needs
def test_fio_runs_parses_cleans_up_and_bounds_errors(tmp_path):
    dirs = [str(tmp_path / "m1"), str(tmp_path / "m2")]
    for d in dirs:
        os.mkdir(d)
    d = dirs[0]
    r = run_tasks(tmp_path, [
        ("pod_fio", "run", {"directories": dirs, "numjobs": 3, "size": "16MiB", "runtime": 1}),
        ("pod_fio", "missing", {"directories": [d, d + "/gone"], "numjobs": 2, "size": "8MiB", "runtime": 1}),
        ("pod_fio", "bad", {"directories": [d], "numjobs": 2, "size": "8MiB", "runtime": 1, "bs": "1000"}),
        ("pod_fio", "slow", {"directories": [d], "numjobs": 1, "size": "64MiB", "runtime": 60, "timeout": 3,
                             "layout": False}),
        ("pod_fio", "dry", {"directories": [d], "numjobs": 2}, True),
    ])
    res = r["run"]
    assert res["status"] == "ok", res
    assert res["result"]["aggregate"]["read"]["bw_bytes"] > 0 and len(res["result"]["jobs"]) == 3
    assert res["layout"]["aggregate"]["write"]["bw_bytes"] > 0
    assert [f["directory"] for f in res["files"]] == [dirs[0], dirs[1], dirs[0]]
    assert res["cleanup"] == "ok"
    assert r["missing"]["status"] == "error" and "/gone" in r["missing"]["reason"]
    assert r["bad"]["status"] == "error" and "error 22" in r["bad"]["reason"]
    assert r["slow"]["status"] == "error" and "did not finish within 3s" in r["slow"]["reason"]
    assert r["slow"]["seconds"] < 30
    assert r["dry"]["status"] == "skipped" and "rw=read" in r["dry"]["jobfiles"]["read"]
    assert all(os.listdir(x) == [] for x in dirs)  # nothing left behind, whatever happened



@needs
def test_fio_phases_layout_read_at_start_at_cleanup(tmp_path):
    host = socket.gethostname().split(".")[0]
    dirs = [str(tmp_path / "m1"), str(tmp_path / "m2")]
    for d in dirs:
        os.mkdir(d)
    sub = [d + "/sub" for d in dirs]
    failing = [d + "/failing" for d in dirs]
    stray = os.path.join(dirs[0], "mine.%s.notes" % host)  # not <prefix>.<host>.<n>: cleanup leaves it
    with open(stray, "w") as fh:
        fh.write("x")
    common = {"directories": dirs, "numjobs": 3, "size": "8MiB", "runtime": 1}
    r = run_tasks(tmp_path, [
        ("pod_fio", "layout", dict(common, phase="layout", prefix="waits")),
        ("ansible.builtin.set_fact", "t0", {"t0": "{{ now().timestamp() }}"}),
        ("pod_fio", "read waits", dict(common, phase="read", prefix="waits", start_at="{{ t0 | float + 2.5 }}")),
        ("ansible.builtin.set_fact", "t1", {"t1": "{{ now().timestamp() }}"}),
        ("pod_fio", "read without layout", dict(common, phase="read", prefix="nolayout")),
        ("pod_fio", "layout short", dict(common, phase="layout", prefix="short")),
        ("ansible.builtin.command", "truncate", {"argv": ["truncate", "-s", "1M",
                                                          os.path.join(dirs[1], "short.%s.1" % host)]}),
        ("pod_fio", "read short", dict(common, phase="read", prefix="short")),
        ("pod_fio", "layout late", dict(common, phase="layout", prefix="late")),
        ("pod_fio", "read late", dict(common, phase="read", prefix="late", start_at="{{ now().timestamp() - 10 }}")),
        ("pod_fio", "layout mine", dict(common, phase="layout", prefix="mine")),
        ("pod_fio", "layout other", dict(common, numjobs=2, phase="layout", prefix="other")),
        ("pod_fio", "cleanup mine", {"directories": dirs, "phase": "cleanup", "prefix": "mine"}),
        ("pod_fio", "cleanup again", {"directories": dirs + [dirs[0] + "/gone"], "phase": "cleanup",
                                      "prefix": "mine"}),
        # a successful read also removes its prefix's other job numbers (an interrupted run's), as cleanup would
        ("pod_fio", "layout leftovers", dict(common, phase="layout", prefix="lo")),
        ("ansible.builtin.copy", "an interrupted run's file", {"content": "x",
                                                              "dest": os.path.join(dirs[1], "lo.%s.7" % host)}),
        ("pod_fio", "read leftovers", dict(common, phase="read", prefix="lo")),
        ("pod_fio", "layout sub", dict(common, directories=sub, phase="layout", create_dirs=True)),
        ("pod_fio", "read sub", dict(common, directories=sub, phase="read", create_dirs=True)),
        # a failed layout leaves the directories: other nodes lay out into them at the same moment
        ("pod_fio", "layout fails", dict(common, directories=failing, phase="layout", create_dirs=True, bs="1000",
                                         prefix="f")),
        ("ansible.builtin.find", "left after the failed layout", {"paths": failing, "file_type": "any"}),
        ("ansible.builtin.stat", "failing dir", {"path": failing[1]}),
        ("pod_fio", "cleanup failing", {"directories": failing, "phase": "cleanup", "prefix": "f",
                                        "create_dirs": True}),
        ("pod_fio", "start_at misplaced", dict(common, phase="layout", start_at=1.0)),
        ("pod_fio", "dry read", dict(common, phase="read", start_at=1.0), True),
    ])
    lay = r["layout"]
    assert lay["status"] == "ok" and lay["phase"] == "layout", lay
    assert lay["layout"]["aggregate"]["write"]["bw_bytes"] > 0 and lay["result"] == {} and "cleanup" not in lay
    # the read: waited for start_at (2.5 s after t0; the read itself takes 1 s), then read and removed the files
    t0, t1 = float(r["t0"]["ansible_facts"]["t0"]), float(r["t1"]["ansible_facts"]["t1"])
    rd = r["read waits"]
    assert rd["status"] == "ok" and rd["cleanup"] == "ok", rd
    assert rd["result"]["aggregate"]["read"]["bw_bytes"] > 0 and len(rd["result"]["jobs"]) == 3
    assert t1 - t0 >= 3.5, (t0, t1)
    assert t0 + 2.49 <= rd["started_at"] < t0 + 3.5 and "late_by" not in rd, (t0, rd["started_at"])
    assert 0 < rd["start_slack"] <= 2.5  # what was left of the margin when the read was ready
    # files missing or short: an error naming the file, fio never lays them out
    no = r["read without layout"]
    assert no["status"] == "error" and os.path.join(dirs[0], "nolayout.%s.0" % host) in no["reason"], no
    assert "missing" in no["reason"] and no["result"] == {} and "started_at" not in no
    short = r["read short"]
    assert short["status"] == "error" and "short.%s.1 has 1048576 bytes, not 8388608" % host in short["reason"]
    assert "started_at" not in short and short["cleanup"] == "ok"
    late = r["read late"]
    assert late["status"] == "ok" and 9.5 <= late["late_by"] < 30 and late["start_slack"] <= -9.5, late
    # cleanup: only its own prefix (any job number), nothing to remove is fine, a missing directory too
    mine = r["cleanup mine"]
    assert mine["status"] == "ok" and mine["changed"], mine
    assert sorted(mine["removed"]) == sorted(os.path.join(dirs[i % 2], "mine.%s.%d" % (host, i)) for i in range(3))
    again = r["cleanup again"]
    assert again["status"] == "ok" and again["removed"] == [] and not again["changed"], again
    assert sorted(os.listdir(dirs[0])) == sorted(["mine.%s.notes" % host, "other.%s.0" % host])
    assert sorted(os.listdir(dirs[1])) == ["other.%s.1" % host]
    assert r["read leftovers"]["status"] == "ok" and r["read leftovers"]["cleanup"] == "ok", r["read leftovers"]
    assert not any(n.startswith("lo.") for d in dirs for n in os.listdir(d))
    # create_dirs: the layout makes and keeps the directories, the read removes files and directories
    assert r["layout sub"]["status"] == "ok" and r["read sub"]["status"] == "ok", r["read sub"]
    assert not any(os.path.exists(d) for d in sub)
    assert r["layout fails"]["status"] == "error" and "error 22" in r["layout fails"]["reason"], r["layout fails"]
    assert r["left after the failed layout"]["matched"] == 0 and r["failing dir"]["stat"]["isdir"]  # no file, the dir
    assert r["cleanup failing"]["status"] == "ok" and not any(os.path.exists(d) for d in failing)
    assert r["start_at misplaced"].get("failed") and "phase=read" in r["start_at misplaced"]["msg"]
    dry = r["dry read"]
    assert dry["status"] == "skipped" and list(dry["jobfiles"]) == ["read"] and "rw=read" in dry["jobfiles"]["read"]


@needs
def test_fio_keep_and_reuse_write_a_node_s_files_once_across_steps(tmp_path):
    """A read with keep leaves the files; a layout with reuse then writes nothing; a short file lays every file
    out again; a read without keep removes them; both options refuse buffered I/O and the wrong phase."""
    host = socket.gethostname().split(".")[0]
    dirs = [str(tmp_path / "m1"), str(tmp_path / "m2")]
    for d in dirs:
        os.mkdir(d)
    common = {"directories": dirs, "numjobs": 2, "size": "8MiB", "runtime": 1, "prefix": "k"}
    files = [os.path.join(dirs[i % 2], "k.%s.%d" % (host, i)) for i in range(2)]
    r = run_tasks(tmp_path, [
        ("pod_fio", "reuse with nothing there", dict(common, phase="layout", reuse=True)),
        ("pod_fio", "read keep", dict(common, phase="read", keep=True)),
        ("ansible.builtin.stat", "kept file", {"path": files[1]}),
        ("pod_fio", "reuse", dict(common, phase="layout", reuse=True)),
        ("pod_fio", "read keep again", dict(common, phase="read", keep=True)),
        ("ansible.builtin.command", "truncate", {"argv": ["truncate", "-s", "1M", files[0]]}),
        ("pod_fio", "reuse a short file", dict(common, phase="layout", reuse=True)),
        ("pod_fio", "last read", dict(common, phase="read")),
        ("pod_fio", "keep buffered", dict(common, phase="read", keep=True, direct=False)),
        ("pod_fio", "reuse buffered", dict(common, phase="layout", reuse=True, direct=False)),
        ("pod_fio", "keep on a layout", dict(common, phase="layout", keep=True)),
        ("pod_fio", "reuse on a read", dict(common, phase="read", reuse=True)),
    ])
    first = r["reuse with nothing there"]
    assert first["status"] == "ok" and first["reused"] is False and first["changed"], first
    assert first["layout"]["aggregate"]["write"]["bw_bytes"] > 0
    keep = r["read keep"]
    assert keep["status"] == "ok" and keep["kept"] is True and "cleanup" not in keep, keep
    assert keep["result"]["aggregate"]["read"]["bw_bytes"] > 0
    assert r["kept file"]["stat"]["exists"] and r["kept file"]["stat"]["size"] == 8 * 2 ** 20
    again = r["reuse"]
    assert again["status"] == "ok" and again["reused"] is True and not again["changed"], again
    assert "layout" not in again and again["result"] == {}
    assert r["read keep again"]["status"] == "ok" and r["read keep again"]["kept"] is True
    short = r["reuse a short file"]
    assert short["status"] == "ok" and short["reused"] is False and short["changed"], short
    assert short["layout"]["aggregate"]["write"]["bw_bytes"] > 0
    last = r["last read"]
    assert last["status"] == "ok" and last["cleanup"] == "ok" and "kept" not in last, last
    assert all(os.listdir(d) == [] for d in dirs)
    for name in ("keep buffered", "reuse buffered"):
        assert r[name].get("failed") and "page cache" in r[name]["msg"], r[name]
    assert r["keep on a layout"].get("failed") and "phase=read" in r["keep on a layout"]["msg"]
    assert r["reuse on a read"].get("failed") and "phase=layout" in r["reuse on a read"]["msg"]


@needs
def test_fio_step_reads_together_after_the_layout_barrier(tmp_path):
    """roles/pod_perf/tasks/fio_step.yml on three 'nodes' that are this machine (connection local, a temporary
    directory per data mount): the reads start at one moment, a failed layout is recorded and not read,
    nothing is left."""
    mnt = tmp_path / "mnt"
    for i in (1, 2):
        os.makedirs(str(mnt) + str(i))
    inventory = {"all": {"vars": {"ansible_connection": "local",
                                  "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                                  "pod": {"storage": {"data_mounts": 2, "data_mount_prefix": str(mnt)}}},
                         "hosts": {"n1": {}, "n2": {}, "n3": {}, "localhost": {}}}}
    (tmp_path / "inv.json").write_text(json.dumps(inventory))
    # as validate_perf.yml runs it: the plan's facts on localhost, the steps on the nodes (one task per phase on
    # all of them at once), the record read back from localhost
    play = [{"hosts": "localhost", "gather_facts": False,
             "tasks": [{"ansible.builtin.set_fact": {
                 "pod_perf_steps": [["n1"], ["n1", "n2", "n3"]], "pod_perf_fio_seconds": 40,
                 "pod_perf_run": {"fio": {"size": "16MiB", "runtime": 2}},
                 # 0 jobs: fio refuses the layout ("No job(s) defined") - a node whose layout failed
                 "pod_perf_ctx": {"nodes": {"n1": {"gpus": 2}, "n2": {"gpus": 3}, "n3": {"gpus": 0}}},
                 "pod_perf_fio_steps": []}}]},
            {"hosts": "n1,n2,n3", "gather_facts": False, "strategy": "linear",  # as validate_perf.yml (async)
             "tasks": [{"ansible.builtin.import_role": {"name": "pod_perf", "tasks_from": "fio"}}]},
            {"hosts": "localhost", "gather_facts": False,
             "tasks": [{"ansible.builtin.copy": {"content": "{{ pod_perf_fio_steps | to_json }}",
                                                 "dest": str(tmp_path / "steps.json")}}]}]
    (tmp_path / "play.json").write_text(json.dumps(play))
    res = subprocess.run([PLAYBOOK, "-i", str(tmp_path / "inv.json"), str(tmp_path / "play.json")], cwd=ROOT,
                         env=dict(ENV, ANSIBLE_STDOUT_CALLBACK="default"), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    first, step = json.loads((tmp_path / "steps.json").read_text())
    assert first["nodes"] == ["n1"] and list(first["results"]) == ["n1"] and first["results"]["n1"]["status"] == "ok"
    # n1 reads again in step 2: its read kept the files, and step 2 did not lay them out again
    assert first["results"]["n1"]["kept"] is True and first["results"]["n1"]["layout"]["aggregate"]["write"]
    got = step["results"]
    assert step["nodes"] == ["n1", "n2", "n3"]
    assert got["n1"]["layout_reused"] is True and got["n1"]["layout"] == {}
    assert got["n2"]["layout"]["aggregate"]["write"]["bw_bytes"] > 0 and "layout_reused" not in got["n2"]
    for h, jobs in (("n1", 2), ("n2", 3)):
        assert got[h]["status"] == "ok", got[h]
        assert len(got[h]["result"]["jobs"]) == jobs and got[h]["result"]["aggregate"]["read"]["bw_bytes"] > 0
        assert got[h]["cleanup"] == "ok" and "kept" not in got[h]  # the last step removes them
        assert step["start_at"] - 0.01 <= got[h]["started_at"] < step["start_at"] + 1.5 and got[h]["late_by"] is None
    assert abs(got["n1"]["started_at"] - got["n2"]["started_at"]) < 1.0
    assert got["n3"]["status"] == "error" and got["n3"]["reason"].startswith("layout: fio layout phase"), got["n3"]
    assert "started_at" not in got["n3"] and got["n3"]["result"] == {}
    assert re.search(r"TASK \[pod_perf : Read on every node[^\n]*\n(?:(?!TASK).*\n)*skipping: \[n3\]", res.stdout)
    assert "reading together from" in res.stdout
    # every node laid out its files once before step 1; a step lays out only where files are missing (n3, whose
    # layout failed before the steps) - n1 and n2 skip the step's layout and its barrier
    def ran_on(task):
        blocks = re.findall(r"TASK \[pod_perf : %s\][^\n]*\n((?:(?!TASK ).*\n)*)" % re.escape(task), res.stdout)
        return [sorted(re.findall(r"^(?:ok|changed): \[(\w+)\]", b, re.M)) for b in blocks]
    assert ran_on("Lay out the files of every node of any step once, all nodes at once (each step then only "
                  "reads)") == [["n1", "n2", "n3"]]
    assert ran_on("Lay out the files on every node of the step, all nodes at once") == [[], ["n3"]]
    # the clean-up task only where a read did not succeed: n1 kept its files in step 1, n1 and n2 removed them
    assert ran_on("Remove what the step left on every node (files of this prefix, empty test directories)") == [
        [], ["n3"]]
    assert sorted(os.listdir(str(mnt) + "1")) == [] and sorted(os.listdir(str(mnt) + "2")) == []


def test_report_role_writes_five_files(tmp_path):
    sample = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "unit", "perf_sample.py")], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT),
                            capture_output=True, text=True, check=True)
    (tmp_path / "perf.json").write_text(sample.stdout)
    env = dict(ENV, ANSIBLE_STDOUT_CALLBACK="default")
    res = subprocess.run([PLAYBOOK, "playbooks/report.yml", "-e", "pod_report_dir=%s" % tmp_path,
                          "-e", "@%s" % (tmp_path / "perf.json")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=180)
    assert res.returncode != 0  # no host ran its checks here, and the sample holds a slow NIC
    assert "SIMULATED POD" in res.stdout
    run = tmp_path / "pod-in-a-box" / "latest"
    assert sorted(os.listdir(run)) == ["junit.xml", "metrics.prom", "report.html", "report.md", "results.json"]
    results = json.loads((run / "results.json").read_text())
    assert results["schema_version"] == 5 and results["summary"]["fail"] == 3
    assert ET.parse(str(run / "junit.xml")).getroot().get("failures") == "3"
    assert (run / "report.md").read_text().startswith("**SIMULATED POD")
    # the closing message lists the findings first (the pod index came from the inventory), then the checks
    slow = next(f for f in results["findings"] if f["subject"] == "sim-dgx3 enp12s0")
    assert sorted(e["host"] for e in slow["explains"]) == ["sim-dgx3<->sim-dgx1", "sim-dgx3<->sim-dgx2",
                                                           "sim-dgx4<->sim-dgx3"]
    # the closing message: the counts, then one line per finding (the checks are in the report)
    msg = res.stdout[res.stdout.index("finding(s) - 3 check(s) failed"):]
    assert msg.index("F1 [") < msg.index("sim-dgx3 enp12s0 is low in 3 performance")
    assert "[iperf_relative sim-dgx3<->" not in res.stdout


def fake_tool(path, version, output):
    """An executable that answers --version and otherwise prints ``output`` (a cut-off report) and exits 0."""
    path.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo '%s'; exit 0; fi\ncat <<'EOT'\n%sEOT\n"
                    % (version, output))
    path.chmod(0o755)
    return str(path)


def test_unreadable_iperf3_and_fio_output_is_an_error_naming_node_and_version(tmp_path):
    with open(os.path.join(ROOT, "tests", "unit", "fixtures", "perf", "iperf3-3.12-debian-udp.json")) as fh:
        iperf_cut = fh.read()[:1500] + "\n"
    with open(os.path.join(ROOT, "tests", "unit", "fixtures", "perf", "fio-3.33-debian-status-interval.json")) as fh:
        fio_text = fh.read()
    fio_cut = fio_text[:fio_text.rindex('\n{\n') + 1500] + "\n"  # three reports, then the final one cut off
    iperf3 = fake_tool(tmp_path / "iperf3", "iperf 3.17.1 (cJSON 1.7.15)", iperf_cut)
    fio = fake_tool(tmp_path / "fio", "fio-3.38", fio_cut)
    d = tmp_path / "m1"
    d.mkdir()
    r = run_tasks(tmp_path, [
        ("pod_iperf", "client", {"role": "client", "server": "127.0.0.1", "port": refused_port(), "duration": 1,
                                 "iperf3_path": iperf3}),
        ("pod_fio", "fio", {"directories": [str(d)], "numjobs": 1, "size": "8MiB", "runtime": 1, "fio_path": fio,
                            "layout": False}),
    ])
    node = socket.gethostname().split(".")[0]
    c = r["client"]
    assert c["status"] == "error" and c["result"] == {} and not c.get("failed"), c
    assert c["reason"].startswith(node + ": iperf3") and "(iperf 3.17.1 (cJSON 1.7.15), exit 0)" in c["reason"]
    assert "is cut off" in c["reason"]
    f = r["fio"]
    assert f["status"] == "error" and "fio (fio-3.38) read phase output cannot be read" in f["reason"], f
    assert node + ":" in f["reason"] and "cut off" in f["reason"] and f["result"]["jobs"] == []
