# -*- coding: utf-8 -*-
"""The GPU stage: nvidia-smi CSV (smi_parse), nvidia-smi -q -x / topo / NVLink (parse) and dcgmi (dcgm_parse)
parsers, and the stage's evaluation (eval)."""
