"""tc TBF shaping of a node's link (both ends of its veth): `podsim shape`, `up --shape-proportional`."""

from __future__ import annotations

import podmodel as pm

from .common import run


def tc_rate_bytes(rate: str) -> float:
    units = {"kbit": 1e3 / 8, "mbit": 1e6 / 8, "gbit": 1e9 / 8, "bit": 1 / 8, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
    r = rate.lower()
    for u in sorted(units, key=len, reverse=True):
        if r.endswith(u):
            return float(r[:-len(u)]) * units[u]
    return float(r) / 8


def tbf_args(rate: str) -> list[str]:
    burst = max(int(tc_rate_bytes(rate) / 250), 64 * 1024)  # at least one jiffy (HZ=250) of data
    return ["tbf", "rate", rate, "burst", str(burst), "latency", "50ms"]


def apply_shape(node: pm.Node, nic: pm.Nic, rate: str | None) -> None:
    """TBF on both ends of the veth: host end (traffic to the node), node end (traffic from it)."""
    if rate:
        run(["tc", "qdisc", "replace", "dev", nic.host_end, "root"] + tbf_args(rate))
        run(["ip", "netns", "exec", node.name, "tc", "qdisc", "replace", "dev", nic.name, "root"] + tbf_args(rate))
    else:
        run(["tc", "qdisc", "del", "dev", nic.host_end, "root"], check=False)
        run(["ip", "netns", "exec", node.name, "tc", "qdisc", "del", "dev", nic.name, "root"], check=False)


def proportional_shapes(pod: pm.Pod) -> dict[str, str]:
    """Data links shaped in the proportion of the real ports (DGX-1 100G : F800 40G), scaled to what
    veths on this machine carry: 10 Gbit/s for a 100G port, 4 Gbit/s for a 40G port."""
    shapes = {}
    for n in pod.all_nodes:
        for nic in n.nics:
            if nic.speed:
                shapes["%s/%s" % (n.name, nic.name)] = "%dgbit" % (nic.speed // 10)
    return shapes
