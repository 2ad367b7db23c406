# -*- coding: utf-8 -*-
"""GPU copy bandwidth under load (nvbandwidth, issue 39 item 5): host->device and device->host per GPU, and
device<->device over NVLink, judged against the DGX model's figure and against the pod's other GPUs (pure).

Input: the GPU stage's recorded nodes (``pod_stages.gpu.nodes``, gpu/eval.py), each DGX's
``facts.nvbandwidth`` = ``{"result": <bandwidth_parse.parse_nvbandwidth(...)> or None, "error": str or None}``.
A DGX without the key did not run nvbandwidth and gets no check from here.

What is judged, per GPU (:func:`per_gpu` reads it from the parsed output):

- ``h2d``/``d2h``: the copy-engine tests ``host_to_device_memcpy_ce`` / ``device_to_host_memcpy_ce`` (the SM
  tests where the CE ones did not run: they are only compared with peers, issue NVIDIA/nvbandwidth#24 shows an
  H100's SM host-to-device at 35 GB/s against 53 device-to-host);
- ``d2d``: ``device_to_device_memcpy_read_ce`` (else ``_write_ce``, else the SM ones): a GPU's figure is the
  median of its row and column (every copy to and from it), so one GPU with a bad NVLink is low while the GPUs
  that share one slow pair with it are not.

Two checks per direction:

- ``gpu_bandwidth_<dir>`` (``absolute``: a hardware figure, skipped on the pod-in-a-box): at least
  :data:`HOST_FRACTION` of the model's PCIe link rate (the catalogue's ``gpu_pcie_gen``/``gpu_pcie_width`` at
  :data:`PCIE_GBPS_PER_LANE`), and for NVSwitch models at least :data:`NVLINK_FRACTION` of its NVLink rate
  (``nvlinks_per_gpu`` x ``nvlink_gbps``); a DGX-1's hybrid cube-mesh pairs differ by design (1, 2 or no NVLink),
  so its device-to-device figure is judged against peers only;
- ``gpu_bandwidth_<dir>_peers``: at least :data:`PEER_FRACTION` of the median of the pod's GPUs of the same DGX
  model (the node's own GPUs among them): one GPU at half its peers' host-to-device fails naming node and GPU.

Every failure is ``NODE_PERF`` about ``Subject(node=, gpu=)``; a DGX whose nvbandwidth failed is an ``error``
naming the node and the tool's words. Thresholds can be set per pod under ``expectations.gpu``
(``bandwidth_host_fraction``, ``bandwidth_nvlink_fraction``, ``bandwidth_peer_fraction``).
"""
from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import dgx_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.bandwidth_parse import matrix_direction
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_PERF, CheckResult, Subject,
                                                                                  expectation)

__all__ = ["DIRECTIONS", "HOST_FRACTION", "NVLINK_FRACTION", "PCIE_GBPS_PER_LANE", "PEER_FRACTION",
           "bandwidth_checks", "expected_gbps", "per_gpu"]

# PCIe data rate per lane and direction, GB/s: 8 / 16 / 32 GT/s with 128b/130b encoding (PCI-SIG PCI Express Base
# Specification 3.0 / 4.0 / 5.0). A figure this module adds: the catalogue gives the generation and width only.
PCIE_GBPS_PER_LANE: Dict[int, float] = {3: 8 * 128 / 130 / 8, 4: 16 * 128 / 130 / 8, 5: 32 * 128 / 130 / 8}
SRC_PCIE = "PCI-SIG PCIe 3.0/4.0/5.0: 8/16/32 GT/s per lane, 128b/130b (0.985/1.969/3.938 GB/s per lane)"

