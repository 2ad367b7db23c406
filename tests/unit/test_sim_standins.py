"""The simulator's hardware stand-ins (sim/standins/podsim_hw.py): TEST DOUBLES for nvidia-smi,
ibdev2netdev, ibv_devinfo, mlxconfig, mlnx_qos, cma_roce_mode.  These tests pin their output
formats to the real tools' (004's captured ibdev2netdev / ibv_devinfo lines) and their state changes."""

import io
import json
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import podsim_hw as hw  # noqa: E402

UP = {n: (True, 9000) for n in ("enp5s0", "enp12s0", "enp132s0", "enp139s0")}


@pytest.fixture
def state():
    return hw.default_state("sim-dgx1", 1)


def test_nvidia_smi_table(state):
    out = hw.render_nvidia_smi(state, now=0)
    lines = out.splitlines()
    assert all(len(line) == 79 for line in lines[1:]), [len(x) for x in lines]
    assert "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |" in lines
    rows = [x for x in lines if "Tesla V100-SXM2..." in x]
    assert len(rows) == 8
    assert rows[0] == "|   0  Tesla V100-SXM2...  On   | 00000000:06:00.0 Off |                    0 |"
    assert "| N/A   34C    P0    43W / 300W |      0MiB / 32480MiB |      0%      Default |" in lines
    assert "No running processes found" in out


def test_nvidia_smi_list(state):
    lines = hw.render_nvidia_smi_list(state).splitlines()
    assert len(lines) == 8
    for i, line in enumerate(lines):
        uuid = r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}"
        assert re.fullmatch(r"GPU %d: Tesla V100-SXM2-32GB \(UUID: %s\)" % (i, uuid), line)
    assert len({line.split("UUID: ")[1] for line in lines}) == 8
    assert hw.default_state("sim-dgx2", 2)["gpus"][0]["uuid"] != state["gpus"][0]["uuid"]


def test_query_gpu_csv(state):
    fields = ["index", "name", "uuid", "memory.total"]
    out = hw.render_query_gpu(state, fields).splitlines()
    assert out[0] == "index, name, uuid, memory.total [MiB]"
    assert re.fullmatch(r"0, Tesla V100-SXM2-32GB, GPU-[0-9a-f-]{36}, 32480 MiB", out[1])
    assert len(out) == 9
    nh = hw.render_query_gpu(state, fields, noheader=True).splitlines()
    assert nh == out[1:]
    nu = hw.render_query_gpu(state, fields, noheader=True, nounits=True).splitlines()
    assert nu[7].startswith("7, Tesla V100-SXM2-32GB, GPU-") and nu[7].endswith(", 32480")
    with pytest.raises(KeyError):
        hw.render_query_gpu(state, ["bogus"])


def test_ibdev2netdev_matches_004(state):
    # 004 (root@DGX1-1:~# ibdev2netdev)
    assert hw.render_ibdev2netdev(state, UP) == (
        "mlx5_0 port 1 ==> enp5s0 (Up)\n"
        "mlx5_1 port 1 ==> enp12s0 (Up)\n"
        "mlx5_2 port 1 ==> enp132s0 (Up)\n"
        "mlx5_3 port 1 ==> enp139s0 (Up)\n")
    down = dict(UP, enp12s0=(False, 9000))
    assert "mlx5_1 port 1 ==> enp12s0 (Down)" in hw.render_ibdev2netdev(state, down)
    v = hw.render_ibdev2netdev(state, UP, verbose=True).splitlines()[0]
    assert re.fullmatch(r"0000:05:00\.0 mlx5_0 \(MT4115 - MT\w+\) CX455A - ConnectX-4 QSFP28 fw 12\.18\.1000 "
                        r"port 1 \(ACTIVE\) ==> enp5s0 \(Up\)", v)


