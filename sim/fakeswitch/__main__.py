# -*- coding: utf-8 -*-
"""Run fake switches on loopback ports until interrupted.

    python -m sim.fakeswitch --state-dir sim/.state/switches --switch sim-sw1=eos:62201 --switch sim-sw2=eos:62202
    python sim/fakeswitch --state-dir DIR --switch sw1=cumulus:0 --ready-file DIR/ready.json

Each ``--switch NAME=PLATFORM:PORT`` (platform eos, onyx, cumulus or mlnx-ib; port 0 picks a free one) gets a
state file DIR/NAME.json (kept if it exists: the switch remembers its config across restarts). Logins:
admin/admin (eos, onyx, mlnx-ib) or cumulus/cumulus, or --username/--password. The host key's known_hosts
lines are written to DIR/known_hosts; --ready-file gets {name: port} once every port listens.
Stops on SIGTERM/SIGINT.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

if __package__ in (None, ""):  # run as a script (python sim/fakeswitch): make the package importable
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from server import FakeSwitchServer  # type: ignore
else:
    from .server import FakeSwitchServer


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fakeswitch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--switch", action="append", required=True, metavar="NAME=PLATFORM:PORT")
    ap.add_argument("--bind", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    ap.add_argument("--username")
    ap.add_argument("--password")
    ap.add_argument("--ready-file")
    args = ap.parse_args(argv)
    server = FakeSwitchServer(args.state_dir, bind=args.bind)
    for spec in args.switch:
        try:
            name, rest = spec.split("=", 1)
            platform, port = rest.split(":", 1)
            server.add(name, platform, int(port), args.username, args.password)
        except ValueError as exc:
            ap.error("bad --switch %r (%s): use NAME=PLATFORM:PORT" % (spec, exc))
    server.start()
    ports = {name: sw["port"] for name, sw in server.switches.items()}
    if args.ready_file:
        with open(args.ready_file + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(ports, fh)
        os.replace(args.ready_file + ".tmp", args.ready_file)
    print("fakeswitch: %s" % ", ".join("%s on %s:%d" % (n, args.bind, p) for n, p in ports.items()), flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
