# -*- coding: utf-8 -*-
"""GPU and node health evaluation (validate.yml --tags gpu), pure Python.

``evaluate(measurements, expectations, context)`` turns what ``playbooks/validate_gpu.yml`` recorded in
``pod_stages.gpu`` into :class:`CheckResult` objects; ``markdown``/``html`` give the report's per-DGX GPU
table. Every check names the node, and for a GPU its index and PCI bus id, what was seen and what was
expected, with the source of the expectation (docs/validation.md "GPU and node health").

Recorded measurements (one entry per DGX, written by the dgx_gpu_health module)::

    {"level": 1, "nodes": {host: {"status": "ok" | "error" | "unreachable", "reason": str, "dgx_model": "dgx1",
                                  "facts": <dgx_gpu_health's dgx_gpu facts>}}}
"""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE, CheckResult,
                                                                                  Subject, compare)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_eval import bandwidth_checks
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.pins import check_pins
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import VERSION_KEYS

SRC_SMI = "nvidia-smi documentation (nvidia-smi.txt, -q fields)"
SRC_PAGE_RETIREMENT = ("NVIDIA 'GPU Memory Error Management' / Dynamic Page Retirement docs: a GPU with 60 or more "
                       "retired pages, a pending retirement, a pending row remap or a row-remap failure needs a "
                       "reset or an RMA")
SRC_THROTTLE = ("NVML clocks event (throttle) reasons (nvmlClocksEventReasons): power cap, HW slowdown, HW/SW "
                "thermal slowdown and power brake must not be active on an idle GPU")
SRC_PEERMEM = ("NVIDIA GPUDirect RDMA documentation: nvidia_peermem (driver >= 465) or the older nv_peer_mem "
               "module must be loaded for NCCL's GPU Direct RDMA (NCCL_NET_GDR_READ in the RA)")
SRC_DCGM = ("NVIDIA DCGM diagnostics (dcgmi diag -r 1 quick, -r 2 medium, -r 3 long, -r 4 extra long): every test "
            "must pass; reason is DCGM's")
SRC_CONSISTENT = "toolkit rule (docs/validation.md): one driver, CUDA, HCA firmware and OFED version across the pod"


def gpu_expectations(model: Any) -> Optional[Dict[str, Any]]:
    """What a DGX model's GPUs look like (count, the family in their names, NVLink links and rate, PCIe link,
    NVSwitch) and the source, from the hardware catalogue (module_utils/catalog/dgx.py); None for an unknown model."""
    m = dgx_model(model)
    if m is None:
        return None
    return {"gpus": m.gpus, "family": m.gpu_family, "nvlinks": m.nvlinks_per_gpu, "link_gbps": m.nvlink_gbps,
            "pcie_gen": m.gpu_pcie_gen, "pcie_width": m.gpu_pcie_width, "nvswitch": m.nvswitch,
            "source": m.sources["gpu"]}


RETIRED_PAGE_LIMIT = 60
LINK_TOLERANCE = 0.95  # a link reported below 95% of its nominal speed is trained down
BAD_THROTTLE = ("sw_power_cap", "hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")


def _on(node: str, **subject: Any) -> Dict[str, Any]:
    """A node's own state (its GPU ``gpu=``, HCA ``hca=`` and that HCA's netdev ``nic=``): the CheckResult's
    subject and category."""
    return {"subject": Subject(node=node, **subject), "category": NODE_STATE}


def _pod() -> Dict[str, Any]:
    """The pod as a whole (a consistency across the DGX, nothing recorded)."""
    return {"subject": Subject(), "category": POD_STATE}


def _gpu_where(node: str, g: Dict[str, Any]) -> str:
    return "%s GPU %s (%s)" % (node, g.get("index"), g.get("bus_id"))


def _gpu_res(check: str, node: str, g: Dict[str, Any], ok: bool, measured: Any, expected: Any, source: str,
             cause: str, unit: Optional[str] = None, how: Optional[str] = None) -> CheckResult:
    return CheckResult(check, node, "pass" if ok else "fail", expected=expected, measured=measured, unit=unit,
                       source=source, cause=None if ok else cause,
                       details=dict(compare(how) if how else {}, gpu=g.get("index"), bus_id=g.get("bus_id")),
                       **_on(node, gpu=g.get("index")))