def test_ibv_devinfo_matches_004_fields(state):
    out = hw.render_ibv_devinfo(state, UP, device="mlx5_3")
    kv = {}
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            kv[k.strip()] = v.strip()
    assert kv["hca_id"] == "mlx5_3"
    assert kv["transport"] == "InfiniBand (0)"
    assert kv["fw_ver"] == "12.18.1000"
    assert kv["vendor_id"] == "0x02c9" and kv["vendor_part_id"] == "4115"
    assert kv["board_id"] == "MT_2180110032" and kv["phys_port_cnt"] == "1"
    assert kv["state"] == "PORT_ACTIVE (4)"
    assert kv["max_mtu"] == "4096 (5)" and kv["active_mtu"] == "4096 (5)"
    assert kv["link_layer"] == "Ethernet"
    assert re.fullmatch(r"[0-9a-f]{4}(:[0-9a-f]{4}){3}", kv["node_guid"])
    assert out.startswith("hca_id:\tmlx5_3\n\ttransport:\t\t\tInfiniBand (0)\n")
    every = hw.render_ibv_devinfo(state, UP)
    hcas = [x.split("\t")[1] for x in every.splitlines() if x.startswith("hca_id")]
    assert hcas == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    # MTU 1500 netdev -> 1024 RoCE MTU; link down -> PORT_DOWN
    small = hw.render_ibv_devinfo(state, dict(UP, enp5s0=(False, 1500)), device="enp5s0")
    assert "active_mtu:\t\t1024 (3)" in small and "PORT_DOWN (1)" in small
    verbose = hw.render_ibv_devinfo(state, UP, "mlx5_0", verbose=True, addresses={"enp5s0": ["198.18.5.11"]})
    assert "0000:0000:0000:0000:0000:ffff:c612:050b, RoCE v2" in verbose
    with pytest.raises(KeyError):
        hw.render_ibv_devinfo(state, UP, device="mlx5_9")


def test_mlxconfig_query_and_set_table(state):
    q = hw.render_mlxconfig_query(state, "mlx5_0", ["LINK_TYPE_P1"])
    assert "Device #1:\n----------\n" in q
    assert "Configurations:                              Next Boot\n" in q
    assert re.search(r"^ {9}LINK_TYPE_P1 {24}ETH\(2\)", q, re.M)
    s = hw.render_mlxconfig_set(state, "mlx5_0", {"LINK_TYPE_P1": 1}, assume_yes=True)
    assert re.search(r"^ {9}LINK_TYPE_P1 {24}ETH\(2\) {10}IB\(1\)", s, re.M)
    assert "Apply new Configuration? (y/n) [n] : y" in s
    assert hw.parse_mlx_value("LINK_TYPE_P1", "ETH") == 2
    assert hw.parse_mlx_value("LINK_TYPE_P1", "IB(1)") == 1
    with pytest.raises(ValueError):
        hw.parse_mlx_value("LINK_TYPE_P1", "7")


def test_mlnx_qos(state):
    out = hw.render_mlnx_qos(state, "enp5s0")
    assert "Priority trust state: pcp" in out and "dscp2prio" not in out
    assert "\tenabled     0   0   0   0   0   0   0   0" in out
    state["qos"]["enp5s0"].update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    out = hw.render_mlnx_qos(state, "enp5s0")
    assert "Priority trust state: dscp" in out
    assert "\tprio:3 dscp:31,30,29,28,27,26,25,24," in out
    assert "\tenabled     0   0   0   1   0   0   0   0" in out


def test_cma_roce_mode():
    assert hw.render_cma_roce_mode(1) == "IB/RoCE v1\n"
    assert hw.render_cma_roce_mode(2) == "RoCE v2\n"


# ---- the tools themselves (argv[0] dispatch), on a state file, changing it --------------------

@pytest.fixture
def hwfile(tmp_path, monkeypatch, state):
    p = tmp_path / "hardware.json"
    p.write_text(json.dumps(state))
    monkeypatch.setenv("PODSIM_HW_STATE", str(p))
    return p