# What share of the link rate a healthy GPU's copy reaches in nvbandwidth, with room to spare (toolkit defaults):
# public runs show ~80% of PCIe (NVIDIA/nvbandwidth#42: A100 Gen4 x16 host-to-device 25.13 GB/s of 31.5; #15:
# Gen4 x16 23.9-26.4 GB/s) and ~90% of NVLink (nvbandwidth README: 276 GB/s GPU to GPU on DGX A100's 300).
HOST_FRACTION = 0.7
NVLINK_FRACTION = 0.7
SRC_FRACTIONS = ("toolkit default: nvbandwidth reaches ~80%% of the PCIe rate (NVIDIA/nvbandwidth issues #42, #15) and "
                 "~90%% of the NVLink rate (nvbandwidth README, DGX A100 276 of 300 GB/s); %.0f%% is the floor")
# A GPU below this share of its peers' median is the odd one (run-to-run spread of one GPU is a few percent).
PEER_FRACTION = 0.8
SRC_PEERS = ("toolkit rule (docs/validation.md): a GPU's copy bandwidth is at least %.0f%% of the median of the pod's "
             "GPUs of its DGX model")

DIRECTIONS = ("h2d", "d2h", "d2d")
_WORDS = {"h2d": "host-to-device", "d2h": "device-to-host", "d2d": "GPU-to-GPU (NVLink)"}
# The tests each direction is read from, best first (copy engine before SM kernels).
_TESTS = {"h2d": ("host_to_device_memcpy_ce", "host_to_device_memcpy_sm"),
          "d2h": ("device_to_host_memcpy_ce", "device_to_host_memcpy_sm"),
          "d2d": ("device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce",
                  "device_to_device_memcpy_read_sm", "device_to_device_memcpy_write_sm")}


# every check this module emits (the fault drill and its tests name checks literally)
CHECKS = ("gpu_bandwidth", "gpu_bandwidth_h2d", "gpu_bandwidth_d2h", "gpu_bandwidth_d2d", "gpu_bandwidth_h2d_peers",
          "gpu_bandwidth_d2h_peers", "gpu_bandwidth_d2d_peers")

def _test_matrix(parsed: Dict[str, Any], direction: str) -> Tuple[Optional[str], Optional[Dict[str, Any]], List[str]]:
    """(test name, its matrix, why none) of the best test ``direction`` is read from. A test whose name the tool
    did not print is known by its matrix's SUM key."""
    found: Dict[str, Dict[str, Any]] = {}
    waived: List[str] = []
    for t in parsed.get("tests") or []:
        for mx in t.get("matrices") or []:
            name = t.get("name") or mx.get("key")
            if name in _TESTS[direction] and name not in found:
                found[name] = mx
        if t.get("status") in ("waived", "error") and t.get("name") in _TESTS[direction]:
            waived.append("%s %s%s" % (t["name"], t["status"], (": %s" % t["error"]) if t.get("error") else ""))
    for name in _TESTS[direction]:
        if name in found:
            return name, found[name], waived
    return None, None, waived


def per_gpu(parsed: Dict[str, Any]) -> Dict[str, Any]:
    """{direction: {"test": name or None, "gpus": {gpu index: GB/s}, "why": [waived/failed tests]}} from a parsed
    nvbandwidth output (see the module docstring for which test and which figure)."""
    out: Dict[str, Any] = {}
    for direction in DIRECTIONS:
        name, mx, why = _test_matrix(parsed, direction)
        gpus: Dict[int, float] = {}
        if mx is not None:
            kind = matrix_direction(mx)
            values = mx.get("values") or []
            cols = [int(c) for c in mx.get("column_labels") or range(len(values[0]) if values else 0)]
            if direction in ("h2d", "d2h") and kind in ("h2d", "d2h") and values:
                gpus = {cols[k]: v for k, v in enumerate(values[0]) if v is not None}
            elif direction == "d2d" and kind == "d2d":
                rows = [int(r) for r in mx.get("row_labels") or range(len(values))]
                for i, g in enumerate(rows):
                    pairs = [v for k, v in enumerate(values[i]) if v is not None and cols[k] != g]
                    pairs += [values[j][k] for j, r in enumerate(rows) for k, c in enumerate(cols)
                              if c == g and r != g and values[j][k] is not None]
                    if pairs:
                        gpus[g] = statistics.median(pairs)
        out[direction] = {"test": name, "gpus": gpus, "why": why}
    return out


