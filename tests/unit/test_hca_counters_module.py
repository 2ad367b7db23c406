"""library/dgx_hca_counters.py: gather() on a fake sysfs tree in tmp_path, laid out as a real host's (a RoCE
ConnectX port with the counter files of prometheus/procfs's mlx5_0 fixture, an IB ConnectX-7 port with gpud PR
943's counters and no hw_counters, a device without a PMA as node_exporter issue 966 shows it), then the module
itself through Ansible in check mode. It returns the files' text and the time, never a verdict; counters_eval
parses and judges them."""
from __future__ import annotations

import builtins
import os
import re

import pytest

import dgx_hca_counters as mod  # noqa: E402  (library/)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.hca_counters import parse_sysfs_counters

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fabric")


def fx(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def tree(tmp_path):
    """<tmp>/sys/class/infiniband/{mlx5_0 (RoCE, enp5s0), mlx5_4 (IB, ib0 via device/net), i40iw0 (no PMA)}."""
    root = str(tmp_path)
    ib = "sys/class/infiniband"
    for line in fx("sysfs_counters__procfs_fixtures_mlx5_0.txt").splitlines():
        name, value = line.split(": ", 1)
        write(root, "%s/mlx5_0/ports/1/%s" % (ib, name), value + "\n")
    write(root, ib + "/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)\n")
    write(root, ib + "/mlx5_0/ports/1/state", "4: ACTIVE\n")
    write(root, ib + "/mlx5_0/ports/1/link_layer", "Ethernet\n")
    write(root, ib + "/mlx5_0/ports/1/gid_attrs/ndevs/0", "enp5s0\n")
    write(root, ib + "/mlx5_0/ports/1/counters/.symbol_error.swp", "junk\n")  # not a counter
    for name, value in re.findall(r"=== \./(\S+) ===\n([^\n]*\n)", fx("sysfs_counters__gpud_pr943_cx7_saturated.txt")):
        write(root, "%s/mlx5_4/ports/1/counters/%s" % (ib, name), value)
    write(root, ib + "/mlx5_4/ports/1/rate", "400 Gb/sec (4X NDR)\n")
    write(root, ib + "/mlx5_4/ports/1/link_layer", "InfiniBand\n")
    os.makedirs(os.path.join(root, ib, "mlx5_4/device/net/ib0"))
    for line in fx("sysfs_counters__node_exporter_issue966_i40iw_no_pma.txt").splitlines():
        path, value = line.split("counters/", 1)[1].split(":", 1)
        write(root, "%s/i40iw0/ports/1/counters/%s" % (ib, path), value + "\n")
    return root


def test_every_port_is_read_with_its_files_text_rate_and_netdev(tree):
    got = mod.gather(tree, clock=lambda: 1234.5)
    assert got["time"] == 1234.5 and got["sysfs_root"] == tree and got["notes"] == []
    assert sorted(got["ports"]) == ["i40iw0/1", "mlx5_0/1", "mlx5_4/1"]
    roce = got["ports"]["mlx5_0/1"]
    assert (roce["hca"], roce["port"], roce["netdev"], roce["rate"], roce["state"], roce["link_layer"]) == (
        "mlx5_0", 1, "enp5s0", "100 Gb/sec (4X EDR)", "4: ACTIVE", "Ethernet")
    assert roce["counters"]["counters/symbol_error"] == "0\n"  # the text as read
    assert roce["counters"]["hw_counters/local_ack_timeout_err"] == "131\n"
    assert not any("/." in k for k in roce["counters"]) and roce["errors"] == []
    assert len(parse_sysfs_counters(roce["counters"])) == 46  # what the evaluation reads
    ib = got["ports"]["mlx5_4/1"]
    assert ib["netdev"] == "ib0" and ib["errors"] == ["mlx5_4/ports/1/hw_counters: not there"]
    assert parse_sysfs_counters(ib["counters"])["link_downed"] == 255
    no_pma = parse_sysfs_counters(got["ports"]["i40iw0/1"]["counters"])
    assert no_pma and set(no_pma.values()) == {None}  # N/A (no PMA): not provided, never 0


def test_a_file_that_cannot_be_read_is_none(tree, monkeypatch):
    real_open = builtins.open

    def refusing(path, *a, **k):
        if str(path).endswith("hw_counters/out_of_buffer"):
            raise OSError(22, "Invalid argument")
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", refusing)
    got = mod.gather(tree, ["mlx5_0"])
    assert got["ports"]["mlx5_0/1"]["counters"]["hw_counters/out_of_buffer"] is None
    assert parse_sysfs_counters(got["ports"]["mlx5_0/1"]["counters"])["out_of_buffer"] is None


def test_devices_selects_and_names_a_device_that_is_not_there(tree, tmp_path):
    got = mod.gather(tree, ["mlx5_4", "mlx5_9"])
    assert list(got["ports"]) == ["mlx5_4/1"]
    assert got["notes"] == ["mlx5_9: no such RDMA device under %s/sys/class/infiniband" % tree]
    empty = mod.gather(str(tmp_path / "nothing"))
    assert empty["ports"] == {} and "no RDMA device port found" in empty["notes"][0]


def test_the_module_through_ansible_in_check_mode(tree):
    from playbook_util import run_module
    res = run_module("dgx_hca_counters", {"sysfs_root": tree, "devices": ["mlx5_0"]}, check=True)
    assert not res.get("failed") and res["changed"] is False, res
    assert list(res["hca_counters"]["ports"]) == ["mlx5_0/1"]
    assert res["hca_counters"]["ports"]["mlx5_0/1"]["counters"]["counters/port_xmit_data"] == "2880761508848\n"
    bad = run_module("dgx_hca_counters", {"sysfs_root": os.path.join(tree, "no", "such")})
    assert bad.get("failed") and "is not a directory" in bad["msg"]


# --------------------------------------------------------------------------- the start and end plays

def test_the_start_and_end_plays_record_both_readings_and_a_rise_is_found(tmp_path):
    """playbooks/validate_counters_start.yml, a counter rising on one DGX, playbooks/validate_counters.yml: the
    record holds both readings per DGX and counters_eval fails that HCA's symbol errors; the end play run alone
    records no start, and every HCA is skipped. Two DGX on localhost, each with the simulator's stand-in tree."""
    import json
    import subprocess

    import yaml

    import podsim_hw as hw
    from inventory_util import ROOT
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import counters_eval

    trees = {}
    for i, name in enumerate(("dgx-a", "dgx-b"), 1):
        trees[name] = str(tmp_path / name)
        state = hw.default_state(name, i)
        hw.write_fake_sysfs(trees[name], state, {h["netdev"]: ["198.18.%d.1%d" % (k, i)]
                                                 for k, h in enumerate(state["hcas"].values())},
                            live_class_net=str(tmp_path / "none"))
    inv = tmp_path / "hosts.ini"
    inv.write_text("[dgx]\n" + "".join(
        "%s ansible_connection=local ansible_python_interpreter=%s dgx_network_sysfs_root=%s\n" % (
            name, os.path.join(ROOT, ".venv", "bin", "python"), root) for name, root in trees.items()))
    symbol = os.path.join(trees["dgx-b"], "sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error")
    dump = {"name": "dump", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"ansible.builtin.copy": {"content": "{{ pod_stages | to_json }}", "dest": str(tmp_path / "stages.json"),
                                  "mode": "0644"}}]}
    both = tmp_path / "both.yml"
    both.write_text(yaml.safe_dump([
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_counters_start.yml")},
        {"name": "traffic", "hosts": "localhost", "gather_facts": False, "tasks": [
            {"ansible.builtin.copy": {"content": "500\n", "dest": symbol, "mode": "0644"}}]},
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_counters.yml")}, dump]))
    alone = tmp_path / "alone.yml"
    alone.write_text(yaml.safe_dump([{"import_playbook": os.path.join(ROOT, "playbooks", "validate_counters.yml")},
                                     dump]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")

    def stage(playbook):
        res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", str(inv), str(playbook)],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
        return json.loads((tmp_path / "stages.json").read_text())["hca_counters"]

    recorded = stage(both)
    assert sorted(recorded["hosts"]) == ["dgx-a", "dgx-b"]
    b = recorded["hosts"]["dgx-b"]
    assert b["start"]["error"] is None and b["end"]["error"] is None
    assert b["start"]["hca_counters"]["ports"]["mlx5_1/1"]["counters"]["counters/symbol_error"] == "0\n"
    assert b["end"]["hca_counters"]["ports"]["mlx5_1/1"]["counters"]["counters/symbol_error"] == "500\n"
    results = counters_eval.evaluate(recorded, {})
    bad = [(r.check, r.host) for r in results if r.status not in ("pass", "skipped")]
    assert bad == [("hca_symbol_error", "dgx-b mlx5_1 (enp12s0)")]
    assert len({(r.subject.node, r.subject.hca) for r in results}) == 8  # every HCA of both DGX

    recorded = stage(alone)
    results = counters_eval.evaluate(recorded, {})
    assert {r.status for r in results} == {"skipped"} and len(results) == 8


def test_validate_yml_reads_the_counters_before_every_stage_that_moves_traffic_and_after_the_last():
    import yaml

    from inventory_util import ROOT
    with open(os.path.join(ROOT, "validate.yml")) as f:
        items = yaml.safe_load(f)
    order = [os.path.basename(i["ansible.builtin.import_playbook"]) for i in items]
    start, end = order.index("validate_counters_start.yml"), order.index("validate_counters.yml")
    traffic = [p for p in ("validate_fio_start.yml", "validate_perf.yml", "validate_rdma.yml", "validate_nccl.yml",
                           "validate_training.yml") if p in order]
    assert len(traffic) >= 4 and all(start < order.index(p) < end for p in traffic) and end < order.index("report.yml")
    for i in (start, end):
        assert items[i]["tags"] == ["counters", "network", "rdma"]  # never a tag the state-only runs skip
    with open(os.path.join(ROOT, "playbooks", "validate_counters.yml")) as f:
        assert all(play["tags"] == ["counters", "network", "rdma"] for play in yaml.safe_load(f))
