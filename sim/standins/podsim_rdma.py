#!/usr/bin/python3
"""RDMA PERFTEST STAND-INS for the pod-in-a-box simulator -- test doubles, NOT the real tools.

The simulated DGX have no HCAs: their "RDMA devices" (mlx5_0..3, sim/standins/podsim_hw.py) are names over veths.
These stand-ins play perftest's ``ib_write_bw``, ``ib_write_lat`` and ``ib_read_lat`` inside simulated DGX nodes
(argv[0] picks the tool) and MOVE REAL BYTES: the device's netdev (the node's /etc/podsim/hardware.json, as
``ibdev2netdev`` answers) gives the address; the server listens on it, the client connects from its own device's
address to the server's, so the data crosses the two nodes' simulated links of that rail - ``sim/podsim shape`` on
one NIC slows that rail, a link that is down fails the run. What they print is perftest's own format (perftest
``src/perftest_parameters.{c,h}`` ``ctx_print_test_info``, ``RESULT_FMT_G``, ``REPORT_FMT``, ``RESULT_FMT_LAT``,
``REPORT_FMT_LAT``; ``src/perftest_communication.{c,h}`` for the address lines and the connect failure;
``src/write_bw.c``/``write_lat.c`` for the order of the lines and the failure messages), read by the toolkit's
parser (module_utils/network/perftest_parse.py).

  ib_write_bw [-d DEV] [-p PORT] [-D SECS] [-s BYTES] [-q QPS] [-x GID] [--report_gbits] [-F] [--use_cuda=N] [SERVER]
      bandwidth: the client streams for -D seconds (default 5); the server counts what it received between
      perftest's margins (a quarter of -D at each end), the rate both print
  ib_write_lat / ib_read_lat [-d DEV] [-p PORT] [-n ITERS] [-s BYTES] [-x GID] [-F] [SERVER]
      latency: -n (default 1000) ping-pongs of -s bytes (default 2); half the round trip, as perftest reports

Fault (per node, ``/etc/podsim/rdma_faults.json`` - ``{"mlx5_1": "rtr"}``, written by the fault catalogue,
sim/faults): the HCA's QP cannot be moved to RTR, as when its port, GID or the fabric's RoCE settings are broken:
on that node the run prints perftest's ``Failed to modify QP <n> to RTR`` and `` Unable to Connect the HCA's through
the link`` and exits 1; its peer, whose exchange is cut, prints `` Failed to exchange data between server and
clients``. TCP over the same netdev keeps working (iperf3, ping): only RDMA is broken.

The render_* functions are pure and unit-tested (tests/unit/test_sim_rdma_standins.py: each output parses with
perftest_parse, a fault changes it, bytes really cross a socket).
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import socket
import struct
import sys
import time
from statistics import median, pstdev

STANDIN_NOTE = "podsim stand-in (simulated hardware, not the real tool)"
FAULTS_PATH = "/etc/podsim/rdma_faults.json"
FAULT_KINDS = ("rtr",)
DEF_PORT = 18515
RESULT_LINE = "-" * 87
TITLES = {"ib_write_bw": "RDMA_Write BW Test", "ib_write_lat": "RDMA_Write Latency Test",
          "ib_read_lat": "RDMA_Read Latency Test"}
RESULT_FMT_G = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
RESULT_FMT = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
RESULT_FMT_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
                  "   99% percentile[usec]   99.9% percentile[usec] ")
CONNECT_WAIT_S = 60.0   # a server waits this long for its client (perftest waits forever; the module bounds it)
IO_TIMEOUT_S = 30.0
CHUNK = 256 * 1024


# --------------------------------------------------------------------------- arguments, state

def parse_args(tool: str, args: list[str]) -> dict:
    """perftest's options the stand-in plays; others are accepted and ignored (ValueError for a bad value)."""
    o = {"tool": tool, "dev": None, "port": DEF_PORT, "duration": 5, "size": 65536 if tool.endswith("_bw") else 2,
         "iters": 1000, "qps": 1, "gid": None, "gbits": False, "cuda": None, "server": None}
    takes = {"-d": "dev", "--ib-dev": "dev", "-p": "port", "--port": "port", "-D": "duration", "--duration": "duration",
             "-s": "size", "--size": "size", "-n": "iters", "--iters": "iters", "-q": "qps", "--qp": "qps",
             "-x": "gid", "--gid-index": "gid"}
    ints = ("port", "duration", "size", "iters", "qps", "gid")
    i = 0
    while i < len(args):
        a = args[i]
        key, _, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if key in takes:
            value = inline or (args[i + 1] if i + 1 < len(args) else None)
            if value is None:
                raise ValueError("option %s needs a value" % a)
            name = takes[key]
            o[name] = int(value) if name in ints else value
            i += 1 if inline else 2
            continue
        if a == "--report_gbits":
            o["gbits"] = True
        elif a.startswith("--use_cuda"):
            o["cuda"] = a.partition("=")[2] or "0"
        elif not a.startswith("-"):
            o["server"] = a
        i += 1
    return o