def expected_gbps(model: Any, direction: str) -> Tuple[Optional[float], Optional[str]]:
    """(the link rate in GB/s a GPU of ``model`` copies over in ``direction``, its source) from the hardware
    catalogue: the GPU's PCIe link for h2d/d2h, its NVLinks through NVSwitches for d2d; (None, why) where no one
    figure applies (an unknown model, a DGX-1's cube-mesh pairs)."""
    m = dgx_model(model)
    if m is None:
        return None, "unknown dgx_model %r" % (model,)
    if direction in ("h2d", "d2h"):
        lane = PCIE_GBPS_PER_LANE.get(m.gpu_pcie_gen)
        if lane is None:
            return None, "no PCIe rate for Gen%s" % m.gpu_pcie_gen
        return lane * m.gpu_pcie_width, "%s (PCIe Gen%d x%d); %s" % (m.sources.get("gpu"), m.gpu_pcie_gen,
                                                                      m.gpu_pcie_width, SRC_PCIE)
    if not m.nvswitch:
        return None, ("%s: GPU pairs have 1, 2 or no NVLinks (hybrid cube-mesh), so no one pair figure; judged "
                      "against peers only" % m.title)
    return m.nvlinks_per_gpu * m.nvlink_gbps, "%s (%d NVLinks x %.3f GB/s); %s" % (
        m.sources.get("gpu"), m.nvlinks_per_gpu, m.nvlink_gbps, m.sources.get("nvlink_rate"))


def _fraction(expectations: Dict[str, Any], key: str, default: float) -> Tuple[float, str]:
    value, source = expectation(expectations or {}, "gpu", key, default)
    return float(value), source


def _node(node: str, gpu: Optional[int] = None) -> Dict[str, Any]:
    return {"subject": Subject(node=node, gpu=gpu), "category": NODE_PERF}


def _per_gpu_results(check: str, node: str, values: Dict[int, float], floor: float, expected_text: str,
                     source: str, cause, absolute: bool, details: Dict[str, Any]) -> List[CheckResult]:
    """One fail per GPU below ``floor`` (its node and GPU the subject), else one pass for the node with its lowest
    GPU as the measurement."""
    fails = [CheckResult(check, node, "fail", expected=round(floor, 2), measured=round(v, 2), unit="GB/s",
                         source=source, cause=cause(g, v), absolute=absolute,
                         details=dict(details, gpu=g, expected_text=expected_text), **_node(node, g))
             for g, v in sorted(values.items()) if v < floor]
    if fails:
        return fails
    low_gpu, low = min(values.items(), key=lambda kv: (kv[1], kv[0]))
    return [CheckResult(check, node, "pass", expected=round(floor, 2), measured=round(low, 2), unit="GB/s",
                        source=source, absolute=absolute,
                        details=dict(details, gpus=len(values), note="the lowest of its %d GPUs (GPU %d)" % (
                            len(values), low_gpu), expected_text=expected_text), **_node(node))]


