# -*- coding: utf-8 -*-
"""A results document (results.json, docs/results.md) as Prometheus metrics: the file ``metrics.prom`` of every run,
for node_exporter's textfile collector and a Pushgateway. :func:`prometheus_text` is pure (a dict in, text out);
:func:`write_textfile` and :func:`push` hand the text on (library/pod_report_write.py).

Format: the Prometheus text exposition format, version 0.0.4 (https://prometheus.io/docs/instrumenting/
exposition_formats/), not OpenMetrics. node_exporter's textfile collector parses "the text format" and supports no
timestamps (prometheus/node_exporter README, "Textfile Collector"); the Pushgateway takes "the simple flat text format
(version 0.0.4)" and rejects pushes with timestamps (prometheus/pushgateway README, "PUT method", "About timestamps").
OpenMetrics would need the ``# EOF`` line and ``_total`` counters that neither reader asks for, so the file has no
``# EOF`` and no sample timestamps; the run's time is a sample of its own (``dgxpod_run_timestamp_seconds``).

Every family is a gauge with HELP and TYPE lines, its samples together (a textfile collector refuses a family
split in two, or a second HELP/TYPE line). Every sample has the ``pod`` label. A check's row is identified by
``stage``, ``check``, ``host``, ``category`` and the fields of its ``subject`` that are set (:data:`SUBJECT_LABELS`);
two rows of one document that would still carry the same labels (the same link measured twice) get ``seq``
2, 3, ... so no two samples of a family share a label set (a collector refuses that too).

- ``dgxpod_check_status{..., status}`` 1: one sample per check row, ``status`` its status (pass, fail, skipped,
  error); ``dgxpod_check_status{status="fail"} == 1`` lists the failed rows.
- ``dgxpod_measurement{..., unit}``: the row's ``measured`` where it is a number.
- ``dgxpod_expected{..., unit, compare}``: the row's ``expected`` where it is a number; ``compare`` ``>=``, ``<=``
  or ``=`` as the check compares (module_utils/result/check.py ``compare``).
- ``dgxpod_checks{status}``: how many rows have each status (all four, zeros included).
- ``dgxpod_findings``: how many root-cause findings the run has (a gauge, so not ``_total``: the Prometheus naming
  rule keeps ``_total`` for counters).
- ``dgxpod_run_timestamp_seconds``: when the run finished (``finished``), in Unix seconds.
- ``dgxpod_run_info{ra_profile, simulated, schema_version, model_digest}`` 1: what the run was.
"""
from __future__ import annotations

import base64
import calendar
import math
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import STATUSES

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # the Pushgateway reads the body by it
PREFIX = "dgxpod_"
# the Subject fields that become labels: every scalar one (``nodes`` is a list and ``storage`` a flag: the row's
# host says those)
SUBJECT_LABELS = ("node", "nic", "peer", "peer_nic", "address", "fabric", "switch", "port", "gpu", "hca", "step",
                  "phase", "path")
METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
JOB = "dgxpod"  # the Pushgateway job (the pod is the group's second label)
FINISHED_FORMATS = ("%Y%m%dT%H%M%SZ", "%Y%m%dT%H%MZ")  # results.json ``finished`` (roles/pod_report)

Labels = Tuple[Tuple[str, str], ...]
Sample = Tuple[Labels, float]

HELP = {
    "run_info": "The validation run: RA profile, simulated pod, results.json schema, pod model digest (always 1)",
    "run_timestamp_seconds": "When the validation run finished (results.json finished), Unix seconds",
    "checks": "Check rows of the run by status",
    "findings": "Root-cause findings of the run (results.json findings)",
    "check_status": "One check row of the run: 1 with its status (pass, fail, skipped, error) as the status label",
    "measurement": "What a check row measured, in the unit of its unit label",
    "expected": "What a check row's measurement is compared with (compare label: >=, <= or =)",
}


