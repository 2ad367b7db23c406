"""The parser contract, checked on every parser of hw_parsers (but the NCCL log), iperf_parse, fio_parse and
scale_parsers, with the real outputs of tests/unit/fixtures as seeds:

    a parser returns the value the text means, or raises ValueError (ParseError / ScaleParseError are
    ValueErrors) naming the tool, the line and what it expected - never another exception, never part of
    the answer presented as the whole.

Properties (Hypothesis, bounded examples; the deterministic ones walk every line of every fixture):
- empty or blank output -> ValueError (or the documented "nothing there" value: [] for ibdev2netdev and
  ibv_devinfo, which print nothing on a host without RDMA devices);
- binary noise, random text, fixture lines mixed with noise -> a value or ValueError, nothing else;
- cut after any line -> ValueError, the full value, or - only where the format has no end marker (a list
  of independent rows) - a shorter list whose entries are exactly the first entries of the full value;
- cut inside a line -> ValueError or the full value (every tool ends its output with a newline; JSON must
  be complete);
- two order-free rows swapped -> the same value (lists compared as multisets); any two lines swapped ->
  a value or ValueError;
- an extra unknown "Name: value" line or extra JSON keys -> ValueError, or the same value with at most new
  keys (known values never change; the line may join the tool's ``messages``/``notices``); an extra field on
  the mlnx_qos buffer line (OFED 5.2+) -> the same value.
"""
from __future__ import annotations

import copy
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.dgxpod.toolkit.plugins.module_utils.network import hw_parsers as hp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_parse import parse_fio
from ansible_collections.dgxpod.toolkit.plugins.module_utils.perf.iperf_parse import parse_iperf3
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.scale_parsers import (parse_mmgetstate,
    parse_mmlscluster, parse_mmlsconfig, parse_mmlslicense, parse_mmlsmount)

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def hw(name, prefix=""):
    with open(os.path.join(FIX, "hw", name)) as f:
        return prefix + f.read()


def perf(name):
    with open(os.path.join(FIX, "perf", name)) as f:
        return f.read()


def scale(name):
    with open(os.path.join(FIX, "scale", name)) as f:
        return f.read().partition("\n---\n")[2]


GPU_FIELDS = ["index", "name", "uuid", "serial", "pci.bus_id", "memory.total", "driver_version"]


class Case:
    """One parser: its function, real outputs, whether a line-prefix may be a shorter valid list, and which
    lines are order-free rows (swapping two adjacent ones must not change the value)."""

    def __init__(self, name, fn, texts, prefix_list=False, rows=None, empty=None):
        self.name, self.fn, self.texts = name, fn, texts
        self.prefix_list = prefix_list  # a cut after a row may be a valid shorter output (no end marker)
        self.rows = re.compile(rows) if rows else None
        self.empty = empty  # the value of an empty output when that is documented, else ValueError


