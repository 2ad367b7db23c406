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
    # the host inventory check (module_utils/node/inventory_eval.py); each with its source in ``sources``
    # ("host_inventory"). A tuple holds every configuration NVIDIA sells (DGX A100 320 GB / 640 GB).
    numa_nodes: Optional[int] = None          # NUMA nodes Linux shows (BIOS default; DGX A100: NPS4)
    dimms: Tuple[int, ...] = ()               # DIMMs per configuration, in the order of ``memory_gb``
    nvme_os_drives: Optional[int] = None      # the OS (boot) NVMe drives (RAID 1)
    nvme_os_tb: Optional[float] = None
    nvme_data_drives: Tuple[int, ...] = ()    # the data-cache NVMe drives (the /raid RAID 0), per configuration
    nvme_data_tb: Optional[float] = None      # per drive, TB (10^12 bytes)
    psus: Optional[int] = None                # power supplies
    swap_guidance: Optional[str] = None       # NVIDIA's word on swap, None where NVIDIA documents none

    @property
    def nvswitch(self) -> bool:
        """GPUs joined through NVSwitches (then nvidia-fabricmanager must run)."""
        return self.nvswitches > 0

    def hcas_for(self, role: str) -> Tuple[Hca, ...]:
        return tuple(h for h in self.hcas if h.role == role)

    @property
    def nvme_drives(self) -> Tuple[int, ...]:
        """NVMe drives in all (OS + data) per configuration; () when the model has no NVMe (DGX-1: SATA SSDs)."""
        if self.nvme_os_drives is None and not self.nvme_data_drives:
            return ()
        return tuple((self.nvme_os_drives or 0) + d for d in (self.nvme_data_drives or (0,)))


SRC_DGX1 = ("NVIDIA DGX-1 User Guide and 'NVIDIA DGX-1 with Tesla V100 System Architecture' white paper "
            "(WP-08437-002): 8x Tesla V100 SXM2, 6 NVLink 2.0 links per GPU (hybrid cube-mesh), PCIe Gen3 x16")
SRC_DGX2 = "NVIDIA DGX-2 User Guide: 16x V100 SXM3, 12 NVSwitches, 6 NVLinks per GPU"
SRC_DGXA100 = ("NVIDIA DGX A100 User Guide and 'NVIDIA A100 Tensor Core GPU Architecture' white paper: 8x A100 "
               "SXM4, 12 third-generation NVLink links per GPU through 6 NVSwitches, PCIe Gen4 x16; NVSwitch "
               "systems need nvidia-fabricmanager running")
SRC_DGXH100 = ("NVIDIA DGX H100/H200 User Guide, 'Introduction to the NVIDIA DGX H100/H200 System' (hardware "
               "overview), and "
               "the DGX BasePOD RA 'Core Components' "
               "(docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-"
               "foundation-enterprise-ai/latest/core-components.html): 8 Hopper GPUs, 640 GB GPU memory (8x 80 GB), "
               "four "
               "NVSwitch chips, PCIe 5.0; 18 fourth-generation NVLinks per GPU (900 GB/s, DGX SuperPOD H100 RA 'Key "
               "Components'); nvidia-smi names the GPU 'NVIDIA H100 80GB HBM3' (nccl-tests logs, e.g. "
               "NVIDIA/nccl#1264)")
SRC_DGXH200 = ("NVIDIA DGX H100/H200 User Guide (one guide for both) and the DGX BasePOD RA 'Core Components': 8 H200 "
               "GPUs, "
               "1,128 GB GPU memory (8x 141 GB), four NVSwitch chips, the same CPU tray, network cards and drives as "
               "the "
               "DGX H100; NVLink 4, 18 links per GPU (MLCommons inference v4.1 NVIDIA H200-SXM-141GBx8 system "
               "description: '18x 4th Gen NVLink, 900GB/s', 'PCIe Gen5 x16'); nvidia-smi names the GPU 'NVIDIA H200' "
               "(NVIDIA/nccl-tests#272, 8x H200 all_reduce_perf log)")
