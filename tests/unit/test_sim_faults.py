"""The fault drill's catalogue (sim/faults/, `sim/podsim fault`): its coverage, that every fault names tags
validate.yml has and checks the toolkit can emit, and what each inject and clear would run, against a fake
simulator (no root, no pod). The switch faults go through the real `podsim switch` verb on a state directory
of their own, so their clear is checked to put the running config back byte for byte."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import faults as fl  # noqa: E402
import podmodel as pm  # noqa: E402
import podsim_hw as hw  # noqa: E402
import podsim_node as node_standins  # noqa: E402

from sim.fakeswitch.cli import new_state  # noqa: E402
from sim.fakeswitch.server import write_state  # noqa: E402

PODSIM = fl.PODSIM
ISSUE_LAYERS = {"host-network", "roce-qos", "storage-client", "storage-server", "switch", "container", "gpu",
                "performance", "deploy-files", "reachability"}
ISSUE_LAYERS |= {"node"}  # issue 39 item 7: the node health stand-ins' faults


def qos_healthy(ofed=None, nic="enp139s0"):
    """`mlnx_qos -i enp139s0` on a converged simulated DGX, printed by the stand-in's own renderer
    (sim/standins/podsim_hw.py render_mlnx_qos, in its OFED's format): the factory state with what the deploy
    sets on a RoCE-lossless NIC (trust dscp, PFC on priority fl.PFC_PRIORITY), so this follows the stand-in."""
    state = hw.default_state("sim-dgx3", 3)
    if ofed:
        state["ofed"] = ofed
    state["qos"][nic].update(trust="dscp", pfc=[int(p == fl.PFC_PRIORITY) for p in range(8)])
    return hw.render_mlnx_qos(state, nic)


QOS_HEALTHY = qos_healthy()


class FakeCtx:
    """The simulator as the faults see it: commands are recorded and answered from ``answers`` (a function
    argv -> stdout); `podsim switch` runs for real on ``root`` (the verb needs no root); the state, the
    switch files and faults.json live in ``root``."""

    def __init__(self, root, answers=None):
        self.root = str(root)
        self.cmds = []
        self.answers = answers or (lambda argv: "")
        self.state = {"nodes": 4, "storage": 2, "members": {
            "sim-dgx4": {"sshd": {"pid": 4242, "start": 1}}, "sim-isilon2": {"ganesha": {"pid": 5151, "start": 1}},
            "sim-isilon1": {"ganesha": {"pid": 6161, "start": 1}}}}
        self.dead = set()  # pids whose recorded process has gone (or whose pid was recycled)
        self._records = {}
        os.makedirs(os.path.join(self.root, "switches"), exist_ok=True)

    def run(self, argv, input=None, check=True, timeout=900):
        self.cmds.append((list(argv), input))
        if argv[:2] == [PODSIM, "switch"]:
            p = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py")] + argv[1:],
                               env=dict(os.environ, PODSIM_STATE=self.root), capture_output=True, text=True,
                               timeout=60)
            assert p.returncode == 0, p.stdout + p.stderr
            return p.stdout
        return self.answers(list(argv))

    def sim_state(self):
        return self.state

    def is_alive(self, rec):
        return rec["pid"] not in self.dead

    def pod(self):
        return pm.pod_shape(4, 2)

    def switch_state(self, switch):
        with open(os.path.join(self.root, "switches", switch + ".json")) as fh:
            return json.load(fh)

    def save_switch_state(self, switch, state):
        write_state(os.path.join(self.root, "switches", switch + ".json"), state)

    def records(self):
        return copy.deepcopy(self._records)

    def save_records(self, records):
        self._records = copy.deepcopy(records)


@pytest.fixture
def ctx(tmp_path):
    return FakeCtx(tmp_path)


def argvs(ctx):
    return [c[0] for c in ctx.cmds]


# --------------------------------------------------------------------------- the catalogue

def test_the_catalogue_covers_every_layer_of_the_issue_with_unique_names():
    names = [f.name for f in fl.CATALOGUE]
    assert len(names) >= 15 and len(set(names)) == len(names)
    assert {f.layer for f in fl.CATALOGUE} == ISSUE_LAYERS == set(fl.LAYERS)
    for f in fl.CATALOGUE:
        assert re.match(r"^[a-z][a-z0-9_]+$", f.name) and f.name != "all"
        assert f.tags and f.checks and f.keywords and f.summary, f
        assert f.node in {n.name for n in pm.pod_shape(4, 2).all_nodes}, f
    # the GPU faults of the issue: a GPU missing, ECC errors, an NVLink down
    assert {"gpu_missing", "gpu_ecc", "gpu_nvlink_down"} <= set(names)


def validate_tags():
    """Every tag validate.yml can select: its import tags and the tags of the plays it imports."""
    tags = set()
    with open(os.path.join(ROOT, "validate.yml")) as fh:
        for item in yaml.safe_load(fh):
            tags.update(item.get("tags") or [])
            with open(os.path.join(ROOT, item["ansible.builtin.import_playbook"])) as ph:
                for play in yaml.safe_load(ph):
                    tags.update(play.get("tags") or [])
    return tags - {"always"}


def emittable_checks():
    """Check names the toolkit can put in results.json: CheckResult/at_least calls and check-name tuples in
    module_utils/ and library/, and `check: NAME` in roles/ and playbooks/ (the per-host facts)."""
    names = set()
    for top in ("ansible_collections/dgxpod/toolkit/plugins/module_utils", "library", "roles", "playbooks"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".py", ".yml")):
                    continue
                with open(os.path.join(dirpath, name)) as fh:
                    text = fh.read()
                names.update(re.findall(r"""(?:CheckResult|at_least|_result|check=)\(?\s*["']([a-z][a-z0-9_]+)["']""",
                                        text))
                names.update(re.findall(r"""\(\s*["']([a-z][a-z0-9_]+)["']\s*,""", text))
                names.update(re.findall(r"^\s*check: ([a-z][a-z0-9_]+)\s*$", text, re.M))
                names.update(re.findall(r"""^[A-Z_]*CHECK[A-Z_]* = ["']([a-z][a-z0-9_]+)["']""", text, re.M))
                for tup in re.findall(r"^[A-Z_]*CHECKS = \(([^)]*)\)", text, re.M):  # a module's literal check names
                    names.update(re.findall(r"""["']([a-z][a-z0-9_]+)["']""", tup))
                if name == "drift.yml":  # the drift stage names its checks drift_<file entry name>
                    names.update("drift_" + n for n in re.findall(r"^\s+name: ([a-z][a-z0-9_]+)\s*$", text, re.M))
    return names


def test_every_fault_names_tags_that_validate_yml_has():
    tags = validate_tags()
    assert {"network", "storage", "switches", "gpu", "containers", "identity", "iperf"} <= tags, tags
    for f in fl.CATALOGUE:
        assert set(f.tags) <= tags, (f.name, f.tags, tags)


def test_every_fault_names_checks_the_toolkit_can_emit():
    known = emittable_checks()
    assert {"network", "nfs_mounts", "mpi_containers", "identity", "switch_lldp", "gpu_nvlink",
            "iperf_relative"} <= known
    missing = {f.name: [c for c in f.checks if c not in known] for f in fl.CATALOGUE}
    assert not {n: m for n, m in missing.items() if m}, missing


def test_fault_list_verb_prints_every_fault_without_root():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "fault", "list"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    for f in fl.CATALOGUE:
        assert re.search(r"^%s\s+%s\s+%s\s" % (f.name, f.layer, f.node), res.stdout, re.M), f.name


def test_an_unknown_fault_is_refused_naming_the_catalogue(ctx):
    with pytest.raises(KeyError, match="nic_mtu"):
        fl.inject(ctx, "no_such_fault")


# --------------------------------------------------------------------------- what inject and clear run

def test_nic_mtu_sets_1500_then_the_fabric_mtu(ctx):
    fl.inject(ctx, "nic_mtu", "sim-dgx2")
    fl.clear(ctx, "nic_mtu", "sim-dgx2")
    assert argvs(ctx) == [[PODSIM, "exec", "sim-dgx2", "--", "ip", "link", "set", "dev", "enp132s0", "mtu", "1500"],
                          [PODSIM, "exec", "sim-dgx2", "--", "ip", "link", "set", "dev", "enp132s0", "mtu", "9000"]]
    assert ctx.records() == {}


def test_nic_address_swaps_the_modelled_address_for_an_unused_one_and_back(ctx):
    fl.inject(ctx, "nic_address")
    fl.clear(ctx, "nic_address")
    inject, clear = (a[-1] for a in argvs(ctx))
    assert argvs(ctx)[0][:4] == [PODSIM, "exec", "sim-dgx4", "--"]
    assert "ip addr del 198.18.5.14/24 dev enp5s0" in inject and "ip addr add 198.18.5.114/24 dev enp5s0" in inject
    assert "ip addr del 198.18.5.114/24 dev enp5s0" in clear and "ip addr add 198.18.5.14/24 dev enp5s0" in clear
    assert fl.wrong_address("198.18.5.14") == "198.18.5.114" and fl.wrong_address("198.18.5.212") == "198.18.5.112"


@pytest.mark.parametrize("ofed", [None, "MLNX_OFED_LINUX-5.8-3.0.7.0", "MLNX_OFED_LINUX-4.9-7.1.0.0"])
def test_qos_faults_keep_the_settings_they_change_and_put_them_back(tmp_path, ofed):
    healthy = qos_healthy(ofed)  # every mlnx_qos format the stand-in prints
    assert "Priority trust state: dscp" in healthy and "PFC configuration:" in healthy
    ctx = FakeCtx(tmp_path, lambda argv: healthy if argv[-2:] == ["-i", "enp139s0"] else "")
    fl.inject(ctx, "qos_pfc_off", "sim-dgx3")
    fl.inject(ctx, "qos_pfc_off", "sim-dgx3")  # again: the first snapshot stays
    assert ctx.records() == {"qos_pfc_off@sim-dgx3": {"qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}}}
    fl.clear(ctx, "qos_pfc_off", "sim-dgx3")
    exe = [PODSIM, "exec", "sim-dgx3", "--", "mlnx_qos", "-i", "enp139s0"]
    assert argvs(ctx) == [exe, exe + ["--pfc", "0,0,0,0,0,0,0,0"], exe + ["--pfc", "0,0,0,0,0,0,0,0"],
                          exe + ["--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]]
    assert ctx.records() == {}


def test_a_clear_without_a_record_puts_the_model_back(ctx):
    fl.clear(ctx, "qos_trust_pcp")
    assert argvs(ctx) == [[PODSIM, "exec", "sim-dgx4", "--", "mlnx_qos", "-i", "enp139s0", "--trust", "dscp",
                           "--pfc", "0,0,0,1,0,0,0,0"]]


def test_storage_faults_signal_the_recorded_daemon_or_remount_through_the_deploy(ctx):
    fl.inject(ctx, "storage_frozen")
    fl.clear(ctx, "storage_frozen")
    fl.inject(ctx, "mount_missing", "sim-dgx1")
    fl.clear(ctx, "mount_missing", "sim-dgx1")
    fl.inject(ctx, "storage_stopped")
    ctx.dead.add(6161)
    fl.inject(ctx, "storage_stopped")  # again: stopped already, nothing signalled
    fl.clear(ctx, "storage_stopped")
    assert argvs(ctx) == [
        ["kill", "-STOP", "5151"], ["kill", "-CONT", "5151"],
        [PODSIM, "exec", "sim-dgx1", "--", "sh", "-c", "! mountpoint -q /mnt/isilon3 || umount /mnt/isilon3"],
        ["ansible-playbook", "playbooks/storage.yml", "-l", "sim-dgx1"],
        ["kill", "-TERM", "6161"],
        [PODSIM, "up", "--nodes", "4", "--storage", "2"], ["ansible-playbook", "playbooks/storage.yml"]]


def test_a_daemon_the_simulator_did_not_record_or_that_has_gone_is_never_signalled(ctx):
    del ctx.state["members"]["sim-isilon1"]
    with pytest.raises(RuntimeError, match="no recorded ganesha running on sim-isilon1"):
        fl.inject(ctx, "storage_frozen", "sim-isilon1")
    ctx.dead.add(4242)  # sshd died (its pid may be anyone's now)
    with pytest.raises(RuntimeError, match="no recorded sshd running on sim-dgx4"):
        fl.inject(ctx, "dgx_unreachable")
    fl.clear(ctx, "dgx_unreachable")
    assert not [a for a in argvs(ctx) if a[0] == "kill"]
    assert "storage_frozen@sim-isilon1" in ctx.records()  # `fault clear all` still sees it


def test_the_real_liveness_check_compares_the_start_time():
    with open("/proc/self/stat") as fh:
        start = int(fh.read().rsplit(")", 1)[1].split()[19])
    assert fl.Ctx.is_alive({"pid": os.getpid(), "start": start})
    assert not fl.Ctx.is_alive({"pid": os.getpid(), "start": start + 1})
    assert not fl.Ctx.is_alive({"pid": 2 ** 22 + 1, "start": 0}) and not fl.Ctx.is_alive({})


def test_container_gpu_and_shape_faults_use_the_existing_verbs(tmp_path):
    current = {"missing_gpu": 7, "nvlink_down": [3, 4], "no_peermem": True}
    ctx = FakeCtx(tmp_path, lambda argv: json.dumps(current) if argv == [PODSIM, "gpu", "sim-dgx1"] else "")
    fl.inject(ctx, "mpi_container_stopped")
    fl.clear(ctx, "mpi_container_stopped")
    fl.inject(ctx, "gpu_missing")
    fl.clear(ctx, "gpu_missing")
    fl.inject(ctx, "slow_storage")
    fl.clear(ctx, "slow_storage")
    assert argvs(ctx) == [
        [PODSIM, "exec", "sim-dgx3", "--", "podman", "stop", "--time", "1", "dgxpod-mpi"],
        [PODSIM, "exec", "sim-dgx3", "--", "podman", "start", "dgxpod-mpi"],
        [PODSIM, "gpu", "sim-dgx1", "--fault", "missing_gpu=7"],
        [PODSIM, "gpu", "sim-dgx1"],
        # the clear takes only its own fault away: the others set on the node stay
        [PODSIM, "gpu", "sim-dgx1", "--clear", "--fault", "no_peermem=1", "--fault", "nvlink_down=3:4"],
        [PODSIM, "shape", "sim-isilon2", "40gige-1", "--rate", "1gbit"],
        [PODSIM, "shape", "sim-isilon2", "40gige-1", "--clear"]]


def test_deploy_files_are_kept_and_written_back_exactly(tmp_path):
    hosts = ("127.0.0.1 localhost\n# BEGIN dgxpod hosts\n198.18.5.11 sim-dgx1\n198.18.5.12 sim-dgx2\n"
             "198.18.5.13 sim-dgx3\n# END dgxpod hosts\n")
    env = "NCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_SOCKET_IFNAME=enp5s0\n"

    def answers(argv):
        if "stat -c %a /etc/hosts" in argv[-1]:
            return "644\n" + hosts
        if "stat -c %a /etc/dgxpod/nccl.env" in argv[-1]:
            return "640\n" + env
        return ""
    ctx = FakeCtx(tmp_path, answers)
    fl.inject(ctx, "hosts_entry_changed")
    fl.inject(ctx, "hosts_entry_changed")
    fl.clear(ctx, "hosts_entry_changed")
    writes = [c for c in ctx.cmds if c[1] is not None]
    changed = hosts.replace("198.18.5.13 sim-dgx3", "198.18.5.113 sim-dgx3")
    assert writes == [([PODSIM, "exec", "sim-dgx2", "--", "sh", "-c", "cat > /etc/hosts"], changed)] * 2 + [
        ([PODSIM, "exec", "sim-dgx2", "--", "sh", "-c", "cat > /etc/hosts && chmod 644 /etc/hosts"], hosts)]
    ctx.cmds.clear()
    fl.inject(ctx, "nccl_env_deleted")
    fl.clear(ctx, "nccl_env_deleted")
    assert ctx.cmds[1:] == [
        ([PODSIM, "exec", "sim-dgx4", "--", "rm", "-f", "/etc/dgxpod/nccl.env"], None),
        ([PODSIM, "exec", "sim-dgx4", "--", "sh", "-c", "cat > /etc/dgxpod/nccl.env && chmod 640 "
          "/etc/dgxpod/nccl.env"], env)]


FSTAB = ("UUID=1234-abcd / ext4 errors=remount-ro 0 1\n/mnt/isilon2 /srv/bind none bind 0 0\n"
         "# BEGIN dgxpod nfs_client (managed by the pod toolkit: edit the inventory, not these lines)\n"
         "nfs://198.18.66.211/ifs /mnt/isilon1 fuse.podsim-nfs rsize=524288,wsize=524288,nolock 0 0\n"
         "nfs://198.18.5.212/ifs /mnt/isilon2 fuse.podsim-nfs rsize=524288,wsize=524288,nolock 0 0\n"
         "# END dgxpod nfs_client\n")


def test_fstab_option_changed_edits_one_managed_line_and_is_put_back_exactly(tmp_path):
    ctx = FakeCtx(tmp_path, lambda argv: ("600\n" + FSTAB) if "stat -c %a /etc/fstab" in argv[-1] else "")
    fl.inject(ctx, "fstab_option_changed")
    fl.inject(ctx, "fstab_option_changed")  # a second inject keeps the healthy snapshot
    fl.clear(ctx, "fstab_option_changed")
    writes = [c for c in ctx.cmds if c[1] is not None]
    changed = FSTAB.replace("/mnt/isilon2 fuse.podsim-nfs rsize=524288,wsize=524288,nolock",
                            "/mnt/isilon2 fuse.podsim-nfs rsize=65536,wsize=524288,nolock")
    assert writes == [([PODSIM, "exec", "sim-dgx3", "--", "sh", "-c", "cat > /etc/fstab"], changed)] * 2 + [
        ([PODSIM, "exec", "sim-dgx3", "--", "sh", "-c", "cat > /etc/fstab && chmod 600 /etc/fstab"], FSTAB)]
    assert fl.BY_NAME["fstab_option_changed"].checks == ("drift_fstab",)


def test_fstab_with_changed_option_touches_only_the_managed_line():
    out = fl.fstab_with_changed_option(FSTAB, "/mnt/isilon1", "timeo", "14")  # an option not there is added
    assert out.splitlines()[3] == "nfs://198.18.66.211/ifs /mnt/isilon1 fuse.podsim-nfs rsize=524288,wsize=524288," \
                                  "nolock,timeo=14 0 0"
    assert [a for a, b in zip(out.splitlines(), FSTAB.splitlines(), strict=True) if a != b] == [out.splitlines()[3]]
    with pytest.raises(ValueError, match="no managed line for /mnt/isilon9"):
        fl.fstab_with_changed_option(FSTAB, "/mnt/isilon9", "rsize", "1")
    with pytest.raises(ValueError, match="no managed line"):  # outside the block is the owner's, never edited
        fl.fstab_with_changed_option(FSTAB.split("# BEGIN")[0], "/mnt/isilon2", "rsize", "1")


def test_hosts_with_changed_entry_changes_only_the_named_lines():
    text = "127.0.0.1 localhost\n198.18.5.13 sim-dgx3 # data\n198.18.5.113 sim-dgx30\n::1 ip6-localhost\n"
    want = text.replace("198.18.5.13 sim-dgx3 ", "198.18.5.113 sim-dgx3 ")
    assert fl.hosts_with_changed_entry(text, "sim-dgx3") == want


def test_an_unreachable_dgx_freezes_only_the_recorded_sshd_and_ends_its_sessions(tmp_path):
    ctx = FakeCtx(tmp_path, lambda argv: " 777\n 778\n" if argv[:3] == ["ps", "-o", "pid="] else "")
    fl.inject(ctx, "dgx_unreachable")
    fl.clear(ctx, "dgx_unreachable")
    assert argvs(ctx) == [["kill", "-STOP", "4242"], ["ps", "-o", "pid=", "--ppid", "4242"],
                          ["kill", "-TERM", "777", "778"], ["kill", "-CONT", "4242"]]


# --------------------------------------------------------------------------- switches (the real `podsim switch`)

HEALTHY_PORT = ["mtu 9214", "qos trust dscp", "priority-flow-control on", "priority-flow-control priority 3 no-drop"]


@pytest.fixture
def switched(ctx):
    for sw in pm.SWITCHES:
        state = new_state("eos", sw)
        state["running"] += [["interface Ethernet%d/1" % i, list(HEALTHY_PORT)] for i in range(1, 11)]
        state["faults"] = {"delay": 0.1}  # a fault set by someone else stays
        write_state(os.path.join(ctx.root, "switches", sw + ".json"), state)
    return ctx


def test_switch_config_faults_are_typed_at_the_console_and_cleared_byte_for_byte(switched):
    ctx = switched
    before = ctx.switch_state("sim-sw2")["running"]
    fl.inject(ctx, "switch_port_mtu")  # sim-dgx3 enp132s0 -> sim-sw2 Ethernet3/1
    fl.inject(ctx, "switch_port_mtu")
    port = dict((k, v) for k, v in ctx.switch_state("sim-sw2")["running"] if v is not None)["interface Ethernet3/1"]
    assert "mtu 1500" in port and "mtu 9214" not in port
    fl.clear(ctx, "switch_port_mtu")
    assert ctx.switch_state("sim-sw2")["running"] == before
    fl.inject(ctx, "switch_pfc_removed")  # sim-dgx2 enp139s0 -> sim-sw2 Ethernet6/1
    port = dict((k, v) for k, v in ctx.switch_state("sim-sw2")["running"] if v is not None)["interface Ethernet6/1"]
    assert port == ["mtu 9214", "qos trust dscp"]
    fl.clear(ctx, "switch_pfc_removed")
    assert ctx.switch_state("sim-sw2")["running"] == before and ctx.records() == {}
    assert argvs(ctx)[0] == [PODSIM, "switch", "sim-sw2", "--cli", "enable", "--cli", "configure", "--cli",
                             "interface Ethernet3/1", "--cli", "mtu 1500", "--cli", "end"]


def test_switch_operational_faults_set_and_remove_only_their_key(switched):
    ctx = switched
    fl.inject(ctx, "switch_port_down")  # sim-dgx4 enp12s0 -> sim-sw1 Ethernet8/1
    assert ctx.switch_state("sim-sw1")["faults"] == {"delay": 0.1, "port_down": "Ethernet8/1"}
    fl.clear(ctx, "switch_port_down")
    fl.inject(ctx, "switch_cable_swap")  # sim-dgx1 enp5s0 and sim-dgx2 enp5s0
    assert ctx.switch_state("sim-sw1")["faults"] == {"delay": 0.1, "swap": "Ethernet1/1,Ethernet2/1"}
    fl.clear(ctx, "switch_cable_swap")
    assert ctx.switch_state("sim-sw1")["faults"] == {"delay": 0.1}
    fl.inject(ctx, "switch_cable_swap", "sim-dgx4")  # the last DGX swaps with the first
    assert ctx.switch_state("sim-sw1")["faults"]["swap"] == "Ethernet4/1,Ethernet1/1"
    assert fl.clear_all(ctx) == ["switch_cable_swap@sim-dgx4"]
    assert ctx.switch_state("sim-sw1")["faults"] == {"delay": 0.1}


def test_switch_optics_and_environment_faults_set_and_remove_only_their_key(switched):
    ctx = switched
    fl.inject(ctx, "switch_optic_rx_low")  # sim-dgx2 enp132s0 -> sim-sw2 Ethernet2/1
    assert ctx.switch_state("sim-sw2")["faults"] == {"delay": 0.1, "optic_rx_low": "Ethernet2/1"}
    fl.inject(ctx, "switch_psu_failed")
    fl.inject(ctx, "switch_fan_failed")
    assert ctx.switch_state("sim-sw1")["faults"] == {"delay": 0.1, "psu_failed": "2", "fan_failed": "3/1"}
    assert fl.get("switch_fan_failed").targets(pm.pod_shape(4, 2), "sim-dgx1") == ("sim-sw1",)
    assert sorted(fl.clear_all(ctx)) == ["switch_fan_failed@sim-dgx1", "switch_optic_rx_low@sim-dgx2",
                                         "switch_psu_failed@sim-dgx1"]
    assert ctx.switch_state("sim-sw1")["faults"] == ctx.switch_state("sim-sw2")["faults"] == {"delay": 0.1}


def test_targets_name_the_switch_for_switch_faults_and_the_node_otherwise():
    pod = pm.pod_shape(4, 2)
    assert fl.get("switch_port_mtu").targets(pod, "sim-dgx3") == ("sim-sw2",)
    assert fl.get("switch_port_down").targets(pod, "sim-dgx4") == ("sim-sw1",)
    assert fl.get("storage_frozen").targets(pod, "sim-isilon2") == ("sim-isilon2",)
    assert fl.get("nic_mtu").targets(pod, "sim-dgx1") == ("sim-dgx1",)
    with pytest.raises(ValueError, match="no node sim-dgx9"):
        fl.get("switch_port_mtu").targets(pod, "sim-dgx9")


def test_clear_all_clears_newest_first_and_forgets_them(tmp_path):
    ctx = FakeCtx(tmp_path, lambda argv: QOS_HEALTHY if argv[-2:] == ["-i", "enp139s0"] else "")
    fl.inject(ctx, "nic_down")
    fl.inject(ctx, "qos_trust_pcp")
    ctx.cmds.clear()
    assert fl.clear_all(ctx) == ["qos_trust_pcp@sim-dgx4", "nic_down@sim-dgx2"]
    assert argvs(ctx) == [
        [PODSIM, "exec", "sim-dgx4", "--", "mlnx_qos", "-i", "enp139s0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"],
        [PODSIM, "exec", "sim-dgx2", "--", "ip", "link", "set", "dev", "enp12s0", "up"]]
    assert ctx.records() == {} and fl.clear_all(ctx) == []


# --------------------------------------------------------------------------- node health (issue 39 item 7)

NODE_FAULTS = {"node_xid79": ("xid79=3", "kernel_xid"), "node_xid48": ("xid48=2", "kernel_xid"),
               "node_aer_hca": ("aer_hca=mlx5_1", "kernel_aer"),
               "node_link_flap": ("link_flap=mlx5_2", "kernel_link_flap"),
               "node_dimm_missing": ("dimm_missing=1", "bmc_sel"),
               "node_nvme_critical": ("nvme_critical=1", "host_nvme"),
               "node_psu_failed": ("psu_failed=2", "bmc_sensors")}


@pytest.mark.parametrize("name", sorted(NODE_FAULTS))
def test_the_node_faults_of_issue_39_are_catalogued_on_the_node_stage(tmp_path, name):
    setting, check = NODE_FAULTS[name]
    f = fl.BY_NAME[name]
    assert (f.layer, f.tags) == ("node", ("node",)) and check in f.checks, f
    assert setting.split("=")[0] in node_standins.FAULT_KEYS
    ctx = FakeCtx(tmp_path)
    fl.inject(ctx, name)
    assert argvs(ctx) == [[PODSIM, "node", f.node, "--fault", setting]]


def test_node_faults_use_the_node_verb_and_clear_only_their_own(tmp_path):
    current = {"psu_failed": 2, "xid79": 3, "aer_hca": "mlx5_1", "dimm_missing": True}
    ctx = FakeCtx(tmp_path, lambda argv: json.dumps(current) if argv == [PODSIM, "node", "sim-dgx1"] else "")
    fl.inject(ctx, "node_psu_failed")
    fl.clear(ctx, "node_psu_failed")
    assert argvs(ctx) == [
        [PODSIM, "node", "sim-dgx1", "--fault", "psu_failed=2"],
        [PODSIM, "node", "sim-dgx1"],
        [PODSIM, "node", "sim-dgx1", "--clear", "--fault", "aer_hca=mlx5_1", "--fault", "dimm_missing=1",
         "--fault", "xid79=3"]]


# --------------------------------------------------------------------------- HCA port counters (issue 40 item 2)

def counters_answer(values):
    """The node as the HCA counter faults see it: the counters' ``<name> <value>`` lines, the ticker's pid and
    start time when it is started."""
    def answer(argv):
        script = argv[-1]
        if "podsim-hca-ticker" in script:
            return "4321 987654\n"
        if script.startswith("cd /etc/podsim/sysfs/"):
            return "".join("%s %s\n" % kv for kv in sorted(values.items()))
        return ""
    return answer


def test_hca_symbol_errors_start_a_ticker_in_the_node_and_the_clear_stops_it_and_restores_the_counter(tmp_path):
    ctx = FakeCtx(tmp_path, counters_answer({"counters/symbol_error": "7"}))
    fl.inject(ctx, "hca_symbol_errors")
    fl.inject(ctx, "hca_symbol_errors")  # again: the ticker runs, nothing more is started
    port = "/etc/podsim/sysfs/sys/class/infiniband/mlx5_1/ports/1"
    assert ctx.records() == {"hca_symbol_errors@sim-dgx2": {"counters": {"counters/symbol_error": "7"},
                                                            "ticker": {"pid": 4321, "start": 987654}}}
    fl.clear(ctx, "hca_symbol_errors")
    cmds = argvs(ctx)
    assert cmds[0][:6] == [PODSIM, "exec", "sim-dgx2", "--", "sh", "-c"]
    assert cmds[0][6] == "cd %s && for f in counters/symbol_error; do printf '%%s ' $f; cat $f; done" % port
    assert cmds[1][6].startswith("/usr/local/sbin/podsim-hca-ticker %s counters/symbol_error=20 --interval 1 "
                                 "</dev/null" % port)
    assert "& echo $!" in cmds[1][6] and len(cmds) == 4
    assert cmds[2] == ["kill", "-TERM", "4321"]
    assert cmds[3][6].startswith("for i in $(seq 50); do kill -0 4321")
    assert cmds[3][6].endswith("printf '%%s\\n' 7 > %s/counters/symbol_error" % port)
    assert ctx.records() == {}


def test_hca_link_flap_raises_link_downed_and_recoveries_and_a_dead_ticker_is_never_signalled(tmp_path):
    ctx = FakeCtx(tmp_path, counters_answer({"counters/link_downed": "0", "counters/link_error_recovery": "3"}))
    fl.inject(ctx, "hca_link_flap")
    ctx.dead.add(4321)  # the ticker died (the node restarted): the clear only restores the files
    fl.clear(ctx, "hca_link_flap")
    port = "/etc/podsim/sysfs/sys/class/infiniband/mlx5_3/ports/1"
    cmds = argvs(ctx)
    assert ("podsim-hca-ticker %s counters/link_downed=1 counters/link_error_recovery=1 --interval 1 " % port
            in cmds[1][6])
    assert not [a for a in cmds if a[0] == "kill"] and cmds[0][2] == "sim-dgx3"
    assert cmds[2][6] == ("printf '%%s\\n' 0 > %s/counters/link_downed; printf '%%s\\n' 3 > "
                          "%s/counters/link_error_recovery" % (port, port))


def test_an_hca_counter_fault_on_a_node_without_the_counters_is_not_injected(tmp_path):
    ctx = FakeCtx(tmp_path, counters_answer({}))
    with pytest.raises(RuntimeError, match="no readable counters/symbol_error"):
        fl.inject(ctx, "hca_symbol_errors")
    assert not [a for a in argvs(ctx) if "podsim-hca-ticker" in a[-1]]
    fl.clear(ctx, "hca_symbol_errors")  # no record: the healthy value, 0
    assert argvs(ctx)[-1][6] == ("printf '%s\\n' 0 > /etc/podsim/sysfs/sys/class/infiniband/mlx5_1/ports/1/"
                                 "counters/symbol_error")


def test_the_hca_counter_faults_name_the_counters_checks_and_the_hca():
    import podsim_hca_ticker as ticker
    for name, hca, netdev in (("hca_symbol_errors", "mlx5_1", "enp12s0"), ("hca_link_flap", "mlx5_3", "enp139s0")):
        f = fl.BY_NAME[name]
        # tag network: the drill's network runs (iperf3 skipped) read the counters 3-4 s apart, several ticks;
        # --tags counters alone reads them about a second apart
        assert f.layer == "host-network" and f.tags == ("network",) and hca in f.summary and netdev in f.summary
        assert all(c in emittable_checks() for c in f.checks)
        h = hw.default_state(f.node, 1)["hcas"][hca]
        assert h["netdev"] == netdev
    assert {"symbol_error", "link_downed", "link_error_recovery"} <= set(ticker.CAPS)


def test_the_rdma_faults_shape_one_rail_and_break_one_hca_of_the_perftest_stand_ins(tmp_path):
    import podsim_rdma
    from faults.mechanisms import RDMA_FAULTS
    ctx = FakeCtx(tmp_path)
    for name in ("rdma_rail_slow", "rdma_hca_broken"):
        fl.inject(ctx, name)
        fl.clear(ctx, name)
        f = fl.BY_NAME[name]
        assert f.tags == ("rdma",) and all(c in emittable_checks() for c in f.checks)
    got = argvs(ctx)
    assert got[:2] == [[PODSIM, "shape", "sim-dgx1", "enp139s0", "--rate", "500mbit"],
                       [PODSIM, "shape", "sim-dgx1", "enp139s0", "--clear"]]
    assert got[2][:5] == [PODSIM, "exec", "sim-dgx3", "--", "sh"] and RDMA_FAULTS == podsim_rdma.FAULTS_PATH
    assert hw.default_state("sim-dgx3", 3)["hcas"]["mlx5_1"]["netdev"] == "enp12s0"
    # the node's line, run here on a file of its own: it sets, then takes away, only its own HCA's fault
    path = tmp_path / "rdma_faults.json"
    path.write_text(json.dumps({"mlx5_0": "rtr"}))
    inject, clear = (a[-1].replace(RDMA_FAULTS, str(path)) for a in got[2:4])
    subprocess.run(["sh", "-c", inject], check=True)
    assert podsim_rdma.load_faults(str(path)) == {"mlx5_0": "rtr", "mlx5_1": "rtr"}
    subprocess.run(["sh", "-c", clear], check=True)
    assert podsim_rdma.load_faults(str(path)) == {"mlx5_0": "rtr"}


# --------------------------------------------------------------------------- InfiniBand fabric (issue 40 item 5)

def test_the_ib_faults_are_the_issues_and_name_what_the_ib_stage_emits():
    names = [f.name for f in fl.IB_FAULTS]
    assert names == ["ib_cable_swap", "ib_link_1x", "ib_link_slow", "ib_no_sm", "ib_two_sm"]
    assert not set(names) & {f.name for f in fl.CATALOGUE} and all(fl.BY_NAME[n] for n in names)
    known, tags = emittable_checks(), validate_tags()
    for f in fl.IB_FAULTS:
        assert f.layer == fl.IB_LAYER == "fabric" and f.tags == ("ib",) and set(f.tags) <= tags
        assert set(f.checks) <= known and f.keywords and f.summary, f
        assert f.node in {n.name for n in pm.pod_shape(4, 2).dgx}, f


def test_an_ib_fault_sets_the_stand_ins_fabric_fault_and_its_clear_keeps_the_others(tmp_path):
    current = {"width": {"sim-dgx3 mlx5_2": "1X"}, "swap": ["sim-dgx1 mlx5_1", "sim-dgx2 mlx5_1"], "no_sm": True}
    c = FakeCtx(tmp_path, answers=lambda argv: json.dumps(current) if argv == [fl.PODSIM, "ib"] else "{}")
    fl.inject(c, "ib_link_1x")
    assert argvs(c) == [[fl.PODSIM, "ib", "--fault", "width=sim-dgx3:mlx5_2:1X"]]
    c.cmds.clear()
    fl.clear(c, "ib_link_1x")
    assert argvs(c) == [[fl.PODSIM, "ib"], [fl.PODSIM, "ib", "--clear", "--fault", "no_sm=1", "--fault",
                                           "swap=sim-dgx1:mlx5_1,sim-dgx2:mlx5_1"]]
    # what the clear sets again parses as the stand-ins' faults (sim/standins/podsim_ib.py)
    import podsim_ib
    assert podsim_ib.parse_faults(["no_sm=1", "swap=sim-dgx1:mlx5_1,sim-dgx2:mlx5_1"]) == {
        "no_sm": True, "swap": ["sim-dgx1 mlx5_1", "sim-dgx2 mlx5_1"]}
    c.cmds.clear()
    fl.inject(c, "ib_cable_swap")
    fl.inject(c, "ib_two_sm")
    assert argvs(c) == [[fl.PODSIM, "ib", "--fault", "swap=sim-dgx1:mlx5_1,sim-dgx2:mlx5_1"],
                        [fl.PODSIM, "ib", "--fault", "two_sm=1"]]
