# -*- coding: utf-8 -*-
"""Mitogen for Ansible, the project's default strategy (issue 19; ansible.cfg ``strategy = mitogen_linear``).

Mitogen (``mitogen`` on PyPI, pinned in requirements.txt) keeps one Python interpreter per host for the whole
run instead of starting one per task. This file only makes its ``mitogen_linear`` strategy findable through
``strategy_plugins`` in ansible.cfg, wherever the virtualenv is. ``ANSIBLE_STRATEGY=linear`` runs any playbook
with Ansible's own strategy instead (docs/benchmarks.md has the two side by side).

CPU pinning. Mitogen pins its processes to CPUs (``ansible_mitogen.affinity``). On a controller with fewer
than 4 CPUs it puts its connection multiplexer on CPU 0 and the Ansible top-level process *and every task
worker* on CPU 1, so the strategy loop and all the forks share one core while the other mostly idles. On the
2-CPU pod-in-a-box machine that made every task cost about twice what Ansible's own ``linear`` costs
(40 set_facts on 4 hosts: 4.5 s pinned, 2.9 s unpinned, 2.5 s ``linear``) and the no-op ``site.yml`` re-run
17.0 s instead of 12.9 s (docs/benchmarks.md, session 19). So below 4 CPUs this plugin turns the pinning off
and leaves placement to the kernel's scheduler; from 4 CPUs on, Mitogen's own policy (multiplexer and
top-level on CPUs of their own, workers spread over the rest) is kept. ``DGXPOD_MITOGEN_PINNING=on`` keeps
Mitogen's pinning whatever the CPU count, ``off`` turns it off whatever the count.
"""
from __future__ import annotations

import multiprocessing
import os

try:
    import ansible_mitogen.affinity
    import ansible_mitogen.loaders
    import ansible_mitogen.strategy
except ImportError as exc:  # pragma: no cover - only when someone selects the strategy without the package
    raise ImportError("the mitogen_linear strategy needs the 'mitogen' package (bash scripts/setup.sh): %s"
                      % exc) from None

Base = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)


class StrategyModule(ansible_mitogen.strategy.StrategyMixin, Base):
    """Ansible's linear strategy, run over Mitogen's persistent interpreters."""


PINNING_ENV = "DGXPOD_MITOGEN_PINNING"
SMALL_CONTROLLER_CPUS = 4   # below this, Mitogen puts the top-level process and all workers on one CPU


def keep_mitogen_pinning(setting, cpu_count):
    """Whether Mitogen's CPU pinning stays on: ``setting`` is $DGXPOD_MITOGEN_PINNING ('on', 'off' or unset/'')."""
    setting = (setting or "").strip().lower()
    if setting in ("on", "off"):
        return setting == "on"
    if setting:
        raise ValueError("%s must be 'on' or 'off', not %r" % (PINNING_ENV, setting))
    return cpu_count >= SMALL_CONTROLLER_CPUS


if not keep_mitogen_pinning(os.environ.get(PINNING_ENV), multiprocessing.cpu_count()):
    # The base Policy's assign_* methods do nothing: no process is pinned, the kernel places them. Mitogen looks
    # the policy up as ansible_mitogen.affinity.policy at each call, and the first call comes after this import
    # (the strategy's run() starts the multiplexer).
    ansible_mitogen.affinity.policy = ansible_mitogen.affinity.Policy()
