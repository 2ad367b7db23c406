# -*- coding: utf-8 -*-
"""Preflight: the checks of the pod model before anything touches a node, the floor above the model
(docs/architecture.md, docs/preflight.md). model (validate: runs every check, re-exports what callers use), schema
(Field, the per-variable schemas, Finding and how findings are grouped), switch_checks (switches, VLANs, routed
ports, cabling), slurm_checks (pod.scheduler, pod.slurm) and sources (the file:line of a key; the inventory
files' own mistakes). Imports the ground floor and the model (pod), nothing above."""
