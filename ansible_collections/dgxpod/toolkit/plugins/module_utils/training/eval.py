# -*- coding: utf-8 -*-
"""Evaluation and report sections of the training stage (playbooks/validate_training.yml). Pure functions.

Measurements (``pod_stages.training``): dataset (manifest, reused/generated or failed + msg), passes
{cold, warm} (ok, error, failed_nodes, summary from module_utils/training/parse.summarize), mounts
{node: {mount path: {ip, storage_host, ...}}}, job, ranks_per_node, seconds.

Checks (docs/validation.md "Training"): ``train_dataset``, ``train_dataset_files`` (a file no rank could read or
decode, named by its path, once), ``train_job`` (a crash or hang: error naming node and rank), ``train_converges``,
``train_throughput`` (absolute), ``train_storage_bound``, ``train_read_rate`` (absolute), ``train_gpu_util``
(absolute), ``train_accelerator_busy`` (absolute, per node) and ``train_accelerators_kept_busy`` (absolute, the pod:
MLPerf Storage's rule for "enough" storage), ``train_relative``.
"""
from __future__ import annotations

import statistics
from html import escape
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_PERF, JOB_STATE, POD_PERF,
                                                                                  CheckResult, Subject, at_least,
                                                                                  blocked_result, compare,
                                                                                  expectation)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.nfs_plan import mount_of

PASSES = ("cold", "warm")
# MLPerf Storage: a run passes when the accelerators were busy (not waiting for data) at least this fraction of the
# time - 90 % for its image workloads (3D U-Net, ResNet-50), 70 % for CosmoFlow
AU_SOURCE = ("MLPerf Storage rules 3.3.2 trainingAcceleratorUtilizationCheck (github.com/mlcommons/storage): AU = "
             "compute time / run time, at least 90 % for ResNet-50 and 3D U-Net (70 % for CosmoFlow)")


def _exp(exp: Dict[str, Any], key: str, default: Any = None) -> Tuple[Any, str]:
    """(value, source) of expectations.training.<key> (a pod that is noisier than real hardware - the
    simulator - overrides it in its inventory, pod.validation.expectations)."""
    return expectation(exp, "training", key, default)


def _summary(m: Dict[str, Any], name: str) -> Optional[Dict[str, Any]]:
    p = (m.get("passes") or {}).get(name) or {}
    return p.get("summary") if p.get("ok") else None


def storage_path(m: Dict[str, Any], node: str, data_dir: str) -> str:
    """'/mnt/isilon2 -> sim-isilon2 (198.18.66.212)' for a rank's data directory on a node."""
    best, info = mount_of((m.get("mounts") or {}).get(node) or {}, data_dir)
    if best is None:
        return data_dir
    return "%s -> %s (%s)" % (best, info.get("storage_host") or "?", info.get("ip") or "?")


def _storage_host(m: Dict[str, Any], node: str, data_dir: str) -> Optional[str]:
    return mount_of((m.get("mounts") or {}).get(node) or {}, data_dir)[1].get("storage_host")


def slow_where(m: Dict[str, Any], s: Dict[str, Any], node: str, worst: Dict[str, Any]) -> str:
    """Node or storage? When the storage node that ``node``'s most-waiting rank reads from serves other
    nodes' ranks with at most half of its data wait, the storage path is fine and the node itself is slow
    (its GPUs, or the CPUs that decode its data); otherwise it cannot be told apart here."""
    host = _storage_host(m, node, worst.get("data_dir", ""))
    mine = worst.get("data_wait_fraction") or 0
    peers = sorted({r.get("node") for r in s.get("ranks") or []
                    if r.get("node") != node and host is not None
                    and _storage_host(m, r.get("node"), r.get("data_dir", "")) == host
                    and (r.get("data_wait_fraction") or 0) <= mine / 2})
    if peers and mine > 0:
        return ("%s serves %s with less than half that wait, so the node itself is slow (its GPUs, or the CPUs "
                "that decode its data)" % (host, ", ".join(peers)))
    return "a slow node or storage path"


