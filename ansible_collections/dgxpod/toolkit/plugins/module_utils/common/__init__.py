# -*- coding: utf-8 -*-
"""Helpers shared across concerns: a command with a time bound killed with its process group (bounded_run) and the
parsers' common error and line helpers (parse_util)."""
