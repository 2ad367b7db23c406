# -*- coding: utf-8 -*-
"""Command lines and job files for the pod_iperf and pod_fio modules. Pure functions (no I/O).

The fio job is the RA's (004 appendix "iPerf and FIO", ``fio1.job``): rw=read, bs=1024KiB, ioengine=libaio,
direct=1, iodepth=32, numjobs=<GPUs per host>, kb_base=1000, time_based with ramp_time and runtime; here each
job gets one file of its own, spread round-robin over the data directories (the RA spreads reads over its
mounts the same way, ``rank % number_of_mounts``), and a layout (write) phase creates the files first.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence


def iperf_server_argv(iperf3: str, bind: str, port: int, lifetime: int, timeout_bin: Optional[str] = None,
                      one_off: bool = True) -> List[str]:
    """A server bound to one address: one-off (``-1``: exits after one test), or, with ``one_off=False``, one
    that serves test after test (a host's whole schedule, one test at a time); ``timeout`` kills it after
    ``lifetime`` seconds even if nobody stops it (a crashed play never leaves servers behind for long)."""
    argv = [iperf3, "-s"] + (["-1"] if one_off else []) + ["-B", bind, "-p", str(int(port))]
    if timeout_bin:
        argv = [timeout_bin, "-k", "5", str(int(lifetime))] + argv
    return argv


def iperf_client_argv(iperf3: str, server: str, port: int, bind: Optional[str], streams: int, duration: int,
                      reverse: bool = False, length: Optional[str] = None, omit: int = 0) -> List[str]:
    argv = [iperf3, "-c", server, "-p", str(int(port)), "-P", str(int(streams)), "-t", str(int(duration)), "-J"]
    if bind:
        argv += ["-B", bind]
    if reverse:
        argv.append("-R")
    if length:
        argv += ["-l", str(length)]
    if omit:
        argv += ["-O", str(int(omit))]
    return argv


def listening_ports(proc_net_tcp: str) -> List[int]:
    """Local ports in LISTEN state (st == 0A) from the text of /proc/net/tcp or /proc/net/tcp6."""
    ports = []
    for line in proc_net_tcp.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A" and ":" in fields[1]:
            try:
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
            except ValueError:
                continue
    return sorted(set(ports))


def is_our_iperf_server(cmdline: Sequence[str], port: int) -> bool:
    """True when a process command line (argv list) is an iperf3 server on ``port`` (ours to stop)."""
    args = list(cmdline)
    if not any(a.endswith("iperf3") for a in args) or "-s" not in args:
        return False
    for i, a in enumerate(args[:-1]):
        if a in ("-p", "--port") and args[i + 1] == str(int(port)):
            return True
    return any(a == "--port=%d" % int(port) for a in args)


def fio_jobfile(files: Sequence[Dict[str, Any]], phase: str, bs: str = "1024KiB", ioengine: str = "libaio",
                iodepth: int = 32, direct: bool = True, size: str = "1GiB", runtime: int = 60, ramp_time: int = 0,
                rate_iops: Optional[int] = None, kb_base: int = 1000) -> str:
    """An fio job file: one [section] per job with its own directory and file.

    phase "layout": rw=write of the whole file (creates it; measured, reported as write);
    phase "read": rw=read, time_based for ``runtime`` seconds after ``ramp_time``."""
    if phase not in ("layout", "read"):
        raise ValueError("phase must be layout or read")
    lines = ["[global]", "ioengine=%s" % ioengine, "direct=%d" % (1 if direct else 0), "bs=%s" % bs,
             "iodepth=%d" % int(iodepth), "size=%s" % size, "kb_base=%d" % int(kb_base), "create_serialize=0",
             "sync=0"]
    if phase == "layout":
        lines += ["rw=write", "end_fsync=1"]
    else:
        lines += ["rw=read", "time_based=1", "runtime=%d" % int(runtime)]
        if ramp_time:
            lines.append("ramp_time=%d" % int(ramp_time))
        if rate_iops:
            lines.append("rate_iops=%d" % int(rate_iops))
    for f in files:
        lines += ["", "[%s]" % f["job"], "directory=%s" % f["directory"], "filename=%s" % f["filename"]]
    return "\n".join(lines) + "\n"


def fio_size_bytes(text: str, kb_base: int = 1000) -> Optional[int]:
    """The bytes fio gives a file of ``size=text`` in a job with ``kb_base`` (None if not a plain size, e.g. a
    percentage): the IEC forms ('16MiB', '1Gi') are powers of 1024, the others ('16M', '16MB', '16m', '64g')
    powers of ``kb_base`` (fio-3.33 with kb_base=1000 writes 16000000 bytes for '16M', 16777216 for '16MiB')."""
    s = str(text).strip().lower()
    if s.endswith("b") and not s[:-1].isdigit():
        s = s[:-1]
    base = int(kb_base)
    if s.endswith("i"):
        s, base = s[:-1], 1024
    num = s.rstrip("kmgtp")
    unit = s[len(num):]
    if len(unit) > 1:
        return None
    try:
        value = float(num)
    except ValueError:
        return None
    return int(value * base ** ("kmgtp".index(unit) + 1) if unit else value) if value >= 0 else None
