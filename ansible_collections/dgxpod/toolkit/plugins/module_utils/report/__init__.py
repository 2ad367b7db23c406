# -*- coding: utf-8 -*-
"""The report: the stage registry (stages), the results document (results), how a stage's playbook shapes its
record (records), a check row's view (checks), the root-cause findings (findings, findings_rules) and the
Markdown/HTML/JUnit report (render)."""
