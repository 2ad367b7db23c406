# -*- coding: utf-8 -*-
"""Read what the training job printed (roles/pod_training/files/dgxpod_train.py). Pure functions.

Every rank prints one line ``DGXPOD_TRAIN {json}`` at the end of a pass, or ``DGXPOD_TRAIN_ERROR {json}``
when it failed (with its rank, host, pass and the error). mpirun gathers the ranks' stdout on the launcher, so
one text holds every rank's line, mixed with whatever else the ranks or mpirun printed; a job of several passes
(``--passes cold,warm``) prints one record per rank per pass.

``parse_output`` returns the ranks' records and errors or raises ``ValueError`` naming the line and what was
expected; ``split_passes`` sorts them by pass; ``summarize`` turns one pass's records into per-node and pod figures
(images/s, MB/s read, step time and the fraction of it spent waiting for data, the mounts read, the loss per step);
``parse_gpu_util`` reads ``nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits``.
"""
from __future__ import annotations

import json
import statistics
from typing import Any, Dict, List, Optional, Sequence

MARK = "DGXPOD_TRAIN "
ERROR_MARK = "DGXPOD_TRAIN_ERROR "
# field -> accepted types; every record must have them
FIELDS = {"pass": (str,), "rank": (int,), "world": (int,), "local_rank": (int,), "host": (str,),
          "data_dir": (str,), "images": (int,), "seconds": (int, float), "step_s": (int, float),
          "data_wait_s": (int, float), "busy_s": (int, float), "bytes_read": (int,), "losses": (list,), "batch": (int,),
          "steps": (int,), "warmup": (int,)}


def _json_after(line: str, mark: str, n: int) -> Dict[str, Any]:
    try:
        doc = json.loads(line[line.index(mark) + len(mark):])
    except ValueError as exc:
        raise ValueError("dgxpod_train output line %d: %s is not followed by JSON (%s): %r"
                         % (n, mark.strip(), exc, line[:160])) from None
    if not isinstance(doc, dict):
        raise ValueError("dgxpod_train output line %d: expected a JSON object after %s" % (n, mark.strip()))
    return doc


def parse_output(text: str) -> Dict[str, List[Dict[str, Any]]]:
    """{'records': [...], 'errors': [...]} from the job's combined output. A record missing a field or
    with a wrong type, or two records for one rank, raise ValueError."""
    records: List[Dict[str, Any]] = []
    errors: List[Dict[str, Any]] = []
    for n, line in enumerate((text or "").splitlines(), 1):
        if ERROR_MARK in line:
            doc = _json_after(line, ERROR_MARK, n)
            errors.append({"rank": doc.get("rank"), "host": doc.get("host"), "error": str(doc.get("error")),
                           "trace": doc.get("trace") or [], "pass": doc.get("pass")})
        elif line.lstrip().startswith(MARK):
            doc = _json_after(line, MARK, n)
            for key, types in FIELDS.items():
                if key not in doc:
                    raise ValueError("dgxpod_train output line %d: field %s missing" % (n, key))
                if not isinstance(doc[key], types) or isinstance(doc[key], bool):
                    raise ValueError("dgxpod_train output line %d: field %s is %r, expected %s"
                                     % (n, key, doc[key], "/".join(t.__name__ for t in types)))
            if any(r["rank"] == doc["rank"] and r["pass"] == doc["pass"] for r in records):
                raise ValueError("dgxpod_train output line %d: rank %d reported pass %s twice"
                                 % (n, doc["rank"], doc["pass"]))
            records.append(doc)
    records.sort(key=lambda r: r["rank"])
    return {"records": records, "errors": errors}


def split_passes(parsed: Dict[str, List[Dict[str, Any]]], names: Sequence[str]) -> Dict[str, Dict[str, list]]:
    """parse_output's result -> {pass: {'records': [...], 'errors': [...]}} for the passes ``names`` in the order
    they ran. An error without a pass (an older script, or a line that lost its field) belongs to the first pass
    without a record from that rank: the pass it was running. A record or error of a pass not in ``names``
    raises ValueError."""
    names = list(names)
    out: Dict[str, Dict[str, list]] = {n: {"records": [], "errors": []} for n in names}
    for r in parsed.get("records") or []:
        if r["pass"] not in out:
            raise ValueError("dgxpod_train: rank %d reported pass %r, expected %s"
                             % (r["rank"], r["pass"], " or ".join(names)))
        out[r["pass"]]["records"].append(r)
    for e in parsed.get("errors") or []:
        name = e.get("pass")
        if name is None:
            done = {n for n in names if any(r["rank"] == e.get("rank") for r in out[n]["records"])}
            name = next((n for n in names if n not in done), names[-1])
        if name not in out:
            raise ValueError("dgxpod_train: rank %s failed in pass %r, expected %s"
                             % (e.get("rank"), name, " or ".join(names)))
        out[name]["errors"].append(e)
    return out


