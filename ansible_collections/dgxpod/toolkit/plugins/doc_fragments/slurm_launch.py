# -*- coding: utf-8 -*-
"""The Slurm options of the modules that launch an MPI job (library/pod_nccl, library/pod_train): one
description for both, as ``extends_documentation_fragment: dgxpod.toolkit.slurm_launch``
(module_utils/slurm/launch.py has the matching ARGUMENT_SPEC)."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  scheduler:
    description:
      - C(slurm) - run the job inside a Slurm allocation of exactly its nodes (I(targets) or I(hosts))
        (C(salloc -N <n> -w <nodes> -p <partition> --exclusive --immediate=<slurm_wait>),
        C(module_utils/slurm/job.py)); the launch
        command (engine exec + mpirun) then runs here, on the launcher, as without Slurm, so the output and the
        checks are the same. Their I(node) names must be the Slurm node names (the inventory names, as
        the slurm role writes slurm.conf). When Slurm does not allocate them within I(slurm_wait) the run is
        I(ok=false), its I(error) quotes Slurm and I(failed_hosts) names the nodes that are drained, down or
        busy (C(sinfo)); after a timeout the job is cancelled (C(scancel --name)).
      - C(none) - mpirun is started directly.
    type: str
    choices: [none, slurm]
    default: none
  slurm_partition:
    description: The partition to allocate in (C(pod.slurm.partition)).
    type: str
    default: dgx
  slurm_wait:
    description: Seconds to wait for Slurm to allocate the nodes (busy with another job, drained) before giving up.
    type: int
    default: 120
  slurm_job_name:
    description:
      - The job's name (C(-J)); C(scancel --name) ends it after a timeout. Default C(dgxpod-<stage>-<launcher>).
    type: str
  slurm_gpus_per_node:
    description: C(--gres=gpu:<n>) on the allocation; 0 - none (C(--exclusive) gives the job the whole node anyway).
    type: int
    default: 0
  slurm_conf:
    description: The slurm.conf the Slurm commands read (C(SLURM_CONF)); default Slurm's own (/etc/slurm/slurm.conf).
    type: path
"""
