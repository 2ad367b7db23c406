"""docs/pod-model.md's reference tables are generated from the schema (scripts/pod_model_doc.py) and current."""
from __future__ import annotations


import pytest


import pod_model_doc  # noqa: E402
from ansible_collections.dgxpod.toolkit.plugins.module_utils.preflight.schema import Field  # noqa: E402


def test_the_document_is_current():
    assert pod_model_doc.main(["--check"]) == 0, "run scripts/pod_model_doc.py and commit docs/pod-model.md"


def test_a_schema_key_without_a_meaning_is_refused(monkeypatch):
    schema = dict(pod_model_doc.TABLES["fabric"], speed_class=Field("str"))
    monkeypatch.setitem(pod_model_doc.TABLES, "fabric", schema)
    with pytest.raises(SystemExit, match=r"table fabric: keys without a meaning \['speed_class'\]"):
        pod_model_doc.table("fabric")


def test_types_choices_and_ranges_come_from_the_schema():
    rows = {line.split("|")[1].strip(): line for line in pod_model_doc.table("fabric").splitlines()[2:]}
    assert "`ethernet` \\| `infiniband` | yes" in rows["`kind`"]
    assert "| int 576–65520 | yes |" in rows["`mtu`"]
    assert "| list of fabric | yes |" in pod_model_doc.table("pod")