def _per_gpu(check: str, node: str, gpus: List[Dict[str, Any]], judge, expected: Any, source: str,
             unit: Optional[str] = None, how: Optional[str] = None) -> List[CheckResult]:
    """One fail per failing GPU (naming it), or one pass for the node. ``how``: how a numeric measurement
    compares with ``expected`` when it is not a threshold (result/check.compare)."""
    fails, values = [], []
    for g in gpus:
        ok, measured, cause = judge(g)
        values.append(measured)
        if not ok:
            fails.append(_gpu_res(check, node, g, False, measured, expected, source, cause, unit, how))
    if fails:
        return fails
    details = dict(compare(how) if how else {}, gpus=len(gpus))
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        # a number per GPU (uncorrectable errors, degrees C): the node's highest, said to be so
        return [CheckResult(check, node, "pass", expected=expected, measured=max(values), unit=unit, source=source,
                            details=dict(details, note="the highest of its %d GPUs" % len(gpus)), **_on(node))]
    return [CheckResult(check, node, "pass", expected=expected, measured="all %d GPUs" % len(gpus), source=source,
                        details=details, **_on(node))]


def _one_gpu(gpus: Any) -> Optional[int]:
    """The GPU a DCGM result is about when it names exactly one (``"2"``), as the index the per-GPU checks
    give; None when it names none or several (``"2,5"``): a fault of the node."""
    return int(gpus) if str(gpus).strip().isdigit() else None


def _int_keys(d: Optional[Dict[Any, Any]]) -> Dict[int, Any]:
    return {int(k): v for k, v in (d or {}).items()}