def _storage_hosts(m: Dict[str, Any]) -> List[str]:
    """The storage nodes behind the job's mounts on any of its DGX, sorted."""
    return sorted({str(info.get("storage_host")) for mounts in (m.get("mounts") or {}).values()
                   for info in (mounts or {}).values() if isinstance(info, dict) and info.get("storage_host")})


def _job(phase: Optional[str] = None, node: Optional[str] = None) -> Dict[str, Any]:
    """The training job's outcome (it ran, it trained), of a pass and, when one node failed, of that node."""
    return {"subject": Subject(node=node, phase=phase), "category": JOB_STATE}


def _perf(node: str, phase: str) -> Dict[str, Any]:
    """A node's speed in a pass of the job."""
    return {"subject": Subject(node=node, phase=phase), "category": JOB_PERF}


def _ratio_text(a: float, b: float) -> str:
    return "%.0f%%" % (100.0 * a / b) if b else "-"


def _pod_perf(cold: Dict[str, Any]) -> Dict[str, Any]:
    """The job as a whole (cold pass vs warm pass): every node of it, no one node at fault."""
    return {"subject": Subject(nodes=tuple(sorted(cold.get("nodes") or {}))), "category": POD_PERF}


def evaluate(m: Dict[str, Any], exp: Dict[str, Any], ctx: Dict[str, Any]) -> List[CheckResult]:
    sim = bool(ctx.get("simulated"))
    out: List[CheckResult] = []
    if m.get("blocked"):  # not started: checks it depends on already failed (report/prerequisites.py)
        nodes = tuple(str(n) for n in m.get("nodes") or [])
        return [blocked_result("train_job", "pod", "the training job across %d DGX" % len(nodes), m["blocked"],
                               subject=Subject(nodes=nodes), category=JOB_STATE)]
    ds = m.get("dataset") or {}
    if ds.get("failed"):
        return [CheckResult("train_dataset", "pod", "error",
                            reason="the dataset could not be made or read: %s" % (ds.get("msg") or "unknown error"),
                            **_job())]
    man = ds.get("manifest") or {}
    if man.get("user"):
        out.append(CheckResult("train_dataset", "pod", "pass", measured=man.get("files"),
                               unit="shards" if man.get("format") == "shards" else "files",
                               source="the user's dataset %s (%s), listed read-only" % (man.get("root"),
                                                                                     man.get("format")),
                               details={"user": True, "format": man.get("format"), "classes": man.get("classes"),
                                        "mean_kb": man.get("mean_kb"), "bytes": man.get("bytes"),
                                        "root": man.get("root"), "file_list": man.get("file_list"),
                                        "skipped": man.get("skipped") or {}, "empty": man.get("empty") or [],
                                        "seconds": man.get("seconds")}, **_job()))
    else:
        out.append(CheckResult("train_dataset", "pod", "pass", measured=man.get("files"), unit="files",
                               source="generated once on the shared storage, reused while its manifest matches",
                               details={"reused": bool(ds.get("reused")), "mean_kb": man.get("mean_kb"),
                                        "bytes": man.get("bytes"), "root": (ds.get("roots") or [None])[0]},
                               **_job()))
    passes = m.get("passes") or {}
    for name in PASSES:
        p = passes.get(name)
        if p is None:
            if name == "warm" and not (passes.get("cold") or {}).get("ok"):
                continue  # not run after a failed cold pass; the cold pass's error says why
            out.append(CheckResult("train_job", "pod", "error", reason="the %s pass did not run" % name,
                                   **_job(name)))
        elif not p.get("ok"):
            failed = p.get("failed_nodes") or {}
            # the job spans every DGX of it and reads from the storage nodes of their mounts: a fault already
            # found on any of them (a data NIC, a storage node that does not answer) explains this error too
            # (issue 46), so the subject names them all
            spans = tuple(dict.fromkeys([str(n) for n in m.get("nodes") or []] + _storage_hosts(m)))
            for host in sorted(failed) or ["pod"]:
                about = _job(name, None if host == "pod" else host)
                about["subject"] = Subject(node=about["subject"].node, nodes=spans, phase=name)
                out.append(CheckResult("train_job", host, "error", details={"pass": name},
                                       reason="%s pass: %s" % (name, p.get("error") or "no result"), **about))
    cold, warm = _summary(m, "cold"), _summary(m, "warm")
    if cold is None:
        return out
    out.append(dataset_files_check([s for s in (cold, warm) if s is not None], man))

    # it trained: the loss went down
    drop, drop_src = _exp(exp, "loss_drop_fraction", 0.02)
    for name, s in (("cold", cold), ("warm", warm)):
        if s is None:
            continue
        first, last = s.get("loss_first"), s.get("loss_last")
        if first is None or last is None:
            out.append(CheckResult("train_converges", "pod", "error", reason="%s pass: no loss values" % name,
                                   **_job(name)))
            continue
        limit = round(first * (1 - float(drop)), 5)
        ok = last <= limit
        out.append(CheckResult("train_converges", "pod", "pass" if ok else "fail", expected=limit, measured=last,
                               unit="loss", source=drop_src,
                               details=dict(compare("<="), **{"pass": name, "loss_first": first},
                                            **({"note": "loss %s -> %s" % (first, last)} if ok else {})),
                               cause=None if ok else "%s pass: the loss did not go down (first quarter of the steps "
                               "%.4f, last quarter %.4f): the job did not train - check the data and the job's "
                               "settings" % (name, first, last), **_job(name)))

    # absolute: images/s per GPU vs the published figure for the GPU model
    gpu = ((exp.get("sizing") or {}).get("gpu")) or ((ctx.get("sizing") or {}).get("gpu"))
    figures, fig_src = _exp(exp, "images_per_gpu", {})
    frac, frac_src = _exp(exp, "throughput_fraction", 0.9)
    figure = (figures or {}).get(gpu) if isinstance(figures, dict) else None
    expected = round(figure * float(frac), 1) if figure else None
    ref = warm or cold
    for node, n in sorted(ref["nodes"].items()):
        out.append(at_least("train_throughput", node, n["images_per_s_per_rank"], expected, "images/s per GPU",
                            "%s %s images/s per GPU (%s); x %s: %s" % (gpu, figure, fig_src, frac, frac_src),
                            "%s trains %.0f images/s per GPU, below %s x the published %s figure (%s): GPUs, "
                            "clocks, the data pipeline or the job's settings" % (node, n["images_per_s_per_rank"], frac,
                                                                                 gpu, figure),
                            absolute=True, gpu=gpu, **{"pass": "warm" if warm else "cold"}
                            ).but(**_perf(node, "warm" if warm else "cold")))

    # cold (storage) vs warm (page cache)
    demand = (ctx.get("sizing") or {}).get("mbps_per_gpu")
    if warm is None:
        out.append(CheckResult("train_storage_bound", "pod", "error",
                               reason="no warm pass to compare the cold pass with", **_pod_perf(cold)))
    elif cold.get("wrapped"):  # a file read twice in the cold pass came from the page cache the first read filled
        out.append(CheckResult("train_storage_bound", "pod", "skipped", measured=cold["images_per_s"],
                               unit="images/s", reason="the dataset has fewer files than a pass reads (%s files; "
                               "ranks x (warmup + steps) x batch per pass), so the cold pass read files more than "
                               "once - from the page cache - and does not measure the storage: use a larger dataset "
                               "or fewer steps" % (man.get("files") or "?"), **_pod_perf(cold)))
    else:
        cf, cf_src = _exp(exp, "cold_fraction_of_warm", 0.9)
        exp_ips = round(warm["images_per_s"] * float(cf), 2)
        worst = max(cold.get("ranks") or [{}], key=lambda r: r.get("data_wait_fraction") or 0)
        path = storage_path(m, worst.get("node", ""), worst.get("data_dir", "")) if worst else "?"
        cause = ("storage limits training: the cold pass (files from the storage) trained %.1f images/s, %s of the "
                 "warm pass (page cache, %.1f); it read %.2f MB/s per GPU%s; the rank that waited most for data "
                 "(rank %s on %s, %.0f%% of its time) read through %s"
                 % (cold["images_per_s"], _ratio_text(cold["images_per_s"], warm["images_per_s"]),
                    warm["images_per_s"], cold["mb_per_s_per_rank"],
                    " (the RA sizes %s MB/s per GPU for %s)" % (demand, (ctx.get("sizing") or {}).get("workload"))
                    if demand else "", worst.get("rank"), worst.get("node"),
                    100 * (worst.get("data_wait_fraction") or 0), path))
        r = at_least("train_storage_bound", "pod", cold["images_per_s"], exp_ips, "images/s",
                     "%s x the warm pass: %s" % (cf, cf_src), cause, warm_images_per_s=warm["images_per_s"],
                     cold_mb_per_s_per_gpu=cold["mb_per_s_per_rank"], demand_mb_per_s_per_gpu=demand,
                     slowest_path=path)
        out.append(r.but(**_pod_perf(cold)))

    # absolute: storage MB/s per GPU during the cold pass vs the RA's sizing demand
    workload = (ctx.get("sizing") or {}).get("workload")
    for node, n in sorted(cold["nodes"].items()):
        out.append(at_least("train_read_rate", node, n["mb_per_s_per_rank"], demand, "MB/s per GPU",
                            "RA sizing, %s (%s)" % (workload, "; ".join((ctx.get("sizing") or {}).get("sources") or [])
                                                    or "report sizing"),
                            "%s read %.1f MB/s per GPU from the storage in the cold pass, below the %s MB/s per GPU "
                            "the RA sizes for %s" % (node, n["mb_per_s_per_rank"], demand, workload), absolute=True
                            ).but(**_perf(node, "cold")))

    # absolute: GPU utilisation (nvidia-smi samples during the window)
    util_min, util_src = _exp(exp, "gpu_util_percent", 97)
    for node, n in sorted(ref["nodes"].items()):
        util = n.get("gpu_util") or {}
        if not util:
            out.append(CheckResult("train_gpu_util", node, "skipped", unit="%", source=util_src, absolute=True,
                                   reason="GPU utilisation not sampled (pod_training_job.gpu_util_interval is 0%s)"
                                   % ("; the pod-in-a-box trains on CPU" if sim else ""),
                                   **_perf(node, "warm" if warm else "cold")))
            continue
        low_gpu, low = min(util.items(), key=lambda kv: kv[1])
        out.append(at_least("train_gpu_util", node, low, util_min, "%", util_src,
                            "%s: GPU %s was %.0f%% busy on average (nvidia-smi), below %s%%: the GPUs wait for data "
                            "or for each other" % (node, low_gpu, low, util_min), absolute=True,
                            per_gpu=util).but(**_perf(node, "warm" if warm else "cold")))

    out += accelerator_checks(cold, exp)

    # each node's own work vs the median node (DDP makes every rank wait for the slowest in the all-reduce)
    rel, rel_src = _exp(exp, "relative_fraction_of_peers", 0.8)
    for name, s in (("cold", cold), ("warm", warm)):
        if s is None or len(s["nodes"]) < 2:
            continue
        vals = {node: n.get("images_per_s_local_per_rank") for node, n in s["nodes"].items()}
        med = statistics.median(v for v in vals.values() if v is not None)
        for node, v in sorted(vals.items()):
            n = s["nodes"][node]
            slow = [r for r in s.get("ranks") or [] if r.get("node") == node]
            worst = max(slow or [{}], key=lambda r: r.get("data_wait_fraction") or 0)
            out.append(at_least(
                "train_relative", node, v, round(med * float(rel), 2), "images/s per GPU (own work)",
                "%s x the median node: %s" % (rel, rel_src),
                "%s: %s pass, its ranks' own work (data, forward, optimizer) ran at %.1f images/s per GPU, %s of the "
                "median node (%.1f); it waited for data %.0f%% of the time (most: rank %s through %s) - %s"
                % (node, name, v or 0, _ratio_text(v or 0, med), med, 100 * n.get("data_wait_fraction", 0),
                   worst.get("rank"), storage_path(m, node, worst.get("data_dir", "")), slow_where(m, s, node, worst)),
                **{"pass": name, "median": round(med, 2)}).but(**_perf(node, name)))
    return out


