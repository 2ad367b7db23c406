"""Unit-suite invariant: no check result states a comparison its status contradicts.

Every :class:`CheckResult` any unit test makes (every evaluator on every fixture: healthy runs, injected faults,
odd tool outputs) is checked with ``report.checks.contradiction``: a ``pass`` whose number does not meet its
expectation the way the report prints it ("measured 2 uncorrectable errors (expected >= 0)"), or a ``fail`` that
meets it and gives no cause, fails the test that made it. A test that builds such a result on purpose says so
with ``@pytest.mark.contradiction_ok``."""
from __future__ import annotations

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import checks


def pytest_configure(config):
    config.addinivalue_line("markers", "contradiction_ok: the test builds check results that contradict "
                                       "their stated comparison on purpose")


@pytest.fixture(autouse=True)
def _no_contradicting_check_results(request, monkeypatch):
    if request.node.get_closest_marker("contradiction_ok"):
        yield
        return
    found = []
    original = checks.CheckResult.__post_init__

    def checked(self):
        original(self)
        problem = checks.contradiction(self)
        if problem:
            found.append(problem)

    monkeypatch.setattr(checks.CheckResult, "__post_init__", checked)
    yield
    assert not found, "check results that contradict their stated comparison:\n" + "\n".join(found[:10])
