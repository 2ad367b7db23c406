# -*- coding: utf-8 -*-
"""The identity and network stages (registered in module_utils/report/stages.py): is every DGX the node the
inventory describes, and is its network state the model's. Pure functions.

Each stage records, on localhost, ``pod_stages.<stage> = {"hosts": {host: reading or None}}``
(playbooks/validate_identity.yml, validate_network.yml through playbooks/tasks/record_stage.yml). A reading is
what the role read on the node (:func:`identity_reading`, :func:`network_reading`); ``None``: the host gave none
(unreachable, or its play failed before the check ran), which is an ``error`` naming it (result.check.no_result).

- ``identity`` (NODE_STATE, subject the node): its hostname is its inventory name and every modelled NIC name
  is among its interfaces. A problem per missing NIC (subject: the NIC) and one for the hostname.
- ``network`` (NODE_STATE, subject the node): the kernel state read back (dgx_nic_apply in check mode) has no
  difference from the model - each difference a NODE_STATE problem of its NIC, its cause in a finding's words
  ("MTU 1500, model 9000"); every full-MTU ping of the mesh (pod_ping_mesh) answered - each failed ping a REACH
  problem towards the peer, its NIC and address; the RDMA hardware has no problem (pod.derive.rdma_problem_items)
  - each a NODE_STATE problem of its NIC. An RDMA state the tool could not read ('Priority trust state is not
  supported on your system', mlnx_qos or cma_roce_mode exiting 1) is a problem in the tool's words, never a pass;
  when it is the only kind of problem the check is ``error`` (not verified), otherwise ``fail``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, REACH, CheckResult,
    Problem, Subject, pass_fail, per_host)

KERNEL_PREFIX = "kernel differs from the model: "


def _missing(wanted: Sequence[str], present: Sequence[str]) -> List[str]:
    """The names of ``wanted`` that are not in ``present``, once each, in ``wanted``'s order."""
    out: List[str] = []
    for name in wanted:
        if name not in present and name not in out:
            out.append(name)
    return out


# ------------------------------------------------------------------------------------------------ identity

def identity_reading(hostname: str, interfaces: Sequence[str], nics: Sequence[Mapping[str, Any]],
                     check_hostname: Any = True, check_nics: Any = True) -> Dict[str, Any]:
    """One DGX's identity reading (roles/pod_identity): what the node says and what the model names."""
    return {"hostname": hostname, "interfaces": list(interfaces or []), "nics": [n["name"] for n in nics or []],
            "check_hostname": bool(check_hostname), "check_nics": bool(check_nics)}


def identity_result(host: str, reading: Mapping[str, Any]) -> CheckResult:
    """pass when the node's hostname is ``host`` (unless the reading's ``check_hostname`` is off) and every
    modelled NIC name is among its interfaces (unless ``check_nics`` is off); fail otherwise, one problem per
    missing NIC and one for the hostname."""
    hostname = reading.get("hostname")
    hostname_ok = (not reading.get("check_hostname", True)) or hostname == host
    missing = _missing(list(reading.get("nics") or []), list(reading.get("interfaces") or [])) \
        if reading.get("check_nics", True) else []
    problems = [Problem("NIC %s missing on the node" % nic, NODE_STATE, Subject(node=host, nic=nic),
                        cause="%s missing on the host" % nic) for nic in missing]
    if not hostname_ok:
        problems.append(Problem("hostname is %s, inventory says %s" % (hostname, host), NODE_STATE,
                                Subject(node=host), cause="hostname %s" % hostname))
    note = "hostname %s%s" % (hostname, "" if hostname_ok else " (expected %s)" % host)
    if missing:
        note += "; missing NICs: " + ", ".join(missing)
    return CheckResult("identity", host, pass_fail(not problems), subject=Subject(node=host), category=NODE_STATE,
                       problems=tuple(problems),
                       details={"hostname": hostname, "hostname_ok": bool(hostname_ok), "missing_nics": missing,
                                "note": note})


def identity_messages(result: Mapping[str, Any], interfaces: Sequence[str]) -> List[str]:
    """The identity check's failures in words, for roles/pod_identity's assert (``result``: its to_dict())."""
    out = []
    if not result.get("hostname_ok"):
        out.append("hostname is %s, inventory says %s" % (result.get("hostname"), result.get("host")))
    if result.get("missing_nics"):
        out.append("NICs missing on the node: %s (it has: %s)" % (", ".join(result["missing_nics"]),
                                                                  ", ".join(sorted(interfaces or []))))
    return out


def evaluate_identity(recorded: Mapping[str, Any], expectations: Mapping[str, Any],
                      context: Mapping[str, Any]) -> List[CheckResult]:
    """The identity stage: one ``identity`` check per DGX of the record."""
    return per_host(recorded, "identity", identity_result)


# ------------------------------------------------------------------------------------------------- network

