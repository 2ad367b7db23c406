# -*- coding: utf-8 -*-
"""Helpers shared across concerns: the one way a module runs a tool - bounded, its process group killed, a fixed
locale (run) - a Python function with a time bound in a forked child (bounded_run), and the parsers' common error
and line helpers (parse_util), how the report writes a number and colours a status (report_text)."""