def escape_label_value(value: str) -> str:
    """A label value as the text format writes it between double quotes: backslash, double quote and line feed
    escaped (exposition_formats, "Text format details")."""
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def escape_help(text: str) -> str:
    """A HELP docstring: backslash and line feed escaped (a double quote stays as it is there)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value: an integer as itself, a float by ``repr`` (shortest round-trip), NaN and the infinities as
    the format spells them."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def is_number(value: Any) -> bool:
    """A JSON number (never a bool: ``true`` is not a measurement)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def label_text(value: Any) -> str:
    """A label value from a results.json value (a GPU index or step number as its digits)."""
    return value if isinstance(value, str) else str(value)


def finished_seconds(finished: Any) -> Optional[int]:
    """results.json ``finished`` (UTC, ``YYYYMMDDTHHMMSSZ``) in Unix seconds, or None when it is not one."""
    if not isinstance(finished, str):
        return None
    for fmt in FINISHED_FORMATS:
        try:
            return calendar.timegm(time.strptime(finished, fmt))
        except ValueError:
            continue
    return None


def row_labels(check: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The labels that say which row a check entry is: stage, check, host, category and the subject's set scalar
    fields (an empty value is left out: Prometheus reads an empty label as no label)."""
    out = []
    for key in ("stage", "check", "host", "category"):
        if check.get(key) not in (None, ""):
            out.append((key, label_text(check[key])))
    subject = check.get("subject") if isinstance(check.get("subject"), Mapping) else {}
    for key in SUBJECT_LABELS:
        value = subject.get(key)
        if value is None or value == "" or isinstance(value, (bool, list, dict)):
            continue
        out.append((key, label_text(value)))
    return out


def unique_rows(checks: Sequence[Mapping[str, Any]]) -> List[List[Tuple[str, str]]]:
    """Each check entry's row labels, a ``seq`` label (2, 3, ...) added to a row whose labels an earlier row of the
    document has already (so each family has one sample per label set)."""
    seen: Dict[Tuple[Tuple[str, str], ...], int] = {}
    out = []
    for c in checks:
        labels = row_labels(c)
        key = tuple(labels)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            labels = labels + [("seq", str(seen[key]))]
        out.append(labels)
    return out


def check_samples(pod: List[Tuple[str, str]], checks: Sequence[Mapping[str, Any]]) -> Dict[str, List[Sample]]:
    """The per-row families: check_status, measurement, expected."""
    status: List[Sample] = []
    measured: List[Sample] = []
    expected: List[Sample] = []
    for c, labels in zip(checks, unique_rows(checks), strict=True):
        base = pod + labels
        status.append((tuple(base + [("status", label_text(c.get("status")))]), 1))
        unit = [("unit", label_text(c["unit"]))] if c.get("unit") else []
        if is_number(c.get("measured")):
            measured.append((tuple(base + unit), c["measured"]))
        if is_number(c.get("expected")):
            how = str(c.get("compare") or ">= ").strip()
            expected.append((tuple(base + unit + [("compare", how)]), c["expected"]))
    return {"check_status": status, "measurement": measured, "expected": expected}


def run_samples(pod: List[Tuple[str, str]], doc: Mapping[str, Any],
                checks: Sequence[Mapping[str, Any]]) -> Dict[str, List[Sample]]:
    """The run's families: run_info, run_timestamp_seconds (when ``finished`` reads), checks, findings."""
    info = [("ra_profile", label_text(doc.get("ra_profile") or "")),
            ("simulated", "true" if doc.get("simulated") else "false"),
            ("schema_version", label_text(doc.get("schema_version") or "")),
            ("model_digest", label_text(doc.get("model_digest") or ""))]
    out: Dict[str, List[Sample]] = {"run_info": [(tuple(pod + [(k, v) for k, v in info if v]), 1)]}
    stamp = finished_seconds(doc.get("finished"))
    out["run_timestamp_seconds"] = [(tuple(pod), stamp)] if stamp is not None else []
    counts = {s: 0 for s in STATUSES}
    for c in checks:
        counts[str(c.get("status"))] = counts.get(str(c.get("status")), 0) + 1
    out["checks"] = [(tuple(pod + [("status", s)]), n) for s, n in counts.items()]
    out["findings"] = [(tuple(pod), len(doc.get("findings") or []))]
    return out


def family_text(name: str, help_text: str, samples: Iterable[Sample]) -> List[str]:
    """One gauge family: HELP, TYPE, then its samples (``name{label="value",...} value``)."""
    if not METRIC_NAME.match(name):
        raise ValueError("metrics: %r is not a valid metric name" % name)
    lines = ["# HELP %s %s" % (name, escape_help(help_text)), "# TYPE %s gauge" % name]
    for labels, value in samples:
        for key, _ in labels:
            if not LABEL_NAME.match(key) or key.startswith("__"):
                raise ValueError("metrics: %r is not a valid label name" % key)
        text = ",".join('%s="%s"' % (k, escape_label_value(v)) for k, v in labels)
        lines.append("%s%s %s" % (name, "{%s}" % text if text else "", format_value(value)))
    return lines


def prometheus_text(doc: Mapping[str, Any]) -> str:
    """``metrics.prom`` of a results document: the families of the module docstring, in the Prometheus text format
    0.0.4, ending with a line feed."""
    checks = [c for c in (doc.get("checks") or []) if isinstance(c, Mapping)]
    pod = [("pod", label_text(doc.get("pod")))] if doc.get("pod") not in (None, "") else []
    families: Dict[str, List[Sample]] = {}
    families.update(run_samples(pod, doc, checks))
    families.update(check_samples(pod, checks))
    lines: List[str] = []
    for key, help_text in HELP.items():
        lines.extend(family_text(PREFIX + key, help_text, families.get(key) or []))
    return "\n".join(lines) + "\n"


# the brief's name for it (issue 43): the text is Prometheus' 0.0.4 format, see the module docstring
openmetrics = prometheus_text


def textfile_name(pod: Any) -> str:
    """``dgxpod_<pod>.prom``: one file per pod in a textfile collector's directory (the collector reads ``*.prom``),
    the pod's name with anything but letters, digits, ``-``, ``_`` and ``.`` made ``_``."""
    return "%s%s.prom" % (PREFIX, re.sub(r"[^A-Za-z0-9_.-]", "_", str(pod or "pod")))


def write_textfile(directory: str, pod: Any, text: str) -> str:
    """Write ``text`` as :func:`textfile_name` in ``directory`` atomically: a temporary file in the same directory
    (not ``*.prom``, so the collector never reads half of it), then a rename over the old file (node_exporter README,
    "Textfile Collector"). The path written; OSError when the directory cannot take it."""
    path = os.path.join(directory, textfile_name(pod))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % textfile_name(pod), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep a node_exporter running as another user out
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def pushgateway_url(base: str, pod: Any) -> str:
    """``<base>/metrics/job/dgxpod/pod@base64/<pod>``: the group of this pod's metrics on a Pushgateway (the pod's
    name base64url-encoded, so any name is one path segment: pushgateway README, "URL")."""
    value = base64.urlsafe_b64encode(str(pod or "").encode("utf-8")).decode("ascii") or "="
    return "%s/metrics/job/%s/pod@base64/%s" % (base.rstrip("/"), JOB, value)


def push(base: str, pod: Any, text: str, timeout: float = 10.0) -> Optional[str]:
    """PUT ``text`` to the Pushgateway at ``base`` (http:// or https://) as this pod's group, replacing what the
    pod's last run pushed. None when it took it (2xx), else what went wrong, in words (the caller warns: an
    unreachable Pushgateway never fails a validation run)."""
    if not re.match(r"^https?://", base or ""):
        return "pushgateway %r: not an http:// or https:// URL" % (base,)
    url = pushgateway_url(base, pod)
    request = urllib.request.Request(url, data=text.encode("utf-8"), method="PUT",
                                     headers={"Content-Type": CONTENT_TYPE})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the URL is checked above
            status = response.status
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace").strip()[:300]
        return "pushgateway %s answered HTTP %s%s" % (url, exc.code, ": %s" % body if body else "")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return "pushgateway %s: %s" % (url, reason)
    return None if 200 <= status < 300 else "pushgateway %s answered HTTP %s" % (url, status)