def _bad_path(text: str) -> str:
    """The file of a "<path> (<error>)" the job printed (a shard sample is "<tar>:<key>")."""
    return text.split(" (", 1)[0]


def dataset_files_check(summaries: List[Dict[str, Any]], man: Dict[str, Any]) -> CheckResult:
    """``train_dataset_files``: every sample the job read decoded. One check for the job (both passes read the same
    files), naming each file that did not by its path: a corrupt file is one finding, not one rank's crash and the
    other ranks' broken connections. Subject: the (first) file, on the shared storage."""
    bad: Dict[str, Dict[str, Any]] = {}
    count = 0
    for s in summaries:
        count = max(count, int(s.get("bad_count") or 0))
        for e in s.get("bad_files") or []:
            b = bad.setdefault(e["file"], {"file": e["file"], "nodes": []})
            b["nodes"] += [n for n in e.get("nodes") or [] if n not in b["nodes"]]
    files = sorted(bad)
    about = {"subject": Subject(path=_bad_path(files[0]) if files else man.get("root"), storage=True),
             "category": JOB_STATE}
    if not files:
        return CheckResult("train_dataset_files", "pod", "pass", expected=0, measured=0, unit="unreadable files",
                           source="every file the job reads must decode", details=dict(compare("=")), **about)
    return CheckResult("train_dataset_files", "pod", "fail", expected=0, measured=len(files),
                       unit="unreadable files", source="every file the job reads must decode",
                       cause="%d file(s) of the dataset could not be read or decoded (%d sample(s) replaced by a "
                       "blank image): %s - replace or remove them%s"
                       % (len(files), count, "; ".join(files[:5]), " (and %d more)" % (len(files) - 5)
                          if len(files) > 5 else ""),
                       details=dict(compare("="), files=[bad[f] for f in files]), **about)