CASES = [
    Case("ibdev2netdev", hp.parse_ibdev2netdev,
         [hw(f) for f in sorted(os.listdir(os.path.join(FIX, "hw"))) if f.startswith("ibdev2netdev")
          and f.endswith(".txt")], prefix_list=True, rows=r"^\S+ port \d+ ", empty=[]),
    Case("ibv_devinfo", hp.parse_ibv_devinfo,
         [hw("ibv_devinfo__004_dgx1.txt"), hw("ibv_devinfo_v__rxe_wsl_notes_rdma_core_compressed.txt"),
          hw("ibv_devinfo_v__rdma_core_50mlnx1_notes_port.txt", "hca_id:\tmlx5_0\n"),
          hw("ibv_devinfo_v__ucx_9724_port.txt", "hca_id:\tmlx5_0\n")],
         prefix_list=True, rows=r"^\s+(fw_ver|node_guid|vendor_id|hw_ver|board_id|sm_lid|port_lid|port_lmc|"
                                r"max_msg_sz|bad_pkey_cntr|qkey_viol_cntr|sm_sl|GID\[)", empty=[]),
    Case("nvidia-smi query (csv)", hp.parse_nvidia_smi_query, [hw("nvidia_smi_query_csv__nuxhash_10.txt")],
         prefix_list=True),
    Case("nvidia-smi query (noheader)", lambda t: hp.parse_nvidia_smi_query(t, GPU_FIELDS),
         ["0, Tesla V100-SXM2-32GB, GPU-1f22bb5e-5f3e-4a0e-9d8b-6a1b2c3d4e5f, 0323117000000, 00000000:06:00.0, "
          "32480, 418.67\n1, Tesla V100-SXM2-32GB, GPU-2f22bb5e-5f3e-4a0e-9d8b-6a1b2c3d4e5f, 0323117000001, "
          "00000000:07:00.0, 32480, 418.67\n"], prefix_list=True, rows=r"^\d+, "),
    Case("nvidia-smi -L", hp.parse_nvidia_smi_list,
         [hw("nvidia_smi_L__nvidia_docker_1060.txt"), hw("nvidia_smi_L__telegraf_5812.txt")], prefix_list=True),
    Case("mlxconfig", hp.parse_mlxconfig_query,
         [hw("mlxconfig_query_e__sriov_network_operator_358.txt",
             "Device #1:\n----------\n\nConfigurations:                              Default         Current"
             "         Next Boot\n"),
          hw("mlxconfig_query__terrencemiao_blog.txt"), hw("mlxconfig_set__jiegec_blog_cx4.txt")],
         prefix_list=True, rows=r"^\s+[A-Z][A-Z0-9_]+(\[[0-9.]+\])?\s+\S"),
    Case("mlnx_qos", hp.parse_mlnx_qos,
         [hw(f) for f in sorted(os.listdir(os.path.join(FIX, "hw"))) if f.startswith("mlnx_qos")
          and f.endswith(".txt")], rows=r"^\s*prio:\d dscp:"),
    Case("cma_roce_mode", hp.parse_cma_roce_mode,
         [hw("cma_roce_mode_v2__rhel7_networking_guide.txt"), hw("cma_roce_mode_v1__mlnx_tools_script.txt"),
          hw("cma_roce_mode_write_error__mlnx_tools_script_kernel_configfs.txt")]),
    Case("show_gids", hp.parse_show_gids,
         [hw(f) for f in sorted(os.listdir(os.path.join(FIX, "hw"))) if f.startswith("show_gids")
          and f.endswith(".txt")], prefix_list=True, rows=r"^mlx\S+\s+\d+\s+\d+\s"),
    Case("iperf3", parse_iperf3, [perf(f) for f in sorted(os.listdir(os.path.join(FIX, "perf")))
                                  if f.startswith("iperf3")]),
    Case("fio", parse_fio, [perf(f) for f in sorted(os.listdir(os.path.join(FIX, "perf"))) if f.startswith("fio")]),
    Case("mmlscluster", parse_mmlscluster, [scale("mmlscluster_ibm_doc.txt"), scale("mmlscluster_cnsa.txt"),
                                            scale("mmlscluster_not_member.txt")], prefix_list=True,
         rows=r"^\s+\d+\s+\S+\s+[0-9.]+\s"),
    Case("mmgetstate", parse_mmgetstate, [scale("mmgetstate_aL_clients.txt"), scale("mmgetstate_a_cnsa.txt"),
                                          scale("mmgetstate_aL_tiebreaker.txt"),
                                          scale("mmgetstate_aL_arbitrating.txt")],
         prefix_list=True, rows=r"^\s+\d+\s+\S+\s"),
    Case("mmlsconfig", parse_mmlsconfig, [scale("mmlsconfig_ibm_doc.txt")], prefix_list=True),
    Case("mmlsmount", parse_mmlsmount, [scale("mmlsmount_L_cnsa.txt"), scale("mmlsmount_L_ibm_doc.txt"),
                                        scale("mmlsmount_all_noL_storage_scale_vagrant.txt")], prefix_list=True,
         rows=r"^\s+[0-9.]+\s+\S+"),
    Case("mmlslicense", parse_mmlslicense, [scale("mmlslicense_L.txt")], prefix_list=True,
         rows=r"^c0\d\s"),
]
IDS = [c.name for c in CASES]


