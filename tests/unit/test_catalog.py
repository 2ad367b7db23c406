"""The hardware catalogue (module_utils/catalog/, issue 38): one table of DGX models and one of switch platforms,
every entry with its sources; a DGX model added there reaches preflight, the GPU stage, the NCCL and perf plans
and Slurm without another edit; the "host MTU + 18 bytes fits the port" rule is one function."""
from __future__ import annotations

import dataclasses
import os
import re

import pytest

from inventory_util import ROOT, copy_inventory, edit_yaml, hostvars, preflight

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog import dgx as catalog_dgx
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog import mtu as catalog_mtu
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import SWITCH_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import eval as gpu_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import topology
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.plan import perf_context
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.conf import dgx_hardware, nodes_from_pod

MODULE_UTILS = os.path.join("ansible_collections", "dgxpod", "toolkit", "plugins", "module_utils")
PRODUCT = (MODULE_UTILS, "library", "filter_plugins", "vars_plugins", "roles", "playbooks", "scripts")
CATALOG = os.path.join(ROOT, MODULE_UTILS, "catalog")


def _product_files():
    for d in PRODUCT:
        for base, _dirs, files in os.walk(os.path.join(ROOT, d)):
            if base.startswith(CATALOG):
                continue
            for f in files:
                if f.endswith((".py", ".yml", ".yaml", ".j2")):
                    yield os.path.join(base, f)


def test_dgx_models_are_named_in_the_catalogue_only():
    """No other product file keeps a DGX model table or list: no quoted model key outside module_utils/catalog/
    (a grep for one, e.g. 'dgxh100', finds the one table)."""
    keys = "|".join(re.escape(k) for k in catalog_dgx.DGX_MODELS)
    quoted = re.compile(r"""["'](%s)["']""" % keys)
    offenders = []
    for path in _product_files():
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if quoted.search(line) and "dgx_model\": \"dgx1\"" not in line:  # gpu/eval's record example
                    offenders.append("%s:%d: %s" % (os.path.relpath(path, ROOT), n, line.strip()))
    assert offenders == []


def test_every_entry_has_its_sources():
    for name, m in catalog_dgx.DGX_MODELS.items():
        assert {"gpus", "gpu", "hcas", "cpu_memory", "gpudirect_rdma", "nvlink_rate"} <= set(m.sources), name
        assert all(isinstance(s, str) and len(s) > 2 for s in m.sources.values()), name
        assert m.hcas_for("compute"), name
        assert m.gpus > 0 and m.nvlinks_per_gpu > 0 and m.gpu_family in m.gpu
    for name, s in SWITCH_MODELS.items():
        assert s.source and s.ports and s.top_speed > 0, name
        assert (s.max_mtu is None) == (s.platform == "mlnx-ib"), name


def test_the_framing_rule_is_one_function():
    assert catalog_mtu.ETHERNET_OVERHEAD == 18
    assert catalog_mtu.fits_port(9000, 9018) and not catalog_mtu.fits_port(9000, 9017)
    assert catalog_mtu.frame_bytes(9000) == 9018 and catalog_mtu.max_host_mtu(9216) == 9198
    assert catalog_mtu.headroom(9000, 9214) == 196
    # no other product file defines the 18 or computes "mtu + 18" / "mtu - 18" itself (prose saying "MTU + 18
    # bytes of headers" is fine)
    hits = []
    for path in _product_files():
        text = open(path, encoding="utf-8").read()
        if re.search(r"ETHERNET_OVERHEAD\s*=", text) or \
                re.search(r"mtu\w*[\]\)\"']*\s*[-+]\s*18\b(?! bytes)", text, re.I):
            hits.append(os.path.relpath(path, ROOT))
    assert hits == []


FAKE = "dgxfake"


@pytest.fixture
def fake_model(monkeypatch):
    """A DGX model that exists only in the catalogue: 4 'FAKE-X9' GPUs without NVSwitch, 2x48 cores, 768 GB."""
    base = catalog_dgx.DGX_MODELS["dgxh100"]
    entry = dataclasses.replace(base, title="DGX Fake", gpus=4, gpu="NVIDIA FAKE-X9-96GB", gpu_family="FAKE-X9",
                                nvswitches=0, nvlinks_per_gpu=4, cpu_cores_per_socket=48, real_memory_mb=768000,
                                sources=dict(base.sources, gpu="the fake model's own document"))
    monkeypatch.setitem(catalog_dgx.DGX_MODELS, FAKE, entry)
    return entry


