# -*- coding: utf-8 -*-
"""What every tool-output parser shares: ``ParseError`` (names the tool, line number and line) and line
reading that refuses cut-off output (pure functions, stdlib only).
"""
from __future__ import annotations

from typing import List, Optional, Tuple


class ParseError(ValueError):
    """A tool printed something this parser cannot read. ``str()`` names the tool, line number and line."""

    def __init__(self, tool: str, message: str, line_no: Optional[int] = None, line: Optional[str] = None):
        self.tool = tool
        self.line_no = line_no
        self.line = line
        where = "" if line_no is None else " line %d" % line_no
        text = "" if line is None else ": %r" % line.strip()
        super().__init__("%s output%s: %s%s" % (tool, where, message, text))


def lines(text: str) -> List[Tuple[int, str]]:
    """(1-based line number, line without trailing whitespace) for every line of ``text``."""
    if not isinstance(text, str):
        raise TypeError("expected the tool's output as a string, got %s" % type(text).__name__)
    return [(i, line.rstrip()) for i, line in enumerate(text.splitlines(), 1)]


def complete_lines(tool: str, text: str) -> List[Tuple[int, str]]:
    """``lines`` for a tool's whole output: every tool ends its output with a newline, so a last line without
    one was cut off (a killed process, a full pipe) and is refused instead of read as a shorter value."""
    numbered = lines(text)
    if text and not text.endswith(("\n", "\r")):
        raise ParseError(tool, "the last line has no newline (output cut off?)", numbered[-1][0], numbered[-1][1])
    return numbered


def content_lines(tool: str, text: str) -> List[Tuple[int, str, str]]:
    """(line number, line, the line stripped) for every line of ``complete_lines`` that is not blank."""
    return [(n, line, line.strip()) for n, line in complete_lines(tool, text) if line.strip()]


def parse_int(tool: str, value: str, line_no: int, line: str) -> int:
    try:
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    except ValueError:
        raise ParseError(tool, "expected a number, got %r" % value, line_no, line) from None
