#!/usr/bin/env python3
"""Print the plan of validate.yml and its predicted duration for a model, every stage - no host is contacted.

    .venv/bin/python scripts/plan_perf.py -i inventories/dgxpod [--profile full|quick] [--dgx N]
        [--stages all|iperf,fio] [--schedule auto|all_pairs|matchings] [--all-pairs-max 16]
        [--storage-iperf auto|all|none] [--fio-scaling linear|doubling|single-and-all] [--json]

Reads the inventory's files the way Ansible does (no connection, no fact gathering), plans the iperf3 rounds
with module_utils/perf/schedule.py exactly as the pod_iperf_plan filter does, and prints rounds, tests, per-fabric
coverage and the predicted duration under the RA profile's run profile (profiles/<ra_profile>.yml perf_runs).
``--dgx N`` scales the model to N DGX: the first DGX's NICs copied to synthetic hosts with synthetic addresses
(198.18.0.0/15, the benchmarking range), the storage nodes as they are - a SuperPOD-size plan from the reference
pod (docs/validation.md "Schedules at scale"). ``--storage-iperf all`` plans storage nodes that do not run
iperf3 (Isilon, ESS) as if they did.

``--stages all`` (the default) predicts every stage of validate.yml in the order it runs them, and each stage's
share of the whole (docs/benchmarks.md "Plan-only prediction for every stage"); ``--stages iperf,fio`` only the
two it predicted before. N = DGX, F = ansible.cfg's forks (50), S = one SSH round of a task (2.6 s, issue 19's
launch figure), play(t, h) = t x ceil(h / F) x S: a play of t tasks over h hosts, every host at once.

- GPU health: ``dcgmi diag -r L`` on every DGX at once, L = perf_runs.<profile>.gpu.dcgm_level: DCGM's documented
  duration of the level (module_utils/gpu/dcgm_plan.DOCUMENTED_S: 1 min, 2 min, 30 min, 2 h - the documents'
  upper figures, not the timeout) x gpu_scale(GPUs) + play(GPU_TASKS, N).
- network state: every DGX pings every other DGX on each data NIC, PING_PARALLEL pings in flight, each target
  PING_COUNT pings PING_INTERVAL_S apart plus PING_REPLY_S (library/pod_ping_mesh.py); the names resolve at
  RESOLVE_S a name: ceil((N - 1) x nics / PING_PARALLEL) x ((PING_COUNT - 1) x PING_INTERVAL_S + PING_REPLY_S)
  + N x RESOLVE_S + play(NETWORK_TASKS, N).
- iperf3: module_utils/perf/schedule.predict_seconds: rounds x (duration + omit + gap) + the launch.
- fio: module_utils/perf/schedule.fio_seconds: one layout + the profile's steps x (ramp_time + runtime + 5 s).
- RDMA (perf_runs.<profile>.rdma): the perftest pairs per rail of module_utils/network/rdma_plan.py (the iperf3
  tournament per rail, matchings beyond --all-pairs-max), every round rdma_plan.round_seconds(bw_duration, latency
  run ceil(lat_iterations / 1000) + 1 s) = 1 + bw_duration + 1 + 1 + latency + 1 s, + the common start's margin
  (3 s + 0.1 s a DGX) + play(RDMA_TASKS, N).
- NCCL (nccl_runs.<profile>): one run of r = nodes x GPUs ranks takes NCCL_START_S + NCCL_S_PER_RANK x r (mpirun,
  the containers, NCCL's bootstrap) + sum over the sweep's sizes s = min_bytes, x step_factor, .. max_bytes of
  (warmup_iters + 2 x iters) x (s x 2 (r - 1) / r / busbw + NCCL_LATENCY_S) - nccl-tests times ``iters``
  out-of-place and ``iters`` in-place iterations after the warm-up, and a ring all-reduce moves 2 (r - 1) / r of
  the buffer through each rank's link at the bus bandwidth. busbw: alone, the model's single_node_busbw
  (expectations.nccl); across DGX, multi_node_fraction_of_nics x the DGX's compute NICs (nccl/plan
  .multi_node_expectation) - the figures the checks want, so a pod that passes runs at least that fast. Step 1:
  every DGX alone at once (one run); step 2: every DGX together (one run); localisation by group testing
  (module_utils/nccl/group_test): none for a healthy pod (d = 0); for one slow DGX (d = 1) expected_rounds(N, 1) =
  ceil(log2 N) rounds, round k one run of ceil(N / 2^k) DGX + play(NCCL_TASKS, 2 ceil(N / 2^k)); plus
  play(NCCL_TASKS, N) for each of steps 1 and 2. The round-robin pairs are printed beside it: N - 1 rounds of a
  pair run + play(NCCL_TASKS, N).
- training (roles/pod_training defaults: pod_training_job): two passes (warm, then cold after dropping the page
  cache), each TRAIN_START_S (containers, torch.distributed, NCCL) + (warmup + steps) x batch / images_per_gpu
  (expectations.training.images_per_gpu of the model's GPU: every GPU trains its own batch a step, data parallel)
  + play(TRAINING_TASKS, N). The dataset is made once and reused (pod_training_dataset_timeout bounds it): not in
  the prediction.
- report: REPORT_S + REPORT_S_PER_DGX x N (evaluation and the four files on the controller).

The constants marked "assumption" below are toolkit assumptions, not measurements; issue 41 item 1 asks for them
to be checked against measured runs at 4, 16 and 30 DGX.
"""
from __future__ import annotations

