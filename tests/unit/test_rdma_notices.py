"""Issue 46 (parser notices reach the report): what mlnx_qos and cma_roce_mode say about a NIC they could not read
travels from library/dgx_hw_facts.py (the ``qos`` fact's ``unsupported``/``notices``, ``qos_failed``,
``roce_mode_messages``, ``roce_mode_failed``) through pod.derive.rdma_problem_items to the network check
(network/eval.py), which says it in the tool's words and is never a pass.

Outputs: the fixtures in tests/unit/fixtures/hw/ (each with its ``.source``), run in place of the simulator's
stand-in for one NIC. Two failing runs are composed from the tools' source, Mellanox/mlnx-tools at 8fbfd9cfff34:
python/mlnx_qos prints ``"ETS features are not supported on your system"`` and exits 1 when its ETS/PFC read fails
(line 687, ``sys.exit(1)``: nothing else is printed after the notices before it); sbin/cma_roce_mode prints
``"Device $DEVICE port $PORT does not exist"`` on stdout and exits 1 (the fixture
cma_roce_mode_error__mlnx_tools_script.txt)."""
from __future__ import annotations

import importlib
import json
import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import eval as network_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.derive import rdma_changes, rdma_problem_items
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, CheckResult

from test_hw_facts_module import NICS, node, which_all  # noqa: F401  (node: the simulated DGX fixture)

facts = importlib.import_module("dgx_hw_facts")
network_filters = importlib.import_module("filter_plugins.network")

HW = os.path.join(os.path.dirname(__file__), "fixtures", "hw")
ROCE = [{"name": "enp5s0", "rdma_device": "mlx5_0", "kind": "ethernet", "roce": "lossless"}]
TRUST_NOTICE = "Priority trust state is not supported on your system"
ETS_NOTICE = "ETS features are not supported on your system"  # mlnx-tools python/mlnx_qos line 687, then exit 1


def fixture(name):
    with open(os.path.join(HW, name)) as f:
        return f.read()


def converged(node):  # noqa: F811
    """The simulated DGX after the role configured RoCE: trust dscp, PFC on 3, RoCE v2 on every NIC."""
    state = json.loads(node["state_path"].read_text())
    for h in state["hcas"].values():
        h["roce_mode"] = 2
    for q in state["qos"].values():
        q.update(trust="dscp", pfc=[0, 0, 0, 1, 0, 0, 0, 0])
    node["state_path"].write_text(json.dumps(state))


def replacing(node, tool, argv_tail, rc, out, err=""):  # noqa: F811
    """A run() that answers ``tool argv_tail`` with (rc, out, err) and every other call with the stand-ins."""
    def run(argv):
        if os.path.basename(argv[0]) == tool and argv[1:] == argv_tail:
            return rc, out, err
        return node["run"](argv)
    return run


def gather(node, run):  # noqa: F811
    dgx_hw, _, _, _ = facts.gather_facts(run, which_all, node["root"], NICS, gather=["nics", "qos", "roce_mode"])
    return dgx_hw


# -- the module passes what the tools said on -------------------------------------------------------------------

def test_qos_notices_and_unsupported_features_are_kept_on_the_nic(node):  # noqa: F811
    text = fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))
    q = dgx_hw["nics"]["enp5s0"]["qos"]
    assert q["trust"] is None and q["pfc_priorities"] == [3]
    assert q["unsupported"] == ["trust", "buffers"]
    assert q["notices"] == [TRUST_NOTICE, "Buffers commands are not supported on your system"]
    assert dgx_hw["unreadable"] == [] and "qos_error" not in dgx_hw["nics"]["enp5s0"]
    assert "unsupported" not in dgx_hw["nics"]["enp12s0"]["qos"]  # a NIC without notices: the fact as before


def test_a_rate_limit_notice_keeps_trust_and_pfc(node):  # noqa: F811
    text = fixture("mlnx_qos_ratelimit_unsupported__mlnx_tools_printing_notices.txt")
    q = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))["nics"]["enp5s0"]["qos"]
    assert (q["trust"], q["pfc_priorities"], q["unsupported"]) == ("dscp", [3], ["ratelimit"])
    assert q["notices"] == ["Rate limit is not supported on your system!"]


