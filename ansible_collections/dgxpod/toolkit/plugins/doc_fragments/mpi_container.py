# -*- coding: utf-8 -*-
"""Documentation fragments of the container modules.

- ``dgxpod.toolkit.mpi_container``: the modules that launch into the ngc_container role's long-lived MPI container
  (ngc_mpi_verify, pod_nccl, pod_train): the engine, the container and how mpirun reaches it. Their argument spec
  is module_utils/containers/mpi_job.py ``mpi_container_argument_spec()``; keep the two alike.
- ``dgxpod.toolkit.mpi_container.engine``: only the engine options (ngc_container_run, pod_dataset).

ansible-doc finds them through ansible.cfg's ``collections_path`` (docs/architecture.md). A module's own entry for
an option wins over the fragment's."""
from __future__ import annotations


class ModuleDocFragment:
    ENGINE = r"""
options:
  engine:
    description: Container engine CLI.
    type: str
    choices: [podman, docker]
    default: podman
  engine_args:
    description: Global options put before the engine's sub-command (e.g. podman's C(--events-backend file)).
    type: list
    elements: str
    default: []
"""

    DOCUMENTATION = ENGINE + r"""
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
