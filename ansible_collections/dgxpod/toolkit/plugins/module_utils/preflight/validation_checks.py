# -*- coding: utf-8 -*-
"""``pod.validation``: the expectation overrides and sizing inputs validate.yml reads (issue 46, class 2).

Nothing else reads these values before a stage judges a measurement against them, so a mistake here shows up
hours later as every link failing (a percentage, 80, where a fraction, 0.8, is read), as a check that can never
fail (0.97 where a percentage is read), or as nothing at all (a misspelt key is merged and never read). Checked
against what the RA profiles hold (``profiles/<name>.yml``, ``expectations``; docs/validation.md "Overriding an
expectation for one pod"):

- ``pod.validation`` holds ``expectations``, ``workload``, ``dataset_tb`` and ``caches_tb`` only;
- ``expectations.<category>.<key>`` is a key some RA profile has (a key under the wrong category is named with
  the right one), and an override written as a mapping has the profile item's keys (``value``, ``source``, ...);
- a value has the profile's type (a number, a table of numbers, a name) and its unit: ``*_fraction*`` keys are
  fractions of 1, ``*_percent`` keys percentages, other figures are in the profile's ``unit`` (a ``unit:`` other
  than the profile's is not converted); no negative threshold, no figure 100 times off the profile's;
- ``expectations.versions`` pins versions (:data:`VERSION_KEYS`: driver, CUDA, VBIOS, OFED, HCA firmware, NCCL,
  fabric manager, kernel, BIOS; :func:`check_version_pins`), whether or not the RA profile pins any;
- ``expectations.node`` holds the node stage's thresholds (:data:`NODE_KEYS`, :func:`check_node_expectations`),
  whether or not the RA profile sets any (their defaults are the toolkit's, module_utils/node/);
- ``expectations.hca_counters`` holds the HCA port counter stage's limits (:data:`HCA_COUNTER_KEYS`,
  :func:`check_hca_counter_expectations`): a whole number of rises per counter, a bit error rate for symbol errors;
- ``expectations.regression`` holds the baseline comparison's tolerances (report/baseline.py ``tolerance``): a key is
  a measurement class (:data:`REGRESSION_CLASSES`) or a performance check (:data:`REGRESSION_CHECKS`), its value a
  fraction in [0, 1) (:func:`check_regression_tolerances`);
- ``workload`` is a workload class the profile sizes; ``dataset_tb`` a positive number; ``caches_tb`` a mapping of
  cache name to TB.

Pure: takes the pod and the profiles' ``profile`` mappings, returns ``Finding`` objects on ``pod.validation...``
(preflight's sources name the file and line)."""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import load_profile
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Finding, suggest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_PERF, LINK_PERF, NODE_PERF,
                                                                                   POD_PERF)

__all__ = ["check_hca_counter_expectations", "check_node_expectations", "check_pod_validation",
           "check_regression_tolerances", "check_validation", "check_version_pins", "HCA_COUNTERS",
           "HCA_COUNTER_KEYS", "NODE", "NODE_KEYS", "REGRESSION", "REGRESSION_CHECKS", "REGRESSION_CLASSES",
           "VALIDATION_KEYS", "VERSION_KEYS", "VERSIONS"]

# The keys of pod.validation and what each is (docs/validation.md).
VALIDATION_KEYS = {
    "expectations": "overrides of the RA profile's expectations, same layout (expectations.<category>.<key>)",
    "workload": "the workload class the RA sizing uses (a key of the profile's sizing tables)",
    "dataset_tb": "the dataset size in TB (the cache-hit estimate)",
    "caches_tb": "a mapping of cache name to its size in TB (e.g. {linux page cache: 0.5, isilon: 2})",
}
_RATIO = 100.0  # a figure this many times off the profile's is in another unit (GB/s for MB/s, Gb/s for MB/s)

# ``expectations.versions``: the versions an RA profile or a pod may pin (issue 39 item 4; gpu/pins.py compares
# them with what the GPU stage reads). A pin is an exact version ("550.54.15"), a prefix ending in "." or "*"
# ("535."), a minimum (">=535.104"), or a list of those (any one); ``hca_firmware`` may also be a mapping of the
# HCA's board id (PSID, sysfs board_id) to a pin.
VERSIONS = "versions"
VERSION_KEYS = {
    "driver": "the NVIDIA driver (nvidia-smi driver_version)",
    "cuda": "the CUDA version the driver supports (nvidia-smi cuda_version)",
    "vbios": "each GPU's VBIOS (nvidia-smi vbios_version)",
    "ofed": "the MLNX_OFED / DOCA-OFED release (ofed_info -s)",
    "hca_firmware": "the ConnectX firmware (sysfs fw_ver), one pin or {board_id: pin}",
    "nccl": "the NCCL library",
    "fabric_manager": "nvidia-fabricmanager (NVSwitch systems)",
    "kernel": "the Linux kernel (uname -r)",
    "bios": "the system BIOS",
}