def _node_checks(node: str, entry: Dict[str, Any], peers_bus_ids: List[str]) -> List[CheckResult]:
    out: List[CheckResult] = []
    model = entry.get("dgx_model")
    facts = entry.get("facts") or {}
    exp = gpu_expectations(model)
    if exp is None:
        return [CheckResult("gpu_model", node, "error", reason="unknown dgx_model %r: no GPU expectations" % model,
                            **_on(node))]
    source = exp["source"]
    tool_errors = {e["tool"]: e["error"] for e in facts.get("errors") or []}
    smi = facts.get("smi")
    if smi is None:
        why = tool_errors.get("nvidia-smi -q -x", "nvidia-smi -q -x was not read")
        return [CheckResult("gpu_inventory", node, "error", source=SRC_SMI,
                            reason="%s: nvidia-smi -q -x failed: %s" % (node, why), **_on(node))]
    gpus = smi.get("gpus") or []
    # count and model
    n_exp = exp["gpus"]
    missing = sorted(set(peers_bus_ids) - {g["bus_id"] for g in gpus})
    cause = "%s has %d GPUs, expected %s (%s)" % (node, len(gpus), n_exp, model)
    if missing:
        cause += "; missing bus id(s) present on the other DGX: %s" % ", ".join(missing)
    out.append(CheckResult("gpu_count", node, "pass" if len(gpus) == n_exp else "fail", expected=n_exp,
                           measured=len(gpus), source=source, cause=None if len(gpus) == n_exp else cause,
                           details=dict(compare("="), **({"missing_bus_ids": missing} if missing else {})),
                           **_on(node)))
    out += _per_gpu("gpu_model", node, gpus,
                    lambda g: (exp["family"] in g["name"], g["name"],
                               "%s is a %s, expected a %s (%s)" % (_gpu_where(node, g), g["name"], exp["family"],
                                                                   model)),
                    exp["family"], source)
    def persistence(g):
        mode = g.get("persistence_mode")
        if mode is None:  # N/A or an NVML error text: not a "Disabled" reading
            return False, "not reported", "%s: nvidia-smi did not report the persistence mode (N/A or an NVML " \
                "error): check the GPU and the driver" % _gpu_where(node, g)
        return mode is True, "Enabled" if mode else "Disabled", \
            "%s: persistence mode is off (nvidia-persistenced not running?)" % _gpu_where(node, g)
    out += _per_gpu("gpu_persistence_mode", node, gpus, persistence, "Enabled",
                    "NVIDIA driver persistence documentation; DGX OS enables nvidia-persistenced")

    def ecc(g):
        vol = (g.get("ecc") or {}).get("volatile") or {}
        unc = vol.get("uncorrectable")
        if g.get("ecc_mode") is False:
            return False, "ECC disabled", "%s: ECC mode is disabled" % _gpu_where(node, g)
        if unc:
            return False, unc, "%s: %d volatile uncorrectable ECC error(s) since the driver loaded" % (
                _gpu_where(node, g), unc)
        if unc is None and g.get("ecc_mode") is None:  # neither the mode nor a count: nothing says it is sound
            return False, "not reported", "%s: nvidia-smi reported neither the ECC mode nor the ECC error counts " \
                "(N/A or an NVML error): check the GPU and the driver" % _gpu_where(node, g)
        return True, unc, ""
    out += _per_gpu("gpu_ecc", node, gpus, ecc, 0, SRC_SMI + "; " + SRC_PAGE_RETIREMENT, "uncorrectable errors",
                    how="=")

    def memory(g):
        rp, rr = g.get("retired_pages"), g.get("remapped_rows")
        if rp:
            total = (rp.get("single_bit") or 0) + (rp.get("double_bit") or 0)
            if rp.get("pending"):
                return False, "pending", "%s: a page retirement is pending (reset the GPU)" % _gpu_where(node, g)
            if rp.get("pending") is None and not rr:  # the pending flag was N/A: not known to be clear
                return False, "pending not reported", "%s: nvidia-smi did not report whether a page retirement is " \
                    "pending (N/A or an NVML error)" % _gpu_where(node, g)
            if total >= RETIRED_PAGE_LIMIT:
                return False, total, "%s: %d retired pages, the limit is %d" % (_gpu_where(node, g), total,
                                                                                 RETIRED_PAGE_LIMIT)
        if rr:
            if rr.get("failure"):
                return False, "remap failure", "%s: row remapping failed (RMA)" % _gpu_where(node, g)
            if rr.get("pending"):
                return False, "pending", "%s: a row remap is pending (reset the GPU)" % _gpu_where(node, g)
        return True, "none pending", ""
    out += _per_gpu("gpu_memory_retirement", node, gpus, memory,
                    "< %d retired pages, none pending, no remap failure" % RETIRED_PAGE_LIMIT, SRC_PAGE_RETIREMENT)

    def pcie(g):
        p = g.get("pcie") or {}
        width, max_gen = p.get("width"), p.get("max_gen")
        if width != exp["pcie_width"] or (max_gen is not None and max_gen < exp["pcie_gen"]):
            return False, "Gen%s x%s" % (max_gen, width), "%s: PCIe link x%s (Gen%s capable), expected x%d Gen%d" % (
                _gpu_where(node, g), width, max_gen, exp["pcie_width"], exp["pcie_gen"])
        return True, "Gen%s x%s" % (max_gen, width), ""
    out += _per_gpu("gpu_pcie_link", node, gpus, pcie, "Gen%d x%d" % (exp["pcie_gen"], exp["pcie_width"]),
                    source + "; " + SRC_SMI + " (current width; the link generation drops at idle, so the "
                    "maximum generation is compared)")

    def throttle(g):
        active = [r for r in BAD_THROTTLE if (g.get("throttle") or {}).get(r)]
        return (not active, ",".join(active) or "none",
                "%s: clocks held back by %s while idle" % (_gpu_where(node, g), ", ".join(active)))
    out += _per_gpu("gpu_throttle", node, gpus, throttle, "none of %s" % ", ".join(BAD_THROTTLE), SRC_THROTTLE)

    def temperature(g):
        t, limit = g.get("temperature_c"), g.get("temperature_slowdown_c")
        if t is None or limit is None:
            return True, t, ""
        return t < limit, t, "%s: %.0f C, at or above its slowdown threshold %.0f C" % (_gpu_where(node, g), t, limit)
    out += _per_gpu("gpu_temperature", node, gpus, temperature, "below the GPU's slowdown threshold", SRC_SMI, "C")

    # NVLink: every link up at the expected speed
    nvl = facts.get("nvlink")
    if nvl is None:
        out.append(CheckResult("gpu_nvlink", node, "error", source=source,
                               reason="%s: nvidia-smi nvlink -s failed: %s" % (
                                   node, tool_errors.get("nvidia-smi nvlink -s", "not read")), **_on(node)))
    else:
        nvl = _int_keys(nvl)

        def links(g):
            got = _int_keys((nvl.get(g["index"]) or {}).get("links"))
            floor = exp["link_gbps"] * LINK_TOLERANCE
            down = [k for k, v in sorted(got.items()) if v is None]
            slow = [k for k, v in sorted(got.items()) if v is not None and v < floor]
            up = len(got) - len(down)
            if down or slow or up < exp["nvlinks"]:
                what = []
                if down:
                    what.append("link(s) %s inactive" % ",".join(map(str, down)))
                if slow:
                    what.append("link(s) %s below %.3f GB/s" % (",".join(map(str, slow)), floor))
                if not got:
                    what.append("no NVLink reported")
                return False, "%d/%d up" % (up, exp["nvlinks"]), "%s: %s; expected %d links at %.3f GB/s" % (
                    _gpu_where(node, g), "; ".join(what) or "%d links" % up, exp["nvlinks"], exp["link_gbps"])
            return True, "%d up" % up, ""
        out += _per_gpu("gpu_nvlink", node, gpus, links, "%d links at %.3f GB/s" % (exp["nvlinks"],
                                                                                     exp["link_gbps"]), source)
    reads = facts.get("nvlink_errors") or []
    if len(reads) == 2 and all(r is not None for r in reads):
        before, after = _int_keys(reads[0]), _int_keys(reads[1])

        def rising(g):
            b, a = _int_keys(before.get(g["index"])), _int_keys(after.get(g["index"]))
            grew = []
            for link, counters in sorted(a.items()):
                for name, value in sorted(counters.items()):
                    old = (b.get(link) or {}).get(name, 0)
                    if value > old:
                        grew.append("link %d %s %d -> %d" % (link, name, old, value))
            return not grew, "; ".join(grew) or "steady", "%s: NVLink error counters rising during the stage: %s" % (
                _gpu_where(node, g), "; ".join(grew))
        out += _per_gpu("gpu_nvlink_errors", node, gpus, rising, "no counter rising", SRC_SMI + " (nvlink -e)")
    else:
        out.append(CheckResult("gpu_nvlink_errors", node, "error", source=SRC_SMI,
                               reason="%s: nvidia-smi nvlink -e was not read twice: %s" % (
                                   node, tool_errors.get("nvidia-smi nvlink -e", "not read")), **_on(node)))
    # kernel modules, fabric manager
    mods = facts.get("modules") or {}
    if mods.get("error"):
        out.append(CheckResult("gpu_peermem", node, "error", source=SRC_PEERMEM,
                               reason="%s: /proc/modules not read: %s" % (node, mods["error"]), **_on(node)))
    else:
        pm_name = mods.get("peermem")
        out.append(CheckResult("gpu_peermem", node, "pass" if pm_name else "fail",
                               expected="nvidia_peermem or nv_peer_mem", measured=pm_name or "not loaded",
                               source=SRC_PEERMEM, cause=None if pm_name else
                               "%s: no GPUDirect RDMA peer-memory module loaded (modprobe nvidia_peermem)" % node,
                               **_on(node)))
    if exp["nvswitch"]:
        fm = facts.get("fabric_manager") or {}
        ok = fm.get("state") == "active"
        out.append(CheckResult("gpu_fabric_manager", node, "pass" if ok else "fail", expected="active",
                               measured=fm.get("state") or "unknown", source=source,
                               cause=None if ok else "%s: nvidia-fabricmanager is %s" % (node, fm.get("state")),
                               **_on(node)))
    # DCGM
    dcgm = facts.get("dcgm") or {}
    if dcgm.get("level") == 0:
        out.append(CheckResult("gpu_dcgm_diag", node, "skipped", source=SRC_DCGM,
                               reason="%s: DCGM diagnostics not run (level 0: -e gpu_dcgm_level=0 or the run "
                                      "profile)" % node, **_on(node)))
    elif not dcgm.get("present"):
        out.append(CheckResult("gpu_dcgm_diag", node, "skipped", source=SRC_DCGM,
                               reason="%s: dcgmi is not installed" % node, **_on(node)))
    elif dcgm.get("result") is None:
        out.append(CheckResult("gpu_dcgm_diag", node, "error", source=SRC_DCGM,
                               reason="%s: dcgmi diag -r %s failed: %s" % (node, dcgm.get("level"), dcgm.get("error")),
                               **_on(node)))
    else:
        fails = []
        for t in dcgm["result"]["tests"]:
            for r in t["results"]:
                if r["status"] in ("fail", "warn"):
                    # a Deployment test's result covers every GPU: name the one(s) DCGM's message names
                    gpus = r.get("failing") or r["gpus"]
                    fails.append(CheckResult(
                        "gpu_dcgm_diag", node, "fail", expected="pass", measured=r["status"], source=SRC_DCGM,
                        cause="%s: DCGM %s test '%s' %s on %s: %s" % (
                            node, t.get("category"), t["name"], r["status"].upper(),
                            ("GPU(s) %s" % gpus) if gpus else "the node (DCGM names no GPU)",
                            "; ".join(r["warnings"] + r["info"]) or "no reason given"),
                        details={"gpu": gpus, "test": t["name"], "level": dcgm.get("level")},
                        **_on(node, gpu=_one_gpu(gpus))))
        out += fails or [CheckResult("gpu_dcgm_diag", node, "pass", expected="pass", source=SRC_DCGM,
                                     measured="%d tests pass (level %s)" % (len(dcgm["result"]["tests"]),
                                                                          dcgm.get("level")), **_on(node))]
    # HCA PCIe links
    for dev, h in sorted((facts.get("hcas") or {}).items()):
        width, max_width = h.get("width"), h.get("max_width")
        if width is None:
            continue
        ok = max_width is None or width >= max_width
        out.append(CheckResult("hca_pcie_link", node, "pass" if ok else "fail", expected="x%s" % max_width,
                               measured="x%s" % width, source="PCIe link capability of the adapter (sysfs "
                               "max_link_width); 004/001 HCAs are x16 ConnectX adapters",
                               cause=None if ok else "%s %s (%s): PCIe link x%s, capable of x%s" % (
                                   node, dev, h.get("pci"), width, max_width), details={"hca": dev},
                               **_on(node, hca=dev, nic=h.get("netdev"))))
    return out