SRC_DGXB200 = ("NVIDIA DGX B200 User Guide, 'Introduction to NVIDIA DGX B200 Systems', DGX B200 Component Descriptions "
               "(docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html): 8x B200, 1,440 GB total GPU "
               "memory "
               "(8x 180 GB), 2x 5th generation NVLink switches (14.4 TB/s aggregate = 8x 1.8 TB/s: 18 NVLink 5 links "
               "per "
               "GPU at 50 GB/s per direction; MLCommons inference v6.0 Nebius B200 system description: '18x 5th Gen "
               "NVLink', 'PCIe Gen5 x16'); nvidia-smi names the GPU 'NVIDIA B200' (nvidia-smi -L outputs in public "
               "issue threads)")
# GPUDirect RDMA between the GPUs and the ConnectX HCAs: every DGX generation has it
SRC_GDR = ("004 shows 'via NET/IB/N/GDRDMA' on DGX-1; 001 and NVIDIA's DGX docs for A100/H100/H200/B200 (GPUDirect "
           "RDMA over the ConnectX HCAs)")
SRC_NVLINK_RATE = ("nvidia-smi nvlink -s (docs/hardware-facts.md 'GPU health tools'): 25.781 GB/s per NVLink 2.0 "
                   "link (the V100 rate, fixture nvlink_s_turing.txt), 26.562 GB/s per NVLink 4 link (H100, "
                   "nvlink_s_h100_550.txt; H200 has the same NVLink 4 ports); A100: 25 GB/s per NVLink 3 link and "
                   "direction (600 GB/s over 12 links, 'NVIDIA A100 Tensor Core GPU Architecture' white paper); "
                   "53.125 GB/s per NVLink 5 link as nvidia-smi nvlink -s prints it on GB200 "
                   "(NVIDIA/k8s-test-infra#371) "
                   "and B300 (a public DGX B300 bring-up log) - no B200 output of nvlink -s was found in our sources; "
                   "B200 has the same NVLink 5 ports (18 x 50 GB/s nominal per direction)")

# The host inventory (issue 39): NUMA nodes, DIMMs, NVMe drives, power supplies. NVIDIA documents no swap size for
# DGX OS, so ``swap_guidance`` stays None and the swap check only reports (module_utils/node/inventory_eval.py).
SRC_INV_DGX1 = ("NVIDIA DGX-1 User Guide, hardware specifications: 2 sockets (2 NUMA nodes), 512 GB DDR4 as 16x 32 GB "
                "LRDIMM, storage 4x 1.92 TB SATA SSD in RAID 0 (no NVMe), 4x 1600 W power supplies (3+1)")
SRC_INV_DGX2 = ("NVIDIA DGX-2 User Guide, hardware overview: 2 sockets (2 NUMA nodes), 1.5 TB as 24x 64 GB DIMMs, "
                "OS 2x 960 GB NVMe (RAID 1), data 8x 3.84 TB NVMe (30 TB, RAID 0 on /raid), 6 power supplies")
SRC_INV_DGXA100 = ("NVIDIA DGX A100 User Guide, hardware overview (component descriptions): 1 TB as 16x 64 GB "
                   "DIMMs (2 TB, 32 DIMMs, on the 640 GB system), OS 2x 1.92 TB M.2 NVMe (RAID 1), data cache "
                   "4x 3.84 TB U.2 NVMe (15 TB; 8x, 30 TB, on the 640 GB system) in RAID 0 on /raid, 6x 3 kW "
                   "power supplies; 8 NUMA nodes: the EPYC 7742s run NPS4 (the GPUs' NUMA affinity 0-7 in "
                   "nvidia-smi topo -m, fixture gpu/topo_dgxa100_nic_legend.txt)")
SRC_INV_DGXH100 = ("NVIDIA DGX H100/H200 User Guide, hardware overview (component descriptions), and the DGX BasePOD "
                   "RA "
                   "'Core Components' (DGX H200 and H100): 2x Xeon Platinum 8480C, 112 cores total (2 NUMA nodes), 2 "
                   "TB "
                   "DDR5 as 32x 64 GB DIMMs, OS 2x 1.92 TB M.2 NVMe (RAID 1), internal storage 8x 3.84 TB U.2 NVMe "
                   "(RAID 0 on /raid), 6x 3.3 kW power supplies (4+2 redundant, 10.2 kW max)")