import argparse
import copy
import ipaddress
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
sys.path.insert(0, ROOT)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...

import yaml  # noqa: E402
from inventory_util import hostvars as read_hostvars  # noqa: E402  (first: Ansible's collection loader, then ours)

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_model  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.dcgm_plan import (documented_duration,  # noqa: E402
    gpu_scale)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.rdma_plan import (rdma_plan,  # noqa: E402
    round_seconds as rdma_round_seconds)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.group_test import (expected_rounds,  # noqa: E402
    expected_runs, pair_rounds_cost)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import fio_steps, format_eta  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.schedule import (ALL_PAIRS_MAX, FORKS, GAP_S,  # noqa: E402
    SCHEDULES, SERIAL_S_PER_TEST, SSH_S, STORAGE_ROUNDS, choose, dgx_matchings, fio_step_seconds, iperf_storage_hosts,
    network_setup_seconds, predict_seconds, schedule_plan, summary)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import merged_expectations  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import expectation  # noqa: E402

SYNTHETIC = ipaddress.ip_address("198.18.0.0")  # RFC 2544 benchmarking range: never a real pod's
STAGES = ("gpu", "network", "iperf", "fio", "rdma", "nccl", "training", "report")  # validate.yml's order of these

# The stage model (module docstring). Tasks a stage's plays run on every host: counted from its playbook.
GPU_TASKS = 3             # playbooks/validate_gpu.yml: choose the level, read every DGX, record
NETWORK_TASKS = 4         # roles/dgx_network check.yml: the targets once, read the kernel, the ping mesh, record
NCCL_TASKS = 4            # a step of playbooks/validate_nccl.yml: the target, the start, the run, record
RDMA_TASKS = 4            # playbooks/validate_rdma.yml on every DGX: the common start, the launch, the wait, record
RDMA_MARGIN_S = 3.0       # playbooks/validate_rdma.yml: the common start is now + 3 s + 0.1 s a DGX
TRAINING_TASKS = 8        # roles/pod_training: scripts, dataset check, two passes, drop caches, collect, record
PING_PARALLEL = 32        # library/pod_ping_mesh.py: parallel
PING_COUNT = 2            # library/pod_ping_mesh.py: count (ping -c 2 -i 0.2)
PING_INTERVAL_S = 0.2
PING_REPLY_S = 0.05       # assumption: a reply inside a pod's fabric, and the ping process's start
RESOLVE_S = 0.005         # assumption: one name through the resolver (/etc/hosts, getent)
NCCL_START_S = 20.0       # assumption: mpirun, the containers' sshd, NCCL's bootstrap and communicator set-up
NCCL_S_PER_RANK = 0.01    # assumption: the bootstrap's growth with the ranks
NCCL_LATENCY_S = 50e-6    # assumption: one all-reduce's latency at these sizes (rings across DGX: tens of us)
TRAIN_START_S = 60.0      # assumption: a pass's start (containers, torch.distributed, NCCL, the data loaders)
TRAIN_PASSES = 2          # roles/pod_training: warm, then cold after dropping the page cache
REPORT_S = 15.0           # assumption: the report play's evaluation and the four files
REPORT_S_PER_DGX = 0.05   # assumption: its growth with the checks of each DGX
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}  # nccl-tests -b/-e: K, M, G are powers of 1024


def load(inventory: str):
    """(pod, hostvars, groups) from the inventory's files (ansible's InventoryManager; nothing is contacted)."""
    hv = read_hostvars(inventory)
    groups = {g: sorted((h for h, v in hv.items() if g in v["group_names"]), key=_natural) for g in ("dgx", "storage")}
    pod = next(iter(hv.values()))["pod"]
    return pod, hv, groups


