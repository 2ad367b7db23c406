# -*- coding: utf-8 -*-
"""The pod model: the typed Pod built once from the inventory (types), its schema and the preflight checks beside
it (schema, model, catalog, sources, switch_checks, slurm_checks), the derivations every role reads (derive: NIC
plan, /etc/hosts, NCCL env) and the results document with the iperf3 checks (eval)."""