SRC_INV_DGXH200 = ("NVIDIA DGX H100/H200 User Guide (one hardware overview for both systems) and the DGX BasePOD RA "
                   "'Core "
                   "Components': the DGX H200 has the DGX H100's CPU tray - 2x Xeon Platinum 8480C (2 NUMA nodes), 2 "
                   "TB "
                   "as 32 DIMMs, OS 2x 1.92 TB M.2 NVMe, 8x 3.84 TB U.2 NVMe, 6x 3.3 kW power supplies (4+2)")
SRC_INV_DGXB200 = ("NVIDIA DGX B200 User Guide, DGX B200 Component Descriptions and Power Specifications: 2x Intel "
                   "Xeon "
                   "Platinum 8570, 56 cores each; 2 TB using 32 DIMMs (upgradable to 4 TB: that configuration's DIMM "
                   "count is not given there, so the catalogue lists 2 TB only - a 4 TB DGX B200 sets "
                   "expectations.node.memory_gb); OS 2x 1.92 TB NVMe M.2 (RAID 1); data cache 8x 3.84 TB NVMe U.2 SED "
                   "(RAID 0); 6x 3.3 kW power supplies (5+1 redundancy, 14.3 kW max). NUMA: 2 nodes, as the DGX B200 "
                   "nvidia-smi topo -m in vllm-project/vllm#16336 shows (GPU NUMA affinity 0 and 1, CPU affinity "
                   "0-55,112-167 / 56-111,168-223: 56 cores x 2 threads per socket)")
# The BasePOD RA on the two dual-port cards of the current DGX: "Each pair of dual-port BlueField-3 HCAs (NIC mode)
# provide parallel pathways to the storage and management fabrics" (B200); DGX H100/H200: 2x dual-port QSFP112
# ConnectX-7 VPI. One port of each card typically goes to storage, the other to in-band management (the RA).
SRC_HCAS_H = ("NVIDIA DGX H100/H200 User Guide, hardware overview, and DGX BasePOD RA 'Core Components': 'Four OSFP "
              "ports "
              "serving eight single-port NVIDIA ConnectX-7 VPI' (the compute fabric, NDR 400 Gb/s InfiniBand or 400 "
              "GbE), '2x dual-port QSFP112 NVIDIA ConnectX-7 VPI, up to 400 Gb/s InfiniBand/Ethernet' (storage and "
              "in-band management); ConnectX-7: 'PCIe Gen 5.0 through x16 edge connector' (NVIDIA ConnectX-7 user "
              "manual, supported interfaces)")
SRC_HCAS_B200 = ("NVIDIA DGX B200 User Guide, component descriptions: 'Network (Cluster) card: 4 x OSFP ports for 8 x "
                 "NVIDIA ConnectX-7 Single Port Cards', InfiniBand (default) up to 400 Gb/s; 'Network (storage and "
                 "in-band management) card: 2 x NVIDIA BlueField-3 DPU Dual Port Cards', up to 400GbE / 400 Gb/s; "
                 "DGX BasePOD RA: the BlueField-3 run in NIC mode; both cards PCIe Gen5 x16 (ConnectX-7 user manual; "
                 "the BlueField-3 B3220 is a PCIe Gen5 x16 card)")

