"""The ngc_container role's image distribution (tasks/distribute.yml, archive for offline pods), run for real on
localhost (connection local, inside `unshare -n`) with a fake container engine that keeps each node's images in
a directory: the node that lacks the image gets the build host's archive, loaded and tagged with the image's
name; a second run finds every node with the reference image ID and skips the whole distribution (one skipped
include, issue 19) with nothing changed; a node holding another build of the image gets the reference one."""
from __future__ import annotations

import os
import shutil

import pytest
import yaml

from inventory_util import ROOT
from playbook_util import changed_by_host, run_offline

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root for unshare -n")

IMAGE = "dgxpod/pytorch-mpi:24.01"
REF_ID = "sha256:" + "ab" * 32

# A container engine's CLI as far as the distribution uses it: image inspect, save -o, load -i, tag.
FAKE_ENGINE = r"""#!/bin/sh
store=$1; shift
key() { printf '%s' "$1" | tr '/:' '__'; }
case "$1 $2" in
  "image inspect")
    f="$store/$(key "$3")"; [ -f "$f" ] || { echo "Error: $3: image not known" >&2; exit 125; }
    printf '[{"Id": "%s"}]\n' "$(cat "$f")" ;;
  "save -o") cat "$store/$(key "$4")" > "$3" ;;
  "load -i") id=$(cat "$3"); printf '%s' "$id" > "$store/$(key "$id")"; echo "Loaded image: $id" ;;
  "tag "*) cat "$store/$(key "$2")" > "$store/$(key "$3")" ;;
  *) echo "fake engine: unsupported: $*" >&2; exit 2 ;;
esac
"""

PLAY = """
- name: distribution only
  hosts: dgx
  gather_facts: false
  tasks:
    - name: Distribution stage of the role
      ansible.builtin.include_role:
        name: ngc_container
        tasks_from: distribute.yml
"""


def _setup(tmp_path):
    engine = tmp_path / "engine"
    engine.write_text(FAKE_ENGINE)
    engine.chmod(0o755)
    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True)
    nodes = {}
    for n in ("node-a", "node-b", "node-c"):
        (tmp_path / n / "store").mkdir(parents=True)
        nodes[n] = {"ngc_container_engine": str(engine), "ngc_container_engine_args": [str(tmp_path / n / "store")],
                    "ngc_container_archive_dir": str(tmp_path / n / "archives")}
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"dgx": {"hosts": nodes}}}}))
    pod = {"pod": {"name": "dtest", "ra_profile": "isilon-f800-dgx1", "simulated": True},
           "ansible_connection": "local",
           "ansible_python_interpreter": os.path.join(ROOT, ".venv", "bin", "python"),
           "ngc_container_image": IMAGE, "ngc_container_build": False, "ngc_container_build_host": "node-a",
           "ngc_container_distribution": "archive",
           "ngc_container_controller_cache": str(tmp_path / "controller-cache")}
    (inv / "group_vars" / "all" / "pod.yml").write_text(yaml.safe_dump(pod))
    (tmp_path / "node-a" / "store" / IMAGE.replace("/", "_").replace(":", "_")).write_text(REF_ID)
    play = tmp_path / "distribute.yml"
    play.write_text(PLAY)
    return str(inv), str(play)


def _image_id(tmp_path, node):
    f = tmp_path / node / "store" / IMAGE.replace("/", "_").replace(":", "_")
    return f.read_text() if f.exists() else None


def test_the_archive_reaches_the_nodes_that_lack_the_image_and_a_converged_pod_skips_it(tmp_path):
    inv, play = _setup(tmp_path)
    (tmp_path / "node-c" / "store" / IMAGE.replace("/", "_").replace(":", "_")).write_text("sha256:" + "cd" * 32)
    first = run_offline(inv, play)
    assert [_image_id(tmp_path, n) for n in ("node-a", "node-b", "node-c")] == [REF_ID] * 3
    # the build host: archive dir, save, fetch; each node lacking the reference image: dir, copy, load, tag
    assert changed_by_host(first) == {"node-a": 3, "node-b": 4, "node-c": 4}, first[-3000:]
    assert (tmp_path / "node-b" / "archives").is_dir()

    again = run_offline(inv, play)
    assert changed_by_host(again) == {"node-a": 0, "node-b": 0, "node-c": 0}
    block = again.split("TASK [ngc_container : Distribute the image - archive]", 1)[1].split("TASK [", 1)[0]
    assert block.count("skipping:") == 3, block
    assert "Save the image" not in again and "Load it" not in again