def _fake_inventory(tmp_path):
    inv = copy_inventory("dgxa100-powerscale", str(tmp_path))
    edit_yaml(os.path.join(inv, "group_vars", "dgx.yml"), lambda d: d.update(dgx_model=FAKE))
    return inv


def test_a_new_dgx_model_is_one_catalogue_entry(tmp_path, fake_model):
    inv = _fake_inventory(tmp_path)
    # preflight: the model is a valid dgx_model (its choices are the catalogue's keys)
    findings, _summary = preflight(inv)
    errors = [f.format() for f in findings if f.severity == "error"]
    assert errors == []
    assert not any("dgx_model" in f.key() and "one of" in f.message for f in findings)

    hv = hostvars(inv)
    dgx = sorted(h for h, v in hv.items() if "dgx" in v["group_names"])
    pod = Pod.from_hostvars({h: hv[h] for h in dgx}, {"dgx": dgx}, hv[dgx[0]]["pod"])
    # NCCL plan: GPUs per node and GPUDirect RDMA from the entry
    topo = topology(pod, dgx)
    assert topo["model"] == FAKE and topo["gpus_per_node"] == 4 and topo["gdr_expected"] is True
    # perf plan (storage sizing per GPU)
    ctx = perf_context({h: {"dgx_model": FAKE, "nics": []} for h in dgx}, dgx, [], [])
    assert ctx["nodes"][dgx[0]]["gpus"] == 4
    # Slurm: Gres=gpu:4 and the node's sockets/cores/memory
    assert {n["gpus"] for n in nodes_from_pod(pod)} == {4}
    assert dgx_hardware(FAKE) == {"SocketsPerBoard": 2, "CoresPerSocket": 48, "ThreadsPerCore": 2,
                                  "RealMemory": 768000}
    from filter_plugins.slurm import slurm_gpu_count
    from filter_plugins.gpu import gpu_nvswitch
    assert slurm_gpu_count({"dgx_model": FAKE}) == 4
    # validate_gpu.yml's nvswitch option
    assert gpu_nvswitch(FAKE) is False and gpu_nvswitch("dgxa100") is True and gpu_nvswitch("nope") is False

    # GPU stage: count and model judged against the entry, citing its source
    gpus = [{"index": i, "bus_id": "00000000:%02X:00.0" % (i + 1), "name": "NVIDIA FAKE-X9-96GB"} for i in range(4)]
    node = {"status": "ok", "dgx_model": FAKE, "facts": {"smi": {"gpus": gpus}}}
    res = {c.check: c for c in gpu_eval.evaluate({"level": 1, "nodes": {dgx[0]: node}}, {}, {})
           if c.host == dgx[0] and c.check in ("gpu_count", "gpu_model")}
    assert res["gpu_count"].status == "pass" and res["gpu_count"].expected == 4
    assert res["gpu_model"].status == "pass" and res["gpu_model"].expected == "FAKE-X9"
    assert res["gpu_count"].source == "the fake model's own document"


def test_an_unknown_model_is_refused_by_preflight(tmp_path):
    """Without the entry the same inventory fails preflight on dgx_model (the catalogue is the list)."""
    inv = _fake_inventory(tmp_path)
    errors = [f for f in preflight(inv)[0] if f.severity == "error"]
    assert any(f.key() == "dgx_model" and FAKE in f.message for f in errors), [f.format() for f in errors]


# -- the DGX our users buy now (issue 45 items 1, 2) --------------------------------------------------------------

CURRENT = ("dgxh100", "dgxh200", "dgxb200")
FIXTURES_GPU = os.path.join(ROOT, "tests", "unit", "fixtures", "gpu")