# ``expectations.node``: the node stage's thresholds (module_utils/node/kernel_eval.py THRESHOLDS and
# inventory_eval.py; docs/validation.md "Node health"). The toolkit has a default for each, so no RA profile needs
# to list them: key -> (kind, what it is). Kinds: count (a whole number, 0 allowed), hours (a number above 0),
# percent (0-100), gib (a number above 0), path (an absolute path), time (an ISO date-time of the BMC's clock).
NODE = "node"
NODE_KEYS = {
    "kernel_aer_corrected_max": ("count", "corrected PCIe AER errors a device may log in the window (default 100)"),
    "kernel_link_flaps_max": ("count", "link flaps an HCA port may have in the window (default 0)"),
    "kernel_window_hours": ("hours", "the kernel-log window in hours (default 24)"),
    "root_min_free_pct": ("percent", "free space on / in percent (default 10)"),
    "raid_min_free_pct": ("percent", "free space on the data RAID in percent (default 10)"),
    "raid_mount": ("path", "where the data RAID is mounted (default /raid)"),
    "swap_max_gb": ("gib", "the most swap a DGX may have, GiB (default: reported only)"),
    "memory_gb": ("gib", "the installed memory, GiB (default: the catalogue configuration nearest MemTotal)"),
    "sel_since": ("time", "BMC SEL entries dated before this ISO date-time are not judged (default: all)"),
}

# ``expectations.hca_counters``: the HCA port counter stage's limits (module_utils/network/hca_counters.py COUNTERS,
# judged by network/counters_eval.py; docs/validation.md "HCA port counters"): the most a counter may rise between
# the validation's start and its end. The toolkit has a default for each (0 rises; symbol errors a BER of 1e-12 at
# the port's rate), so a profile need not list them. Kinds: count (a whole number, 0 allowed), ber (a bit error
# rate, above 0 and below 1). The congestion counters are reported, never judged: not keys here.
HCA_COUNTERS = "hca_counters"
HCA_COUNTER_KEYS = {
    "symbol_error": ("ber", "the bit error rate symbol errors may reach at the port's rate (default 1e-12)"),
    "link_error_recovery": ("count", "link error recoveries (retrains) over the window (default 0)"),
    "link_downed": ("count", "times the link went down over the window - a flapping link (default 0)"),
    "port_rcv_errors": ("count", "malformed packets received over the window (default 0)"),
    "port_rcv_remote_physical_errors": ("count", "packets received marked bad upstream (default 0)"),
    "port_xmit_discards": ("count", "outbound packets discarded (default 0)"),
    "local_link_integrity_errors": ("count", "local link integrity threshold crossings (default 0)"),
    "excessive_buffer_overrun_errors": ("count", "receive buffer overruns (default 0)"),
    "out_of_sequence": ("count", "RoCE out-of-sequence packets received (default 0)"),
    "packet_seq_err": ("count", "RoCE NAK sequence errors received (default 0)"),
    "local_ack_timeout_err": ("count", "RoCE ACK timeouts (default 0)"),
    "implied_nak_seq_err": ("count", "RoCE implied NAK sequence errors (default 0)"),
    "roce_slow_restart": ("count", "RoCE slow restarts (default 0)"),
    "roce_adp_retrans": ("count", "RoCE adaptive retransmissions (default 0)"),
}


# ``expectations.regression``: how much worse than the pod's baseline run a measurement may be before it is a
# ``regression_<check>`` (issue 43 item 3; report/baseline.py reads ``regression.<check>``, then
# ``regression.<class>``, then its 10 % default). A key is a measurement class - the performance categories of
# result/check.py - or one performance check, named as results.json names it.
REGRESSION = "regression"
REGRESSION_CLASSES = {
    LINK_PERF: "a link's throughput (iperf, iperf_relative)",
    NODE_PERF: "one node's measurement among its peers' (fio_read, fio_relative, gpu_bandwidth_*)",
    JOB_PERF: "a GPU job's speed (nccl_busbw, nccl_relative, train_throughput, train_relative, ...)",
    POD_PERF: "the pod or a step of many nodes as a whole (fio_scaling, storage_sizing, train_storage_bound)",
}
# the checks whose rows are performance rows (tests/unit/test_regression_profiles.py compares this list with the
# evaluators' results, so a new performance check that is missing here fails a test rather than a pod's preflight)
REGRESSION_CHECKS = ("iperf", "iperf_relative", "fio_read", "fio_relative", "fio_scaling", "storage_sizing",
                     "nccl_busbw", "nccl_relative", "train_throughput", "train_relative", "train_read_rate",
                     "train_storage_bound", "train_gpu_util", "gpu_bandwidth", "gpu_bandwidth_h2d",
                     "gpu_bandwidth_d2h", "gpu_bandwidth_d2d", "gpu_bandwidth_h2d_peers", "gpu_bandwidth_d2h_peers",
                     "gpu_bandwidth_d2d_peers", "rdma_bw", "rdma_bw_relative", "rdma_lat")


_MISSING = object()  # an override written as a mapping without its value
_NO_VALUE = "the override has no value: the toolkit's default stays"


def _fix(close: Optional[str], otherwise: str) -> str:
    """The fix of a name nothing reads: the known name close to it, else ``otherwise``."""
    return ("did you mean '%s'?" % close) if close else otherwise


