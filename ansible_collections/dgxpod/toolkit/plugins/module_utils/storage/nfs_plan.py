# -*- coding: utf-8 -*-
"""NFS mount plan from the pod model (docs/nfs-client.md) - pure functions, stdlib only.

004 "Isilon volume mounting": one scripts/logs mount with default options (it needs NFS locks) and many
data mounts, each to a different storage IP, with ``rsize=524288,wsize=524288,nolock``; at least two
mounts per storage interface (one mount reads ~2,500 MB/s, half a 40 GbE link); every MPI rank picks
its data directory by ``rank % number_of_mounts``.

The plan, for every DGX:

* **Endpoints** - every storage-node address on a fabric that carries storage and that the DGX has a
  NIC on.  They are ordered *diagonally*: storage node j starts with its (j mod F)-th storage fabric,
  and the list takes one address from each node in turn.  On 004 (8 Isilon nodes x 2 fabrics) any 8
  consecutive endpoints are 8 different storage nodes, half of them on each DGX NIC - so the 8 ranks
  of one DGX-1, using 8 consecutive mounts, spread over every storage node and both of its storage
  NICs.  (004's own listing, isilon1-8 on 10.55.66.x then isilon9-16 on 10.55.5.x, would send all
  8 ranks of a DGX-1 through one NIC.)
* **Data mounts** - host h (its position in the dgx group) mounts endpoints
  ``(h * N + m) mod L`` for m = 0..N-1 (N data mounts, L endpoints).  Consecutive hosts continue where
  the previous one stopped, so pod-wide every endpoint carries floor or ceil of H*N/L mounts (max - min
  <= 1) and hosts start at different offsets whenever N is not a multiple of L.
* **Scripts mount** - one mount with the scripts options to ``storage.scripts_server`` or the first
  endpoint on the hosts fabric (004: 10.55.66.211).

Mount sources depend on the client: ``kernel`` (real pods) -> ``IP:/export`` type ``nfs``;
``fuse`` (a userspace NFS client installed as a ``mount.fuse`` helper, named by ``fuse_helper``; the
simulator uses one as its stand-in for the kernel client) -> ``nfs://IP/export`` type ``fuse.<helper>``.
Everything else (paths, servers, options) is the same.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod

CLIENT_TYPES = {
    "kernel": {"fstype": "nfs", "src": "{ip}:{export}"},
    "fuse": {"fstype": "fuse.{helper}", "src": "nfs://{ip}{export}"},
}
# Options that never show in /proc/mounts (mount(8)/fstab-only), so verification does not look for them.
USERSPACE_OPTIONS = {"defaults", "_netdev", "nofail", "auto", "noauto", "user", "users", "nouser", "owner",
                     "bg", "fg", "retry"}


class PlanError(ValueError):
    """The model cannot produce a mount plan; the message says why and what to change."""


def endpoints(pod: Pod, dgx_fabrics: Optional[List[str]] = None, first: Optional[str] = None
              ) -> List[Dict[str, Any]]:
    """Storage addresses a DGX can mount, in the diagonal order described in the module docstring.

    ``dgx_fabrics``: the fabrics the DGX has NICs on (None: no restriction); ``first``: the fabric
    that comes first (the DGX's hosts fabric)."""
    fabs = pod.storage_fabrics(first)
    if dgx_fabrics is not None:
        fabs = [f for f in fabs if f in dgx_fabrics]
    rank = {f: i for i, f in enumerate(fabs)}
    queues = []
    for j, node in enumerate(pod.storage_nodes):
        nics = [n for n in node.nics if n.fabric.name in rank]
        nics.sort(key=lambda n: rank[n.fabric.name])  # stable: NIC order within a fabric is kept
        if nics:
            k = j % len(nics)
            nics = nics[k:] + nics[:k]
        queues.append([{"ip": n.address, "storage_host": node.name, "storage_nic": n.name,
                        "fabric": n.fabric.name} for n in nics])
    out = []
    depth = max((len(q) for q in queues), default=0)
    for i in range(depth):
        for q in queues:
            if i < len(q):
                out.append(q[i])
    return out


def _options(value: Any) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        items = str(value).split(",")
    return [o.strip() for o in items if o.strip()]


def _join(opts: List[str]) -> str:
    seen, out = set(), []
    for o in opts:
        key = o.split("=", 1)[0]
        if key in seen:  # a later value wins
            out = [x for x in out if x.split("=", 1)[0] != key]
        seen.add(key)
        out.append(o)
    real = [o for o in out if o != "defaults"]
    return ",".join(real) if real else "defaults"


def mount_options(storage: Dict[str, Any], profile_nfs: Dict[str, Any]) -> Dict[str, str]:
    """{'scripts': opts, 'data': opts}: the RA profile's options, then the pod's overrides, then the
    documented extras (nconnect=N for data mounts, fsc for both when FS-Cache is on)."""
    scripts = _options(storage.get("scripts_options", profile_nfs.get("scripts_mount_options", "defaults")))
    data = _options(storage.get("data_options", profile_nfs.get("data_mount_options", "defaults")))
    if storage.get("nconnect"):
        data.append("nconnect=%d" % int(storage["nconnect"]))
    if storage.get("fsc"):
        scripts.append("fsc")
        data.append("fsc")
    return {"scripts": _join(scripts), "data": _join(data)}


def mount_plan(pod: Pod, host: str, profile_nfs: Optional[Dict[str, Any]] = None,
               client: str = "kernel", fuse_helper: str = "") -> Dict[str, Any]:
    """The NFS mounts of one DGX: {'mounts': [...], 'endpoints': [...], 'warnings': [...]}.

    Each mount: path, kind (scripts|data), index (data: 1..N), ip, export, src, fstype, opts,
    storage_host, storage_nic, fabric, via_nic (the DGX NIC on that fabric)."""
    storage = pod.storage
    if storage.get("protocol") != "nfs":
        return {"mounts": [], "endpoints": [], "warnings": []}
    if client not in CLIENT_TYPES:
        raise PlanError("unknown NFS client type '%s' (use one of: %s)" % (client, ", ".join(CLIENT_TYPES)))
    if client == "fuse" and not fuse_helper:
        raise PlanError("NFS client type 'fuse' needs the name of its mount.fuse helper (nfs_client_fuse_helper)")
    profile_nfs = profile_nfs or {}
    dgx = [h.name for h in pod.dgx]
    if host not in dgx:
        raise PlanError("%s is not in the dgx group; only DGX nodes mount the storage" % host)
    via: Dict[str, str] = {}
    for n in pod.host(host).nics:
        via.setdefault(n.fabric.name, n.name)
    first = pod.hosts_fabric(host)
    eps = endpoints(pod, list(via), first)
    if not eps:
        raise PlanError("%s has no NIC on a fabric where a storage node has an address (storage fabrics: %s)" % (
            host, ", ".join(pod.storage_fabrics()) or "none"))
    export = storage.get("export", "/ifs")
    n_data = int(storage.get("data_mounts") or profile_nfs.get("data_mounts") or 1)
    opts = mount_options(storage, profile_nfs)
    shape = CLIENT_TYPES[client]
    warnings = []

    def entry(ep, path, kind, index, options):
        return {"path": path, "kind": kind, "index": index, "ip": ep["ip"], "export": export,
                "src": shape["src"].format(ip=ep["ip"], export=export),
                "fstype": shape["fstype"].format(helper=fuse_helper),
                "opts": options, "storage_host": ep["storage_host"], "storage_nic": ep["storage_nic"],
                "fabric": ep["fabric"], "via_nic": via[ep["fabric"]]}

    mounts = []
    if storage.get("scripts_mount"):
        server = storage.get("scripts_server")
        if server:
            chosen = [e for e in eps if e["ip"] == server]
            if not chosen:
                raise PlanError("pod.storage.scripts_server %s is not a storage address %s can reach" % (server, host))
        else:
            chosen = [e for e in eps if e["fabric"] == first] or eps
        mounts.append(entry(chosen[0], storage["scripts_mount"], "scripts", 0, opts["scripts"]))
    prefix = storage.get("data_mount_prefix")
    if prefix:
        h = dgx.index(host)
        for m in range(n_data):
            ep = eps[(h * n_data + m) % len(eps)]
            mounts.append(entry(ep, "%s%d" % (prefix, m + 1), "data", m + 1, opts["data"]))
        total = len(dgx) * n_data
        if total < 2 * len(eps):
            warnings.append("%d data mounts pod-wide over %d storage addresses: fewer than the two per address "
                            "004 recommends (one NFS mount reads about half a 40 GbE link)" % (total, len(eps)))
    paths = [m["path"] for m in mounts]
    dup = sorted({p for p in paths if paths.count(p) > 1})
    if dup:
        raise PlanError("mount points used twice on %s: %s (scripts_mount and data_mount_prefix+N collide)" % (
            host, ", ".join(dup)))
    return {"mounts": mounts, "endpoints": eps, "warnings": warnings}


def rank_data_dir(rank: int, data_dirs: List[str]) -> str:
    """004 round robin: MPI rank r reads from data_dirs[r % len(data_dirs)]."""
    if not data_dirs:
        raise ValueError("no data directories")
    return data_dirs[int(rank) % len(data_dirs)]


def mount_of(mounts: Mapping[str, Any], path: str) -> Tuple[Optional[str], Mapping[str, Any]]:
    """The mount of ``mounts`` ({mount path: what it points at}) holding ``path`` (longest prefix) and what it points
    at; (None, {}) if none - which storage node a rank's data directory reaches."""
    best = max((p for p in mounts if path == p or path.startswith(p.rstrip("/") + "/")), key=len, default=None)
    return best, (mounts.get(best) or {}) if best is not None else {}


def parse_mount_options(text: str) -> Dict[str, Optional[str]]:
    """'rw,vers=3,nolock' -> {'rw': None, 'vers': '3', 'nolock': None}."""
    out: Dict[str, Optional[str]] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if item:
            key, sep, val = item.partition("=")
            out[key] = val if sep else None
    return out


ALIASES = {"nfsvers": "vers"}


def options_missing(planned: str, actual: str) -> List[str]:
    """Planned options that the mounted file system does not show (userspace-only ones are skipped).

    Kernel NFS shows ``vers=3`` for ``nfsvers=3`` and ``vers=4.2`` for ``vers=4``; both are accepted."""
    have = {ALIASES.get(k, k): v for k, v in parse_mount_options(actual).items()}
    missing = []
    for key, val in parse_mount_options(planned).items():
        k = ALIASES.get(key, key)
        if k in USERSPACE_OPTIONS or k.startswith("x-"):
            continue
        if k not in have:
            missing.append(key if val is None else "%s=%s" % (key, val))
        elif val is not None and have[k] != val and not (k == "vers" and (have[k] or "").startswith(val + ".")):
            missing.append("%s=%s (mounted with %s=%s)" % (key, val, k, have[k]))
    return missing


def parse_proc_mounts(text: str) -> List[Dict[str, str]]:
    """/proc/mounts (or the NFS stand-in's table in the same format) -> [{src, path, fstype, opts}]."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append({"src": _unescape(parts[0]), "path": _unescape(parts[1]), "fstype": parts[2],
                        "opts": parts[3]})
    return out


def _unescape(s: str) -> str:
    return (s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\"))


def effective_mounts(proc_mounts: str, mount_table: str = "") -> Dict[str, Dict[str, str]]:
    """{mount point: entry} of what is mounted now (the last mount on a path wins, as the kernel shows it).

    ``mount_table``: a userspace (FUSE) NFS client may record, per mount, the line the kernel NFS client
    would have put in /proc/mounts (the simulator's stand-in does, docs/simulator.md).  Such a line replaces
    the FUSE line of the same mount point - and only while that FUSE mount exists."""
    now: Dict[str, Dict[str, str]] = {}
    for m in parse_proc_mounts(proc_mounts):
        now[m["path"]] = m
    for m in parse_proc_mounts(mount_table):
        cur = now.get(m["path"])
        if cur and cur["fstype"].startswith("fuse."):
            now[m["path"]] = dict(m, fstype_real=cur["fstype"], src_real=cur["src"])
    return now


# The block of /etc/fstab the nfs_client role owns (library/pod_nfs_mounts.py writes it; validate.yml --tags
# drift compares it): one line per planned mount between these two lines.
FSTAB_BEGIN = "# BEGIN dgxpod nfs_client (managed by the pod toolkit: edit the inventory, not these lines)"
FSTAB_END = "# END dgxpod nfs_client"


def fstab_line(entry: Any) -> str:
    """One managed fstab line of a planned mount ({src, path, fstype, opts} or that tuple)."""
    if isinstance(entry, dict):
        entry = (entry["src"], entry["path"], entry["fstype"], entry["opts"])
    return "%s %s %s %s 0 0" % tuple(entry)


def fstab_block(mounts: List[Dict[str, Any]]) -> str:
    """The managed fstab block's lines for a mount plan (no markers, no final newline); "" for no mounts."""
    return "\n".join(fstab_line(m) for m in mounts)


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def mounted_now(mount_table: Optional[str] = None, proc_mounts: str = "/proc/mounts") -> Dict[str, Dict[str, str]]:
    """effective_mounts() of this host, read from /proc/mounts and a FUSE client's mount table (if given)."""
    return effective_mounts(_read(proc_mounts), _read(mount_table) if mount_table else "")


def server_of(entry: Dict[str, str]) -> Optional[str]:
    """The NFS server address of a mounted entry: 'IP:/export', 'nfs://IP/export' or addr=IP."""
    opts = parse_mount_options(entry.get("opts", ""))
    if opts.get("addr"):
        return opts["addr"]
    src = entry.get("src", "")
    if src.startswith("nfs://"):
        return src[6:].split("/", 1)[0]
    if ":" in src:
        return src.split(":", 1)[0]
    return None


def check_mounts(plan: List[Dict[str, Any]], mounted: Dict[str, Dict[str, str]]) -> List[Dict[str, Any]]:
    """Compare planned mounts with what is mounted: one result per planned mount
    {path, ip, ok, problem}."""
    out = []
    for p in plan:
        cur = mounted.get(p["path"])
        problem = None
        if cur is None:
            problem = "not mounted (planned %s from %s)" % (p["path"], p["ip"])
        elif cur["fstype"] not in ("nfs", "nfs4") and cur["fstype"] != p["fstype"]:
            problem = "%s is a %s mount of %s, not NFS from %s" % (p["path"], cur["fstype"], cur["src"], p["ip"])
        elif server_of(cur) != p["ip"]:
            problem = "%s is mounted from %s, planned %s" % (p["path"], server_of(cur), p["ip"])
        else:
            miss = options_missing(p["opts"], cur["opts"])
            if miss:
                problem = "%s from %s lacks option(s) %s" % (p["path"], p["ip"], ", ".join(miss))
        out.append({"path": p["path"], "ip": p["ip"], "kind": p["kind"], "ok": problem is None,
                    "problem": problem})
    return out
