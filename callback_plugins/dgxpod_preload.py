# -*- coding: utf-8 -*-
"""Load the project's filter and test plugins once, in the controller's main process, before any task runs.

Why (issue 19, measured with py-spy on the no-op ``site.yml`` re-run): ansible-core 2.19 loads the non-collection
Jinja plugins (``filter_plugins/`` and what they import from ``module_utils/``) lazily, the first time a template
in a process uses a filter. Every task runs in a fresh worker forked from the main process, so every worker that
templated a filter loaded and compiled all of them again: 53 % of the controller's CPU in that run (more where
``PYTHONDONTWRITEBYTECODE`` is set, as it is on this project's CI machines, since every load compiles the source).
Loaded once here, before the first play, every worker inherits them already loaded.

Nothing is printed and nothing is recorded; the plugin needs no enabling (``CALLBACK_NEEDS_ENABLED`` is false), so
it also works when ``ANSIBLE_CALLBACKS_ENABLED`` names other callbacks.
"""
from __future__ import annotations

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import filter_loader, test_loader

DOCUMENTATION = r"""
name: dgxpod_preload
type: aggregate
short_description: load the filter and test plugins once before the forked task workers need them
description:
  - Loads every non-collection filter and test plugin (the project's C(filter_plugins/)) in the controller's main
    process when a playbook starts, so each forked task worker inherits them instead of loading and compiling them
    again. Prints nothing.
"""



class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "dgxpod_preload"
    CALLBACK_NEEDS_ENABLED = False

    def v2_playbook_on_play_start(self, play):
        # Jinja2Loader.all() fills the loader's cache of non-collection plugins; later calls return at once. Per
        # play, not once: a play's roles may add plugin directories, which clears that cache.
        # all() is a generator: the loading happens when it is consumed.
        for loader in (filter_loader, test_loader):
            for _plugin in loader.all():
                pass
