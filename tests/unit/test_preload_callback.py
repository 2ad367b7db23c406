"""callback_plugins/dgxpod_preload.py: the filter plugins are loaded in the controller's main process at play start,
so the task workers forked after it inherit them (issue 19: loading them in every worker was half the controller's
CPU on a no-op site.yml re-run)."""
from __future__ import annotations

import configparser
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load_callback():
    spec = importlib.util.spec_from_file_location("dgxpod_preload_cb",
                                                  os.path.join(ROOT, "callback_plugins", "dgxpod_preload.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ansible_cfg_names_the_callback_dir_and_the_plugin_needs_no_enabling():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "ansible.cfg"))
    assert "callback_plugins" in cfg.get("defaults", "callback_plugins").split(":")
    assert _load_callback().CallbackModule.CALLBACK_NEEDS_ENABLED is False


def test_play_start_loads_the_project_filters_in_this_process():
    # A fresh interpreter: the loader's cache must be empty before and hold the project's filters after.
    code = r"""
import os, sys
os.chdir(%(root)r)
os.environ['ANSIBLE_CONFIG'] = os.path.join(%(root)r, 'ansible.cfg')
from ansible.plugins.loader import init_plugin_loader, filter_loader, add_all_plugin_dirs
init_plugin_loader()
from ansible import constants as C
for d in C.DEFAULT_FILTER_PLUGIN_PATH:
    filter_loader.add_directory(d)
before = len(filter_loader._cached_non_collection_wrappers)
import importlib.util
spec = importlib.util.spec_from_file_location('cb', os.path.join(%(root)r, 'callback_plugins', 'dgxpod_preload.py'))
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
mod.CallbackModule().v2_playbook_on_play_start(None)
names = set(filter_loader._cached_non_collection_wrappers)
print(before, 'pod_nfs_fstab_block' in names, 'drift_stage_record' in names)
""" % {"root": ROOT}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True", "True"], out.stdout + out.stderr
