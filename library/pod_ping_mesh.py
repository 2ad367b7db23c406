#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: jumbo-frame reachability from this host to its peers on every data NIC."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_ping_mesh
short_description: Check full-MTU reachability to every peer on every fabric (ping -M do)
description:
  - For each target - a local NIC, a peer name and address, and the fabric MTU - sends
    C(ping -M do -s <mtu - 28> -I <nic>) (don't fragment, so a hop with a smaller MTU fails instead of
    fragmenting). A target that does not answer is pinged again at ping's default small size, so a path that
    drops full-size frames while small ones pass is told from a peer that does not answer at all.
  - Runs the pings concurrently (I(parallel) at a time), so a host checks all its peers in about the time of one
    ping; run on every host at once, this covers every pair in both directions.
  - Read-only. Fails, naming node, NIC, peer and what ping said, if any target does not answer.
version_added: "0.1.0"
options:
  targets:
    description:
      - List of dicts with C(nic) (local interface), C(peer) (name), C(address) (peer IPv4), C(mtu); optional
        C(peer_nic) and C(fabric) are passed through to the results. Build it with the C(pod_ping_targets) filter
        (every other DGX, and every storage node on a storage fabric).
    type: list
    elements: dict
    required: true
  count:
    description: Echo requests per target.
    type: int
    default: 2
  timeout:
    description: Seconds to wait for each reply (C(ping -W)).
    type: int
    default: 2
  parallel:
    description: Pings in flight at once.
    type: int
    default: 32
notes:
  - Supports check mode (it changes nothing, so it runs in check mode too).
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Jumbo frames reach every peer on every data NIC
  pod_ping_mesh:
    targets: "{{ inventory_hostname | pod_ping_targets(hostvars, groups, pod) }}"
"""

RETURN = r"""
checked:
  description: Number of targets pinged.
  returned: always
  type: int
failures:
  description: One line per target that did not answer at full MTU.
  returned: always
  type: list
  elements: str
unanswered:
  description:
    - The targets of I(failures) as data, in the same order - the target's own keys (C(nic), C(peer), C(address),
      C(mtu), and C(peer_nic), C(fabric) when the target has them), C(ok) false, C(small_ok) (whether a small
      ping to the same address answered; when it did, full-MTU frames fail on that path while small ones pass),
      C(detail) (ping's last line) and C(text) (the line of I(failures)). The network stage's evaluator reads
      these (module_utils/network/eval.py).
  returned: always
  type: list
  elements: dict
results:
  description: Per target - nic, peer, address, mtu, ok, and ping's last line.
  returned: always
  type: list
  elements: dict
"""

import re
import socket
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool


def summarise(output):
    """The useful part of ping's output: the loss line, or the error."""
    for line in output.splitlines():
        if "packet loss" in line or "Message too long" in line or "frag needed" in line:
            return line.strip()
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def _ping(run, ping, t, count, timeout, size=None):
    """(answered, ping's summary line) of one ping run: full size with don't-fragment when ``size`` is given,
    ping's default 56-byte payload otherwise. run_tool, not module.run_command: run_command swaps process-wide
    state (environment, locale) around each call and is not safe from several threads - at 16 nodes it returned
    cut-off output. LC_ALL=C there: ping's summary lines are parsed."""
    cmd = [ping] + (["-M", "do", "-s", str(size)] if size is not None else []) + [
        "-c", str(count), "-W", str(timeout), "-i", "0.2", "-I", t["nic"], t["address"]]
    limit = count * (timeout + 1) + 5
    res = run(cmd, limit)
    rc, text = res.rc, res.stdout + res.stderr
    if res.timed_out:
        rc, text = -1, "ping did not finish in %ss" % limit
    m = re.search(r"(\d+) received", text)
    return rc == 0 and m is not None and int(m.group(1)) > 0, summarise(text)


def probe(t, ping, count=2, timeout=2, run=run_tool):
    """One target: a full-MTU, don't-fragment ping (IPv4 header 20 + ICMP header 8 below the MTU); when it gets no
    answer, a small ping too, so the result tells a path that drops full-size frames (``small_ok``: a NIC or port on
    the way below the fabric's MTU - for TCP already open over it, e.g. NFS, a black hole) from a peer that does
    not answer at all."""
    ok, detail = _ping(run, ping, t, count, timeout, size=int(t["mtu"]) - 28)
    out = dict(t, ok=ok, detail=detail)
    if not ok:
        small, small_detail = _ping(run, ping, t, count, timeout)
        out["small_ok"] = small
        if small:
            out["detail"] = "%s; small pings answer (%s): full-MTU frames fail on this path" % (detail, small_detail)
    return out


def failure_text(me, r):
    """The line of ``failures`` for one unanswered target."""
    return "%s %s -> %s (%s) at MTU %s: %s" % (me, r["nic"], r["peer"], r["address"], r["mtu"], r["detail"])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            targets=dict(type="list", elements="dict", required=True),
            count=dict(type="int", default=2),
            timeout=dict(type="int", default=2),
            parallel=dict(type="int", default=32),
        ),
        supports_check_mode=True,
    )
    p = module.params
    ping = module.get_bin_path("ping", required=True)
    me = socket.gethostname()

    def one(t):
        return probe(t, ping, p["count"], p["timeout"])

    with ThreadPoolExecutor(max_workers=max(1, p["parallel"])) as pool:
        results = list(pool.map(one, p["targets"]))
    # not "failed": Ansible's own result key (fail_json sets it to true, exit_json drops a false one)
    unanswered = [dict(r, text=failure_text(me, r)) for r in results if not r["ok"]]
    failures = [f["text"] for f in unanswered]
    if failures:
        module.fail_json(msg="%d of %d full-MTU pings failed: %s" % (len(failures), len(results),
                                                                    "; ".join(failures)),
                         failures=failures, unanswered=unanswered, results=results, checked=len(results))
    module.exit_json(changed=False, checked=len(results), failures=[], unanswered=[], results=results)


if __name__ == "__main__":
    main()
