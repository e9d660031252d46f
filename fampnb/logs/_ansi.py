"""Terminal colour codes in a log line: the escape sequences a console writes for a terminal
(Keras 3's progress bar always writes them, so they reach files too), and what is left of them
where the escape character was lost on the way (a log pasted into a web page reads
``[1m32/32[0m [32m━━━━[0m``).  Both readers read a line without them."""

from __future__ import annotations

import re

__all__ = ["coloured", "strip"]

#: an escape sequence: CSI (``ESC [ parameters final``, colours among them) or a two-byte escape
_ESC = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
#: a colour (SGR) code left without its escape character: ``[0m``, ``[1m``, ``[1;32m``
_LEFT = re.compile(rb"\[(?:\d{1,3}(?:;\d{1,3})*)?m")


def coloured(data: bytes) -> bool:
    """Does the line hold an escape character, or a reset code ``[0m`` left without one?"""
    return b"\x1b" in data or b"[0m" in data


def strip(data: bytes) -> bytes:
    """``data`` without its colour codes: every escape sequence, and, in a line where a reset
    ``[0m`` is left without its escape character, every colour code left so (only there: a
    ``[1m`` alone may be text)."""
    if b"\x1b" in data:
        data = _ESC.sub(b"", data)
    if b"[0m" in data:
        data = _LEFT.sub(b"", data)
    return data
