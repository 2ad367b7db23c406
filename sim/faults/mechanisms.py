"""How each kind of fault is injected and cleared, layer by layer: each builder returns an ``act(ctx, node,
rec)`` (or is one) that the catalogue (``__init__.py``) pairs into a Fault. A clear puts back what ``rec``
recorded at inject time, or the modelled state."""
from __future__ import annotations

import json
import sys
from typing import Callable, Dict, List, Optional, Tuple

import podmodel as pm

from .base import (FSTAB, FSTAB_MARKERS, HOSTS, NCCL_ENV, PFC_PRIORITY, REPO, in_node, nic_of, pod_size, podsim,
                   prefix_len, recorded_pid, sh, wrong_address)


# --------------------------------------------------------------------------- host networking

def _mtu(nic: str, mtu: Optional[int] = None):
    def act(ctx, node, rec):
        want = mtu if mtu is not None else pm.FABRICS[nic_of(ctx.pod(), node, nic).fabric].mtu
        ctx.run(in_node(node, "ip", "link", "set", "dev", nic, "mtu", str(want)))
    return act


def _link(nic: str, state: str):
    def act(ctx, node, rec):
        ctx.run(in_node(node, "ip", "link", "set", "dev", nic, state))
    return act


def _address(nic: str, wrong: bool):
    """Replace NIC's modelled address with a wrong one on the same subnet (wrong=True), or back (idempotent:
    the one to go is deleted if present, the one to have is added if absent)."""
    def act(ctx, node, rec):
        pod = ctx.pod()
        n = nic_of(pod, node, nic)
        plen = prefix_len(pod, n)
        good, bad = "%s/%d" % (n.address, plen), "%s/%d" % (wrong_address(n.address), plen)
        drop, add = (good, bad) if wrong else (bad, good)
        show = "ip -o -4 addr show dev %s | grep -Fqw %s" % (nic, "%s")
        ctx.run(sh(node, "%s && ip addr del %s dev %s; %s || ip addr add %s dev %s; true" % (
            show % drop, drop, nic, show % add, add, nic)))
    return act


# --------------------------------------------------------------------------- RoCE QoS (the mlnx_qos stand-in)

def _qos_state(ctx, node: str, nic: str) -> dict:
    sys.path.insert(0, REPO)  # the collection's module_utils
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.mlx_parse import parse_mlnx_qos
    q = parse_mlnx_qos(ctx.run(in_node(node, "mlnx_qos", "-i", nic)))
    return {"trust": q["trust"], "pfc": ",".join(str(v) for v in q["pfc_enabled"])}


def _qos_inject(nic: str, **settings: str):
    def act(ctx, node, rec):
        if "qos" not in rec:
            rec["qos"] = _qos_state(ctx, node, nic)
        argv = ["mlnx_qos", "-i", nic]
        for key in sorted(settings):
            argv += ["--" + key, settings[key]]
        ctx.run(in_node(node, *argv))
    return act


def _qos_clear(nic: str):
    def act(ctx, node, rec):
        q = rec.get("qos") or {"trust": "dscp", "pfc": ",".join("1" if p == PFC_PRIORITY else "0" for p in range(8))}
        ctx.run(in_node(node, "mlnx_qos", "-i", nic, "--trust", q["trust"], "--pfc", q["pfc"]))
    return act


# --------------------------------------------------------------------------- storage

def _umount(path: str):
    def act(ctx, node, rec):
        ctx.run(sh(node, f"! mountpoint -q {path} || umount {path}"))
    return act


def _deploy(playbook: str):
    """Put back what the deploy owns by running its playbook on the node (how the e2e tests heal it)."""
    def act(ctx, node, rec):
        ctx.run(["ansible-playbook", playbook, "-l", node])
    return act


def _signal_daemon(daemon: str, sig: str):
    def act(ctx, node, rec):
        ctx.run(["kill", "-" + sig, str(recorded_pid(ctx, node, daemon))])
    return act


