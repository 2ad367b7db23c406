# -*- coding: utf-8 -*-
"""The MPI containers: the NGC container's run/verify logic (ngc_container) and an mpirun job launched in them
(mpi_job), which the NCCL and training stages use."""
