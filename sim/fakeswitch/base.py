# -*- coding: utf-8 -*-
"""What every fake switch CLI shares: ``new_state`` (a switch's JSON-able state), ``Device`` (one switch: its state
and faults) and ``Session`` (one SSH login: lines typed in, output and an action out). The vendors' grammars are
in eos.py, onyx.py and cumulus.py; cli.py describes the whole CLI and is what the server imports.
This is a test double for CI and the pod-in-a-box; it is not a switch.
"""
from __future__ import annotations

import re
import time
from typing import Any, Dict, List, Optional, Tuple

PLATFORMS = ("eos", "onyx", "cumulus", "mlnx-ib")
DEFAULT_USERS = {"eos": "admin", "onyx": "admin", "mlnx-ib": "admin", "cumulus": "cumulus"}

Reply = Tuple[str, Optional[str]]  # (output text, action: None | "close" | "drop")
_IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"


def new_state(platform: str, hostname: str, running: Optional[List[Any]] = None) -> Dict[str, Any]:
    """A factory-fresh switch: hostname set, nothing else (EOS/Onyx), or the NVUE defaults (Cumulus)."""
    if platform not in PLATFORMS:
        raise ValueError("platform must be one of %s" % ", ".join(PLATFORMS))
    if running is None:
        if platform == "eos":
            running = [["hostname %s" % hostname, None]]
        elif platform == "cumulus":
            running = ["nv set system hostname %s" % hostname]
        else:
            running = ["hostname %s" % hostname]
    return {"platform": platform, "hostname": hostname, "running": running, "startup": None,
            "sessions": {}, "pending": None, "revision": 1, "faults": {}, "saves": 0, "commits": 0}


class Device:
    """One switch's persistent state. ``save`` is called after every change (the server writes JSON)."""

    def __init__(self, state: Dict[str, Any], save=None):
        self.state = state
        self._save = save

    @property
    def platform(self) -> str:
        return self.state["platform"]

    def hostname(self) -> str:
        return self.state["hostname"]

    def save(self) -> None:
        if self._save is not None:
            self._save(self.state)

    def faults(self) -> Dict[str, Any]:
        return self.state.get("faults") or {}

    def session(self) -> Session:
        return session_class(self.platform)(self)


class Session:
    """One login. Subclasses implement ``prompt`` and ``_command``."""

    def __init__(self, device: Device):
        self.dev = device
        self.config_lines = 0  # config lines received in this connection (for drop_after_lines)
        self.dropped = False

    def banner(self) -> str:
        return ""

    def prompt(self) -> str:
        raise NotImplementedError

    def handle(self, line: str) -> Reply:
        line = line.strip()
        return self._command(line)

    # -- faults
    def _fault_drop_before(self) -> Optional[Reply]:
        """drop_after_lines: drop the connection instead of taking the K+1-th config line (EOS counts the
        session's ``commit`` as a config line too)."""
        faults = self.dev.faults()
        drop_after = faults.get("drop_after_lines")
        if drop_after is not None and int(faults.get("drop_times", 1)) > 0:
            if self.config_lines >= int(drop_after):
                return self._drop(faults, "drop_times", int(faults.get("drop_times", 1)))
        self.config_lines += 1
        return None

    def _drop(self, faults: Dict[str, Any], counter: str, left: int) -> Reply:
        """Count one use of a drop fault (``faults[counter]``, ``left`` before this one) and drop."""
        faults[counter] = left - 1
        self.dev.save()
        self.dropped = True
        return "", "drop"

    def _fault_before_config_line(self, line: str) -> Optional[Reply]:
        """Apply drop/reject/ignore faults to a config line; None when the line may proceed."""
        dropped = self._fault_drop_before()
        if dropped is not None:
            return dropped
        faults = self.dev.faults()
        reject = faults.get("reject")
        if reject and re.search(reject, line):
            return self._invalid(line), None
        ignore = faults.get("ignore")
        if ignore and re.search(ignore, line):
            return "", None  # accepted, silently not applied
        return None

    def _fault_after_commit(self) -> Optional[Reply]:
        """After a commit took effect: drop the connection before the reply, if the fault says so."""
        faults = self.dev.faults()
        left = int(faults.get("drop_after_commit") or 0)
        return self._drop(faults, "drop_after_commit", left) if left > 0 else None

    def _invalid(self, line: str) -> str:
        raise NotImplementedError

    def _sync_hostname(self) -> None:
        pass


def _natural(text: str) -> List[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def state_summary(state: Dict[str, Any]) -> str:
    """One line for logs: platform, hostname, config size."""
    return "%s %s: %d running item(s), %d saves, %s" % (
        state["platform"], state["hostname"], len(state["running"]), state.get("saves", 0),
        time.strftime("%H:%M:%S"))


def session_class(platform: str):
    """The Session class of a platform (one module per vendor: eos.py, onyx.py, cumulus.py)."""
    if platform == "eos":
        from_mod = "eos"
    elif platform in ("onyx", "mlnx-ib"):
        from_mod = "onyx"
    elif platform == "cumulus":
        from_mod = "cumulus"
    else:
        raise ValueError("no fake CLI for platform %r (one of %s)" % (platform, ", ".join(PLATFORMS)))
    import importlib
    pkg = __package__ or ""
    mod = importlib.import_module(("%s.%s" % (pkg, from_mod)) if pkg else from_mod)
    return getattr(mod, {"eos": "EosSession", "onyx": "OnyxSession", "cumulus": "CumulusSession"}[from_mod])