def parse_gpu_util(lines: Sequence[str], source: str = "nvidia-smi") -> Dict[int, List[float]]:
    """``nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits`` lines ("0, 97")
    -> {gpu index: [percent, ...]}. ``[N/A]``/``[Not Supported]`` or any other shape raise ValueError."""
    out: Dict[int, List[float]] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2 or not parts[0].isdigit():
            raise ValueError("%s line %d: expected '<index>, <utilization.gpu>', got %r" % (source, n, line[:80]))
        try:
            value = float(parts[1])
        except ValueError:
            raise ValueError("%s line %d: utilization.gpu is %r, not a number (is the GPU supported?)"
                             % (source, n, parts[1])) from None
        if not 0 <= value <= 100:
            raise ValueError("%s line %d: utilization.gpu %s is not a percentage" % (source, n, parts[1]))
        out.setdefault(int(parts[0]), []).append(value)
    return out


def _mean(values: Sequence[float]) -> Optional[float]:
    return statistics.fmean(values) if values else None


def _round(v: Optional[float]) -> Optional[float]:
    return round(v, 5) if v is not None else None


BAD_FILES_KEPT = 20


def _bad_files(records: Sequence[Dict[str, Any]], node_of: Dict[str, str]) -> List[Dict[str, Any]]:
    """[{file, ranks, nodes}] of the files the ranks could not read or decode ("<path> (<error>)" as the job
    prints them), each once, in rank order, at most :data:`BAD_FILES_KEPT`."""
    seen: Dict[str, Dict[str, Any]] = {}
    for r in sorted(records, key=lambda r: r["rank"]):
        bad = r.get("bad_files") or []
        if not isinstance(bad, list):
            raise ValueError("dgxpod_train: rank %d: bad_files is %r, expected a list" % (r["rank"], bad))
        node = node_of.get(r["host"], node_of.get(r["host"].split(".")[0], r["host"]))
        for text in bad:
            e = seen.setdefault(str(text), {"file": str(text), "ranks": [], "nodes": []})
            e["ranks"].append(r["rank"])
            if node not in e["nodes"]:
                e["nodes"].append(node)
    return list(seen.values())[:BAD_FILES_KEPT]


