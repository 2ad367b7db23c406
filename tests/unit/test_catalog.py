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
