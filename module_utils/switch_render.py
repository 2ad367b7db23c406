# -*- coding: utf-8 -*-
"""Render a structured switch config (module_utils/switch_model.py) with the platform's Jinja2 template.

The templates live in ``roles/switch_config/templates/<platform>.cfg.j2``. The role, the golden-file tests and
``ansible-playbook --check`` all render through this one function, so what is previewed is what is pushed.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

import jinja2

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "roles", "switch_config", "templates")


def render(structured: Dict[str, Any], template_dir: Optional[str] = None) -> str:
    """The configuration text for ``structured['platform']``; always ends with one newline."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir or TEMPLATE_DIR),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    text = env.get_template("%s.cfg.j2" % structured["platform"]).render(c=structured)
    return text.rstrip("\n") + "\n"