def canon(value):
    """A comparable form: dict keys sorted, lists as sorted multisets (row order is not the value)."""
    if isinstance(value, dict):
        return {str(k): canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return sorted((canon(v) for v in value), key=lambda x: json.dumps(x, sort_keys=True, default=str))
    return value


def outcome(fn, text):
    """("ok", value) or ("error", message); any exception other than ValueError fails the test."""
    try:
        return "ok", fn(text)
    except ValueError as exc:
        msg = str(exc)
        assert msg, "a ValueError without a message"
        return "error", msg


def consistent_prefix(part, full):
    """``part`` says nothing ``full`` contradicts: equal scalars; dicts whose keys all hold the same value in
    ``full`` (a cut may drop trailing keys); lists that are a prefix of ``full``'s, the last item itself a
    consistent prefix (a cut inside the last record, e.g. its GID list)."""
    if isinstance(part, dict) and isinstance(full, dict):
        return all(k in full and consistent_prefix(v, full[k]) for k, v in part.items())
    if isinstance(part, list) and isinstance(full, list):
        if len(part) > len(full):
            return False
        return all(a == b for a, b in zip(part[:-1], full)) and (  # noqa: B905
            not part or consistent_prefix(part[-1], full[len(part) - 1]))
    return part == full


def fixtures_of(case):
    return [(case, i, t) for i, t in enumerate(case.texts)]


ALL = [x for c in CASES for x in fixtures_of(c)]
ALL_IDS = ["%s#%d" % (c.name, i) for c, i, _ in ALL]


@pytest.mark.parametrize("case,i,text", ALL, ids=ALL_IDS)
def test_fixture_parses(case, i, text):
    kind, value = outcome(case.fn, text)
    assert kind == "ok", value


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n"])
def test_empty_output(case, text):
    kind, value = outcome(case.fn, text)
    if case.empty is not None and kind == "ok":
        assert value == case.empty
    else:
        assert kind == "error", "%s returned %r for an empty output" % (case.name, value)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@FAST
@given(data=st.one_of(st.binary(max_size=300).map(lambda b: b.decode("latin-1")), st.text(max_size=300)))
def test_noise_is_a_value_or_value_error(case, data):
    outcome(case.fn, data)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@FAST
@given(data=st.data())
def test_fixture_lines_mixed_with_noise(case, data):
    lines = data.draw(st.sampled_from(case.texts)).splitlines(True)
    noise = data.draw(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
                               .map(lambda x: x.replace("\n", " ") + "\n"), min_size=1, max_size=3))
    for junk in noise:
        lines.insert(data.draw(st.integers(0, len(lines))), junk)
    outcome(case.fn, "".join(lines))


def reports(text):
    """fio: the value of every complete report in a --status-interval output."""
    docs = []
    start = 0
    while True:
        start = text.find("\n{", start)
        if start == -1:
            break
        docs.append(start + 1)
        start += 1
    out = [parse_fio(text[:docs[0]])] if docs and text.startswith("{") else []
    return out + [parse_fio(text[:d]) for d in docs[1:]] if len(docs) > 1 else out


@pytest.mark.parametrize("case,i,text", ALL, ids=ALL_IDS)
def test_cut_after_every_line(case, i, text):
    full = case.fn(text)
    lines = text.splitlines(True)
    for k in range(len(lines)):
        part = "".join(lines[:k])
        kind, value = outcome(case.fn, part)
        if kind == "error" or value == full:
            continue
        if case.prefix_list and consistent_prefix(value, full):
            continue
        if case.empty is not None and value == case.empty:
            continue
        if case.name == "fio" and value in reports(text):
            continue  # --status-interval cut between two reports: the last complete one (documented limit)
        pytest.fail("%s: cut after line %d gave a different value:\n%r\nfull:\n%r" % (case.name, k, value, full))


@pytest.mark.parametrize("case,i,text", ALL, ids=ALL_IDS)
@FAST
@given(data=st.data())
def test_cut_inside_a_line(case, i, text, data):
    full = case.fn(text)
    cuts = [p for p in range(1, len(text)) if text[p - 1] != "\n" and text[p - 1:p + 1].strip()]
    p = data.draw(st.sampled_from(cuts))
    kind, value = outcome(case.fn, text[:p])
    assert kind == "error" or value == full, "%s: cut at %d gave %r" % (case.name, p, value)


@pytest.mark.parametrize("case,i,text", [x for x in ALL if x[0].rows], ids=[n for x, n in zip(ALL, ALL_IDS)  # noqa: B905
                                                                          if x[0].rows])
@FAST
@given(data=st.data())
def test_swapping_order_free_rows_keeps_the_value(case, i, text, data):
    lines = text.splitlines(True)
    pairs = [k for k in range(len(lines) - 1) if case.rows.match(lines[k]) and case.rows.match(lines[k + 1])]
    if not pairs:
        return
    k = data.draw(st.sampled_from(pairs))
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    assert canon(case.fn("".join(lines))) == canon(case.fn(text))


@pytest.mark.parametrize("case,i,text", ALL, ids=ALL_IDS)
@FAST
@given(data=st.data())
def test_swapping_any_two_lines_is_a_value_or_value_error(case, i, text, data):
    lines = text.splitlines(True)
    if len(lines) < 2:
        return
    a = data.draw(st.integers(0, len(lines) - 1))
    b = data.draw(st.integers(0, len(lines) - 1))
    lines[a], lines[b] = lines[b], lines[a]
    outcome(case.fn, "".join(lines))


MESSAGE_KEYS = ("messages", "notices")  # the tool's own lines kept with the value: an unknown line may join them