def network_reading(verify_state: Optional[Mapping[str, Any]], mesh: Optional[Mapping[str, Any]] = None,
                    rdma_problems: Optional[Sequence[Mapping[str, Any]]] = None,
                    names: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """One DGX's network reading (roles/dgx_network tasks/verify.yml), only what the evaluation reads: the
    kernel differences (dgx_nic_apply in check mode: ``differences`` and their lines ``changes``, or its ``msg``
    when the read failed), the mesh's count and failed pings (pod_ping_mesh: ``checked``, ``unanswered``), the RDMA
    problems (pod.derive.rdma_problem_items), the pod names that resolve elsewhere on it (pod_resolve: ``checked``,
    ``wrong``; or its ``msg`` when it could not run)."""
    verify_state = verify_state or {}
    mesh = mesh or {}
    state: Dict[str, Any] = {}
    if "changes" in verify_state:
        state["changes"] = list(verify_state.get("changes") or [])
        state["differences"] = list(verify_state.get("differences") or [])
    else:
        state["msg"] = verify_state.get("msg", "verify failed")
    return {"state": state, "pings": mesh.get("checked", 0),
            "ping_failures": [{k: f.get(k) for k in ("nic", "peer", "peer_nic", "address", "fabric", "mtu", "text",
                                                     "small_ok") if f.get(k) is not None}
                              for f in mesh.get("unanswered") or []],
            "rdma": [dict(p) for p in rdma_problems or []], **_names_reading(names)}


def _names_reading(names: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The name-resolution part of a network reading: {} when not checked (a skipped or absent task)."""
    if not names or names.get("skipped"):
        return {}
    if "wrong" not in names:
        return {"names_error": str(names.get("msg") or "the name check failed")}
    return {"names": names.get("checked", 0),
            "names_wrong": [{k: w.get(k) for k in ("name", "expected", "got", "line_no", "line", "text")
                             if w.get(k) is not None} for w in names.get("wrong") or []]}


def difference_cause(d: Mapping[str, Any]) -> str:
    """A kernel difference as a finding says it: 'MTU 1500, model 9000'."""
    name = "MTU" if d.get("field") == "mtu" else str(d.get("field"))
    return "%s %s, model %s" % (name, d.get("before"), d.get("after"))


def mtu_path_cause(f: Mapping[str, Any]) -> str:
    """A failed full-MTU ping whose small ping answered, as a finding says it (issue 46: not "does not answer"; the
    finding names the node, its addresses and the DGX that see it, the problem's text the path)."""
    return ("full-MTU frames (MTU %s) fail while small ones pass: a NIC or switch port on the path is below the "
            "fabric's MTU" % f.get("mtu"))


def network_result(host: str, reading: Mapping[str, Any]) -> CheckResult:
    """pass when the kernel state has no difference from the model, every full-MTU ping answered and the RDMA
    hardware has no problem; fail with every problem otherwise. A verify read that failed is a problem in itself,
    with its message."""
    state = reading.get("state") or {}
    problems: List[Problem] = []
    if "changes" not in state:
        problems.append(Problem(str(state.get("msg") or "verify failed"), NODE_STATE, Subject(node=host)))
    diffs = list(state.get("differences") or [])
    for i, line in enumerate(state.get("changes") or []):
        d = diffs[i] if i < len(diffs) else {}
        problems.append(Problem(KERNEL_PREFIX + str(line), NODE_STATE, Subject(node=host, nic=d.get("nic")),
                                cause=difference_cause(d) if d else None))
    for f in reading.get("ping_failures") or []:
        problems.append(Problem(str(f.get("text")), REACH,
                                Subject(node=host, nic=f.get("nic"), peer=f.get("peer"), peer_nic=f.get("peer_nic"),
                                        address=f.get("address"), fabric=f.get("fabric")),
                                cause=mtu_path_cause(f) if f.get("small_ok") else None))
    unread = [p for p in reading.get("rdma") or [] if p.get("unread")]
    for p in reading.get("rdma") or []:
        problems.append(Problem(str(p.get("text")), NODE_STATE, Subject(node=host, nic=p.get("nic")),
                                cause=p.get("cause")))
    if reading.get("names_error"):
        problems.append(Problem("name resolution not checked: %s" % reading["names_error"], NODE_STATE,
                                Subject(node=host)))
    for w in reading.get("names_wrong") or []:
        # the node's own resolver is at fault (a stale hosts line above the managed block, a DNS record): the
        # finding is on this node, with the hosts file's line when one names it
        problems.append(Problem("%s: %s" % (host, w.get("text")), NODE_STATE,
                                Subject(node=host, path="/etc/hosts" if w.get("line") else None),
                                cause=str(w.get("text"))))
    pings = reading.get("pings", 0)
    details: Dict[str, Any] = {"pings": pings}
    if "names" in reading:
        details["names"] = reading["names"]
    if not problems:
        details["note"] = "%s full-MTU pings answered" % pings + (
            "; %s pod names resolve to their modelled addresses" % reading["names"] if "names" in reading else "")
    status, reason = pass_fail(not problems), None
    if problems and len(unread) == len(problems):  # nothing found wrong, but part of the state was never read
        status = "error"
        reason = "the RDMA state of %s could not be read (the tool's words in the problems); nothing else differs" % (
            ", ".join(sorted({str(p.get("nic")) for p in unread})))
    return CheckResult("network", host, status, reason=reason, subject=Subject(node=host), category=NODE_STATE,
                       problems=tuple(problems), details=details)


def evaluate_network(recorded: Mapping[str, Any], expectations: Mapping[str, Any],
                     context: Mapping[str, Any]) -> List[CheckResult]:
    """The network stage: one ``network`` check per DGX of the record."""
    return per_host(recorded, "network", network_result)
