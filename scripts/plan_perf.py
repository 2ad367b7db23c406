#!/usr/bin/env python3
"""Print the iperf3 schedule of validate_perf.yml and its predicted duration, for a model - no host is contacted.

    .venv/bin/python scripts/plan_perf.py -i inventories/dgxpod [--profile full|quick] [--dgx N]
        [--schedule auto|all_pairs|matchings] [--all-pairs-max 16] [--storage-iperf auto|all|none]
        [--fio-scaling linear|doubling|single-and-all] [--json]

Reads the inventory's files the way Ansible does (no connection, no fact gathering), plans the iperf3 rounds
with module_utils/perf/schedule.py exactly as the pod_iperf_plan filter does, and prints rounds, tests, per-fabric
coverage and the predicted duration under the RA profile's run profile (profiles/<ra_profile>.yml perf_runs).
``--dgx N`` scales the model to N DGX: the first DGX's NICs copied to synthetic hosts with synthetic addresses
(198.18.0.0/15, the benchmarking range), the storage nodes as they are - a SuperPOD-size plan from the reference
pod (docs/validation.md "Schedules at scale"). ``--storage-iperf all`` plans storage nodes that do not run
iperf3 (Isilon, ESS) as if they did.
"""
from __future__ import annotations

import argparse
import copy
import ipaddress
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
sys.path.insert(0, ROOT)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...

import yaml  # noqa: E402
from inventory_util import hostvars as read_hostvars  # noqa: E402  (first: Ansible's collection loader, then ours)

from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import fio_steps, format_eta  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.schedule import (ALL_PAIRS_MAX, GAP_S,  # noqa: E402
    SCHEDULES, SERIAL_S_PER_TEST, STORAGE_ROUNDS, choose, fio_step_seconds, iperf_storage_hosts, network_setup_seconds,
    predict_seconds, schedule_plan, summary)

SYNTHETIC = ipaddress.ip_address("198.18.0.0")  # RFC 2544 benchmarking range: never a real pod's


def load(inventory: str):
    """(pod, hostvars, groups) from the inventory's files (ansible's InventoryManager; nothing is contacted)."""
    hv = read_hostvars(inventory)
    groups = {g: sorted((h for h, v in hv.items() if g in v["group_names"]), key=_natural) for g in ("dgx", "storage")}
    pod = next(iter(hv.values()))["pod"]
    return pod, hv, groups


def _natural(name: str):
    import re
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def scale(pod, hv, groups, n: int):
    """The model with ``n`` DGX: the existing ones (up to n), then copies of the first one's NICs."""
    dgx = list(groups["dgx"])
    if not dgx:
        raise SystemExit("perf_plan: the inventory has no DGX to scale")
    template = hv[dgx[0]]
    fabric_index = {f["name"]: i for i, f in enumerate(pod.get("fabrics") or [])}
    hv = dict(hv)
    out = dgx[:n]
    for i in range(len(out), n):
        name = "dgx-%04d" % (i + 1)
        nics = copy.deepcopy(template.get("nics") or [])
        for nic in nics:
            if nic.get("address"):
                nic["address"] = str(SYNTHETIC + fabric_index.get(nic.get("fabric"), 0) * 4096 + i + 1)
        hv[name] = dict(template, nics=nics, inventory_hostname=name)
        out.append(name)
    return hv, dict(groups, dgx=out)


def plan_report(inventory: str, profile: str = "full", dgx=None, schedule: str = "auto",
                all_pairs_max: int = ALL_PAIRS_MAX, storage_iperf: str = "auto", rounds=None,
                storage_rounds: int = STORAGE_ROUNDS, fio_scaling=None):
    pod, hv, groups = load(inventory)
    source_dgx = len(groups["dgx"])
    if dgx:
        hv, groups = scale(pod, hv, groups, int(dgx))
    with open(os.path.join(ROOT, "profiles", pod["ra_profile"] + ".yml"), encoding="utf-8") as fh:
        ra = yaml.safe_load(fh)["profile"]
    run = dict(ra["perf_runs"][profile])
    if fio_scaling:
        run["fio_scaling"] = fio_scaling  # as -e '{"pod_perf_runs": {"fio_scaling": ...}}' would
    storage = groups["storage"]
    iperf_storage = {"auto": iperf_storage_hosts(storage, hv), "all": list(storage), "none": []}[storage_iperf]
    model = {h: {k: hv[h].get(k) for k in ("nics", "dgx_model", "gpus")} for h in groups["dgx"] + storage}
    fabrics = pod.get("fabrics") or []
    plan = schedule_plan(model, groups["dgx"], storage, fabrics, schedule, all_pairs_max, rounds, storage_rounds,
                         storage_iperf=iperf_storage)
    steps = len(fio_steps(groups["dgx"], run.get("fio_scaling") or "linear"))
    network = predict_seconds(plan, run)
    hosts_in = {t[k] for r in plan for t in r["tests"] for k in ("client", "server")}
    return {"inventory": inventory, "pod": pod.get("name"), "ra_profile": pod["ra_profile"], "profile": profile,
            "iperf_duration": (run.get("iperf") or {}).get("duration"), "dgx": len(groups["dgx"]),
            "dgx_in_inventory": source_dgx, "storage": len(storage), "storage_iperf": len(iperf_storage),
            "schedule": choose(len(groups["dgx"]), schedule, all_pairs_max), "requested": schedule,
            "all_pairs_max": all_pairs_max, "summary": summary(plan, model, groups["dgx"], fabrics),
            "gap_s": GAP_S, "hosts": len(hosts_in), "setup_s": network_setup_seconds(len(hosts_in)),
            "network_s": network,
            "network_serial_launch_s": predict_seconds(plan, run, per_test=SERIAL_S_PER_TEST),
            "fio_scaling": run.get("fio_scaling") or "linear", "fio_steps": steps, "fio_step_s": fio_step_seconds(run),
            "fio_s": predict_seconds([], run, fio_steps=steps),
            "total_s": predict_seconds(plan, run, fio_steps=steps)}


