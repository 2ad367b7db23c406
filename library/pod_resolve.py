#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: every modelled name resolves on this node to the modelled address, as its resolver does."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_resolve
short_description: Check that every pod name resolves on this node to its modelled address (getent ahostsv4)
description:
  - For each entry of I(names) - a name and the address the pod model gives it (the C(pod_hosts_entries) filter,
    the same entries the managed C(/etc/hosts) block holds) - runs C(getent ahostsv4 <name>), which asks the
    node's resolver through NSS exactly as a program connecting to that name does (C(/etc/hosts) first, then DNS,
    as C(/etc/nsswitch.conf) says). Every address it gives must be the modelled one - glibc returns every
    C(/etc/hosts) line naming it, sorted by RFC 6724, and older programs (gethostbyname) take the first line.
  - A name that resolves elsewhere, or not at all, is listed in C(wrong) with what it resolved to and, when a
    line of I(hosts_file) names it with another address, that line and its number - the usual cause is a stale
    line above the managed block, which the resolver reads first, so the managed block being right proves nothing.
  - Read-only; lookups run concurrently (I(parallel) at a time), each bounded by I(timeout) seconds (a DNS server
    that does not answer makes that name C(wrong), not the run hang).
version_added: "0.1.0"
options:
  names:
    description:
      - The modelled names - dicts with C(name) (one or more names separated by blanks, as an C(/etc/hosts) line
        gives them after the address) and C(address) (IPv4).
    type: list
    elements: dict
    required: true
  own:
    description:
      - This node's own names. One of them resolving to a loopback address (127.0.0.0/8) is accepted - the Debian
        and Ubuntu installers map the node's own name to 127.0.1.1 and programs on the node reach themselves
        either way; any other address is wrong.
    type: list
    elements: str
    default: []
  hosts_file:
    description: The hosts file to point into when a name resolves elsewhere.
    type: path
    default: /etc/hosts
  timeout:
    description: Seconds one lookup may take.
    type: int
    default: 10
  parallel:
    description: Lookups in flight at once.
    type: int
    default: 16
notes:
  - Supports check mode (it changes nothing, so it runs in check mode too).
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Every pod name resolves to its modelled address
  pod_resolve:
    names: "{{ inventory_hostname | pod_hosts_entries(hostvars, groups, pod) }}"
"""

RETURN = r"""
checked:
  description: Number of names looked up.
  returned: always
  type: int
wrong:
  description:
    - One dict per name that does not resolve to its modelled address - C(name), C(expected) (the modelled
      address), C(got) (the addresses getent gave, first first; empty when it found none), C(error) (when the
      lookup failed or timed out), and C(line)/C(line_no) (the first line of I(hosts_file) naming it with another
      address, when there is one) and C(text) (one line saying all of it).
  returned: always
  type: list
  elements: dict
"""

import socket
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.run import run_tool


def parse_getent_ahosts(text):
    """The addresses of ``getent ahostsv4`` output, in its order, each once ('198.18.66.11  STREAM sim-dgx1' then the
    DGRAM and RAW lines of the same address). Lines that do not start with an IPv4 address are not addresses."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        try:
            socket.inet_aton(words[0])
        except OSError:
            continue
        if words[0].count(".") == 3 and words[0] not in out:
            out.append(words[0])
    return out


def hosts_line(text, name, expected):
    """(line number, line) of the first line of a hosts file that names ``name`` with an address other than
    ``expected`` (comments and blank lines skipped), or None."""
    for no, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if len(words) >= 2 and name in words[1:] and words[0] != expected:
            return no, raw.strip()
    return None


def check_name(name, expected, getent="getent", timeout=10, run=run_tool, hosts_text="", own=False):
    """None when ``name`` resolves to ``expected`` and nothing else (for one of the node's ``own`` names, loopback
    addresses too); else the entry of ``wrong``."""
    res = run([getent, "ahostsv4", name], timeout)
    if res.timed_out:
        got, error = [], "getent ahostsv4 %s did not finish in %ss" % (name, timeout)
    elif res.rc == 2:  # getent: one or more keys not found
        got, error = [], "not found"
    elif res.rc != 0:
        got, error = [], (res.stderr or res.stdout).strip() or "getent exited %s" % res.rc
    else:
        got, error = parse_getent_ahosts(res.stdout), None
    # every address must be the modelled one: glibc's getaddrinfo returns every hosts-file line naming it (then
    # sorts them, RFC 6724 - the right one may come first by chance of its prefix), gethostbyname the first line
    extra = [a for a in got if a != expected and not (own and a.startswith("127."))]
    if got and not extra:
        return None
    out = {"name": name, "expected": expected, "got": got}
    if error:
        out["error"] = error
    line = hosts_line(hosts_text, name, expected) if hosts_text else None
    if not got:
        what = "does not resolve (%s)" % error
    elif expected in got:
        what = "resolves to %s as well" % ", ".join(extra)
    else:
        what = "resolves to %s" % ", ".join(got)
    text = "%s %s, model %s" % (name, what, expected)
    if line:
        out["line_no"], out["line"] = line
        text += " (line %d of the hosts file: '%s')" % line
    out["text"] = text
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            names=dict(type="list", elements="dict", required=True),
            own=dict(type="list", elements="str", default=[]),
            hosts_file=dict(type="path", default="/etc/hosts"),
            timeout=dict(type="int", default=10),
            parallel=dict(type="int", default=16),
        ),
        supports_check_mode=True,
    )
    p = module.params
    getent = module.get_bin_path("getent", required=True)
    try:
        with open(p["hosts_file"], encoding="utf-8", errors="replace") as fh:
            hosts_text = fh.read()
    except OSError:
        hosts_text = ""
    own = set(p["own"])
    pairs = []
    for entry in p["names"]:
        if not entry.get("address"):
            module.fail_json(msg="names: every entry needs an address (got %r)" % (entry,))
        for name in str(entry.get("name") or "").split():
            pairs.append((name, str(entry["address"])))
    with ThreadPoolExecutor(max_workers=max(1, p["parallel"])) as pool:
        found = list(pool.map(lambda nx: check_name(nx[0], nx[1], getent, p["timeout"], hosts_text=hosts_text,
                                                    own=nx[0] in own), pairs))
    module.exit_json(changed=False, checked=len(pairs), wrong=[w for w in found if w])


if __name__ == "__main__":
    main()