def _unwrap(item: Any, key: Any, kpath: str, host: Optional[str], out: List[Finding], what: str, missing: str,
            placeholder: str, bare: str, allowed: Sequence[str] = ("value", "source")) -> Tuple[Any, str]:
    """An override written bare or as ``{value, source}``: (its value, the value's path), every other key of the
    mapping named (with the allowed one close to it); ``_MISSING`` (and a finding ``missing``) when the mapping has
    no value."""
    if not isinstance(item, Mapping):
        return item, kpath
    for k in item:
        if str(k) not in allowed:
            out.append(Finding(host, "pod", "%s.%s" % (kpath, k), "unknown key of %s (it has value, source)" % what,
                               _fix(suggest(k, allowed), "remove it")))
    if "value" not in item:
        out.append(Finding(host, "pod", kpath, missing, "write %s: {value: %s, source: <why>} or the bare %s"
                           % (key, placeholder, bare)))
        return _MISSING, kpath
    return item["value"], kpath + ".value"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fmt(value: float) -> str:
    return ("%.6f" % value).rstrip("0").rstrip(".")


def _known(profiles: Iterable[Mapping[str, Any]]) -> Dict[str, Dict[str, List[Any]]]:
    """category -> key -> the profile items (the current profile's first) of every profile that has the key."""
    out: Dict[str, Dict[str, List[Any]]] = {}
    for prof in profiles:
        exp = prof.get("expectations") if isinstance(prof, Mapping) else None
        for cat, keys in (exp or {}).items():
            if isinstance(keys, Mapping):
                for key, item in keys.items():
                    out.setdefault(str(cat), {}).setdefault(str(key), []).append(item)
    return out


def _item_value(item: Any) -> Any:
    return item.get("value") if isinstance(item, Mapping) and "value" in item else item


def check_validation(pod: Any, profile: Optional[Mapping[str, Any]], others: Iterable[Mapping[str, Any]] = (),
                     host: Optional[str] = None) -> List[Finding]:
    """Findings on ``pod.validation`` (see the module docstring). ``profile`` is the pod's RA profile (``None`` when
    ``pod.ra_profile`` names none: the layout is then every profile's), ``others`` the other profiles."""
    out: List[Finding] = []
    validation = pod.get("validation") if isinstance(pod, Mapping) else None
    if not isinstance(validation, Mapping):
        return out  # absent, or not a mapping (the schema says so)
    profiles = ([profile] if isinstance(profile, Mapping) else []) + [p for p in others if isinstance(p, Mapping)]
    known = _known(profiles)
    for key in validation:
        if key in VALIDATION_KEYS:
            continue
        out.append(_misplaced(str(key), known, host))
    exp = validation.get("expectations")
    if exp is not None:
        _check_expectations(exp, known, profile, host, out)
    workload = validation.get("workload")
    if workload is not None:
        own = {"expectations": exp} if isinstance(exp, Mapping) else {}  # the pod may size a class of its own
        _check_workload(workload, profile, profiles, own, host, out)
    path = "pod.validation.dataset_tb"
    tb = validation.get("dataset_tb")
    if tb is not None and (not _number(tb) or tb <= 0):
        out.append(Finding(host, "pod", path, "%r is not a dataset size in TB (a number above 0)" % (tb,),
                           "write the dataset's size in TB as a number, e.g. dataset_tb: 22"))
    caches = validation.get("caches_tb")
    path = "pod.validation.caches_tb"
    if caches is not None:
        if not isinstance(caches, Mapping):
            out.append(Finding(host, "pod", path, "%r is not a mapping of cache name to TB" % (caches,),
                               "write caches_tb: {<cache name>: <TB>, ...}, e.g. {linux page cache: 0.5, isilon: 2}"))
        else:
            for name, size in caches.items():
                if not _number(size) or size < 0:
                    out.append(Finding(host, "pod", "%s.%s" % (path, name), "%r is not a cache size in TB (a number "
                                       "0 or above)" % (size,), "write the cache's size in TB as a number"))
    return out


def check_pod_validation(model: Mapping[str, Any], profiles_dir: str, profiles: Iterable[str]) -> List[Finding]:
    """``check_validation`` on the model's pod, against its RA profile (``profiles_dir/<pod.ra_profile>.yml``) and
    the others (a profile that cannot be read is left out: the RA profile check names it)."""
    pod = model.get("pod")
    if not isinstance(pod, Mapping) or not isinstance(pod.get("validation"), Mapping):
        return []
    loaded: Dict[str, Mapping[str, Any]] = {}
    for name in profiles:
        try:
            loaded[name] = load_profile(name, profiles_dir)
        except ValueError:
            continue
    own = loaded.pop(str(pod.get("ra_profile")), None)
    host = next(iter(model.get("hosts") or {}), None)
    return check_validation(pod, own, [loaded[n] for n in sorted(loaded)], host)


def _and(words: List[str]) -> str:
    return words[0] if len(words) == 1 else "%s and %s" % (", ".join(words[:-1]), words[-1])


