# -*- coding: utf-8 -*-
"""How the report writes a number and colours a status, shared by the report (report/render.py) and the stages'
own report sections (perf/iperf_eval.py, storage/fio_report.py). Pure."""
from __future__ import annotations

from typing import Any

STATUS_COLORS = {"pass": "#2e7d32", "fail": "#c62828", "error": "#6a1b9a", "skipped": "#757575"}


def fmt_number(v: Any) -> str:
    """'-' for None; a float with one decimal from 10 up, three significant digits below; anything else as str."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%.1f" % v) if abs(v) >= 10 else ("%.3g" % v)
    return str(v)
