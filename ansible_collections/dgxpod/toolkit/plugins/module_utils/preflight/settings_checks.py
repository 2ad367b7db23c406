# -*- coding: utf-8 -*-
"""Preflight of what lies beside the pod model (issue 46, classes 4, 5 and 7). Pure functions, stdlib only.

- ``check_settings``: role variables set in the inventory that the model contradicts - an NCCL environment naming
  HCAs no NIC of the host has, a container image with its tag pasted twice or an empty tag, Slurm daemons (or the
  container's sshd, the training rendezvous) on one port, a GPU count the DGX model does not have (``gpus``, ranks
  per node), ``simulated: true`` on an inventory whose hosts are not the simulator's.
- ``check_links``: what two ends of a link must agree on - a NIC MTU that differs from its fabric's, a lossless
  fabric cabled to no switch (warning), a fabric inside Docker's default bridge (warning), two NICs of one Linux
  storage server in one subnet (ESS canisters, nfs-ganesha nodes: the rule the DGX follows).
- ``misplaced_hosts``: a host in the wrong role group (a DGX under ``storage:``), named for what it looks like.

The port-channel checks (ids repeated on a switch, MLAG peer-link ends in different LACP modes) are the switch
checks' (``preflight/switch_checks.py``)."""
from __future__ import annotations

import difflib
import ipaddress
import re
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS, dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding, ip_of, natural_key

# Role variables the settings checks read (the play passes them as the module's ``settings``; a test's hostvars
# carry them already). Only what the inventory sets: a role default is the toolkit's own, and right.
SETTINGS_VARS = (
    "dgx_network_nccl_env_extra", "pod_training_env", "pod_nccl_env", "pod_nccl_mpirun_extra",
    "ngc_container_base_image", "ngc_container_base_tag", "ngc_container_image", "ngc_container_from",
    "ngc_container_ssh_port", "pod_training_master_port", "pod_training_ranks_per_node", "pod_nccl_ranks_per_node",
    "pod_training_job",
)
# The NCCL/MPI environments a user may set (each a mapping NAME: value, merged over the RA profile's nccl_env).
ENV_VARS = ("dgx_network_nccl_env_extra", "pod_training_env", "pod_nccl_env")

# The simulator's address range (sim/podsimlib: "only 198.18.0.0/15 addresses").
SIM_NET = ipaddress.ip_network("198.18.0.0/15")
# Docker's default bridge (docker0: 172.17.0.1/16) - dockerd takes it unless daemon.json sets "bip".
DOCKER_BRIDGE = ipaddress.ip_network("172.17.0.0/16")
# Storage platforms that are Linux hosts (their interfaces follow the kernel's rules, as a DGX's do); Isilon /
# PowerScale (OneFS) pools several ports in one subnet by design.
LINUX_STORAGE = ("ess3000", "nfs-ganesha")

# NCCL's documented variables (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and PyTorch's NCCL_*
# ones: a name close to one of these but not one is a misspelling that NCCL silently ignores.
NCCL_KNOWN = (
    "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "NCCL_IB_SL", "NCCL_IB_TC", "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT", "NCCL_IB_DISABLE", "NCCL_IB_CUDA_SUPPORT", "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE", "NCCL_IB_MERGE_VFS",
    "NCCL_IB_MERGE_NICS", "NCCL_NET_GDR_READ", "NCCL_NET_GDR_LEVEL", "NCCL_NET", "NCCL_NET_PLUGIN",
    "NCCL_NET_SHARED_BUFFERS", "NCCL_NET_SHARED_COMMS", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
    "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_NET_CHUNKSIZE", "NCCL_SHM_DISABLE", "NCCL_ALGO", "NCCL_PROTO",
    "NCCL_CROSS_NIC", "NCCL_NSOCKS_PERTHREAD", "NCCL_SOCKET_NTHREADS", "NCCL_SOCKET_FAMILY", "NCCL_BUFFSIZE",
    "NCCL_NTHREADS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE",
    "NCCL_IGNORE_CPU_AFFINITY", "NCCL_COLLNET_ENABLE", "NCCL_NVLS_ENABLE", "NCCL_LAUNCH_MODE", "NCCL_DMABUF_ENABLE",
    "NCCL_CUMEM_ENABLE", "NCCL_GRAPH_REGISTER", "NCCL_CHECK_POINTERS", "NCCL_COMM_BLOCKING", "NCCL_MAX_CTAS",
    "NCCL_MIN_CTAS", "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_TIMEOUT",
)
_IFACE_VARS = ("NCCL_SOCKET_IFNAME", "OMPI_MCA_btl_tcp_if_include", "GLOO_SOCKET_IFNAME", "OMPI_MCA_oob_tcp_if_include")
# A Docker/OCI tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} (distribution/reference's grammar).
_TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST_RE = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")
_NAME_RE = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$")


