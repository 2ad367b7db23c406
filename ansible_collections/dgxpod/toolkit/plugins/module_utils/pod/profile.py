# -*- coding: utf-8 -*-
"""The pod's RA profile and the expectations a run is judged against, read one way (issue 38 item 6).

- :func:`load_profile` reads ``profiles/<name>.yml`` (its ``profile`` mapping), :func:`ra_profile` the one a pod
  names in ``pod.ra_profile``;
- :func:`merged_expectations` is the profile's ``expectations`` with the pod's ``pod.validation.expectations`` on
  top (:func:`deep_merge`): what every stage's decision (the NCCL localisation, the iperf3 confirm pass) and the
  report's evaluation read.

Playbooks and roles reach them through the ``pod_ra_profile`` and ``pod_expectations`` filters
(filter_plugins/pod.py). Pure apart from reading the profile file."""
from __future__ import annotations

import copy
import functools
import os
from typing import Any, Dict, Mapping, Optional

import yaml

__all__ = ["deep_merge", "load_profile", "merged_expectations", "plain_copy", "ra_profile"]


@functools.cache
def _read(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
    except OSError as exc:
        raise ValueError("RA profile %s: %s (pod.ra_profile names a file in profiles/)" % (
            os.path.splitext(os.path.basename(path))[0], exc)) from None
    except yaml.YAMLError as exc:
        raise ValueError("RA profile %s is not YAML: %s" % (path, exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("profile"), dict):
        raise ValueError("RA profile %s has no 'profile:' mapping" % path)
    return doc["profile"]


def load_profile(name: str, directory: str) -> Dict[str, Any]:
    """The ``profile`` mapping of ``<directory>/<name>.yml`` (read once per process; do not change it). A missing,
    unreadable or malformed file is a ``ValueError`` naming it."""
    return _read(os.path.join(directory, "%s.yml" % name))


def ra_profile(pod: Optional[Mapping[str, Any]], directory: str) -> Dict[str, Any]:
    """The RA profile the pod names (``pod.ra_profile``)."""
    return load_profile(str((pod or {}).get("ra_profile") or ""), directory)


def plain_copy(value: Any) -> Any:
    """A deep copy of YAML-shaped data (dicts, lists, tuples, str, numbers, bool, None) as plain Python values.
    Ansible 2.19 hands filters tagged subclasses of str, dict and list (origin, trust), which copy.deepcopy copies
    through their dataclass state: 0.5 s of the iperf3 confirm task's 1.3 s for one expectations merge on the
    pod-in-a-box. Anything else is deep-copied as before."""
    if isinstance(value, dict):
        return {(str(k) if isinstance(k, str) else k): plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_copy(v) for v in value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if value is None:
        return None
    return copy.deepcopy(value)


def deep_merge(base: Dict[str, Any], override: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Profile expectations with a pod's overrides (pod.validation.expectations) on top. An override of an
    expectation (``{value, source}``) may be a bare value: it becomes ``{value}`` with the source "pod override
    (profile: <its value>, <its source>)"; the profile's other keys (unit, ...) are kept."""
    out = plain_copy(base or {})
    for key, value in (override or {}).items():
        old = out.get(key)
        if isinstance(old, dict) and "value" in old and not (isinstance(value, dict) and "value" in value):
            value = {"value": value}  # a bare override of an expectation
        if isinstance(value, dict) and "value" in value and isinstance(old, dict) and "value" in old:
            # an overridden expectation: its own source, and the profile's figure for the record
            item = plain_copy(value)
            item.setdefault("source", "pod override (profile: %s, %s)" % (old.get("value"), old.get("source")))
            for k, v in old.items():
                item.setdefault(k, plain_copy(v))
            out[key] = item
        elif isinstance(value, dict) and isinstance(old, dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = plain_copy(value)
    return out


def merged_expectations(profile: Optional[Mapping[str, Any]], pod: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The expectations a run is judged against: the RA profile's ``expectations`` with the pod's
    ``pod.validation.expectations`` on top (a new, plain copy)."""
    validation = (pod or {}).get("validation") or {}
    overrides = validation.get("expectations") if isinstance(validation, Mapping) else None
    return deep_merge(dict((profile or {}).get("expectations") or {}), dict(overrides or {}))
