# -*- coding: utf-8 -*-
"""Read a switch's state for validation, read-only (used by library/switch_validate.py).

``SwitchValidate(params).run()`` connects with the deploy's own netmiko session code
(:class:`switch_push.SwitchPush`: same device types, host-key policy, timeouts and password hygiene), never
enters config mode, and returns what it read, parsed (module_utils/switch/show_parse.py):

- ``drift``: the deploy's scoped diff of the running config against the rendered model (the commands the
  deploy would send; nothing is sent here);
- ``port_config``: per-port MTU, speed, shutdown, QoS trust and PFC lines from the running config;
- ``lossless``: :func:`switch_verify.verify_lossless` on the platform's PFC/RoCE show command;
- ``status``: per-port operational state and speed; ``lldp``: per-port LLDP neighbours;
- ``counters``: error, discard and PFC pause counters read twice, ``interval`` seconds apart, and the delta (EOS:
  three ``| json`` tables; Onyx: ``show interfaces ethernet | json-print``, errors and discards only; NVUE:
  ``nv show interface --view counters`` and, per port that is up, ``nv show interface <port> counters qos
  pfc-stats``; module_utils/switch/counters_parse.py);
- ``optics``: the transceivers' DOM readings with the modules' own thresholds (EOS ``show interfaces transceiver
  dom thresholds | json``; NVUE ``nv show interface <port> transceiver thresholds`` per switch port that is up);
  ``environment``: PSUs, fans and temperatures (EOS ``show system environment
  power|cooling|temperature | json``, NVUE ``nv show platform environment``), read once while the counter interval
  runs (module_utils/switch/optics_parse.py). Onyx's optics and environment are not read (no public output of
  them was found to build a parser on; the evaluator says so).

A show command whose output does not parse is recorded in ``errors`` (command -> message) and the rest goes
on; the evaluator (module_utils/switch/eval.py) turns it into an ``error`` check. Deciding pass/fail is not
done here.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import counters_parse as cp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import optics_parse as op
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch import show_parse as sp
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.diff import remediation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.push import SwitchPush
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.verify import verify_lossless

# platform -> (command, parser) per kind of reading; counters: {name: (command, parser)}
STATUS = {"eos": ("show interfaces status | json", sp.eos_interfaces_status),
          "onyx": ("show interfaces ethernet status", sp.onyx_interfaces_status),
          "cumulus": ("nv show interface", sp.nvue_interfaces)}
LLDP = {"eos": ("show lldp neighbors detail | json", sp.eos_lldp_neighbors_detail),
        "onyx": ("show lldp interfaces ethernet remote", sp.onyx_lldp_remote),
        "cumulus": ("nv show interface lldp", sp.nvue_lldp)}
COUNTERS = {"eos": {"errors": ("show interfaces counters errors | json", sp.eos_counters_errors),
                    "discards": ("show interfaces counters discards | json", sp.eos_counters_discards),
                    "pause": ("show priority-flow-control counters | json", sp.eos_pfc_counters)},
            "onyx": {"interfaces": (cp.ONYX_COUNTERS, cp.onyx_interfaces_counters)},
            "cumulus": {"interfaces": (cp.NVUE_COUNTERS, cp.nvue_counters_view)}}
# counters read one port at a time (a command template with %s for the port): the ports that are up
PORT_COUNTERS = {"cumulus": {"pause": (cp.NVUE_PFC, cp.nvue_pfc_stats)}}


def _whole(parser: Callable[[str], Any]) -> Callable[[str], Any]:
    """A parser that refuses an output without its final newline, fed what netmiko returns: netmiko reads up to
    the prompt (so the output is whole) and strips the final newline with the prompt; it is put back."""
    return lambda text: parser(text if not text or text.endswith("\n") else text + "\n")


OPTICS = {"eos": ("show interfaces transceiver dom thresholds | json", op.eos_dom_thresholds)}
# optics read one port at a time, on the switch ports that are up (NVUE 5.11+)
PORT_OPTICS = {"cumulus": (op.NVUE_TRANSCEIVER, op.nvue_transceiver_thresholds)}
ENVIRONMENT = {"eos": {"power": ("show system environment power | json", op.eos_environment_power),
                       "cooling": ("show system environment cooling | json", op.eos_environment_cooling),
                       "temperature": ("show system environment temperature | json",
                                       op.eos_environment_temperature)},
               "cumulus": {"platform": ("nv show platform environment", _whole(op.nvue_platform_environment))}}
LOSSLESS = {"eos": "show priority-flow-control", "onyx": "show roce", "cumulus": "nv show qos roce -o json"}


class SwitchValidate(SwitchPush):
    """Read-only: reuses SwitchPush's connection (``_connect``, ``_send``, ``read_running``)."""

    def __init__(self, params: Dict[str, Any], log: Optional[Callable[[str], None]] = None,
                 connect: Optional[Callable[..., Any]] = None, sleep: Callable[[float], None] = time.sleep):
        super().__init__(params, log, connect)
        self._sleep = sleep
        self.result = {"changed": False, "platform": self.platform, "errors": {}}

    def _read(self, command: str, parser: Callable[[str], Any]) -> Any:
        try:
            return parser(self._send(command))
        except ValueError as exc:
            self.result["errors"][command] = str(exc)
            return None

    def _counters(self, up_ports: Any) -> Dict[str, Any]:
        """{kind: {port: {counter: n}} | None (unreadable: in ``errors``)}; the per-port kinds for ``up_ports``."""
        out = {}
        for kind, (command, parser) in COUNTERS.get(self.platform, {}).items():
            out[kind] = self._read(command, parser)
        for kind, (template, parser) in PORT_COUNTERS.get(self.platform, {}).items():
            ports: Optional[Dict[str, Any]] = {}
            for port in up_ports:
                cmd = template % port
                value = self._read(cmd, lambda text, port=port, parser=parser: parser(text, port))
                if value is None:
                    ports = None
                    break
                ports[port] = {k: v for k, v in value.items() if isinstance(v, int)}
            out[kind] = ports
        return out

    def run(self, check_mode: bool = True) -> Dict[str, Any]:  # noqa: ARG002 - always read-only
        return self._session(self._validate)

    def _validate(self, t0: float) -> Dict[str, Any]:
        running = self.read_running()
        rem = remediation(self.platform, running, self.p["config"])
        self.result["drift"] = {"changed": rem.changed, "commands": rem.commands}
        try:
            self.result["port_config"] = sp.port_config(self.platform, running)
        except ValueError as exc:
            self.result["errors"]["running-config per port"] = str(exc)
        expect = self.p.get("lossless_expect") or {}
        if expect and self.platform in LOSSLESS:
            try:
                self.result["lossless"] = verify_lossless(self.platform, self._send(LOSSLESS[self.platform]),
                                                          expect)
            except ValueError as exc:
                self.result["errors"][LOSSLESS[self.platform]] = str(exc)
        if self.platform in STATUS:
            self.result["status"] = self._read(*STATUS[self.platform])
            self.result["lldp"] = self._read(*LLDP[self.platform])
        # the ports a per-port counter is read on: up, and switch ports (NVUE lists eth0, lo, bonds... too)
        up = sorted(p for p, st in (self.result.get("status") or {}).items()
                    if st.get("up") and (self.platform != "cumulus" or p.startswith("swp")))
        first = self._counters(up)
        t_first = time.time()
        if self.platform in OPTICS:
            self.result["optics"] = self._read(*OPTICS[self.platform])
        elif self.platform in PORT_OPTICS:
            template, parser = PORT_OPTICS[self.platform]
            optics = {}
            for port in up:  # a port whose output does not parse is left out and named in errors
                value = self._read(template % port, _whole(lambda text, port=port: parser(text, port)))
                if value is not None:
                    optics[port] = value
            self.result["optics"] = optics
        if self.platform in ENVIRONMENT:
            self.result["environment"] = {kind: self._read(command, parser)
                                          for kind, (command, parser) in ENVIRONMENT[self.platform].items()}
        if self.platform in COUNTERS:
            wait = float(self.p.get("counter_interval") or 0) - (time.time() - t_first)
            if wait > 0:
                self._sleep(wait)
            second = self._counters(up)
            self.result["counters"] = {
                "interval_s": round(time.time() - t_first, 2),
                "first": first, "second": second, "delta": _delta(first, second)}
        self.result["timings"] = {"total": round(time.time() - t0, 3)}
        return self.result


def _delta(first: Dict[str, Any], second: Dict[str, Any]) -> Dict[str, Any]:
    """{kind: {port: {counter: second - first}}} for every counter read both times (a counter that went down
    - cleared in between - gives its second value)."""
    out: Dict[str, Any] = {}
    for kind, now in second.items():
        before = first.get(kind)
        if now is None or before is None:
            out[kind] = None
            continue
        out[kind] = {}
        for port, values in now.items():
            old = before.get(port) or {}
            out[kind][port] = {k: (v - old[k] if k in old and v >= old[k] else v) for k, v in values.items()}
    return out