def load_faults(path: str | None = None) -> dict:
    """{hca: kind} of this node (no file: healthy)."""
    try:
        with open(path or os.environ.get("PODSIM_RDMA_FAULTS", FAULTS_PATH)) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items() if v in FAULT_KINDS} if isinstance(data, dict) else {}


def netdev_address(netdev: str) -> str | None:
    """The netdev's IPv4 address (SIOCGIFADDR), or None when it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", netdev.encode()[:15]))
        except OSError:
            return None
    return socket.inet_ntoa(packed[20:24])


# --------------------------------------------------------------------------- rendering (pure)

def gid_text(ipv4: str) -> str:
    """perftest's PERF_GID_FMT of an IPv4-mapped (RoCE v2) GID: 16 decimal bytes."""
    return ":".join("%02d" % b for b in [0] * 10 + [255, 255] + [int(x) for x in ipv4.split(".")])


def render_header(tool: str, side: str, dev: str, gid: int | None, link: str = "Ethernet", mtu: int = 4096,
                  qps: int = 1) -> list[str]:
    """ctx_print_test_info (perftest_parameters.c) for a RoCE run of this tool and side."""
    bw = tool.endswith("_bw")
    lines = [RESULT_LINE, "                    " + TITLES[tool],
             " Dual-port       : OFF\t\tDevice         : %s" % dev,
             " Number of qps   : %d\t\tTransport type : IB" % qps,
             " Connection type : RC\t\tUsing SRQ      : OFF",
             " PCIe relax order: ON", " ibv_wr* API     : ON"]
    if side == "client":
        lines.append(" TX depth        : %d" % (128 if bw else 1))
    if bw:
        lines.append(" CQ Moderation   : 100")
    lines += [" Mtu             : %d[B]" % mtu, " Link type       : %s" % link]
    if gid is not None:
        lines.append(" GID index       : %d" % gid)
    lines.append(" Outstand reads  : 16" if tool == "ib_read_lat" else
                 " Max inline data : %d[B]" % (0 if bw else 220))
    lines += [" rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", RESULT_LINE]
    return lines


def render_address(side: str, qp: dict, bw: bool) -> list[str]:
    """BASIC_ADDR_FMT (+ RDMA_FMT on bandwidth runs) and PERF_GID_FMT (perftest_communication.h)."""
    line = " %s address: LID 0000 QPN %#06x PSN %#06x" % (side, qp["qpn"], qp["psn"])
    if bw:
        line += " RKey %#08x VAddr %#016x" % (qp["rkey"], qp["vaddr"])
    out = [line]
    if qp.get("ipv4"):
        out.append(" GID: %s" % gid_text(qp["ipv4"]))
    return out


def render_bw_table(size: int, iters: int, peak_gbps: float, avg_gbps: float, msg_rate: float, gbits: bool
                    ) -> list[str]:
    """RESULT_FMT_G / RESULT_FMT, one REPORT_FMT row (REPORT_FMT_EXT under 0.1 Gb/s, as print_full_bw_report),
    RESULT_LINE."""
    if gbits:
        peak, avg = peak_gbps, avg_gbps
    else:  # MB/sec: bytes / 0x100000
        peak, avg = peak_gbps * 1e9 / 8 / 0x100000, avg_gbps * 1e9 / 8 / 0x100000
    if gbits and avg < 0.1:
        row = " %-7d    %d           %-7.6f            %-7.6f            %-7.6f" % (size, iters, peak, avg, msg_rate)
    else:
        row = " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f" % (size, iters, peak, avg, msg_rate)
    return [RESULT_LINE, RESULT_FMT_G if gbits else RESULT_FMT, row, RESULT_LINE]


def lat_stats(samples_usec: list[float]) -> dict:
    """perftest's latency figures from one-way samples: min, max, typical (the median), average, stdev, 99% and
    99.9% percentiles."""
    s = sorted(samples_usec)
    n = len(s)

    def pct(p: float) -> float:
        return s[min(n - 1, int(p * n))]
    return {"t_min": s[0], "t_max": s[-1], "t_typical": median(s), "t_avg": sum(s) / n, "t_stdev": pstdev(s),
            "p99": pct(0.99), "p99_9": pct(0.999)}


