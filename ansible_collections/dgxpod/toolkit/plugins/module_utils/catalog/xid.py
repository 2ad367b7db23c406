# -*- coding: utf-8 -*-
"""The NVIDIA Xid and SXid catalogue (data only, the ground floor): what an Xid number the GPU driver logs means,
how bad it is and what NVIDIA says to do about it; the same for the NVSwitch driver's SXid numbers; and the
messages that look alarming but are not (:data:`BENIGN`). The kernel-log evaluator (module_utils/node/kernel_eval.py)
reads these tables and nothing else, so a new Xid is one entry here with its source.

Sources, per column:

- ``mnemonic`` and ``action`` (the *Resolution Bucket (Immediate Action)*): NVIDIA's Xid catalog,
  https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Ampere and newer, the "Xid Catalog
  Reference" table), in the machine-readable copy NVIDIA ships with NVSentinel:
  github.com/NVIDIA/NVSentinel distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv
  (commit 6f8b0fcfa8e502bdda78fabf96facef729a9285b) - :data:`SRC_CATALOG`.
- ``meaning``: the "Xid Error Listing" table of NVIDIA's Xid Errors document (r555,
  https://docs.nvidia.com/deploy/xid-errors/index.html), as copied with its document version into
  github.com/leptonai/gpud components/accelerator/nvidia/query/xid/xid.go (commit 088be0e1) - :data:`SRC_LISTING`;
  for 136, 137, 144-150 and 154, which that table predates, the catalog's mnemonic in words (said so per entry).
- SXid ``mnemonic``/``action``: NVIDIA/NVSentinel charts/nvswitch-health-monitor/sxiderrorsmapping.csv (same
  commit), NVIDIA's copy of the SXid catalog (https://docs.nvidia.com/deploy/xid-errors/) - :data:`SRC_SXID`.
- ``severity`` is the toolkit's reading of the bucket, never NVIDIA's word: a bucket that needs the GPU reset,
  the node rebooted or NVIDIA support is ``critical``; one that needs the application restarted but names a GPU
  engine fault is ``error``; ``IGNORE`` is ``warning``; an Xid NVIDIA's listing attributes to the user's program
  (13, 31, 43, 8) is ``application``; 45 (cleanup after another Xid) is ``info``. The evaluator fails on
  ``critical`` and ``error`` and reports the others (docs in /tmp/briefs/kernlog-docs.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

SRC_CATALOG = ("NVIDIA Xid Catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), Resolution Bucket "
               "(Immediate Action); machine-readable copy: NVIDIA/NVSentinel gpu-health-monitor/xiderrorsmapping.csv")
SRC_LISTING = "NVIDIA Xid Errors, Xid Error Listing (r555, docs.nvidia.com/deploy/xid-errors/index.html)"
SRC_SXID = ("NVIDIA SXid catalog (docs.nvidia.com/deploy/xid-errors/); machine-readable copy: NVIDIA/NVSentinel "
            "nvswitch-health-monitor/sxiderrorsmapping.csv")

CRITICAL = "critical"        # the GPU (or NVSwitch fabric) needs a reset, the node a reboot, or NVIDIA support
ERROR = "error"              # a GPU engine fault: restart the application; recurring means a hardware look
WARNING = "warning"          # NVIDIA's bucket is IGNORE (informative, or counted elsewhere, e.g. row remapping)
APPLICATION = "application"  # caused by the user's program (NVIDIA's listing: user app error)
INFO = "info"                # informative only (45: channels cleaned up after another Xid)
SEVERITIES = (CRITICAL, ERROR, WARNING, APPLICATION, INFO)
FAILING = (CRITICAL, ERROR)  # what the evaluator fails on

# NVIDIA's resolution buckets in words (the catalog's bucket names; the words follow NVIDIA's Xid documentation)
ACTIONS: Mapping[str, str] = {
    "RESET_GPU": "reset the GPU (drain it, nvidia-smi -r) or reboot the node; if it recurs, run the field "
                 "diagnostics and contact NVIDIA support",
    "RESTART_BM": "drain and reboot the node (a GPU that fell off the bus needs a cold boot); if it recurs, check "
                  "the GPU's seating, power and cooling and report the GPU to NVIDIA",
    "RESTART_APP": "restart the application; if it recurs without an application change, run DCGM diagnostics "
                   "(dcgmi diag -r 3) on this GPU",
    "IGNORE": "no immediate action (informative); watch for it recurring",
    "CONTACT_SUPPORT": "collect nvidia-bug-report.sh and contact NVIDIA support",
    "UNEXPECTED_ERR_REPORT_ISSUE": "collect nvidia-bug-report.sh and report the issue to NVIDIA, then reset the GPU",
    "WORKFLOW_XID_45": "none for this Xid: it cleans up after the earlier Xid it names; act on that one",
    "WORKFLOW_XID_48": "drain the node and reset the GPU; if Xid 63/64 do not follow, run the field diagnostics "
                       "(NVIDIA GPU memory error management: retire/remap, RMA past its limits)",
    "WORKFLOW_NVLINK_ERR": "follow NVIDIA's NVLink workflow: reset the GPU, check the link's mechanical connection, "
                           "run the field diagnostics if it persists",
    "WORKFLOW_NVLINK5_ERR": "follow NVIDIA's NVLink5 workflow for the subcode (reset the GPU; check the peer and "
                            "the link); contact NVIDIA support if it persists",
    "RESTART_VM": "restart the VM",
    "CHECK_MECHANICALS": "check the GPU's auxiliary power cabling and seating",
    "FOLLOW_OTHER_XID": "follow the recovery action the message names (it applies to another Xid)",
    # SXid buckets
    "RESET_FABRIC": "reset the NVSwitch fabric (restart nvidia-fabricmanager with the GPUs idle, or reboot the "
                    "node)",
    "WORKFLOW_NVLINK_POTENTIALY_FATAL_ERR": "follow NVIDIA's NVLink workflow: reset the GPUs and the fabric; contact "
                                            "NVIDIA support if it recurs",
    "INVESTIGATE_LINK_SI": "investigate the NVLink link's signal integrity (reseat, field diagnostics)",
    "CHECK_LINK_MECHANICAL_CONNECTIONS": "check the NVLink link's mechanical connections",
    "CHECK_THERMALS": "check the NVSwitch tray's cooling",
    "CHECK_FM_CONFIG": "check the fabric manager configuration",
    "RUN_FIELDDIAG": "run NVIDIA's field diagnostics",
}


@dataclass(frozen=True)
class XidInfo:
    """One catalogued Xid (or SXid) number. ``action`` is the catalog's resolution bucket (a key of
    :data:`ACTIONS`); ``nvlink``: it reports an NVLink fault (the evaluator's ``kernel_nvlink`` check);
    ``source``: where ``meaning`` comes from when it is not :data:`SRC_LISTING`."""

    number: int
    mnemonic: str
    meaning: str
    severity: str
    action: str
    nvlink: bool = False
    source: str = SRC_LISTING

    @property
    def action_text(self) -> str:
        return ACTIONS.get(self.action, self.action)


def _x(number: int, mnemonic: str, meaning: str, severity: str, action: str, nvlink: bool = False,
       source: str = SRC_LISTING) -> Tuple[int, XidInfo]:
    if severity not in SEVERITIES or action not in ACTIONS:
        raise ValueError("Xid %d: severity %r / action %r not known" % (number, severity, action))
    return number, XidInfo(number, mnemonic, meaning, severity, action, nvlink, source)


_FROM_MNEMONIC = "the catalog's mnemonic in words (" + SRC_CATALOG + ")"

XIDS: Dict[int, XidInfo] = dict([
    _x(8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", APPLICATION, "RESTART_APP"),
    _x(13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", APPLICATION, "RESTART_APP"),
    _x(31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", APPLICATION, "RESTART_APP"),
    _x(32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", ERROR, "RESTART_APP"),
    _x(38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", WARNING, "IGNORE"),
    _x(43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", APPLICATION, "IGNORE"),
    _x(45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", INFO,
       "WORKFLOW_XID_45"),
    _x(46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", CRITICAL, "RESET_GPU"),
    _x(48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", CRITICAL, "WORKFLOW_XID_48"),
    _x(54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "Auxiliary power is not connected to the GPU board", CRITICAL,
       "CHECK_MECHANICALS"),
    _x(61, "PMU_BREAKPOINT", "Internal micro-controller breakpoint/warning", ERROR, "UNEXPECTED_ERR_REPORT_ISSUE"),
    _x(62, "PMU_HALT_ERROR", "Internal micro-controller halt", CRITICAL, "RESET_GPU"),
    _x(63, "INFOROM_DRAM_RETIREMENT_EVENT", "ECC page retirement or row remapping recording event", WARNING,
       "IGNORE"),
    _x(64, "INFOROM_DRAM_RETIREMENT_FAILURE", "ECC page retirement or row remapper recording failure", CRITICAL,
       "RESET_GPU"),
    _x(68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", ERROR, "RESTART_APP"),
    _x(69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", ERROR, "RESTART_APP"),
    _x(74, "NVLINK_ERROR", "NVLink Error", CRITICAL, "WORKFLOW_NVLINK_ERR", nvlink=True),
    _x(79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", CRITICAL, "RESTART_BM"),
    _x(92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", WARNING, "IGNORE"),
    _x(94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained ECC error", ERROR, "RESTART_APP"),
    _x(95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained ECC error", CRITICAL, "RESET_GPU"),
    _x(109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", CRITICAL, "RESET_GPU"),
    _x(110, "SEC_FAULT_ERROR", "Security Fault Error", CRITICAL, "RESET_GPU"),
    _x(119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", CRITICAL, "RESET_GPU"),
    _x(120, "GSP_ERROR", "GSP Error", CRITICAL, "RESET_GPU"),
    _x(121, "C2C_ERROR", "C2C Link Error", WARNING, "IGNORE"),
    _x(136, "ALI_TRAINING_FAIL", "NVLink ALI (link) training failure", CRITICAL, "RESET_GPU", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(137, "NVLINK_FLA_PRIV_ERR", "NVLink FLA privilege error", WARNING, "IGNORE", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "Unrecovered ECC Error", CRITICAL, "RESET_GPU"),
    _x(143, "GPU_INIT_ERROR", "GPU Initialization Failure", CRITICAL, "RESET_GPU"),
    _x(144, "NVLINK_SAW_ERROR", "NVLink SAW error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(145, "NVLINK_RLW_ERROR", "NVLink RLW error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(146, "NVLINK_TLW_ERROR", "NVLink TLW error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(147, "NVLINK_TREX_ERROR", "NVLink TREX error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(148, "NVLINK_NVLPW_CTRL_ERROR", "NVLink NVLPW control error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(149, "NVLINK_NETIR_ERROR", "NVLink NETIR error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(150, "NVLINK_MSE_ERROR", "NVLink MSE error", CRITICAL, "WORKFLOW_NVLINK5_ERR", nvlink=True,
       source=_FROM_MNEMONIC),
    _x(154, "GPU_RECOVERY_ACTION_CHANGED", "GPU recovery action changed", ERROR, "FOLLOW_OTHER_XID",
       source=_FROM_MNEMONIC),
])

# NVLink5 Xids (144-150) carry "Fatal" or "Nonfatal" in their message (NVIDIA/open-gpu-kernel-modules prints the
# unit, the word, "XC0 i0 Link N (...)"); a Nonfatal one is read at this severity instead of the entry's.
NVLINK5_NONFATAL_SEVERITY = WARNING

SXIDS: Dict[int, XidInfo] = dict(
    _x(n, m, meaning, sev, act, nvlink=True, source=SRC_SXID) for n, m, meaning, sev, act in (
        (10003, "NVSWITCH_ERR_HW_HOST_UNHANDLED_INTERRUPT", "host unhandled interrupt", CRITICAL, "RESET_FABRIC"),
        (10004, "NVSWITCH_ERR_HW_HOST_THERMAL_EVENT_START", "thermal event start", CRITICAL, "CHECK_THERMALS"),
        (10006, "NVSWITCH_ERR_HW_HOST_THERMAL_SHUTDOWN", "thermal shutdown", CRITICAL, "RESET_FABRIC"),
        (11001, "NVSWITCH_ERR_HW_NPORT_INGRESS_CMDDECODEERR", "ingress invalid command", CRITICAL,
         "WORKFLOW_NVLINK_POTENTIALY_FATAL_ERR"),
        (11004, "NVSWITCH_ERR_HW_NPORT_INGRESS_ACLFAIL", "ingress ACL failure", CRITICAL, "CHECK_FM_CONFIG"),
        (12028, "NVSWITCH_ERR_HW_NPORT_EGRESS_PRIVRSPERR", "egress non-posted PRIV error", CRITICAL, "RESET_FABRIC"),
        (14017, "NVSWITCH_ERR_HW_NPORT_TSTATE_ATO_ERR", "TSTATE ATO error", CRITICAL, "RESET_FABRIC"),
        (19084, "NVSWITCH_ERR_HW_NVLTLC_RX_LNK_AN1_HEARTBEAT_TIMEOUT_ERR", "AN1 heartbeat timeout", CRITICAL,
         "RESET_FABRIC"),
        (20001, "NVSWITCH_ERR_HW_DLPL_TX_REPLAY", "TX replay", WARNING, "IGNORE"),
        (20009, "NVSWITCH_ERR_HW_DLPL_RX_SHORT_ERROR_RATE", "RX short error rate", CRITICAL,
         "CHECK_LINK_MECHANICAL_CONNECTIONS"),
        (20010, "NVSWITCH_ERR_HW_DLPL_RX_LONG_ERROR_RATE", "RX long error rate", CRITICAL,
         "CHECK_LINK_MECHANICAL_CONNECTIONS"),
        (20012, "NVSWITCH_ERR_HW_DLPL_RX_CRC_COUNTER", "RX CRC counter", CRITICAL,
         "CHECK_LINK_MECHANICAL_CONNECTIONS"),
        (20034, "NVSWITCH_ERR_HW_DLPL_LTSSM_FAULT_UP", "LTSSM fault up", CRITICAL, "RESET_GPU"),
        (22003, "NVSWITCH_ERR_HW_MINION_HALT", "MINION halt", CRITICAL, "RESET_FABRIC"),
        (22013, "NVSWITCH_ERR_HW_MINION_NONFATAL", "MINION non-fatal", WARNING, "IGNORE"),
        (23001, "NVSWITCH_ERR_HW_NXBAR_TILE_INGRESS_BUFFER_OVERFLOW", "NXBAR ingress buffer overflow", CRITICAL,
         "RESET_FABRIC"),
        (24007, "NVSWITCH_ERR_HW_NPORT_SOURCETRACK_SOURCETRACK_TIME_OUT_ERR", "sourcetrack timeout", CRITICAL,
         "RESET_GPU"),
        (26001, "NVSWITCH_ERR_HW_SOE_RESET", "SOE reset", CRITICAL, "RESET_FABRIC"),
        (28001, "NVSWITCH_ERR_HW_OSFP_THERM_WARN_ACTIVATED", "OSFP thermal warning", CRITICAL, "CHECK_THERMALS"),
    ))

# An SXid not in SXIDS is read by the word the driver printed after its number ("Fatal" / "Non-fatal", the
# NVSwitch driver's SXid print in NVIDIA/open-gpu-kernel-modules src/common/nvswitch): these severities.
SXID_FATAL_SEVERITY = CRITICAL
SXID_NONFATAL_SEVERITY = WARNING


@dataclass(frozen=True)
class Benign:
    """A kernel message that looks alarming but is not a fault of the node: ``kind`` of event it applies to,
    what ``matches`` (``xid``: the Xid number; ``text``: a substring of the message, case-insensitive), why, and
    the source that says so."""

    kind: str
    xid: Optional[int]
    text: Optional[str]
    why: str
    source: str


BENIGN: Tuple[Benign, ...] = (
    Benign("xid", 45, None,
           "Xid 45 is the driver cleaning up channels after an earlier error (often an application killed, or "
           "'caused by previous Xid N'): informative only; the earlier Xid is the finding",
           SRC_LISTING + ": 'Robust Channel Preemptive Removal. No action, informative only.'"),
    Benign("xid", 43, None,
           "Xid 43 follows a user application's fault or its being killed (channel reset verification); not a "
           "node fault unless it recurs without one",
           SRC_LISTING + " (user app error); NVIDIA k8s-device-plugin internal/rm/health.go skips 43 as an "
           "application Xid"),
    Benign("xid", 13, None,
           "Xid 13 (graphics engine exception) is most often the user's program (illegal address, instruction); "
           "run DCGM to rule hardware out if it recurs",
           SRC_LISTING + " (user app error); NVIDIA k8s-device-plugin internal/rm/health.go"),
    Benign("xid", 31, None, "Xid 31 (GPU memory page fault) is most often the user's program's illegal access",
           SRC_LISTING + " (user app error); NVIDIA k8s-device-plugin internal/rm/health.go"),
)


def xid_info(number: int) -> Optional[XidInfo]:
    """The catalogue entry of an Xid number, or None (the evaluator then reports "Xid N, not in the catalogue")."""
    return XIDS.get(number)


def sxid_info(number: int) -> Optional[XidInfo]:
    """The catalogue entry of an SXid number, or None (then the driver's Fatal/Non-fatal word decides)."""
    return SXIDS.get(number)
