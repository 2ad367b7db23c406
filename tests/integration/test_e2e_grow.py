"""A DGX added to a running pod (the pod-in-a-box grown from 3 to 4 DGX with `podsim up`): `site.yml` must bring
the new node in *and* recreate the MPI containers of the old nodes, whose copy of /etc/hosts (made by the engine
when the container was created, `--network=host`) does not name the new node - before the fix the containers
playbook's mesh verify failed with "sim-dgx4: name not resolved". Then a re-run changes nothing.
roles/ngc_container/tasks/run.yml (the org.dgxpod.hosts-sha256 label).

A pod of its own (the shared pod is taken down first and brought back afterwards), so `long`: `make test-long`;
CI does not run it. Its inventory is written to a temporary directory (PODSIM_INVENTORY) beside a link to
inventories/sim/group_vars, so the committed inventories/sim/hosts.yml is never changed."""
from __future__ import annotations

import os
import re

import pytest

from e2e import PODSIM, own_pod, recap, run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.long,  # a pod of its own, grown once
    pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root"),
]


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    with own_pod(tmp_path_factory.mktemp("grow-inv")) as inv:
        yield inv


def test_a_dgx_added_to_the_pod_is_resolved_by_every_container(inventory):
    run(PODSIM, "up", "--nodes", "3", "--storage", "1", check=True)
    run(".venv/bin/ansible-playbook", "-i", inventory, "site.yml", timeout=900, check=True)
    run(PODSIM, "up", "--nodes", "4", "--storage", "1", check=True)
    grown = run(".venv/bin/ansible-playbook", "-i", inventory, "site.yml", timeout=900)
    assert grown.returncode == 0, grown.stdout[-5000:]
    assert "name not resolved" not in grown.stdout
    # the old nodes' containers were recreated (their names changed), the new node's created
    task = re.search(r"TASK \[ngc_container : Run the MPI container \(CLI[^\n]*\n((?:(?!TASK).*\n)*)", grown.stdout)
    assert task, grown.stdout[-3000:]
    assert sorted(re.findall(r"^changed: \[(sim-dgx\d)\]", task.group(1), re.M)) == \
        ["sim-dgx1", "sim-dgx2", "sim-dgx3", "sim-dgx4"], task.group(1)
    again = run(".venv/bin/ansible-playbook", "-i", inventory, "site.yml", timeout=900, check=True)
    assert all(s["changed"] == 0 and s["failed"] == 0 for s in recap(again.stdout).values()), again.stdout[-3000:]