def _misplaced(key: str, known: Dict[str, Dict[str, List[Any]]], host: Optional[str]) -> Finding:
    path = "pod.validation.%s" % key
    if key in known or key in (VERSIONS, NODE, REGRESSION):
        return Finding(host, "pod", path, "'%s' is an expectation category: pod.validation reads it only under "
                       "expectations, so it changes nothing here" % key,
                       "move it under pod.validation.expectations (pod.validation.expectations.%s)" % key)
    cats = sorted(c for c, keys in known.items() if key in keys)
    if cats:
        return Finding(host, "pod", path, "'%s' is an expectation of %s: pod.validation reads it only under "
                       "expectations.<category>, so it changes nothing here" % (key, _and(cats)),
                       ("move it to pod.validation.expectations.%s.%s" % (cats[0], key)) if len(cats) == 1 else
                       "move it under pod.validation.expectations.<category>.%s for the stage it is for (%s)" % (
                           key, ", ".join(cats)))
    close = suggest(key, VALIDATION_KEYS)
    return Finding(host, "pod", path, "unknown key: pod.validation reads %s; nothing reads '%s'" % (
        ", ".join(VALIDATION_KEYS), key), ("did you mean '%s'?" % close) if close else
        "remove it, or put an expectation override under expectations.<category>.<key> (docs/validation.md)")


def _check_expectations(exp: Any, known: Dict[str, Dict[str, List[Any]]], profile: Optional[Mapping[str, Any]],
                        host: Optional[str], out: List[Finding]) -> None:
    base = "pod.validation.expectations"
    if not isinstance(exp, Mapping):
        out.append(Finding(host, "pod", base, "%r is not a mapping" % (exp,), "write expectations as the RA profile "
                           "lays them out: <category>: {<key>: {value: ..., source: ...}}"))
        return
    own = (profile or {}).get("expectations") if isinstance(profile, Mapping) else None
    own = own if isinstance(own, Mapping) else {}
    for cat, keys in exp.items():
        cpath = "%s.%s" % (base, cat)
        cat = str(cat)
        if cat == VERSIONS:  # the version pins: a layout of their own, whether or not a profile pins any
            out.extend(check_version_pins(keys, cpath, host))
            continue
        if cat == NODE:  # the node stage's thresholds: the toolkit's defaults, whether or not a profile sets any
            out.extend(check_node_expectations(keys, cpath, host))
            continue
        if cat == REGRESSION:  # the baseline tolerances: classes and checks, whatever the profile lists
            out.extend(check_regression_tolerances(keys, cpath, host))
            continue
        if cat == HCA_COUNTERS:  # the counter stage's limits: the toolkit's defaults, whether or not a profile sets any
            out.extend(check_hca_counter_expectations(keys, cpath, host))
            continue
        if cat not in known:
            where = sorted(c for c, ks in known.items() if cat in ks)
            close = suggest(cat, set(known) | {VERSIONS, NODE, REGRESSION, HCA_COUNTERS})
            out.append(Finding(host, "pod", cpath, "unknown expectation category '%s': the RA profiles have %s, "
                               "nothing reads it" % (cat, ", ".join(sorted(set(known) | {VERSIONS, NODE, REGRESSION,
                                                                                        HCA_COUNTERS}))),
                               ("'%s' is a key of %s: write it as %s.%s.%s" % (cat, where[0], base, where[0], cat))
                               if where else ("did you mean '%s'?" % close) if close else
                               "use one of the categories listed"))
            continue
        if not isinstance(keys, Mapping):
            out.append(Finding(host, "pod", cpath, "%r is not a mapping" % (keys,), "write %s as a mapping of "
                               "expectation keys (%s)" % (cat, ", ".join(sorted(known[cat])))))
            continue
        for key, value in keys.items():
            kpath = "%s.%s" % (cpath, key)
            key = str(key)
            if key not in known[cat]:
                where = sorted(c for c, ks in known.items() if key in ks)
                close = suggest(key, known[cat])
                out.append(Finding(host, "pod", kpath, "unknown expectation '%s' in %s: nothing reads it, the "
                                   "profile's threshold stays" % (key, cat),
                                   ("did you mean '%s'?" % close) if close else
                                   ("it is an expectation of %s: move it to %s.%s.%s" % (where[0], base, where[0], key))
                                   if where else "use one of %s" % ", ".join(sorted(known[cat]))))
                continue
            ref = ((own.get(cat) or {}).get(key) if isinstance(own.get(cat), Mapping) else None)
            if ref is None:  # the pod's own profile has no such item (or no profile): any profile's
                ref = known[cat][key][0]
            _check_item(value, ref, known[cat][key], cat, key, kpath, host, out)


