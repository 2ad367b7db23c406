"""roles/pod_perf and the thin plays that apply it (playbooks/validate_perf.yml, perf_iperf_pass.yml): every
variable documented and defaulted once, every entry point the plays name exists, and the tags select exactly the
tasks they did before the stage was a role (validate.yml --tags iperf / fio, --skip-tags iperf,fio)."""
from __future__ import annotations

import os
import re
import subprocess

import yaml
from inventory_util import ROOT

ROLE = os.path.join(ROOT, "roles", "pod_perf")
PLAYS = [os.path.join(ROOT, "playbooks", p) for p in ("validate_perf.yml", "perf_iperf_pass.yml")]


def _yaml(*parts):
    with open(os.path.join(ROLE, *parts)) as fh:
        return yaml.safe_load(fh)


def test_every_default_is_an_option_of_the_plan_spec_and_back():
    specs = _yaml("meta", "argument_specs.yml")["argument_specs"]
    # only plan has a spec: a spec on another entry point would add a validation task tagged always to the
    # iperf or fio plays, which --tags fio / --skip-tags iperf would then select differently
    assert list(specs) == ["plan"]
    options = specs["plan"]["options"]
    assert set(options) == set(_yaml("defaults", "main.yml"))
    assert all(o.get("description") and o.get("type") for o in options.values())


def test_every_entry_point_the_plays_name_exists_and_every_task_file_is_used():
    named = set()
    for path in PLAYS:
        with open(path) as fh:
            named |= set(re.findall(r"tasks_from: (\w+)", fh.read()))
    files = {f[:-4] for f in os.listdir(os.path.join(ROLE, "tasks"))}
    assert named <= files
    assert files - named == {"fio_step"}  # included by tasks/fio.yml, once per step
    with open(os.path.join(ROLE, "tasks", "fio.yml")) as fh:
        assert "include_tasks: fio_step.yml" in fh.read()


def test_the_tags_select_the_same_tasks_as_before():
    """ansible-playbook --list-tasks --list-tags (nothing contacted): each play's tasks carry exactly its tags."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), PLAYS[0], "--list-tasks",
                          "--list-tags"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    plays = re.findall(r"play #\d+ \((\S+)\): (.+?)\tTAGS: \[(.*?)\]\n((?:.*\n)*?)\s+TASK TAGS: \[(.*?)\]", res.stdout)
    got = [(hosts, name, sorted(tags.split(",")), sorted(t.strip() for t in task_tags.split(",")),
            [line.strip() for line in body.splitlines() if "\tTAGS:" in line])
           for hosts, name, tags, body, task_tags in plays]
    assert [(g[0], g[2]) for g in got] == [
        ("localhost", ["always"]),
        ("dgx", ["fio", "storage"]),  # waits for the layout validate.yml starts under the state checks
        ("localhost", ["iperf", "network"]), ("pod_perf_iperf_first", ["iperf", "network"]),
        ("localhost", ["iperf", "network"]),
        ("localhost", ["iperf", "network"]),  # the second look
        ("localhost", ["iperf", "network"]), ("pod_perf_iperf_confirm", ["iperf", "network"]),
        ("localhost", ["iperf", "network"]),
        ("localhost", ["iperf", "network"]),  # merge
        ("dgx", ["fio", "storage"]),
        ("localhost", ["fio", "storage"])]  # the fio record: a run without the fio tags records no fio stage
    for _hosts, name, tags, task_tags, tasks in got:
        assert task_tags == tags, name  # no task brings a tag (always) of its own
        # the role's tasks, and the one way a stage is recorded (playbooks/tasks/record_stage.yml, issue 38)
        assert tasks and all(t.startswith("pod_perf : ") or t.startswith("Record pod_stages.") for t in tasks), name
    recorded = [(g[2], t.split("\t")[0]) for g in got for t in g[4] if t.startswith("Record pod_stages.")]
    assert recorded == [(["iperf", "network"], "Record pod_stages.{{ record_stage_name }}"),
                        (["fio", "storage"], "Record pod_stages.{{ record_stage_name }}")]
    validation = [t for g in got for t in g[4] if "Validating arguments" in t]
    assert len(validation) == 1 and "arg spec 'plan'" in validation[0]


def test_validate_starts_the_fio_layout_after_identity_under_the_state_checks_only_for_fio():
    """validate.yml imports playbooks/validate_fio_start.yml right after the identity play (which opens the run's
    connections to the DGX before the layout loads them) and before the other state checks; only --tags storage/fio
    select it; its plays plan on localhost, open the DGX connections (with Mitogen's strategy, before the load: with
    --tags storage or fio alone identity does not run), then start the layout (part start) on dgx."""
    with open(os.path.join(ROOT, "validate.yml")) as fh:
        imports = re.findall(r"import_playbook: playbooks/(\w+)\.yml\n(?:  tags: \[(.*?)\])?", fh.read())
    order = [name for name, _ in imports]
    assert order.index("preflight") < order.index("validate_identity") == order.index("validate_fio_start") - 1
    assert order.index("validate_fio_start") < order.index("validate_gpu") < order.index("validate_perf")
    assert dict(imports)["validate_fio_start"] == "storage, fio"
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"),
                          os.path.join(ROOT, "playbooks", "validate_fio_start.yml"), "--list-tasks", "--list-tags"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    plays = [(hosts, sorted(tags.split(","))) for hosts, tags in
             re.findall(r"play #\d+ \((\S+)\): .+?\tTAGS: \[(.*?)\]", res.stdout)]  # a set: any order
    assert plays == [("localhost", ["fio", "storage"]), ("dgx", ["fio", "storage"]), ("dgx", ["fio", "storage"])], \
        res.stdout
    with open(os.path.join(ROOT, "playbooks", "validate_fio_start.yml")) as fh:
        text = fh.read()
    contact, layout = yaml.safe_load(text)[1:]
    assert "strategy" not in contact and "ansible.builtin.ping" in contact["tasks"][0]
    assert layout["strategy"] == "linear"
    assert "pod_perf_fio_part: start" in text and "strategy: linear" in text  # async under Mitogen deadlocks