def accelerator_checks(cold: Dict[str, Any], exp: Dict[str, Any]) -> List[CheckResult]:
    """Accelerator utilisation in the cold pass (the files from the storage): per node the fraction of the window
    its ranks did not wait for data (``train_accelerator_busy``), and for the pod how many GPUs (ranks) the storage
    kept at least that busy (``train_accelerators_kept_busy``, MLPerf Storage's way to say "enough" beside the RA's
    MB/s per GPU). Both compare with MLPerf Storage's figure: absolute (the simulator's CPU ranks are no GPUs)."""
    au, src = _exp(exp, "accelerator_busy_fraction", 0.9)
    limit = round(100 * float(au), 1)
    source = AU_SOURCE if src == "toolkit default" else src
    out = []
    for node, n in sorted(cold["nodes"].items()):
        busy = n.get("accelerator_busy")
        if busy is None:
            busy = 1.0 - float(n.get("data_wait_fraction") or 0)
        out.append(at_least("train_accelerator_busy", node, round(100 * busy, 1), limit, "% busy", source,
                            "%s: in the cold pass its GPUs waited for data %.0f%% of the time, so they were busy "
                            "%.0f%%, below the %.0f%% MLPerf Storage asks: the storage (or the node's data pipeline) "
                            "does not keep them fed" % (node, 100 * (1 - busy), 100 * busy, limit),
                            absolute=True, **{"pass": "cold"}).but(**_perf(node, "cold")))
    ranks = cold.get("ranks") or []
    kept = [r for r in ranks if r.get("accelerator_busy") is not None and 100 * r["accelerator_busy"] >= limit]
    world = len(ranks)
    short = sorted({r.get("node") for r in ranks if r not in kept})
    out.append(at_least("train_accelerators_kept_busy", "pod", len(kept), world, "GPUs >= %.0f%% busy" % limit,
                        source, "the storage kept %d of %d GPUs at least %.0f%% busy in the cold pass (short: %s)"
                        % (len(kept), world, limit, ", ".join(short) or "none"), absolute=True,
                        **{"pass": "cold", "world": world}).but(**_pod_perf(cold)))
    return out


