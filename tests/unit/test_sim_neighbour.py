"""`podsim up`'s neighbour-table step (sim/podsimlib/network.py): the host's ARP/NDP tables are shared by every
node's namespace, and at 16 DGX the full-MTU ping mesh passed Linux's default gc_thresh3 (1,024) - the storage
nodes then did not answer ARP for up to 27 s and `site.yml` failed on an NFS probe. The step sizes the
thresholds for the pod, never lowers them, and changes nothing the second time."""
from __future__ import annotations

import podmodel as pm
from podsimlib.network import NEIGH_THRESH, ensure_neighbour_table, neighbour_entries, neighbour_thresholds

LINUX_DEFAULTS = (128, 512, 1024)


def _proc(tmp_path, values=LINUX_DEFAULTS, versions=(4, 6)):
    for v in versions:
        for i, val in enumerate(values, 1):
            f = tmp_path / (NEIGH_THRESH % (v, i)).lstrip("/")
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("%d\n" % val)
    return str(tmp_path)


def _read(root, v):
    return tuple(int(open(root + NEIGH_THRESH % (v, i)).read()) for i in (1, 2, 3))


def test_the_16_dgx_mesh_needs_more_than_linux_allows_by_default_and_4_does_not():
    """Counted from the model: every fabric's members each learn the others (5 fabrics at 16 DGX + 2 storage)."""
    assert neighbour_entries(pm.pod_shape(16, 2)) > LINUX_DEFAULTS[2]
    assert neighbour_entries(pm.pod_shape(4, 2)) < LINUX_DEFAULTS[0]
    e30 = neighbour_entries(pm.pod_shape(30, 2))
    assert neighbour_thresholds(e30) == (e30, 2 * e30, 4 * e30)


def test_thresholds_are_raised_for_the_pod_then_left_alone(tmp_path):
    root = _proc(tmp_path)
    actions: list[str] = []
    pod = pm.pod_shape(16, 2)
    ensure_neighbour_table(pod, actions, proc=root)
    want = neighbour_thresholds(neighbour_entries(pod))
    assert _read(root, 4) == want and _read(root, 6) == want
    assert len(actions) == 6 and "IPv4 gc_thresh3 1024 -> %d" % want[2] in actions[0]
    again: list[str] = []
    ensure_neighbour_table(pod, again, proc=root)
    assert again == []


def test_a_host_with_larger_tables_keeps_them_and_a_small_pod_changes_nothing(tmp_path):
    root = _proc(tmp_path, values=(100000, 200000, 400000), versions=(4,))  # and no IPv6 in this kernel
    actions: list[str] = []
    ensure_neighbour_table(pm.pod_shape(16, 2), actions, proc=root)
    assert actions == [] and _read(root, 4) == (100000, 200000, 400000)
    root4 = _proc(tmp_path / "small")
    ensure_neighbour_table(pm.pod_shape(4, 2), actions, proc=root4)
    assert actions == [] and _read(root4, 4) == LINUX_DEFAULTS
