#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: evaluate the measurements and write results.json, report.md, report.html and junit.xml."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_report_write
short_description: Evaluate a validation run and write its four report files
description:
  - Takes what every validation stage recorded (I(stages) - identity, network, storage mounts, containers,
    iperf3, fio, GPU, drift, switches, NCCL, training, Slurm), the pod's I(context) and the RA profile's
    expectations with the pod's overrides, evaluates every stage by the one registry
    (module_utils/report/stages.py; the document - module_utils/report/results.py), and writes C(results.json)
    (docs/results.md), C(report.md), C(report.html) (self-contained, inline SVG plots) and C(junit.xml) (one
    testcase per check) into I(dest).
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
notes:
  - Supports check mode - nothing is written; the evaluated summary is returned.
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
  description: Paths written (empty in check mode).
  returned: always
  type: list
  elements: str
simulated:
  description: Whether the pod is simulated.
  returned: always
  type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import finding_line, with_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import problem_line, render_all
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results


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
        ),
        supports_check_mode=True,
    )
    p = module.params
    doc = build_results(p["results"], p["context"], deep_merge(p["expectations"], p["overrides"]), p["stages"],
                        p["run_tags"], p["skip_tags"])
    doc = with_findings(doc, p["pod_index"])
    problems = [problem_line(c) for c in doc["checks"] if c.get("status") in ("fail", "error")]
    files = []
    if not module.check_mode:
        os.makedirs(p["dest"], exist_ok=True)
        for name, text in render_all(doc).items():
            path = os.path.join(p["dest"], name)
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
            files.append(path)
    module.exit_json(changed=bool(files), summary=doc["summary"], problems=problems, files=files,
                     findings=doc["findings"], findings_lines=[finding_line(f) for f in doc["findings"]],
                     simulated=bool(doc.get("simulated")))


if __name__ == "__main__":
    main()
