# -*- coding: utf-8 -*-
"""The DGX models: one :class:`DgxModel` per ``dgx_model`` value of the pod model, with the documents each fact
comes from. Preflight (the ``dgx_model`` choices, the Slurm GPU counts), the NCCL plan (GPUs per node, GPUDirect
RDMA), the perf plan, the GPU stage (GPU model, NVLink, PCIe, NVSwitch), slurm.conf (sockets, cores, memory) and
validate_gpu.yml (through the ``gpu_nvswitch`` filter) read this table only. A new model is one entry in
``DGX_MODELS`` with its ``sources``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple


@dataclass(frozen=True)
class Hca:
    """A kind of ConnectX adapter in a DGX: how many, ports each, Gb/s per port, what the DGX uses it for
    (``compute``: the GPU fabric NCCL runs on, one per GPU pair or GPU; ``storage``: storage and in-band
    management - the words of a fabric's ``carries``), and its PCIe link."""
    count: int
    adapter: str
    ports: int
    gbps: int
    role: str
    pcie_gen: Optional[int]  # None: the documents do not say
    pcie_width: Optional[int]


@dataclass(frozen=True)
class DgxModel:
    """What a DGX of one model has. ``gpu_family`` is what ``nvidia-smi`` prints in every GPU's name (the GPU
    stage's ``gpu_model`` check); ``nvlink_gbps`` the per-link rate ``nvidia-smi nvlink -s`` reports (GB/s, one
    direction); ``real_memory_mb`` the memory Slurm may hand out (a little below the installed memory: the kernel
    keeps some). ``sources``: what -> the documents it comes from; ``gpu`` is the source the GPU stage cites."""
    title: str
    gpus: int
    gpu: str
    gpu_family: str
    gpu_memory_gb: Tuple[int, ...]
    gpu_pcie_gen: int
    gpu_pcie_width: int
    nvlink_generation: int
    nvlinks_per_gpu: int
    nvlink_gbps: float
    nvswitches: int
    gpudirect_rdma: bool
    hcas: Tuple[Hca, ...]
    cpu: str
    cpu_sockets: int
    cpu_cores_per_socket: int
    cpu_threads_per_core: int
    memory_gb: Tuple[int, ...]
    real_memory_mb: int
    nvme: Optional[str]
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def nvswitch(self) -> bool:
        """GPUs joined through NVSwitches (then nvidia-fabricmanager must run)."""
        return self.nvswitches > 0

    def hcas_for(self, role: str) -> Tuple[Hca, ...]:
        return tuple(h for h in self.hcas if h.role == role)


SRC_DGX1 = ("NVIDIA DGX-1 User Guide and 'NVIDIA DGX-1 with Tesla V100 System Architecture' white paper "
            "(WP-08437-002): 8x Tesla V100 SXM2, 6 NVLink 2.0 links per GPU (hybrid cube-mesh), PCIe Gen3 x16")
SRC_DGX2 = "NVIDIA DGX-2 User Guide: 16x V100 SXM3, 12 NVSwitches, 6 NVLinks per GPU"
SRC_DGXA100 = ("NVIDIA DGX A100 User Guide and 'NVIDIA A100 Tensor Core GPU Architecture' white paper: 8x A100 "
               "SXM4, 12 third-generation NVLink links per GPU through 6 NVSwitches, PCIe Gen4 x16; NVSwitch "
               "systems need nvidia-fabricmanager running")
SRC_DGXH100 = "NVIDIA DGX H100 User Guide: 8x H100 SXM5, 18 NVLink4 links per GPU"
# GPUDirect RDMA between the GPUs and the ConnectX HCAs: every DGX generation has it
SRC_GDR = ("004 shows 'via NET/IB/N/GDRDMA' on DGX-1; 001 and NVIDIA's DGX docs for A100/H100 (GPUDirect RDMA "
           "over the ConnectX HCAs)")
SRC_NVLINK_RATE = ("nvidia-smi nvlink -s (docs/hardware-facts.md 'GPU health tools'): 25.781 GB/s per NVLink 2.0 "
                   "link (the V100 rate, fixture nvlink_s_turing.txt), 26.562 GB/s per NVLink 4 link (H100, "
                   "nvlink_s_h100_550.txt); A100: 25 GB/s per NVLink 3 link and direction (600 GB/s over 12 links, "
                   "'NVIDIA A100 Tensor Core GPU Architecture' white paper)")

DGX_MODELS: Dict[str, DgxModel] = {
    "dgx1": DgxModel(
        title="DGX-1 (Tesla V100)", gpus=8, gpu="Tesla V100-SXM2-32GB", gpu_family="V100-SXM2", gpu_memory_gb=(32,),
        gpu_pcie_gen=3, gpu_pcie_width=16, nvlink_generation=2, nvlinks_per_gpu=6, nvlink_gbps=25.781, nvswitches=0,
        gpudirect_rdma=True,
        hcas=(Hca(4, "ConnectX-4", 1, 100, "compute", 3, 16),),
        cpu="2x Intel Xeon E5-2698 v4 (20 cores)", cpu_sockets=2, cpu_cores_per_socket=20, cpu_threads_per_core=2,
        memory_gb=(512,), real_memory_mb=500000, nvme=None,
        sources={"gpus": "004 bill of materials", "gpu": SRC_DGX1, "nvlink_rate": SRC_NVLINK_RATE,
                 "gpudirect_rdma": SRC_GDR,
                 "hcas": "NVIDIA DGX-1 User Guide, hardware specifications: 4x EDR InfiniBand / 100 GbE (ConnectX-4) "
                         "for the cluster fabric, dual 10 GbE on the board; 004 runs the four as RoCE data NICs",
                 "cpu_memory": "NVIDIA DGX-1 User Guide / data sheet: 2x Intel Xeon E5-2698 v4 2.2 GHz 20-core, "
                               "512 GB DDR4; local storage 4x 1.92 TB SSD (RAID 0), no NVMe"}),
    "dgx2": DgxModel(
        title="DGX-2", gpus=16, gpu="Tesla V100-SXM3-32GB", gpu_family="V100-SXM3", gpu_memory_gb=(32,),
        gpu_pcie_gen=3, gpu_pcie_width=16, nvlink_generation=2, nvlinks_per_gpu=6, nvlink_gbps=25.781, nvswitches=12,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-5", 1, 100, "compute", 3, 16),
              Hca(1, "dual-port 10-100 GbE", 2, 100, "storage", None, None)),
        cpu="2x Intel Xeon Platinum 8168 (24 cores)", cpu_sockets=2, cpu_cores_per_socket=24, cpu_threads_per_core=2,
        memory_gb=(1536,), real_memory_mb=1500000, nvme="OS 2x 960 GB NVMe; data 8x 3.84 TB NVMe (30 TB)",
        sources={"gpus": "000", "gpu": SRC_DGX2, "nvlink_rate": SRC_NVLINK_RATE, "gpudirect_rdma": SRC_GDR,
                 "hcas": "NVIDIA DGX-2 User Guide, hardware specifications: 8x 100 Gb/s InfiniBand / 100 GbE "
                         "(ConnectX-5) for the cluster fabric; dual 10/25/40/50/100 GbE for storage and management "
                         "(its adapter's PCIe link is not given there)",
                 "cpu_memory": "NVIDIA DGX-2 User Guide / data sheet: 2x Intel Xeon Platinum 8168 2.7 GHz 24-core, "
                               "1.5 TB; 2x 960 GB NVMe (OS), 30 TB NVMe (8x 3.84 TB)"}),
    "dgxa100": DgxModel(
        title="DGX A100", gpus=8, gpu="A100-SXM4", gpu_family="A100-SXM4", gpu_memory_gb=(40, 80),
        gpu_pcie_gen=4, gpu_pcie_width=16, nvlink_generation=3, nvlinks_per_gpu=12, nvlink_gbps=25.0, nvswitches=6,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-6", 1, 200, "compute", 4, 16), Hca(1, "ConnectX-6", 2, 200, "storage", 4, 16)),
        cpu="2x AMD EPYC 7742 (64 cores)", cpu_sockets=2, cpu_cores_per_socket=64, cpu_threads_per_core=2,
        memory_gb=(1024, 2048), real_memory_mb=1000000,
        nvme="OS 2x 1.92 TB M.2 NVMe; data 4x 3.84 TB U.2 NVMe (15 TB; 30 TB on the 640 GB system)",
        sources={"gpus": "001 §2.4", "gpu": SRC_DGXA100, "nvlink_rate": SRC_NVLINK_RATE, "gpudirect_rdma": SRC_GDR,
                 "hcas": "NVIDIA DGX A100 User Guide, 'Network Ports' and hardware specifications: 8x single-port "
                         "ConnectX-6 VPI 200 Gb/s HDR InfiniBand (compute, the GPU fabric), 1 dual-port ConnectX-6 "
                         "VPI 200 Gb/s (storage and in-band management; 2 on the 640 GB system)",
                 "cpu_memory": "NVIDIA DGX A100 User Guide / data sheet: 2x AMD EPYC 7742 64-core, 1 TB (2 TB on the "
                               "640 GB system); 2x 1.92 TB M.2 NVMe (OS), 15 TB U.2 NVMe"}),
    "dgxh100": DgxModel(
        title="DGX H100", gpus=8, gpu="H100-SXM5", gpu_family="H100", gpu_memory_gb=(80,),
        gpu_pcie_gen=5, gpu_pcie_width=16, nvlink_generation=4, nvlinks_per_gpu=18, nvlink_gbps=26.562, nvswitches=4,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-7", 1, 400, "compute", 5, 16), Hca(2, "ConnectX-7", 2, 400, "storage", 5, 16)),
        cpu="2x Intel Xeon Platinum 8480C (56 cores)", cpu_sockets=2, cpu_cores_per_socket=56, cpu_threads_per_core=2,
        memory_gb=(2048,), real_memory_mb=2000000, nvme="OS 2x 1.92 TB M.2 NVMe; data 8x 3.84 TB U.2 NVMe (30 TB)",
        sources={"gpus": "public NVIDIA DGX H100 docs", "gpu": SRC_DGXH100, "nvlink_rate": SRC_NVLINK_RATE,
                 "gpudirect_rdma": SRC_GDR,
                 "hcas": "NVIDIA DGX H100 User Guide, hardware overview: 8x single-port ConnectX-7 400 Gb/s "
                         "(compute, behind 4 OSFP cages), 2x dual-port ConnectX-7 (QSFP112: storage and in-band "
                         "management)",
                 "cpu_memory": "NVIDIA DGX H100 User Guide / data sheet: 2x Intel Xeon Platinum 8480C 56-core, 2 TB; "
                               "2x 1.92 TB M.2 NVMe (OS), 30 TB U.2 NVMe (8x 3.84 TB)"}),
}


def dgx_model(name: Any) -> Optional[DgxModel]:
    """The catalogue entry of a ``dgx_model`` value, or None (unknown, or not a string)."""
    return DGX_MODELS.get(name) if isinstance(name, str) else None


def dgx_gpus(name: Any) -> Optional[int]:
    """GPUs per DGX of a model, or None when the model is unknown."""
    m = dgx_model(name)
    return m.gpus if m is not None else None
