# -*- coding: utf-8 -*-
"""Start margins sized from what the last launch used. Pure functions.

Runs that are compared with each other start together: the controller hands every node one ``start_at`` = now +
a margin that covers launching the next task on all of them, and each node's module reports ``start_slack``, the
seconds of that margin left when it was ready to start (negative: late). The NCCL pair rounds
(module_utils/nccl/plan.pair_start_margin) and the fio steps (filter ``pod_fio_start_margin``) size their margin
from the run before: what its slowest node used, plus headroom - instead of a fixed margin that on the 4-DGX
pod-in-a-box left 1.1-2.4 s idle in every run.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence


def margin_from_slack(margin: Optional[float], slacks: Sequence[Any], cap: Optional[float] = None,
                      headroom: float = 1.0, floor: float = 1.5, extra: float = 0.0) -> Optional[float]:
    """The next run's margin: what the slowest node used of ``margin`` (``margin`` - the least slack) +
    ``headroom`` + ``extra`` (for nodes the next run adds), at least ``floor``, never more than ``cap`` (default
    ``margin``). Without a number (no node reported a slack) it returns ``cap``; a late node (negative slack)
    gives a used share above ``margin``, so the result is ``cap``. None when neither is known."""
    cap = margin if cap is None else cap
    if margin is None:
        return None if cap is None else float(cap)
    vals = [float(s) for s in slacks if isinstance(s, (int, float)) and not isinstance(s, bool)]
    if not vals:
        return None if cap is None else float(cap)
    used = float(margin) - min(vals)
    return round(min(float(cap), max(float(floor), used + float(headroom) + float(extra))), 2)
