"""HCA COUNTER TICKER of the pod-in-a-box (a test double, NOT a real tool): raises port counters of the stand-in sysfs.

    podsim-hca-ticker PORT_DIR NAME=STEP [NAME=STEP ...] [--interval SECONDS]

PORT_DIR is a port of the stand-in tree in a DGX node (``/etc/podsim/sysfs/sys/class/infiniband/mlx5_1/ports/1``,
sim/standins/podsim_hw.py ``fake_counter_files``); NAME a counter file under it (``counters/symbol_error``,
``counters/link_downed``). Every ``interval`` seconds (default 1) each counter grows by its STEP, as a port with a
bad cable counts symbol errors, or a flapping link counts link_downed and link_error_recovery, while the validation
reads them at its start and its end. Runs until SIGTERM. The drill's faults ``hca_symbol_errors`` and
``hca_link_flap`` (sim/faults) start it in the node, keep its pid and start time, stop it at the clear and put the
counters' values back.

A counter stops at the top of its IBTA PortCounters field (symbol_error 16 bits, link_downed 8 bits: ``CAPS``), as
the hardware's does. Each new value replaces the file at once (written beside the directory, then renamed), so a
reader never sees a half-written number.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from typing import Dict, List, Tuple

from podsim_hw import counter_tmp_path  # beside this file

# IBTA Vol. 1 16.1.3.5 PortCounters field widths (module_utils/network/hca_counters.IBTA_WIDTH): a counter saturates
CAPS = {"symbol_error": 0xFFFF, "link_error_recovery": 0xFF, "link_downed": 0xFF, "port_rcv_errors": 0xFFFF,
        "port_xmit_discards": 0xFFFF, "local_link_integrity_errors": 0xF, "excessive_buffer_overrun_errors": 0xF}


def parse_args(argv: List[str]) -> Tuple[str, Dict[str, int], float]:
    """(port dir, {counter: step}, interval) from the command line; ValueError on anything else."""
    args = list(argv)
    interval = 1.0
    if "--interval" in args:
        i = args.index("--interval")
        interval = float(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        raise ValueError("usage: podsim-hca-ticker PORT_DIR NAME=STEP [NAME=STEP ...] [--interval SECONDS]")
    steps: Dict[str, int] = {}
    for item in args[1:]:
        name, sep, step = item.partition("=")
        if not sep or not name or name.startswith("/") or ".." in name.split("/") or not step.isdigit():
            raise ValueError("not NAME=STEP (a counter file under the port, a whole number): %r" % item)
        steps[name] = int(step)
    if interval <= 0:
        raise ValueError("the interval must be positive")
    return args[0], steps, interval


def tick(port_dir: str, steps: Dict[str, int]) -> Dict[str, int]:
    """Raise each counter once by its step (capped at its IBTA field's maximum); returns the new values."""
    out = {}
    for name, step in sorted(steps.items()):
        path = os.path.join(port_dir, name)
        with open(path) as f:
            value = int(f.read().strip() or 0)
        cap = CAPS.get(os.path.basename(name))
        value = value + step if cap is None else min(cap, value + step)
        tmp = counter_tmp_path(path)
        with open(tmp, "w") as f:
            f.write("%d\n" % value)
        os.replace(tmp, path)
        out[name] = value
    return out


def main(argv: List[str]) -> int:
    try:
        port_dir, steps, interval = parse_args(argv[1:])
    except (ValueError, IndexError) as e:
        print("podsim-hca-ticker: %s" % e, file=sys.stderr)
        return 2
    missing = [n for n in steps if not os.path.isfile(os.path.join(port_dir, n))]
    if missing:
        print("podsim-hca-ticker: no counter %s under %s" % (", ".join(missing), port_dir), file=sys.stderr)
        return 1
    try:
        os.setsid()  # its own session: it outlives the `podsim exec` that started it
    except OSError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(interval)
        tick(port_dir, steps)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
