# -*- coding: utf-8 -*-
"""slurm.conf and gres.conf for the pod (issue 20): pure functions of the pod model, stdlib only.

:func:`slurm_plan` reads the pod (``pod.slurm``, the DGX nodes, their GPU count and the address their name
resolves to) plus what each node reports about itself (``slurmd -C``, parsed by ``slurm_parse``) and
returns a plain dict; :func:`render_slurm_conf` and :func:`render_gres_conf` turn it into the files. Same
input, same bytes (nodes in the inventory's order, no timestamps), so the role's ``copy`` is idempotent and
the golden tests in tests/unit/test_slurm.py pin the text.

Choices made for every pod (docs/slurm.md has the why):

* ``ProctrackType=proctrack/linuxproc`` and ``TaskPlugin=task/none``: they need neither cgroups nor
  systemd. Slurm 22.05's cgroup/v2 plugin asks systemd (over D-Bus) for a scope for slurmstepd, and the
  pod-in-a-box has no systemd; linuxproc tracks a job's processes through /proc parent ids, which is enough
  for jobs that start mpirun/containers and exit. A pod whose nodes run systemd may choose
  ``proctrack: cgroup`` in the model (then ``TaskPlugin=task/cgroup,task/affinity`` and a cgroup.conf).
* ``SlurmctldHost=<name>(<address>)``: the address is written out so slurmd and the clients never depend on
  how the controller's name resolves on each node (a name resolving to 127.0.1.1 on the controller and to
  the fabric address elsewhere gave "Unable to contact slurm controller (connect failure)").
* ``NodeAddr``: each DGX's address on the hosts fabric (what its name resolves to in /etc/hosts).
* ``GresTypes=gpu`` and ``Gres=gpu:<N>`` with ``gres.conf`` naming ``/dev/nvidia[0-N-1]``. Slurm 22.05's
  gpu plugin counts GPUs by their device files: ``Name=gpu Count=2`` without ``File`` made slurmd report
  0 GPUs and slurmctld set the node INVAL ("gres/gpu count reported lower than configured (0 < 2)"), seen on
  this machine. A node without NVIDIA devices (the simulator) therefore gets stand-in character devices
  (major 195, as the driver's) under another prefix (``gpu_device_prefix``, the role makes them).
* ``MpiDefault``: ``none`` (the jobs launch ``mpirun`` themselves, as validate.yml does today); ``pmi2`` or
  ``pmix`` when the model asks for srun-launched MPI ranks.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_gpus, dgx_model

DEFAULTS: Dict[str, Any] = {
    "partition": "dgx",
    "mpi_default": "none",
    "proctrack": "linuxproc",
    "slurmctld_port": 6817,
    "slurmd_port": 6818,
    "state_dir": "/var/lib/slurm/slurmctld",
    "spool_dir": "/var/lib/slurm/slurmd",
    "log_dir": "/var/log/slurm",
    "run_dir": "/run/slurm",
    "user": "slurm",
    "munge_socket": None,  # default munge's /run/munge/munge.socket.2
    # dgxpod-health as slurmd's HealthCheckProgram (roles/slurm slurm_health_*; docs/slurm.md "The health
    # program"): empty leaves the three lines out
    "health_program": "",
    "health_interval": 300,
    "health_node_state": "ANY",
}
MPI_CHOICES = ("none", "pmi2", "pmix")
PROCTRACK_CHOICES = ("linuxproc", "pgid", "cgroup")
# slurm.conf(5) HealthCheckNodeState: the node states the program runs in (ANY: drained ones too, so it can resume)
HEALTH_STATES = ("ALLOC", "ANY", "CYCLE", "IDLE", "MIXED", "NONDRAINED_IDLE")
PARTITION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")
CLUSTER_RE = re.compile(r"^[a-z0-9_][a-z0-9_-]{0,39}$")
HARDWARE_KEYS = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")



def dgx_hardware(dgx_model_name: Optional[str]) -> Dict[str, int]:
    """What a DGX of a model has, as slurm.conf's node keys (sockets, cores per socket, threads per core, memory
    in MB), from the hardware catalogue (module_utils/catalog/dgx.py); used when a node has not reported
    ``slurmd -C``. {} for an unknown model."""
    m = dgx_model(dgx_model_name)
    if m is None:
        return {}
    return {"SocketsPerBoard": m.cpu_sockets, "CoresPerSocket": m.cpu_cores_per_socket,
            "ThreadsPerCore": m.cpu_threads_per_core, "RealMemory": m.real_memory_mb}


class SlurmConfError(ValueError):
    """The pod cannot be written as a Slurm cluster (preflight names the field)."""


def cluster_name(pod_name: str) -> str:
    """Slurm's ClusterName: lower case letters, digits, '_' and '-' (slurmdbd makes table names of it)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", (pod_name or "pod").lower()).strip("-") or "pod"
    return name[:40]


def settings(slurm: Optional[Mapping[str, Any]], pod_name: str = "pod") -> Dict[str, Any]:
    """``pod.slurm`` with the defaults filled in."""
    out = dict(DEFAULTS)
    out.update({k: v for k, v in (slurm or {}).items() if v is not None})
    out.setdefault("cluster_name", cluster_name(pod_name))
    return out


