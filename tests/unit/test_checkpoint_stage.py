"""The checkpoint stage (issue 44 items 1 and 3): library/pod_checkpoint.py's phases on real directories,
the record filters, and module_utils/storage/ckpt_eval.py - each check seen passing and failing, the storage node
that limits a checkpoint named, the top finding."""
from __future__ import annotations

import json
import os

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import build_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage import ckpt_eval

import pod_checkpoint as pc
from filter_plugins.checkpoint import pod_checkpoint_rank_dir, pod_checkpoint_record

NODES = ["dgx1", "dgx2", "dgx3", "dgx4"]
MOUNT_OF = {"/mnt/isilon%d" % i: {"ip": "10.0.0.%d" % (1 + (i - 1) % 2), "storage_host": "isilon%d" % (1 + (i - 1) % 2),
                                  "storage_nic": "40gige-1", "fabric": "data"} for i in range(1, 5)}
MOUNTS = {n: dict(MOUNT_OF) for n in NODES}


# ----------------------------------------------------------------------------------------------- the module

def test_write_read_back_metadata_and_cleanup_on_real_directories(tmp_path):
    dirs = [str(tmp_path / "m1"), str(tmp_path / "m2")]
    for d in dirs:
        os.makedirs(d)
    w = json.loads(pc.run_phase("write", dirs, "dgx1", 4, 300_000, 65_536, 10, 0))
    assert [r["rank"] for r in w["ranks"]] == [4, 5] and all(r["ok"] and r["bytes"] == 300_000 for r in w["ranks"])
    assert os.path.getsize(pc.shard_path(dirs[1], "dgx1", 5)) == 300_000
    r = json.loads(pc.run_phase("read", dirs, "dgx1", 4, 300_000, 65_536, 10, 0))
    assert all(x["ok"] and x["mismatch"] is None and x["bytes"] == 300_000 for x in r["ranks"])
    # a changed byte and a short file are named with the offset
    p = pc.shard_path(dirs[0], "dgx1", 4)
    with open(p, "r+b") as f:
        f.seek(70_000)
        old = f.read(1)
        f.seek(70_000)
        f.write(b"\x00" if old != b"\x00" else b"\x01")
    with open(pc.shard_path(dirs[1], "dgx1", 5), "r+b") as f:
        f.truncate(100_000)
    r = json.loads(pc.run_phase("read", dirs, "dgx1", 4, 300_000, 65_536, 10, 0))
    assert [x["mismatch"] for x in r["ranks"]] == [70_000, 100_000]
    meta = json.loads(pc.run_phase("metadata", dirs, "dgx1", 4, 1, 1, 25, 0))
    assert all(x["ok"] and x["files"] == 25 and set(x["steps"]) == {"create", "stat", "read", "remove"}
               for x in meta["ranks"])
    assert not os.listdir(os.path.join(dirs[0], "dgxpod-metadata", "dgx1"))  # the files are gone again
    os.makedirs(os.path.join(dirs[0], "dgxpod-checkpoint", "dgx2"))  # another DGX, not done yet
    pc.cleanup(dirs, "dgx1")
    assert not os.path.exists(os.path.join(dirs[0], "dgxpod-checkpoint", "dgx1"))
    assert os.path.isdir(os.path.join(dirs[0], "dgxpod-checkpoint", "dgx2"))  # not ours: left alone
    assert not os.path.exists(os.path.join(dirs[1], "dgxpod-checkpoint"))  # the last one out removes the top


def test_a_rank_that_cannot_write_is_reported_not_raised(tmp_path):
    ok_dir, ro = str(tmp_path / "ok"), str(tmp_path / "missing" / "deeper")
    os.makedirs(ok_dir)
    open(str(tmp_path / "missing"), "w").close()  # a file where the mount's directory should be
    w = json.loads(pc.run_phase("write", [ok_dir, ro], "dgx1", 0, 1000, 500, 1, 0))
    assert w["ranks"][0]["ok"] and not w["ranks"][1]["ok"] and "missing" in w["ranks"][1]["error"]


# ----------------------------------------------------------------------------------------------- the filters

def test_rank_dirs_round_robin_and_the_record_keeps_a_silent_dgx():
    paths = sorted(MOUNT_OF)
    assert [pod_checkpoint_rank_dir(r, paths) for r in range(6)] == paths + paths[:2]
    with pytest.raises(ValueError, match="no data mounts"):
        pod_checkpoint_rank_dir(0, [])
    hv = {"dgx1": {"pod_checkpoint_write": {"ranks": [{"rank": 0}], "timed_out": False, "seconds": 1.0},
                   "pod_checkpoint_read": {"skipped": True},
                   "pod_checkpoint_cleanup": {"failed": True, "msg": "EBUSY"}},
          "dgx2": {}, "dgx3": {"pod_checkpoint_write": {"failed": True, "msg": "no dirs"}}}
    rec = pod_checkpoint_record(["dgx1", "dgx2", "dgx3"], hv)
    assert rec["dgx1"]["write"]["ranks"] == [{"rank": 0}] and rec["dgx1"]["read"] is None
    assert rec["dgx1"]["cleanup_error"] == "EBUSY" and rec["dgx2"] is None and "no dirs" in rec["dgx3"]["error"]


# ----------------------------------------------------------------------------------------------- evaluation

def _ranks(node, rpn=2, mb=100.0, secs=None, slow_mount=None, slow=1.0, over=None):
    i = NODES.index(node)
    out = []
    for k in range(rpn):
        r = i * rpn + k
        d = sorted(MOUNT_OF)[r % 4]
        s = (secs or 1.0) * (slow if d == slow_mount or MOUNT_OF[d]["storage_host"] == slow_mount else 1.0)
        out.append(dict({"rank": r, "dir": d, "bytes": int(mb * 1e6), "seconds": s, "ok": True, "error": "",
                         "mismatch": None, "expected_bytes": int(mb * 1e6), "path": "%s/x/rank%d" % (d, r)},
                        **(over or {}).get(r, {})))
    return out


