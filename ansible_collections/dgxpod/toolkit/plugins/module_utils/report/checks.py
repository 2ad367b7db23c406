# -*- coding: utf-8 -*-
"""The report's view of a check row: what one row of a check is about (row_subject) and how an iperf3 link is
named (link_text). The result type itself is module_utils/result/check.py."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (COMPARES,  # noqa: F401
    SIMULATED_REASON, STATUSES, CheckResult, apply_simulated_policy, at_least, compare, contradiction, counts,
    expectation, link_text, pass_fail)


def row_subject(c: Dict[str, Any]) -> Optional[str]:
    """What one row of a check with several rows for the same host is about - the adapter, the GPU, the iperf3
    link, the fio step, the training pass - or None. The report puts it before the measurement, or such rows
    read the same ("hca_pcie_link | sim-dgx1 | pass | measured x16" four times)."""
    name = str(c.get("check") or "")
    gpu = c.get("gpu")
    if c.get("hca"):
        return str(c["hca"])
    if name.startswith("gpu_") and isinstance(gpu, (int, str)) and not isinstance(gpu, bool):
        return "GPU %s" % gpu
    if name.startswith("iperf") and all(c.get(k) for k in ("client", "client_nic", "server", "server_nic", "fabric")):
        return link_text(c)
    if name.startswith("fio_") and name != "fio_scaling" and c.get("step") is not None:
        return "step of %s node(s)" % c["step"]
    if name.startswith("train_") and c.get("pass"):
        return "%s pass" % c["pass"]
    return None