@pytest.mark.parametrize("name", CURRENT)
def test_a_current_dgx_has_every_field_the_older_models_have(name):
    """DGX H100/H200/B200: every catalogue field set (GPU, NVLink, NVSwitch, HCAs and roles, PCIe, CPU, memory,
    NVMe, PSUs, NUMA), with the sources the other models carry plus the host inventory's."""
    m = catalog_dgx.DGX_MODELS[name]
    for f in dataclasses.fields(m):
        if f.name != "swap_guidance":  # NVIDIA documents no swap size for DGX OS (None for every model)
            assert getattr(m, f.name) not in (None, (), ""), (name, f.name)
    assert {"gpus", "gpu", "hcas", "cpu_memory", "gpudirect_rdma", "nvlink_rate", "host_inventory"} <= set(m.sources)
    compute, storage = m.hcas_for("compute"), m.hcas_for("storage")
    assert [(h.count, h.adapter, h.ports, h.gbps, h.pcie_gen, h.pcie_width) for h in compute] == \
        [(8, "ConnectX-7", 1, 400, 5, 16)]
    assert [(h.count, h.ports, h.gbps) for h in storage] == [(2, 2, 400)]
    assert m.gpus == 8 and m.nvlinks_per_gpu == 18 and m.gpu_pcie_gen == 5 and m.cpu_sockets == 2
    assert m.nvme_drives == (10,) and m.numa_nodes == 2 and m.psus == 6 and m.nvswitch


def test_the_current_models_differ_where_the_user_guides_say():
    h100, h200, b200 = (catalog_dgx.DGX_MODELS[k] for k in CURRENT)
    assert (h100.gpu_memory_gb, h200.gpu_memory_gb, b200.gpu_memory_gb) == ((80,), (141,), (180,))
    assert h100.nvlink_generation == h200.nvlink_generation == 4 and b200.nvlink_generation == 5
    assert h100.nvswitches == h200.nvswitches == 4 and b200.nvswitches == 2
    assert h100.nvlink_gbps == h200.nvlink_gbps == 26.562 and b200.nvlink_gbps == 53.125
    assert "8480C" in h100.cpu and "8480C" in h200.cpu and "8570" in b200.cpu
    assert b200.hcas_for("storage")[0].adapter == "BlueField-3" and h100.hcas_for("storage")[0].adapter == "ConnectX-7"
    # 18 links x the per-link rate is the published per-GPU NVLink bandwidth per direction (450 / 900 GB/s), within
    # the encoding overhead nvidia-smi's figure includes
    assert 450 <= 18 * h100.nvlink_gbps <= 450 * 1.07 and 900 <= 18 * b200.nvlink_gbps <= 900 * 1.07