def bandwidth_checks(nodes: Dict[str, Any], expectations: Optional[Dict[str, Any]] = None) -> List[CheckResult]:
    """The checks of the module docstring for every DGX of ``nodes`` (``pod_stages.gpu.nodes``) that ran
    nvbandwidth; [] when none did."""
    exp = expectations or {}
    host_frac, host_src = _fraction(exp, "bandwidth_host_fraction", HOST_FRACTION)
    nvl_frac, nvl_src = _fraction(exp, "bandwidth_nvlink_fraction", NVLINK_FRACTION)
    peer_frac, peer_src = _fraction(exp, "bandwidth_peer_fraction", PEER_FRACTION)
    out: List[CheckResult] = []
    readings: Dict[str, Tuple[Any, Dict[str, Any]]] = {}
    for node, entry in sorted((nodes or {}).items()):
        facts = (entry or {}).get("facts") or {}
        if entry.get("status") != "ok" or "nvbandwidth" not in facts:
            continue
        nvb = facts.get("nvbandwidth") or {}
        if nvb.get("result") is None:
            out.append(CheckResult("gpu_bandwidth", node, "error", source="nvbandwidth",
                                   reason="%s: nvbandwidth failed: %s" % (node, nvb.get("error") or "no result"),
                                   **_node(node)))
            continue
        readings[node] = (entry.get("dgx_model"), per_gpu(nvb["result"]))
    for direction in DIRECTIONS:
        # the pod's GPUs of each model, for the peer comparison
        by_model: Dict[Any, List[float]] = {}
        for model, reading in readings.values():
            by_model.setdefault(model, []).extend(reading[direction]["gpus"].values())
        for node, (model, reading) in sorted(readings.items()):
            r = reading[direction]
            words = _WORDS[direction]
            if not r["gpus"]:
                out.append(CheckResult("gpu_bandwidth_%s" % direction, node, "skipped", source="nvbandwidth",
                                       reason="%s: no %s measurement%s" % (node, words, (" (%s)" % "; ".join(
                                           r["why"])) if r["why"] else ""), **_node(node)))
                continue
            details = {"test": r["test"], "direction": direction}
            rate, rate_src = expected_gbps(model, direction)
            frac, frac_src = (host_frac, host_src) if direction != "d2d" else (nvl_frac, nvl_src)
            if r["test"] and r["test"].endswith("_sm") and direction != "d2d":
                out.append(CheckResult("gpu_bandwidth_%s" % direction, node, "skipped", source=rate_src,
                                       absolute=True, reason="%s: only the SM-copy test %s ran; the figure is for "
                                       "copy-engine copies" % (node, r["test"]), **_node(node)))
            elif rate is None:
                out.append(CheckResult("gpu_bandwidth_%s" % direction, node, "skipped", source=rate_src,
                                       absolute=True, reason="%s: %s" % (node, rate_src), **_node(node)))
            else:
                floor = rate * frac
                src = "%s; %s" % (rate_src, (SRC_FRACTIONS % (frac * 100)) if frac_src == "toolkit default"
                                  else "fraction %s: %s" % (frac, frac_src))
                out += _per_gpu_results(
                    "gpu_bandwidth_%s" % direction, node, r["gpus"], floor,
                    "%.0f%% of %.1f GB/s" % (frac * 100, rate), src,
                    lambda g, v, n=node, w=words, f=floor, rt=rate, fr=frac, m=model: (
                        "%s GPU %d: %s copy %.2f GB/s, below %.2f GB/s (%.0f%% of the %s's %.1f GB/s link)" % (
                            n, g, w, v, f, fr * 100, m, rt)), True, details)
            peers = by_model.get(model) or []
            ref = statistics.median(peers)
            floor = ref * peer_frac
            own = sorted(r["gpus"].values())
            count = len(peers)
            src = (SRC_PEERS % (peer_frac * 100)) if peer_src == "toolkit default" else "fraction %s: %s" % (
                peer_frac, peer_src)
            out += _per_gpu_results(
                "gpu_bandwidth_%s_peers" % direction, node, r["gpus"], floor,
                "%.0f%% of the pod's median %.2f GB/s" % (peer_frac * 100, ref), src,
                lambda g, v, n=node, w=words, f=floor, rf=ref, o=own, c=count: (
                    "%s GPU %d: %s copy %.2f GB/s, %.0f%% of the median %.2f GB/s of the pod's %d GPUs of its model "
                    "(this node's GPUs %.2f-%.2f GB/s); expected at least %.2f" % (
                        n, g, w, v, 100.0 * v / rf if rf else 0.0, rf, c, o[0], o[-1], f)),
                False, dict(details, peer_median=round(ref, 2), peers=len(peers)))
    return out
