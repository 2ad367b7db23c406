"""The pod's links: one Linux bridge per fabric on the host, a veth pair per node NIC (host end on the
fabric's bridge, node end in the node's namespace), compared with the model and repaired by ip batches."""

from __future__ import annotations

import os
from collections import Counter

import podmodel as pm

from .common import die, ip_json, run

# The host's neighbour (ARP / NDP) tables are ONE table each for every network namespace: the garbage-collection
# thresholds count the entries of all nodes together and exist only in the host's namespace. Past gc_thresh3
# the kernel refuses new entries ("neighbour: arp_cache: neighbor table overflow!" in dmesg), and a node that
# cannot make the entry for an ARP request's sender does not answer it. Seen at 16 DGX: the full-MTU ping mesh
# of dgx_network's verify leaves about 1,200 entries (16 nodes x 15 peers x 5 fabrics), past Linux's default
# 1,024, and for up to 27 s afterwards the storage nodes did not answer the DGX nodes' ARP requests - NFS
# calls hung in steps of TCP's retransmission back-off (13 s, 26 s) and `site.yml` failed on a 20 s probe.
NEIGH_THRESH = "/proc/sys/net/ipv%d/neigh/default/gc_thresh%d"


def neighbour_entries(pod: pm.Pod) -> int:
    """Entries a full mesh on every fabric can leave in the host's shared table: each of a fabric's m members
    (the controller too, on mgmt) learns the other m - 1."""
    members = Counter(nic.fabric for node in pod.all_nodes for nic in node.nics)
    members["mgmt"] += 1  # the controller's address on the mgmt bridge
    return sum(m * (m - 1) for m in members.values())


def neighbour_thresholds(entries: int) -> tuple[int, int, int]:
    """gc_thresh1..3 for that many entries: no collection below the mesh, room for twice it before the hard
    limit at four times it."""
    return entries, 2 * entries, 4 * entries


def ensure_neighbour_table(pod: pm.Pod, actions: list[str], proc: str = "") -> None:
    """Raise the host's IPv4 and IPv6 neighbour-table thresholds to what the pod's meshes need; never lower
    them (the host may need more for itself)."""
    want = neighbour_thresholds(neighbour_entries(pod))
    for version in (4, 6):
        # thresh3 first when raising: the kernel keeps thresh1 <= thresh2 <= thresh3 meaningful in that order
        for i in (3, 2, 1):
            path = proc + NEIGH_THRESH % (version, i)
            if not os.path.exists(path):
                continue
            with open(path) as fh:
                have = int(fh.read().strip())
            if have < want[i - 1]:
                with open(path, "w") as fh:
                    fh.write("%d\n" % want[i - 1])
                actions.append("neighbour table: IPv%d gc_thresh%d %d -> %d" % (version, i, have, want[i - 1]))


def host_end_mac(node: pm.Node, nic: pm.Nic) -> str:
    return "06" + nic.mac[2:]


def ensure_bridges(actions: list[str]) -> None:
    links = {link["ifname"]: link for link in ip_json(["link", "show", "type", "bridge"])}
    cmds = []
    for k, fab in enumerate(pm.FABRICS.values()):
        br = fab.bridge
        mtu = fab.mtu if fab.name == "mgmt" else pm.SWITCH_PORT_MTU
        if br not in links:
            # fixed MAC (else the bridge takes its lowest port's); the extra MTU step marks the MTU as
            # set by the user, so ports with a larger MTU do not raise the bridge's own MTU later.
            cmds += ["link add %s address 06:53:49:ff:00:%02x type bridge stp_state 0 forward_delay 0 "
                     "mcast_snooping 0" % (br, k),
                     "link set %s addrgenmode none" % br,
                     "link set %s mtu 1280" % br]
            actions.append("created bridge %s" % br)
        if br not in links or links[br].get("mtu") != mtu or "UP" not in links[br].get("flags", []):
            cmds += ["link set %s mtu %d up" % (br, mtu)]
            if br in links:
                actions.append("fixed bridge %s (mtu/up)" % br)
    if cmds:
        run(["ip", "-batch", "-"], input="\n".join(cmds) + "\n")
    want = "%s/%d" % (pm.CONTROLLER_ADDRESS, pm.MGMT_PREFIX_LEN)
    have = ip_json(["-4", "addr", "show", "dev", pm.FABRICS["mgmt"].bridge])
    addrs = {"%s/%s" % (a["local"], a["prefixlen"]) for i in have for a in i.get("addr_info", [])}
    if want not in addrs:
        run(["ip", "addr", "add", want, "dev", pm.FABRICS["mgmt"].bridge])
        actions.append("controller address %s on %s" % (want, pm.FABRICS["mgmt"].bridge))


