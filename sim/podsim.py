#!/usr/bin/env python3
"""podsim -- the pod-in-a-box: a simulated DGX pod on one Linux machine (docs/simulator.md).

The command-line entry that `sim/podsim` runs. The verbs and their options are in sim/podsimlib/cli.py,
the code in the package sim/podsimlib/ (one module per concern; `up` is the ordered list of reconcile
steps in sim/podsimlib/up.py); the pod's shape is sim/podmodel.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from podsimlib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
