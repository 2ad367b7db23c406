#!/usr/bin/env python3
"""Compare two validation runs: every measurement of run B against run A (the baseline), as
``-e pod_baseline=<A>`` makes the report of a run do (module_utils/report/baseline.py, docs/validation.md "Baseline
and regressions").

    scripts/compare_runs.py results/<pod>/<baseline run> results/<pod>/latest [--tolerance link_perf=0.15] [--json]

A and B: a run directory (or its ``latest``/``baseline`` link) or a results.json. Prints the ``baseline_model``
line (same pod model, changed - then nothing is compared - or not known), every regression (a measurement worse
than A's by more than its tolerance, naming the link, node or job) and the count. Tolerances: B's
``expectations.regression`` (the profile's and the pod's, as B was judged) unless ``--tolerance <check or
category>=<fraction>`` says otherwise; 10 % by default. ``--json``: the checks as results.json entries.
Exit status: 0 no regression, 1 regressions, 2 not compared (a run unreadable, the model changed, another pod)."""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.baseline import (compare,  # noqa: E402
                                                                                     read_results, summary_lines)


def tolerance_arg(text: str):
    """``<check or category>=<fraction>``."""
    key, _, value = text.partition("=")
    try:
        return key.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%r: write <check or category>=<fraction>, e.g. link_perf=0.15"
                                         % text) from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("baseline", help="run A: the baseline (a run directory or its results.json)")
    ap.add_argument("current", help="run B: compared with A")
    ap.add_argument("--tolerance", type=tolerance_arg, action="append", default=[],
                    help="<check or category>=<fraction> (repeatable): over B's expectations.regression")
    ap.add_argument("--json", action="store_true", help="print the checks as results.json entries")
    args = ap.parse_args(argv)
    try:
        base = read_results(args.baseline)
        current = read_results(args.current)
    except ValueError as exc:
        print("compare_runs: %s" % exc, file=sys.stderr)
        return 2
    block = dict((current.get("expectations") or {}).get("regression") or {})
    block.update({k: {"value": v, "source": "compare_runs.py --tolerance"} for k, v in args.tolerance})
    results = compare(current, base, block, args.baseline)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=1))
    else:
        print("\n".join(summary_lines(results)))
    if any(r.status == "error" for r in results):
        return 2
    return 1 if any(r.status == "fail" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