def test_mlnx_qos_exiting_1_is_said_on_the_nic(node):  # noqa: F811
    out = "%s\n%s\n" % (TRUST_NOTICE, ETS_NOTICE)
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 1, out))
    n = dgx_hw["nics"]["enp5s0"]
    assert "qos" not in n and "qos_error" not in n
    assert n["qos_failed"] == "exit 1: %s; %s" % (TRUST_NOTICE, ETS_NOTICE)
    assert dgx_hw["tool_errors"]["mlnx_qos -i enp5s0"] == "exit 1: " + TRUST_NOTICE  # the note as before


def test_cma_roce_mode_messages_and_failure_are_kept(node):  # noqa: F811
    text = fixture("cma_roce_mode_write_error__mlnx_tools_script_kernel_configfs.txt")
    n = gather(node, replacing(node, "cma_roce_mode", ["-d", "mlx5_0", "-p", "1"], 0, text))["nics"]["enp5s0"]
    assert n["roce_mode"] == "RoCE v1"
    assert n["roce_mode_messages"] == ["/usr/sbin/cma_roce_mode: line 111: echo: write error: Invalid argument"]
    assert "roce_mode_messages" not in gather(node, node["run"])["nics"]["enp5s0"]
    text = fixture("cma_roce_mode_error__mlnx_tools_script.txt")
    n = gather(node, replacing(node, "cma_roce_mode", ["-d", "mlx5_0", "-p", "1"], 1, text))["nics"]["enp5s0"]
    assert "roce_mode" not in n and n["roce_mode_failed"] == "exit 1: Device mlx5_9 port 1 does not exist"


def test_tool_said_keeps_the_output_short():
    assert facts.tool_said("", "Traceback (most recent call last):\n  File x\nKeyError: 'maxrate'\n") == [
        "KeyError: 'maxrate'"]
    assert facts.tool_said("a\nb\n\nc\nd\ne\nf\n", "") == ["a", "b", "c", "d", "(2 more lines)"]
    assert facts.tool_said("", "") == []


# -- the problem text says what the tool said, and the check is not a pass --------------------------------------

def test_an_unsupported_trust_state_is_not_verified_in_the_tools_words(node):  # noqa: F811
    converged(node)
    text = fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))
    (item,) = rdma_problem_items(ROCE, dgx_hw, 3)
    assert item["text"] == ("mlnx_qos on mlx5_0 (enp5s0) said '%s': the NIC's QoS trust could not be verified "
                            "(model: trust dscp)" % TRUST_NOTICE)
    assert item["unread"] is True and item["nic"] == "enp5s0" and TRUST_NOTICE in item["cause"]
    reading = network_filters.dgx_network_reading({"changes": [], "differences": []}, {"checked": 6}, ROCE, dgx_hw)
    r = network_eval.network_result("dgx-1", reading)
    assert r.status == "error" and "enp5s0 could not be read" in r.reason
    (p,) = r.problems
    assert (p.category, p.subject.nic, p.text) == (NODE_STATE, "enp5s0", item["text"])
    d = r.to_dict()
    assert d["problem_subjects"][0]["cause"] == item["cause"] and CheckResult.from_dict(d).to_dict() == d


def test_a_wrong_value_beside_an_unread_one_fails(node):  # noqa: F811
    text = fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))  # RoCE mode v1: wrong
    texts = [i["text"] for i in rdma_problem_items(ROCE, dgx_hw, 3)]
    assert texts[0].startswith("mlnx_qos on mlx5_0 (enp5s0) said '%s'" % TRUST_NOTICE)
    assert texts[1] == "enp5s0 (mlx5_0): RDMA-CM RoCE mode RoCE v1, model RoCE v2"
    reading = network_filters.dgx_network_reading({"changes": [], "differences": []}, {}, ROCE, dgx_hw)
    assert network_eval.network_result("dgx-1", reading).status == "fail"


def test_mlnx_qos_exiting_1_names_trust_and_pfc_unverified(node):  # noqa: F811
    converged(node)
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 1, ETS_NOTICE + "\n"))
    (item,) = rdma_problem_items(ROCE, dgx_hw, 3)
    assert item["text"] == ("mlnx_qos on mlx5_0 (enp5s0): exit 1: %s: the NIC's QoS trust and PFC could not be "
                            "verified (model: trust dscp, PFC on priority 3 only)" % ETS_NOTICE)
    assert item["unread"] and "PFC on priorities" not in item["text"]