def _int(value: Any) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _finding(host: Optional[str], var: str, path: str, message: str, fix: str, severity: str = "error") -> Finding:
    """A finding on a role variable: moved to the group_vars line that sets it when the host inherits it."""
    f = Finding(host, var, path, message, fix, severity=severity)
    f.cause = (host, var, path, fix)
    return f


def _hosts_in(model: Dict[str, Any], role: str) -> List[str]:
    return sorted((h for h, info in (model.get("hosts") or {}).items() if role in (info.get("groups") or [])),
                  key=natural_key)


def _nics(model: Dict[str, Any], host: str) -> List[Dict[str, Any]]:
    nics = ((model.get("hosts") or {}).get(host) or {}).get("vars", {}).get("nics")
    return [n for n in nics if isinstance(n, dict)] if isinstance(nics, list) else []


# --------------------------------------------------------------------------- settings (class 4)
def check_settings(model: Dict[str, Any], settings: Dict[str, Dict[str, Any]]) -> List[Finding]:
    """Role variables set in the inventory against the model (see the module docstring)."""
    out: List[Finding] = []
    pod = model.get("pod") if isinstance(model.get("pod"), dict) else {}
    dgx = _hosts_in(model, "dgx")
    for host in sorted(settings or {}, key=natural_key):
        values = settings[host] or {}
        if host in dgx:
            _check_env(host, values, _nics(model, host), out)
        _check_images(host, values, out)
        _check_ranks(host, values, model, pod, out)
    _check_ports(pod, settings or {}, dgx, out)
    _check_gpus(model, out)
    _check_simulated(model, pod, out)
    return out


def _split_list(value: str) -> Tuple[str, bool, bool, List[str]]:
    """NCCL's interface/HCA list syntax: a leading '^' excludes, then '=' matches exactly (else by prefix)."""
    text = value.strip()
    exclude = text.startswith("^")
    text = text[1:] if exclude else text
    exact = text.startswith("=")
    text = text[1:] if exact else text
    return text, exclude, exact, [p.strip() for p in text.split(",")]


def _matches(entry: str, names: Iterable[str], exact: bool) -> bool:
    return any(n == entry if exact else n.startswith(entry) for n in names)


def _env_items(values: Dict[str, Any]) -> List[Tuple[str, str, Any]]:
    """(variable, key path, value) of every NAME=value the user sets for NCCL, MPI or gloo."""
    items: List[Tuple[str, str, Any]] = []
    for var in ENV_VARS:
        env = values.get(var)
        if isinstance(env, dict):
            items += [(var, "%s.%s" % (var, k), (k, v)) for k, v in env.items()]
    extra = values.get("pod_nccl_mpirun_extra")
    if isinstance(extra, list):
        for i, arg in enumerate(extra):
            if isinstance(arg, str) and re.match(r"^[A-Z][A-Z0-9_]*=", arg):
                k, _sep, v = arg.partition("=")
                items.append(("pod_nccl_mpirun_extra", "pod_nccl_mpirun_extra[%d]" % i, (k, v)))
    return items