# ------------------------------------------------------------------------------------------------ report

def _rows(m: Dict[str, Any]) -> List[Dict[str, Any]]:
    cold, warm = _summary(m, "cold"), _summary(m, "warm")
    rows = []
    for node in sorted((cold or {}).get("nodes") or {}):
        c = cold["nodes"][node]
        w = (warm or {}).get("nodes", {}).get(node) or {}
        rows.append({"node": node, "ranks": len(c["ranks"]), "cold_ips": c["images_per_s"],
                     "warm_ips": w.get("images_per_s"), "cold_mbps": c["mb_per_s"],
                     "cold_mbps_gpu": c["mb_per_s_per_rank"], "warm_mbps": w.get("mb_per_s"),
                     "wait_cold": c["data_wait_fraction"], "wait_warm": w.get("data_wait_fraction"),
                     "step_cold": c["step_s"], "step_warm": w.get("step_s"),
                     "mounts": ", ".join("%s %.1f MB" % (p, mb) for p, mb in sorted(c["mounts"].items()))})
    return rows


def _f(v: Any, pct: bool = False) -> str:
    if v is None:
        return "-"
    if pct:
        return "%.0f%%" % (100 * v)
    return "%.1f" % v if abs(v) >= 10 else "%.3g" % v


def _headline(m: Dict[str, Any]) -> List[str]:
    cold, warm = _summary(m, "cold"), _summary(m, "warm")
    ds = m.get("dataset") or {}
    man = ds.get("manifest") or {}
    job = m.get("job") or {}
    lines = ["Dataset: %s JPEG files in %s classes, %s KB mean, %s (%s)" % (
        man.get("files"), man.get("classes"), man.get("mean_kb"), (ds.get("roots") or ["?"])[0],
        "reused: manifest complete" if ds.get("reused") else "generated in %ss" % ds.get("seconds"))]
    lines.append("Job: %s, %s backend on %s%s, %s ranks per node, batch %s per rank, %s warm-up + %s measured steps; "
                 "stage took %ss" % (job.get("model"), job.get("backend"), job.get("device"),
                                     " (AMP)" if job.get("amp") else "", m.get("ranks_per_node"), job.get("batch"),
                                     job.get("warmup"), job.get("steps"), m.get("seconds")))
    if cold:
        lines.append("Pod: cold %.1f images/s (%.2f MB/s, %.3f MB/s per rank), warm %s images/s; loss %s -> %s; "
                     "mounts read: %s" % (cold["images_per_s"], cold["mb_per_s"], cold["mb_per_s_per_rank"],
                                          _f((warm or {}).get("images_per_s")), cold.get("loss_first"),
                                          cold.get("loss_last"), ", ".join(cold.get("mounts_read") or [])))
    return lines


