"""Processes the simulator starts: recorded as pid + start time (so a recycled PID is never mistaken for
ours), signalled only by record, entered with nsenter; waiting for a TCP port to answer."""

from __future__ import annotations

import os
import signal
import socket
import time


def proc_starttime(pid: int) -> int | None:
    """Start time (clock ticks since boot) of a live, non-zombie process, else None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except (OSError, TypeError):
        return None
    fields = data[data.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def ns_inode(pid: int, kind: str) -> int | None:
    try:
        return os.stat("/proc/%d/ns/%s" % (pid, kind)).st_ino
    except OSError:
        return None


def record(pid: int | None) -> dict | None:
    """A process record: pid + start time, so a recycled PID is never mistaken for ours."""
    if not pid:
        return None
    st = proc_starttime(pid)
    return {"pid": pid, "start": st} if st is not None else None


def alive(rec: dict | None) -> bool:
    return bool(rec) and proc_starttime(rec["pid"]) == rec["start"]


def signal_recorded(recs: list[dict], timeout: float = 1.0) -> list[dict]:
    """TERM the recorded processes still alive, KILL them after timeout; returns the survivors."""
    live = [r for r in recs if alive(r)]
    for r in live:
        try:
            os.kill(r["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + timeout
    while time.time() < deadline and any(alive(r) for r in live):
        time.sleep(0.05)
    for r in live:
        if alive(r):
            try:
                os.kill(r["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.time() + 2
    while time.time() < deadline and any(alive(r) for r in live):
        time.sleep(0.05)
    return [r for r in live if alive(r)]


def read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def nsenter_cmd(anchor_pid: int, cmd: list[str]) -> list[str]:
    return ["nsenter", "-t", str(anchor_pid), "-n", "-m", "-u", "--"] + cmd


def wait_tcp(addrs: list[tuple[str, int]], timeout: float) -> list[tuple[str, int]]:
    """Wait until every (address, port) accepts a TCP connection; returns those that never did."""
    pending = list(addrs)
    deadline = time.time() + timeout
    while pending and time.time() < deadline:
        still = []
        for a in pending:
            try:
                with socket.create_connection(a, timeout=0.5):
                    pass
            except OSError:
                still.append(a)
        pending = still
        if pending:
            time.sleep(0.05)
    return pending
