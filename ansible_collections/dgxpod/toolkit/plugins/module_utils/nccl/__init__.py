# -*- coding: utf-8 -*-
"""The NCCL stage: the plan (plan), nccl-tests and NCCL log parser (parse), the evaluation (eval)."""