def _consistency(check: str, values: Dict[str, Optional[str]], what: str) -> List[CheckResult]:
    """One value of ``what`` across the DGX. When most DGX agree and a few do not, each odd DGX is a failure of its
    own (its node the subject: the finding names it, not the pod); with no majority, the pod fails as a whole."""
    by_value: Dict[str, List[str]] = {}
    for node, v in sorted(values.items()):
        if v is not None:
            by_value.setdefault(v, []).append(node)
    if not by_value:
        return [CheckResult(check, "pod", "skipped", source=SRC_CONSISTENT, reason="no %s was read" % what,
                            **_pod())]
    measured = "; ".join("%s: %s" % (v, ", ".join(n)) for v, n in sorted(by_value.items()))
    if len(by_value) == 1:
        return [CheckResult(check, "pod", "pass", expected="one %s" % what, measured=measured, source=SRC_CONSISTENT,
                            **_pod())]
    ranked = sorted(by_value.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    (common, most), rest = ranked[0], ranked[1:]
    if len(most) > sum(len(n) for _, n in rest):  # a majority: the others are the odd ones
        return [CheckResult(check, node, "fail", expected=common, measured=value, source=SRC_CONSISTENT,
                            cause="%s has %s %s, the other %d DGX have %s" % (node, what, value, len(most), common),
                            **_on(node))
                for value, nodes in rest for node in nodes]
    return [CheckResult(check, "pod", "fail", expected="one %s" % what, measured=measured, source=SRC_CONSISTENT,
                        cause="mixed %s across the pod, no version on most DGX: %s" % (what, measured), **_pod())]


def _unreachable(entry: Dict[str, Any]) -> bool:
    """The DGX did not answer: its record says so (``unreachable: true`` or status ``unreachable``;
    filter_plugins/gpu.py)."""
    return bool(entry.get("unreachable")) or entry.get("status") == "unreachable"


def evaluate(measurements: Dict[str, Any], expectations: Dict[str, Any], context: Dict[str, Any]) -> List[CheckResult]:
    nodes = measurements.get("nodes") or {}
    out: List[CheckResult] = []
    if not nodes:
        return [CheckResult("gpu_inventory", "pod", "error", reason="no DGX recorded GPU facts", **_pod())]
    # the GPUs' bus ids on each DGX (a missing GPU is named by the bus id the other DGX have)
    buses: Dict[str, set] = {}
    for node, e in nodes.items():
        smi = (e.get("facts") or {}).get("smi") if e.get("status") == "ok" else None
        if smi:
            buses[node] = {g["bus_id"] for g in smi.get("gpus") or []}
    for node, entry in sorted(nodes.items()):
        if entry.get("status") != "ok":
            out.append(CheckResult("gpu_node", node, "error", reason="%s: %s" % (
                node, entry.get("reason") or entry.get("status")), unreachable=_unreachable(entry), **_on(node)))
            continue
        others = set().union(*[b for n, b in buses.items() if n != node]) if len(buses) > 1 else set()
        out += _node_checks(node, entry, sorted(others))
    facts = {n: (e.get("facts") or {}) for n, e in nodes.items() if e.get("status") == "ok"}
    out.extend(_consistency("gpu_driver_consistent", {n: (f.get("smi") or {}).get("driver_version")
                                                      for n, f in facts.items()}, "NVIDIA driver version"))
    out.extend(_consistency("gpu_cuda_consistent", {n: (f.get("smi") or {}).get("cuda_version")
                                                    for n, f in facts.items()}, "CUDA version"))
    fw = {}
    for n, f in facts.items():
        hcas = f.get("hcas") or {}
        fw[n] = ",".join(sorted({"%s %s" % (h.get("board_id") or "", h.get("fw")) for h in hcas.values()
                                 if h.get("fw")})) or None
    out.extend(_consistency("hca_firmware_consistent", fw, "HCA firmware (per board)"))
    out.extend(_consistency("ofed_consistent", {n: f.get("ofed") for n, f in facts.items()}, "OFED/DOCA version"))
    out.extend(check_pins(facts, expectations))  # expectations.versions: what the profile or the pod pins
    out.extend(bandwidth_checks(nodes, expectations))  # nvbandwidth, on the DGX that ran it (gpu/bandwidth_eval.py)
    return out


# --------------------------------------------------------------------------- report

def _summary(doc: Dict[str, Any]) -> List[Dict[str, str]]:
    """One row per DGX: model, driver, ECC, NVLink, PCIe, DCGM (each the worst status of its checks)."""
    m = (doc.get("measurements") or {}).get("gpu") or {}
    checks = [c for c in doc.get("checks") or [] if str(c.get("check", "")).startswith(("gpu_", "hca_",
                                                                                       "version_pin_"))]
    rows = []
    for node, entry in sorted((m.get("nodes") or {}).items()):
        smi = (entry.get("facts") or {}).get("smi") or {}
        names = sorted({g["name"] for g in smi.get("gpus") or []})
        row = {"node": node, "model": "%d x %s" % (len(smi.get("gpus") or []), "/".join(names)) if smi else
               entry.get("status", "?"), "driver": "%s / CUDA %s" % (smi.get("driver_version"), smi.get("cuda_version"))
               if smi else "-"}
        for col, keys in (("ECC", ("gpu_ecc", "gpu_memory_retirement")),
                          ("NVLink", ("gpu_nvlink", "gpu_nvlink_errors")),
                          ("PCIe", ("gpu_pcie_link", "hca_pcie_link")), ("DCGM", ("gpu_dcgm_diag",)),
                          ("bandwidth", tuple("gpu_bandwidth_%s%s" % (d, p) for d in ("h2d", "d2h", "d2d")
                                              for p in ("", "_peers")) + ("gpu_bandwidth",)),
                          ("pins", tuple("version_pin_%s" % k for k in VERSION_KEYS)),
                          ("other", ("gpu_count", "gpu_model", "gpu_persistence_mode", "gpu_throttle",
                                     "gpu_temperature", "gpu_peermem", "gpu_fabric_manager", "gpu_node",
                                     "gpu_inventory"))):
            st = [c["status"] for c in checks if c.get("host") == node and c.get("check") in keys]
            row[col] = next((s for s in ("error", "fail", "pass", "skipped") if s in st), "-")
        rows.append(row)
    return rows


_COLS = ("node", "model", "driver", "ECC", "NVLink", "PCIe", "DCGM", "other", "bandwidth", "pins")


def markdown(doc: Dict[str, Any]) -> List[str]:
    lvl = ((doc.get("measurements") or {}).get("gpu") or {}).get("level")
    lines = ["", "## GPU and node health (DCGM level %s)" % lvl, "",
             "| " + " | ".join(_COLS) + " |", "|" + "---|" * len(_COLS)]
    for r in _summary(doc):
        lines.append("| " + " | ".join(str(r.get(c, "-")) for c in _COLS) + " |")
    return lines


def html(doc: Dict[str, Any]) -> List[str]:
    lvl = ((doc.get("measurements") or {}).get("gpu") or {}).get("level")
    out = ["<h2>GPU and node health (DCGM level %s)</h2>" % escape(str(lvl)), "<table><tr>%s</tr>"
           % "".join("<th>%s</th>" % c for c in _COLS)]
    for r in _summary(doc):
        cells = ['<td class="%s">%s</td>' % (escape(str(r.get(c))), escape(str(r.get(c, "-")))) for c in _COLS]
        out.append("<tr>%s</tr>" % "".join(cells))
    out.append("</table>")
    return out
