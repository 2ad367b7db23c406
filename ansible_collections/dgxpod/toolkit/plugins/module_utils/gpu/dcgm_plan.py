# -*- coding: utf-8 -*-
"""How long ``dcgmi diag -r <level>`` may run before the GPU stage reports it as timed out (pure, stdlib only).

The GPU stage runs DCGM's diagnostic at the run profile's level (``perf_runs.<profile>.gpu.dcgm_level``: quick 1,
full 3) and kills it at a time limit. A limit below what DCGM needs makes every DGX report "dcgmi diag timed
out" - the defect of issue 39: a ``full`` run's level 3 was given the module's default of 300 s. Each level's
limit is sized here from DCGM's documented durations:

- DCGM User Guide, "DCGM Diagnostics" - "Run Levels and Tests" table (docs.nvidia.com/datacenter/dcgm/latest/
  user-guide/dcgm-diagnostics.html#run-levels-and-tests): "r1 (Short) Seconds | r2 (Medium) < 2 mins | r3 (Long)
  < 30 mins | r4 (Extra Long) 1-2 hours";
- ``dcgmi diag`` reference / ``dcgmi diag --help`` (NVIDIA/DCGM dcgmi/CommandLineParser.cpp, DCGM 4.6.0):
  "1 - Quick (System Validation ~ seconds)", "2 - Medium (Extended System Validation ~ 2 minutes)", "3 - Long
  (System HW Diagnostics ~ 15 minutes)", "4 - Extended (Longer-running System HW Diagnostics)".

The longer of the two figures is the level's documented duration (:data:`DOCUMENTED_S`); the limit is that
duration times :data:`MARGIN`, plus :data:`STARTUP_S` for the host engine and the plugins to load, scaled by the
GPU count above :data:`REFERENCE_GPUS` (:func:`gpu_scale`). The documents give one duration per level, not per
GPU: DCGM runs a plugin on all of a node's GPUs together, but the PCIe/NVLink plugin measures every GPU pair, so a
16-GPU DGX-2 gets twice the 8-GPU limit (a toolkit rule, not a DCGM figure; docs/validation.md).
"""
from __future__ import annotations

import math
from typing import Dict, Optional

__all__ = ["DOCUMENTED_S", "LEVELS", "MARGIN", "REFERENCE_GPUS", "SOURCE", "STARTUP_S", "dcgm_timeout",
           "documented_duration", "gpu_scale"]

SOURCE = ("DCGM User Guide 'DCGM Diagnostics', Run Levels and Tests: r1 (Short) seconds, r2 (Medium) < 2 mins, "
          "r3 (Long) < 30 mins, r4 (Extra Long) 1-2 hours; dcgmi diag --help (DCGM 4.6 dcgmi/CommandLineParser.cpp): "
          "1 Quick ~ seconds, 2 Medium ~ 2 minutes, 3 Long ~ 15 minutes, 4 Extended (longer-running)")

# The run levels dcgmi diag takes (1-4; "quick/short", "medium", "long", "xlong" are the same levels by name).
LEVELS = (1, 2, 3, 4)

# Each level's documented duration in seconds, the longer of the two documents above: r1 "seconds" (taken as a
# minute), r2 "< 2 mins", r3 "< 30 mins" (the --help text says ~15), r4 "1-2 hours" (the upper end).
DOCUMENTED_S: Dict[int, int] = {1: 60, 2: 2 * 60, 3: 30 * 60, 4: 2 * 3600}

MARGIN = 1.5  # a documented "< N" is a typical run: half again before a run is called hung
STARTUP_S = 120  # nv-hostengine start, plugin load and GPU enumeration before the first test
REFERENCE_GPUS = 8  # the documented durations are read as those of an 8-GPU node (DGX-1/A100/H100 class)


def _level(level: object) -> int:
    """``level`` as an int in 0..4 (0: DCGM is not run), else ValueError naming it."""
    try:
        value = int(str(level).strip())
    except (TypeError, ValueError):
        raise ValueError("DCGM run level %r is not a number (0 skips DCGM, 1-4 are dcgmi diag -r levels)"
                         % (level,)) from None
    if value != 0 and value not in LEVELS:
        raise ValueError("DCGM run level %d does not exist: dcgmi diag -r takes 1 (quick), 2 (medium), 3 (long) "
                         "or 4 (extra long); 0 skips DCGM" % value)
    return value


def documented_duration(level: object) -> int:
    """Seconds DCGM's documents give the run level (:data:`DOCUMENTED_S`); 0 for level 0 (DCGM not run)."""
    value = _level(level)
    return DOCUMENTED_S.get(value, 0)


def gpu_scale(gpus: Optional[int]) -> float:
    """How much longer than an 8-GPU node's run a node of ``gpus`` GPUs may take: ``gpus / 8`` above 8, 1 at or
    below 8 (fewer GPUs do not make DCGM's fixed-length stress tests shorter); 1 when the count is unknown."""
    if gpus is None or isinstance(gpus, bool):
        return 1.0
    try:
        count = int(gpus)
    except (TypeError, ValueError):
        return 1.0
    return max(1.0, count / float(REFERENCE_GPUS))


def dcgm_timeout(level: object, gpus: Optional[int] = None) -> int:
    """Seconds ``dcgmi diag -r <level>`` may run on a node of ``gpus`` GPUs: (documented duration x
    :data:`MARGIN` + :data:`STARTUP_S`) x :func:`gpu_scale`, rounded up to a whole minute. Level 0 (DCGM not run)
    is 0. Never below the level's documented duration (the test in tests/unit/test_gpu_dcgm_plan.py checks every
    profile's ``full`` level against it). An unknown level is a ValueError naming it."""
    value = _level(level)
    if value == 0:
        return 0
    seconds = (DOCUMENTED_S[value] * MARGIN + STARTUP_S) * gpu_scale(gpus)
    return int(math.ceil(seconds / 60.0) * 60)