def _continue_daemon(daemon: str):
    def act(ctx, node, rec):
        try:
            pid = recorded_pid(ctx, node, daemon)
        except RuntimeError:
            return  # not running: nothing frozen to continue (podsim up restarts a dead one)
        ctx.run(["kill", "-CONT", str(pid)])
    return act


def _ganesha_stop(ctx, node, rec):
    try:
        pid = recorded_pid(ctx, node, "ganesha")
    except RuntimeError:
        return  # stopped already (an inject again)
    ctx.run(["kill", "-TERM", str(pid)])


def _ganesha_restart(ctx, node, rec):
    nodes, storage = pod_size(ctx)
    ctx.run(podsim("up", "--nodes", str(nodes), "--storage", str(storage)))  # restarts the recorded daemon
    ctx.run(["ansible-playbook", "playbooks/storage.yml"])  # the DGX mounts through it, verified


# --------------------------------------------------------------------------- switches

def _peer(pod: pm.Pod, node: str) -> str:
    """The next DGX after ``node`` (the last one's is the first)."""
    names = [d.name for d in pod.dgx]
    if node not in names:
        raise ValueError("%s is not a DGX of the pod (%s)" % (node, ", ".join(names)))
    return names[(names.index(node) + 1) % len(names)]


def cabled_port(pod: pm.Pod, node: str, nic: str) -> Tuple[str, str]:
    n = nic_of(pod, node, nic)
    if not n.switch:
        raise ValueError("%s %s is not cabled to a switch" % (node, nic))
    return n.switch, n.switch_port


def _neighbour_port(pod: pm.Pod, node: str, nic: str) -> str:
    """The port of the next DGX's same NIC on the same switch (the other end of a swapped cable)."""
    sw, _ = cabled_port(pod, node, nic)
    osw, oport = cabled_port(pod, _peer(pod, node), nic)
    if osw != sw:
        raise ValueError("%s and %s have their %s on different switches: no cable to swap" % (
            node, _peer(pod, node), nic))
    return oport


def _switch_cli(nic: str, *lines: str):
    """Type config lines on the port cabled to NODE's NIC, as a person at the switch's console would; the
    running config before is kept for the clear."""
    def act(ctx, node, rec):
        sw, port = cabled_port(ctx.pod(), node, nic)
        if "running" not in rec:
            rec["switch"], rec["running"] = sw, ctx.switch_state(sw)["running"]
        argv = podsim("switch", sw, "--cli", "enable", "--cli", "configure", "--cli", "interface " + port)
        for line in lines:
            argv += ["--cli", line]
        ctx.run(argv + ["--cli", "end"])
    return act


def _switch_restore(ctx, node, rec):
    if "running" in rec:
        state = ctx.switch_state(rec["switch"])
        state["running"] = rec["running"]
        ctx.save_switch_state(rec["switch"], state)


def _switch_fault(nic: str, key: str, value: Callable[[pm.Pod, str], str]):
    def inject(ctx, node, rec):
        pod = ctx.pod()
        sw, _ = cabled_port(pod, node, nic)
        state = ctx.switch_state(sw)
        faults = dict(state.get("faults") or {})
        if "had" not in rec:
            rec["switch"], rec["had"] = sw, {key: faults[key]} if key in faults else {}
        faults[key] = value(pod, node)
        state["faults"] = faults
        ctx.save_switch_state(sw, state)

    def clear(ctx, node, rec):
        sw = rec.get("switch") or cabled_port(ctx.pod(), node, nic)[0]
        state = ctx.switch_state(sw)
        faults = dict(state.get("faults") or {})
        faults.pop(key, None)
        faults.update(rec.get("had") or {})
        state["faults"] = faults
        ctx.save_switch_state(sw, state)
    return inject, clear


def _on_switch(nic: str):
    return lambda pod, node: (cabled_port(pod, node, nic)[0],)


# --------------------------------------------------------------------------- GPUs (the stand-ins' faults)