def _check_item(value: Any, ref: Any, items: List[Any], cat: str, key: str, path: str, host: Optional[str],
                out: List[Finding]) -> None:
    """One override against the profile item ``ref`` (``{value, source, unit, ...}`` or a bare value)."""
    ref_value = _item_value(ref)
    unit = ref.get("unit") if isinstance(ref, Mapping) else None
    if isinstance(value, Mapping) and ("value" in value or not isinstance(ref_value, Mapping)):
        item_keys: Set[str] = {"value", "source"}
        for it in items:
            if isinstance(it, Mapping):
                item_keys |= {str(k) for k in it}
        for k in value:
            if str(k) not in item_keys:
                close = suggest(k, item_keys)
                out.append(Finding(host, "pod", "%s.%s" % (path, k), "unknown key of an expectation override "
                                   "(it has %s)" % ", ".join(sorted(item_keys)),
                                   ("did you mean '%s'?" % close) if close else "remove it"))
        if "value" not in value:
            out.append(Finding(host, "pod", path, "the override has no value: the profile's %s stays" % (
                _describe(ref_value)), "write %s: {value: <new value>, source: <why>} or the bare value" % key))
            return
        if value.get("unit") is not None and unit is not None and value["unit"] != unit:
            out.append(Finding(host, "pod", path + ".unit", "unit %r: the toolkit reads %s.%s in %s and does not "
                               "convert" % (value["unit"], cat, key, unit),
                               "write the value in %s and unit: %s (or drop unit)" % (unit, unit)))
        if value.get("link_gbps") is not None and (not _number(value["link_gbps"]) or value["link_gbps"] <= 0):
            out.append(Finding(host, "pod", path + ".link_gbps", "%r is not a link speed in Gb/s" % (
                value["link_gbps"],), "write the link speed the figure was measured on, in Gb/s (e.g. 100)"))
        _check_value(value["value"], ref_value, unit, key, path + ".value", host, out)
        return
    _check_value(value, ref_value, unit, key, path, host, out)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_value(value: Any, ref: Any, unit: Optional[str], key: str, path: str, host: Optional[str],
                 out: List[Finding]) -> None:
    if isinstance(ref, Mapping):  # a table: per DGX model, GPU or workload class
        if not isinstance(value, Mapping):
            out.append(Finding(host, "pod", path, "%s is not a table: %s is read per %s (%s)" % (
                _describe(value), key, _table_of(key), ", ".join(str(k) for k in ref)),
                "write it as a mapping, e.g. {%s: <%s>}" % (next(iter(ref), "name"), unit or "value")))
            return
        names = set(str(k) for k in ref) | (set(DGX_MODELS) if _table_of(key) == "DGX model" else set())
        for k, v in value.items():
            if str(k) not in names:
                close = suggest(k, names)
                sev = "error" if close or _table_of(key) == "DGX model" else "warning"
                out.append(Finding(host, "pod", "%s.%s" % (path, k), "'%s' is not a %s the profile's %s has (%s): "
                                   "nothing looks it up" % (k, _table_of(key), key, ", ".join(sorted(names))),
                                   ("did you mean '%s'?" % close) if close else "use one of %s" % ", ".join(
                                       sorted(names)), severity=sev))
                continue
            sub = ref.get(k) if str(k) in ref else None
            _check_scalar(v, sub, unit, key, "%s.%s" % (path, k), host, out)
        return
    if isinstance(ref, str):
        if not isinstance(value, str) or not value.strip():
            out.append(Finding(host, "pod", path, "%s is not a name like the profile's %r" % (_describe(value), ref),
                               "write a name, e.g. %s" % ref))
        return
    _check_scalar(value, ref, unit, key, path, host, out)


def _table_of(key: str) -> str:
    if key.endswith("busbw"):
        return "DGX model"
    if key.endswith("per_gpu") and key.startswith("images"):
        return "GPU"
    return "workload class"


def _check_scalar(value: Any, ref: Any, unit: Optional[str], key: str, path: str, host: Optional[str],
                  out: List[Finding]) -> None:
    """A threshold: a number of the key's kind (fraction, percentage, count, a figure in ``unit``)."""
    fraction = "fraction" in key
    percent = key.endswith("_percent")
    count = not fraction and not percent and unit is None and isinstance(ref, int) and not isinstance(ref, bool)
    what = ("a fraction of 1 (0.8 = 80%)" if fraction else "a percentage (97 = 97%)" if percent else
            "a whole number" if count else "a number in %s" % unit if unit else "a number")
    if not _number(value):
        hint = ""
        if isinstance(value, str):
            text = value.strip().rstrip("%").strip()
            for word in (unit or "", "MB/s", "GB/s", "Gb/s"):
                if word and text.endswith(word):
                    text = text[:-len(word)].strip()
            try:
                float(text.replace(",", ""))
                hint = " (a string: YAML reads a number only without quotes, units or %)"
            except ValueError:
                pass
        out.append(Finding(host, "pod", path, "%s is not a number%s; %s is %s" % (_describe(value), hint, key, what),
                           "write %s without quotes%s" % (what, ", e.g. %s" % _fmt(ref) if _number(ref) else "")))
        return
    if value < 0:
        out.append(Finding(host, "pod", path, "%s is negative: a threshold below 0 never fails" % _fmt(value),
                           "write %s%s" % (what, " (the profile has %s)" % _fmt(ref) if _number(ref) else "")))
        return
    if fraction and value > 1:
        if value <= 100:
            out.append(Finding(host, "pod", path, "%s is a percentage: %s is a fraction of 1, so %s asks for %s times "
                               "the reference and every measurement fails" % (_fmt(value), key, _fmt(value),
                                                                              _fmt(value)),
                               "write %s (%s%%)" % (_fmt(value / 100.0), _fmt(value))))
        else:
            out.append(Finding(host, "pod", path, "%s is outside 0..1: %s is a fraction of 1" % (_fmt(value), key),
                               "write a fraction such as %s" % (_fmt(ref) if _number(ref) else "0.8")))
        return
    if percent:
        if 0 < value <= 1:
            out.append(Finding(host, "pod", path, "%s is a fraction: %s is a percentage, so %s%% never fails" % (
                _fmt(value), key, _fmt(value)), "write %s (%s as a percentage)" % (_fmt(value * 100), _fmt(value))))
        elif value > 100:
            out.append(Finding(host, "pod", path, "%s is above 100: %s is a percentage" % (_fmt(value), key),
                               "write a percentage from 0 to 100"))
        return
    if count:
        if not isinstance(value, int) or value < 1:
            out.append(Finding(host, "pod", path, "%s is not a whole number of 1 or more: %s counts" % (
                _fmt(value), key), "write a whole number, e.g. %s" % ref))
        return
    if fraction:
        return
    if value == 0:
        out.append(Finding(host, "pod", path, "0: a figure of 0 %s never fails" % (unit or ""),
                           "write %s%s" % (what, " (the profile has %s)" % _fmt(ref) if _number(ref) else "")))
        return
    if _number(ref) and ref > 0 and (value * _RATIO <= ref or value >= ref * _RATIO):
        out.append(Finding(host, "pod", path, "%s is %s times %s the profile's %s%s: written in another unit? %s is "
                           "read in %s" % (_fmt(value), _fmt(round(max(value / ref, ref / value))),
                                           "below" if value < ref else "above", _fmt(ref),
                                           (" " + unit) if unit else "", key, unit or "the profile's unit"),
                           "write the figure in %s" % (unit or "the profile's unit")))