def check_host_routes() -> None:
    """Refuse to run if the host already routes a simulator subnet somewhere else."""
    ours = {f.bridge for f in pm.FABRICS.values()}
    for r in ip_json(["-4", "route", "show"]):
        dst = r.get("dst", "")
        if dst.startswith("198.18.") or dst.startswith("198.19."):
            if r.get("dev") not in ours:
                die("the host already routes %s via %s; the simulator needs 198.18.0.0/15 for itself"
                    % (dst, r.get("dev")))


def node_link_problems(node: pm.Node, host_links: dict) -> tuple[list[str], list[str], list[str]]:
    """Compare a node's links with the model: (problems, host-side ip commands, node-side ip commands)."""
    problems, host_cmds, node_cmds = [], [], []
    node_links = {link["ifname"]: link for link in ip_json(["-n", node.name, "addr", "show"])}
    if "lo" in node_links and "UP" not in node_links["lo"].get("flags", []):
        problems.append("lo down")
        node_cmds.append("link set lo up")
    for nic in node.nics:
        hl, nl = host_links.get(nic.host_end), node_links.get(nic.name)
        if hl is None or nl is None:
            problems.append("%s missing" % nic.name)
            if hl is not None:
                host_cmds.append("link del %s" % nic.host_end)
            if nl is not None:
                node_cmds.append("link del %s" % nic.name)
            host_cmds.append("link add %s address %s mtu %d type veth peer name %s address %s mtu %d netns %s" % (
                nic.host_end, host_end_mac(node, nic), pm.SWITCH_PORT_MTU, nic.name, nic.mac, nic.mtu, node.name))
            host_cmds += ["link set %s addrgenmode none" % nic.host_end,
                          "link set %s master %s up" % (nic.host_end, nic.bridge)]
            node_cmds += ["addr add %s/24 dev %s" % (nic.address, nic.name), "link set %s up" % nic.name]
            continue
        if hl.get("master") != nic.bridge or "UP" not in hl.get("flags", []):
            problems.append("%s not on %s" % (nic.host_end, nic.bridge))
            host_cmds.append("link set %s master %s up" % (nic.host_end, nic.bridge))
        if nl.get("mtu") != nic.mtu:
            problems.append("%s mtu %s" % (nic.name, nl.get("mtu")))
            node_cmds.append("link set %s mtu %d" % (nic.name, nic.mtu))
        if "UP" not in nl.get("flags", []):
            problems.append("%s down" % nic.name)
            node_cmds.append("link set %s up" % nic.name)
        addrs = {a.get("local") for a in nl.get("addr_info", []) if a.get("family") == "inet"}
        if nic.address not in addrs:
            problems.append("%s lacks %s" % (nic.name, nic.address))
            node_cmds.append("addr add %s/24 dev %s" % (nic.address, nic.name))
    return problems, host_cmds, node_cmds


def default_routes(node: str) -> list:
    return [r for r in ip_json(["-n", node, "-4", "route", "show"]) if r.get("dst") == "default"] + \
           [r for r in ip_json(["-n", node, "-6", "route", "show"]) if r.get("dst") == "default"]
