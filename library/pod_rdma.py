#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: this host's part of the RDMA stage's perftest schedule (ib_write_bw, then ib_write_lat, per rail)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_rdma
short_description: Run this host's perftest runs (RDMA bandwidth and latency per rail) of the whole RDMA schedule
description:
  - Runs every perftest run this host takes part in (I(tests), this host's part of the plan made by
    module_utils/network/rdma_plan.py), each at I(start_at) + its C(offset), each in a thread of its own. Every
    DGX launches its part at the same moment (one task per host for the whole schedule), so all pairs of a round
    run at once and a round costs its runs' duration, not one SSH launch per run.
  - A run is a perftest server (C(side=server), started with the one runner's C(start_tool); it serves one client
    and exits) or client (C(side=client), started C(CLIENT_DELAY_S) later and given the server's address). Tool
    C(bw) is C(ib_write_bw -d <hca> -p <port> -D <bw_duration> -s <bw_size> -q <qps> --report_gbits -F), tool
    C(lat) is I(latency_tool) (C(ib_write_lat) or C(ib_read_lat)) C(-d <hca> -p <port> -n <lat_iterations> -s
    <lat_size> -F). On RoCE (C(link_layer=ethernet)) C(-x <GID index>) is the RoCE v2 GID that carries the NIC's
    modelled address, read from sysfs under I(sysfs_root) (module_utils/network/hw_parsers.py, as the NCCL
    environment's C(NCCL_IB_GID_INDEX) is); I(gid_index) overrides it. C(--use_cuda=<cuda_device>) only with
    I(use_cuda) (GPUDirect RDMA - the peer-memory module must be loaded; off by default).
  - Each run's output (stdout and stderr together) is parsed (module_utils/network/perftest_parse.py). A run whose
    perftest reported a failure (C(Couldn't connect to ...), C(Failed to modify QP ... to RTR), C(Unable to Connect
    the HCA's through the link), a completion error) is C(status=failed) with perftest's words as C(reason) - the RDMA
    path is broken, that is the measurement. A client whose server does not listen yet retries for I(connect_retry)
    seconds. A missing tool, a time-out or output that cannot be read is C(status=error).
  - Returns readings only; the report decides (module_utils/network/rdma_eval.py).
  - Check mode runs nothing and returns the commands that would run.
version_added: "0.9.0"
options:
  tests:
    description:
      - This host's runs, each C({id, tool (bw|lat), side (server|client), hca, port, address, peer, peer_address,
        link_layer (ethernet|infiniband), offset}); C(offset) is seconds after I(start_at). A client connects to
        C(peer_address).
    type: list
    elements: dict
    required: true
  start_at:
    description: Wall-clock time (seconds since the epoch) the schedule starts at (default - now). At most 600 s of
      waiting; hosts need synchronised clocks (NTP).
    type: float
  bw_duration:
    description: Seconds of each bandwidth run (perftest C(-D); perftest measures between margins of a quarter of it).
    type: int
    default: 5
  bw_size:
    description: Message size of the bandwidth run in bytes (C(-s)).
    type: int
    default: 65536
  qps:
    description: Queue pairs of the bandwidth run (C(-q)).
    type: int
    default: 1
  lat_iterations:
    description: Iterations of the latency run (C(-n)).
    type: int
    default: 1000
  lat_size:
    description: Message size of the latency run in bytes (C(-s)).
    type: int
    default: 2
  latency_tool:
    description: The latency tool.
    type: str
    choices: [ib_write_lat, ib_read_lat]
    default: ib_write_lat
  use_cuda:
    description: Run with GPU memory (C(--use_cuda=<cuda_device>), GPUDirect RDMA). Only where the peer-memory module
      (nvidia_peermem / nv_peer_mem) is loaded.
    type: bool
    default: false
  cuda_device:
    description: The CUDA device of C(--use_cuda).
    type: int
    default: 0
  gid_index:
    description: The GID index (C(-x)) of every RoCE run (default - resolved per HCA from sysfs).
    type: int
  sysfs_root:
    description: Directory that holds the C(sys/) tree the RoCE v2 GID index is read from (C(/) on real hosts; the
      simulator's inventory points it at its stand-in tree, C(dgx_network_sysfs_root)).
    type: path
    default: /
  perftest_dir:
    description: Directory of the perftest binaries (default - found in PATH).
    type: path
  connect_retry:
    description: Seconds a client retries while its server does not listen yet.
    type: float
    default: 5.0
  timeout:
    description: Seconds a run may take beyond its own length before it is killed.
    type: int
    default: 30
notes:
  - Supports check mode - nothing is started; each run's C(cmd) shows what would run.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: This host's part of the RDMA schedule
  pod_rdma:
    tests: "{{ hostvars['localhost'].pod_rdma_parts[inventory_hostname].tests }}"
    start_at: "{{ hostvars['localhost'].pod_rdma_t0 }}"
    bw_duration: 5
    sysfs_root: "{{ dgx_network_sysfs_root | default('/') }}"
  async: 600
  poll: 0
  register: rdma_job
"""

RETURN = r"""
tests:
  description:
    - Per run its C(id), C(tool), C(side), C(status) (C(ok), C(failed) - perftest reported a failure -, C(error),
      C(skipped) in check mode), C(reason), C(result) (perftest_parse.parse_perftest's dict, or C({})), C(cmd),
      C(gid_index), C(started_at) (epoch seconds) and C(late_by) (seconds after its planned start, when over 2).
  returned: always
  type: list
  elements: dict
status:
  description: C(ok) (every run reported), or C(skipped) in check mode.
  returned: always
  type: str
"""

import os
import socket
import threading
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool, start_tool
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers import (GidResolutionError,
    resolve_roce_v2_gid_index)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.perftest_parse import parse_perftest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.rdma_plan import CLIENT_DELAY_S

BW_TOOL = "ib_write_bw"
# the words perftest's client prints while its server does not listen yet (perftest_communication.c)
NOT_LISTENING = ("Couldn't connect to", "Unable to open file descriptor for socket connection")


def perftest_argv(tool, run, p, gid_index):
    """The perftest command line of one run (``tool``: the binary's path)."""
    argv = [tool, "-d", str(run["hca"]), "-p", str(int(run["port"]))]
    if run["tool"] == "bw":
        argv += ["-D", str(p["bw_duration"]), "-s", str(p["bw_size"]), "-q", str(p["qps"]), "--report_gbits"]
    else:
        argv += ["-n", str(p["lat_iterations"]), "-s", str(p["lat_size"])]
    argv.append("-F")  # do not fail on a CPU frequency warning (perftest's --CPU-freq)
    if gid_index is not None:
        argv += ["-x", str(gid_index)]
    if p["use_cuda"]:
        argv.append("--use_cuda=%d" % p["cuda_device"])
    if run["side"] == "client":
        argv.append(str(run["peer_address"]))
    return argv


def run_seconds(run, p):
    """How long a run may take: its own length (a server also waits for its client) plus the time-out margin."""
    own = p["bw_duration"] if run["tool"] == "bw" else max(1.0, p["lat_iterations"] / 1000.0)
    return own + CLIENT_DELAY_S + p["connect_retry"] + p["timeout"]


def gid_for(run, p, cache):
    """(GID index or None, error or None) of a run: none on InfiniBand; the option, else the RoCE v2 GID of the run's
    own address on its HCA (sysfs)."""
    if run.get("link_layer") == "infiniband":
        return None, None
    if p["gid_index"] is not None:
        return p["gid_index"], None
    key = (run["hca"], run.get("address"))
    if key not in cache:
        try:
            cache[key] = (resolve_roce_v2_gid_index(p["sysfs_root"], run["hca"], run.get("address")), None)
        except GidResolutionError as exc:
            cache[key] = (None, "no RoCE v2 GID for %s on %s: %s" % (run.get("address"), run["hca"], exc))
    return cache[key]


def judge(text, rc, run, host):
    """(status, reason, parsed) of one run's output: ok, failed (perftest's own words), or error (unreadable)."""
    try:
        parsed = parse_perftest(text)
    except ParseError as exc:
        return "error", "%s: %s %s of %s printed output that cannot be read (exit %s): %s" % (
            host, run["tool"], run["side"], run["id"], rc, exc), {}
    if parsed["errors"]:
        words = "; ".join(dict.fromkeys(e["text"] for e in parsed["errors"]))
        return "failed", "perftest: %s" % words, parsed
    if not parsed["ok"]:
        return "error", "%s: %s %s of %s ended without a result (exit %s)" % (
            host, run["tool"], run["side"], run["id"], rc), parsed
    return "ok", None, parsed


def not_listening(text):
    return any(w in (text or "") for w in NOT_LISTENING)


def run_one(run, p, tools, at, gid_cache, host):
    """One run at ``at`` (epoch seconds): a server started and waited for, or a client retried while its server
    does not listen yet. Returns the run's result entry."""
    path = tools.get("bw" if run["tool"] == "bw" else "lat")
    gid, gid_error = gid_for(run, p, gid_cache)
    argv = perftest_argv(path or (BW_TOOL if run["tool"] == "bw" else p["latency_tool"]), run, p, gid)
    out = {"id": run["id"], "tool": run["tool"], "side": run["side"], "cmd": argv, "gid_index": gid, "result": {}}
    if not path:
        out.update(status="error", reason="%s is not installed on %s" % (os.path.basename(argv[0]), host))
        return out
    if gid_error:
        out.update(status="error", reason=gid_error)
        return out
    time.sleep(max(0.0, min(600.0, at - time.time())))
    began = time.time()
    limit = run_seconds(run, p)
    if run["side"] == "server":
        res = start_tool(argv, merge_stderr=True).finish(limit)
    else:
        give_up = began + p["connect_retry"]
        while True:
            res = run_tool(argv, limit, merge_stderr=True)
            if res.timed_out or not not_listening(res.stdout) or time.time() >= give_up:
                break
            time.sleep(0.2)
    out["started_at"] = round(began, 3)
    if began - at > 2:
        out["late_by"] = round(began - at, 1)
    if res.timed_out:
        out.update(status="error", reason="%s: %s %s of %s did not finish in %ds" % (
            host, run["tool"], run["side"], run["id"], limit), output=(res.stdout or "")[-2000:])
        return out
    if res.error:
        out.update(status="error", reason="%s: %s" % (host, res.error))
        return out
    status, reason, parsed = judge(res.stdout, res.rc, run, host)
    out.update(status=status, reason=reason, result=parsed)
    if status != "ok":
        out["output"] = (res.stdout or "")[-2000:]
    return out


def validate_tests(module, tests):
    need = ("id", "tool", "side", "hca", "port", "offset")
    out = []
    for t in tests or []:
        if not isinstance(t, dict) or any(t.get(k) is None for k in need) or t.get("tool") not in ("bw", "lat") \
                or t.get("side") not in ("server", "client") \
                or (t.get("side") == "client" and not t.get("peer_address")):
            module.fail_json(msg="tests entries need id, tool (bw|lat), side (server|client), hca, port, offset and, "
                                 "for a client, peer_address: %r" % (t,))
        out.append(dict(t, offset=float(t["offset"])))
    return out


def find_tools(module, p):
    """{"bw": path or None, "lat": path or None}."""
    out = {}
    for key, name in (("bw", BW_TOOL), ("lat", p["latency_tool"])):
        if p["perftest_dir"]:
            path = os.path.join(p["perftest_dir"], name)
            out[key] = path if os.access(path, os.X_OK) else None
        else:
            out[key] = module.get_bin_path(name)
    return out


def run_all(tests, p, tools, host):
    """Every run in a thread of its own, each waiting for its own start; results in the order of ``tests``."""
    base = p["start_at"] or time.time()
    results = {}
    gid_cache = {}
    threads = []
    for i, run in enumerate(tests):
        def work(i=i, run=run):
            try:
                results[i] = run_one(run, p, tools, base + run["offset"], gid_cache, host)
            except Exception as exc:  # noqa: BLE001 - one run's crash is that run's error, never the others'
                results[i] = {"id": run["id"], "tool": run["tool"], "side": run["side"], "status": "error",
                              "reason": "%s: %s: %s" % (host, type(exc).__name__, exc), "result": {}}
        th = threading.Thread(target=work)
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    return [results[i] for i in range(len(tests))]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tests=dict(type="list", elements="dict", required=True),
            start_at=dict(type="float"),
            bw_duration=dict(type="int", default=5),
            bw_size=dict(type="int", default=65536),
            qps=dict(type="int", default=1),
            lat_iterations=dict(type="int", default=1000),
            lat_size=dict(type="int", default=2),
            latency_tool=dict(type="str", default="ib_write_lat", choices=["ib_write_lat", "ib_read_lat"]),
            use_cuda=dict(type="bool", default=False),
            cuda_device=dict(type="int", default=0),
            gid_index=dict(type="int"),
            sysfs_root=dict(type="path", default="/"),
            perftest_dir=dict(type="path"),
            connect_retry=dict(type="float", default=5.0),
            timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    p = module.params
    tests = validate_tests(module, p["tests"])
    tools = find_tools(module, p)
    host = socket.gethostname().split(".")[0]
    if module.check_mode:
        module.exit_json(changed=False, status="skipped", tests=[
            {"id": t["id"], "tool": t["tool"], "side": t["side"], "status": "skipped", "result": {},
             "cmd": perftest_argv(tools.get(t["tool"]) or (BW_TOOL if t["tool"] == "bw" else p["latency_tool"]),
                                  t, p, p["gid_index"])} for t in tests])
    module.exit_json(changed=False, status="ok", tests=run_all(tests, p, tools, host))


if __name__ == "__main__":
    main()
