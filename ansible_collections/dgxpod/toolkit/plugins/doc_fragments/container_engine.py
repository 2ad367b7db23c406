# -*- coding: utf-8 -*-
"""Documentation fragment: the container engine options of the modules that drive podman or docker through their
command line (ngc_container_run, ngc_mpi_verify, pod_nccl, pod_train, pod_dataset).

Used as ``extends_documentation_fragment: [dgxpod.toolkit.container_engine]``; ansible-doc finds it through
ansible.cfg's ``collections_path`` (docs/architecture.md). A module's own entry for an option wins over this one."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
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
