#!/usr/bin/env python3
"""Side by side on the pod-in-a-box: the pod_iperf / pod_fio modules against iperf3 / fio run by hand
with the same parameters, in the same run (issue 7: "within 10%"; results in docs/validation.md).

    sim/podsim up && ansible-playbook site.yml     # a deployed simulator (the NFS data mounts exist)
    scripts/compare_by_hand.py [--rounds 3] [--iperf-seconds 10] [--fio-seconds 10] [--json out.json]

Module and hand runs alternate (module, hand, hand, module, module, hand, ...) so a change of load on
the shared machine hits both and neither always goes first; the medians are compared. The module runs go
through Ansible (`ansible -m`, over SSH like validate.yml); the hand runs are the plain tools inside the
nodes (`podsim exec`), read with json.load here - not with the toolkit's parsers, so a parser error
would show as a difference.
  iperf3: sim-dgx1 -> sim-dgx2 on their first data fabric, -P/-l from the quick profile, -t given here.
  fio:    sim-dgx1, the RA job (rw=read bs=1024KiB libaio direct=1 iodepth=32, 8 jobs of 128MiB, one
          file per job spread over the node's data mounts), layout written first, read phase measured.
  nccl:   sim-dgx1 + sim-dgx2, 2 ranks each, the nccl-tests CPU stand-in (all_reduce 1..8 MiB): pod_nccl
          against mpirun typed by hand in sim-dgx1's container (same MCA flags, same -x NCCL_* from
          /etc/dgxpod/nccl.env); compared: the plateau busbw (median of the 3 largest sizes' best busbw).
Exit 1 when a median differs by more than --tolerance (default 10%), 2 when something could not run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODSIM = os.path.join(ROOT, "sim", "podsim")
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
CLIENT, SERVER, FIO_NODE = "sim-dgx1", "sim-dgx2", "sim-dgx1"
STREAMS, LENGTH = 2, "65536"
FIO = {"bs": "1024KiB", "iodepth": 32, "numjobs": 8, "size": "128MiB"}


class Failed(Exception):
    pass


def env() -> Dict[str, str]:
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                PATH=VENV_BIN + ":" + os.environ["PATH"])


def module(host: str, name: str, args: Dict[str, Any], timeout: int = 600) -> Dict[str, Any]:
    """Run one module on one host through Ansible; its result dict."""
    p = subprocess.run(["ansible", host, "-m", name, "-a", json.dumps(args)], cwd=ROOT, env=env(),
                       capture_output=True, text=True, timeout=timeout)
    try:
        res = json.loads(p.stdout)["plays"][0]["tasks"][0]["hosts"][host]
    except (ValueError, KeyError, IndexError):
        raise Failed("ansible %s -m %s: %s %s" % (host, name, p.stdout[-800:], p.stderr[-800:])) from None
    if res.get("failed") or res.get("unreachable"):
        raise Failed("%s on %s: %s" % (name, host, res.get("msg")))
    return res


def in_node(node: str, argv: List[str], timeout: int = 600) -> str:
    p = subprocess.run([PODSIM, "exec", node, "--"] + argv, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Failed("%s: %s: rc %d: %s" % (node, " ".join(argv), p.returncode, (p.stderr or p.stdout)[-800:]))
    return p.stdout


def inventory_host(host: str) -> Dict[str, Any]:
    p = subprocess.run(["ansible-inventory", "--host", host], cwd=ROOT, env=env(), capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)


def data_address(host: str, fabric: str) -> str:
    return next(n["address"] for n in inventory_host(host)["nics"] if n["fabric"] == fabric)


# ------------------------------------------------------------------------------------------ iperf3

def iperf_module(server_addr: str, client_addr: str, seconds: int, port: int) -> float:
    srv = module(SERVER, "pod_iperf", {"role": "server", "bind": server_addr, "port": port, "lifetime": 120})
    try:
        res = module(CLIENT, "pod_iperf", {"role": "client", "server": server_addr, "bind": client_addr,
                                           "port": port, "streams": STREAMS, "duration": seconds,
                                           "length": LENGTH})
    finally:
        module(SERVER, "pod_iperf", {"role": "server", "state": "stopped", "pid": srv.get("pid"), "port": port})
    if res.get("status") != "ok":
        raise Failed("pod_iperf: %s" % res.get("reason"))
    return res["result"]["received_bps"] / 1e9


def iperf_hand(server_addr: str, client_addr: str, seconds: int, port: int) -> float:
    server = subprocess.Popen([PODSIM, "exec", SERVER, "--", "timeout", "120", "iperf3", "-s", "-1", "-B",
                               server_addr, "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # until it listens
            if ":%d " % port in in_node(SERVER, ["ss", "-ltnH"]):
                break
            time.sleep(0.1)
        out = in_node(CLIENT, ["iperf3", "-c", server_addr, "-B", client_addr, "-p", str(port), "-P", str(STREAMS),
                               "-t", str(seconds), "-l", LENGTH, "-J"], timeout=seconds + 60)
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9


# ------------------------------------------------------------------------------------------ fio

def data_mounts(node: str) -> List[str]:
    text = in_node(node, ["cat", "/etc/dgxpod/data-mounts"])
    mounts = [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if not mounts:
        raise Failed("%s has no data mounts (/etc/dgxpod/data-mounts): deploy first" % node)
    return mounts


def fio_module(mounts: List[str], seconds: int) -> float:
    res = module(FIO_NODE, "pod_fio", {"directories": [m + "/cmp-module" for m in mounts], "create_dirs": True,
                                       "runtime": seconds, "ramp_time": 0, "layout": True, **FIO}, timeout=900)
    if res.get("status") != "ok":
        raise Failed("pod_fio: %s" % res.get("reason"))
    return res["result"]["aggregate"]["read"]["bw_bytes"] / 1e6


def fio_hand(mounts: List[str], seconds: int) -> float:
    dirs = [m + "/cmp-hand" for m in mounts]
    common = ("[global]\nbs={bs}\nioengine=libaio\ndirect=1\niodepth={iodepth}\nsize={size}\nkb_base=1000\n"
              .format(**FIO))
    jobs = "".join("[j%d]\nfilename=%s/hand.%d\n" % (i, dirs[i % len(dirs)], i) for i in range(FIO["numjobs"]))
    with tempfile.TemporaryDirectory(prefix="cmp-fio-", dir="/tmp") as tmp:  # /tmp is shared with the nodes
        with open(os.path.join(tmp, "layout.fio"), "w") as fh:
            fh.write(common + "rw=write\n" + jobs)
        with open(os.path.join(tmp, "read.fio"), "w") as fh:
            fh.write(common + "rw=read\ntime_based\nruntime=%d\n" % seconds + jobs)
        in_node(FIO_NODE, ["mkdir", "-p"] + dirs)
        try:
            in_node(FIO_NODE, ["fio", "--output-format=json", os.path.join(tmp, "layout.fio")], timeout=900)
            out = in_node(FIO_NODE, ["fio", "--output-format=json", os.path.join(tmp, "read.fio")],
                          timeout=seconds + 300)
        finally:
            in_node(FIO_NODE, ["rm", "-rf"] + dirs)
    return sum(j["read"]["bw_bytes"] for j in json.loads(out)["jobs"]) / 1e6


# ------------------------------------------------------------------------------------------ main

# ------------------------------------------------------------------------------------------ nccl

NCCL_NODES = ("sim-dgx1", "sim-dgx2")
NCCL_FIXED = ["-f", "2", "-w", "2", "-c", "1", "-d", "float", "-o", "sum", "-g", "1"]
STANDIN = "/opt/podsim/nccl-tests-standin/all_reduce_perf"


def _plateau(pairs: List[List[float]]) -> float:
    """Median of the best busbw of the 3 largest sizes; ``pairs`` = [[size, best busbw], ...]."""
    top = sorted(pairs)[-3:]
    return statistics.median(b for _, b in top)


def nccl_module(iters: int, max_bytes: str, ranks: int) -> float:
    res = module(NCCL_NODES[0], "pod_nccl", {
        "container": "dgxpod-mpi", "targets": [{"node": n, "connect": n} for n in NCCL_NODES],
        "ranks_per_node": ranks, "tests_dir": os.path.dirname(STANDIN), "min_bytes": "1M",
        "max_bytes": max_bytes, "step_factor": 2, "iters": iters, "warmup_iters": 2, "timeout": 300,
        "tcp_if": "enp132s0",
        "mpirun_extra": ["-mca", "mpi_yield_when_idle", "1"]})
    if not res.get("ok"):
        raise Failed("pod_nccl: %s" % res.get("error"))
    return _plateau([[r["size"], max(r["out_of_place"]["busbw"], r["in_place"]["busbw"])] for r in res["rows"]])


def nccl_hand(iters: int, max_bytes: str, ranks: int) -> float:
    env_lines = in_node(NCCL_NODES[0], ["cat", "/etc/dgxpod/nccl.env"]).splitlines()
    xs = []
    for line in env_lines:
        if line.strip() and not line.startswith("#") and "=" in line:
            xs += ["-x", line.strip()]
    argv = (["podman", "exec", "dgxpod-mpi", "mpirun", "--allow-run-as-root", "-np", str(ranks * len(NCCL_NODES)),
             "-H", ",".join("%s:%d" % (n, ranks) for n in NCCL_NODES), "-map-by", "ppr:%d:node" % ranks,
             "-bind-to", "none",
             "-mca", "plm_rsh_agent", "ssh", "-mca", "plm_rsh_args", "-p 2222", "-mca", "pml", "ob1",
             "-mca", "btl", "^openib", "-mca", "btl_tcp_if_include", "enp132s0", "-mca", "oob_tcp_if_include",
             "enp132s0", "-mca", "mpi_yield_when_idle", "1"] + xs + ["-x", "NCCL_DEBUG=INFO", STANDIN]
            + ["-b", "1M", "-e", max_bytes, "-n", str(iters)] + NCCL_FIXED)
    out = in_node(NCCL_NODES[0], argv, timeout=300)
    pairs = []
    for line in out.splitlines():
        f = line.split()
        # a result row: size count type redop root + (time algbw busbw #wrong) x 2
        if len(f) == 13 and f[0].isdigit() and f[1].isdigit():
            pairs.append([int(f[0]), max(float(f[7]), float(f[11]))])
    if not pairs:
        raise Failed("hand nccl run printed no rows: %s" % out[-800:])
    return _plateau(pairs)


def compare(name: str, unit: str, mod: List[float], hand: List[float], tolerance: float) -> Dict[str, Any]:
    m, h = statistics.median(mod), statistics.median(hand)
    diff = (m - h) / h if h else float("inf")
    # the runs of one round ran back to back, under the same load: their ratio, round by round
    ratios = [a / b - 1 for a, b in zip(mod, hand, strict=True) if b]
    paired = statistics.median(ratios) if ratios else float("inf")
    row = {"test": name, "unit": unit, "module": mod, "hand": hand, "module_median": round(m, 3),
           "hand_median": round(h, 3), "difference": round(diff, 4), "paired_difference": round(paired, 4),
           "ok": abs(diff) <= tolerance}
    print("%-6s module %s  hand %s  medians %.3f vs %.3f %s: %+.1f%% (round by round: median %+.1f%%) %s" % (
        name, ["%.3f" % v for v in mod], ["%.3f" % v for v in hand], m, h, unit, 100 * diff, 100 * paired,
        "ok" if row["ok"] else "OUTSIDE %.0f%%" % (100 * tolerance)), flush=True)
    return row


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iperf-seconds", type=int, default=10)
    ap.add_argument("--fio-seconds", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--nccl-iters", type=int, default=20)
    ap.add_argument("--nccl-max-bytes", default="8M", help="largest message of the NCCL sweep (from 1M, x2)")
    ap.add_argument("--nccl-ranks", type=int, default=2, help="ranks per node for the NCCL comparison")
    ap.add_argument("--only", choices=["iperf", "fio", "nccl"])
    ap.add_argument("--json", help="write the measurements here")
    args = ap.parse_args(argv)
    rows = []
    try:
        if args.only in (None, "iperf"):
            fabric = next(n["fabric"] for n in inventory_host(CLIENT)["nics"] if n["fabric"].startswith("data"))
            s_addr, c_addr = data_address(SERVER, fabric), data_address(CLIENT, fabric)
            print("iperf3 %s -> %s on %s (%s -> %s): -P %d -l %s -t %d, %d rounds" % (
                CLIENT, SERVER, fabric, c_addr, s_addr, STREAMS, LENGTH, args.iperf_seconds, args.rounds), flush=True)
            mod, hand = [], []
            for i in range(args.rounds):  # the order flips every round: neither side always goes first
                for side in (("module", "hand") if i % 2 == 0 else ("hand", "module")):
                    if side == "module":
                        mod.append(iperf_module(s_addr, c_addr, args.iperf_seconds, 5301))
                    else:
                        hand.append(iperf_hand(s_addr, c_addr, args.iperf_seconds, 5302))
            rows.append(compare("iperf3", "Gbit/s", mod, hand, args.tolerance))
        if args.only in (None, "fio"):
            mounts = data_mounts(FIO_NODE)
            print("fio on %s over %d data mounts: %s, %d s read, %d rounds" % (
                FIO_NODE, len(mounts), FIO, args.fio_seconds, args.rounds), flush=True)
            mod, hand = [], []
            for i in range(args.rounds):
                for side in (("module", "hand") if i % 2 == 0 else ("hand", "module")):
                    if side == "module":
                        mod.append(fio_module(mounts, args.fio_seconds))
                    else:
                        hand.append(fio_hand(mounts, args.fio_seconds))
            rows.append(compare("fio", "MB/s", mod, hand, args.tolerance))
        if args.only in (None, "nccl"):
            print("nccl stand-in all_reduce on %s, %d ranks each, 1M..%s, %d iterations, %d rounds" % (
                "+".join(NCCL_NODES), args.nccl_ranks, args.nccl_max_bytes, args.nccl_iters, args.rounds),
                flush=True)
            mod, hand = [], []
            for i in range(args.rounds):
                for side in (("module", "hand") if i % 2 == 0 else ("hand", "module")):
                    if side == "module":
                        mod.append(nccl_module(args.nccl_iters, args.nccl_max_bytes, args.nccl_ranks))
                    else:
                        hand.append(nccl_hand(args.nccl_iters, args.nccl_max_bytes, args.nccl_ranks))
            rows.append(compare("nccl", "GB/s", mod, hand, args.tolerance))
    except (Failed, subprocess.SubprocessError, OSError, StopIteration) as e:
        print("compare_by_hand: %s" % (e or type(e).__name__), file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"simulated": True, "rows": rows}, fh, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