def _gpu_args(faults: dict) -> List[str]:
    out = []
    for key in sorted(faults):
        v = faults[key]
        v = "%d:%d" % tuple(v) if isinstance(v, list) else ("1" if v is True else str(v))
        out += ["--fault", "%s=%s" % (key, v)]
    return out


def _standin_fault(verb: str, key: str, value: str):
    """A fault of a stand-in verb (``podsim gpu``, ``podsim node``): the inject sets it; the clear sets again the node's
    other faults of that verb as they are now, without this one."""
    def inject(ctx, node, rec):
        ctx.run(podsim(verb, node, "--fault", "%s=%s" % (key, value)))

    def clear(ctx, node, rec):
        current = json.loads(ctx.run(podsim(verb, node)) or "{}")
        current.pop(key, None)
        ctx.run(podsim(verb, node, "--clear", *_gpu_args(current)))
    return inject, clear


def _gpu(key: str, value: str):
    """A GPU stand-in fault (``podsim gpu``)."""
    return _standin_fault("gpu", key, value)


def _every_dgx(act):
    """A per-node inject or clear applied to every DGX of the pod (a fault the pod has all alike)."""
    def every(ctx, node, rec):
        for d in ctx.pod().dgx:
            act(ctx, d.name, rec)
    return every


# --------------------------------------------------------------------------- node health (the stand-ins' faults)

def _node(key: str, value: str):
    """A node health fault of the stand-ins (``podsim node``: the kernel log, the BMC, memory, NVMe)."""
    return _standin_fault("node", key, value)


# --------------------------------------------------------------------------- files the deploy writes

def _file_keep(ctx, node: str, path: str, rec: dict) -> None:
    if "file" not in rec:
        out = ctx.run(sh(node, f"if [ -e {path} ]; then stat -c %a {path}; cat {path}; else echo absent; fi"))
        mode, _, text = out.partition("\n")
        rec["file"] = {"path": path, "mode": mode.strip(), "text": text}


def _file_restore(ctx, node, rec):
    f = rec.get("file")
    if not f:
        return
    if f["mode"] == "absent":
        ctx.run(in_node(node, "rm", "-f", f["path"]))
        return
    # cat > keeps the inode (and the overlay's ownership); chmod puts the mode back
    ctx.run(sh(node, "cat > {p} && chmod {m} {p}".format(p=f["path"], m=f["mode"])), input=f["text"])


def hosts_with_changed_entry(text: str, name: str) -> str:
    """/etc/hosts with the address of the line naming ``name`` changed (the others as they are)."""
    out = []
    for line in text.splitlines(True):
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and name in words[1:] and "." in words[0]:
            line = line.replace(words[0], wrong_address(words[0]), 1)
        out.append(line)
    return "".join(out)


def hosts_with_stale_line(text: str, name: str) -> str:
    """/etc/hosts with a line above the managed block (at the top when there is none) mapping ``name`` to a wrong
    address - one left from before the pod was deployed, or typed by hand: the resolver reads the file top down, so
    it wins over the block, which stays as the deploy wrote it (issue 46)."""
    addr = None
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and name in words[1:] and "." in words[0]:
            addr = words[0]
    if addr is None:
        raise ValueError("/etc/hosts has no line for %s (nothing to make stale)" % name)
    stale = "%s\t%s\n" % (wrong_address(addr), name)
    lines = text.splitlines(True)
    at = next((i for i, line in enumerate(lines) if line.startswith("# BEGIN dgxpod toolkit")), 0)  # dgx_network marker
    return "".join(lines[:at] + [stale] + lines[at:])


def _hosts_stale_inject(ctx, node, rec):
    _file_keep(ctx, node, HOSTS, rec)
    new = hosts_with_stale_line(rec["file"]["text"], _peer(ctx.pod(), node))
    ctx.run(sh(node, "cat > %s" % HOSTS), input=new)