def run_tool(argv, capsys, stdin=""):
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        rc = hw.main(argv)
    finally:
        sys.stdin = old
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_mlxconfig_set_changes_next_boot(hwfile, capsys):
    rc, out, _ = run_tool(["mlxconfig", "-d", "mlx5_0", "-y", "set", "LINK_TYPE_P1=1"], capsys)
    assert rc == 0 and "Applying... Done!" in out
    assert json.loads(hwfile.read_text())["hcas"]["mlx5_0"]["mlxconfig"]["LINK_TYPE_P1"]["next_boot"] == 1
    rc, out, _ = run_tool(["mlxconfig", "-d", "mlx5_0", "q", "LINK_TYPE_P1"], capsys)
    assert "IB(1)" in out
    rc, out, _ = run_tool(["mlxconfig", "-d", "mlx5_0", "set", "LINK_TYPE_P1=2"], capsys, stdin="n\n")
    assert rc == 1 and "Aborted by user" in out
    rc, _, err = run_tool(["mlxconfig", "-d", "mlx5_0", "q", "LINK_TYPE_P9"], capsys)
    assert rc != 0 and "-E-" in err


def test_mlnx_qos_set(hwfile, capsys):
    rc, out, _ = run_tool(["mlnx_qos", "-i", "enp5s0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"], capsys)
    assert rc == 0 and "Priority trust state: dscp" in out
    q = json.loads(hwfile.read_text())["qos"]["enp5s0"]
    assert q["trust"] == "dscp" and q["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    rc, _, _ = run_tool(["mlnx_qos", "-i", "enp5s0", "--pfc", "1,1"], capsys)
    assert rc != 0


def test_cma_roce_mode_set(hwfile, capsys):
    assert run_tool(["cma_roce_mode", "-d", "mlx5_2", "-p", "1"], capsys)[1] == "IB/RoCE v1\n"
    assert run_tool(["cma_roce_mode", "-d", "mlx5_2", "-p", "1", "-m", "2"], capsys)[1] == "RoCE v2\n"
    assert json.loads(hwfile.read_text())["hcas"]["mlx5_2"]["roce_mode"] == 2


def test_nvidia_smi_cli(hwfile, capsys):
    rc, out, _ = run_tool(["/usr/local/sbin/nvidia-smi", "--query-gpu=index,name,uuid,memory.total",
                           "--format=csv,noheader,nounits"], capsys)
    assert rc == 0 and len(out.splitlines()) == 8
    rc, out, _ = run_tool(["nvidia-smi", "-L"], capsys)
    assert out.startswith("GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-")


def test_without_state_nvidia_smi_fails_like_without_driver(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PODSIM_HW_STATE", str(tmp_path / "absent.json"))
    rc, _, err = run_tool(["nvidia-smi"], capsys)
    assert rc == 9 and "couldn't communicate with the NVIDIA driver" in err


def test_symlinks_cover_every_tool():
    """Every tool is a symlink to its launcher, which runs the module's main (compiled once, not at every call)."""
    d = os.path.join(ROOT, "sim", "standins")
    for tool in hw.TOOLS:
        p = os.path.join(d, tool)
        assert os.path.islink(p) and os.readlink(p) == "podsim-hw", tool
    assert os.readlink(os.path.join(d, "dcgmi")) == "podsim-gpu"
    for launcher, module in (("podsim-hw", "podsim_hw"), ("podsim-gpu", "podsim_gpu")):
        with open(os.path.join(d, launcher)) as fh:
            text = fh.read()
        assert os.access(os.path.join(d, launcher), os.X_OK)
        assert "import %s" % module in text and "sys.exit(%s.main(sys.argv))" % module in text


def test_a_launched_tool_prints_the_tools_output_and_exit_code(tmp_path):
    """The symlink -> launcher -> module path in a real process: argv[0] still picks the tool, and its output and
    exit status are the module's (no state: nvidia-smi's 'no driver', 9)."""
    import subprocess
    env = dict(os.environ, PODSIM_HW_STATE=str(tmp_path / "absent.json"))
    res = subprocess.run([os.path.join(ROOT, "sim", "standins", "nvidia-smi")], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 9 and "couldn't communicate with the NVIDIA driver" in res.stderr
    res = subprocess.run([os.path.join(ROOT, "sim", "standins", "ofed_info"), "-s"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 1 and "ofed_info: no devices found" in res.stderr


def test_podsim_up_compiles_the_standins(tmp_path, monkeypatch):
    """podsim up writes the modules' compiled form where the nodes' Python looks for it (they cannot write it)."""
    import importlib.util
    import shutil
    from podsimlib import up
    d = tmp_path / "sim" / "standins"
    d.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "sim", "standins", "podsim_hw.py"), d / "podsim_hw.py")
    monkeypatch.setattr(up, "REPO", str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    up.compile_standins()
    assert os.path.isfile(importlib.util.cache_from_source(str(d / "podsim_hw.py")))


def test_nfs_client_standin_mount_options():
    pytest.importorskip("libnfs")
    pytest.importorskip("fuse")
    import podsim_nfs

    kw, version = podsim_nfs.parse_options(",rw,vers=4.1,hard,rsize=1048576,_netdev,x-systemd.automount")
    assert kw == {"rw": True} and version == 4
    assert podsim_nfs.parse_options("")[1] == 3
    assert podsim_nfs.main(["not-a-url", "/mnt/x"]) == 2


def test_nfs_client_wrapper_is_on_the_node_path():
    p = os.path.join(ROOT, "sim", "standins", "podsim-nfs")
    assert os.access(p, os.X_OK)
    assert "podsim_nfs.py" in open(p).read()


# ---- fake sysfs tree (GID tables for the hardware-facts module) --------------------------------

ADDRS = {"enp5s0": ["198.18.5.11"], "enp12s0": ["198.18.12.11"], "enp132s0": ["198.18.66.11"],
         "enp139s0": ["198.18.139.11"]}


def _hw_parsers():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import hw_parsers
    return hw_parsers


def test_fake_sysfs_files_layout_like_connectx(state):
    files = hw.fake_sysfs_files(state, ADDRS)
    port = "sys/class/infiniband/mlx5_0/ports/1"
    assert files[port + "/link_layer"] == "Ethernet\n"
    assert files[port + "/gids/0"] == files[port + "/gids/1"] and files[port + "/gids/0"].startswith("fe80:")
    assert files[port + "/gids/2"] == files[port + "/gids/3"] == "0000:0000:0000:0000:0000:ffff:c612:050b\n"
    assert [files["%s/gid_attrs/types/%d" % (port, i)] for i in range(4)] == [
        "IB/RoCE v1\n", "RoCE v2\n", "IB/RoCE v1\n", "RoCE v2\n"]
    assert files[port + "/gid_attrs/ndevs/3"] == "enp5s0\n"
    assert files[port + "/gids/15"] == "0000:0000:0000:0000:0000:0000:0000:0000\n"
    assert port + "/gid_attrs/types/4" not in files  # empty slot: no readable type, as on a real kernel
    assert "sys/bus/pci/devices/0000:05:00.0/net/enp5s0/.podsim" in files
    # no address: link-local GIDs only; IB mode (after a reboot into LINK_TYPE_P1=IB): no RoCE GIDs at all
    bare = hw.fake_sysfs_files(state, {})
    assert bare[port + "/gids/2"].startswith("0000:0000:0000:0000:0000:0000")
    state["hcas"]["mlx5_1"]["mlxconfig"]["LINK_TYPE_P1"]["current"] = 1
    ib = hw.fake_sysfs_files(state, ADDRS)
    assert ib["sys/class/infiniband/mlx5_1/ports/1/link_layer"] == "InfiniBand\n"
    assert "sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/0" not in ib


def test_fake_sysfs_matches_ibv_devinfo_gid_table(state):
    hp = _hw_parsers()
    files = hw.fake_sysfs_files(state, ADDRS)
    v = hp.parse_ibv_devinfo(hw.render_ibv_devinfo(state, UP, "mlx5_2", verbose=True, addresses=ADDRS))
    shown = [(g["index"], g["gid"], g["type"]) for g in v[0]["ports"][1]["gids"]]
    port = "sys/class/infiniband/mlx5_2/ports/1"
    written = [(i, files["%s/gids/%d" % (port, i)].strip(),
                hp.normalize_gid_type(files["%s/gid_attrs/types/%d" % (port, i)])) for i in range(4)]
    assert shown == written


def test_write_fake_sysfs_resolves_and_is_idempotent(tmp_path, state):
    hp = _hw_parsers()
    root = str(tmp_path / "sysfs")
    changed = hw.write_fake_sysfs(root, state, ADDRS, live_class_net=str(tmp_path / "net"))
    assert "sys/class/infiniband/mlx5_3/ports/1/gids/3" in changed and "sys/class/net" in changed
    for dev, nd in (("mlx5_0", "enp5s0"), ("mlx5_1", "enp12s0"), ("mlx5_2", "enp132s0"), ("mlx5_3", "enp139s0")):
        assert hp.resolve_roce_v2_gid_index(root, dev, ADDRS[nd][0], netdev=nd) == 3
    assert hw.write_fake_sysfs(root, state, ADDRS, live_class_net=str(tmp_path / "net")) == []
    dev_link = os.path.join(root, "sys/class/infiniband/mlx5_0/device")
    assert os.path.basename(os.path.realpath(dev_link)) == "0000:05:00.0"
    assert os.listdir(os.path.join(dev_link, "net")) == ["enp5s0"]
    assert os.readlink(os.path.join(root, "sys/class/net")) == str(tmp_path / "net")
    # a second address, then back to one: the extra GIDs come and go
    two = dict(ADDRS, enp5s0=["198.18.5.11", "198.18.5.99"])
    hw.write_fake_sysfs(root, state, two, live_class_net=str(tmp_path / "net"))
    assert hp.resolve_roce_v2_gid_index(root, "mlx5_0", "198.18.5.99") == 5
    changed = hw.write_fake_sysfs(root, state, ADDRS, live_class_net=str(tmp_path / "net"))
    assert "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/5" in changed
    with pytest.raises(hp.GidResolutionError, match="mlx5_0: no RoCE v2 GID for 198.18.5.99"):
        hp.resolve_roce_v2_gid_index(root, "mlx5_0", "198.18.5.99")


def test_fake_sysfs_table_overflow_is_an_error(state):
    many = {"enp5s0": ["198.18.5.%d" % i for i in range(1, 10)]}
    with pytest.raises(ValueError, match="mlx5_0: 20 GIDs do not fit a 16-slot table"):
        hw.fake_sysfs_files(state, many)


def test_nfs_standin_table_entry_is_only_dropped_by_its_owner(tmp_path):
    # a container's copy of /mnt keeps an unmounted FUSE process alive; when it finally exits it must not
    # remove the entry of the newer mount at the same mount point (seen on the simulator)
    pytest.importorskip("libnfs")
    pytest.importorskip("fuse")
    import podsim_nfs

    table = str(tmp_path / "mounts")
    old = "198.18.5.211:/ifs /mnt/isilon3 nfs rw,vers=3,addr=198.18.5.211 0 0"
    new = "198.18.5.211:/ifs /mnt/isilon3 nfs rw,vers=3,rsize=524288,addr=198.18.5.211 0 0"
    other = "198.18.66.211:/ifs /mnt/isilon1 nfs rw,vers=3,addr=198.18.66.211 0 0"
    podsim_nfs.record("/mnt/isilon1", other, table, owner=10)
    podsim_nfs.record("/mnt/isilon3", old, table, owner=100)
    podsim_nfs.record("/mnt/isilon3", new, table, owner=200)   # remounted while pid 100 still runs
    podsim_nfs.record("/mnt/isilon3", None, table, owner=100)  # the old process exits late
    assert open(table).read().splitlines() == [other, new]
    podsim_nfs.record("/mnt/isilon3", None, table, owner=200)
    assert open(table).read().splitlines() == [other]
    podsim_nfs.record("/mnt/isilon1", None, table)  # no owner given: always dropped
    assert open(table).read() == ""
