# -*- coding: utf-8 -*-
"""Slurm: slurm.conf/gres.conf from the pod (conf), sinfo/scontrol parsers (parse), a job through Slurm (job), the
MPI launch inside an allocation (launch), the stage's evaluation (eval), draining the DGX a run found at
fault (drain) and the node-local health program's drain/resume rule (health)."""
