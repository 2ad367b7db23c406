# -*- coding: utf-8 -*-
"""Slurm: slurm.conf/gres.conf from the pod (conf), sinfo/scontrol parsers (parse), a job through Slurm (job), the
MPI launch inside an allocation (launch), the stage's evaluation (eval) and draining the DGX a run found at
fault (drain)."""
