# -*- coding: utf-8 -*-
"""The node stage (issue 39 items 1-3): every DGX's kernel log, host inventory and BMC, judged by
module_utils/node/kernel_eval.py and inventory_eval.py, with the report's per-DGX table (pure).

``evaluate(recorded, expectations, context)`` reads ``pod_stages.node`` as playbooks/validate_node.yml records it::

    {"window_hours": 24,
     "nodes": {host: None                                   # no reading: the DGX did not answer
                     | {"dgx_node": <library/dgx_node_health's dgx_node> or None, "error": str or None,
                        "unreachable": bool, "dgx_model": <a catalogue key>}}}

and hands each DGX that answered to both evaluators in the shapes they read: the kernel checks get ``kernel_log``,
``gpus``, ``hcas``, ``since``, ``until`` (a kernel log that could not be read is one ``error`` naming why), the
inventory and BMC checks ``dgx_model``, ``readings``, ``errors`` (a reading that could not be read makes its check
``skipped`` with the reason). A DGX that gave no reading is one ``error`` (``no_result``) naming it, and one whose
module failed an ``error`` with the module's words - neither is evaluated further, so neither passes anything.
"""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Mapping

from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import pins
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import inventory_eval, kernel_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, CheckResult, Subject,
                                                                                  no_result)

STAGE = "node"
CHECK = "node_health"  # the row of a DGX that gave no reading (or whose module failed)

# the report's columns: a title and the check names whose worst status it shows
COLUMNS = (
    ("GPU Xid / NVLink", ("kernel_xid", "kernel_nvlink")),
    ("PCIe AER", ("kernel_aer", "kernel_pcie_limited")),
    ("HCA links", ("kernel_link_flap", "kernel_hca_health")),
    ("CPU / memory", ("host_cpu", "host_memory", "host_numa", "host_swap")),
    ("disks", ("host_nvme", "host_disk_space")),
    ("kernel", ("host_kernel", "kernel_log")),
    ("BMC", ("bmc_sel", "bmc_sensors")),
)


def _node_record(entry: Mapping[str, Any]) -> Dict[str, Any]:
    return entry.get("dgx_node") if isinstance(entry.get("dgx_node"), Mapping) else {}


def split(recorded: Mapping[str, Any]) -> tuple:
    """(kernel record, inventory record, error results) of the stage's record: the two evaluators' inputs for the
    DGX that answered, and one error per DGX that did not or whose module failed."""
    kernel: Dict[str, Any] = {}
    inventory: Dict[str, Any] = {}
    errors: List[CheckResult] = []
    for host, entry in sorted(((recorded or {}).get("nodes") or {}).items()):
        if not isinstance(entry, Mapping) or entry.get("unreachable"):
            errors.append(no_result(CHECK, host, Subject(node=host), NODE_STATE))
            continue
        rec = _node_record(entry)
        if entry.get("error") or not rec:
            errors.append(CheckResult(CHECK, host, "error", reason="%s: dgx_node_health failed: %s" % (
                host, entry.get("error") or "it returned no reading"), subject=Subject(node=host),
                category=NODE_STATE))
            continue
        errs = rec.get("errors") or {}
        kernel[host] = {"status": "ok", "reason": errs.get("kernel_log"), "kernel_log": rec.get("kernel_log"),
                        "gpus": rec.get("gpus"), "hcas": rec.get("hcas"), "since": rec.get("since"),
                        "until": rec.get("until")}
        inventory[host] = {"status": "ok", "dgx_model": entry.get("dgx_model"), "readings": rec.get("readings") or {},
                           "errors": errs}
    return {"nodes": kernel}, {"nodes": inventory}, errors


def evaluate(recorded: Dict[str, Any], expectations: Dict[str, Any], context: Any = None) -> List[CheckResult]:
    """Every node-stage check of every DGX the stage recorded (see the module docstring)."""
    kernel, inventory, errors = split(recorded)
    return (errors + kernel_eval.evaluate(kernel, expectations or {}, context)
            + inventory_eval.evaluate(inventory, expectations or {}, context)
            + pins.node_pins(pin_values(inventory), expectations or {}))


def pin_values(inventory: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """{node: {kernel, bios, and their read errors}} for the version pins the node stage judges (gpu/pins.node_pins)."""
    out: Dict[str, Dict[str, Any]] = {}
    for node, rec in ((inventory or {}).get("nodes") or {}).items():
        readings, errs = rec.get("readings") or {}, rec.get("errors") or {}
        uname = readings.get("uname_r")
        kernel = uname.get("release") if isinstance(uname, Mapping) else uname
        out[node] = {"kernel": kernel, "kernel_error": errs.get("uname_r"), "bios": readings.get("bios"),
                     "bios_error": errs.get("bios")}
    return out


# --------------------------------------------------------------------------- report

def summary(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per DGX: where its kernel log came from, the events in the window, and per column of COLUMNS the
    worst status of its checks."""
    m = (doc.get("measurements") or {}).get(STAGE) or {}
    checks = [c for c in doc.get("checks") or [] if c.get("stage") in (STAGE, None)]
    rows = []
    for node, entry in sorted((m.get("nodes") or {}).items()):
        rec = _node_record(entry) if isinstance(entry, Mapping) else {}
        log = rec.get("kernel_log") or {}
        mine = [c for c in checks if c.get("host") == node]
        row: Dict[str, Any] = {"node": node, "log": rec.get("kernel_log_source") or "-",
                               "events": len(log.get("events") or []) if log else "-"}
        if not rec:
            row["log"] = "no reading"
        for title, names in COLUMNS:
            st = [c["status"] for c in mine if c.get("check") in names]
            row[title] = next((s for s in ("error", "fail", "pass", "skipped") if s in st), "-")
        rows.append(row)
    return rows


def _title(doc: Dict[str, Any]) -> str:
    hours = ((doc.get("measurements") or {}).get(STAGE) or {}).get("window_hours")
    return "Node health (kernel log of the last %s h, host inventory, BMC)" % hours if hours else "Node health"


_HEAD = ("node", "log", "events") + tuple(t for t, _ in COLUMNS)


def markdown(doc: Dict[str, Any]) -> List[str]:
    lines = ["", "## %s" % _title(doc), "", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    for r in summary(doc):
        lines.append("| " + " | ".join(str(r.get(c, "-")) for c in _HEAD) + " |")
    return lines


def html(doc: Dict[str, Any]) -> List[str]:
    out = ["<h2>%s</h2>" % escape(_title(doc)),
           "<table><tr>%s</tr>" % "".join("<th>%s</th>" % escape(c) for c in _HEAD)]
    for r in summary(doc):
        cells = ['<td class="%s">%s</td>' % (escape(str(r.get(c))), escape(str(r.get(c, "-")))) for c in _HEAD]
        out.append("<tr>%s</tr>" % "".join(cells))
    out.append("</table>")
    return out
