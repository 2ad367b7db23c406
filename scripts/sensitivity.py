#!/usr/bin/env python3
"""How small a slowdown of one NIC validation finds (issue 17, item 5), measured on the pod-in-a-box.

For each stage (``network``: iperf3; ``nccl``: the NCCL stand-in), a healthy run first gives the rate the NIC's
peers reach in that stage (iperf3: the median Gb/s of the DGX pairs on the NIC's fabric without the node; NCCL:
the all-node run's plateau bus bandwidth, which is what each link of the ring carries). Then the NIC is shaped
(``sim/podsim shape``) to each fraction of that rate in turn, the stage runs, and the report is judged as the
fault drill judges it (scripts/drill.py): found when the top finding names the node and one of the stage's checks.
A failed check about another node is a false alarm. The table goes to docs/validation.md (between the
sensitivity markers) unless ``--no-doc``.

    .venv/bin/python scripts/sensitivity.py [--stages network nccl] [--fractions 0.8 0.7 0.6 0.5 0.4]

Needs root and a pod that is up and converged (sim/podsim up; ansible-playbook site.yml). About 2 min a run.
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "sim"))
sys.path.insert(0, REPO)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...
import drill  # noqa: E402  (the fault drill's judge and playbook runner)

PODSIM = os.path.join(REPO, "sim", "podsim")
DOC = os.path.join(REPO, "docs", "validation.md")
BEGIN, END = "<!-- sensitivity:begin -->", "<!-- sensitivity:end -->"

# stage -> (validate.yml tags, the NIC shaped, the checks that must name it, keywords of the cause)
STAGES = {
    "network": (["network"], ("sim-dgx2", "enp12s0"), ("iperf_relative", "iperf"), ("slow", "low")),
    "nccl": (["nccl"], ("sim-dgx3", "enp132s0"), ("nccl_localisation", "nccl_relative"), ("slow", "low")),
}


# --------------------------------------------------------------------------- pure parts

def peers_rate_gbps(results: Dict[str, Any], stage: str, node: str, nic: str) -> Optional[float]:
    """What the shaped NIC's peers reach in this stage on the healthy pod, in Gb/s (None: not measured)."""
    if stage == "network":
        tests = ((results.get("measurements") or {}).get("iperf") or {}).get("tests") or []
        fabric = next((t["fabric"] for t in tests for side in ("client", "server")
                       if t.get(side) == node and t.get(side + "_nic") == nic), None)
        vals = []
        for t in tests:
            res = t.get("result") or {}
            bps = res.get("received_bps") or res.get("sent_bps")
            if (t.get("fabric") == fabric and t.get("kind") == "dgx-dgx" and t.get("status") == "ok" and bps
                    and node not in (t.get("client"), t.get("server"))):
                vals.append(bps / 1e9)
        return statistics.median(vals) if vals else None
    if stage == "nccl":
        m = (results.get("measurements") or {}).get("nccl") or {}
        run = m.get("all") or {}
        bw = run.get("plateau_busbw")
        if bw is None and run.get("rows"):
            from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import plateau_busbw
            bw = plateau_busbw(run["rows"], int(m.get("plateau_sizes") or 3))
        return bw * 8.0 if bw else None  # GB/s -> Gb/s
    raise ValueError("unknown stage %r (one of %s)" % (stage, ", ".join(STAGES)))


def _pod_wide(host: Optional[str]) -> bool:
    """A check about every node at once ("all (4 DGX)": the NCCL all-node run; "pod") includes the shaped one."""
    host = (host or "").strip()
    return host == "pod" or host.startswith("all (")


def judge(results: Dict[str, Any], stage: str, node: str, nic: str) -> Dict[str, Any]:
    """{found, top, why, false_alarms}: the drill's rule for the shaped node, plus failed checks about others."""
    _, _, checks, keywords = STAGES[stage]
    v = drill.judge_fault(results, [node], checks, keywords)
    others = sorted({c.get("host") for c in results.get("checks") or [] if c.get("status") in ("fail", "error")
                     and not drill.check_about(c.get("host"), [node]) and not _pod_wide(c.get("host"))})
    return {"found": v.ok, "top": v.top, "why": v.why, "false_alarms": others}


