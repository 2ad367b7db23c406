"""Post-deploy: what the dgx_network role configures, derived from the model (any inventory)."""
from __future__ import annotations

import json

from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import (hosts_entries, nccl_env, nic_plan)  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod  # noqa: E402


def pod_of(node):
    return Pod.from_hostvars(node.pod_hostvars, node.pod_groups, node.vars["pod"])


def test_nic_mtu_and_address(node):
    links = {link["ifname"]: link for link in json.loads(node.host.check_output("ip -j addr show"))}
    wrong = []
    for nic in nic_plan(pod_of(node), node.name):
        link = links.get(nic["name"])
        if link is None:
            wrong.append("%s %s: no such interface" % (node.name, nic["name"]))
            continue
        if link["mtu"] != nic["mtu"]:
            wrong.append("%s %s: MTU %d, model %d" % (node.name, nic["name"], link["mtu"], nic["mtu"]))
        have = ["%s/%d" % (a["local"], a["prefixlen"]) for a in link.get("addr_info", []) if a["family"] == "inet"]
        if nic["cidr"] not in have:
            wrong.append("%s %s: address %s missing (has %s)" % (node.name, nic["name"], nic["cidr"],
                                                                 ", ".join(have) or "none"))
    assert not wrong, "; ".join(wrong)


def test_hosts_block(node):
    text = node.host.file("/etc/hosts").content_string
    marker = "# BEGIN dgxpod toolkit"
    block = text.split(marker)[1].split("# END dgxpod toolkit")[0] if marker in text else ""
    lines = [ln.split() for ln in block.splitlines()[1:] if ln.strip()]
    want = [[e["address"]] + e["name"].split() for e in hosts_entries(pod_of(node))]
    assert lines == want, "%s: /etc/hosts block differs from the model" % node.name


def test_every_pod_name_resolves_to_its_modelled_address(node):
    """As programs resolve them (getent ahostsv4, through NSS: /etc/hosts top down, then DNS) - the block being right
    proves nothing when a stale line above it names a peer (issue 46). The node's own name may be on loopback (the
    Debian/Ubuntu installers map it to 127.0.1.1)."""
    wrong = []
    for e in hosts_entries(pod_of(node)):
        for name in e["name"].split():
            res = node.host.run("getent ahostsv4 %s" % name)
            got = sorted({ln.split()[0] for ln in res.stdout.splitlines() if ln.split()}) if res.rc == 0 else []
            own = name.split(".")[0] == node.name
            extra = [a for a in got if a != e["address"] and not (own and a.startswith("127."))]
            if not got or extra:  # glibc returns every hosts line naming it: each must be the modelled address
                wrong.append("%s: %s resolves to %s, model %s" % (node.name, name, ", ".join(got) or "nothing",
                                                                  e["address"]))
    assert not wrong, "; ".join(wrong)


def test_nccl_env_file(node):
    f = node.host.file("/etc/dgxpod/nccl.env")
    assert f.exists, "%s: /etc/dgxpod/nccl.env missing" % node.name
    env = dict(ln.split("=", 1) for ln in f.content_string.splitlines() if ln and not ln.startswith("#"))
    want = nccl_env(pod_of(node), node.name, {})
    for key in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "OMPI_MCA_btl_tcp_if_include"):
        if key in want:
            assert env.get(key) == want[key], "%s: %s=%s, model %s" % (node.name, key, env.get(key), want[key])