def _workloads(profile: Mapping[str, Any]) -> Set[str]:
    sizing = (profile.get("expectations") or {}).get("sizing") if isinstance(profile, Mapping) else None
    if not isinstance(sizing, Mapping):
        return set()
    out = {str(sizing["workload"])} if isinstance(sizing.get("workload"), str) else set()
    for table in ("mbps_per_gpu", "gpus_per_storage_node"):
        value = _item_value(sizing.get(table))
        if isinstance(value, Mapping):
            out |= {str(k) for k in value}
    return out


def _check_workload(workload: Any, profile: Optional[Mapping[str, Any]], profiles: List[Mapping[str, Any]],
                    own: Mapping[str, Any], host: Optional[str], out: List[Finding]) -> None:
    path = "pod.validation.workload"
    names = _workloads(profile) if isinstance(profile, Mapping) else set()
    if not names:
        for prof in profiles:
            names |= _workloads(prof)
    names |= _workloads(own)
    if not isinstance(workload, str) or not workload.strip():
        out.append(Finding(host, "pod", path, "%s is not a workload class" % _describe(workload),
                           "write one of %s" % ", ".join(sorted(names)) if names else "write a workload class name"))
        return
    if names and workload not in names:
        close = suggest(workload, names)
        out.append(Finding(host, "pod", path, "'%s' is not a workload class the RA profile sizes (%s): the sizing "
                           "would have no figures for it" % (workload, ", ".join(sorted(names))),
                           ("did you mean '%s'?" % close) if close else "use one of %s, or add its figures under "
                           "expectations.sizing (mbps_per_gpu, gpus_per_storage_node)" % ", ".join(sorted(names))))


def check_version_pins(pins: Any, path: str = "pod.validation.expectations.versions",
                       host: Optional[str] = None) -> List[Finding]:
    """Findings on ``expectations.versions`` (:data:`VERSION_KEYS`): a misspelt key is named with the key it most
    likely means (nothing would compare it: the pin would silently not hold); a pin is a string - exact, a prefix
    ending in "." or "*", or ">=<version>" - or a list of them, or for ``hca_firmware`` a mapping of board id to
    pin; a pin may be written ``{value: <pin>, source: <why>}``. A version YAML reads as a number (``535.104``:
    the float 535.104, ``12.10`` becomes 12.1) must be quoted."""
    out: List[Finding] = []
    if not isinstance(pins, Mapping):
        out.append(Finding(host, "pod", path, "%s is not a mapping of pinned versions" % _describe(pins),
                           "write versions: {<what>: <pin>}, e.g. {driver: \">=535.104\"} (%s)" % ", ".join(
                               VERSION_KEYS)))
        return out
    for key, item in pins.items():
        kpath = "%s.%s" % (path, key)
        if str(key) not in VERSION_KEYS:
            close = suggest(key, VERSION_KEYS)
            out.append(Finding(host, "pod", kpath, "unknown version pin '%s': nothing reads it, so the pin would not "
                               "hold (the pins are %s)" % (key, ", ".join(VERSION_KEYS)),
                               ("did you mean '%s'?" % close) if close else "use one of %s" % ", ".join(VERSION_KEYS)))
            continue
        value = item
        if isinstance(item, Mapping) and ("value" in item or "source" in item or str(key) != "hca_firmware"):
            value, kpath = _unwrap(item, key, kpath, host, out, "a version pin", "the pin has no value", "<pin>", "pin")
            if value is _MISSING:
                continue
        if str(key) == "hca_firmware" and isinstance(value, Mapping):
            for board, pin in value.items():
                _check_pin(pin, "%s.%s" % (kpath, board), host, out)
            continue
        _check_pin(value, kpath, host, out)
    return out