def _natural(name: str):
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


def play_seconds(tasks: int, hosts: int, forks: int = FORKS) -> float:
    """play(t, h): ``tasks`` tasks over ``hosts`` hosts, every host at once, ``forks`` at a time, SSH_S a round."""
    return float(tasks) * math.ceil(max(0, hosts) / float(max(1, forks))) * SSH_S if hosts > 0 else 0.0


def nccl_bytes(text) -> int:
    """nccl-tests' -b/-e size: a number with an optional K, M or G suffix (powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)B?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError("nccl_runs size %r is not <number>[K|M|G]" % (text,))
    return int(m.group(1)) * UNITS[m.group(2).upper()]


def nccl_sizes(sweep) -> list:
    """The message sizes of a sweep: min_bytes, x step_factor, .. max_bytes (nccl-tests -b -e -f)."""
    lo, hi, f = nccl_bytes(sweep["min_bytes"]), nccl_bytes(sweep["max_bytes"]), int(sweep.get("step_factor") or 2)
    if f < 2 or lo <= 0 or hi < lo:
        raise ValueError("nccl_runs sweep %s..%s x%s is empty" % (sweep["min_bytes"], sweep["max_bytes"], f))
    sizes = []
    while lo <= hi:
        sizes.append(lo)
        lo *= f
    return sizes


def nccl_run_seconds(sweep, nodes: int, gpus: int, busbw_gbs: float) -> float:
    """One nccl-tests run of ``nodes`` DGX of ``gpus`` GPUs at ``busbw_gbs`` GB/s (the module docstring's formula)."""
    ranks = max(1, nodes * gpus)
    share = 2.0 * (ranks - 1) / ranks
    per_size = int(sweep.get("warmup_iters") or 0) + 2 * int(sweep.get("iters") or 0)
    moving = sum(per_size * (s * share / (busbw_gbs * 1e9) + NCCL_LATENCY_S) for s in nccl_sizes(sweep))
    return NCCL_START_S + NCCL_S_PER_RANK * ranks + moving


def localisation_seconds(sweep, n: int, gpus: int, busbw_gbs: float) -> float:
    """NCCL group testing for one slow DGX (module_utils/nccl/group_test): round k (1..ceil(log2 n)) runs the two
    halves of the suspects, ceil(n / 2^k) DGX each (a DGX and its partner at the last), at once - one run's time -
    and its play on the 2 x ceil(n / 2^k) DGX taking part."""
    total = 0.0
    for k in range(1, expected_rounds(n, 1) + 1):
        size = max(2, int(math.ceil(n / float(2 ** k))))
        total += nccl_run_seconds(sweep, size, gpus, busbw_gbs) + play_seconds(NCCL_TASKS, min(n, 2 * size))
    return total


def _gpu_key(model, table) -> str:
    """The key of expectations.training.images_per_gpu (V100, A100, ...) the model's GPU starts with."""
    fam = str(getattr(model, "gpu_family", "") or "")
    return next((k for k in sorted(table, key=len, reverse=True) if fam.upper().startswith(str(k).upper())), "")


def rdma_seconds(rounds: int, n: int, rdma_run) -> float:
    """The RDMA stage (playbooks/validate_rdma.yml): its rounds, each rdma_plan.round_seconds(bw_duration, the
    latency run: ceil(lat_iterations / 1000) + 1 s, as the playbook sizes it), + the common start's margin + play(
    RDMA_TASKS, N)."""
    lat_s = math.ceil(int(rdma_run.get("lat_iterations") or 1000) / 1000.0) + 1
    per_round = rdma_round_seconds(float(rdma_run.get("bw_duration") or 10), lat_s)
    return rounds * per_round + RDMA_MARGIN_S + 0.1 * n + play_seconds(RDMA_TASKS, n)


def rdma_prediction(pod, hv, dgx, run, schedule: str = "auto", all_pairs_max: int = ALL_PAIRS_MAX):
    """{stage, seconds, formula} of the RDMA stage: the perftest pairs per rail (network/rdma_plan.py, the matchings
    beyond ``all_pairs_max`` DGX as the pod_rdma_plan filter plans them) and :func:`rdma_seconds`."""
    rdma_run = dict(run.get("rdma") or {})
    hosts = {h: {"nics": hv[h].get("nics") or []} for h in dgx}
    pairs = None
    if choose(len(dgx), schedule, all_pairs_max) == "matchings":
        pairs = lambda nics, fabric: dgx_matchings(nics, fabric)  # noqa: E731
    plan = rdma_plan(hosts, dgx, pod.get("fabrics") or [], dgx_rounds=pairs)
    rails = len({t["fabric"] for r in plan for t in r["tests"]})
    return {"stage": "rdma", "seconds": rdma_seconds(len(plan), len(dgx), rdma_run) if plan else 0.0,
            "formula": "%d rounds on %d rails (%d pairs) x (ib_write_bw -D %s + ib_write_lat -n %s + gaps) + "
                       "play(%d, %d)" % (len(plan), rails, sum(len(r["tests"]) for r in plan),
                                         rdma_run.get("bw_duration", 10), rdma_run.get("lat_iterations", 1000),
                                         RDMA_TASKS, len(dgx))}


def stage_predictions(pod, hv, groups, ra, profile: str, run, iperf_s: float, fio_s: float, schedule: str = "auto",
                      all_pairs_max: int = ALL_PAIRS_MAX):
    """[{stage, seconds, formula}] of every stage (the module docstring), and the NCCL localisation's variants."""
    dgx = groups["dgx"]
    n = len(dgx)
    template = hv[dgx[0]]
    model = dgx_model(str(template.get("dgx_model") or ""))
    gpus = int(template.get("gpus") or (model.gpus if model else 8))
    exp = merged_expectations(ra, pod)
    out = []
    level = int(((run.get("gpu") or {}).get("dcgm_level")) or 0)
    dcgm = documented_duration(level) * gpu_scale(gpus)
    out.append({"stage": "gpu", "seconds": dcgm + play_seconds(GPU_TASKS, n),
                "formula": "dcgmi diag -r %d: %.0f s documented x %g (GPUs) on every DGX at once + play(%d, %d)"
                           % (level, documented_duration(level), gpu_scale(gpus), GPU_TASKS, n)})
    data = {f["name"] for f in pod.get("fabrics") or [] if set(f.get("carries") or []) & {"compute", "storage"}}
    nics = sum(1 for nic in template.get("nics") or [] if nic.get("fabric") in data and nic.get("address"))
    targets = (n - 1) * nics
    ping = math.ceil(targets / float(PING_PARALLEL)) * ((PING_COUNT - 1) * PING_INTERVAL_S + PING_REPLY_S)
    out.append({"stage": "network", "seconds": ping + n * RESOLVE_S + play_seconds(NETWORK_TASKS, n),
                "formula": "%d ping targets a DGX (%d NICs x %d peers), %d at once; %d names; + play(%d, %d)"
                           % (targets, nics, n - 1, PING_PARALLEL, n, NETWORK_TASKS, n)})
    out.append({"stage": "iperf", "seconds": iperf_s, "formula": "perf/schedule.predict_seconds (above)"})
    out.append({"stage": "fio", "seconds": fio_s, "formula": "perf/schedule.fio_seconds (above)"})
    out.append(rdma_prediction(pod, hv, dgx, run, schedule, all_pairs_max))
    sweep = dict((ra.get("nccl_runs") or {}).get(profile) or {})
    table = expectation(exp, "nccl", "single_node_busbw", {})[0]
    single_bw = float((table or {}).get(str(template.get("dgx_model"))) or 0) if isinstance(table, dict) else \
        float(table or 0)
    frac = float(expectation(exp, "nccl", "multi_node_fraction_of_nics", 0.8)[0])
    compute = {f["name"] for f in pod.get("fabrics") or [] if "compute" in (f.get("carries") or [])}
    nic_gbps = sum(float(nic.get("speed") or 0) for nic in template.get("nics") or [] if nic.get("fabric") in compute)
    multi_bw = nic_gbps / 8.0 * frac
    nccl = {"sizes": len(nccl_sizes(sweep)) if sweep else 0, "single_busbw": single_bw, "multi_busbw": multi_bw}
    if sweep and single_bw > 0 and multi_bw > 0:
        one = nccl_run_seconds(sweep, 1, gpus, single_bw)
        every = nccl_run_seconds(sweep, n, gpus, multi_bw)
        pair = nccl_run_seconds(sweep, 2, gpus, multi_bw)
        step = play_seconds(NCCL_TASKS, n)
        loc1 = localisation_seconds(sweep, n, gpus, multi_bw)
        pairs = pair_rounds_cost(n)
        nccl.update(single_s=one, all_s=every, localise_d0_s=0.0, localise_d1_s=loc1,
                    localise_d1_runs=expected_runs(n, 1), localise_d1_rounds=expected_rounds(n, 1),
                    pair_rounds=pairs["rounds"], pair_rounds_s=pairs["rounds"] * (pair + step))
        out.append({"stage": "nccl", "seconds": one + every + 2 * step,
                    "formula": "%d sizes; alone %.0f s at %g GB/s, all %d DGX %.0f s at %.1f GB/s, + 2 x play(%d, %d); "
                               "localisation none (d = 0)" % (nccl["sizes"], one, single_bw, n, every, multi_bw,
                                                              NCCL_TASKS, n)})
    else:
        out.append({"stage": "nccl", "seconds": 0.0, "formula": "no nccl_runs.%s sweep or busbw figure" % profile})
    job = _training_job()
    ips_table = expectation(exp, "training", "images_per_gpu", {})[0] or {}
    ips = float(ips_table.get(_gpu_key(model, ips_table)) or 0) if isinstance(ips_table, dict) else float(ips_table)
    if ips > 0:
        steps = int(job.get("warmup") or 0) + int(job.get("steps") or 0)
        per_pass = TRAIN_START_S + steps * float(job.get("batch") or 0) / ips
        out.append({"stage": "training", "seconds": TRAIN_PASSES * per_pass + play_seconds(TRAINING_TASKS, n),
                    "formula": "%d passes x (%.0f s start + %d steps x %s images / %.0f images/s a GPU) + play(%d, %d)"
                               % (TRAIN_PASSES, TRAIN_START_S, steps, job.get("batch"), ips, TRAINING_TASKS, n)})
    else:
        out.append({"stage": "training", "seconds": 0.0, "formula": "no images_per_gpu figure for the model's GPU"})
    out.append({"stage": "report", "seconds": REPORT_S + REPORT_S_PER_DGX * n,
                "formula": "%.0f s + %.2f s x %d DGX" % (REPORT_S, REPORT_S_PER_DGX, n)})
    total = sum(st["seconds"] for st in out)
    for st in out:
        st["share"] = st["seconds"] / total if total else 0.0
    return out, nccl


def _training_job():
    """roles/pod_training's pod_training_job (the real-pod defaults; the pod-in-a-box overrides them)."""
    with open(os.path.join(ROOT, "roles", "pod_training", "defaults", "main.yml"), encoding="utf-8") as fh:
        return dict(yaml.safe_load(fh).get("pod_training_job") or {})


def plan_report(inventory: str, profile: str = "full", dgx=None, schedule: str = "auto",
                all_pairs_max: int = ALL_PAIRS_MAX, storage_iperf: str = "auto", rounds=None,
                storage_rounds: int = STORAGE_ROUNDS, fio_scaling=None, stages: str = "all"):
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
    out = {"inventory": inventory, "pod": pod.get("name"), "ra_profile": pod["ra_profile"], "profile": profile,
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
    if stages == "all":
        out["stages"], out["nccl"] = stage_predictions(pod, hv, groups, ra, profile, run, network, out["fio_s"],
                                                       schedule, all_pairs_max)
        out["validation_s"] = sum(st["seconds"] for st in out["stages"])
        out["validation_one_slow_s"] = out["validation_s"] + out["nccl"].get("localise_d1_s", 0.0)
    return out


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
    if r.get("stages"):
        lines += ["", "every stage of validate.yml (--stages all), %d DGX, run profile %s:" % (r["dgx"], r["profile"]),
                  "  %-9s %9s %6s  %s" % ("stage", "time", "share", "how")]
        lines += ["  %-9s %9s %5.1f%%  %s" % (st["stage"], format_eta(st["seconds"]), 100 * st["share"], st["formula"])
                  for st in r["stages"]]
        nc = r["nccl"]
        lines.append("predicted validation, healthy pod (NCCL localisation runs none): %s"
                     % format_eta(r["validation_s"]))
        if "localise_d1_s" in nc:
            lines += ["with one slow DGX: + NCCL group testing, %d runs in %d rounds (%s): %s"
                      % (nc["localise_d1_runs"], nc["localise_d1_rounds"], format_eta(nc["localise_d1_s"]),
                         format_eta(r["validation_one_slow_s"])),
                      "  (the round-robin pairs would take %d rounds: %s)" % (nc["pair_rounds"],
                                                                            format_eta(nc["pair_rounds_s"]))]
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
    ap.add_argument("--stages", default="all", choices=["all", "iperf,fio"],
                    help="predict every stage (all) or the iperf3 and fio stages only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = plan_report(args.inventory, args.profile, args.dgx, args.schedule, args.all_pairs_max, args.storage_iperf,
                    args.rounds, args.storage_rounds, args.fio_scaling, args.stages)
    print(json.dumps(r, indent=1, sort_keys=True) if args.json else text(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
