# -*- coding: utf-8 -*-
"""Read, diff, back up, apply and verify a switch configuration over netmiko (used by library/switch_config.py).

``SwitchPush(params).run(check_mode)`` returns the module result dict; it raises ``PushError`` (with a partial
result) when the switch could not be brought to the desired config. Apply is atomic where the platform
allows it and otherwise restores the backup:

- EOS: ``configure session <name>`` -> lines -> ``show session-config diffs`` -> ``commit``; ``abort`` on any
  rejected line. A dropped connection leaves the session uncommitted: the running config is unchanged. If
  the connection drops during ``commit`` the module reconnects: the new config in place means the commit took
  effect (the run goes on, with a warning); the old one means it did not (the run fails, saying so).
- Onyx / mlnx-ib: lines in ``configure terminal``; on a rejected line or a dropped connection the backup is
  restored (remediation back to it); ``configuration write`` only after a clean push and an empty re-diff.
- Cumulus NVUE: ``nv config detach`` (drop any stale pending revision), ``nv set``/``nv unset`` lines, then
  ``nv config apply -y`` and ``nv config save``. Nothing takes effect before the apply.

Every push uses an ``error_pattern``; after it the running config is read again and must give an empty diff.
The password is never put in a result, a log line or an exception text.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Dict, List, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.diff import ERROR_PATTERNS, Remediation, remediation
from ansible_collections.dgxpod.toolkit.plugins.module_utils.switch.verify import verify_lossless

DEVICE_TYPES = {"eos": "arista_eos", "onyx": "mellanox_mlnxos", "mlnx-ib": "mellanox_mlnxos",
                "cumulus": "cumulus_linux"}
SHOW_RUNNING = {"eos": "show running-config", "onyx": "show running-config", "mlnx-ib": "show running-config",
                "cumulus": "nv config show -o commands"}

RUNNING_MARK = {"eos": re.compile(r"^(hostname|end)\b", re.M), "onyx": re.compile(r"hostname ", re.M),
                "mlnx-ib": re.compile(r"hostname ", re.M), "cumulus": re.compile(r"^nv set ", re.M)}


class PushError(Exception):
    def __init__(self, msg: str, result: Dict[str, Any]):
        super().__init__(msg)
        self.msg = msg
        self.result = result


class SwitchPush:
    def __init__(self, params: Dict[str, Any], log: Optional[Callable[[str], None]] = None,
                 connect: Optional[Callable[..., Any]] = None):
        self.p = params
        self.platform = params["platform"]
        self.log = log or (lambda msg: None)
        self._connect_fn = connect
        self.conn = None
        self.result: Dict[str, Any] = {"changed": False, "platform": self.platform, "commands": []}
        self.timings: Dict[str, float] = {}

    # ------------------------------------------------------------------ connection
    def _connect(self):
        from netmiko import ConnectHandler

        p = self.p
        args: Dict[str, Any] = dict(
            device_type=DEVICE_TYPES[self.platform], host=p["host"], port=int(p.get("port") or 22),
            username=p["username"], password=p["password"], secret=p.get("enable_secret") or p["password"],
            conn_timeout=float(p.get("connect_timeout", 10)), auth_timeout=float(p.get("connect_timeout", 10)),
            banner_timeout=float(p.get("connect_timeout", 10)), timeout=float(p.get("command_timeout", 60)),
            read_timeout_override=None, fast_cli=True, session_log=None, allow_agent=False,
            use_keys=False)
        known_hosts = p.get("known_hosts_file")
        if p.get("host_key_checking", True):
            args.update(ssh_strict=True, system_host_keys=not known_hosts)
            if known_hosts:
                args.update(alt_host_keys=True, alt_key_file=known_hosts)
        else:
            args.update(ssh_strict=False, system_host_keys=False)
        factory = self._connect_fn or ConnectHandler
        try:
            conn = factory(**args)
        except Exception as exc:  # netmiko/paramiko raise many types; none carries the password
            raise PushError("cannot connect to %s:%s as %s: %s" % (p["host"], args["port"], p["username"],
                                                                 _clean(exc, p)), self.result) from None
        if self.platform in ("eos", "onyx", "mlnx-ib"):
            conn.enable()
        return conn

    def _disconnect(self) -> None:
        if self.conn is not None:
            try:
                self.conn.disconnect()
            except Exception:  # noqa: BLE001 - the session may already be gone
                pass
            self.conn = None

    def _send(self, command: str, **kw: Any) -> str:
        return self.conn.send_command(command, read_timeout=float(self.p.get("command_timeout", 60)), **kw)

    def read_running(self) -> str:
        """The running config; read again (once) if the output does not look like one."""
        for attempt in range(2):
            text = self._send(SHOW_RUNNING[self.platform])
            if RUNNING_MARK[self.platform].search(text or ""):
                return text
            self.log("running config read looked incomplete (attempt %d)" % (attempt + 1))
            self.conn.clear_buffer()
        raise PushError("could not read the running config (%r): the output does not look like %s" % (
            SHOW_RUNNING[self.platform], self.platform), self.result)

    # ------------------------------------------------------------------ the run
    def run(self, check_mode: bool) -> Dict[str, Any]:
        return self._session(lambda t0: self._push(t0, check_mode))

    def _session(self, work: Callable[[float], Dict[str, Any]]) -> Dict[str, Any]:
        """Connect, ``work(start time)``, disconnect. Any failure that is not a PushError (timeouts, closed
        sockets) becomes one saying so, without the password (switch_config and switch_validate alike)."""
        t0 = time.time()
        self.conn = self._connect()
        try:
            return work(t0)
        except PushError:
            raise
        except Exception as exc:  # noqa: BLE001 - timeouts, closed sockets: say so, without the password
            raise PushError("talking to %s failed (command timeout %ss): %s" % (
                self.p["host"], self.p.get("command_timeout", 60), _clean(exc, self.p)), self.result) from None
        finally:
            self._disconnect()

    def _push(self, t0: float, check_mode: bool) -> Dict[str, Any]:
        self.timings["connect"] = round(time.time() - t0, 3)
        before_text = self.read_running()
        rem = remediation(self.platform, before_text, self.p["config"])
        self.result.update(commands=rem.commands, changed=rem.changed,
                           diff={"before": rem.before, "after": rem.after})
        if rem.touches_management and not self.p.get("allow_management_change"):
            self.result["changed"] = rem.changed
            raise PushError("the change touches the management interface (%s), which could cut the "
                            "controller off; set allow_management_change=true (switch_config_allow_management_"
                            "change) after checking the address" % ", ".join(
                                c for c in rem.commands if "anagement" in c or "mgmt0" in c or "eth0" in c),
                            self.result)
        if rem.changed and not check_mode:
            self._backup(before_text)
            self._apply(rem, before_text)
            after_text = self.read_running()
            left = remediation(self.platform, after_text, self.p["config"])
            if left.changed:
                raise PushError("the switch did not converge: after the push, these commands are still "
                                "needed: %s; the change is in the running config but not saved, the config "
                                "before it is in %s" % ("; ".join(left.commands[:10]),
                                                        self.result.get("backup_path") or "no backup (no "
                                                        "backup_dir)"), self.result)
            self._save()
        if self.p.get("verify_lossless") and self.platform != "mlnx-ib" and not (check_mode and rem.changed):
            self._verify()
        self.timings["total"] = round(time.time() - t0, 3)
        self.result["timings"] = self.timings
        return self.result

    def _backup(self, text: str) -> None:
        directory = self.p.get("backup_dir")
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = os.path.join(directory, "%s-%s.cfg" % (self.p.get("name") or self.p["host"], stamp))
        n = 1
        while os.path.exists(path):
            n += 1
            path = os.path.join(directory, "%s-%s-%d.cfg" % (self.p.get("name") or self.p["host"], stamp, n))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        self.result["backup_path"] = path

    # ------------------------------------------------------------------ apply per platform
    def _apply(self, rem: Remediation, before_text: str) -> None:
        t0 = time.time()
        pattern = self.p.get("error_pattern") or ERROR_PATTERNS[self.platform]
        try:
            if self.platform == "eos":
                self._apply_eos(rem, pattern)
            elif self.platform == "cumulus":
                self._apply_nvue(rem, pattern)
            else:
                self._apply_onyx(rem, pattern, before_text)
        finally:
            self.timings["apply"] = round(time.time() - t0, 3)
        self.result["changed"] = True

    def _config_set(self, lines: List[str], pattern: str, **kw: Any) -> str:
        return self.conn.send_config_set(lines, error_pattern=pattern, cmd_verify=True,
                                         read_timeout=float(self.p.get("command_timeout", 60)), **kw)

    def _apply_eos(self, rem: Remediation, pattern: str) -> None:
        from netmiko.exceptions import ConfigInvalidException

        name = "dgxpod-%s-%d" % (time.strftime("%H%M%S"), os.getpid() % 100000)
        self.result["session"] = name
        lines = [c.strip() for c in rem.commands]
        try:
            self._config_set(lines, pattern, config_mode_command="configure session %s" % name,
                             exit_config_mode=False)
        except ConfigInvalidException as exc:
            self._abort_eos(name)
            raise PushError("the switch rejected a line (%s); config session %s aborted, the running config "
                            "is unchanged" % (exc, name), self.result) from None
        except Exception as exc:  # noqa: BLE001 - a dropped connection, a timeout
            self._after_drop("config session %s was never committed" % name, exc)
            return
        try:
            diffs = self._send("show session-config diffs", expect_string=r"\)#")
            self.result["session_diff"] = diffs
            out = self.conn.send_command("commit", expect_string=r"[>#]\s*$",
                                         read_timeout=float(self.p.get("command_timeout", 60)))
        except Exception as exc:  # noqa: BLE001
            self._after_drop("the connection dropped before or during commit of session %s" % name, exc)
            return
        if re.search(pattern, out or "", re.M):
            self._abort_eos(name)
            raise PushError("commit of session %s failed: %s" % (name, out.strip()), self.result)

    def _abort_eos(self, name: str) -> None:
        try:
            self.conn.send_command("abort", expect_string=r"[>#]\s*$", read_timeout=20)
        except Exception:  # noqa: BLE001 - an uncommitted session changes nothing anyway
            pass

    def _apply_nvue(self, rem: Remediation, pattern: str) -> None:
        from netmiko.exceptions import ConfigInvalidException

        try:
            self._send("nv config detach")
            self._config_set(rem.commands, pattern, enter_config_mode=False, exit_config_mode=False)
        except ConfigInvalidException as exc:
            self._detach_quietly()
            raise PushError("the switch rejected a line (%s); pending revision discarded (nv config detach), "
                            "the applied config is unchanged" % exc, self.result) from None
        except Exception as exc:  # noqa: BLE001
            self._after_drop("nothing was applied (no nv config apply was sent)", exc)
            return
        try:
            out = self._send("nv config apply -y")
        except Exception as exc:  # noqa: BLE001
            self._after_drop("the connection dropped during nv config apply", exc)
            return
        if re.search(pattern, out or "", re.M):
            self._detach_quietly()
            raise PushError("nv config apply failed: %s" % out.strip(), self.result)
        self.result["apply_output"] = out.strip()

    def _detach_quietly(self) -> None:
        try:
            self._send("nv config detach")
        except Exception:  # noqa: BLE001
            pass

    def _apply_onyx(self, rem: Remediation, pattern: str, before_text: str) -> None:
        from netmiko.exceptions import ConfigInvalidException

        try:
            self._config_set(rem.commands, pattern)
            return
        except ConfigInvalidException as exc:
            problem = "the switch rejected a line (%s)" % exc
        except Exception as exc:  # noqa: BLE001
            problem = "the connection dropped during the push (%s)" % _clean(exc, self.p)
        self._restore(before_text, problem)

    def _restore(self, before_text: str, problem: str) -> None:
        """Bring the running config back to the backup (Onyx has no sessions)."""
        try:
            self._disconnect()
            self.conn = self._connect()
            now = self.read_running()
            back = remediation(self.platform, now, before_text, extra_scope=self.p["config"])
            if back.changed:
                self._config_set(back.commands, ERROR_PATTERNS[self.platform])
            final = remediation(self.platform, self.read_running(), before_text, extra_scope=self.p["config"])
        except Exception as exc:  # noqa: BLE001
            raise PushError("%s, and restoring the backup %s failed: %s; restore it by hand" % (
                problem, self.result.get("backup_path"), _clean(exc, self.p)), self.result) from None
        if final.changed:
            raise PushError("%s; restoring the backup left differences: %s" % (
                problem, "; ".join(final.commands[:10])), self.result)
        self.result["restored"] = True
        raise PushError("%s; the backup %s was restored (running config as before, not saved)" % (
            problem, self.result.get("backup_path")), self.result)

    def _after_drop(self, what: str, exc: Exception) -> None:
        """The connection broke mid-push: reconnect and compare what the switch holds now.

        Returns (on the new connection) when the running config is entirely the new one - the commit took
        effect and only its reply was lost - so the run goes on to re-read, save and verify as usual; raises
        PushError otherwise, saying whether the running config is the old one or neither."""
        detail = _clean(exc, self.p)
        state = "could not reconnect to check the running config"
        try:
            self._disconnect()
            self.conn = self._connect()
            now = self.read_running()
            if not remediation(self.platform, now, self.p["config"]).changed:
                state = "the running config is the new one"
                self.result["after_drop"] = state
                self.result.setdefault("warnings", []).append(
                    "connection lost during the push (%s): %s; reconnected and found the new config in place, "
                    "so the run went on to save and verify it" % (detail, what))
                return
            if not remediation(self.platform, now, self.result["diff"]["before"] or "\n",
                               extra_scope=self.p["config"]).changed:
                state = "the running config is unchanged (old)"
            else:
                state = "the running config differs from both old and new: restore %s" % self.result.get(
                    "backup_path")
        except Exception:  # noqa: BLE001
            pass
        self.result["after_drop"] = state
        raise PushError("connection lost during the push (%s): %s; %s" % (detail, what, state), self.result)

    def _save(self) -> None:
        if not self.p.get("save", True):
            return
        if self.platform == "eos":
            out = self._send("copy running-config startup-config")
        elif self.platform == "cumulus":
            out = self._send("nv config save")
        else:
            out = self.conn.save_config()
        self.result["saved"] = True
        if re.search(ERROR_PATTERNS[self.platform], out or "", re.M):
            raise PushError("saving the config failed: %s" % out.strip(), self.result)

    def _verify(self) -> None:
        command, parse_as = {"eos": ("show priority-flow-control", "eos"), "onyx": ("show roce", "onyx"),
                             "cumulus": ("nv show qos roce -o json", "cumulus")}[self.platform]
        output = self._send(command)
        self.result["lossless"] = verify_lossless(parse_as, output, self.p.get("lossless_expect") or {})


def _clean(exc: Exception, params: Dict[str, Any]) -> str:
    text = "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else "")
    for secret in (params.get("password"), params.get("enable_secret")):
        if secret:
            text = text.replace(str(secret), "********")
    return text