def _check_env(host: str, values: Dict[str, Any], nics: List[Dict[str, Any]], out: List[Finding]) -> None:
    devices = sorted({n["rdma_device"] for n in nics if isinstance(n.get("rdma_device"), str)})
    ifaces = sorted({n["name"] for n in nics if isinstance(n.get("name"), str)})
    for var, path, (name, value) in _env_items(values):
        name = str(name)
        if name.startswith("NCCL_") and name not in NCCL_KNOWN:
            close = difflib.get_close_matches(name, NCCL_KNOWN, n=1, cutoff=0.85)
            if close:
                out.append(_finding(host, var, path, "%s is not a variable NCCL reads, so it does nothing" % name,
                                    "did you mean %s?" % close[0], "warning"))
        if name not in ("NCCL_IB_HCA",) + _IFACE_VARS:
            continue
        if not isinstance(value, str) or not value.strip():
            out.append(_finding(host, var, path, "%r is not a list of %s" % (
                value, "HCAs (mlx5_0,mlx5_1 or mlx5_0:1)" if name == "NCCL_IB_HCA" else "interface names"),
                "write the names as one comma-separated string, e.g. %s" % (
                    ",".join(devices[:2]) if name == "NCCL_IB_HCA" and devices else ",".join(ifaces[:1]) or "enp5s0")))
            continue
        _text, exclude, exact, entries = _split_list(value)
        if exclude:
            continue  # an exclusion naming nothing excludes nothing: harmless
        if name == "NCCL_IB_HCA":
            if not devices:
                continue  # the host models no RDMA device: nothing to compare with
            wrong = []
            for entry in entries:
                dev, _sep, port = entry.partition(":")
                if port and (not port.isdigit() or int(port) < 1):
                    wrong.append("%s (port '%s' is not a port number: mlx5_0:1)" % (entry, port))
                elif not dev or not _matches(dev, devices, exact):
                    wrong.append(entry or "an empty entry")
            if wrong:
                out.append(_finding(host, var, path, "NCCL_IB_HCA=%s names %s, which no NIC of %s has (its RDMA "
                                    "devices: %s): NCCL would find no HCA there and fall back to TCP sockets, or "
                                    "fail" % (value, ", ".join(wrong), host, ", ".join(devices)),
                                    "name the RDMA devices of the host's compute NICs (%s), or remove NCCL_IB_HCA: "
                                    "the toolkit writes it from the model's nics[].rdma_device" % ",".join(devices)))
        elif ifaces:
            wrong = [e for e in entries if not e or not _matches(e, ifaces, exact)]
            if wrong:
                out.append(_finding(host, var, path, "%s=%s names %s, which is no NIC of %s in the model (its NICs: "
                                    "%s)" % (name, value, ", ".join(e or "an empty entry" for e in wrong), host,
                                             ", ".join(ifaces)),
                                    "name the NIC the host name resolves to, or remove %s: the toolkit writes it "
                                    "from the model" % name, "warning"))


def _image_problem(ref: str) -> Optional[Tuple[str, str]]:
    """(what is wrong, how to write it) for an image reference [registry[:port]/]name[:tag][@digest], else None."""
    if ref != ref.strip() or any(c.isspace() for c in ref):
        return "it contains whitespace", "write it without spaces: %s" % "".join(ref.split())
    if not ref:
        return "it is empty", "name the image, e.g. nvcr.io/nvidia/pytorch:24.05-py3"
    body, _at, digest = ref.partition("@")
    if _at and not _DIGEST_RE.match(digest):
        return "'@%s' is not a digest (sha256:<64 hex digits>)" % digest, "write name:tag or name@sha256:<digest>"
    slash = body.rfind("/")
    last = body[slash + 1:]
    path = body[:slash + 1]
    name, colon, tag = last.partition(":")
    if colon and ":" in tag:
        parts = last.split(":")
        return ("the tag is given %d times (%s)" % (len(parts) - 1, ", ".join("':%s'" % p for p in parts[1:])),
                "keep one tag: %s%s:%s" % (path, parts[0], parts[-1]))
    if colon and not tag:
        return "the tag after ':' is empty", "write the tag after the ':' (e.g. %s%s:24.05-py3) or drop the ':' " \
            "for latest" % (path, name)
    if colon and not _TAG_RE.match(tag):
        return "'%s' is not a valid tag (letters, digits, '_', '.', '-'; up to 128)" % tag, "correct the tag"
    repo = (body[:slash + 1] if "." in body.split("/")[0] or ":" in body.split("/")[0] or
            body.split("/")[0] == "localhost" else "") if "/" in body else ""
    bare = body[len(repo):].rsplit(":", 1)[0] if colon else body[len(repo):]
    if bare and not _NAME_RE.match(bare):
        return "'%s' is not a valid repository name (lower case letters, digits, '.', '_', '-', '/')" % bare, \
            "write the image name in lower case, e.g. nvcr.io/nvidia/pytorch"
    return None


