"""scripts/task_floor.py: the host-tasks of a recap, the floor per host-task and the bounds it puts on issue 19's
ratios; one real measurement on two local hosts (nothing is contacted)."""
from __future__ import annotations

import pytest

import task_floor as tf

# The recap of a no-op site.yml re-run on the 4-DGX pod-in-a-box (2026-11-28, this project's ansible-core 2.19),
# after a play's own output that also says "ok=" - only the last recap counts. Ansible ends each recap line with
# three spaces; they are stripped here (the linter's rule) and put back in a test below.
RERUN = """\
TASK [ngc_container : Prove the mesh from the launcher] ************************
ok: [sim-dgx1] => {"msg": "ok=4 of 4"}

PLAY RECAP *********************************************************************
localhost                  : ok=3    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0
sim-dgx1                   : ok=43   changed=0    unreachable=0    failed=0    skipped=11   rescued=0    ignored=0
sim-dgx2                   : ok=36   changed=0    unreachable=0    failed=0    skipped=11   rescued=0    ignored=0
sim-dgx3                   : ok=36   changed=0    unreachable=0    failed=0    skipped=11   rescued=0    ignored=0
sim-dgx4                   : ok=36   changed=0    unreachable=0    failed=0    skipped=11   rescued=0    ignored=0
sim-sw1                    : ok=9    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0
sim-sw2                    : ok=9    changed=0    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0

Saturday 28 November 2026  02:48:03 +0000 (0:00:01.612)       0:00:17.301 *****
"""

# A failed run: a failed host stops after its failing task, an unreachable one counts its attempt.
FAILED = """\
PLAY RECAP *********************************************************************
DGX1-1                     : ok=12   changed=2    unreachable=0    failed=1    skipped=3    rescued=0    ignored=0
DGX1-2                     : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0
"""


def test_host_tasks_of_a_real_recap():
    assert tf.host_tasks(RERUN) == {"localhost": 3, "sim-dgx1": 54, "sim-dgx2": 47, "sim-dgx3": 47,
                                    "sim-dgx4": 47, "sim-sw1": 9, "sim-sw2": 9}


def test_host_tasks_with_the_trailing_spaces_ansible_prints():
    assert tf.host_tasks(RERUN.replace("ignored=0\n", "ignored=0   \n")) == tf.host_tasks(RERUN)


def test_host_tasks_counts_failed_and_unreachable_and_only_the_last_recap():
    assert tf.host_tasks(FAILED) == {"DGX1-1": 16, "DGX1-2": 1}
    assert tf.host_tasks(FAILED + "\n" + RERUN)["sim-dgx2"] == 47
    assert "DGX1-1" not in tf.host_tasks(FAILED + "\n" + RERUN)
    assert tf.host_tasks("ok: [sim-dgx1]\nno recap here") == {}


def test_per_host_task_subtracts_the_empty_play():
    assert tf.per_host_task(10.0, 2.0, 4, 40) == pytest.approx(0.05)
    assert tf.per_host_task(1.0, 2.0, 4, 40) == 0.0  # noise: never negative
    with pytest.raises(ValueError):
        tf.per_host_task(1.0, 0.5, 0, 40)


def test_ratio_bounds_arithmetic():
    # 4 DGX, 50 host-tasks a DGX at 20 ms: 1 s a DGX, 4 s of the 12 s re-run; the fixed part at most 8 s
    b = tf.ratio_bounds(12.0, 4, 50, 0.02)
    assert b["per_dgx_s"] == pytest.approx(1.0)
    assert b["fixed_s"] == pytest.approx(8.0)
    assert b["floor_share"] == pytest.approx(4.0 / 12.0)
    assert b["ratio_big"] == pytest.approx((8.0 + 16.0) / 12.0)  # 2.0: just reachable
    assert b["max_tasks_for_2x"] == pytest.approx(50.0)


def test_ratio_bounds_when_the_floor_is_the_whole_re_run():
    # the floor explains the whole re-run: no fixed part, so 16 DGX cost 4x whatever the task count
    b = tf.ratio_bounds(4.0, 4, 50, 0.02)
    assert b["fixed_s"] == 0.0 and b["ratio_big"] == pytest.approx(4.0) and b["max_tasks_for_2x"] == 0.0


@pytest.mark.parametrize("args", [(0.0, 4, 50, 0.02), (10.0, 0, 50, 0.02), (10.0, 4, 50, 0.0),
                                  (10.0, 8, 50, 0.02)])
def test_ratio_bounds_refuses_what_has_no_meaning(args):
    with pytest.raises(ValueError):
        tf.ratio_bounds(*args)


def test_measure_runs_both_plays_on_local_hosts():
    r = tf.measure(2, 2)
    assert r["hosts"] == 2 and r["tasks"] == 2
    assert r["empty_s"] > 0 and r["tasks_s"] > 0 and r["floor_s"] >= 0
    assert r["floor_s"] == pytest.approx(tf.per_host_task(r["tasks_s"], r["empty_s"], 2, 2))
