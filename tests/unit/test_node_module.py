"""library/dgx_node_health.py: gather() with an injected runner answering with real tool outputs (the fixtures of
tests/unit/fixtures/node/ and hw/, sources in fixtures/node/README.md and the .source files): which commands run,
with their time limits; the kernel log from journalctl's window, else dmesg, placed with proc/stat's btime; the
GPUs' and HCAs' bus ids; every inventory and BMC reading in the shape node/eval.py reads; and each tool that is
missing, fails or prints what its parser refuses recorded as that reading's error - which the stage reports as
skipped or error naming it, never as a pass."""
from __future__ import annotations

import os

import pytest

import dgx_node_health as mod  # noqa: E402  (library/)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node import eval as node_eval

FX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
BOOT = 1700000000
NOW = BOOT + 6785000.0  # an hour after the [6781741] stamps of the Xid 79 capture


def fx(name):
    with open(os.path.join(FX, name)) as fh:
        return fh.read()


# nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader: composed from nvidia-smi's CSV form (", "
# between values, fixture hw/nvidia_smi_query_noheader__akash_provider_91.txt) and the bus ids of the
# captures the kernel lines name (gpud's Xid 79 at 0000:91:00)
GPU_QUERY = "0, 00000000:18:00.0\n1, 00000000:2A:00.0\n2, 00000000:3A:00.0\n3, 00000000:5D:00.0\n" \
            "4, 00000000:91:00.0\n5, 00000000:AB:00.0\n6, 00000000:BA:00.0\n7, 00000000:DB:00.0\n"

OUTPUTS = {
    "journalctl": (0, fx("node/kernel_journal_short__gpud_1209_mlx5_ib_port.txt")),
    "dmesg": (0, fx("node/kernel_dmesg__gpud_sxid_readme_xid79_sxid20034.txt")),
    "nvidia-smi": (0, GPU_QUERY),
    "lscpu": (0, fx("node/lscpu_J__xeon_gold_6430_capture.txt")),
    "numactl": (0, fx("node/numactl_H__xeon_gold_6430_capture.txt")),
    "nvme": (0, fx("node/nvme_list_json__netdata_testdata_v2.3.txt")),
    "smartctl": (0, fx("node/smartctl_j__netdata_testdata_nvme1.txt")),
    "df": (0, fx("node/df_P_B1__composed_coreutils_df_c_dgx.txt")),
    "uname": (0, "5.15.0-1042-nvidia\n"),
    "ipmitool sel": (0, fx("node/ipmitool_sel_elist__sos_issue_2015.txt")),
    "ipmitool sdr": (0, fx("node/ipmitool_sdr_elist__ipmi_exporter_issue_54_hpe.txt")),
}


class Runner:
    """run(cmd, timeout) answering from ``outputs`` (key: the tool, or 'ipmitool sel'); records every call."""

    def __init__(self, outputs=None, missing=()):
        self.outputs = dict(OUTPUTS, **(outputs or {}))
        self.missing = set(missing)
        self.calls = []

    def which(self, name):
        return None if name in self.missing else "/usr/bin/" + name

    def __call__(self, cmd, timeout):
        self.calls.append((cmd, timeout))
        key = cmd[0] if cmd[0] != "ipmitool" else "ipmitool " + cmd[1]
        rc, out = self.outputs[key][:2]
        err = self.outputs[key][2] if len(self.outputs[key]) > 2 else ""
        return rc, out, err


@pytest.fixture
def root(tmp_path):
    """An fs_root with proc/{stat,meminfo,swaps} (real captures) and one HCA in sysfs, linked as the kernel does."""
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "stat").write_text("cpu  1 2 3 4\nintr 1\nctxt 5\nbtime %d\nprocesses 9\n" % BOOT)
    (proc / "meminfo").write_text(fx("node/meminfo__kernel_doc_proc_rst.txt"))
    (proc / "swaps").write_text(fx("node/swaps__util_linux_libmount_tests.txt"))
    pci = tmp_path / "sys/bus/pci/devices/0000:ab:00.0"
    (pci / "net/ibp171s0").mkdir(parents=True)
    ib = tmp_path / "sys/class/infiniband/mlx5_5"
    ib.mkdir(parents=True)
    os.symlink("../../../bus/pci/devices/0000:ab:00.0", str(ib / "device"))
    return str(tmp_path)


