"""Exact number formats of mixed-precision training (numpy + ml_dtypes): the face of the package.

``format`` holds ``Format``, the five formats, ``get``, ``judge`` and ``safe_scale_window``;
``zones`` the exact zone classification on the bit pattern (``Zone``); ``bits`` one value seen
bit by bit (``Bits``); ``window`` the loss scales a gradient range tolerates (``ScaleWindow``).
Other packages import from here (``from fampnb.formats import FP16``), never from the modules.
"""

from __future__ import annotations

from .bits import Bits
from .format import (
    BF16,
    FORMATS,
    FP4_E2M1,
    FP8_E4M3,
    FP8_E5M2,
    FP16,
    FP32,
    Format,
    get,
    judge,
    safe_scale_window,
)
from .window import ScaleWindow
from .zones import Zone

__all__ = [
    "Zone", "Format", "FP32", "FP16", "BF16", "FP8_E4M3", "FP8_E5M2", "FP4_E2M1", "FORMATS", "get",
    "judge",
    "Bits", "ScaleWindow", "safe_scale_window",
]

for _cls in (Zone, Format, Bits, ScaleWindow):  # documented and shown as part of this package
    _cls.__module__ = __name__
del _cls