def render_lat_table(size: int, iters: int, st: dict) -> list[str]:
    """RESULT_FMT_LAT and one REPORT_FMT_LAT row, RESULT_LINE."""
    row = (" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
           % (size, iters, st["t_min"], st["t_max"], st["t_typical"], st["t_avg"], st["t_stdev"], st["p99"],
              st["p99_9"]))
    return [RESULT_LINE, RESULT_FMT_LAT, row, RESULT_LINE]


def render_rtr_failure(qpn: int) -> list[str]:
    """ctx_connect's failure (perftest_resources.c) and write_bw.c's / write_lat.c's line after it."""
    return ["Failed to modify QP %d to RTR" % qpn, " Unable to Connect the HCA's through the link"]


EXCHANGE_FAILED = " Failed to exchange data between server and clients"


def render_connect_failure(server: str, port: int) -> list[str]:
    """perftest_communication.c: the client's lines when nothing listens on the server's port (as perftest PR 228
    shows them: the second line is two messages without a newline between them)."""
    return ["Couldn't connect to %s:%d" % (server, port),
            "Unable to open file descriptor for socket connection Unable to init the socket connection"]


# --------------------------------------------------------------------------- the wire

def _send_json(sock: socket.socket, obj: dict) -> None:
    sock.sendall((json.dumps(obj) + "\n").encode())


def _recv_json(sock: socket.socket, buf: bytearray) -> dict | None:
    """One JSON line (None when the peer closed first)."""
    while b"\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None
        buf.extend(data)
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return json.loads(line)


def _qp(ipv4: str | None) -> dict:
    return {"qpn": random.randint(0x100, 0xFFFF), "psn": random.randint(0, 0xFFFFFF),
            "rkey": random.randint(0x100000, 0x1FFFFF), "vaddr": random.randint(1 << 44, 1 << 47), "ipv4": ipv4}


def stream(sock: socket.socket, seconds: float) -> int:
    """Client side of a bandwidth run: send for ``seconds``; returns the bytes sent."""
    chunk = memoryview(bytes(CHUNK))
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        sock.sendall(chunk)
        sent += CHUNK
    sock.shutdown(socket.SHUT_WR)
    return sent


def sink(sock: socket.socket, buf: bytearray, duration: float) -> dict:
    """Server side of a bandwidth run: read to the end; the average between perftest's margins (a quarter of the
    duration at each end, measured from the first byte) and the best 0.1 s as the peak."""
    margin = duration / 4.0
    data = bytearray(1 << 20)
    view = memoryview(data)
    got = len(buf)
    first = time.monotonic()
    start, stop = first + margin, first + duration - margin
    window = 0
    bucket_t, bucket, peak = first, 0, 0.0
    while True:
        n = sock.recv_into(view)
        if not n:
            break
        now = time.monotonic()
        got += n
        if start <= now <= stop:
            window += n
        bucket += n
        if now - bucket_t >= 0.1:
            peak = max(peak, bucket * 8 / (now - bucket_t) / 1e9)
            bucket_t, bucket = now, 0
    span = max(1e-6, min(stop, time.monotonic()) - start)
    avg = window * 8 / span / 1e9 if window else got * 8 / max(1e-6, time.monotonic() - first) / 1e9
    return {"bytes": got, "window_bytes": window, "avg_gbps": avg, "peak_gbps": max(peak, avg)}


def ping(sock: socket.socket, size: int, iters: int) -> list[float]:
    """Client side of a latency run: ``iters`` ping-pongs of ``size`` bytes; half of each round trip in usec."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg = bytes(max(1, size))
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sock.sendall(msg)
        got = 0
        while got < len(msg):
            data = sock.recv(len(msg) - got)
            if not data:
                raise ConnectionError("peer closed")
            got += len(data)
        out.append((time.perf_counter() - t0) * 1e6 / 2)
    return out


def pong(sock: socket.socket, size: int, iters: int, buf: bytearray) -> None:
    """Server side of a latency run: echo ``iters`` messages of ``size`` bytes (``buf``: what was read already)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    n = max(1, size)
    for _ in range(iters):
        got, buf[:] = bytes(buf[:n]), buf[n:]
        while len(got) < n:
            data = sock.recv(n - len(got))
            if not data:
                raise ConnectionError("peer closed")
            got += data
        sock.sendall(got)


