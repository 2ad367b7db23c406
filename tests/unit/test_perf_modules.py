"""pod_iperf, pod_fio and the report role, run by Ansible on localhost (iperf3 on 127.0.0.1 only, fio in a
temporary directory). Needs the Debian iperf3 and fio packages (scripts/setup.sh installs them)."""
from __future__ import annotations

import json
import os
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


def test_report_role_writes_four_files(tmp_path):
    sample = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "unit", "perf_sample.py")], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "module_utils")),
                            capture_output=True, text=True, check=True)
    (tmp_path / "perf.json").write_text(sample.stdout)
    env = dict(ENV, ANSIBLE_STDOUT_CALLBACK="default")
    res = subprocess.run([PLAYBOOK, "playbooks/report.yml", "-e", "pod_report_dir=%s" % tmp_path,
                          "-e", "@%s" % (tmp_path / "perf.json")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=180)
    assert res.returncode != 0  # no host ran its checks here, and the sample holds a slow NIC
    assert "SIMULATED POD" in res.stdout and "[iperf_relative sim-dgx3<->" in res.stdout
    run = tmp_path / "pod-in-a-box" / "latest"
    assert sorted(os.listdir(run)) == ["junit.xml", "report.html", "report.md", "results.json"]
    results = json.loads((run / "results.json").read_text())
    assert results["schema_version"] == 2 and results["summary"]["fail"] == 3
    assert ET.parse(str(run / "junit.xml")).getroot().get("failures") == "3"
    assert (run / "report.md").read_text().startswith("**SIMULATED POD")