def _check_pin(pin: Any, path: str, host: Optional[str], out: List[Finding]) -> None:
    """One pin: a non-empty string (exact, prefix, >=minimum) or a list of them."""
    pins = pin if isinstance(pin, list) else [pin]
    if not pins:
        out.append(Finding(host, "pod", path, "an empty list pins nothing", "write at least one version"))
    for p in pins:
        if isinstance(p, bool) or not isinstance(p, (str, int, float)):
            out.append(Finding(host, "pod", path, "%s is not a version pin" % _describe(p),
                               "write a version in quotes: exact \"550.54.15\", prefix \"535.\" or minimum "
                               "\">=535.104\""))
        elif not isinstance(p, str):
            out.append(Finding(host, "pod", path, "%s is a number: YAML reads an unquoted version as one (12.10 "
                               "becomes 12.1), so it would not compare as the version written" % _describe(p),
                               "quote it: \"%s\"" % p))
        elif not p.strip() or p.strip() in (">=", "*", "."):
            out.append(Finding(host, "pod", path, "%r pins no version" % p,
                               "write an exact version, a prefix such as \"535.\" or a minimum such as \">=535.104\""))
        elif p.strip().startswith((">", "<", "=", "~", "^", "!")) and not p.strip().startswith(">="):
            out.append(Finding(host, "pod", path, "%r: a pin is an exact version, a prefix or a minimum (>=)" % p,
                               "write \">=<version>\" for a minimum, or the exact version"))


def check_node_expectations(items: Any, path: str = "pod.validation.expectations.node",
                            host: Optional[str] = None) -> List[Finding]:
    """Findings on ``expectations.node`` (:data:`NODE_KEYS`): a misspelt key is named with the key it most likely
    means (nothing would read it: the toolkit's default would stay); each value, bare or ``{value: ..., source:
    ...}``, has its key's kind - a whole number for counts, a number above 0 for hours and GiB, 0-100 for a
    percentage (a fraction such as 0.1 is named), an absolute path, an ISO date-time."""
    out: List[Finding] = []
    if not isinstance(items, Mapping):
        out.append(Finding(host, "pod", path, "%s is not a mapping of node thresholds" % _describe(items),
                           "write node: {<key>: <value>} (%s)" % ", ".join(NODE_KEYS)))
        return out
    for key, item in items.items():
        kpath = "%s.%s" % (path, key)
        if str(key) not in NODE_KEYS:
            close = suggest(key, NODE_KEYS)
            out.append(Finding(host, "pod", kpath, "unknown node expectation '%s': nothing reads it, the toolkit's "
                               "default stays (the node stage reads %s)" % (key, ", ".join(NODE_KEYS)),
                               ("did you mean '%s'?" % close) if close else "use one of %s" % ", ".join(NODE_KEYS)))
            continue
        value, kpath = _unwrap(item, key, kpath, host, out, "an expectation override", _NO_VALUE, "<value>", "value",
                               ("value", "source", "unit"))
        if value is _MISSING:
            continue
        _check_node_value(str(key), value, kpath, host, out)
    return out