def text(r) -> str:
    s = r["summary"]
    lines = ["%s (pod %s, RA profile %s), run profile %s: iperf3 %s s a test"
             % (r["inventory"], r["pod"], r["ra_profile"], r["profile"], r["iperf_duration"]),
             "DGX: %d%s; storage nodes: %d (%d in the iperf3 rounds)"
             % (r["dgx"], " (scaled from %d with --dgx)" % r["dgx_in_inventory"] if r["dgx"] != r["dgx_in_inventory"]
                else "", r["storage"], r["storage_iperf"]),
             "schedule: %s (%s; all pairs up to %d DGX)" % (r["schedule"], r["requested"], r["all_pairs_max"]),
             "iperf3: %d rounds, %d tests (%s)" % (s["rounds"], s["tests"], ", ".join(
                 "%s: %d rounds, %d tests" % (k, v["rounds"], v["tests"]) for k, v in s["kinds"].items())),
             "  %-12s %8s %7s %16s %10s %14s" % ("fabric", "DGX NICs", "rounds", "min NICs/round", "peers/NIC",
                                               "storage tests")]
    for name, f in s["fabrics"].items():
        lines.append("  %-12s %8d %7d %16d %10s %14d" % (name, f["dgx_nics"], f["dgx_rounds"],
                                                        f["min_covered_per_round"],
                                                        "%d-%d" % (f["min_peers"], f["max_peers"]), f["storage_tests"]))
    lines += ["predicted network (iperf3): %s - %d rounds x (%s s + %g s gap) + %.0f s to start and collect on %d "
              "hosts, every host launching its part at once" % (format_eta(r["network_s"]), s["rounds"],
                                                                 r["iperf_duration"], r["gap_s"], r["setup_s"],
                                                                 r["hosts"]),
              "  had every test been launched one by one (before issue 19 item 2, %.1f s a test): %s"
              % (SERIAL_S_PER_TEST, format_eta(r["network_serial_launch_s"])),
              "predicted storage (fio, %s): %s - one layout, then %d steps x %.0f s" % (
                  r["fio_scaling"], format_eta(r["fio_s"]), r["fio_steps"], r["fio_step_s"]),
              "predicted network + storage: %s" % format_eta(r["total_s"])]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-i", "--inventory", required=True)
    ap.add_argument("--profile", default="full", choices=["full", "quick"])
    ap.add_argument("--dgx", type=int, help="scale the model to this many DGX (synthetic copies of the first)")
    ap.add_argument("--schedule", default="auto", choices=SCHEDULES)
    ap.add_argument("--all-pairs-max", type=int, default=ALL_PAIRS_MAX)
    ap.add_argument("--rounds", type=int, help="matchings per fabric (default max(3, ceil(log2 N)))")
    ap.add_argument("--storage-rounds", type=int, default=STORAGE_ROUNDS)
    ap.add_argument("--storage-iperf", default="auto", choices=["auto", "all", "none"],
                    help="storage nodes in the iperf3 rounds: those that run iperf3 (auto), all, none")
    ap.add_argument("--fio-scaling", choices=["linear", "doubling", "single-and-all"],
                    help="override the run profile's fio_scaling (pod_perf_runs)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = plan_report(args.inventory, args.profile, args.dgx, args.schedule, args.all_pairs_max, args.storage_iperf,
                    args.rounds, args.storage_rounds, args.fio_scaling)
    print(json.dumps(r, indent=1, sort_keys=True) if args.json else text(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