HEAD = ("node", "ranks", "cold images/s", "warm images/s", "cold/warm", "cold read MB/s", "cold MB/s per GPU",
        "data wait cold", "data wait warm", "step s cold", "step s warm", "read through (cold pass)")


def _cells(r: Dict[str, Any]) -> List[str]:
    return [r["node"], str(r["ranks"]), _f(r["cold_ips"]), _f(r["warm_ips"]),
            _ratio_text(r["cold_ips"], r["warm_ips"]) if r["warm_ips"] else "-", _f(r["cold_mbps"]),
            _f(r["cold_mbps_gpu"]), _f(r["wait_cold"], True), _f(r["wait_warm"], True), _f(r["step_cold"]),
            _f(r["step_warm"]), r["mounts"]]


def markdown(doc: Dict[str, Any]) -> List[str]:
    m = (doc.get("measurements") or {}).get("training") or {}
    out = ["", "## Training: a short DDP job on the pod's storage (cold vs warm)", ""]
    out += ["- %s" % line for line in _headline(m)]
    rows = _rows(m)
    if rows:
        out += ["", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        out += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    return out


def _bars(title: str, labels: List[str], series: List[Tuple[str, str, List[Optional[float]]]], unit: str,
          line: Optional[Tuple[str, float]] = None) -> str:
    w, h, left, bottom = 560, 280, 70, 40
    pw, ph = w - left - 20, h - bottom - 30
    vals = [v for _, _, vs in series for v in vs if v is not None] + ([line[1]] if line else [])
    ymax = (max(vals) if vals else 1.0) * 1.15 or 1.0

    def y(v: float) -> float:
        return 30 + ph - ph * v / ymax

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">'
             % (w, h, escape(title))]
    parts.append('<line x1="%d" y1="30" x2="%d" y2="%d" stroke="#000"/>' % (left, left, 30 + ph))
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (left, 30 + ph, left + pw, 30 + ph))
    parts.append('<text x="12" y="%d" font-size="11" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>'
                 % (30 + ph // 2, 30 + ph // 2, escape(unit)))
    for k in range(5):
        v = ymax * k / 4
        parts.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (left - 4, y(v) + 3, _f(v)))
    group = pw / max(1, len(labels))
    bw = group * 0.7 / max(1, len(series))
    for i, lab in enumerate(labels):
        x0 = left + group * i + group * 0.15
        for j, (name, color, vs) in enumerate(series):
            v = vs[i]
            if v is None:
                continue
            parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s %s</title>'
                         '</rect>' % (x0 + j * bw, y(v), bw - 2, 30 + ph - y(v), color, escape(lab), escape(name),
                                      _f(v), escape(unit)))
        parts.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>'
                     % (left + group * (i + 0.5), 30 + ph + 16, escape(lab)))
    x = left
    for name, color, _ in series:
        parts.append('<text x="%d" y="16" font-size="11" fill="%s">&#9632; %s</text>' % (x, color, escape(name)))
        x += 12 + 7 * len(name)
    if line:
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ef6c00" stroke-dasharray="6 4" '
                     'stroke-width="2"/>' % (left, y(line[1]), left + pw, y(line[1])))
        parts.append('<text x="%d" y="16" font-size="11" fill="#ef6c00">- - %s</text>' % (x, escape(line[0])))
    parts.append("</svg>")
    return "".join(parts)