def summarize(records: Sequence[Dict[str, Any]], node_of: Optional[Dict[str, str]] = None,
              world: Optional[int] = None) -> Dict[str, Any]:
    """One pass's figures. ``node_of``: hostname -> inventory name; ``world``: ranks expected (every rank
    0..world-1 must have reported, else ValueError naming the missing ranks).

    Per node: ranks, images_per_s (sum over its ranks), images_per_s_per_rank, images_per_s_local_per_rank
    (images / the rank's own work - data wait, forward, optimizer step - so a slow node stands out even
    though DDP makes every rank wait for it in the all-reduce), mb_per_s (storage data its
    ranks read per second of the window, decimal MB), mb_per_s_per_rank, step_s, data_wait_fraction
    (mean over its ranks of data wait / window), mounts {data_dir: MB}, gpu_util {gpu: mean %} when sampled.
    Pod: the same summed/averaged over nodes, ranks (per rank: node, data_dir, images/s, MB/s, data wait,
    accelerator_busy - the fraction of the window it was not waiting for data, MLPerf Storage's accelerator
    utilisation), losses (mean over ranks per step) and loss_first/loss_last (mean of the first and last quarter of
    the steps), bad_files (the files that could not be read or decoded: each once, with the ranks that met it, at
    most 20) and bad_count (every sample they replaced)."""
    node_of = dict(node_of or {})
    if not records:
        raise ValueError("dgxpod_train: no rank reported a result")
    w = world if world is not None else records[0]["world"]
    missing = sorted(set(range(w)) - {r["rank"] for r in records})
    if missing:
        raise ValueError("dgxpod_train: rank(s) %s did not report a result" % ", ".join(map(str, missing)))
    nodes: Dict[str, Dict[str, Any]] = {}
    ranks: List[Dict[str, Any]] = []
    for r in records:
        node = node_of.get(r["host"], node_of.get(r["host"].split(".")[0], r["host"]))
        n = nodes.setdefault(node, {"ranks": [], "images_per_s": 0.0, "mb_per_s": 0.0, "_steps": [], "_wait": [],
                                    "_local": 0.0, "mounts": {}, "gpu_util": {}, "_gpu_csv": []})
        secs = float(r["seconds"])
        if secs <= 0:
            raise ValueError("dgxpod_train: rank %d measured a window of %s s" % (r["rank"], r["seconds"]))
        n["ranks"].append(r["rank"])
        n["images_per_s"] += r["images"] / secs
        n["mb_per_s"] += r["bytes_read"] / 1e6 / secs
        n["_steps"].append(float(r["step_s"]))
        n["_wait"].append(float(r["data_wait_s"]) / secs)
        busy = float(r["busy_s"])
        n["_local"] += r["images"] / busy if busy > 0 else 0.0
        ranks.append({"rank": r["rank"], "node": node, "data_dir": r["data_dir"],
                      "images_per_s": round(r["images"] / secs, 3), "mb_per_s": round(r["bytes_read"] / 1e6 / secs, 4),
                      "data_wait_fraction": round(float(r["data_wait_s"]) / secs, 4),
                      "accelerator_busy": round(max(0.0, 1.0 - float(r["data_wait_s"]) / secs), 4),
                      "images_per_s_local": round(r["images"] / busy, 3) if busy > 0 else None})
        n["mounts"][r["data_dir"]] = round(n["mounts"].get(r["data_dir"], 0.0) + r["bytes_read"] / 1e6, 3)
        n["_gpu_csv"] += list(r.get("gpu_util_csv") or [])
    out_nodes = {}
    for node, n in sorted(nodes.items()):
        k = len(n["ranks"])
        util = parse_gpu_util(n["_gpu_csv"], "nvidia-smi on %s" % node) if n["_gpu_csv"] else {}
        out_nodes[node] = {
            "ranks": sorted(n["ranks"]), "images_per_s": round(n["images_per_s"], 2),
            "images_per_s_per_rank": round(n["images_per_s"] / k, 2),
            "images_per_s_local_per_rank": round(n["_local"] / k, 2), "mb_per_s": round(n["mb_per_s"], 3),
            "mb_per_s_per_rank": round(n["mb_per_s"] / k, 3), "step_s": round(statistics.fmean(n["_steps"]), 5),
            "data_wait_fraction": round(statistics.fmean(n["_wait"]), 4),
            "accelerator_busy": round(max(0.0, 1.0 - statistics.fmean(n["_wait"])), 4), "mounts": n["mounts"],
            "gpu_util": {str(g): round(statistics.fmean(v), 1) for g, v in sorted(util.items())}}
    steps = min(len(r["losses"]) for r in records)
    losses = [round(statistics.fmean(r["losses"][i] for r in records), 5) for i in range(steps)]
    q = max(1, steps // 4)
    total = sum(n["images_per_s"] for n in out_nodes.values())
    mb = sum(n["mb_per_s"] for n in out_nodes.values())
    first = records[0]
    return {"world": w, "nodes": out_nodes, "images_per_s": round(total, 2),
            "images_per_s_per_rank": round(total / w, 2), "mb_per_s": round(mb, 3),
            "mb_per_s_per_rank": round(mb / w, 3),
            "data_wait_fraction": round(max(n["data_wait_fraction"] for n in out_nodes.values()), 4),
            "step_s": round(max(n["step_s"] for n in out_nodes.values()), 5),
            "losses": losses, "loss_first": _round(_mean(losses[:q])), "loss_last": _round(_mean(losses[-q:])),
            "ranks": ranks,
            "mounts_read": sorted({r["data_dir"] for r in records if r["bytes_read"] > 0}),
            "wrapped": any(r.get("wrapped") for r in records),
            "bad_files": _bad_files(records, node_of), "bad_count": sum(int(r.get("bad_count") or 0) for r in records),
            "job": {k: first.get(k) for k in ("backend", "model", "device", "amp", "batch", "steps", "warmup",
                                               "classes")}}