def test_the_gpu_family_is_in_the_names_nvidia_smi_prints():
    """gpu_model matches the family inside each GPU's name: the H100 fixture's nvidia-smi name, and the H200/B200
    names as nvidia-smi -L prints them (NVIDIA/nccl-tests#272, the B200 fixture nvlink_s_b200_all_inactive.txt)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu.parse import parse_nvlink_status
    with open(os.path.join(FIXTURES_GPU, "nvlink_s_h100_550.txt"), encoding="utf-8") as fh:
        h100 = parse_nvlink_status(fh.read())
    with open(os.path.join(FIXTURES_GPU, "nvlink_s_b200_all_inactive.txt"), encoding="utf-8") as fh:
        b200 = parse_nvlink_status(fh.read())
    assert catalog_dgx.DGX_MODELS["dgxh100"].gpu_family in h100[0]["name"]
    assert catalog_dgx.DGX_MODELS["dgxb200"].gpu_family in b200[0]["name"]
    assert catalog_dgx.DGX_MODELS["dgxh200"].gpu_family in "NVIDIA H200"
    assert catalog_dgx.DGX_MODELS["dgxh100"].gpu_family not in "NVIDIA H200"  # an H200 pod is not an H100 pod


def _nvlink_node(model, speeds):
    gpus = [{"index": i, "bus_id": "00000000:%02X:00.0" % (0x18 + i), "name": model.gpu} for i in range(8)]
    nvlink = {i: {"name": model.gpu, "uuid": None, "links": dict(enumerate(speeds))} for i in range(8)}
    return {"status": "ok", "dgx_model": [k for k, v in catalog_dgx.DGX_MODELS.items() if v is model][0],
            "facts": {"smi": {"gpus": gpus}, "nvlink": nvlink}}


@pytest.mark.parametrize("name,good,slow", [("dgxh100", 26.562, 25.0), ("dgxb200", 53.125, 26.562)])
def test_gpu_nvlink_judges_the_models_links(name, good, slow):
    """18 links at the model's rate pass; one link trained down (below 95% of the rate) fails naming it. The B200
    rate is NVLink 5's as nvidia-smi nvlink -s prints it on GB200/B300 (53.125 GB/s): the lines are composed in that
    format for 8 GPUs."""
    m = catalog_dgx.DGX_MODELS[name]
    ok = {c.check: c for c in gpu_eval.evaluate({"level": 1, "nodes": {"n1": _nvlink_node(m, [good] * 18)}}, {}, {})
          if c.host == "n1"}
    assert ok["gpu_nvlink"].status == "pass" and ok["gpu_model"].status == "pass"
    bad = gpu_eval.evaluate({"level": 1, "nodes": {"n1": _nvlink_node(m, [good] * 17 + [slow])}}, {}, {})
    fails = [c for c in bad if c.check == "gpu_nvlink" and c.status == "fail"]
    assert fails and "link(s) 17 below" in fails[0].cause


def test_the_h100_reference_pod_reaches_nccl_slurm_and_the_node_stage():
    """inventories/dgxh100-pod: 8 NDR rails per DGX H100 in the NCCL plan (3,200 Gb/s, GPUDirect RDMA), Slurm's
    node line from the catalogue, and the multi-node expectation from the profile's fraction."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.nccl.plan import multi_node_expectation
    inv = os.path.join(ROOT, "inventories", "dgxh100-pod")
    hv = hostvars(inv)
    dgx = sorted(h for h, v in hv.items() if "dgx" in v["group_names"])
    pod = Pod.from_hostvars({h: hv[h] for h in dgx}, {"dgx": dgx}, hv[dgx[0]]["pod"])
    topo = topology(pod, dgx)
    assert topo["model"] == "dgxh100" and topo["gpus_per_node"] == 8 and topo["gdr_expected"]
    node = topo["nodes"]["dgxh100-1"]
    assert node["nics"] == 8 and node["nic_gbps"] == 3200.0
    assert node["hcas"] == sorted("mlx5_%d" % i for i in (0, 3, 4, 5, 6, 9, 10, 11))
    assert multi_node_expectation(topo, 0.8) == 320.0
    assert {n["gpus"] for n in nodes_from_pod(pod)} == {8}
    assert dgx_hardware("dgxh100") == {"SocketsPerBoard": 2, "CoresPerSocket": 56, "ThreadsPerCore": 2,
                                       "RealMemory": 2000000}
    assert dgx_hardware("dgxb200")["CoresPerSocket"] == 56


def test_the_h100_profile_names_catalogue_models_and_cites_every_number():
    import yaml
    with open(os.path.join(ROOT, "profiles", "dgxh100-superpod.yml"), encoding="utf-8") as fh:
        prof = yaml.safe_load(fh)["profile"]
    assert set(prof["dgx_models"]) <= set(catalog_dgx.DGX_MODELS)
    busbw = prof["expectations"]["nccl"]["single_node_busbw"]
    assert set(busbw["value"]) <= set(prof["dgx_models"]) and "nccl-tests#212" in busbw["source"]
    for cat, items in prof["expectations"].items():
        for key, item in items.items():
            if isinstance(item, dict) and "value" in item:
                assert len(str(item.get("source") or "")) > 20, (cat, key)


def test_the_current_switches_are_in_the_catalogue():
    qm, sn = SWITCH_MODELS["QM9700"], SWITCH_MODELS["SN4600C"]
    assert qm.platform == "mlnx-ib" and qm.top_speed == 400 and len(qm.ports) == 64 and qm.max_mtu is None
    assert qm.ports[:2] == ("1/1/1", "1/1/2") and qm.ports[-1] == "1/32/2"
    assert sn.platform == "cumulus" and sn.top_speed == 100 and "swp64" in sn.ports and sn.max_mtu == 9216
