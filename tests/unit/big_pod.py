"""A valid N-DGX pod generated from the 004 reference (inventories/dgxpod), for preflight at scale.

The 004 fabrics are /24s (254 addresses), so the generated pod keeps their names, kinds, MTUs and RoCE mode but
gives each a /16 of its own; the DGX and the 8 Isilon nodes keep 004's NIC names and RDMA devices; every data NIC
is cabled whole to a port of an Arista 7260CX3-64 (64 ports each, as many switches as needed). Host files are
written like the reference (one host_vars file per host).

Run as a script to time preflight on it (before/after numbers in docs/preflight.md):
    python tests/unit/big_pod.py [--dgx 300] [--mistake none|speed|duplicate-key|group-pfc]
"""
from __future__ import annotations

import os
import shutil
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "..", "..", "inventories", "dgxpod")
# 004 fabric -> the /16 it gets here (second octet), the third octet of the gateway
NETS = {"data-5": 105, "data-12": 112, "data-66": 166, "data-139": 139}
PORTS_PER_SWITCH = 64


def _addr(fabric: str, n: int) -> str:
    """n-th address of a generated fabric: 10.<net>.<1 + n // 200>.<n % 200 + 1> (never .0, .255 or a gateway)."""
    return "10.%d.%d.%d" % (NETS[fabric], 1 + n // 200, n % 200 + 1)


def generate(dest: str, dgx: int = 300) -> str:
    """Write the pod into ``dest``/bigpod; return the inventory directory."""
    inv = os.path.join(dest, "bigpod")
    os.makedirs(os.path.join(inv, "host_vars"))
    os.makedirs(os.path.join(inv, "group_vars", "all"))
    shutil.copy(os.path.join(REF, "group_vars", "dgx.yml"), os.path.join(inv, "group_vars", "dgx.yml"))
    with open(os.path.join(REF, "group_vars", "all", "pod.yml"), encoding="utf-8") as fh:
        pod = yaml.safe_load(fh)
    pod["pod"]["name"] = "bigpod"
    for fab in pod["pod"]["fabrics"]:
        if fab["name"] in NETS:
            fab["subnet"] = "10.%d.0.0/16" % NETS[fab["name"]]
            if fab.get("gateway"):
                fab["gateway"] = "10.%d.0.1" % NETS[fab["name"]]
    _dump(os.path.join(inv, "group_vars", "all", "pod.yml"), pod)

    ports = iter(range(10 ** 6))

    def cable() -> dict:
        n = next(ports)
        return {"switch": "data-sw%d" % (n // PORTS_PER_SWITCH + 1), "switch_port": "Ethernet%d/1" % (
            n % PORTS_PER_SWITCH + 1)}

    with open(os.path.join(REF, "host_vars", "DGX1-1.yml"), encoding="utf-8") as fh:
        dgx_nics = yaml.safe_load(fh)["nics"]
    hosts = {"dgx": {}, "storage": {}, "switches": {}}
    for i in range(dgx):
        name = "DGX-%d" % (i + 1)
        nics = []
        for nic in dgx_nics:
            nics.append(dict(nic, address=_addr(nic["fabric"], i), **cable()))
        hosts["dgx"][name] = {"ansible_host": _addr("data-66", i)}
        _dump(os.path.join(inv, "host_vars", name + ".yml"), {"nics": nics})
    for k in range(8):
        name = "isilon-%d" % (k + 1)
        with open(os.path.join(REF, "host_vars", name + ".yml"), encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
        for nic in data["nics"]:
            if nic["fabric"] in NETS:
                nic.update(address=_addr(nic["fabric"], 10000 + k), **cable())
        hosts["storage"][name] = {"ansible_host": data["nics"][-1]["address"]}
        _dump(os.path.join(inv, "host_vars", name + ".yml"), data)
    for s in range(next(ports) // PORTS_PER_SWITCH + 1):
        name = "data-sw%d" % (s + 1)
        hosts["switches"][name] = {"ansible_host": "10.55.67.%d" % (100 + s)}
        _dump(os.path.join(inv, "host_vars", name + ".yml"),
              {"switch": {"platform": "eos", "model": "7260CX3-64", "mtu": 9214}})
    _dump(os.path.join(inv, "hosts.yml"), {"all": {"children": {g: {"hosts": h} for g, h in hosts.items()}}})
    return inv


def add_mistake(inv: str, mistake: str) -> None:
    """Copy one mistake into every DGX (or set it once for all of them in group_vars)."""
    files = sorted(f for f in os.listdir(os.path.join(inv, "host_vars")) if f.startswith("DGX-"))
    if mistake == "group-pfc":
        with open(os.path.join(inv, "group_vars", "dgx.yml"), "a", encoding="utf-8") as fh:
            fh.write("dgx_network_pfc_priority: 4\n")
        return
    for f in files:
        path = os.path.join(inv, "host_vars", f)
        if mistake == "speed":  # every DGX's enp12s0 faster than its switch port
            with open(path, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
            data["nics"][1]["speed"] = 400
            _dump(path, data)
        elif mistake == "duplicate-key":  # every DGX file sets nics twice (Ansible keeps the second)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text.replace("---\n", "", 1))
        elif mistake != "none":
            raise ValueError(mistake)


def _dump(path: str, data) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("---\n")
        yaml.safe_dump(data, fh, sort_keys=False)


def timed_preflight(inv: str):
    """(findings, seconds to read the inventory with Ansible, seconds of pod_preflight.run)."""
    from inventory_util import PROFILES, hostvars
    import pod_preflight
    t0 = time.perf_counter()
    hv = hostvars(inv)
    t1 = time.perf_counter()
    host_pfc = {h: v["dgx_network_pfc_priority"] for h, v in hv.items()
                if "dgx" in v["group_names"] and "dgx_network_pfc_priority" in v}
    findings, _ = pod_preflight.run(hv, [inv], PROFILES, 3, host_pfc_priorities=host_pfc)
    return findings, t1 - t0, time.perf_counter() - t1


if __name__ == "__main__":
    import argparse
    import tempfile
    root = os.environ.get("POD_CODE_ROOT", os.path.join(HERE, "..", ".."))  # time another checkout's code
    import tomllib
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:  # the import path pytest would set for the root
        pythonpath = tomllib.load(fh)["tool"]["pytest"]["ini_options"].get("pythonpath", [])
    sys.path[:0] = [os.path.join(root, p) for p in pythonpath] + [os.path.join(root, "tests"), HERE]
    parser = argparse.ArgumentParser()
    parser.add_argument("--dgx", type=int, default=300)
    parser.add_argument("--mistake", default="none", choices=["none", "speed", "duplicate-key", "group-pfc"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inv = generate(tmp, args.dgx)
        add_mistake(inv, args.mistake)
        found, read_s, run_s = timed_preflight(inv)
        errs = [f for f in found if f.severity == "error"]
        print("%d DGX, mistake %s: %d error(s), %d warning(s); Ansible reads the inventory in %.1f s, "
              "pod_preflight.run %.1f s" % (args.dgx, args.mistake, len(errs), len(found) - len(errs), read_s, run_s))
        for f in errs[:3]:
            print("  " + f.format()[:400])