def html(doc: Dict[str, Any]) -> List[str]:
    m = (doc.get("measurements") or {}).get("training") or {}
    out = ["<h2>Training: a short DDP job on the pod's storage (cold vs warm)</h2>", "<ul>"]
    out += ["<li>%s</li>" % escape(line) for line in _headline(m)]
    out.append("</ul>")
    rows = _rows(m)
    if not rows:
        return out
    labels = [r["node"] for r in rows]
    demand = (doc.get("sizing") or {}).get("mbps_per_gpu")
    out.append('<div class="plots"><figure>%s<figcaption>images/s per node: cold pass (storage) vs warm pass (page '
               'cache)</figcaption></figure>' % _bars(
                   "training images/s per node, cold vs warm", labels,
                   [("cold", "#1565c0", [r["cold_ips"] for r in rows]),
                    ("warm", "#90caf9", [r["warm_ips"] for r in rows])], "images/s"))
    out.append("<figure>%s<figcaption>storage read MB/s per GPU in the cold pass%s</figcaption></figure></div>" % (
        _bars("training read MB/s per GPU vs the RA's demand", labels,
              [("cold read per GPU", "#2e7d32", [r["cold_mbps_gpu"] for r in rows])], "MB/s per GPU",
              ("RA demand %s MB/s per GPU" % demand, float(demand)) if demand else None),
        " vs the RA's sizing demand (dashed)" if demand else ""))
    out.append("<table><tr>%s</tr>" % "".join("<th>%s</th>" % escape(h) for h in HEAD))
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % escape(c) for c in _cells(r)))
    out.append("</table>")
    return out