DGX_MODELS: Dict[str, DgxModel] = {
    "dgx1": DgxModel(
        title="DGX-1 (Tesla V100)", gpus=8, gpu="Tesla V100-SXM2-32GB", gpu_family="V100-SXM2", gpu_memory_gb=(32,),
        gpu_pcie_gen=3, gpu_pcie_width=16, nvlink_generation=2, nvlinks_per_gpu=6, nvlink_gbps=25.781, nvswitches=0,
        gpudirect_rdma=True,
        hcas=(Hca(4, "ConnectX-4", 1, 100, "compute", 3, 16),),
        cpu="2x Intel Xeon E5-2698 v4 (20 cores)", cpu_sockets=2, cpu_cores_per_socket=20, cpu_threads_per_core=2,
        memory_gb=(512,), real_memory_mb=500000, nvme=None,
        numa_nodes=2, dimms=(16,), nvme_os_drives=None, nvme_data_drives=(), psus=4,
        sources={"host_inventory": SRC_INV_DGX1,
                 "gpus": "004 bill of materials", "gpu": SRC_DGX1, "nvlink_rate": SRC_NVLINK_RATE,
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
        numa_nodes=2, dimms=(24,), nvme_os_drives=2, nvme_os_tb=0.96, nvme_data_drives=(8,), nvme_data_tb=3.84, psus=6,
        sources={"host_inventory": SRC_INV_DGX2,
                 "gpus": "000", "gpu": SRC_DGX2, "nvlink_rate": SRC_NVLINK_RATE, "gpudirect_rdma": SRC_GDR,
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
        numa_nodes=8, dimms=(16, 32), nvme_os_drives=2, nvme_os_tb=1.92, nvme_data_drives=(4, 8), nvme_data_tb=3.84,
        psus=6,
        nvme="OS 2x 1.92 TB M.2 NVMe; data 4x 3.84 TB U.2 NVMe (15 TB; 30 TB on the 640 GB system)",
        sources={"host_inventory": SRC_INV_DGXA100,
                 "gpus": "001 §2.4", "gpu": SRC_DGXA100, "nvlink_rate": SRC_NVLINK_RATE, "gpudirect_rdma": SRC_GDR,
                 "hcas": "NVIDIA DGX A100 User Guide, 'Network Ports' and hardware specifications: 8x single-port "
                         "ConnectX-6 VPI 200 Gb/s HDR InfiniBand (compute, the GPU fabric), 1 dual-port ConnectX-6 "
                         "VPI 200 Gb/s (storage and in-band management; 2 on the 640 GB system)",
                 "cpu_memory": "NVIDIA DGX A100 User Guide / data sheet: 2x AMD EPYC 7742 64-core, 1 TB (2 TB on the "
                               "640 GB system); 2x 1.92 TB M.2 NVMe (OS), 15 TB U.2 NVMe"}),
    "dgxh100": DgxModel(
        title="DGX H100", gpus=8, gpu="NVIDIA H100 80GB HBM3", gpu_family="H100", gpu_memory_gb=(80,),
        gpu_pcie_gen=5, gpu_pcie_width=16, nvlink_generation=4, nvlinks_per_gpu=18, nvlink_gbps=26.562, nvswitches=4,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-7", 1, 400, "compute", 5, 16), Hca(2, "ConnectX-7", 2, 400, "storage", 5, 16)),
        cpu="2x Intel Xeon Platinum 8480C (56 cores)", cpu_sockets=2, cpu_cores_per_socket=56, cpu_threads_per_core=2,
        memory_gb=(2048,), real_memory_mb=2000000, nvme="OS 2x 1.92 TB M.2 NVMe; data 8x 3.84 TB U.2 NVMe (30 TB)",
        numa_nodes=2, dimms=(32,), nvme_os_drives=2, nvme_os_tb=1.92, nvme_data_drives=(8,), nvme_data_tb=3.84, psus=6,
        sources={"host_inventory": SRC_INV_DGXH100,
                 "gpus": SRC_DGXH100, "gpu": SRC_DGXH100, "nvlink_rate": SRC_NVLINK_RATE,
                 "gpudirect_rdma": SRC_GDR, "hcas": SRC_HCAS_H,
                 "cpu_memory": "NVIDIA DGX H100/H200 User Guide / DGX BasePOD RA 'Core Components': dual Intel Xeon "
                               "Platinum 8480C, 112 cores total, 2.00 GHz base, PCIe 5.0; 2 TB DDR5; two 1.92 TB M.2 "
                               "NVMe (DGX OS), eight 3.84 TB U.2 NVMe (storage/cache)"}),
    "dgxh200": DgxModel(
        title="DGX H200", gpus=8, gpu="NVIDIA H200", gpu_family="H200", gpu_memory_gb=(141,),
        gpu_pcie_gen=5, gpu_pcie_width=16, nvlink_generation=4, nvlinks_per_gpu=18, nvlink_gbps=26.562, nvswitches=4,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-7", 1, 400, "compute", 5, 16), Hca(2, "ConnectX-7", 2, 400, "storage", 5, 16)),
        cpu="2x Intel Xeon Platinum 8480C (56 cores)", cpu_sockets=2, cpu_cores_per_socket=56, cpu_threads_per_core=2,
        memory_gb=(2048,), real_memory_mb=2000000, nvme="OS 2x 1.92 TB M.2 NVMe; data 8x 3.84 TB U.2 NVMe (30 TB)",
        numa_nodes=2, dimms=(32,), nvme_os_drives=2, nvme_os_tb=1.92, nvme_data_drives=(8,), nvme_data_tb=3.84, psus=6,
        sources={"host_inventory": SRC_INV_DGXH200,
                 "gpus": SRC_DGXH200, "gpu": SRC_DGXH200, "nvlink_rate": SRC_NVLINK_RATE,
                 "gpudirect_rdma": SRC_GDR, "hcas": SRC_HCAS_H,
                 "cpu_memory": "NVIDIA DGX H100/H200 User Guide / DGX BasePOD RA 'Core Components' (DGX H200 and "
                               "H100): dual Intel Xeon Platinum 8480C, 112 cores total; 2 TB DDR5 (32 DIMMs); two "
                               "1.92 TB M.2 NVMe (DGX OS), eight 3.84 TB U.2 NVMe"}),
    "dgxb200": DgxModel(
        title="DGX B200", gpus=8, gpu="NVIDIA B200", gpu_family="B200", gpu_memory_gb=(180,),
        gpu_pcie_gen=5, gpu_pcie_width=16, nvlink_generation=5, nvlinks_per_gpu=18, nvlink_gbps=53.125, nvswitches=2,
        gpudirect_rdma=True,
        hcas=(Hca(8, "ConnectX-7", 1, 400, "compute", 5, 16), Hca(2, "BlueField-3", 2, 400, "storage", 5, 16)),
        cpu="2x Intel Xeon Platinum 8570 (56 cores)", cpu_sockets=2, cpu_cores_per_socket=56, cpu_threads_per_core=2,
        memory_gb=(2048,), real_memory_mb=2000000, nvme="OS 2x 1.92 TB M.2 NVMe; data 8x 3.84 TB U.2 NVMe SED (30 TB)",
        numa_nodes=2, dimms=(32,), nvme_os_drives=2, nvme_os_tb=1.92, nvme_data_drives=(8,), nvme_data_tb=3.84, psus=6,
        sources={"host_inventory": SRC_INV_DGXB200,
                 "gpus": SRC_DGXB200, "gpu": SRC_DGXB200, "nvlink_rate": SRC_NVLINK_RATE,
                 "gpudirect_rdma": SRC_GDR, "hcas": SRC_HCAS_B200,
                 "cpu_memory": "NVIDIA DGX B200 User Guide, component descriptions: 2 x Intel Xeon 8570 PCIe Gen5 "
                               "CPUs with 56 cores each, 2.1/4 GHz; 2 TB using 32 DIMMs (upgradable to 4 TB); 2 x "
                               "1.92 TB NVMe M.2 (OS, RAID 1), 8 x 3.84 TB NVMe U.2 SED (data cache, RAID 0)"}),
}


def dgx_model(name: Any) -> Optional[DgxModel]:
    """The catalogue entry of a ``dgx_model`` value, or None (unknown, or not a string)."""
    return DGX_MODELS.get(name) if isinstance(name, str) else None


def dgx_gpus(name: Any) -> Optional[int]:
    """GPUs per DGX of a model, or None when the model is unknown."""
    m = dgx_model(name)
    return m.gpus if m is not None else None