def _check_node_value(key: str, value: Any, path: str, host: Optional[str], out: List[Finding]) -> None:
    kind, what = NODE_KEYS[key]
    if kind == "path":
        if not isinstance(value, str) or not value.startswith("/"):
            out.append(Finding(host, "pod", path, "%s is not an absolute path (%s)" % (_describe(value), what),
                               "write the mount point, e.g. /raid"))
        return
    if kind == "time":
        if hasattr(value, "isoformat"):  # YAML read an unquoted date-time as one; the SEL's stamps are text
            out.append(Finding(host, "pod", path, "%s is a YAML date, not text: it would not compare with the SEL's "
                               "time stamps" % _describe(value), "quote it: \"%s\"" % value.isoformat()))
            return
        text = value
        if not isinstance(text, str) or not re.match(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?$", text):
            out.append(Finding(host, "pod", path, "%s is not a date-time (%s)" % (_describe(value), what),
                               "write an ISO date-time in quotes, e.g. \"2026-11-01T00:00:00\""))
        return
    if not _number(value):
        out.append(Finding(host, "pod", path, "%s is not a number; %s is %s" % (_describe(value), key, what),
                           "write a number without quotes or units"))
        return
    if kind == "count":
        if not isinstance(value, int) or value < 0:
            out.append(Finding(host, "pod", path, "%s is not a whole number of 0 or more: %s counts" % (
                _fmt(value), key), "write a whole number, e.g. %s" % (100 if "aer" in key else 0)))
    elif kind == "percent":
        if value < 0 or value > 100:
            out.append(Finding(host, "pod", path, "%s is outside 0..100: %s is a percentage" % (_fmt(value), key),
                               "write a percentage, e.g. 10"))
        elif 0 < value < 1:
            out.append(Finding(host, "pod", path, "%s looks like a fraction: %s is a percentage, so %s%% free is "
                               "asked" % (_fmt(value), key, _fmt(value)),
                               "write %s (%s as a percentage)" % (_fmt(value * 100), _fmt(value))))
    elif value <= 0:
        out.append(Finding(host, "pod", path, "%s is not above 0 (%s)" % (_fmt(value), what),
                           "write a number above 0"))


def check_hca_counter_expectations(items: Any, path: str = "pod.validation.expectations.hca_counters",
                                   host: Optional[str] = None) -> List[Finding]:
    """Findings on ``expectations.hca_counters`` (:data:`HCA_COUNTER_KEYS`): a misspelt or report-only counter is
    named with the counter it most likely means (nothing would read it: the toolkit's default would stay); each
    value, bare or ``{value: ..., source: ...}``, has its counter's kind - a whole number of 0 or more rises, or for
    ``symbol_error`` a bit error rate above 0 and below 1 (a count such as 10 is named: the BER is multiplied by the
    port's bits in the window, not compared with the rise)."""
    out: List[Finding] = []
    if not isinstance(items, Mapping):
        out.append(Finding(host, "pod", path, "%s is not a mapping of counter limits" % _describe(items),
                           "write hca_counters: {<counter>: {value: <limit>, source: <why>}} (%s)"
                           % ", ".join(HCA_COUNTER_KEYS)))
        return out
    for key, item in items.items():
        kpath = "%s.%s" % (path, key)
        if str(key) not in HCA_COUNTER_KEYS:
            close = suggest(key, HCA_COUNTER_KEYS)
            out.append(Finding(host, "pod", kpath, "unknown HCA counter limit '%s': nothing reads it (the stage "
                               "judges %s; the congestion counters are only reported)" % (
                                   key, ", ".join(HCA_COUNTER_KEYS)),
                               ("did you mean '%s'?" % close) if close else "use one of %s" % ", ".join(
                                   HCA_COUNTER_KEYS)))
            continue
        value, kpath = _unwrap(item, key, kpath, host, out, "an expectation override", _NO_VALUE, "<limit>", "value")
        if value is _MISSING:
            continue
        kind, what = HCA_COUNTER_KEYS[str(key)]
        if not _number(value):
            out.append(Finding(host, "pod", kpath, "%s is not a number; %s is %s" % (_describe(value), key, what),
                               "write a number without quotes or units"))
        elif kind == "ber" and not 0 < value < 1:
            out.append(Finding(host, "pod", kpath, "%s is not a bit error rate: %s is %s" % (_fmt(value), key, what),
                               "write a rate above 0 and below 1, e.g. 1e-12 (ibdiagnet's default threshold)"))
        elif kind == "count" and (not isinstance(value, int) or value < 0):
            out.append(Finding(host, "pod", kpath, "%s is not a whole number of 0 or more: %s counts %s" % (
                _fmt(value), key, what), "write a whole number of rises, e.g. 0"))
    return out


def check_regression_tolerances(items: Any, path: str = "pod.validation.expectations.regression",
                                host: Optional[str] = None) -> List[Finding]:
    """Findings on ``expectations.regression`` (an RA profile's or a pod's): a key that is neither a measurement
    class (:data:`REGRESSION_CLASSES`) nor a performance check (:data:`REGRESSION_CHECKS`) is named with the one it
    most likely means - nothing would read it and the 10 % default would stay; each value, bare or ``{value: ...,
    source: ...}``, is a fraction of the baseline from 0 to below 1 (0.1 = 10 % worse allowed): a percentage such as
    10 is named with its fraction, 1 or more would let a measurement fall to nothing (or below) unnoticed. The same
    rule as report/baseline.py ``tolerance``, which refuses to compare with such a value, hours later."""
    out: List[Finding] = []
    keys = list(REGRESSION_CLASSES) + list(REGRESSION_CHECKS)
    if not isinstance(items, Mapping):
        out.append(Finding(host, "pod", path, "%s is not a mapping of regression tolerances" % _describe(items),
                           "write regression: {<class or check>: {value: <fraction>, source: <why>}} (classes: %s)"
                           % ", ".join(REGRESSION_CLASSES)))
        return out
    for key, item in items.items():
        kpath = "%s.%s" % (path, key)
        if str(key) not in keys:
            close = suggest(key, keys)
            out.append(Finding(host, "pod", kpath, "unknown regression tolerance '%s': neither a measurement class "
                               "(%s) nor a performance check, so nothing reads it and the 10 %% default stays" % (
                                   key, ", ".join(REGRESSION_CLASSES)),
                               ("did you mean '%s'?" % close) if close else "use a class (%s) or a performance check "
                               "(%s)" % (", ".join(REGRESSION_CLASSES), ", ".join(REGRESSION_CHECKS))))
            continue
        value, kpath = _unwrap(item, key, kpath, host, out, "a regression tolerance", "the tolerance has no value: "
                               "the baseline comparison would stop with an error", "<fraction>", "fraction")
        if value is _MISSING:
            continue
        _check_tolerance(value, kpath, host, out)
    return out


def _check_tolerance(value: Any, path: str, host: Optional[str], out: List[Finding]) -> None:
    """One tolerance: a number from 0 to below 1."""
    if not _number(value):
        out.append(Finding(host, "pod", path, "%s is not a number: a tolerance is a fraction of the baseline "
                           "(0.1 = 10 %% worse allowed)" % _describe(value), "write a fraction without quotes or "
                           "%, e.g. 0.1"))
    elif value < 0:
        out.append(Finding(host, "pod", path, "%s is negative: every measurement equal to the baseline's would be a "
                           "regression" % _fmt(value), "write a fraction from 0 to below 1, e.g. 0.1"))
    elif 1 <= value <= 100:
        out.append(Finding(host, "pod", path, "%s is a percentage or a whole baseline: a tolerance is a fraction "
                           "from 0 to below 1, and %s would let a measurement fall to nothing unnoticed" % (
                               _fmt(value), _fmt(value)),
                           "write %s (%s %%)" % (_fmt(value / 100.0), _fmt(value)) if value > 1 else
                           "write a fraction below 1, e.g. 0.1"))
    elif value > 100:
        out.append(Finding(host, "pod", path, "%s is outside [0, 1): a tolerance is a fraction of the baseline" %
                           _fmt(value), "write a fraction from 0 to below 1, e.g. 0.1"))