def _hosts_inject(ctx, node, rec):
    _file_keep(ctx, node, HOSTS, rec)
    new = hosts_with_changed_entry(rec["file"]["text"], _peer(ctx.pod(), node))
    ctx.run(sh(node, "cat > %s" % HOSTS), input=new)


def fstab_with_changed_option(text: str, mount_point: str, option: str, value: str) -> str:
    """/etc/fstab with one option of the managed line of ``mount_point`` set to ``value`` (as an admin
    would edit it by hand); lines outside the nfs_client block and the other mounts stay as they are.
    ValueError when the block has no line for that mount point (nothing to change: the fault would not
    be injected)."""
    out, inside, done = [], False, False
    for line in text.splitlines(True):
        if line.startswith(FSTAB_MARKERS[0]):
            inside = True
        elif line.startswith(FSTAB_MARKERS[1]):
            inside = False
        words = line.split()
        if inside and len(words) >= 4 and words[1] == mount_point and not done:
            opts = words[3].split(",")
            names = [o.split("=", 1)[0] for o in opts]
            if option in names:  # changed in place, as an edit by hand would
                opts[names.index(option)] = "%s=%s" % (option, value)
            else:
                opts.append("%s=%s" % (option, value))
            words[3] = ",".join(opts)
            line = " ".join(words) + "\n"
            done = True
        out.append(line)
    if not done:
        raise ValueError("%s: no managed line for %s between %s and %s" % (FSTAB, mount_point, *FSTAB_MARKERS))
    return "".join(out)


def _fstab_inject(ctx, node, rec):
    _file_keep(ctx, node, FSTAB, rec)
    new = fstab_with_changed_option(rec["file"]["text"], "/mnt/isilon2", "rsize", "65536")
    ctx.run(sh(node, "cat > %s" % FSTAB), input=new)


def _nccl_env_inject(ctx, node, rec):
    _file_keep(ctx, node, NCCL_ENV, rec)
    ctx.run(in_node(node, "rm", "-f", NCCL_ENV))


# --------------------------------------------------------------------------- an unreachable DGX

def _sshd_freeze(ctx, node, rec):
    """Freeze the node's sshd (the recorded listener, SIGSTOP) and end its open sessions (Ansible's
    ControlPersist masters would otherwise go on working through them): new connections hang, as on a hung
    node. The MPI container's sshd is not touched."""
    pid = recorded_pid(ctx, node, "sshd")
    ctx.run(["kill", "-STOP", str(pid)])
    children = ctx.run(["ps", "-o", "pid=", "--ppid", str(pid)], check=False).split()
    if children:
        ctx.run(["kill", "-TERM"] + children, check=False)


# --------------------------------------------------------------------------- HCA port counters (the stand-in sysfs)

# a port of the stand-in sysfs in a DGX node (inventories/sim dgx_network_sysfs_root; sim/standins/podsim_hw.py
# fake_counter_files) and the ticker that raises its counters (sim/standins/, mounted over /usr/local/sbin)
STANDIN_PORT = "/etc/podsim/sysfs/sys/class/infiniband/%s/ports/1"
TICKER = "/usr/local/sbin/podsim-hca-ticker"


def counter_values(text: str, names: List[str]) -> Dict[str, str]:
    """``{name: value}`` from the inject's ``<name> <value>`` lines; RuntimeError unless every counter is there with
    a whole number (nothing to restore at the clear otherwise: the fault is not injected)."""
    got = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        if name in names and value.strip().isdigit():
            got[name] = value.strip()
    missing = [n for n in names if n not in got]
    if missing:
        raise RuntimeError("the stand-in sysfs has no readable %s (sim/podsim up writes it): %r" % (
            ", ".join(missing), text[:200]))
    return got