def _hardware(reported: Optional[Mapping[str, Any]], dgx_model: Optional[str]) -> Dict[str, int]:
    hw: Dict[str, int] = {}
    if reported:
        hw = {k: int(reported[k]) for k in HARDWARE_KEYS if reported.get(k) is not None}
    else:
        hw = dgx_hardware(dgx_model)
    if "CPUs" not in hw and {"SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore"} <= set(hw):
        hw["CPUs"] = hw.get("Boards", 1) * hw["SocketsPerBoard"] * hw["CoresPerSocket"] * hw["ThreadsPerCore"]
    return hw


def slurm_plan(slurm: Mapping[str, Any], pod_name: str, controller: Mapping[str, Any],
               nodes: Sequence[Mapping[str, Any]], reported: Optional[Mapping[str, Mapping[str, Any]]] = None
               ) -> Dict[str, Any]:
    """What the two files say, as data.

    ``controller``: {name, address}; ``nodes``: [{name, address, gpus, dgx_model}] in the inventory's order;
    ``reported``: {node: parsed ``slurmd -C``} (``slurm_parse.parse_slurmd_c``), which wins over the DGX
    catalogue. Raises :class:`SlurmConfError` when a node's GPU count is unknown or a name is unusable."""
    conf = settings(slurm, pod_name)
    if not PARTITION_RE.match(str(conf["partition"])):
        raise SlurmConfError("pod.slurm.partition %r: use letters, digits, '_', '-', '.'" % conf["partition"])
    if conf["mpi_default"] not in MPI_CHOICES:
        raise SlurmConfError("pod.slurm.mpi_default %r is not one of %s" % (conf["mpi_default"], MPI_CHOICES))
    if conf["proctrack"] not in PROCTRACK_CHOICES:
        raise SlurmConfError("pod.slurm.proctrack %r is not one of %s" % (conf["proctrack"], PROCTRACK_CHOICES))
    health = _health(conf)
    if not nodes:
        raise SlurmConfError("the pod has no DGX node for the partition")
    out_nodes = []
    for node in nodes:
        gpus = node.get("gpus")
        if not isinstance(gpus, int) or gpus < 0:
            raise SlurmConfError("%s: its GPU count is unknown (set gpus or a dgx_model)" % node.get("name"))
        out_nodes.append({"name": str(node["name"]), "address": node.get("address"), "gpus": gpus,
                          "gpu_device_prefix": str(node.get("gpu_device_prefix") or "/dev/nvidia"),
                          "hardware": _hardware((reported or {}).get(node["name"]), node.get("dgx_model"))})
    return {"cluster_name": conf["cluster_name"], "controller": {"name": str(controller["name"]),
                                                                 "address": controller.get("address")},
            "partition": conf["partition"], "mpi_default": conf["mpi_default"], "proctrack": conf["proctrack"],
            "slurmctld_port": int(conf["slurmctld_port"]), "slurmd_port": int(conf["slurmd_port"]),
            "state_dir": conf["state_dir"], "spool_dir": conf["spool_dir"], "log_dir": conf["log_dir"],
            "run_dir": conf["run_dir"], "user": conf["user"], "munge_socket": conf["munge_socket"],
            "health": health, "nodes": out_nodes}


