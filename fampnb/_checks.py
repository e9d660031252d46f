"""Argument checks that name the argument: bad input is one clear ``ValueError``, never a traceback
from deep inside numpy.  The lowest layer of the package (imports nothing from it)."""

from __future__ import annotations

import math
from typing import Any


def as_float(arg: str, value: Any) -> float:
    """``float(value)``, or ValueError naming ``arg``."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{arg} must be a number, got {value!r}") from None


def as_positive(arg: str, value: Any, zero_ok: bool = False) -> float:
    """``float(value)`` when finite and > 0 (>= 0 with ``zero_ok``), else ValueError naming
    ``arg`` (magnitudes, scales and gradient bounds are all checked this way)."""
    v = as_float(arg, value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
        raise ValueError(f"{arg} must be a finite number {'>=' if zero_ok else '>'} 0, "
                         f"got {value!r}")
    return v