def _hca_counters_rising(hca: str, steps: Dict[str, int], interval: int = 1):
    """A fault of HCA's port counters that rise while the validation runs: the inject keeps the counters' values,
    then starts the ticker in the node (each counter up by its step every ``interval`` seconds; its pid and start time
    recorded, so only that process is ever signalled); the clear stops it and writes the values back."""
    port = STANDIN_PORT % hca
    names = sorted(steps)

    def inject(ctx, node, rec):
        if "counters" not in rec:
            out = ctx.run(sh(node, "cd %s && for f in %s; do printf '%%s ' $f; cat $f; done" % (port, " ".join(names))))
            rec["counters"] = counter_values(out, names)
        if rec.get("ticker") and ctx.is_alive(rec["ticker"]):
            return  # ticking already (an inject again)
        args = " ".join("%s=%d" % (n, steps[n]) for n in names) + " --interval %d" % interval
        out = ctx.run(sh(node, "%s %s %s </dev/null >/dev/null 2>&1 & echo $! $(cut -d' ' -f22 /proc/$!/stat)" % (
            TICKER, port, args)))
        pid, start = out.split()
        rec["ticker"] = {"pid": int(pid), "start": int(start)}

    def clear(ctx, node, rec):
        ticking = rec.get("ticker")
        wait = ""
        if ticking and ctx.is_alive(ticking):
            ctx.run(["kill", "-TERM", str(ticking["pid"])])
            wait = "for i in $(seq 50); do kill -0 %d 2>/dev/null || break; sleep 0.1; done; " % ticking["pid"]
        values = rec.get("counters") or {n: "0" for n in names}  # no record: the healthy value
        ctx.run(sh(node, wait + "; ".join("printf '%%s\\n' %s > %s/%s" % (values[n], port, n) for n in names)))
    return inject, clear


# --------------------------------------------------------------------------- RDMA (the perftest stand-ins)

RDMA_FAULTS = "/etc/podsim/rdma_faults.json"  # sim/standins/podsim_rdma.py FAULTS_PATH: {hca: kind}


def rdma_faults_script(hca: str, kind: Optional[str]) -> str:
    """The shell line (run in the node) that sets ``hca``'s perftest stand-in fault to ``kind`` in the node's fault
    file, or takes it away (None); the other HCAs' faults stay."""
    code = ("import json,os,sys; p,h,k=sys.argv[1:4]; d=json.load(open(p)) if os.path.exists(p) else {}; "
            "d.pop(h,None) if k=='-' else d.__setitem__(h,k); json.dump(d,open(p,'w'))")
    return "python3 -c \"%s\" %s %s %s" % (code, RDMA_FAULTS, hca, kind or "-")


def _rdma_hca(hca: str, kind: Optional[str]):
    """The perftest stand-ins' fault of one HCA (sim/standins/podsim_rdma.py): ``rtr`` - its QPs cannot reach RTR,
    every RDMA run through it fails in perftest's words while TCP over its netdev still works; None clears it."""
    def act(ctx, node, rec):
        ctx.run(sh(node, rdma_faults_script(hca, kind)))
    return act


# --------------------------------------------------------------------------- InfiniBand fabric (issue 40 item 5)

def _ib_fault(key: str, value: str):
    """A fault of the infiniband-diags stand-ins' fabric (``podsim ib``: every DGX alike, the fabric map written by
    ``podsim ib --map``): the inject sets it; the clear sets again the fabric's other faults as they are now."""
    def inject(ctx, node, rec):
        ctx.run(podsim("ib", "--fault", "%s=%s" % (key, value)))

    def clear(ctx, node, rec):
        current = json.loads(ctx.run(podsim("ib")) or "{}")
        current.pop(key, None)
        args = []
        for k in sorted(current):
            v = current[k]
            if k == "swap":
                args += ["--fault", "swap=%s" % ",".join(e.replace(" ", ":", 1) for e in v)]
            elif isinstance(v, dict):
                args += [a for hca, what in sorted(v.items()) for a in
                         ("--fault", "%s=%s:%s" % (k, hca.replace(" ", ":", 1), what))]
            else:
                args += ["--fault", "%s=%s" % (k, "1" if v else "0")]
        ctx.run(podsim("ib", "--clear", *args))
    return inject, clear
