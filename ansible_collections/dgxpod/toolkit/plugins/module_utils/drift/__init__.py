# -*- coding: utf-8 -*-
"""Drift of what the deploy wrote: the pure comparison (compare) and the stage's evaluation (eval)."""
