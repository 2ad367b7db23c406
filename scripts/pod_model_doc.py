#!/usr/bin/env python3
"""The reference tables of docs/pod-model.md, generated from the schema (module_utils/preflight/schema.py) and the
switch catalogue (module_utils/catalog/switches.py), so the document cannot drift from what preflight checks.

    scripts/pod_model_doc.py            rewrite the generated tables in docs/pod-model.md
    scripts/pod_model_doc.py --check    exit 1 (naming the table) if the document is not current

Types, choices, ranges and "required" come from the schema; the meaning column comes from MEANINGS below,
and a key the schema has without a meaning (or a meaning for a key the schema lacks) is an error.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the collection's module_utils: ansible_collections.dgxpod.toolkit...

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (SWITCH_MODELS,  # noqa: E402
    ib_link, ib_port_number)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import (FABRIC_SCHEMA, NIC_SCHEMA,  # noqa: E402
    POD_SCHEMA, SLURM_SCHEMA, STORAGE_NODE_SCHEMA, STORAGE_SCHEMA, SWITCH_SCHEMA, Field)

DOC = os.path.join(ROOT, "docs", "pod-model.md")
TABLES = {"pod": POD_SCHEMA, "fabric": FABRIC_SCHEMA, "storage": STORAGE_SCHEMA, "nic": NIC_SCHEMA,
          "storage_node": STORAGE_NODE_SCHEMA, "switch": SWITCH_SCHEMA, "slurm": SLURM_SCHEMA}
NAMED = {id(FABRIC_SCHEMA): "fabric", id(NIC_SCHEMA): "NIC"}
KINDS = {"str": "str", "int": "int", "bool": "bool", "ipv4": "IPv4", "cidr": "CIDR", "ipv4if": "A.B.C.D/M",
         "list": "list", "dict": "dict", "any": "any"}

MEANINGS = {
    "fabric": {
        "carries": ("what traffic the fabric is for (004: every data fabric carries compute; two of them also "
                    "storage)"),
        "gateway": "gateway inside `subnet`; a NIC with `default_route: true` uses it",
        "ipoib_mode": "InfiniBand only",
        "kind": "link layer",
        "mtu": "host MTU (Ethernet/RoCE 9000 in the RAs; IPoIB ≤ 4092 datagram, ≤ 65520 connected)",
        "name": "unique name, referred to by NICs (`data-66`, `ib-compute-0`, `mgmt`)",
        "roce": "Ethernet only: PFC priority 3 + DSCP trust on hosts and switch ports",
        "subnet": "IPv4 subnet; every address on the fabric must lie inside it",
    },
    "nic": {
        "address": "static address; prefix and MTU come from the fabric",
        "default_route": "this NIC carries the default route (via its fabric's gateway); at most one per host",
        "fabric": "a `pod.fabrics[].name`",
        "mtu": "overrides the fabric MTU for this NIC (rarely right; preflight checks it against the switch port)",
        "name": "kernel name (`enp5s0`) or the storage OS's name (`40gige-1`)",
        "rdma_device": "RDMA device behind the port (`mlx5_0`); DGX data NICs have one",
        "speed": "port speed (DGX-1: 100, F800 front end: 40, HDR: 200)",
        "switch": "the switch (inventory name) this port is cabled to",
        "switch_port": "the switch port, as the switch names it (`Ethernet1/1`, `swp1`, `1/1`)",
    },
    "pod": {
        "domain": "DNS domain appended in `/etc/hosts` entries",
        "fabrics": "the L3 networks of the pod (see below)",
        "hosts_fabric": ("fabric whose address a host name resolves to (`/etc/hosts`, MPI, NCCL socket "
                         "interface); default: the default-route NIC's fabric, else the first compute fabric"),
        "name": "pod name, used in reports and file names",
        "ra_profile": "one of the profiles in `profiles/` (e.g. `isilon-f800-dgx1`)",
        "simulated": "true only for the pod-in-a-box; reports then say so on their first line",
        "storage": "how DGX nodes reach storage (see below)",
    },
    "storage": {
        "data_mount_prefix": "data mounts are `<prefix>1..N`",
        "data_mounts": "N data mounts per DGX (004: 16)",
        "data_options": ("NFS options of the data mounts (default: the profile's `nfs.data_mount_options`, "
                         "004: `rsize=524288,wsize=524288,nolock`)"),
        "export": "NFS export path (Isilon: `/ifs`) or Scale file system name",
        "fsc": "FS-Cache: adds `fsc` to every NFS mount and runs `cachefilesd` (004: off by default)",
        "nconnect": "adds `nconnect=N` to the data mounts (TCP connections per mount, Linux ≥ 5.3)",
        "protocol": "how DGX nodes mount storage",
        "scale": ("Spectrum Scale only (required with `protocol: spectrum-scale`): `cluster_name` (str, "
                  "required), `contact_node` (str, required: a host of group `storage` already in the cluster;"
                  " join commands run there), `filesystems` (list of str, default `[export]`), `verbs_port` "
                  "(int, default 1). See [spectrum-scale.md](spectrum-scale.md)"),
        "scripts_mount": "mount point for scripts/logs (default NFS options, needs locks)",
        "scripts_options": "NFS options of the scripts mount (default: the RA profile's `nfs.scripts_mount_options`)",
        "scripts_server": ("storage address of the scripts mount (default: the first storage address on the "
                           "hosts fabric, 004's 10.55.66.211)"),
    },
    "storage_node": {
        "model": "`F800`, `ESS3000`, … (informational, used by sizing)",
        "platform": "the storage OS (`nfs-ganesha` is the simulator's stand-in for an Isilon node)",
    },
    "switch": {
        "model": "a model from the catalogue below; defines which ports exist, their top speed and the largest MTU",
        "mtu": "MTU of host-facing ports (default: the model's maximum, e.g. 9214 on EOS)",
        "platform": "CLI / OS family; selects templates and the netmiko device type",
        "port_channels": "inter-switch links (004: Port-Channel10 over Ethernet31/1, Ethernet32/1, LACP active)",
        "ports": ("per-port overrides; `vlan`: the port's access VLAN (declared in `vlans`); `address`: a "
                  "routed port's `A.B.C.D/M` (EOS, Cumulus) - see docs/switches.md"),
        "routes": "static routes (004: `0.0.0.0/0` via `10.55.67.1`)",
        "vlans": ("VLANs of an Ethernet switch; `address`: the switch's SVI `A.B.C.D/M`. None in the reference"
                  " pods (004 needs no VLANs)"),
    },
}
# Slurm as the pod's scheduler (issue 20, docs/slurm.md).
MEANINGS["pod"]["scheduler"] = "`slurm` deploys Slurm (roles/slurm) with `pod.slurm`; default `none`"
MEANINGS["pod"]["slurm"] = "the Slurm cluster when `scheduler: slurm` (see below)"
MEANINGS["slurm"] = {
    "controller": "the DGX (inventory name) that runs slurmctld; `SlurmctldHost=<name>(<its hosts-fabric address>)`",
    "partition": "the partition holding every DGX (default `dgx`)",
    "cluster_name": "Slurm's `ClusterName` (default: the pod name, lower case)",
    "mpi_default": "`MpiDefault` (default `none`: jobs start `mpirun` themselves, as validate.yml does)",
    "proctrack": ("`ProctrackType` (default `linuxproc`: needs neither systemd nor cgroups; `cgroup` on nodes "
                  "that run systemd)"),
    "slurmctld_port": "default 6817",
    "slurmd_port": "default 6818",
}
# Keys the old hand-written tables did not have (found when the tables became generated).
MEANINGS["pod"]["validation"] = ("expectation overrides and sizing inputs for validate.yml (`expectations`, "
                                 "`workload`, `dataset_tb`, `caches_tb`; nothing else is read: a threshold goes "
                                 "under `expectations.<category>`; docs/validation.md)")
# InfiniBand fabric validation (issue 40 item 3, validate.yml --tags ib; docs/validation.md).
MEANINGS["fabric"]["pkeys"] = ("InfiniBand only: partition keys (`0x0001`..`0x7fff`, the 15-bit key) every HCA port of "
                               "the fabric must hold (`ib_pkey`; the default partition is `0x7fff`)")
MEANINGS["nic"]["port_guid"] = ("InfiniBand only: the HCA port's GUID (`0x` + 16 hex digits, ibstat's `Port GUID`); "
                                "given, the IB stage names the HCA by it instead of its node description")
MEANINGS["switch"]["guid"] = ("InfiniBand switches: the node GUID (`0x` + 16 hex digits, ibnetdiscover's "
                              "`switchguid`); given, the IB stage names the switch by it instead of its node "
                              "description (`MF0;<name>:MQM8700/U1`)")
MEANINGS["switch"]["raw_cli"] = ("lines appended verbatim to the rendered config: the escape hatch for what the model "
                                 "lacks (e.g. 004's `transceiver qsfp default-mode 4x10G`; docs/switches.md)")


def _shape(spec) -> str:
    if isinstance(spec, dict):
        return NAMED.get(id(spec)) or "{%s}" % ", ".join("`%s`" % k for k in spec)
    return type_text(spec)


def type_text(f: Field) -> str:
    if f.choices:
        text = " \\| ".join("`%s`" % c for c in f.choices)
        return ("list of " + text) if f.kind == "list" else text
    if f.kind == "list" and f.item is not None:
        return "list of " + _shape(f.item)
    if f.kind == "dict" and f.values is not None:
        return "dict key → " + _shape(f.values)
    text = KINDS.get(f.kind, f.kind)
    if f.kind == "int" and (f.minimum is not None or f.maximum is not None):
        text += " %s–%s" % ("" if f.minimum is None else f.minimum, "" if f.maximum is None else f.maximum)
    return text


def table(name: str) -> str:
    schema, words = TABLES[name], MEANINGS[name]
    missing = [k for k in schema if k not in words]
    extra = [k for k in words if k not in schema]
    if missing or extra:
        raise SystemExit("pod-model doc, table %s: keys without a meaning %s, meanings without a key %s "
                         "(edit MEANINGS in %s)" % (name, missing, extra, os.path.relpath(__file__, ROOT)))
    rows = ["| key | type | required | meaning |", "|---|---|---|---|"]
    for key, f in schema.items():
        rows.append("| `%s` | %s | %s | %s |" % (key, type_text(f), "yes" if f.required else "no", words[key]))
    return "\n".join(rows)


def _ib_words(m) -> str:
    """An IB switch's link (4X HDR) and how its last port name maps to the IB port number the fabric tools print."""
    link = ib_link(m)
    if link is None:
        return "-"
    return "%s %s; `%s` = IB port %d" % (link[0], link[1], m.ports[-1], ib_port_number(m, m.ports[-1]))