def _health(conf: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """{program, interval, node_state} of the health program, or None when ``health_program`` is empty."""
    program = str(conf.get("health_program") or "")
    if not program:
        return None
    if not program.startswith("/"):
        raise SlurmConfError("health_program %r: slurmd needs an absolute path" % program)
    states = [s for s in str(conf.get("health_node_state") or "ANY").upper().split(",") if s]
    if not states or set(states) - set(HEALTH_STATES):
        raise SlurmConfError("health_node_state %r: one or more of %s" % (conf.get("health_node_state"),
                                                                          ", ".join(HEALTH_STATES)))
    interval = int(conf.get("health_interval") or 0)
    if interval <= 0:
        raise SlurmConfError("health_interval %r: seconds, above 0" % conf.get("health_interval"))
    return {"program": program, "interval": interval, "node_state": ",".join(states)}


def _host(name: str, address: Optional[str]) -> str:
    return "%s(%s)" % (name, address) if address else name


def render_slurm_conf(plan: Mapping[str, Any]) -> str:
    """slurm.conf (slurm.conf(5)): one NodeName line per DGX, one partition holding them all."""
    cgroup = plan["proctrack"] == "cgroup"
    # the header names the file's old place (module_utils/slurm_conf.py, now module_utils/slurm/conf.py): kept as
    # it was, so the slurm.conf and gres.conf on a deployed pod stay byte for byte the same
    lines = [
        "# slurm.conf for pod %s - generated by the dgx-pod toolkit (module_utils/slurm_conf.py); "
        "edit the pod model, not this file." % plan["cluster_name"],
        "ClusterName=%s" % plan["cluster_name"],
        "SlurmctldHost=%s" % _host(plan["controller"]["name"], plan["controller"]["address"]),
        "SlurmctldPort=%d" % plan["slurmctld_port"],
        "SlurmdPort=%d" % plan["slurmd_port"],
        "SlurmUser=%s" % plan["user"],
        "AuthType=auth/munge",
        "CredType=cred/munge",
    ] + (["AuthInfo=socket=%s" % plan["munge_socket"]] if plan.get("munge_socket") else []) + [
        "StateSaveLocation=%s" % plan["state_dir"],
        "SlurmdSpoolDir=%s" % plan["spool_dir"],
        "SlurmctldPidFile=%s/slurmctld.pid" % plan["run_dir"],
        "SlurmdPidFile=%s/slurmd.pid" % plan["run_dir"],
        "SlurmctldLogFile=%s/slurmctld.log" % plan["log_dir"],
        "SlurmdLogFile=%s/slurmd.log" % plan["log_dir"],
        "# No systemd or cgroups needed (docs/slurm.md): linuxproc tracks a job's processes through /proc.",
        "ProctrackType=proctrack/%s" % plan["proctrack"],
        "TaskPlugin=%s" % ("task/cgroup,task/affinity" if cgroup else "task/none"),
        "JobAcctGatherType=jobacct_gather/%s" % ("cgroup" if cgroup else "none"),
        "MpiDefault=%s" % plan["mpi_default"],
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "ReturnToService=2",
        "SlurmctldTimeout=120",
        "SlurmdTimeout=300",
        "GresTypes=gpu",
    ] + _health_lines(plan.get("health")) + [
        "",
    ]
    for node in plan["nodes"]:
        hw = node["hardware"]
        fields = ["NodeName=%s" % node["name"]]
        if node["address"]:
            fields.append("NodeAddr=%s" % node["address"])
        for key in HARDWARE_KEYS:
            if key in hw and key != "Boards":
                fields.append("%s=%d" % (key, hw[key]))
        if node["gpus"]:
            fields.append("Gres=gpu:%d" % node["gpus"])
        fields.append("State=UNKNOWN")
        lines.append(" ".join(fields))
    lines.append("PartitionName=%s Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" % (
        plan["partition"], ",".join(n["name"] for n in plan["nodes"])))
    return "\n".join(lines) + "\n"


def _health_lines(health: Optional[Mapping[str, Any]]) -> List[str]:
    """slurm.conf's HealthCheck lines (none without a health program)."""
    if not health:
        return []
    return ["# dgxpod-health drains its own DGX on a failed check, resumes only its own drain (docs/slurm.md).",
            "HealthCheckProgram=%s" % health["program"],
            "HealthCheckInterval=%d" % health["interval"],
            "HealthCheckNodeState=%s" % health["node_state"]]


def render_gres_conf(plan: Mapping[str, Any]) -> str:
    """gres.conf (gres.conf(5)): the GPUs of each DGX, by device file where the node has them."""
    lines = ["# gres.conf for pod %s - generated by the dgx-pod toolkit (module_utils/slurm_conf.py)." %
             plan["cluster_name"], "AutoDetect=off"]
    for node in plan["nodes"]:
        if not node["gpus"]:
            continue
        prefix = node["gpu_device_prefix"]
        files = prefix + "0" if node["gpus"] == 1 else "%s[0-%d]" % (prefix, node["gpus"] - 1)
        lines.append("NodeName=%s Name=gpu File=%s" % (node["name"], files))
    return "\n".join(lines) + "\n"


def nodes_from_pod(pod: Any, gpu_device_prefix: str = "/dev/nvidia") -> List[Dict[str, Any]]:
    """[{name, address, gpus, dgx_model}] of the DGX of a ``pod.types.Pod``, in the inventory's order."""
    out = []
    for host in pod.dgx:
        nic = pod.primary_nic(host.name)
        gpus = host.gpus if host.gpus is not None else dgx_gpus(host.dgx_model)
        out.append({"name": host.name, "address": nic.address if nic else host.ansible_host, "gpus": gpus,
                    "dgx_model": host.dgx_model, "gpu_device_prefix": gpu_device_prefix})
    return out


def controller_of(pod: Any, name: str) -> Dict[str, Any]:
    """{name, address} of the controller host (its hosts-fabric address, else ansible_host)."""
    host = pod.host(name)
    nic = pod.primary_nic(name) if host.nics else None
    return {"name": name, "address": nic.address if nic else host.ansible_host}


def render_all(pod: Any, reported: Optional[Mapping[str, Mapping[str, Any]]] = None,
               gpu_device_prefix: str = "/dev/nvidia", overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, str]:
    """{"slurm.conf": text, "gres.conf": text} for a ``pod.types.Pod`` with ``pod.slurm``."""
    raw = dict(pod.raw.get("slurm") or {})
    raw.update(overrides or {})
    if not raw.get("controller"):
        raise SlurmConfError("pod.slurm.controller is not set")
    plan = slurm_plan(raw, pod.name, controller_of(pod, raw["controller"]), nodes_from_pod(pod, gpu_device_prefix),
                      reported)
    return {"slurm.conf": render_slurm_conf(plan), "gres.conf": render_gres_conf(plan)}

