"""scripts/benchmark.py growth_rows (issue 19 item 4): seconds per added DGX of the no-op re-run and the state checks
between the measured sizes, and whether the growth stays linear."""
from __future__ import annotations

import pytest

import benchmark as bm

STATE = "validate.yml --skip-tags %s (state checks)" % bm.STATE_SKIP


def test_slopes_between_consecutive_sizes_and_their_ratio():
    rows = [("site.yml first run", 4, 26.6, ""), ("site.yml re-run", 16, 54.8, ""), ("site.yml re-run", 4, 18.3, ""),
            ("site.yml re-run (linear)", 4, 34.6, ""), ("site.yml re-run", 30, 112.2, ""),
            (STATE, 4, 20.2, ""), (STATE, 16, 71.7, "")]
    got = bm.growth_rows(rows)
    assert [(name, n) for name, n, _, _ in got] == [
        ("site.yml re-run: seconds per added DGX", "4->16"), ("site.yml re-run: seconds per added DGX", "16->30"),
        ("validate.yml state checks: seconds per added DGX", "4->16")]
    assert got[0][2] == pytest.approx((54.8 - 18.3) / 12) and got[0][3] == "18.3 -> 54.8 s"
    assert got[1][2] == pytest.approx((112.2 - 54.8) / 14)
    assert got[1][3].endswith("; %.2fx the slope before it" % (((112.2 - 54.8) / 14) / ((54.8 - 18.3) / 12)))
    assert got[2][2] == pytest.approx((71.7 - 20.2) / 12)


def test_one_size_or_a_failed_step_gives_no_slope():
    assert bm.growth_rows([("site.yml re-run", 4, 18.3, "")]) == []
    # a failed step's row (StepFailed.row) has no int size: it is not a point of the line
    assert bm.growth_rows([("site.yml re-run", 4, 18.3, ""), ("site.yml re-run", "16 (failed)", 9.0, "")]) == []
