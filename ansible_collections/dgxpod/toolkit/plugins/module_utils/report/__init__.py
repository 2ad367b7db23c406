# -*- coding: utf-8 -*-
"""The one check result and the report: CheckResult (checks), the roles' per-host checks (host_checks), the stage
registry (stages), the root-cause findings (findings, findings_rules) and the Markdown/HTML report (render)."""
