# -*- coding: utf-8 -*-
"""Pinned versions (issue 39 item 4): what the GPU stage read on each DGX against the versions the RA profile or
the pod model pins (pure).

The pins are ``expectations.versions`` of the merged expectations (pod/profile.py ``merged_expectations``: the RA
profile's ``expectations.versions`` with ``pod.validation.expectations.versions`` on top), keyed as
preflight/validation_checks.py :data:`VERSION_KEYS` says and checked there before a run. A pin is

- an exact version: ``"550.54.15"`` (the whole reading, or for OFED its version part, must be it);
- a prefix ending in ``.`` or ``*``: ``"535."`` (any 535 release), ``"MLNX_OFED_LINUX-23.10*"``;
- a minimum: ``">=535.104"`` (compared number by number: 535.104.05 >= 535.104, 535.86 is not);
- a list of those (any one holds); ``hca_firmware`` may also map a board id (PSID) to a pin.

The GPU stage reads the driver and CUDA version (nvidia-smi), each GPU's VBIOS (when gpu/parse.py keeps it), the
OFED/DOCA release (``ofed_info -s``) and each HCA's firmware and board id (sysfs). A pin on something it does not
read (NCCL, fabric manager, kernel, BIOS) is reported ``skipped`` with that reason, never dropped.

Each DGX is judged on its own: a pod uniformly on a driver outside the pin fails on every node (the node the
subject: the findings group them), which the consistency checks of gpu/eval.py (one version across the pod) cannot
see. A failure says what was pinned, what was read and where the pin comes from (the profile's source, or the
pod model: ``pod.validation.expectations.versions.<key>``).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.validation_checks import (VERSION_KEYS,
                                                                                                 VERSIONS)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE, CheckResult,
                                                                                  Subject)

__all__ = ["check_pins", "node_pins", "pin_holds", "version_numbers", "version_pins"]

# Keys the GPU stage reads, and how (gpu/eval.py facts: dgx_gpu_health's dgx_gpu).
READ = ("driver", "cuda", "vbios", "ofed", "hca_firmware")
# the pins the node stage judges (module_utils/node/eval.py: uname -r, the DMI BIOS version) - the GPU stage leaves
# them to it
NODE_READ = ("kernel", "bios")
# every check this module emits, one per VERSION_KEYS key (the fault drill and its tests name checks literally)
CHECKS = ("version_pin_driver", "version_pin_cuda", "version_pin_vbios", "version_pin_ofed", "version_pin_hca_firmware",
          "version_pin_nccl", "version_pin_fabric_manager", "version_pin_kernel", "version_pin_bios")
_WHAT = {"driver": "NVIDIA driver", "cuda": "CUDA version", "vbios": "VBIOS", "ofed": "OFED/DOCA release",
         "hca_firmware": "HCA firmware", "kernel": "Linux kernel", "bios": "BIOS"}


def version_numbers(text: str) -> Tuple[int, ...]:
    """The numbers of a version, from its first digit on: "535.104.05" -> (535, 104, 5),
    "MLNX_OFED_LINUX-23.10-1.1.9.0" -> (23, 10, 1, 1, 9, 0), "20.37.1014" -> (20, 37, 1014)."""
    m = re.search(r"\d", text or "")
    return tuple(int(n) for n in re.findall(r"\d+", text[m.start():])) if m else ()


def _one_holds(pin: str, measured: str) -> bool:
    pin, measured = pin.strip(), measured.strip()
    if pin.startswith(">="):
        want = version_numbers(pin[2:])
        got = version_numbers(measured)
        width = max(len(want), len(got))
        return bool(got) and got + (0,) * (width - len(got)) >= want + (0,) * (width - len(want))
    if pin.endswith("*"):
        return measured.startswith(pin[:-1])
    if pin.endswith("."):
        return measured.startswith(pin) or _version_part(measured).startswith(pin)
    return measured == pin or _version_part(measured) == pin


def _version_part(measured: str) -> str:
    """The version in a reading that carries a name: "MLNX_OFED_LINUX-23.10-1.1.9.0" -> "23.10-1.1.9.0"."""
    m = re.search(r"\d", measured)
    return measured[m.start():] if m else measured


def pin_holds(pin: Any, measured: Optional[str]) -> bool:
    """Whether ``measured`` meets ``pin`` (a string or a list of them; see the module docstring)."""
    if measured is None:
        return False
    pins = pin if isinstance(pin, list) else [pin]
    return any(_one_holds(str(p), str(measured)) for p in pins)


def _pin_text(pin: Any) -> str:
    return " or ".join(str(p) for p in pin) if isinstance(pin, list) else str(pin)


def version_pins(expectations: Optional[Dict[str, Any]]) -> Dict[str, Tuple[Any, str]]:
    """{key: (pin, where it comes from)} of ``expectations.versions``. A profile item ``{value, source}`` keeps its
    source (the RA profile's document); a pod override says so and names its key in the pod model."""
    out: Dict[str, Tuple[Any, str]] = {}
    pins = ((expectations or {}).get(VERSIONS)) or {}
    if not isinstance(pins, dict):
        return out
    for key, item in pins.items():
        if isinstance(item, dict) and "value" in item:
            value, source = item["value"], str(item.get("source") or "")
        else:
            value, source = item, ""
        where = "pod.validation.expectations.%s.%s" % (VERSIONS, key)
        if not source or source.startswith("pod override"):
            source = "pod model (%s)%s" % (where, (": " + source) if source else "")
        else:
            source = "RA profile expectations.%s.%s: %s" % (VERSIONS, key, source)
        out[str(key)] = (value, source)
    return out


def _node_result(key: str, node: str, pin: Any, measured: Optional[str], source: str,
                 **subject: Any) -> CheckResult:
    check = "version_pin_%s" % key
    where = node + "".join(" %s %s" % (k.upper(), v) for k, v in subject.items() if k in ("gpu", "hca"))
    ok = pin_holds(pin, measured)
    return CheckResult(check, node, "pass" if ok else "fail", expected=_pin_text(pin), measured=measured,
                       source=source, cause=None if ok else "%s: %s %s is outside the pin %s (%s)" % (
                           where, _WHAT[key], measured, _pin_text(pin), source),
                       details={k: v for k, v in subject.items() if v is not None},
                       subject=Subject(node=node, **subject), category=NODE_STATE)


def _node_checks(key: str, node: str, facts: Dict[str, Any], pin: Any, source: str) -> List[CheckResult]:
    smi = facts.get("smi") or {}
    if key in ("driver", "cuda"):
        value = smi.get("driver_version" if key == "driver" else "cuda_version")
        if value is None:
            return [_unread(key, node, source, "nvidia-smi -q -x was not read" if not smi else
                            "nvidia-smi reported no %s" % _WHAT[key])]
        return [_node_result(key, node, pin, value, source)]
    if key == "ofed":
        if not facts.get("ofed"):
            return [_unread(key, node, source, "ofed_info -s gave no release (OFED/DOCA not installed?)")]
        return [_node_result(key, node, pin, facts["ofed"], source)]
    if key == "vbios":
        gpus = smi.get("gpus") or []
        read = [g for g in gpus if g.get("vbios")]
        if not read:
            return [_unread(key, node, source, "the GPU stage's nvidia-smi reading holds no VBIOS version" if gpus
                            else "nvidia-smi -q -x was not read")]
        return _worst([_node_result(key, node, pin, g["vbios"], source, gpu=g.get("index")) for g in read], node)
    # hca_firmware: one pin, or {board_id: pin}
    hcas = facts.get("hcas") or {}
    results = []
    for dev, h in sorted(hcas.items()):
        board_pin = pin.get(h.get("board_id")) if isinstance(pin, dict) else pin
        if board_pin is None or not h.get("fw"):
            continue  # a board the pin does not name, or no firmware read (sysfs)
        results.append(_node_result(key, node, board_pin, h["fw"], source, hca=dev, nic=h.get("netdev")))
    if not results:
        return [_unread(key, node, source, "no HCA firmware read%s" % (
            " for the pinned boards %s" % ", ".join(sorted(pin)) if isinstance(pin, dict) else ""))]
    return _worst(results, node)


def _worst(results: List[CheckResult], node: str) -> List[CheckResult]:
    """The failing GPUs/HCAs one by one, or one pass for the node."""
    fails = [r for r in results if r.status == "fail"]
    if fails:
        return fails
    r = results[0]
    return [CheckResult(r.check, node, "pass", expected=r.expected, measured="%s (all %d)" % (
        ", ".join(sorted({str(x.measured) for x in results})), len(results)), source=r.source,
        details={"count": len(results)}, subject=Subject(node=node), category=NODE_STATE)]


def _unread(key: str, node: str, source: str, why: str) -> CheckResult:
    return CheckResult("version_pin_%s" % key, node, "error", source=source,
                       reason="%s: %s is pinned but was not read: %s" % (node, _WHAT[key], why),
                       subject=Subject(node=node), category=NODE_STATE)


def check_pins(facts_by_node: Dict[str, Dict[str, Any]], expectations: Optional[Dict[str, Any]]) -> List[CheckResult]:
    """Every pin of ``expectations.versions`` against every DGX's reading (``{node: dgx_gpu facts}``, the DGX that
    answered): per node and pin a pass or a fail (per GPU for the VBIOS, per HCA for the firmware); a pin on
    something the stage does not read is one ``skipped`` result for the pod. [] when nothing is pinned."""
    out: List[CheckResult] = []
    for key, (pin, source) in sorted(version_pins(expectations).items()):
        if key not in VERSION_KEYS:
            out.append(CheckResult("version_pin_%s" % key, "pod", "error", source=source,
                                   reason="unknown version pin '%s' (preflight names it): the pins are %s" % (
                                       key, ", ".join(VERSION_KEYS)), subject=Subject(), category=POD_STATE))
            continue
        if key in NODE_READ:
            continue  # judged by the node stage (node_pins)
        if key not in READ:
            out.append(CheckResult("version_pin_%s" % key, "pod", "skipped", expected=_pin_text(pin), source=source,
                                   reason="%s is pinned (%s) but the GPU stage does not read %s" % (
                                       key, _pin_text(pin), VERSION_KEYS[key]), subject=Subject(),
                                   category=POD_STATE))
            continue
        for node, facts in sorted(facts_by_node.items()):
            out += _node_checks(key, node, facts or {}, pin, source)
    return out


def node_pins(values_by_node: Dict[str, Dict[str, Optional[str]]], expectations: Optional[Dict[str, Any]]
              ) -> List[CheckResult]:
    """The node stage's pins (:data:`NODE_READ`): ``values_by_node`` = {node: {"kernel": uname -r, "bios": the DMI
    BIOS version}} (None: not read, with the reason under ``<key>_error``). Per node and pin a pass or a fail (a
    pod uniformly on a kernel outside the pin fails on every node), or an error when the value was not read. []
    when nothing of NODE_READ is pinned."""
    out: List[CheckResult] = []
    for key, (pin, source) in sorted(version_pins(expectations).items()):
        if key not in NODE_READ:
            continue
        for node, values in sorted(values_by_node.items()):
            value = (values or {}).get(key)
            if value is None:
                out.append(_unread(key, node, source, str((values or {}).get(key + "_error") or "not read")))
            else:
                out.append(_node_result(key, node, pin, str(value), source))
    return out