def _check_images(host: str, values: Dict[str, Any], out: List[Finding]) -> None:
    base, tag = values.get("ngc_container_base_image"), values.get("ngc_container_base_tag")
    if "ngc_container_base_tag" in values:
        if isinstance(tag, float):
            out.append(_finding(host, "ngc_container_base_tag", "ngc_container_base_tag", "%r is a number, not a tag: "
                                "YAML reads an unquoted 23.10 as 23.1" % tag,
                                "quote the tag as the registry writes it: ngc_container_base_tag: \"24.05-py3\""))
        elif not isinstance(tag, str) or not tag.strip():
            out.append(_finding(host, "ngc_container_base_tag", "ngc_container_base_tag", "the tag is empty: the "
                                "image would be '%s:' (and dgxpod/pytorch-mpi:), which no engine pulls" % (
                                    base if isinstance(base, str) else "nvcr.io/nvidia/pytorch"),
                                "set the NGC tag, e.g. ngc_container_base_tag: \"24.05-py3\""))
        elif ":" in tag or "@" in tag:
            out.append(_finding(host, "ngc_container_base_tag", "ngc_container_base_tag", "'%s' is more than a tag "
                                "(it holds a ':' or '@'); the image would be <image>:%s" % (tag, tag),
                                "write the tag alone: %s" % re.split(r"[:@]", tag)[-1]))
        elif not _TAG_RE.match(tag):
            out.append(_finding(host, "ngc_container_base_tag", "ngc_container_base_tag", "'%s' is not a valid tag "
                                "(letters, digits, '_', '.', '-')" % tag, "correct the tag, e.g. 24.05-py3"))
    if isinstance(base, str):
        problem = _image_problem(base)
        name = base[base.rfind("/") + 1:]
        if problem is None and ":" in name:
            problem = ("it already has a tag (':%s'), and the role adds ngc_container_base_tag after it: the image "
                       "would be %s:%s" % (name.split(":", 1)[1], base, tag if isinstance(tag, str) else "24.05-py3"),
                       "write the image without its tag (%s) and the tag in ngc_container_base_tag" % base.rsplit(
                           ":", 1)[0])
        if problem is not None:
            out.append(_finding(host, "ngc_container_base_image", "ngc_container_base_image",
                                "'%s' is not an image name: %s" % (base, problem[0]), problem[1]))
    elif "ngc_container_base_image" in values:
        out.append(_finding(host, "ngc_container_base_image", "ngc_container_base_image", "%r is not an image name"
                            % (base,), "write the image as a string, e.g. nvcr.io/nvidia/pytorch"))
    for var in ("ngc_container_image", "ngc_container_from"):
        if var not in values:
            continue
        ref = values[var]
        problem = _image_problem(ref) if isinstance(ref, str) else ("it is not a string", "write name:tag")
        if problem is not None:
            out.append(_finding(host, var, var, "'%s' is not an image reference: %s" % (ref, problem[0]), problem[1]))


def _check_ranks(host: str, values: Dict[str, Any], model: Dict[str, Any], pod: Dict[str, Any],
                 out: List[Finding]) -> None:
    """Ranks per node on the GPUs of the DGX model (CUDA jobs: one rank per GPU)."""
    if pod.get("simulated") is True:
        return  # the simulator runs CPU stand-ins: ranks are not GPUs
    info = (model.get("hosts") or {}).get(host) or {}
    if "dgx" not in (info.get("groups") or []):
        return
    m = dgx_model(info.get("vars", {}).get("dgx_model"))
    if m is None:
        return
    job = values.get("pod_training_job") if isinstance(values.get("pod_training_job"), dict) else {}
    for var in ("pod_training_ranks_per_node", "pod_nccl_ranks_per_node"):
        n = _int(values.get(var))
        if var == "pod_training_ranks_per_node" and job.get("device") == "cpu":
            continue
        if n is not None and n > m.gpus:
            out.append(_finding(host, var, var, "%d ranks per node, but a %s has %d GPUs (one rank per GPU)" % (
                n, m.title, m.gpus), "set %s to %d or less (or leave it unset: the GPU count)" % (var, m.gpus)))


