"""Unit-suite invariant: no check result states a comparison its status contradicts.

Every :class:`CheckResult` any unit test makes (every evaluator on every fixture: healthy runs, injected faults,
odd tool outputs) is checked with ``result.check.contradiction``: a ``pass`` whose number does not meet its
expectation the way the report prints it ("measured 2 uncorrectable errors (expected >= 0)"), or a ``fail`` that
meets it and gives no cause, fails the test that made it. A test that builds such a result on purpose says so
with ``@pytest.mark.contradiction_ok``.

Second invariant (issue 38): every CheckResult a module_util (:data:`SUBJECT_REQUIRED`) hands out says what it
is about (``subject``) and what kind of check it is (``category``) - the root-cause findings read nothing else.
A result counts as made by the first module on the stack outside the result type's own helpers (``at_least``,
``but``, the simulated policy) and the dataclass machinery; a copy (``but``/``replace``) belongs to whoever made
the original, and a result that was copied is not required (``at_least(...).but(subject=..., category=...)``
hands out the copy). Results a test builds itself are not required."""
from __future__ import annotations

import sys

import pytest

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result import check as checks

_MU = "ansible_collections.dgxpod.toolkit.plugins.module_utils."
# Every module_util of the product: the registered stages' evaluators (report/stages.py), the registry's own rows
# and whatever else hands out a CheckResult.
SUBJECT_REQUIRED = (_MU,)
# modules that build a result on someone else's behalf: the result type, dataclasses
_ON_BEHALF = {checks.__name__, "dataclasses", __name__}


def pytest_configure(config):
    config.addinivalue_line("markers", "contradiction_ok: the test builds check results that contradict "
                                       "their stated comparison on purpose")
    config.addinivalue_line("markers", "subject_ok: the test makes an evaluator hand out check results without a "
                                       "subject or category on purpose")


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


def _maker() -> str:
    """The module that asked for the CheckResult being built (see the module docstring)."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__") in _ON_BEHALF:
        f = f.f_back
    return str(f.f_globals.get("__name__")) if f is not None else ""


def _subjectless(made, owner, copied):
    return ["check %s on %s (made by %s): %s" % (r.check, r.host, owner[id(r)], ", ".join(
        k for k in ("subject", "category") if getattr(r, k) is None))
        for r in made if owner[id(r)].startswith(SUBJECT_REQUIRED) and id(r) not in copied
        and (r.subject is None or r.category is None)]


@pytest.fixture(autouse=True)
def _check_results_say_what_they_are_about(request, monkeypatch):
    if request.node.get_closest_marker("subject_ok"):
        yield
        return
    made, owner, copied = [], {}, set()  # made keeps every result alive: ids are not reused during the test
    original, original_replace = checks.CheckResult.__post_init__, checks.replace

    def recorded(self):
        original(self)
        made.append(self)
        owner[id(self)] = _maker()

    def replace(obj, **changes):
        new = original_replace(obj, **changes)
        if id(obj) in owner and id(new) in owner:
            copied.add(id(obj))
            owner[id(new)] = owner[id(obj)]
        return new

    monkeypatch.setattr(checks.CheckResult, "__post_init__", recorded)
    monkeypatch.setattr(checks, "replace", replace)
    yield
    missing = _subjectless(made, owner, copied)
    assert not missing, "check results without a subject or category (issue 38):\n" + "\n".join(missing[:10])
