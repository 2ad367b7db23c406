# -*- coding: utf-8 -*-
"""The MPI container mesh (roles/ngc_container) - pure functions, stdlib only.

- the pinned known_hosts for the containers' sshd on port 2222,
- the engine command line for one long-lived container and the hash that decides "recreate or not",
- the classification of ssh and mpirun results into "which node, and why",
- a scanner for private-key material in an image archive (every layer).
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from typing import Any, Dict, Iterable, List, Optional, Tuple

# ---------------------------------------------------------------------------------------------------
# known_hosts


def host_patterns(names: Iterable[str], port: int) -> List[str]:
    """known_hosts host patterns for a non-default port: ``[name]:port`` (OpenSSH's format)."""
    out = []
    for n in names:
        if not n:
            continue
        p = n if int(port) == 22 else "[%s]:%d" % (n, int(port))
        if p not in out:
            out.append(p)
    return out


def node_aliases(host: str, nics: List[Dict[str, Any]], pod: Dict[str, Any]) -> List[str]:
    """Every name and address a peer may use for ``host``: its inventory name (with the pod domain
    too), then the addresses of its NICs on fabrics that carry compute traffic (the data fabrics the
    MPI launcher and the TCP BTL use), in NIC order."""
    fabrics = {f["name"]: f for f in pod.get("fabrics") or []}
    names = [host]
    if pod.get("domain"):
        names.append("%s.%s" % (host, pod["domain"]))
    for nic in nics or []:
        if "compute" in (fabrics.get(nic.get("fabric"), {}).get("carries") or []) and nic.get("address"):
            names.append(nic["address"])
    return names


def public_key_fields(line: str) -> Tuple[str, str]:
    """(type, base64) of an OpenSSH public key line; ValueError if it is not one."""
    parts = (line or "").split()
    if len(parts) < 2 or not re.match(r"^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-[\w@.-]+)$", parts[0]) \
            or not re.match(r"^[A-Za-z0-9+/]+={0,2}$", parts[1]):
        raise ValueError("not an OpenSSH public key: %r" % (line or "")[:60])
    return parts[0], parts[1]


def known_hosts(entries: Dict[str, Dict[str, Any]], port: int) -> str:
    """The pinned known_hosts text: one line per node, ``[alias]:port,... type key node``.

    ``entries``: node -> {"aliases": [...], "pubkey": "<type> <base64> [comment]"}. Sorted by node name
    so the file only changes when a key or an alias changes. An alias claimed by two nodes is an error
    (ssh would accept either key for it)."""
    seen: Dict[str, str] = {}
    lines = []
    for node in sorted(entries):
        e = entries[node]
        ktype, kb64 = public_key_fields(e.get("pubkey", ""))
        pats = host_patterns(e.get("aliases") or [node], port)
        for p in pats:
            if p in seen and seen[p] != node:
                raise ValueError("%s is an alias of both %s and %s" % (p, seen[p], node))
            seen[p] = node
        lines.append("%s %s %s %s" % (",".join(pats), ktype, kb64, node))
    return "\n".join(lines) + ("\n" if lines else "")


def known_hosts_keys(text: str) -> Dict[str, str]:
    """{node: "<type> <base64>"} from a known_hosts text that :func:`known_hosts` wrote (the node's name is
    the last field of each line). Lines that are not such entries (comments, hashed or foreign lines) are
    ignored."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) != 4 or line.lstrip().startswith("#"):
            continue
        try:
            ktype, kb64 = public_key_fields(" ".join(parts[1:3]))
        except ValueError:
            continue
        out[parts[3]] = "%s %s" % (ktype, kb64)
    return out


def merge_pinned_keys(members: Iterable[str], fresh: Dict[str, str], remembered: Optional[Dict[str, str]] = None,
                      previous: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The container host key to pin for every member of the mesh (issue 17: a node never loses its pinned
    key because it missed one run).

    For each member, in order of trust: the key collected in this run (``fresh``), else the one remembered
    on the controller from an earlier run (``remembered``), else the one already pinned in the node's
    current known_hosts (``previous``, :func:`known_hosts_keys`). A member seen in no run is left out (it
    has no container to pin); a node that is no longer a member (removed from the inventory) is dropped
    whatever was remembered about it."""
    out: Dict[str, str] = {}
    for node in members:
        for source in (fresh, remembered or {}, previous or {}):
            key = (source.get(node) or "").strip()
            if key:
                out[node] = key
                break
    return out


def authorized_keys(pubkeys: Iterable[str], options: str = "") -> str:
    """authorized_keys text for the pod's MPI key(s); ``options`` e.g. 'from="198.18.0.0/15"'."""
    out = []
    for k in pubkeys:
        ktype, kb64 = public_key_fields(k)
        out.append(("%s %s %s dgxpod-mpi" % (options, ktype, kb64)).strip())
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------
# run options


def run_spec(options: Dict[str, Any]) -> Dict[str, Any]:
    """The canonical run specification (the keys that define the container), with defaults.

    Keys: image, network, uts, gpus, shm_size, ulimits {name: value}, volumes [host:ctr[:ro]],
    devices [path], env_file, env {}, restart, privileged, init, labels {}, extra_args []."""
    spec = {
        "image": str(options["image"]),
        "network": options.get("network") or "host",
        "uts": options.get("uts") or "host",
        "gpus": options.get("gpus") or "",
        "shm_size": str(options.get("shm_size") or ""),
        "ulimits": {str(k): str(v) for k, v in sorted((options.get("ulimits") or {}).items())},
        "volumes": [str(v) for v in options.get("volumes") or []],
        "devices": [str(d) for d in options.get("devices") or []],
        "env_file": options.get("env_file") or "",
        "env": {str(k): str(v) for k, v in sorted((options.get("env") or {}).items())},
        "restart": options.get("restart") or "unless-stopped",
        "privileged": bool(options.get("privileged")),
        "init": bool(options.get("init")),
        "labels": {str(k): str(v) for k, v in sorted((options.get("labels") or {}).items())},
        "extra_args": [str(a) for a in options.get("extra_args") or []],
        "command": [str(a) for a in options.get("command") or []],
    }
    return spec


HASH_LABEL = "org.dgxpod.run-config-sha256"


def config_hash(spec: Dict[str, Any], image_id: str = "", env_file_sha256: str = "") -> str:
    """sha256 over the run spec, the image ID the tag points to and the env file's content: any change
    of these means the running container is not what the play asks for."""
    blob = json.dumps({"spec": spec, "image_id": image_id, "env_file": env_file_sha256}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def run_argv(engine: str, name: str, spec: Dict[str, Any], chash: str) -> List[str]:
    """``<engine> run -d ...`` for one long-lived container (the same flags for docker and podman)."""
    argv = [engine, "run", "--detach", "--name", name, "--network", spec["network"]]
    if spec["uts"]:
        argv += ["--uts", spec["uts"]]
    if spec["gpus"]:
        argv += ["--gpus", spec["gpus"]]
    if spec["shm_size"]:
        argv += ["--shm-size", spec["shm_size"]]
    for k, v in spec["ulimits"].items():
        argv += ["--ulimit", "%s=%s" % (k, v)]
    for v in spec["volumes"]:
        argv += ["--volume", v]
    for d in spec["devices"]:
        argv += ["--device", d]
    if spec["env_file"]:
        argv += ["--env-file", spec["env_file"]]
    for k, v in spec["env"].items():
        argv += ["--env", "%s=%s" % (k, v)]
    if spec["restart"]:
        argv += ["--restart", spec["restart"]]
    if spec["privileged"]:
        argv.append("--privileged")
    if spec["init"]:
        argv.append("--init")
    labels = dict(spec["labels"])
    labels[HASH_LABEL] = chash
    for k in sorted(labels):
        argv += ["--label", "%s=%s" % (k, labels[k])]
    argv += spec["extra_args"]
    argv.append(spec["image"])
    argv += spec["command"]
    return argv


# the --ulimit names the role passes -> (RLIMIT_* name, resource number, line of /proc/<pid>/limits)
RLIMITS = {
    "memlock": ("RLIMIT_MEMLOCK", 8, "Max locked memory"),
    "nofile": ("RLIMIT_NOFILE", 7, "Max open files"),
    "nproc": ("RLIMIT_NPROC", 6, "Max processes"),
    "stack": ("RLIMIT_STACK", 3, "Max stack size"),
    "core": ("RLIMIT_CORE", 4, "Max core file size"),
}
# where each ulimit is set in the role (the others: ngc_container_extra_ulimits)
ULIMIT_VARS = {"memlock": "ngc_container_ulimit_memlock", "stack": "ngc_container_ulimits.stack"}


def hard_limits(proc_limits: str) -> Dict[str, str]:
    """{ulimit name: hard limit} from the text of /proc/<pid>/limits ('unlimited' or a number)."""
    out = {}
    for name, (_, _, label) in RLIMITS.items():
        for line in proc_limits.splitlines():
            if line.startswith(label):
                fields = line[len(label):].split()
                if len(fields) >= 2:
                    out[name] = fields[1]
    return out


def refused_ulimit(error: str) -> Optional[str]:
    """The ulimit name a container engine could not set, from its error: runc (docker) says
    'error setting rlimit type 8: operation not permitted', crun (podman) 'setrlimit `RLIMIT_MEMLOCK`:
    Operation not permitted'. None when the error is about something else."""
    m = re.search(r"rlimit type (\d+)", error)
    if m:
        return next((k for k, v in RLIMITS.items() if v[1] == int(m.group(1))), "type %s" % m.group(1))
    m = re.search(r"setrlimit\W+(RLIMIT_[A-Z]+)", error)
    if m:
        return next((k for k, v in RLIMITS.items() if v[0] == m.group(1)), m.group(1))
    return None


def ulimit_refusal(error: str, ulimits: Dict[str, Any], proc_limits: str = "") -> str:
    """A message naming the limit a container engine refused and the variable to change, or '' when the
    error is not a refused limit. Raising a limit above the machine's hard limit needs CAP_SYS_RESOURCE:
    a DGX has memlock unlimited (RDMA), a sandbox or a tight limits.conf does not."""
    name = refused_ulimit(error)
    if name is None:
        return ""
    rl = RLIMITS.get(name, (name, 0, ""))[0]
    hard = hard_limits(proc_limits).get(name)
    msg = "the container engine refused --ulimit %s=%s (%s: operation not permitted)" % (
        name, ulimits.get(name, "?"), rl)
    if hard is not None:
        msg += "; this node's hard limit is %s%s" % (hard, " bytes" if name in ("memlock", "stack") and
                                                      hard != "unlimited" else "")
    msg += (" and raising it needs CAP_SYS_RESOURCE. Set %s to at most the hard limit (the pod-in-a-box does, "
            "inventories/sim/group_vars/all/containers.yml) or raise the node's limit (DGX OS runs with memlock "
            "unlimited for RDMA)" % ULIMIT_VARS.get(name, "ngc_container_extra_ulimits.%s" % name))
    return msg


def recreate_reasons(inspect: Optional[Dict[str, Any]], image_id: str, chash: str) -> List[str]:
    """Why an existing container (``<engine> container inspect`` output, one object) must be
    recreated; [] when it matches. ``None`` = no container."""
    if not inspect:
        return ["no container"]
    reasons = []
    labels = ((inspect.get("Config") or {}).get("Labels")) or {}
    have_image = inspect.get("Image") or ""
    if image_id and _short_id(have_image) != _short_id(image_id):
        reasons.append("image changed (%s -> %s)" % (_short_id(have_image)[:12], _short_id(image_id)[:12]))
    if labels.get(HASH_LABEL) != chash:
        reasons.append("run options changed")
    return reasons


def _short_id(image_id: str) -> str:
    return (image_id or "").split(":", 1)[-1]


def container_state(inspect: Optional[Dict[str, Any]]) -> str:
    """'running', 'restarting', 'exited', 'created', 'paused', or 'absent'."""
    if not inspect:
        return "absent"
    st = inspect.get("State") or {}
    if isinstance(st, dict):
        status = str(st.get("Status") or "").lower()
        if status in ("running", "restarting", "exited", "created", "paused", "stopped", "dead"):
            return "exited" if status in ("stopped", "dead") else status
        return "running" if st.get("Running") else "exited"
    return str(st).lower() or "exited"


def inspect_status(text: str) -> str:
    """:func:`container_state` from what ``<engine> container inspect <name> 2>&1 || echo rc=$?`` printed (the
    verify step reads it together with the hostname): 'absent' when the engine said no such container (the
    ``rc=N`` line), else the state of the JSON's first object. Raises ValueError on output that is neither."""
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    if not lines or re.match(r"^rc=\d+$", lines[-1].strip()):
        return "absent"
    try:
        data = json.loads("\n".join(lines))
    except ValueError:
        raise ValueError("not container inspect output: %r" % (text or "")[:200]) from None
    obj = data[0] if isinstance(data, list) and data else data if isinstance(data, dict) else None
    return container_state(obj)


# ---------------------------------------------------------------------------------------------------
# verification


REASONS = ("container down", "sshd down", "key rejected", "host key mismatch", "host key unknown",
           "unreachable", "name not resolved", "wrong host answered", "ssh failed")


def classify_ssh(node: str, state: str, rc: Optional[int], stdout: str, stderr: str,
                 expected_hostname: str) -> Dict[str, Any]:
    """One ssh probe (first container -> node's container on 2222, strict host keys): ok or a reason.

    ``state`` is the node's container state as read on that node ('running', 'absent', ...,
    or 'unknown' when the node could not be asked)."""
    res = {"node": node, "ok": False, "reason": "", "detail": ""}
    err = (stderr or "").strip()
    last = err.splitlines()[-1] if err else ""
    if state not in ("running", "unknown"):
        res.update(reason="container down", detail="container is %s on %s" % (state, node))
        return res
    if rc == 0:
        got = (stdout or "").strip().splitlines()
        got_name = got[-1].strip() if got else ""
        if expected_hostname and got_name != expected_hostname:
            res.update(reason="wrong host answered",
                       detail="expected hostname %s, got %r" % (expected_hostname, got_name))
            return res
        res.update(ok=True, detail=got_name)
        return res
    low = err.lower()
    if "remote host identification has changed" in low or "host key for" in low and "has changed" in low:
        res.update(reason="host key mismatch", detail=last)
    elif "host key verification failed" in low and ("no " in low and "host key is known" in low):
        res.update(reason="host key unknown", detail="no pinned host key for this name/port; " + last)
    elif "host key verification failed" in low:
        res.update(reason="host key mismatch", detail=last)
    elif "permission denied" in low:
        res.update(reason="key rejected", detail=last)
    elif "connection refused" in low:
        res.update(reason="sshd down",
                   detail="nothing listens on the port (container %s); %s" % (state, last))
    elif "could not resolve hostname" in low or "name or service not known" in low:
        res.update(reason="name not resolved", detail=last)
    elif any(s in low for s in ("timed out", "no route to host", "network is unreachable")):
        res.update(reason="unreachable", detail=last)
    elif "connection closed" in low or "connection reset" in low or "kex_exchange" in low:
        res.update(reason="sshd down", detail="sshd closed the connection; " + last)
    else:
        res.update(reason="ssh failed", detail="rc=%s %s" % (rc, last))
    return res


def classify_mpirun(expected: Dict[str, str], rc: Optional[int], stdout: str, stderr: str) -> Dict[str, Any]:
    """``mpirun ... hostname`` across the pod: every node's hostname exactly once.

    ``expected``: node -> hostname. Returns ok, per-node counts, missing/duplicate nodes and any
    unexpected output lines."""
    by_name = {v: k for k, v in expected.items()}
    counts = {n: 0 for n in expected}
    unexpected = []
    for line in (stdout or "").splitlines():
        s = line.strip()
        if not s:
            continue
        if s in by_name:
            counts[by_name[s]] += 1
        else:
            unexpected.append(s)
    missing = sorted(n for n, c in counts.items() if c == 0)
    duplicate = sorted(n for n, c in counts.items() if c > 1)
    ok = rc == 0 and not missing and not duplicate and not unexpected
    err_tail = [ln for ln in (stderr or "").strip().splitlines() if ln.strip()][-5:]
    return {"ok": ok, "rc": rc, "counts": counts, "missing": missing, "duplicate": duplicate,
            "unexpected": unexpected, "stderr_tail": err_tail}


# The mpirun line is built in module_utils/containers/mpi_job.py (mpirun_argv), shared by every MPI job.


# ---------------------------------------------------------------------------------------------------
# private keys in images

PRIVATE_KEY_RE = re.compile(
    rb"-----BEGIN ((?:RSA|DSA|EC|OPENSSH|ENCRYPTED|ANY) )?PRIVATE KEY-----\r?\n"
    rb"(?:[A-Za-z-]+: [^\r\n]*\r?\n)*\r?\n?"          # optional PEM headers (Proc-Type, DEK-Info)
    rb"[A-Za-z0-9+/=]{40,}\r?\n")                      # and a real base64 body line
MAX_MEMBER = 256 * 1024 * 1024


def find_private_keys(data: bytes) -> List[str]:
    """The key types of every PEM/OpenSSH private key in ``data`` (header + base64 body; the bare
    header string that ssh-keygen and libcrypto contain is not a key)."""
    return [(m.group(1) or b"").decode().strip() or "PKCS8" for m in PRIVATE_KEY_RE.finditer(data)]


def scan_tar(fileobj, where: str = "", depth: int = 0) -> List[Dict[str, str]]:
    """Scan a tar stream (an image archive from ``podman/docker save``, or a layer in it): every
    regular file is searched for private keys; members that are themselves tar archives (layers) are
    scanned recursively. Returns [{"where": "<layer>!<path>", "type": ..., "in": "file"|"elf"}]."""
    hits: List[Dict[str, str]] = []
    with tarfile.open(fileobj=fileobj, mode="r:*") as tf:
        for m in tf:
            if not m.isfile() or m.size > MAX_MEMBER:
                continue
            f = tf.extractfile(m)
            if f is None:
                continue
            data = f.read()
            path = "%s!%s" % (where, m.name) if where else m.name
            if depth < 3 and _looks_like_tar(data):
                try:
                    hits += scan_tar(io.BytesIO(data), path, depth + 1)
                    continue
                except tarfile.TarError:
                    pass
            elf = data[:4] == b"\x7fELF"
            for ktype in find_private_keys(data):
                hits.append({"where": path, "type": ktype, "in": "elf" if elf else "file"})
    return hits


def key_files(hits: List[Dict[str, str]]) -> List[Dict[str, str]]:
    """The hits that are key material in a file of their own (not compiled into an ELF binary).

    Compiled-in keys are library self-test vectors (Debian's libgnutls30 carries RSA/DSA/EC/PKCS#8
    test keys for its FIPS self-tests): public knowledge, not a secret of this pod, so they are
    reported but do not fail the check."""
    return [h for h in hits if h.get("in") != "elf"]


def _looks_like_tar(data: bytes) -> bool:
    if data[:2] == b"\x1f\x8b" or data[:4] == b"\x28\xb5\x2f\xfd":  # gzip / zstd-compressed layer
        return data[:2] == b"\x1f\x8b"
    return len(data) >= 512 and data[257:262] == b"ustar"
