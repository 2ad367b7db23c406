# -*- coding: utf-8 -*-
"""The hardware catalogue, the bottom floor of module_utils (imports nothing of the toolkit's own): what a DGX of
each model has (dgx: GPUs and their model and memory, NVLink generation, links per GPU and per-link rate, NVSwitch,
the HCAs and their roles, PCIe generation/width per device, CPU, memory, NVMe) and the switch platforms (switches:
port names, port speed, maximum MTU), every entry with the NVIDIA/vendor documents it comes from; and the framing
rule between them (mtu: a host MTU plus 18 bytes of Ethernet framing must fit the switch port MTU, the IPoIB
MTU limits). Preflight, the derivations, the GPU, NCCL, perf and Slurm code read these tables and nothing else;
adding a DGX model or a switch model is one entry here plus its sources."""
