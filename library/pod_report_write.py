#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: evaluate the measurements and write results.json, report.md, report.html, junit.xml and
metrics.prom; compare with the pod's baseline run; hand the metrics to a textfile collector and a Pushgateway."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_report_write
short_description: Evaluate a validation run and write its report files and metrics
description:
  - Takes what every validation stage recorded (I(stages) - identity, network, storage mounts, containers,
    iperf3, fio, GPU, drift, switches, NCCL, training, Slurm), the pod's I(context) and the RA profile's
    expectations with the pod's overrides, evaluates every stage by the one registry
    (module_utils/report/stages.py; the document - module_utils/report/results.py), and writes C(results.json)
    (docs/results.md), C(report.md), C(report.html) (self-contained, inline SVG plots), C(junit.xml) (one
    testcase per check) and C(metrics.prom) (Prometheus text format 0.0.4 - each check's status, each measurement
    and expectation with its labels; module_utils/report/metrics.py) into I(dest).
  - With I(baseline), every measurement is compared with the baseline run's (module_utils/report/baseline.py) - a
    C(regression_<check>) per measurement, stage C(baseline), failed when worse than the baseline's by more than its
    tolerance (C(expectations.regression)), and one C(baseline_model) check (a changed pod model is an C(error) and
    nothing is compared); they are checks of the run like the others (findings, report, junit.xml, metrics).
  - With I(textfile_dir), metrics.prom is also written there atomically as C(dgxpod_<pod>.prom) for node_exporter's
    textfile collector; with I(pushgateway), it is pushed (HTTP PUT, job C(dgxpod), group C(pod)). Either failing is a
    warning, never a failed module.
  - The failed and errored checks are grouped into root-cause findings (module_utils/report/findings.py), written as
    the C(findings) list of results.json, the first section of report.md and report.html, the failure messages
    of junit.xml, and returned as C(findings_lines).
  - On a simulated pod the first line of every file says so, and absolute RA checks are C(skipped).
  - Check mode evaluates but writes nothing.
version_added: "0.2.0"
options:
  dest:
    description: Run directory to write the files into (created if missing).
    type: path
    required: true
  results:
    description: The run - C(pod) (its name), C(ra_profile), C(simulated), C(finished) (the UTC time stamp).
    type: dict
    required: true
  context:
    description:
      - What the stages' evaluators need from the pod model - C(nodes) ({host - {storage_link_gbps, mounts,
        gpus}}), C(storage) ({nodes, link_gbps}), C(sizing) (the RA sizing's inputs - gpus, dgx, storage_nodes,
        workload, dataset_tb, caches_tb), as the C(pod_perf_context) filter derives them. Empty - no sizing.
    type: dict
    default: {}
  expectations:
    description: The RA profile's C(expectations) section.
    type: dict
    default: {}
  overrides:
    description: The pod's C(pod.validation.expectations) (same layout), merged over I(expectations).
    type: dict
    default: {}
  stages:
    description:
      - What the stages registered in C(module_utils/report/stages.py) recorded, by stage name, as their
        playbooks record it in the localhost fact C(pod_stages) (playbooks/tasks/record_stage.yml). Each is
        evaluated into checks there; a selected stage with nothing recorded is an C(error), one left out by the
        run's tags C(skipped).
    type: dict
    default: {}
  pod_index:
    description:
      - The pod's hosts and NICs for the root-cause findings - C(dgx), C(storage), C(switches) (host names) and
        C(nics) ({host - [{name, address, fabric, carries, switch, switch_port}]}), as the filter
        C(pod_findings_index) derives it from the inventory (module_utils/report/findings_rules.py). Empty - findings
        from the check results alone (no address or switch port is traced to its node).
    type: dict
    default: {}
  run_tags:
    description: This run's C(ansible_run_tags) (a stage left out by them is C(skipped), not C(error)).
    type: list
    elements: str
    default: [all]
  skip_tags:
    description: This run's C(ansible_skip_tags).
    type: list
    elements: str
    default: []
  model:
    description:
      - The pod model as the filter C(pod_model_vars) gives it ({host - {group_names, pod, nics, ...}}); its digest
        (C(model_digest), C(model_parts) in results.json; module_utils/report/results.py model_digests) tells a
        baseline of another model. Empty - no digest.
    type: dict
    default: {}
  baseline:
    description:
      - The pod's baseline run - a run directory (or its C(latest)/C(baseline) link) or its results.json. Empty - no
        comparison. One that cannot be read is one C(baseline) check in C(error).
    type: path
    default: ""
  textfile_dir:
    description: A node_exporter textfile collector directory to write C(dgxpod_<pod>.prom) into. Empty - none.
    type: path
    default: ""
  pushgateway:
    description: A Pushgateway's base URL (C(http://host:9091)) to push the metrics to. Empty - none.
    type: str
    default: ""
  pushgateway_timeout:
    description: Seconds to wait for the Pushgateway.
    type: float
    default: 10
notes:
  - Supports check mode - nothing is written or pushed; the evaluated summary is returned.