def stage(reading, model="dgxh100"):
    return node_eval.evaluate({"window_hours": 24, "nodes": {"dgx-01": {
        "dgx_node": reading, "error": None, "unreachable": False, "dgx_model": model}}}, {})


def test_every_tool_runs_with_its_time_limit_and_every_reading_is_parsed(root):
    run = Runner()
    got = mod.gather(run, run.which, fs_root=root, window_hours=24, tool_timeout=45, now=NOW)
    cmds = [c for c, _ in run.calls]
    assert cmds[0] == ["journalctl", "-k", "-o", "short-iso", "--no-pager", "--since", "@%d" % (NOW - 86400)]
    assert ["nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"] in cmds
    assert ["smartctl", "-j", "-a", "/dev/nvme0"] in cmds and ["smartctl", "-j", "-a", "/dev/nvme1"] in cmds
    assert ["ipmitool", "sel", "elist"] in cmds and ["ipmitool", "sdr", "elist"] in cmds
    assert ["df", "-P", "-B1", "-l"] in cmds and ["dmesg", "--time-format", "iso"] not in cmds
    assert {t for _, t in run.calls} == {45}
    assert got["errors"] == {} and got["kernel_log_source"] == "journalctl"
    assert got["since"] == NOW - 86400 and got["until"] == NOW and got["boot_time"] == BOOT
    assert got["gpus"][4] == {"index": 4, "bus_id": "0000:91:00.0"}
    assert got["hcas"] == [{"hca": "mlx5_5", "bus_id": "0000:ab:00.0", "netdev": "ibp171s0"}]
    r = got["readings"]
    assert set(r) == {"lscpu", "meminfo", "swaps", "numactl", "nvme_list", "smartctl", "df", "uname_r", "sel", "sdr"}
    assert all(v is not None for v in r.values()), r
    assert r["lscpu"]["sockets"] == 2 and r["meminfo"]["mem_total_kib"] == 32858820 and len(r["swaps"]) == 3
    assert sorted(r["smartctl"]) == ["nvme0", "nvme1"] and r["uname_r"] == "5.15.0-1042-nvidia"
    assert {row["mount"] for row in r["df"]} >= {"/", "/raid"}
    # the IB port events of the journal name the HCA through sysfs
    log = got["kernel_log"]
    assert log["events"] and {e["bus_id"] for e in log["events"] if e["kind"] == "ib_port"} == {"0000:ab:00.0"}


def test_since_overrides_the_window():
    run = Runner()
    got = mod.gather(run, run.which, window_hours=24, since=NOW - 600, now=NOW)
    assert run.calls[0][0][-1] == "@%d" % (NOW - 600) and got["since"] == NOW - 600


@pytest.mark.parametrize("journal", [None, (0, "No journal files were found.\n-- No entries --\n"),
                                     (1, "", "Failed to open journal: Permission denied")])
def test_the_ring_buffer_when_there_is_no_journal_placed_with_btime(root, journal):
    run = Runner({"journalctl": journal} if journal else None, missing=() if journal else ("journalctl",))
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert ["dmesg", "--time-format", "iso"] in [c for c, _ in run.calls]
    assert got["kernel_log_source"] == "dmesg" and "kernel_log" not in got["errors"]
    [xid] = [e for e in got["kernel_log"]["events"] if e["kind"] == "xid"]
    assert xid["time"] == pytest.approx(BOOT + 6781741.548779)
    # the stage names the GPU by its index (nvidia-smi) and the catalogue's action
    [x] = [c for c in stage(got) if c.check == "kernel_xid" and c.status == "fail"]
    assert x.subject.gpu == 4 and "Xid 79" in x.cause and "dgx-01 GPU 4 (0000:91:00.0)" in x.cause