def superset(value, full):
    """Every key and value of ``full`` is in ``value`` unchanged (new keys allowed, lists must be equal; the
    ``MESSAGE_KEYS`` lists may hold more lines)."""
    if isinstance(full, dict):
        return isinstance(value, dict) and all(k in value and (k in MESSAGE_KEYS or superset(value[k], v))
                                               for k, v in full.items())
    if isinstance(full, list):
        return isinstance(value, list) and len(value) == len(full) and all(
            superset(a, b) for a, b in zip(value, full))  # noqa: B905
    return value == full


TEXT_CASES = [x for x in ALL if x[0].name not in ("iperf3", "fio")]


@pytest.mark.parametrize("case,i,text", TEXT_CASES, ids=[n for x, n in zip(ALL, ALL_IDS)  # noqa: B905
                                                          if x[0].name not in ("iperf3", "fio")])
@FAST
@given(data=st.data())
def test_an_extra_name_value_line_never_changes_known_values(case, i, text, data):
    full = case.fn(text)
    lines = text.splitlines(True)
    name = data.draw(st.from_regex(r"[A-Za-z][a-z_]{2,12}", fullmatch=True))
    extra = data.draw(st.sampled_from(["%s: %s\n", "\t%s:\t\t%s\n", "%s=%s\n"])) % (
        name, data.draw(st.from_regex(r"[0-9a-z .]{1,10}", fullmatch=True)).strip() or "1")
    lines.insert(data.draw(st.integers(0, len(lines))), extra)
    kind, value = outcome(case.fn, "".join(lines))
    assert kind == "error" or superset(value, full), "%s: %r changed the value to %r" % (case.name, extra, value)


def _json_cases():
    out = []
    for c, i, t in ALL:
        if c.name in ("iperf3", "fio"):
            try:
                json.loads(t)
            except ValueError:
                continue  # fio --status-interval / text around JSON: not one document
            out.append((c, i, t))
    return out


JSON_CASES = _json_cases()


@pytest.mark.parametrize("case,i,text", JSON_CASES, ids=["%s#%d" % (c.name, i) for c, i, _ in JSON_CASES])
@FAST
@given(data=st.data())
def test_extra_json_keys_change_nothing(case, i, text, data):
    doc = json.loads(text)
    full = case.fn(text)
    grown = copy.deepcopy(doc)
    key = "x_" + data.draw(st.from_regex(r"[a-z]{1,8}", fullmatch=True))
    value = data.draw(st.one_of(st.integers(), st.text(max_size=5), st.none(), st.booleans()))
    targets = [grown] + [v for v in grown.values() if isinstance(v, dict)]
    targets += [j for j in grown.get("jobs", []) if isinstance(j, dict)]
    data.draw(st.sampled_from(targets))[key] = value
    assert case.fn(json.dumps(grown, indent=1) + "\n") == full


@pytest.mark.parametrize("extra", [",total_size=262016", ",max_buffer_size=262016", ",future_field=7"])
def test_mlnx_qos_buffer_line_extra_field(extra):
    text = hw("mlnx_qos_pcp__magnate3_centos12.txt")
    full = hp.parse_mlnx_qos(text)
    grown = text.replace("524160,0,0,0,0,0,0,0,", "524160,0,0,0,0,0,0,0" + extra)
    value = hp.parse_mlnx_qos(grown)
    assert {k: v for k, v in value.items() if not k.startswith("receive_buffer_")} == \
        {k: v for k, v in full.items() if not k.startswith("receive_buffer_")}
    assert value["receive_buffer_sizes"] == full["receive_buffer_sizes"]
    assert value["receive_buffer_extra"] == {extra[1:].split("=")[0]: int(extra.split("=")[1])}


def test_error_messages_name_tool_line_and_expectation():
    cases = [
        (hp.parse_mlnx_qos, hw("mlnx_qos__att_netarbiter.txt").replace("enabled     0   0   0   1",
                                                                       "enabled     0   0   0   x"),
         r"^mlnx_qos output line 15: expected a number, got 'x'"),
        (hp.parse_ibv_devinfo, "hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n",
         r"^ibv_devinfo output: mlx5_0 port 1 has no max_mtu, .* \(output cut off\?\)"),
        (hp.parse_ibdev2netdev, "mlx5_0 port 1 ==> enp5s0 (Up)\nmlx5_1 port 1 ==> enp6s0 (U",
         r"^ibdev2netdev output line 2: the last line has no newline"),
        (parse_mmgetstate, scale("mmgetstate_aL_clients.txt").replace("active", "snoozing", 1),
         r"^mmgetstate output line 4: no GPFS state"),
    ]
    for fn, text, pattern in cases:
        with pytest.raises(ValueError) as e:
            fn(text)
        assert re.match(pattern, str(e.value)), str(e.value)