# --------------------------------------------------------------------------- the run

def _out(lines: list[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _err(lines: list[str]) -> int:
    sys.stdout.flush()
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    return 1


def run(o: dict, state: dict, faults: dict) -> int:
    """One perftest run, server (no SERVER argument) or client."""
    tool, bw = o["tool"], o["tool"].endswith("_bw")
    dev = o["dev"] or sorted(state.get("hcas") or {"mlx5_0": {}})[0]
    hca = (state.get("hcas") or {}).get(dev)
    if not hca:
        return _err([" IB device %s not found" % dev, " Unable to find the Infiniband/RoCE device"])
    addr = netdev_address(hca["netdev"])
    if not addr:
        return _err([" Couldn't get context for the device"])  # no address: no RoCE GID, no data path
    side = "client" if o["server"] else "server"
    mine = _qp(addr)
    buf = bytearray()
    if side == "server":
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            lsock.bind((addr, o["port"]))
            lsock.listen(1)
            lsock.settimeout(CONNECT_WAIT_S)
            # printed once it listens (perftest prints it just before): whoever waits for the line may connect
            _out(["", "************************************", "* Waiting for client to connect... *",
                  "************************************"])
            sock, _ = lsock.accept()
        except OSError:
            return _err(["Couldn't listen to port %d" % o["port"], " Unable to init the socket connection"])
        finally:
            lsock.close()
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(IO_TIMEOUT_S)
        try:
            sock.bind((addr, 0))
            sock.connect((o["server"], o["port"]))
        except OSError:
            sock.close()
            return _err(render_connect_failure(o["server"], o["port"]))
    sock.settimeout(IO_TIMEOUT_S + o["duration"])
    with sock:
        try:
            _send_json(sock, {"qp": mine, "duration": o["duration"], "size": o["size"], "iters": o["iters"]})
            theirs = _recv_json(sock, buf)
        except (OSError, ValueError):
            theirs = None
        if theirs is None:
            return _err([EXCHANGE_FAILED])
        if side == "server":  # the client's settings rule (perftest's negotiation)
            o = dict(o, duration=theirs["duration"], size=theirs["size"], iters=theirs["iters"])
        _out(render_header(tool, side, dev, o["gid"], qps=o["qps"]))
        if faults.get(dev) == "rtr":
            return _err(render_rtr_failure(mine["qpn"]))
        try:
            _send_json(sock, {"rtr": True})
            ready = _recv_json(sock, buf)
        except (OSError, ValueError):
            ready = None
        if not ready:
            return _err([EXCHANGE_FAILED])
        _out(render_address("local", mine, bw) + render_address("remote", theirs["qp"], bw))
        try:
            if bw:
                return _bw(sock, buf, o, side)
            return _lat(sock, buf, o, side)
        except (OSError, ValueError, ConnectionError):
            return _err([EXCHANGE_FAILED])


def _bw(sock: socket.socket, buf: bytearray, o: dict, side: str) -> int:
    if side == "client":
        stream(sock, o["duration"])
        rep = _recv_json(sock, buf)
        if rep is None:
            return _err([EXCHANGE_FAILED])
    else:
        rep = sink(sock, buf, o["duration"])
        _send_json(sock, rep)
    span = max(1e-6, o["duration"] / 2.0)
    iters = int((rep["window_bytes"] or rep["bytes"]) / max(1, o["size"]))
    _out(render_bw_table(o["size"], iters, rep["peak_gbps"], rep["avg_gbps"], iters / span / 1e6, o["gbits"]))
    return 0


def _lat(sock: socket.socket, buf: bytearray, o: dict, side: str) -> int:
    if side == "client":
        st = lat_stats(ping(sock, o["size"], o["iters"]))
        _send_json(sock, st)
    else:
        pong(sock, o["size"], o["iters"], buf)
        st = _recv_json(sock, buf)
        if st is None:
            return _err([EXCHANGE_FAILED])
    _out(render_lat_table(o["size"], o["iters"], st))
    return 0


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    if tool not in TITLES:
        print("podsim_rdma: called as %r; link it as one of %s" % (tool, ", ".join(TITLES)), file=sys.stderr)
        return 2
    try:
        o = parse_args(tool, argv[1:])
    except ValueError as exc:
        print(" Parser function exited with Error (%s)" % exc, file=sys.stderr)
        return 1
    import podsim_hw  # beside this file (the nodes' /usr/local/sbin): the node's HCAs and their netdevs
    return run(o, podsim_hw.load_state(), load_faults())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
