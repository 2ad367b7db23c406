"""podsimlib: the code behind `sim/podsim` (the pod-in-a-box), one module per concern.

    cli.py         the command line: verbs and options (`sim/podsim.py` runs its main)
    up.py          `up` as an ordered list of named reconcile steps (each idempotent, each says what it does)
    down.py        `down` and its check that nothing is left
    verbs.py       status, exec, shape, switch, gpu, fault, inventory
    namespaces.py  the simulator's network namespaces: ours, another pod's, processes inside them
    network.py     bridges per fabric and veths per NIC, compared with the model and repaired
    shaping.py     tc TBF shaping of a node's link
    nodes.py       a node's health, anchor process (sim/node-init.sh) and daemons; stopping nodes
    nodefiles.py   the files the simulator owns inside a node; the controller's keys and known_hosts
    storage.py     the storage nodes' nfs-ganesha config
    containers.py  rootful podman inside the DGX nodes
    switches.py    the fake switch server (sim/fakeswitch) and its fault keys
    state.py       state.json and the lock
    procs.py       recorded processes (pid + start time), nsenter, waiting for a port
    common.py      paths, logging, running a command

The pod's shape (nodes, NICs, addresses, the inventory text) is sim/podmodel.py: pure functions, no I/O.
"""

import os
import sys

from .common import SIM_DIR

# podmodel (sim/) and the hardware stand-ins (sim/standins/) are plain modules beside this package
for _d in (SIM_DIR, os.path.join(SIM_DIR, "standins")):
    if _d not in sys.path:
        sys.path.insert(0, _d)
