"""pod_resolve (library/pod_resolve.py): every modelled name resolves on a DGX to its modelled address, as the resolver
does (getent ahostsv4), and a stale /etc/hosts line that wins over the managed block is named with its line; the
network stage turns what it found into a problem of the node (module_utils/network/eval.py). Issue 46."""
from __future__ import annotations

import os
import subprocess
import sys

from inventory_util import ROOT

sys.path.insert(0, os.path.join(ROOT, "library"))
import pod_resolve  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.eval import (network_reading,  # noqa: E402
                                                                                   network_result)

# glibc getent ahostsv4 (Debian 12, glibc 2.36): one line per socket type, the name on the first only
AHOSTS = "198.18.66.14    STREAM sim-dgx4\n198.18.66.14    DGRAM  \n198.18.66.14    RAW    \n"
HOSTS = ("127.0.0.1\tlocalhost\n127.0.1.1\tsim-dgx2\n198.18.99.99\tsim-dgx4   # added by hand\n"
         "# BEGIN dgxpod toolkit: pod sim (managed; edit the inventory, not this block)\n"
         "198.18.66.11\tsim-dgx1\n198.18.66.14\tsim-dgx4\n"
         "# END dgxpod toolkit: pod sim (managed; edit the inventory, not this block)\n")


class Ran:
    def __init__(self, rc=0, stdout="", stderr="", timed_out=False):
        self.rc, self.stdout, self.stderr, self.timed_out = rc, stdout, stderr, timed_out


def test_getent_ahosts_addresses_in_order_once_each():
    assert pod_resolve.parse_getent_ahosts(AHOSTS) == ["198.18.66.14"]
    two = "10.0.0.2        STREAM db\n10.0.0.2        DGRAM  \n10.0.0.2        RAW    \n10.0.0.1        STREAM \n"
    assert pod_resolve.parse_getent_ahosts(two) == ["10.0.0.2", "10.0.0.1"]
    assert pod_resolve.parse_getent_ahosts("") == [] and pod_resolve.parse_getent_ahosts("garbage line\n") == []


def test_the_real_getent_prints_what_the_parser_reads():
    out = subprocess.run(["getent", "ahostsv4", "localhost"], capture_output=True, text=True, check=True).stdout
    assert pod_resolve.parse_getent_ahosts(out)[0].startswith("127.")


def test_a_stale_line_above_the_block_is_named_with_its_number():
    assert pod_resolve.hosts_line(HOSTS, "sim-dgx4", "198.18.66.14") == (3, "198.18.99.99\tsim-dgx4   # added by hand")
    assert pod_resolve.hosts_line(HOSTS, "sim-dgx1", "198.18.66.11") is None
    assert pod_resolve.hosts_line("# 198.18.99.99 sim-dgx1\n", "sim-dgx1", "198.18.66.11") is None  # a comment


def test_check_name_passes_the_modelled_address_and_names_the_rest():
    ok = pod_resolve.check_name("sim-dgx4", "198.18.66.14", run=lambda cmd, t: Ran(stdout=AHOSTS))
    assert ok is None
    wrong = AHOSTS.replace("198.18.66.14", "198.18.99.99")
    got = pod_resolve.check_name("sim-dgx4", "198.18.66.14", run=lambda cmd, t: Ran(stdout=wrong), hosts_text=HOSTS)
    assert got["got"] == ["198.18.99.99"] and got["line_no"] == 3
    assert got["text"] == ("sim-dgx4 resolves to 198.18.99.99, model 198.18.66.14 (line 3 of the hosts file: "
                           "'198.18.99.99\tsim-dgx4   # added by hand')")
    # glibc's getaddrinfo: both lines, sorted by RFC 6724 (the modelled one first, as on the simulator)
    both = AHOSTS + "198.18.99.99    STREAM \n198.18.99.99    DGRAM  \n198.18.99.99    RAW    \n"
    also = pod_resolve.check_name("sim-dgx4", "198.18.66.14", run=lambda cmd, t: Ran(stdout=both), hosts_text=HOSTS)
    assert also["got"] == ["198.18.66.14", "198.18.99.99"] and also["text"].startswith(
        "sim-dgx4 resolves to 198.18.99.99 as well, model 198.18.66.14 (line 3 of the hosts file")
    missing = pod_resolve.check_name("sim-dgx9", "198.18.66.19", run=lambda cmd, t: Ran(rc=2))
    assert missing["text"] == "sim-dgx9 does not resolve (not found), model 198.18.66.19" and missing["got"] == []
    slow = pod_resolve.check_name("sim-dgx9", "198.18.66.19", timeout=3, run=lambda cmd, t: Ran(timed_out=True))
    assert "did not finish in 3s" in slow["text"]


def test_the_nodes_own_name_on_loopback_is_accepted_a_peer_on_loopback_is_not():
    loop = "127.0.1.1       STREAM sim-dgx2\n127.0.1.1       DGRAM  \n127.0.1.1       RAW    \n"
    assert pod_resolve.check_name("sim-dgx2", "198.18.66.12", run=lambda c, t: Ran(stdout=loop), own=True) is None
    assert pod_resolve.check_name("sim-dgx2", "198.18.66.12", run=lambda c, t: Ran(stdout=loop))["got"] == ["127.0.1.1"]


def test_the_network_stage_fails_the_node_whose_resolver_is_wrong():
    wrong = pod_resolve.check_name("sim-dgx4", "198.18.66.14", hosts_text=HOSTS,
                                   run=lambda c, t: Ran(stdout=AHOSTS.replace("198.18.66.14", "198.18.99.99")))
    clean = {"changes": [], "differences": []}
    res = network_result("sim-dgx2", network_reading(clean, {"checked": 3, "unanswered": []}, [],
                                                     {"checked": 5, "wrong": [wrong]}))
    assert res.status == "fail" and res.problems[0].text.startswith("sim-dgx2: sim-dgx4 resolves to 198.18.99.99")
    assert res.problems[0].subject.node == "sim-dgx2" and res.problems[0].subject.path == "/etc/hosts"
    ok = network_result("sim-dgx2", network_reading(clean, {"checked": 3, "unanswered": []}, [],
                                                    {"checked": 5, "wrong": []}))
    assert ok.status == "pass" and ok.details["note"] == ("3 full-MTU pings answered; 5 pod names resolve to their "
                                                          "modelled addresses")
    # not checked (the task skipped): nothing said about names; could not run: a problem, never a silent pass
    assert network_result("h", network_reading(clean, {}, [], {"skipped": True})).status == "pass"
    broke = network_result("h", network_reading(clean, {}, [], {"msg": "getent: not found", "failed": True}))
    assert broke.status == "fail" and "name resolution not checked: getent: not found" in broke.problems[0].text
