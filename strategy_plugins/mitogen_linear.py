# -*- coding: utf-8 -*-
"""Mitogen for Ansible, the project's default strategy (issue 19; ansible.cfg ``strategy = mitogen_linear``).

Mitogen (``mitogen`` on PyPI, pinned in requirements.txt) keeps one Python interpreter per host for the whole
run instead of starting one per task. This file only makes its ``mitogen_linear`` strategy findable through
``strategy_plugins`` in ansible.cfg, wherever the virtualenv is. ``ANSIBLE_STRATEGY=linear`` runs any playbook
with Ansible's own strategy instead (docs/benchmarks.md has the two side by side).
"""
from __future__ import annotations

try:
    import ansible_mitogen.loaders
    import ansible_mitogen.strategy
except ImportError as exc:  # pragma: no cover - only when someone selects the strategy without the package
    raise ImportError("the mitogen_linear strategy needs the 'mitogen' package (bash scripts/setup.sh): %s"
                      % exc) from None

Base = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)


class StrategyModule(ansible_mitogen.strategy.StrategyMixin, Base):
    """Ansible's linear strategy, run over Mitogen's persistent interpreters."""
