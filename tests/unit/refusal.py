# -*- coding: utf-8 -*-
"""One assertion for the parsers' refusals (module_utils/common/parse_util.ParseError): the message names the tool
first and says what was wrong."""
from __future__ import annotations

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.parse_util import ParseError


def assert_refused(parse, text, tool, words, *args):
    """``parse(text, *args)`` raises ParseError whose message starts with ``tool`` and contains ``words``."""
    with pytest.raises(ParseError) as e:
        parse(text, *args)
    msg = str(e.value)
    assert msg.startswith(tool) and words in msg, msg
    return msg
