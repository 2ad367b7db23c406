"""The project's mitogen_linear strategy plugin: when it keeps Mitogen's CPU pinning (session 19, issue 19)."""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

PLUGIN = pathlib.Path(__file__).resolve().parents[2] / "strategy_plugins" / "mitogen_linear.py"


def load_plugin():
    spec = importlib.util.spec_from_file_location("dgxpod_mitogen_linear_under_test", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def plugin():
    pytest.importorskip("ansible_mitogen")
    return load_plugin()


@pytest.mark.parametrize(("setting", "cpus", "keep"), [
    (None, 1, False), ("", 2, False), (None, 3, False),      # small controllers: everything would share one CPU
    (None, 4, True), (None, 64, True),                        # Mitogen's own policy where it has CPUs to place
    ("on", 2, True), (" ON ", 2, True), ("off", 64, False), ("Off", 4, False),
])
def test_pinning_is_off_below_four_cpus_unless_the_user_says_otherwise(plugin, setting, cpus, keep):
    assert plugin.keep_mitogen_pinning(setting, cpus) is keep


@pytest.mark.parametrize("setting", ["yes", "1", "true", "auto"])
def test_a_pinning_setting_other_than_on_or_off_is_an_error_that_names_the_variable(plugin, setting):
    with pytest.raises(ValueError, match="DGXPOD_MITOGEN_PINNING must be 'on' or 'off'"):
        plugin.keep_mitogen_pinning(setting, 2)


def _policy_class_after_import(env_value):
    """Import the plugin in a fresh interpreter and report the class of Mitogen's active pinning policy."""
    code = ("import importlib.util, ansible_mitogen.affinity as a; "
            "s = importlib.util.spec_from_file_location('p', %r); m = importlib.util.module_from_spec(s); "
            "s.loader.exec_module(m); print(type(a.policy).__name__)" % str(PLUGIN))
    env = {"PATH": "/usr/bin:/bin"}
    if env_value is not None:
        env["DGXPOD_MITOGEN_PINNING"] = env_value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_importing_the_plugin_replaces_mitogens_policy_only_when_pinning_is_off(plugin):
    assert _policy_class_after_import("off") == "Policy"            # the base policy: pins nothing
    assert _policy_class_after_import("on") == "LinuxPolicy"        # Mitogen's own, untouched