def catalogue() -> str:
    rows = ["| model | platform | ports | top speed (Gb/s) | max MTU | InfiniBand link | source |",
            "|---|---|---|---|---|---|---|"]
    for name, m in SWITCH_MODELS.items():
        rows.append("| `%s` | %s | `%s` … `%s` (%d) | %d | %s | %s | %s |" % (
            name, m.platform, m.ports[0], m.ports[-1], len(m.ports), m.top_speed,
            m.max_mtu if m.max_mtu else "(IB)", _ib_words(m), m.source))
    return "\n".join(rows)


def render(text: str) -> str:
    def repl(m):
        name = m.group(1)
        body = catalogue() if name == "switch-catalogue" else table(name)
        return "%s\n%s\n%s" % (m.group(0).split("\n", 1)[0], body, END)
    return BLOCK.sub(repl, text)


START = "<!-- generated by scripts/pod_model_doc.py: %s -->"
END = "<!-- end of generated table -->"
BLOCK = re.compile(r"<!-- generated by scripts/pod_model_doc.py: ([\w-]+) -->\n.*?" + re.escape(END), re.S)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/pod-model.md is not current")
    args = ap.parse_args(argv)
    with open(DOC) as fh:
        text = fh.read()
    want = render(text)
    names = BLOCK.findall(text)
    if sorted(names) != sorted(list(TABLES) + ["switch-catalogue"]):
        print("docs/pod-model.md has generated blocks %s, expected %s" % (names, list(TABLES) + ["switch-catalogue"]))
        return 1
    if args.check:
        if want != text:
            print("docs/pod-model.md is not current: run scripts/pod_model_doc.py")
            return 1
        return 0
    if want != text:
        with open(DOC, "w") as fh:
            fh.write(want)
        print("docs/pod-model.md: tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