def test_a_cut_or_unreadable_kernel_log_is_an_error_naming_it_never_a_pass(root):
    cut = fx("node/kernel_dmesg__gpud_sxid_readme_xid79_sxid20034.txt").rstrip("\n")
    run = Runner({"journalctl": (0, cut)})
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["kernel_log"] is None and got["errors"]["kernel_log"].startswith("journalctl: ")
    [k] = [c for c in stage(got) if c.check == "kernel_log"]
    assert k.status == "error" and "dgx-01" in k.reason and "output cut off" in k.reason
    assert not [c for c in stage(got) if c.check.startswith("kernel_") and c.status == "pass"]
    both = Runner({"dmesg": (1, "", "dmesg: read kernel buffer failed: Operation not permitted")},
                  missing=("journalctl",))
    got = mod.gather(both, both.which, fs_root=root, now=NOW)
    assert "Operation not permitted" in got["errors"]["kernel_log"]


def test_missing_tools_are_reasons_the_checks_are_skipped_with(root):
    run = Runner(missing=("ipmitool", "smartctl", "numactl"))
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["errors"] == {"sel": "ipmitool is not installed", "sdr": "ipmitool is not installed",
                             "numactl": "numactl is not installed", "smartctl": "smartctl is not installed"}
    assert got["readings"]["sel"] is None and got["readings"]["smartctl"] is None
    by = {c.check: c for c in stage(got)}
    assert by["bmc_sel"].status == "skipped" and "ipmitool is not installed" in by["bmc_sel"].reason
    assert by["bmc_sensors"].status == "skipped"
    assert by["host_nvme"].status in ("skipped", "fail") and by["host_nvme"].status != "pass"


def test_a_failed_tool_keeps_its_words_and_a_refused_output_the_parsers(root):
    run = Runner({"ipmitool sel": (1, "", "Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0: "
                                           "No such file or directory"),
                  "lscpu": (0, fx("node/lscpu_J__xeon_gold_6430_capture.txt")[:200])})
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["errors"]["sel"].startswith("ipmitool sel elist: exit 1: Could not open device at /dev/ipmi0")
    assert "lscpu" in got["errors"] and got["readings"]["lscpu"] is None
    assert {c.check: c.status for c in stage(got)}["host_cpu"] == "skipped"


def test_no_nvme_device_is_an_empty_list_not_an_error(root):
    # nvme-cli 1.x list(): fprintf(stdout, "No NVMe devices detected.\n") and exit 0
    run = Runner({"nvme": (0, "No NVMe devices detected.\n")})
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["readings"]["nvme_list"] == [] and got["readings"]["smartctl"] == {}
    assert "nvme_list" not in got["errors"] and not any(c[0][0] == "smartctl" for c in run.calls)


def test_a_drive_smartctl_cannot_open_is_listed_not_passed(root):
    run = Runner({"smartctl": (2, "", "Smartctl open device: /dev/nvme0 failed: No such device")})
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["readings"]["smartctl"] == {} and "/dev/nvme0: exit 2" in got["errors"]["smartctl"]
    assert {c.check: c.status for c in stage(got)}["host_nvme"] != "pass"


def test_without_proc_files_the_readings_say_so(tmp_path):
    run = Runner()
    got = mod.gather(run, run.which, fs_root=str(tmp_path), now=NOW)
    assert got["boot_time"] is None and got["hcas"] == []
    assert got["errors"]["meminfo"].startswith("cannot read %s/proc/meminfo" % tmp_path)
    assert {c.check: c.status for c in stage(got)}["host_memory"] == "skipped"


def test_nvidia_smi_missing_leaves_bus_ids_unnamed_and_says_why(root):
    run = Runner(missing=("nvidia-smi",))
    got = mod.gather(run, run.which, fs_root=root, now=NOW)
    assert got["gpus"] is None and got["errors"]["gpus"] == "nvidia-smi is not installed"