def _meta(node, secs=1.0):
    return {"ranks": [{"rank": NODES.index(node) * 2 + k, "dir": sorted(MOUNT_OF)[k], "files": 100, "ok": True,
                       "steps": {"create": secs, "stat": secs / 10, "read": secs / 2, "remove": secs}}
                      for k in range(2)]}


def record(write=None, read=None, meta=None, hosts=None):
    hosts = hosts or {}
    out = {"settings": {"shard_bytes": 100_000_000, "ranks_per_node": 2, "meta_files": 100,
                        "checkpoint_bytes": 800_000_000}, "mounts": MOUNTS, "hosts": {}}
    for n in NODES:
        if n in hosts:
            out["hosts"][n] = hosts[n]
            continue
        out["hosts"][n] = {"write": {"ranks": (write or {}).get(n) or _ranks(n)},
                           "read": {"ranks": (read or {}).get(n) or _ranks(n)},
                           "metadata": (meta or {}).get(n) or _meta(n), "cleanup_error": None}
    return out


def by(res, check):
    return {r.host: r for r in res if r.check == check}


def test_a_healthy_pod_passes_every_check():
    res = ckpt_eval.evaluate(record(), {}, {})
    bad = [(r.check, r.host, r.cause) for r in res if r.status != "pass"]
    assert not bad
    assert {r.check for r in res} == set(ckpt_eval.CHECKS)
    assert by(res, "ckpt_write")["dgx1"].measured == 200.0  # 2 ranks x 100 MB in 1 s
    assert set(by(res, "ckpt_write_storage")) == {"isilon1", "isilon2"}
    t = by(res, "ckpt_time")["pod"]
    assert t.measured == 1.0 and t.details["mb_per_s"] == 800.0


def test_one_slow_storage_node_is_named_and_no_dgx_is_blamed():
    # every DGX has a rank on each storage node (round robin), so every DGX is equally slow: only isilon2 stands out
    w = {n: _ranks(n, slow_mount="isilon2", slow=5.0) for n in NODES}
    res = ckpt_eval.evaluate(record(write=w), {}, {})
    st = by(res, "ckpt_write_storage")
    assert st["isilon2"].status == "fail" and st["isilon1"].status == "pass"
    assert "storage node isilon2 (10.0.0.2) limits the checkpoint" in st["isilon2"].cause
    assert "dgx1 /mnt/isilon2" in st["isilon2"].cause
    assert all(r.status == "pass" for r in by(res, "ckpt_write").values())
    found = build_findings([r.to_dict() for r in res])
    assert found and found[0]["host"] == "isilon2", found


def test_a_slow_dgx_and_a_failed_rank_are_named():
    w = {"dgx3": _ranks("dgx3", secs=4.0)}
    res = ckpt_eval.evaluate(record(write=w), {}, {})
    assert by(res, "ckpt_write")["dgx3"].status == "fail" and "dgx3 wrote" in by(res, "ckpt_write")["dgx3"].cause
    failed = {"dgx2": _ranks("dgx2", over={2: {"ok": False, "error": "/mnt/isilon3: No space left on device"}})}
    res = ckpt_eval.evaluate(record(write=failed), {}, {})
    c = by(res, "ckpt_write")["dgx2"]
    assert c.status == "fail" and "rank 2 through /mnt/isilon3 (isilon1): /mnt/isilon3: No space left" in c.cause


def test_a_shard_read_back_wrong_fails_integrity_naming_the_file():
    rd = {"dgx4": _ranks("dgx4", over={7: {"mismatch": 4096, "bytes": 100_000_000}})}
    c = by(ckpt_eval.evaluate(record(read=rd), {}, {}), "ckpt_integrity")["dgx4"]
    assert c.status == "fail" and c.subject.path == "/mnt/isilon4/x/rank7"
    assert "first difference at byte 4096" in c.cause


def test_checkpoint_time_against_the_pods_limit_and_a_silent_dgx():
    exp = {"checkpoint": {"max_seconds": {"value": 0.5, "source": "our checkpoint interval budget"}}}
    t = by(ckpt_eval.evaluate(record(), exp, {}), "ckpt_time")["pod"]
    assert t.status == "fail" and t.expected == 0.5 and "took 1.0 s" in t.cause
    res = ckpt_eval.evaluate(record(hosts={"dgx2": None}), {}, {})
    assert by(res, "ckpt_write")["dgx2"].status == "error" and by(res, "ckpt_write")["dgx2"].unreachable
    assert "ckpt_time" not in {r.check for r in res}  # not the whole checkpoint


def test_small_files_slow_on_one_dgx():
    res = ckpt_eval.evaluate(record(meta={"dgx1": _meta("dgx1", secs=5.0)}), {}, {})
    c = by(res, "meta_create")["dgx1"]
    assert c.status == "fail" and c.measured == 40.0 and "create of small files" in c.cause
    assert by(res, "meta_create")["dgx2"].status == "pass"


def test_the_report_section_lists_nodes_and_storage_nodes():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
    m = record()
    res = ckpt_eval.evaluate(m, {}, {})
    doc = {"measurements": {"checkpoint": m}, "checks": [dict(r.to_dict(), stage="checkpoint") for r in res]}
    text = "\n".join(ckpt_eval.markdown(doc))
    assert "| dgx1 | 200.0 | 200.0 |" in text and "| isilon2 |" in text
    assert callable(build_results)