def render(rows: Sequence[Dict[str, Any]]) -> str:
    lines = ["| stage | NIC shaped | peers reach | shaped to | found | top finding | false alarms | s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s %s | %s | %s | %s | %s | %s | %.0f |" % (
            r["stage"], r["node"], r["nic"], "%.2f Gb/s" % r["peers_gbps"] if r.get("peers_gbps") else "-",
            ("%d %% (%d Mbit/s)" % (round(100 * r["fraction"]), r["mbit"])) if r.get("fraction") else "healthy",
            "yes" if r["found"] else "no", drill._cell(r["top"], 90), ", ".join(r["false_alarms"]) or "none",
            r["seconds"]))
    return "\n".join(lines) + "\n"


def smallest_found(rows: Sequence[Dict[str, Any]], stage: str) -> Optional[float]:
    """The mildest slowdown found: the largest fraction at which the stage found the NIC, provided it also found
    every stronger one (a fraction found only by luck below a missed one does not count)."""
    tried = sorted(((r["fraction"], r["found"]) for r in rows if r["stage"] == stage and r.get("fraction")),
                   reverse=True)
    best = None
    for frac, found in reversed(tried):  # from the strongest slowdown up
        if not found:
            break
        best = frac
    return best


def update_doc(text: str, table: str, when: str, summary: str) -> str:
    return drill.replace_section(text, BEGIN, END, "Latest run: %s. %s\n\n%s" % (when, summary, table),
                                 "Sensitivity (`scripts/sensitivity.py`)")


# --------------------------------------------------------------------------- running it

def _shape(node: str, nic: str, mbit: Optional[int]) -> None:
    args = ["--rate", "%dmbit" % mbit] if mbit else ["--clear"]
    subprocess.run([PODSIM, "shape", node, nic] + args, cwd=REPO, check=True, capture_output=True)


def _run(stage: str, node: str, nic: str, fraction: Optional[float], peers: Optional[float]) -> Dict[str, Any]:
    tags = STAGES[stage][0]
    mbit = int(round(fraction * peers * 1000)) if fraction else None
    t0, since = time.monotonic(), time.time()
    if mbit:
        _shape(node, nic, mbit)
    try:
        rc = drill.run_playbook(["ansible-playbook", "validate.yml", "--tags", ",".join(tags)])
    finally:
        if mbit:
            _shape(node, nic, None)
    results = drill.read_results(since)
    row = {"stage": stage, "node": node, "nic": nic, "fraction": fraction, "mbit": mbit, "peers_gbps": peers,
           "rc": rc, "seconds": time.monotonic() - t0}
    if fraction:
        row.update(judge(results, stage, node, nic))
    else:
        v = drill.judge_healthy(results, rc)
        row.update(found=v.ok, top=v.top, why=v.why, false_alarms=[] if v.ok else ["(healthy run failed)"])
        row["results"] = results
    return row


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stages", nargs="+", default=["network", "nccl"], choices=sorted(STAGES))
    ap.add_argument("--fractions", nargs="+", type=float, default=[0.8, 0.7, 0.6, 0.5, 0.4])
    ap.add_argument("--no-doc", action="store_true", help="print the table, leave docs/validation.md alone")
    args = ap.parse_args(argv)
    if any(not 0 < f < 1 for f in args.fractions):
        ap.error("fractions must be between 0 and 1 (exclusive)")
    os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
    rows: List[Dict[str, Any]] = []
    for stage in args.stages:
        node, nic = STAGES[stage][1]
        healthy = _run(stage, node, nic, None, None)
        peers = peers_rate_gbps(healthy.pop("results"), stage, node, nic)
        healthy["peers_gbps"] = peers
        rows.append(healthy)
        print(render(rows[-1:]).splitlines()[-1], flush=True)
        if peers is None:
            print("sensitivity: %s: the healthy run measured nothing to compare with; skipped" % stage)
            continue
        for f in sorted(args.fractions, reverse=True):
            rows.append(_run(stage, node, nic, f, peers))
            print(render(rows[-1:]).splitlines()[-1], flush=True)
    parts = []
    for stage in args.stages:
        best = smallest_found(rows, stage)
        parts.append("%s: found down to %s" % (stage, ("%d %% of the peers' rate" % round(100 * best))
                                                    if best else "none of the fractions tried"))
    summary = "; ".join(parts) + "."
    table = render(rows)
    print(table + summary)
    if not args.no_doc:
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        with open(DOC) as fh:
            text = fh.read()
        with open(DOC, "w") as fh:
            fh.write(update_doc(text, table, when, summary))
    return 0 if all(r["found"] and not r["false_alarms"] for r in rows if not r.get("fraction")) else 1


if __name__ == "__main__":
    sys.exit(main())
