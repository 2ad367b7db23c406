# -*- coding: utf-8 -*-
"""The DGX's NICs: RDMA/GID/ibdev2netdev parsers and sysfs reads (hw_parsers), mlxconfig and mlnx_qos parsers
(mlx_parse), the NIC state read back and compared with the plan (nic_state)."""