def _check_ports(pod: Dict[str, Any], settings: Dict[str, Dict[str, Any]], dgx: List[str],
                 out: List[Finding]) -> None:
    """The TCP ports of daemons that run on every DGX at once (host network): slurmctld, slurmd, the container's
    sshd, the training rendezvous, the host's own sshd."""
    any_host = dgx[0] if dgx else next(iter(settings), None)
    slurm = pod.get("slurm") if pod.get("scheduler") == "slurm" and isinstance(pod.get("slurm"), dict) else None
    taken: List[Tuple[int, str, Optional[str], str, str]] = [(22, "the host's sshd", None, "", "")]
    if slurm is not None:
        for key, default in (("slurmctld_port", 6817), ("slurmd_port", 6818)):
            port = _int(slurm.get(key)) if slurm.get(key) is not None else default
            if port is not None:
                own = key in slurm
                taken.append((port, "%s (pod.slurm.%s)" % (key[:-5], key) if own else "%s (default %d)" % (
                    key[:-5], default), any_host if own else None, "pod" if own else "", "pod.slurm." + key))
    for var, default, what in (("ngc_container_ssh_port", 2222, "the container's sshd"),
                               ("pod_training_master_port", 29533, "the training rendezvous")):
        setters = [h for h in dgx if var in (settings.get(h) or {})]
        port = _int(settings[setters[0]][var]) if setters else default
        if port is not None:
            taken.append((port, "%s (%s%s)" % (what, var, "" if setters else ", default %d" % default),
                          setters[0] if setters else None, var if setters else "", var if setters else ""))
    seen: Dict[int, Tuple[int, str, Optional[str], str, str]] = {}
    for entry in taken:
        port, what, host, var, path = entry
        if port in seen:
            first = seen[port]
            # the finding goes on the value the user set (the later one that is set; never a default)
            target = entry if var else first
            if not target[3]:
                continue
            out.append(_finding(target[2], target[3], target[4], "port %d is %s and %s: two daemons on every DGX "
                                "cannot listen on one port (the second fails to start)" % (port, first[1], what),
                                "give %s its own port" % target[4]))
        else:
            seen[port] = entry


def _check_gpus(model: Dict[str, Any], out: List[Finding]) -> None:
    pod = model.get("pod") if isinstance(model.get("pod"), dict) else {}
    for host in _hosts_in(model, "dgx"):
        hv = model["hosts"][host].get("vars") or {}
        gpus, m = hv.get("gpus"), dgx_model(hv.get("dgx_model"))
        if m is None or isinstance(gpus, bool) or not isinstance(gpus, int) or gpus == m.gpus:
            continue
        if gpus == 0 and pod.get("simulated") is True:
            continue  # a simulated DGX without GPUs (the slurm checks warn about it)
        if gpus == 0:
            continue  # slurm_checks warns: the node joins the partition without Gres=gpu
        fit = sorted(k for k, v in DGX_MODELS.items() if v.gpus == gpus)
        out.append(Finding(host, "gpus", "gpus", "%d GPUs, but a %s (dgx_model %s) has %d" % (
            gpus, m.title, hv["dgx_model"], m.gpus),
            "remove gpus (dgx_model gives %d)%s" % (m.gpus, ", or set dgx_model to %s if the node is one" % " or ".join(
                fit) if fit else "")))


def _check_simulated(model: Dict[str, Any], pod: Dict[str, Any], out: List[Finding]) -> None:
    """``simulated: true`` makes validate.yml skip the RA's absolute checks: only the simulator's pod may say it."""
    if pod.get("simulated") is not True:
        return
    outside = []
    for host in sorted(model.get("hosts") or {}, key=natural_key):
        hv = model["hosts"][host].get("vars") or {}
        addrs = [hv.get("ansible_host")] + [n.get("address") for n in _nics(model, host)]
        for a in addrs:
            ip = ip_of(a) if isinstance(a, str) else None
            if ip is not None and ip not in SIM_NET:
                outside.append("%s %s" % (host, ip))
                break
    if outside:
        any_host = next(iter(model.get("hosts") or {}), None)
        out.append(Finding(any_host, "pod", "pod.simulated", "true, but the hosts are not the simulator's: %s%s %s "
                           "outside its %s (validate.yml would skip the RA's absolute checks and call a real pod "
                           "simulated)" % (", ".join(outside[:3]), " and %d more" % (len(outside) - 3)
                                           if len(outside) > 3 else "", "is" if len(outside) == 1 else "are", SIM_NET),
                           "remove simulated (or set it to false); only sim/podsim's inventory is simulated"))


