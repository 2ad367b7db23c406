"""The state directory's state.json (what this pod created: nodes, their namespaces' inodes, recorded
processes, shapes) and the lock that lets one podsim command at a time change it."""

from __future__ import annotations

import fcntl
import json
import os

from .common import Paths, die

STATE_VERSION = 1


class State:
    def __init__(self, paths: Paths):
        self.paths = paths
        self.data: dict = {"version": STATE_VERSION, "nodes": 0, "storage": 0, "members": {}, "shapes": {},
                           "shape_proportional": False}
        if os.path.exists(paths.state):
            with open(paths.state) as f:
                self.data = json.load(f)

    @property
    def members(self) -> dict:
        return self.data["members"]

    def save(self) -> None:
        os.makedirs(self.paths.root, exist_ok=True)
        tmp = self.paths.state + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.paths.state)


class Lock:
    def __init__(self, paths: Paths):
        os.makedirs(paths.root, exist_ok=True)
        self.f = open(paths.lock, "w")

    def __enter__(self):
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            die("another podsim command holds %s" % self.f.name)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()
