"""Per-tensor and per-row fp8 scales, computed as Transformer Engine and torchao compute them.

The scale multiplies the tensor before the cast (``fp8 = cast(x * scale)``, then the matmul
multiplies by ``1/scale``).  All arithmetic is float32, as on the GPU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..formats import Format, get

__all__ = ["current_scale", "scale_tensor", "rowwise_scales", "as_margin"]

_F32_MAX = np.float32(np.finfo(np.float32).max)


def as_margin(margin: Any) -> float:
    """``margin`` as a finite float (TE passes it as a float exponent); ValueError otherwise."""
    try:
        m = float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"margin must be a number, got {margin!r}") from None
    if not math.isfinite(m):
        raise ValueError(f"margin must be finite, got {margin!r}")
    return m


def current_scale(amax: float, fmt: Format | str = "fp8_e4m3", margin: float = 0,
                  power_of_two: bool = False) -> float:
    """The per-tensor scale ``fmt.max / amax / 2**margin`` as Transformer Engine computes it.

    float32 throughout: ``scaled_max = float32(fmt.max * 2**-margin)``, then one rounded float32
    division by ``float32(amax)``.  Edge cases as TE's ``compute_scale_from_amax``: an amax of 0,
    inf or NaN gives 1.0 (nothing to scale by); a scale that overflows float32 (a tiny amax) is
    float32's max.  ``power_of_two``: the scale rounded *down* to a power of two (TE's
    ``force_pow_2_scales``, which masks off the mantissa; torchao's
    ``round_scales_to_power_of_2``), so the scaled amax stays at or below max.  Negative amax is
    a ValueError.  (TE's ``Float8CurrentScaling`` has no margin: it is 0 there.)
    """
    f = get(fmt)
    m = as_margin(margin)
    a = np.float32(amax)
    if a < 0:
        raise ValueError(f"amax must be >= 0, got {amax!r}")
    if not np.isfinite(a) or a == 0:
        return 1.0
    scaled_max = np.float32(np.float32(f.max) * np.float32(2.0 ** -m))
    with np.errstate(over="ignore"):
        s = np.float32(scaled_max / a)
    if np.isinf(s):
        s = _F32_MAX
    if power_of_two:
        s = np.array(s, np.float32).view(np.uint32) & np.uint32(0xFF800000)
        s = s.view(np.float32)
    return float(s)


def scale_tensor(x: Any, scale: Any) -> np.ndarray:
    """``x * scale`` in float32 (``scale`` a scalar or an array that broadcasts: one per row)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.asarray(x, np.float32) * np.asarray(scale, np.float32)


def rowwise_scales(x: Any, fmt: Format | str = "fp8_e4m3", margin: float = 0,
                   power_of_two: bool = True) -> np.ndarray:
    """One ``current_scale`` per row (the amax over the last axis), shaped to broadcast over
    ``x``: torchao's ``rowwise`` recipe (axiswise scaling, e4m3 everywhere, scales rounded down to
    powers of two).  (torchao clamps the amax at 1e-12 where TE returns 1.0 for a zero amax; a
    zero row is all zeros either way, so what is cast is the same.)"""
    a = np.asarray(x, np.float32)
    if a.ndim == 0:
        raise ValueError("rowwise scaling needs at least one axis")
    if a.shape[-1] == 0:
        raise ValueError("rowwise scaling needs non-empty rows")
    amax = np.max(np.abs(a), axis=-1, keepdims=True)
    flat = [current_scale(v, fmt, margin, power_of_two) for v in amax.ravel()]
    return np.array(flat, np.float32).reshape(amax.shape)
