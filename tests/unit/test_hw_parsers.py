"""module_utils/network/hw_parsers.py against real captured outputs (tests/unit/fixtures/hw, each with a .source
note naming where it comes from) and against the simulator's stand-ins (sim/standins/podsim_hw.py)."""
from __future__ import annotations

import importlib
import os

import pytest

from inventory_util import ROOT
from refusal import assert_refused

hp = importlib.import_module("ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hw_parsers")
hw = importlib.import_module("podsim_hw")

FIX = os.path.join(ROOT, "tests", "unit", "fixtures", "hw")
UP = {n: (True, 9000) for n in ("enp5s0", "enp12s0", "enp132s0", "enp139s0")}


def fixture(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


@pytest.fixture
def state():
    return hw.default_state("sim-dgx1", 1)


def test_every_fixture_names_its_source():
    txts = sorted(f for f in os.listdir(FIX) if f.endswith(".txt"))
    assert len(txts) >= 30
    for f in txts:
        src = os.path.join(FIX, f + ".source")
        assert os.path.exists(src), "%s has no .source note" % f
        text = open(src).read()
        assert text.startswith("Source:") and len(text) > 60, f


def test_at_least_two_independent_sources_per_tool():
    txts = [f for f in os.listdir(FIX) if f.endswith(".txt")]
    for tool in ("ibdev2netdev", "ibv_devinfo", "nvidia_smi_query", "nvidia_smi_L", "mlxconfig", "mlnx_qos",
                 "cma_roce_mode", "show_gids"):
        origins = {f.split("__")[1] for f in txts if f.startswith(tool)}
        assert len(origins) >= 2, (tool, origins)


# --------------------------------------------------------------------------- ibdev2netdev

def test_ibdev2netdev_004_dgx1():
    rows = hp.parse_ibdev2netdev(fixture("ibdev2netdev__004_dgx1.txt"))
    assert [(r["rdma_device"], r["netdev"], r["state"]) for r in rows] == [
        ("mlx5_0", "enp5s0", "Up"), ("mlx5_1", "enp12s0", "Up"), ("mlx5_2", "enp132s0", "Up"),
        ("mlx5_3", "enp139s0", "Up")]
    assert all(r["port"] == 1 for r in rows)


@pytest.mark.parametrize("name,count,first,ups", [
    ("ibdev2netdev__sriov_network_operator_635.txt", 16, ("mlx5_19", "ibp75s0v7", "Down"), 3),
    ("ibdev2netdev__imbue_cluster_health_4.txt", 12, ("mlx5_0", "ibp26s0", "Down"), 2),
    ("ibdev2netdev__sriov_cni_vf_setup.txt", 2, ("mlx5_0", "enp2s0f0", "Up"), 2),
    ("ibdev2netdev__magnate3_centos12.txt", 8, ("mlx5_0", "ens4f0", "Down"), 4),
])
def test_ibdev2netdev_real_outputs(name, count, first, ups):
    rows = hp.parse_ibdev2netdev(fixture(name))
    assert len(rows) == count
    assert (rows[0]["rdma_device"], rows[0]["netdev"], rows[0]["state"]) == first
    assert sum(r["state"] == "Up" for r in rows) == ups


def test_ibdev2netdev_verbose_real():
    rows = hp.parse_ibdev2netdev(fixture("ibdev2netdev_v__sriov_cni_vf_setup.txt"))
    assert len(rows) == 6
    pf = rows[0]
    assert pf == {"rdma_device": "mlx5_0", "port": 1, "netdev": "enp2s0f0", "state": "Up", "pci": "0000:02:00.0",
                  "device_id": "MT4115", "part": "MT1523X04353", "description": "CX456A - ConnectX-4 QSFP",
                  "fw": "12.23.1020", "port_state": "ACTIVE"}
    vf = rows[2]  # "(MT4116 - NA)  fw ... (DOWN  )": empty description, padded state
    assert vf["description"] is None and vf["part"] == "NA" and vf["port_state"] == "DOWN"
    assert vf["state"] == "Down" and vf["pci"] == "0000:02:00.5"


def test_ibdev2netdev_other_real_forms():
    # description with parentheses and commas (ConnectX-6), an extra "(o2ib)" after the state, the
    # mlx4 form without a PCI address, and the old "<===>" style without state (mlnx-tools source)
    rows = hp.parse_ibdev2netdev(
        "0000:01:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and "
        "200GbE, single-port QSFP56 fw 20.28.1002 port 1 (ACTIVE) ==> p5p1 (Up)\n"
        "0000:b8:00.1 mlx5_13 (MT4123 - MCX653106A-ECAT) ConnectX-6 VPI adapter card fw 20.26.4012 port 1 "
        "(ACTIVE) ==> ib4 (Up) (o2ib)\n"
        "mlx4_0 (mt26428 - MT1037X01146) KESTREL        QDR             fw 2.9.1000 port 1 (ACTIVE) ==> ib0 (Up)\n"
        "mlx4_0 port 2 <===> eth2\n")
    assert rows[0]["description"] == "ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE, single-port QSFP56"
    assert rows[0]["fw"] == "20.28.1002" and rows[0]["netdev"] == "p5p1"
    assert rows[1]["netdev"] == "ib4" and rows[1]["state"] == "Up"
    assert rows[2]["pci"] is None and rows[2]["device_id"] == "mt26428" and rows[2]["netdev"] == "ib0"
    assert rows[3] == {"rdma_device": "mlx4_0", "port": 2, "netdev": "eth2", "state": None}


def test_ibdev2netdev_standin(state):
    down = dict(UP, enp12s0=(False, 9000))
    rows = hp.parse_ibdev2netdev(hw.render_ibdev2netdev(state, down))
    assert {r["netdev"]: r["state"] for r in rows} == {"enp5s0": "Up", "enp12s0": "Down", "enp132s0": "Up",
                                                       "enp139s0": "Up"}
    v = hp.parse_ibdev2netdev(hw.render_ibdev2netdev(state, down, verbose=True))
    assert v[0]["pci"] == "0000:05:00.0" and v[0]["fw"] == "12.18.1000" and v[1]["port_state"] == "DOWN"


@pytest.mark.parametrize("text,lineno", [
    ("mlx5_0 port 1 ==> enp5s0 (Up)\nroot@DGX1-1:~# ibdev2netdev\n", 2),
    ("mlx5_0 port one ==> enp5s0 (Up)\n", 1),
    ("garbage\n", 1),
])
def test_ibdev2netdev_malformed(text, lineno):
    with pytest.raises(ValueError) as e:
        hp.parse_ibdev2netdev(text)
    assert isinstance(e.value, hp.ParseError)
    assert str(e.value).startswith("ibdev2netdev output line %d:" % lineno)
    assert e.value.line_no == lineno


# --------------------------------------------------------------------------- ibv_devinfo

def test_ibv_devinfo_004_dgx1():
    (dev,) = hp.parse_ibv_devinfo(fixture("ibv_devinfo__004_dgx1.txt"))
    assert dev["hca_id"] == "mlx5_3" and dev["fw_ver"] == "12.18.1000" and dev["vendor_part_id"] == 4115
    assert dev["board_id"] == "MT_2180110032" and dev["phys_port_cnt"] == 1
    port = dev["ports"][1]
    assert (port["state"], port["state_code"]) == ("PORT_ACTIVE", 4)
    assert (port["active_mtu"], port["active_mtu_code"], port["max_mtu"]) == (4096, 5, 4096)
    assert port["link_layer"] == "Ethernet"


def test_ibv_devinfo_real_small_mtu_and_old_format():
    (vm,) = hp.parse_ibv_devinfo(fixture("ibv_devinfo__azhpc_images_44.txt"))
    assert vm["hca_id"] == "rdmaP23800p0s2" and vm["vendor_part_id"] == 4118
    assert vm["ports"][1]["active_mtu"] == 1024 and vm["ports"][1]["link_layer"] == "Ethernet"
    (rxe,) = hp.parse_ibv_devinfo(fixture("ibv_devinfo__rxe_dev_46.txt"))
    assert rxe["hca_id"] == "rxe0" and "link_layer" not in rxe["ports"][1] and "board_id" not in rxe


# what ibv_devinfo prints for every port (devinfo.c): an excerpt that stops before it is a cut-off output
PORT_MIN = ("\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
            "\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n\t\t\tport_lmc:\t\t0x00\n")


def test_ibv_devinfo_verbose_header_with_flag_lists():
    # the stored excerpt ends before the port sections: as it is, it is a cut-off output
    with pytest.raises(hp.ParseError, match="mlx5_1 has no 'port:' section"):
        hp.parse_ibv_devinfo(fixture("ibv_devinfo_v__ompi_6184.txt"))
    (dev,) = hp.parse_ibv_devinfo(fixture("ibv_devinfo_v__ompi_6184.txt") + PORT_MIN)
    assert dev["hca_id"] == "mlx5_1" and dev["vendor_part_id"] == 4119
    assert dev["device_cap_flags"] == "0xe5721c36" and "XRC" in dev["device_cap_flags_list"]
    assert "EXT_SEND NOP" in dev["device_cap_exp_flags_list"]
    assert dev["atomic_cap"] == "ATOMIC_HCA (1)" and list(dev["ports"]) == [1]


@pytest.mark.parametrize("name,tbl", [("ibv_devinfo_v__k8s_rdma_shared_164_port.txt", 256),
                                      ("ibv_devinfo_v__ucx_9724_port.txt", 255)])
def test_ibv_devinfo_verbose_port_with_gids(name, tbl):
    # the stored excerpts start inside the device: the device line is prepended (see the .source notes)
    (dev,) = hp.parse_ibv_devinfo("hca_id:\tmlx5_0\n" + fixture(name))
    port = dev["ports"][1]
    assert port["gid_tbl_len"] == tbl and port["phys_state"] == "LINK_UP" and port["phys_state_code"] == 5
    assert port["active_speed"] == "25.0 Gbps" and port["active_width"] == "1X"
    (g,) = port["gids"]
    assert g["index"] == 0 and g["type"] == "RoCE v1" and g["gid"].startswith("fe80:") and g["ipv4"] is None


def test_ibv_devinfo_gid_without_type_older_rdma_core():
    # Mellanox/k8s-rdma-shared-dev-plugin#164 shows "GID[ 14]: 0000:...:ffff:c0a8:0606" without ", RoCE v2"
    text = "hca_id: mlx5_0\n" + PORT_MIN + "\t\tGID[ 14]:\t\t0000:0000:0000:0000:0000:ffff:c0a8:0606\n"
    (g,) = hp.parse_ibv_devinfo(text)[0]["ports"][1]["gids"]
    assert g == {"index": 14, "gid": "0000:0000:0000:0000:0000:ffff:c0a8:0606", "type": None, "ipv4": "192.168.6.6"}


@pytest.mark.parametrize("name,prefix", [("ibv_devinfo_v__rxe_wsl_notes_rdma_core_compressed.txt", ""),
                                         ("ibv_devinfo_v__rdma_core_50mlnx1_notes_port.txt", "hca_id:\tmlx5_0\n")])
def test_ibv_devinfo_rdma_core_29_compressed_roce_v2_gids(name, prefix):
    # rdma-core >= 29 prints RoCE v2 GIDs with inet_ntop (::ffff:a.b.c.d); the IPv4 RoCE v2 GID must survive
    devs = hp.parse_ibv_devinfo(prefix + fixture(name))
    gids = devs[0]["ports"][1]["gids"]
    v2 = [g for g in gids if g["type"] == "RoCE v2" and g["ipv4"]]
    assert len(v2) == 1 and v2[0]["gid"].startswith("0000:0000:0000:0000:0000:ffff:")
    assert hp.select_roce_v2_ipv4_gid(gids, v2[0]["ipv4"]) == v2[0]["index"]
    if prefix:  # the ConnectX port: v1 full form and v2 compressed form of one address are the same GID
        assert [g["index"] for g in gids if g["ipv4"] == "27.105.179.3"] == [2, 3]
        assert gids[2]["gid"] == gids[3]["gid"] == "0000:0000:0000:0000:0000:ffff:1b69:b303"
        assert gids[1]["gid"] == "fe80:0000:0000:0000:0ac0:ebff:fef0:28b2"
    else:
        assert [d["hca_id"] for d in devs] == ["rxe_0", "rxe_1"]
        assert devs[1]["ports"][1]["gids"][1]["ipv4"] == "192.168.96.111"
        assert devs[0]["ports"][1]["active_mtu"] == 1024


def test_ibv_devinfo_bad_gid_is_refused():
    with pytest.raises(hp.ParseError, match="line 9: expected a GID"):
        hp.parse_ibv_devinfo("hca_id: mlx5_0\n" + PORT_MIN + "\t\t\tGID[  1]:\t\t::ffff:300.1.1.1, RoCE v2\n")


def test_ibv_devinfo_standin(state):
    out = hp.parse_ibv_devinfo(hw.render_ibv_devinfo(state, dict(UP, enp5s0=(False, 1500))))
    assert [d["hca_id"] for d in out] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert out[0]["ports"][1]["state"] == "PORT_DOWN" and out[0]["ports"][1]["active_mtu"] == 1024
    assert out[1]["ports"][1]["active_mtu"] == 4096 and out[1]["ports"][1]["link_layer"] == "Ethernet"
    v = hp.parse_ibv_devinfo(hw.render_ibv_devinfo(state, UP, "mlx5_0", verbose=True,
                                                   addresses={"enp5s0": ["198.18.5.11"]}))
    gids = v[0]["ports"][1]["gids"]
    assert [(g["index"], g["type"], g["ipv4"]) for g in gids] == [
        (0, "RoCE v1", None), (1, "RoCE v2", None), (2, "RoCE v1", "198.18.5.11"), (3, "RoCE v2", "198.18.5.11")]
    assert hp.parse_ibv_devinfo("No IB devices found\n") == []


@pytest.mark.parametrize("text,lineno,words", [
    ("\ttransport:\tInfiniBand (0)\n", 1, "before the first 'hca_id:'"),
    ("hca_id: mlx5_0\n\tport:\tone\n", 2, "expected a number"),
    ("hca_id: mlx5_0\n\tport:\t1\n\t\tactive_mtu:\t\tlots\n", 3, "expected a number"),
    ("hca_id: mlx5_0\n\tGID[  0]:\tfe80::1\n", 2, "outside a 'port:'"),
    ("Segmentation fault\n", 1, "expected 'key: value'"),
])
def test_ibv_devinfo_malformed(text, lineno, words):
    with pytest.raises(hp.ParseError) as e:
        hp.parse_ibv_devinfo(text)
    assert "ibv_devinfo output line %d" % lineno in str(e.value) and words in str(e.value)


# --------------------------------------------------------------------------- nvidia-smi

def test_nvidia_smi_csv_with_header_real():
    gpus = hp.parse_nvidia_smi_query(fixture("nvidia_smi_query_csv__nuxhash_10.txt"))
    assert len(gpus) == 5
    assert gpus[4] == {"name": "GeForce GTX 1060 6GB", "pci.bus": "0x0A", "index": 4,
                       "uuid": "GPU-ff3318a7-f0dd-dc57-1fb8-cc95ba35c56e"}


def test_nvidia_smi_noheader_nounits_real():
    fields = ("power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,"
              "gpu_uuid,power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,"
              "clocks.mem,utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate").split(",")
    (g,) = hp.parse_nvidia_smi_query(fixture("nvidia_smi_query_noheader_nounits__gpu_utils_83.txt"), fields)
    assert g["memory.total"] == 7979 and g["power.draw"] == 176.98 and g["temperature.memory"] is None
    assert g["driver_version"] == "440.64" and g["vbios_version"] == "90.04.23.00.5F" and g["pstate"] == "P2"
    (h,) = hp.parse_nvidia_smi_query(fixture("nvidia_smi_query_noheader__akash_provider_91.txt"),
                                     ["name", "pci.device_id"])
    assert h == {"name": "NVIDIA H100 NVL", "pci.device_id": "0x232110DE"}


def test_nvidia_smi_list_real():
    a100 = hp.parse_nvidia_smi_query(fixture("nvidia_smi_L__telegraf_5812.txt"))  # -L recognised
    assert [g["index"] for g in a100] == [0, 1, 2, 3] and a100[0]["name"] == "NVIDIA A100-SXM4-80GB"
    assert len(a100[0]["mig"]) == 4 and a100[0]["mig"][3]["uuid"] == "MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b"
    p40 = hp.parse_nvidia_smi_list(fixture("nvidia_smi_L__nvidia_docker_1060.txt"))
    assert [g["name"] for g in p40] == ["Tesla P40"] * 4 and p40[1]["uuid"].startswith("GPU-504d0b86")


def test_nvidia_smi_standin(state):
    fields = ["index", "name", "uuid", "memory.total", "pci.bus_id", "driver_version", "power.draw"]
    with_header = hp.parse_nvidia_smi_query(hw.render_query_gpu(state, fields))
    assert len(with_header) == 8 and with_header[0]["memory.total"] == 32480 and with_header[0]["power.draw"] == 43.0
    assert with_header[7]["pci.bus_id"] == "00000000:8A:00.0" and with_header[0]["driver_version"] == "418.67"
    bare = hp.parse_nvidia_smi_query(hw.render_query_gpu(state, fields, noheader=True, nounits=True), fields)
    assert bare == with_header
    listed = hp.parse_nvidia_smi_query(hw.render_nvidia_smi_list(state))
    assert [g["uuid"] for g in listed] == [g["uuid"] for g in with_header]


@pytest.mark.parametrize("name", ["nvidia_smi_nvml_mismatch__tinygrad_ogkm_47.txt",
                                  "nvidia_smi_nvml_mismatch__intel_llvm_17614.txt",
                                  "nvidia_smi_nvml_mismatch__shine_cluster_30.txt"])
@pytest.mark.parametrize("fields", [["index"], ["name"], ["driver_version"], ["index", "name"], None])
def test_nvidia_smi_nvml_mismatch_is_an_error_not_gpu_rows(name, fields):
    # a one-field noheader query used to read each message line as one GPU row
    with pytest.raises(hp.ParseError, match="line 1: nvidia-smi reported an error instead of GPU data"):
        hp.parse_nvidia_smi_query(fixture(name), fields)
    with pytest.raises(hp.ParseError, match="reported an error"):
        hp.parse_nvidia_smi_list(fixture(name))


@pytest.mark.parametrize("text,fields,words", [
    ("0\nsomething went wrong\n", ["index"], "line 2: expected a number for index"),
    ("GPU-1234\nnot a uuid\n", ["uuid"], "line 2: uuid 'not a uuid' does not look like one"),
    ("", ["index"], "empty output"),
    ("index, name\n", None, "a header line but no GPU row"),
])
def test_nvidia_smi_values_are_checked(text, fields, words):
    with pytest.raises(hp.ParseError, match=words):
        hp.parse_nvidia_smi_query(text, fields)


@pytest.mark.parametrize("text,fields,words", [
    ("0, Tesla V100\n1\n", ["index", "name"], "line 2: row has 1 values, expected 2"),
    ("0, Tesla V100\n", None, "no header line"),
    ("index, name\n0, A, extra\n", None, "row has 3 values"),
    ("index, name\n0, A\n", ["index", "name", "uuid"], "header has 2 columns"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", None, "reported an error"),
    ("GPU 0: Tesla V100 (UUID: GPU-1234)\nGPU one\n", None, "nvidia-smi -L output line 2"),
])
def test_nvidia_smi_malformed(text, fields, words):
    assert_refused(hp.parse_nvidia_smi_query, text, "nvidia-smi", words, fields)


# --------------------------------------------------------------------------- mlxconfig

def test_mlxconfig_query_real_without_column_header():
    (dev,) = hp.parse_mlxconfig_query(fixture("mlxconfig_query__terrencemiao_blog.txt"))
    assert dev["device"] == "/dev/mst/mt4115_pciconf0" and dev["device_type"] == "ConnectX4"
    assert dev["params"]["LINK_TYPE_P1"]["next_boot"] == "ETH(2)" and dev["params"]["NUM_OF_VFS"]["next_boot"] == "8"
    assert hp.mlxconfig_link_types(dev) == {1: {"default": None, "default_value": None, "current": None,
                                                "current_value": None, "next_boot": "ETH", "next_boot_value": 2}}


@pytest.mark.parametrize("name,before,after", [
    ("mlxconfig_set__jiegec_blog_cx4.txt", "IB", "ETH(2)"),
    ("mlxconfig_set__jiegec_blog_nvidia_doc_cx3pro.txt", "ETH", "IB(1)"),
])
def test_mlxconfig_set_table_real(name, before, after):
    (dev,) = hp.parse_mlxconfig_query(fixture(name))
    assert dev["columns"] == ["Next Boot", "New"]
    types = hp.mlxconfig_link_types(dev)
    assert set(types) == {1, 2} and types[1]["next_boot"] == before and types[2]["next_boot"] == before
    assert dev["params"]["LINK_TYPE_P2"]["new"] == after


def test_mlxconfig_three_columns_real():
    head = ("Device #1:\n----------\n\n"
            "Configurations:                              Default         Current         Next Boot\n")
    (dev,) = hp.parse_mlxconfig_query(head + fixture("mlxconfig_query_e__sriov_network_operator_358.txt"))
    assert dev["columns"] == ["Default", "Current", "Next Boot"]
    assert dev["params"]["NUM_OF_VL_P2"] == {"default": "_4_VLs(3)", "current": "_4_VLs(3)",
                                             "next_boot": "_4_VLs(3)", "modified": False}
    assert hp.split_mlx_value("_4_VLs(3)") == ("_4_VLs", 3) and hp.split_mlx_value("8") == (None, 8)


def test_mlxconfig_current_differs_from_next_boot():
    # the state after `mlxconfig set LINK_TYPE_P1=1` before the reboot, in the -e layout (MFT docs example)
    text = ("Device #1:\n----------\n\nDevice type:    ConnectX4\nDevice:         0000:05:00.0\n\n"
            "Configurations:                              Default         Current         Next Boot\n"
            "*        LINK_TYPE_P1                        VPI(3)          ETH(2)          IB(1)\n"
            "The '*' shows parameters with next value different from default/current value.\n")
    (dev,) = hp.parse_mlxconfig_query(text)
    t = hp.mlxconfig_link_types(dev)[1]
    assert (t["default"], t["current"], t["next_boot"]) == ("VPI", "ETH", "IB")
    assert dev["params"]["LINK_TYPE_P1"]["modified"] is True


def test_mlxconfig_standin(state):
    (dev,) = hp.parse_mlxconfig_query(hw.render_mlxconfig_query(state, "mlx5_0"))
    assert dev["device"] == "mlx5_0" and dev["columns"] == ["Next Boot"]
    assert hp.mlxconfig_link_types(dev)[1]["next_boot"] == "ETH"
    (s,) = hp.parse_mlxconfig_query(hw.render_mlxconfig_set(state, "mlx5_0", {"LINK_TYPE_P1": 1}, True))
    assert s["params"]["LINK_TYPE_P1"] == {"next_boot": "ETH(2)", "new": "IB(1)", "modified": False}


@pytest.mark.parametrize("text,words", [
    ("-E- Failed to open device: mlx5_9. No such file or directory\n", "line 1: mlxconfig reported an error"),
    ("Device #1:\nConfigurations:   Next Boot\n   LINK_TYPE_P1   ETH(2)   IB(1)\n",
     "line 3: 2 value(s) for 1 column(s)"),
    ("Device #1:\nConfigurations:   Next Boot   Later\n", "line 2: unknown column"),
    ("Device #1:\nDevice type: ConnectX4\n", "no 'Configurations:' table"),
    ("hello world\n", "line 1: expected 'Device #1:'"),
])
def test_mlxconfig_malformed(text, words):
    assert_refused(hp.parse_mlxconfig_query, text, "mlxconfig", words)


# --------------------------------------------------------------------------- mlnx_qos

def test_mlnx_qos_lossless_real():
    q = hp.parse_mlnx_qos(fixture("mlnx_qos__att_netarbiter.txt"))
    assert q["trust"] == "dscp" and q["pfc_priorities"] == [3] and q["pfc_enabled"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert q["dscp2prio"][3] == [31, 30, 29, 28, 27, 26, 25, 24] and q["cable_len"] == 7
    assert [t["priorities"] for t in q["tcs"]][:2] == [[1], [0]] and q["tcs"][3]["tsa"] == "vendor"


def test_mlnx_qos_factory_state_real():
    q = hp.parse_mlnx_qos(fixture("mlnx_qos_pcp__magnate3_centos12.txt"))
    assert q["trust"] == "pcp" and q["pfc_priorities"] == [] and q["pfc_buffer"] == [0] * 8
    assert q["receive_buffer_sizes"] == [524160, 0, 0, 0, 0, 0, 0, 0] and q["dscp2prio"] == {}


def test_mlnx_qos_ets_collapsed_spacing_real():
    q = hp.parse_mlnx_qos(fixture("mlnx_qos_ets__mellanox_community_doc2792.txt"))
    assert q["pfc_priorities"] == [0, 2, 6, 7] and q["cable_len"] == 10
    assert q["tcs"][6] == {"tc": 6, "ratelimit": "unlimited", "tsa": "strict", "bw": None, "priorities": [6]}
    assert q["tcs"][7]["bw"] == 40


def test_mlnx_qos_standin(state):
    q = hp.parse_mlnx_qos(hw.render_mlnx_qos(state, "enp5s0"))
    assert q["trust"] == "pcp" and q["pfc_priorities"] == []
    state["qos"]["enp5s0"].update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    q = hp.parse_mlnx_qos(hw.render_mlnx_qos(state, "enp5s0"))
    assert q["trust"] == "dscp" and q["pfc_priorities"] == [3] and q["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("name,key,tc_order", [
    ("mlnx_qos_total_size__mlnx_tools_5.2_printing.txt", "total_size", [1, 0, 2, 3, 4, 5, 6, 7]),
    ("mlnx_qos_max_buffer_size__mlnx_tools_24.10_printing.txt", "max_buffer_size", list(range(8)))])
def test_mlnx_qos_ofed_5_2_and_later_buffer_line(name, key, tc_order):
    q = hp.parse_mlnx_qos(fixture(name))
    assert q["trust"] == "dscp" and q["pfc_priorities"] == [3] and q["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert q["receive_buffer_sizes"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    assert q["receive_buffer_total"] == 262016 and q["receive_buffer_extra"] == {key: 262016}
    assert [t["tc"] for t in q["tcs"]] == tc_order and len(q["dscp2prio"]) == 8


@pytest.mark.parametrize("ofed,key", [("MLNX_OFED_LINUX-4.9-7.1.0.0", None),
                                      ("MLNX_OFED_LINUX-5.8-3.0.7.0", "total_size"),
                                      ("MLNX_OFED_LINUX-23.10-3.2.2.0", "max_buffer_size"),
                                      ("OFED-internal-25.01-0.6.0", "max_buffer_size")])
def test_mlnx_qos_standin_prints_the_nodes_ofed_format(state, ofed, key):
    state["ofed"] = ofed
    state["qos"]["enp5s0"].update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    text = hw.render_mlnx_qos(state, "enp5s0")
    q = hp.parse_mlnx_qos(text)
    assert q["pfc_priorities"] == [3] and list(q["receive_buffer_extra"]) == ([key] if key else [])
    assert ("=" in text) == bool(key)


@pytest.mark.parametrize("text,words", [
    ("Netlink error: interface enp5s0 has no DCB support\n", "no 'Priority trust state:' line"),
    ("Priority trust state: dscp\n%%% garbage\n", "line 2: expected a 'Name: value' line"),
    ("Priority trust state: dscp\nReceive buffer size (bytes): 1,2,3,4,5,6,7,\n", "expected 8 receive buffer"),
    ("Priority trust state: dscp\nReceive buffer size (bytes): 1,2,3,4,5,6,7,8,total_size=x\n", "expected a number"),
    ("Priority trust state: dscp\nPriority trust state: pcp\n", "printed twice"),
    ("Priority trust state: dscp\nPFC configuration:\n\tenabled 0 0 0 1 0 0 0 0\n", "TC table maps priorities none"),
    ("Priority trust state: dscp\nPFC configuration:\n\tenabled 0 0 1\n", "line 3: expected 8 values"),
    ("Priority trust state: pcp\n", "no PFC 'enabled' row"),
    ("Priority trust state: dscp\ndscp2prio mapping:\n\tprio:x dscp:1,\n", "line 3: expected 'prio:N"),
])
def test_mlnx_qos_malformed(text, words):
    assert_refused(hp.parse_mlnx_qos, text, "mlnx_qos", words)


def test_mlnx_qos_rate_limit_notice_tc_lines_without_prefix():
    """'Rate limit is not supported on your system!': the TC lines lose their 'tc: N ratelimit: R, tsa:' prefix;
    PFC, trust and buffers are still read, each TC keeps its TSA and priorities, tc/ratelimit say 'not read'."""
    q = hp.parse_mlnx_qos(fixture("mlnx_qos_ratelimit_unsupported__mlnx_tools_printing_notices.txt"))
    assert q["trust"] == "dscp" and q["pfc_priorities"] == [3] and q["receive_buffer_total"] == 262016
    assert q["notices"] == ["Rate limit is not supported on your system!"] and q["unsupported"] == ["ratelimit"]
    assert [t["priorities"] for t in q["tcs"]] == [[1], [0], [2], [3], [4], [5], [6], [7]]
    assert all(t["tc"] is None and t["ratelimit"] is None and t["tsa"] == "vendor" for t in q["tcs"])


def test_mlnx_qos_trust_and_buffer_notices():
    q = hp.parse_mlnx_qos(fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt"))
    assert q["trust"] is None and q["unsupported"] == ["trust", "buffers"] and len(q["notices"]) == 2
    assert q["pfc_priorities"] == [3] and q["pfc_buffer"] is None and q["receive_buffer_sizes"] is None
    assert q["dscp2prio"] == {} and [t["tc"] for t in q["tcs"]] == list(range(8))


def test_mlnx_qos_ets_layout_without_rate_limits():
    q = hp.parse_mlnx_qos(fixture("mlnx_qos_ets_ratelimit_buffers_unsupported__mlnx_tools_printing_notices.txt"))
    assert q["trust"] == "pcp" and q["pfc_priorities"] == [0, 2, 6, 7] and q["unsupported"] == ["buffers",
                                                                                                "ratelimit"]
    assert [(t["tsa"], t["bw"]) for t in q["tcs"]][5:] == [("ets", 10), ("strict", None), ("ets", 40)]


@pytest.mark.parametrize("notice,feature", [
    ("Priority trust mode is not supported on your system", "trust"),  # mlnx-tools 5c00758 (before OFED 4.2)
    ("Rate limit is not supported on your system!", "ratelimit"),
    ("Buffers commands are not supported on your system", "buffers"),
    ("DCBX mode is not supported on your system", "dcbx mode"),  # any later notice: kept by its own words
])
def test_mlnx_qos_any_notice_is_reported_not_fatal(notice, feature):
    base = fixture("mlnx_qos__att_netarbiter.txt")
    full = hp.parse_mlnx_qos(base)
    q = hp.parse_mlnx_qos(notice + "\n" + base)
    assert q["unsupported"] == [feature] and q["notices"] == [notice]
    assert {k: v for k, v in q.items() if k not in ("notices", "unsupported")} == {
        k: v for k, v in full.items() if k not in ("notices", "unsupported")}


@pytest.mark.parametrize("text,words", [
    # mlnx-tools python/mlnx_qos (8fbfd9c): get_ieee_ets()/get_ieee_pfc_en() fail -> this line, exit 1
    ("ETS features are not supported on your system\n", "line 1: mlnx_qos says 'ETS features are not supported"),
    ("Buffers commands are not supported on your system\n", "no 'Priority trust state:' line (mlnx_qos said: "
     "'Buffers commands are not supported on your system')"),
    ("[Errno 1] Operation not permitted\n", "line 1: mlnx_qos reported an error"),  # check_privilege()
    ("Priority trust state: none\nPFC configuration:\n\tenabled 0 0 0 1 0 0 0 0\nvendor\n\t priority: 0\n",
     "maps priorities [0]"),
    ("Priority trust state: dscp\nvendor\n", "line 2: expected a 'Name: value' line"),  # TSA line before PFC
])
def test_mlnx_qos_notices_refused(text, words):
    assert_refused(hp.parse_mlnx_qos, text, "mlnx_qos", words)


# --------------------------------------------------------------------------- cma_roce_mode

def test_cma_roce_mode_real_and_standin():
    assert hp.parse_cma_roce_mode(fixture("cma_roce_mode_v2__rhel7_networking_guide.txt")) == {
        "mode": "RoCE v2", "version": 2, "messages": []}
    assert hp.parse_cma_roce_mode(fixture("cma_roce_mode_v1__mlnx_tools_script.txt")) == {
        "mode": "RoCE v1", "version": 1, "messages": []}
    assert hp.parse_cma_roce_mode(hw.render_cma_roce_mode(2))["version"] == 2
    assert hp.parse_cma_roce_mode(hw.render_cma_roce_mode(1))["version"] == 1
    assert hp.parse_cma_roce_mode("RoCE V2\n")["version"] == 2  # the spelling some scripts write


def test_cma_roce_mode_error_line_before_the_mode():
    """-m 2 on a port that refuses RoCE v2: bash's write error (stderr), then the mode still in force."""
    m = hp.parse_cma_roce_mode(fixture("cma_roce_mode_write_error__mlnx_tools_script_kernel_configfs.txt"))
    assert m == {"mode": "RoCE v1", "version": 1,
                 "messages": ["/usr/sbin/cma_roce_mode: line 111: echo: write error: Invalid argument"]}


@pytest.mark.parametrize("text,mode,messages", [
    ("sudo: unable to resolve host dgx-01: Name or service not known\nRoCE v2\n", "RoCE v2", 1),
    ("modprobe: FATAL: Module configfs not found in directory /lib/modules/5.15.0\nRoCE v2\n", "RoCE v2", 1),
    ("RoCE v2\nrmdir: failed to remove 'mlx5_0': Device or resource busy\n", "RoCE v2", 1),
    ("Setting mode\n\nIB/RoCE v1\n", "RoCE v1", 1),
])
def test_cma_roce_mode_other_lines_are_messages(text, mode, messages):
    m = hp.parse_cma_roce_mode(text)
    assert m["mode"] == mode and len(m["messages"]) == messages


@pytest.mark.parametrize("text", [fixture("cma_roce_mode_error__mlnx_tools_script.txt"),
                                  "You must be root to run this\n", "",
                                  "Module rdma_cm is not loaded or does not support configfs\nRoCE v2\n",
                                  "Device mlx5_9 port 1 does not exist\nRoCE v2\n",
                                  "RoCE v2\nIB/RoCE v1\n",  # two runs' outputs: which one?
                                  "/usr/sbin/cma_roce_mode: line 111: echo: write error: Invalid argument\n"])
def test_cma_roce_mode_malformed(text):
    with pytest.raises(hp.ParseError) as e:
        hp.parse_cma_roce_mode(text)
    assert str(e.value).startswith("cma_roce_mode output")
    if text:
        assert any(x in str(e.value) for x in text.strip().splitlines())


# --------------------------------------------------------------------------- show_gids

def test_show_gids_real():
    rows = hp.parse_show_gids(fixture("show_gids__magnate3_centos12.txt"))
    assert len(rows) == 19
    ens6 = [r for r in rows if r["netdev"] == "ens6"]
    assert [(r["index"], r["type"], r["ipv4"]) for r in ens6] == [
        (0, "RoCE v1", None), (1, "RoCE v2", None), (2, "RoCE v1", "172.17.242.56"), (3, "RoCE v2", "172.17.242.56")]
    ib = [r for r in rows if r["device"] == "mlx5_5"]
    assert ib == [{"device": "mlx5_5", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:08c0:eb03:00b6:a0b4",
                   "ipv4": None, "type": "RoCE v1", "netdev": None}]
    pod = hp.parse_show_gids(fixture("show_gids__nccl_1573.txt"))
    assert [r["index"] for r in pod if r["device"] == "mlx5_0"] == [4, 5, 6, 7]
    with pytest.raises(hp.ParseError, match="n_gids_found=7 but 6 rows"):
        hp.parse_show_gids(fixture("show_gids__spectrumscale_network_readiness_4.txt").replace("=6", "=7"))