# --------------------------------------------------------------------------- links (class 5)
def check_links(usable: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
                host: Optional[str], out: List[Finding]) -> None:
    """NIC MTU = fabric MTU; a lossless fabric is cabled to a switch; no fabric in Docker's bridge; a Linux storage
    server has one NIC per subnet. ``usable``/``fabrics`` as preflight.model.validate builds them."""
    cabled: Set[str] = set()
    for name, info in usable.items():
        nics = info["vars"].get("nics")
        if info["role"] == "switches" or not isinstance(nics, list):
            continue
        on_fabric: Dict[str, int] = {}
        linux_storage = info["role"] == "storage" and isinstance(info["vars"].get("storage_node"), dict) and \
            info["vars"]["storage_node"].get("platform") in LINUX_STORAGE
        for i, nic in enumerate(nics):
            if not isinstance(nic, dict) or nic.get("fabric") not in fabrics:
                continue
            fab = fabrics[nic["fabric"]]
            path = "nics[%d]" % i
            if isinstance(nic.get("switch"), str) and isinstance(nic.get("switch_port"), str):
                cabled.add(fab["name"])
            mtu = nic.get("mtu")
            if isinstance(mtu, int) and not isinstance(mtu, bool) and mtu != fab["mtu"]:
                out.append(Finding(name, "nics", path + ".mtu", "%s MTU %d differs from fabric '%s' (MTU %d): one "
                                   "subnet needs one MTU - full-size frames from the other hosts are dropped at this "
                                   "NIC (or its own at theirs)" % (nic.get("name"), mtu, fab["name"], fab["mtu"]),
                                   "remove nics[%d].mtu (the NIC takes its fabric's), or change pod.fabrics[%d].mtu "
                                   "for the whole fabric" % (i, fab["_index"])))
            if linux_storage:
                if fab["name"] in on_fabric:
                    first = nics[on_fabric[fab["name"]]]
                    out.append(Finding(name, "nics", path + ".fabric", "%s and %s (nics[%d]) of storage server %s "
                                       "(%s, a Linux host) are both on fabric '%s' (%s): two interfaces of one host "
                                       "in one subnet answer each other's ARP and the kernel sends the whole subnet "
                                       "out of one of them" % (
                                           nic.get("name"), first.get("name"), on_fabric[fab["name"]], name,
                                           info["vars"]["storage_node"]["platform"], fab["name"], fab["_net"]),
                                       "give each port its own fabric and subnet (one subnet per rail), as the DGX "
                                       "nodes have"))
                on_fabric.setdefault(fab["name"], i)
    for fname, fab in sorted(fabrics.items(), key=lambda kv: kv[1]["_index"]):
        path = "pod.fabrics[%d]" % fab["_index"]
        if fab["_net"].overlaps(DOCKER_BRIDGE):
            out.append(Finding(host, "pod", path + ".subnet", "%s overlaps Docker's default bridge %s (docker0 on "
                               "every DGX that runs dockerd): the kernel routes the overlap to docker0, not to the "
                               "fabric" % (fab["_net"], DOCKER_BRIDGE),
                               "choose another subnet for the fabric, or move Docker's bridge (\"bip\" in "
                               "/etc/docker/daemon.json) off it", severity="warning"))
        if fab.get("kind") == "ethernet" and fab.get("roce") == "lossless" and fname not in cabled:
            used = any(isinstance(n, dict) and n.get("fabric") == fname
                       for info in usable.values() for n in (info["vars"].get("nics") or [])
                       if isinstance(info["vars"].get("nics"), list))
            if used:
                out.append(Finding(host, "pod", path + ".roce", "fabric '%s' is lossless (PFC on the hosts) but no "
                                   "NIC on it is cabled to a modelled switch: no switch port gets PFC, so the "
                                   "no-drop class is not lossless end to end" % fname,
                                   "give the fabric's NICs switch and switch_port (and model the switches), or "
                                   "configure PFC on those switch ports yourself", severity="warning"))


# --------------------------------------------------------------------------- wrong group (class 7)
_ROLE_VAR = {"dgx": ("dgx_model", "gpus"), "storage": ("storage_node",), "switches": ("switch",)}
_ROLE_WORD = {"dgx": "a DGX", "storage": "a storage node", "switches": "a switch"}


def _shape(name: str) -> str:
    return re.sub(r"\d+", "#", name.lower())


