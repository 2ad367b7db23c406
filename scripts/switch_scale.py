#!/usr/bin/env python3
"""Time switch config generation at fabric scale: structured config + rendered config for N switches.

    .venv/bin/python scripts/switch_scale.py [--switches 1000] [--repeat 3]

The model is the 004 reference pod (inventories/dgxpod: 9 DGX-1, 8 Isilon nodes, 2 Arista 7060CX2-32S)
copied N/2 times with every host renamed and every address moved to its own block (no network is contacted;
nothing is pushed). It prints seconds per switch for the structured config (module_utils/switch/model.py)
and for the rendered EOS text (module_utils/switch/render.py), and checks that one copy renders exactly as
the golden file of the reference pod (tests/golden/switches/dgxpod) - a speed-up that changed the output
would show there. Issue 19 asks for <= 0.05 s per switch; Arista AVD reports about 0.44 s per device.
"""
from __future__ import annotations

import argparse
import copy
import ipaddress
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))

from inventory_util import hostvars  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import model_from_hostvars  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.model import structured_configs  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.render import render  # noqa: E402


def _shift(addr: str, block: int) -> str:
    """Move a 10.55.x.y address to 10.(55 + block // 256).(x + block) - unique per copy, same host part."""
    ip = ipaddress.ip_address(addr)
    return str(ip + (block << 16)) if ip.version == 4 else addr


def replicate(model, copies: int):
    """The model with ``copies`` renamed copies of every host (switch references and addresses follow)."""
    hosts = model["hosts"]
    out = {"pod": model["pod"], "hosts": {}}
    for k in range(copies):
        rename = {name: name if k == 0 else "%s-c%d" % (name, k) for name in hosts}  # copy 0: the pod itself
        for name, h in hosts.items():
            h2 = copy.deepcopy(h)
            v = h2["vars"]
            for nic in v.get("nics") or []:
                if nic.get("switch"):
                    nic["switch"] = rename[nic["switch"]]
                if nic.get("address"):
                    nic["address"] = _shift(nic["address"], k)
            for pc in (v.get("switch") or {}).get("port_channels") or []:
                if pc.get("peer"):
                    pc["peer"] = rename.get(pc["peer"], pc["peer"])
            for port in ((v.get("switch") or {}).get("ports") or {}).values():
                if isinstance(port, dict) and port.get("peer") in rename:
                    port["peer"] = rename[port["peer"]]
            out["hosts"][rename[name]] = h2
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--switches", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings")
    args = ap.parse_args()
    base = model_from_hostvars(hostvars(os.path.join(ROOT, "inventories", "dgxpod")))
    per_copy = sum(1 for h in base["hosts"].values() if "switches" in h["groups"])
    copies = max(1, args.switches // per_copy)
    model = replicate(base, copies)
    switches = sorted(n for n, h in model["hosts"].items() if "switches" in h["groups"])
    best_s = best_r = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        structured = structured_configs(model)
        t1 = time.perf_counter()
        rendered = {sw: render(cfg) for sw, cfg in structured.items()}
        t2 = time.perf_counter()
        best_s, best_r = min(best_s, t1 - t0), min(best_r, t2 - t1)
    golden = os.path.join(ROOT, "tests", "golden", "switches", "dgxpod", "data-sw1.cfg")
    with open(golden) as fh:
        same = rendered["data-sw1"] == fh.read()
    n = len(switches)
    print("switches: %d (the 004 pod and %d renamed copies, %d hosts in all)" % (n, copies - 1, len(model["hosts"])))
    print("structured config: %.3f s in all, %.4f s per switch" % (best_s, best_s / n))
    print("rendered config:   %.3f s in all, %.4f s per switch" % (best_r, best_r / n))
    print("both:              %.4f s per switch (target <= 0.05)" % ((best_s + best_r) / n))
    print("the pod's own data-sw1 matches its golden file: %s" % ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
