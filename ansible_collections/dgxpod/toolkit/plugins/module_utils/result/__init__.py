# -*- coding: utf-8 -*-
"""The ground floor of every check (docs/architecture.md): the one result type (check) - CheckResult with its
structured Subject and declared kind, the comparisons and the simulated policy. Imports nothing of ours."""