def test_pfc_is_still_checked_when_only_the_trust_state_is_unreadable(node):  # noqa: F811
    converged(node)
    text = fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt")
    text = text.replace("enabled     0   0   0   1", "enabled     0   0   0   0")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))
    items = rdma_problem_items(ROCE, dgx_hw, 3)
    assert [bool(i.get("unread")) for i in items] == [True, False]
    assert items[1]["text"] == "enp5s0 (mlx5_0): PFC on priorities [], model [3]"


def test_cma_roce_mode_said_before_the_mode_and_failing(node):  # noqa: F811
    converged(node)
    text = fixture("cma_roce_mode_write_error__mlnx_tools_script_kernel_configfs.txt")
    dgx_hw = gather(node, replacing(node, "cma_roce_mode", ["-d", "mlx5_0", "-p", "1"], 0, text))
    (item,) = rdma_problem_items(ROCE, dgx_hw, 3)
    assert item["text"] == ("enp5s0 (mlx5_0): RDMA-CM RoCE mode RoCE v1, model RoCE v2 (cma_roce_mode on mlx5_0 "
                            "port 1 (enp5s0) said '/usr/sbin/cma_roce_mode: line 111: echo: write error: Invalid "
                            "argument' before it)")
    assert "unread" not in item  # the mode in force was read: it is wrong, not unknown
    text = fixture("cma_roce_mode_error__mlnx_tools_script.txt")
    dgx_hw = gather(node, replacing(node, "cma_roce_mode", ["-d", "mlx5_0", "-p", "1"], 1, text))
    (item,) = rdma_problem_items(ROCE, dgx_hw, 3)
    assert item["text"] == ("cma_roce_mode on mlx5_0 port 1 (enp5s0): exit 1: Device mlx5_9 port 1 does not exist: "
                            "the NIC's RDMA-CM RoCE mode could not be verified (model: RoCE v2)")
    assert item["unread"] and "cma_roce_mode" in item["cause"]


def test_a_converged_nic_with_a_rate_limit_notice_passes(node):  # noqa: F811
    converged(node)
    text = fixture("mlnx_qos_ratelimit_unsupported__mlnx_tools_printing_notices.txt")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))
    assert rdma_problem_items(ROCE, dgx_hw, 3) == []  # rate limits are not part of the lossless model
    reading = network_filters.dgx_network_reading({"changes": [], "differences": []}, {"checked": 6}, ROCE, dgx_hw)
    assert network_eval.network_result("dgx-1", reading).status == "pass"


@pytest.mark.parametrize("hw,unread", [
    ({"qos": {"trust": None, "pfc_priorities": [3], "unsupported": ["trust"]}, "roce_mode": "RoCE v2"}, True),
    ({"qos": {"trust": "pcp", "pfc_priorities": [3]}, "roce_mode": "RoCE v2"}, False),
])
def test_the_deploy_decision_is_unchanged_by_notices(hw, unread):
    """rdma_changes still lists the NIC for `mlnx_qos --trust dscp` (the tool then says why it cannot)."""
    nics = {"enp5s0": dict(hw, link_layer="Ethernet", port_state="PORT_ACTIVE")}
    assert rdma_changes(ROCE, {"nics": nics})["qos"] == [{"name": "enp5s0"}]
    assert bool(rdma_problem_items(ROCE, {"nics": nics})[0].get("unread")) is unread


def test_the_finding_names_the_nic_and_what_the_tool_said(node):  # noqa: F811
    converged(node)
    text = fixture("mlnx_qos_trust_buffers_unsupported__mlnx_tools_printing_notices.txt")
    dgx_hw = gather(node, replacing(node, "mlnx_qos", ["-i", "enp5s0"], 0, text))
    reading = network_filters.dgx_network_reading({"changes": [], "differences": []}, {"checked": 6}, ROCE, dgx_hw)
    (f,) = build_findings([network_eval.network_result("dgx-1", reading).to_dict()])
    assert f["status"] == "error" and f["subject"] == "dgx-1 enp5s0", f
    assert f["summary"] == "dgx-1 enp5s0: QoS trust not verified, mlnx_qos said '%s'" % TRUST_NOTICE, f
