# -*- coding: utf-8 -*-
"""Filters that shape what a validation stage read into its record (module_utils/report/records.py), for
playbooks/tasks/record_stage.yml: one call on localhost per stage, the loop over the hosts in Python.

    {{ groups['dgx'] | pod_stage_hosts(hostvars, 'pod_identity_reading') }}
    {{ registered | pod_read_record('nodes') }}
"""
from __future__ import annotations

from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.prerequisites import job_blockers
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.records import host_readings, read_record


def pod_stage_hosts(hosts, hostvars, fact):
    """{host: its ``fact`` or None} for every host of ``hosts`` (None: it gave no reading - an error naming it)."""
    return host_readings(list(hosts or []), hostvars, str(fact))


def pod_job_blockers(pod_stages, needs, nodes):
    """The checks already failed that a multi-node job on ``nodes`` depends on (report/prerequisites.py):
    ``{{ pod_stages | default({}) | pod_job_blockers(['network', 'containers'], groups['dgx']) }}``."""
    return job_blockers(pod_stages or {}, list(needs or []), list(nodes or []))


class FilterModule:
    def filters(self):
        return {"pod_stage_hosts": pod_stage_hosts, "pod_read_record": read_record,
                "pod_job_blockers": pod_job_blockers}
