#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Ansible module: evaluate the measurements and write results.json, report.md, report.html and junit.xml."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_report_write
short_description: Evaluate a validation run and write its four report files
description:
  - Takes the results the checks recorded (identity, network, ...; the role pod_report collects them), the
    performance measurements (iperf3 tests and fio scaling steps, if any) and the RA profile's expectations
    with the pod's overrides, evaluates every measurement (module_utils/pod/eval.py), and writes
    C(results.json) (schema version 2, docs/results.md), C(report.md), C(report.html) (self-contained, inline
    SVG plots) and C(junit.xml) (one testcase per check) into I(dest).
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
    description: The collected results document (pod, ra_profile, simulated, finished, checks).
    type: dict
    required: true
  perf:
    description:
      - Performance measurements - C(iperf.tests), C(fio.steps), C(nodes), C(storage), C(sizing), C(run)
        (see module_utils/pod/eval.py build_results). Empty when only identity/network checks ran.
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
      - Measurements of the stages registered in C(module_utils/report/stages.py) (NCCL, training, GPU, ...), by
        stage name, as their playbooks record them in the localhost fact C(pod_stages). Each is evaluated
        into checks there; a selected stage with nothing recorded is an C(error).
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
    results: "{{ pod_report_results }}"
    perf: "{{ pod_perf | default({}) }}"
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
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.eval import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.profile import deep_merge
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import problem_line, render_all


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type="path", required=True),
            results=dict(type="dict", required=True),
            perf=dict(type="dict", default={}),
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
    doc = build_results(p["results"], p["perf"], deep_merge(p["expectations"], p["overrides"]), p["stages"],
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
