#!/usr/bin/env python3
"""Side by side on the pod-in-a-box: the pod_train module against the same training job started by hand,
in the same run (issue 15: "within 5%"; results in docs/validation.md "Training").

    ansible-playbook validate.yml --tags training     # once: the dataset, and the command the module ran
    scripts/compare_training_by_hand.py [--rounds 3] [--tolerance 0.05]

Module runs are `ansible-playbook validate.yml --tags training` (the pod_train module over SSH, as in
validation; its warm pass's images/s from results.json); hand runs are the command that warm pass ran
(`measurements.training.passes.warm.argv`) started in the launcher node (`podsim exec`). They alternate
(module, hand, hand, module, ...); the hand runs' DGXPOD_TRAIN lines are read with json.loads here, not
with the toolkit's parser. Both are warm passes (the files are in the page cache).
Compares the medians of the pod's images/s; exit 1 when they differ by more than --tolerance.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODSIM = os.path.join(ROOT, "sim", "podsim")
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
RESULTS = os.path.join(ROOT, "results", "pod-in-a-box", "latest", "results.json")


def env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                PATH=VENV_BIN + ":" + os.environ["PATH"])


def warm_pass():
    with open(RESULTS) as fh:
        return json.load(fh)["measurements"]["training"]["passes"]["warm"]


def by_module():
    p = subprocess.run(["ansible-playbook", "validate.yml", "--tags", "training"], cwd=ROOT,
                       env=dict(env(), ANSIBLE_STDOUT_CALLBACK="default"), capture_output=True, text=True,
                       timeout=1200)
    warm = warm_pass()
    if p.returncode != 0 or not warm.get("ok"):
        raise SystemExit("module run failed: %s" % (warm.get("error") or p.stdout[-1500:]))
    return warm["summary"]["images_per_s"]


def by_hand(launcher, argv):
    p = subprocess.run([PODSIM, "exec", launcher, "--"] + argv, cwd=ROOT, capture_output=True, text=True,
                       timeout=900)
    recs = [json.loads(line.split(" ", 1)[1]) for line in p.stdout.splitlines() if line.startswith("DGXPOD_TRAIN ")]
    if p.returncode != 0 or not recs or len(recs) != recs[0]["world"]:
        raise SystemExit("hand run failed (rc %s): %s" % (p.returncode, (p.stdout + p.stderr)[-1500:]))
    return sum(r["images"] / r["seconds"] for r in recs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    warm = warm_pass()
    launcher = json.load(open(RESULTS))["measurements"]["training"]["nodes"][0]
    mod, hand = [], []
    for i in range(a.rounds):
        order = ("module", "hand") if i % 2 == 0 else ("hand", "module")
        for what in order:
            if what == "module":
                mod.append(by_module())
            else:
                hand.append(by_hand(launcher, warm["argv"]))
            print("round %d %s: %.1f images/s" % (i + 1, what, (mod if what == "module" else hand)[-1]), flush=True)
    m, h = statistics.median(mod), statistics.median(hand)
    diff = (m - h) / h
    # the two runs of a round ran back to back, under the same load: their ratio, round by round
    paired = statistics.median(x / y - 1 for x, y in zip(mod, hand, strict=True))
    print("module %s, by hand %s images/s; medians %.1f vs %.1f: %+.1f%% (round by round: median %+.1f%%)"
          % (", ".join("%.1f" % v for v in mod), ", ".join("%.1f" % v for v in hand), m, h, 100 * diff,
             100 * paired))
    return 0 if abs(diff) <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
