# -*- coding: utf-8 -*-
"""The training stage: the generated dataset (dataset), the job's output parser (parse) and the evaluation (eval)."""