def misplaced_hosts(hosts: Dict[str, Dict[str, Any]], fabrics: Dict[str, Dict[str, Any]],
                    own_vars: Optional[Dict[str, Iterable[str]]] = None) -> Dict[str, Finding]:
    """{host: finding} for a host in one role group that looks like a host of another (a new DGX under
    ``storage:``): its name is shaped like that group's hosts, it sets that group's variables, or (a DGX) its NICs
    are on compute-only fabrics with RDMA devices. Only a host that lacks a required variable of its own group
    (so it would be told to add one) is named. ``hosts`` is the model's {name: {groups, vars}}."""
    roles = {h: [g for g in (info.get("groups") or []) if g in _ROLE_VAR] for h, info in hosts.items()}
    members: Dict[str, List[str]] = {r: sorted((h for h, rs in roles.items() if rs == [r]), key=natural_key)
                                     for r in _ROLE_VAR}
    required = {"dgx": ("dgx_model", "nics"), "storage": ("storage_node", "nics"), "switches": ("switch",)}
    compute_only = {f for f, fab in fabrics.items() if set(fab.get("carries") or []) == {"compute"}}
    everywhere = {v for vs in _ROLE_VAR.values() for v in vs
                  if hosts and all((info.get("vars") or {}).get(v) is not None for info in hosts.values())}
    nic_names: Dict[str, Set[str]] = {}  # host -> its NIC names
    for h in hosts:
        nics = (hosts[h].get("vars") or {}).get("nics")
        nic_names[h] = {n["name"] for n in (nics if isinstance(nics, list) else [])
                        if isinstance(n, dict) and isinstance(n.get("name"), str)}

    def names_of(role: str, but: str) -> Set[str]:
        return set().union(*[nic_names[m] for m in members[role] if m != but])
    out: Dict[str, Finding] = {}
    for h, rs in roles.items():
        if len(rs) != 1:
            continue
        role = rs[0]
        hv = hosts[h].get("vars") or {}
        complete = all(hv.get(v) is not None for v in required[role])
        for other in _ROLE_VAR:
            if other == role:
                continue
            why = []
            # a variable of the other group's that this host sets (not one every host has, as from group_vars/all)
            set_vars = [v for v in _ROLE_VAR[other] if hv.get(v) is not None and v not in everywhere]
            if complete and not set_vars:
                continue
            if set_vars:
                why.append("it sets %s" % ", ".join(set_vars))
            peers = [p for p in members[other] if p != h]
            same = [p for p in peers if _shape(p) == _shape(h)]
            own = [p for p in members[role] if p != h and _shape(p) == _shape(h)]
            if same and not own:
                why.append("its name is like the %s hosts' (%s)" % (other, ", ".join(same[:3]) + (
                    ", ..." if len(same) > 3 else "")))
            elif other == "dgx" and "dgx" in h.lower() and not any("dgx" in p.lower() for p in members[role]):
                why.append("its name says DGX")
            nics = hv.get("nics") if isinstance(hv.get("nics"), list) else []
            rdma_compute = [n for n in nics if isinstance(n, dict) and n.get("fabric") in compute_only
                            and n.get("rdma_device")]
            names = {n.get("name") for n in nics if isinstance(n, dict) and isinstance(n.get("name"), str)}
            if names and names <= names_of(other, h) and not names <= names_of(role, h):
                why.append("its NICs are named as the %s hosts' are (%s)" % (other, ", ".join(sorted(names)[:4])))
            if other == "dgx" and role == "storage" and rdma_compute:
                why.append("its NICs with RDMA devices are on compute-only fabrics (%s)" % ", ".join(
                    sorted({n["fabric"] for n in rdma_compute})))
            if why:
                out[h] = Finding(h, "inventory", "hosts.%s" % h, "%s is in group '%s' but looks like %s (%s)" % (
                    h, role, _ROLE_WORD[other], "; ".join(why)),
                    "move %s under %s: hosts: in the inventory file (it then gets group_vars/%s.yml), or, if it "
                    "really is %s, %s" % (h, other, other, _ROLE_WORD[role], "set %s" % " and ".join(
                        v for v in required[role] if hv.get(v) is None) if not complete else "remove %s from its "
                        "variables" % ", ".join(set_vars)))
                out[h].looks_like = other  # type: ignore[attr-defined]
                break
    return out
