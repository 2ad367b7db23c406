# -*- coding: utf-8 -*-
"""Documentation fragment: the options that name the long-lived MPI container of the ngc_container role and how
mpirun reaches it (ngc_mpi_verify, pod_nccl, pod_train; module_utils/mpi_job.py builds their command lines).

Used with the engine options: ``extends_documentation_fragment: [dgxpod.toolkit.container_engine,
dgxpod.toolkit.mpi_container]``. A module's own entry for an option wins over this one."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  container:
    description: Name of the MPI container (the same on every node).
    type: str
    required: true
  port:
    description: The containers' sshd port.
    type: int
    default: 2222
  tcp_if:
    description: Data NIC for Open MPI's TCP BTL and OOB (C(btl_tcp_if_include), C(oob_tcp_if_include)), from the
      pod model.
    type: str
"""