extends_documentation_fragment: dgxpod.toolkit.toolkit_module
"""

EXAMPLES = r"""
- name: Write the report files
  pod_report_write:
    dest: "{{ pod_report_run_dir }}"
    results: {pod: "{{ pod.name }}", ra_profile: "{{ pod.ra_profile }}", simulated: false, finished: 20261128T0000Z}
    context: "{{ pod | pod_perf_context(hostvars, groups) }}"
    stages: "{{ pod_stages | default({}) }}"
    expectations: "{{ pod | pod_expectations }}"  # the RA profile's with pod.validation.expectations on top
    pod_index: "{{ hostvars | pod_findings_index(groups, pod) }}"
    model: "{{ groups['all'] | pod_model_vars(hostvars) }}"
    baseline: results/pod-a/20261101T000000Z       # compare with the hand-over run
    textfile_dir: /var/lib/node_exporter/textfile_collector
    pushgateway: http://pushgateway.example.org:9091
  register: report
"""

RETURN = r"""
summary:
  description: Counts of pass, fail, skipped, error.
  returned: always
  type: dict
findings:
  description: The root-cause findings (results.json C(findings) - id, host, subject, cause, status, root, explains,
    summary), the one explaining most checks first.
  returned: always
  type: list
  elements: dict
findings_lines:
  description: One line per finding - "F1 [fail] summary (N checks)".
  returned: always
  type: list
  elements: str
problems:
  description: One line per failed or errored check - "[check host] cause or reason".
  returned: always
  type: list
  elements: str
files:
  description: Paths written (empty in check mode) - the five report files, and the textfile collector's file.
  returned: always
  type: list
  elements: str
baseline_lines:
  description: With I(baseline) - the baseline_model line, each regression, the count (as scripts/compare_runs.py).
  returned: always
  type: list
  elements: str
pushed:
  description: Whether the Pushgateway took the metrics.
  returned: always
  type: bool
simulated:
  description: Whether the pod is simulated.
  returned: always
  type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import baseline as baseline_cmp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import metrics
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import finding_line, with_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import problem_line, render_all
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results, model_digests


def baseline_checks(doc, path, expectations):
    """The baseline checks of ``doc`` against the run at ``path`` (one ``baseline`` error when it cannot be read)."""
    try:
        base = baseline_cmp.read_results(path)
    except ValueError as exc:
        return [baseline_cmp.unreadable(str(exc))]
    return baseline_cmp.compare(doc, base, (expectations or {}).get("regression"), path)


def write_files(dest, texts):
    """Each {name: text} into ``dest`` through a temporary file and a rename; the paths."""
    os.makedirs(dest, exist_ok=True)
    files = []
    for name, text in texts.items():
        path = os.path.join(dest, name)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        files.append(path)
    return files


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type="path", required=True),
            results=dict(type="dict", required=True),
            context=dict(type="dict", default={}),
            expectations=dict(type="dict", default={}),
            overrides=dict(type="dict", default={}),
            stages=dict(type="dict", default={}),
            run_tags=dict(type="list", elements="str", default=["all"]),
            skip_tags=dict(type="list", elements="str", default=[]),
            pod_index=dict(type="dict", default={}),
            model=dict(type="dict", default={}),
            baseline=dict(type="path", default=""),
            textfile_dir=dict(type="path", default=""),
            pushgateway=dict(type="str", default=""),
            pushgateway_timeout=dict(type="float", default=10),
        ),
        supports_check_mode=True,
    )
    p = module.params
    base = dict(p["results"])
    if p["model"]:
        base.update(model_digests(p["model"]))
    expectations = deep_merge(p["expectations"], p["overrides"])
    doc = build_results(base, p["context"], expectations, p["stages"], p["run_tags"], p["skip_tags"])
    baseline_lines = []
    if p["baseline"]:
        compared = baseline_checks(doc, p["baseline"], expectations)
        doc = baseline_cmp.with_baseline(doc, compared)
        baseline_lines = baseline_cmp.summary_lines(compared)
    doc = with_findings(doc, p["pod_index"])
    problems = [problem_line(c) for c in doc["checks"] if c.get("status") in ("fail", "error")]
    texts = render_all(doc)
    texts["metrics.prom"] = metrics.prometheus_text(doc)
    files, pushed = [], False
    if not module.check_mode:
        files = write_files(p["dest"], texts)
        if p["textfile_dir"]:
            try:
                files.append(metrics.write_textfile(p["textfile_dir"], doc.get("pod"), texts["metrics.prom"]))
            except OSError as exc:
                module.warn("metrics not written to the textfile collector directory %s: %s" % (
                    p["textfile_dir"], exc.strerror or exc))
        if p["pushgateway"]:
            trouble = metrics.push(p["pushgateway"], doc.get("pod"), texts["metrics.prom"], p["pushgateway_timeout"])
            if trouble:
                module.warn("metrics not pushed: %s" % trouble)
            pushed = trouble is None
    module.exit_json(changed=bool(files), summary=doc["summary"], problems=problems, files=files,
                     findings=doc["findings"], findings_lines=[finding_line(f) for f in doc["findings"]],
                     simulated=bool(doc.get("simulated")), baseline_lines=baseline_lines, pushed=pushed)


if __name__ == "__main__":
    main()
