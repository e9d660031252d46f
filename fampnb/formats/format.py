"""Number formats of mixed-precision training and the exact zone every value falls into.

Limits come from ``numpy.finfo`` / ``ml_dtypes.finfo`` and from real casts, never typed in.
``Format.classify`` agrees with the real cast ``x.astype(fmt.dtype)`` for every input of the
input's own dtype.  The cast is the reference, so this module mirrors the installed library:
numpy converts float64 to float16 directly (one rounding); ml_dtypes up to 0.6 converts float64 to
bf16/fp8 *through float32* (two roundings), and 0.7.0 (2026-11) directly (one rounding).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from .. import _checks
from . import bits as _bits
from . import window as _window
from . import zones as _zones
from .bits import Bits
from .window import ScaleWindow
from .zones import Zone

__all__ = [
    "Zone", "Format", "FP32", "FP16", "BF16", "FP8_E4M3", "FP8_E5M2", "FP4_E2M1", "FORMATS", "get",
    "judge",
    "Bits", "ScaleWindow", "safe_scale_window",
]

_cast = _zones.cast


@dataclass(frozen=True)
class Format:
    """A binary floating-point format; all limits are float64 values derived from the library.

    ``overflow_threshold`` is the midpoint between ``max`` and the next step up: magnitudes above
    it round to inf (or NaN where the format has no inf); ``overflow_at_threshold`` says whether the
    midpoint itself overflows (round-half-to-even picks inf for fp32/fp16/bf16/e5m2, but 448 for
    e4m3fn).  ``underflow_threshold`` is the largest magnitude that rounds to zero (the tie at half
    the smallest subnormal, which rounds to the even neighbour 0).
    """

    name: str
    dtype: Any = field(repr=False)
    bits: int
    exponent_bits: int
    mantissa_bits: int
    max: float
    min_normal: float
    min_subnormal: float
    eps: float
    overflow_threshold: float
    underflow_threshold: float
    has_inf: bool
    overflow_at_threshold: bool

    def round(self, x: Any) -> np.ndarray:
        """Values after the real cast to this format, returned as float64 (inf/NaN kept)."""
        return _cast(_cast(x, self.dtype), np.float64)

    def classify(self, x: Any) -> np.ndarray:
        """Zone code (``Zone`` values, int8 array of ``x``'s shape) of every element after the cast.

        Exact: agrees with the real cast ``x.astype(self.dtype)`` for every value of ``x``'s own
        dtype, so a float64 input is judged as the installed ml_dtypes converts it to bf16/fp8
        (through float32, two roundings, up to 0.6; directly from 0.7.0) and as numpy does to fp16
        (directly, one rounding).  float16, bfloat16, float32 and float64 inputs are classified on
        the bit pattern against thresholds found with real casts (a few integer compares per
        element, in cache-sized chunks; extra memory is the int8 result, a copy for non-contiguous
        input); other 1-2 byte float dtypes via a table of all their codes; anything else (ints,
        objects) by casting everything.  NaN inputs give ``Zone.NAN``, ±inf ``Zone.OVERFLOW``
        (also for e4m3fn, whose cast gives NaN), input zeros ``Zone.ZERO``.
        """
        return _zones.classify(x, self.dtype, self.min_normal)

    def zone_counts(self, x: Any, scale: float = 1.0) -> dict[Zone, int]:
        """How many elements of ``x * scale`` land in each zone (every Zone present as a key).

        The product is computed by numpy in ``x``'s dtype (a float32 array stays float32), as a
        training framework scales a gradient before the cast.
        """
        a = np.asarray(x)
        if scale != 1.0:
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                a = a * scale
        counts = _zones.bincount(self.classify(a), len(Zone))
        return {z: int(counts[z]) for z in Zone}

    def decode(self, code: int) -> float:
        """The value (float64) of the bit pattern ``code`` (0 <= code < 2**bits) in this format."""
        if not 0 <= int(code) < 1 << self.bits:
            raise ValueError(f"code must be in [0, 2**{self.bits}), got {code!r}")
        raw = np.array([int(code)], _zones.UINT[self.bits // 8]).view(self.dtype)
        return float(_cast(raw, np.float64)[0])

    def decompose(self, value: float) -> Bits:
        """Everything a bit explorer shows about ``value`` after the real cast to this format.

        ``value`` is taken as a float64 (a Python float) and cast the library's way (ml_dtypes
        up to 0.6 goes through float32 for bf16/fp8, 0.7.0 and later directly).  Subnormals and
        zero report the minimum exponent ``1 - bias``.  Neighbours are those of the stored value
        in this format: beyond ``max`` comes inf (NaN for e4m3fn, which has no inf); for ±inf the
        neighbours are ±max and ±inf; for NaN all derived numbers are NaN.  ``ulp`` is the gap
        from the stored value to the next larger magnitude (``min_subnormal`` at zero, NaN at
        inf/NaN); ``rel_error`` is
        ``|stored - value| / |value|`` computed exactly (0 for value 0, inf when a finite value
        overflows to inf, NaN when either side is NaN).
        """
        return _bits.decompose(self, _checks.as_float("value", value))


def _make(name: str, dtype: Any) -> Format:
    fi = ml_dtypes.finfo(dtype)
    mx, tiny, sub = float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal)
    below_max = float(np.nextafter(np.asarray(fi.max, dtype), np.asarray(0, dtype)))
    threshold = mx + (mx - below_max) / 2
    over = _cast(_cast(np.asarray(threshold), dtype), np.float64)
    has_inf = bool(np.isinf(_cast(_cast(np.asarray(np.inf), dtype), np.float64)))
    return Format(
        name=name, dtype=np.dtype(dtype), bits=int(fi.bits), exponent_bits=int(fi.nexp),
        mantissa_bits=int(fi.nmant), max=mx, min_normal=tiny, min_subnormal=sub,
        eps=float(fi.eps), overflow_threshold=threshold, underflow_threshold=sub / 2,
        has_inf=has_inf, overflow_at_threshold=not bool(np.isfinite(over)),
    )


FP32 = _make("fp32", np.float32)
FP16 = _make("fp16", np.float16)
BF16 = _make("bf16", ml_dtypes.bfloat16)
FP8_E4M3 = _make("fp8_e4m3", ml_dtypes.float8_e4m3fn)
FP8_E5M2 = _make("fp8_e5m2", ml_dtypes.float8_e5m2)
FORMATS: tuple[Format, ...] = (FP32, FP16, BF16, FP8_E4M3, FP8_E5M2)
# MX's 4-bit element (OCP MX v1.0); not in FORMATS.  Its cast saturates (no inf, no NaN).
FP4_E2M1 = _make("fp4_e2m1", ml_dtypes.float4_e2m1fn)

_ALIASES = {
    "fp32": FP32, "float32": FP32, "single": FP32,
    "fp16": FP16, "float16": FP16, "half": FP16,
    "bf16": BF16, "bfloat16": BF16,
    "e4m3": FP8_E4M3, "fp8_e4m3": FP8_E4M3, "e4m3fn": FP8_E4M3, "float8_e4m3fn": FP8_E4M3,
    "e5m2": FP8_E5M2, "fp8_e5m2": FP8_E5M2, "float8_e5m2": FP8_E5M2,
    "e2m1": FP4_E2M1, "fp4_e2m1": FP4_E2M1, "float4_e2m1fn": FP4_E2M1,
}


def get(name: str | Format) -> Format:
    """The format called ``name`` (case-insensitive; e.g. "fp16", "half", "bf16", "e4m3")."""
    if isinstance(name, Format):
        return name
    key = str(name).strip().lower().replace("-", "_")
    try:
        return _ALIASES[key]
    except KeyError:
        known = ", ".join(sorted(_ALIASES))
        raise ValueError(f"unknown format {name!r}; known names: {known}") from None


def judge(g_abs_max: float, scale: float, fmt: Format = FP16) -> tuple[float, str]:
    """The article's simple range model: ``scaled = g_abs_max * scale``; "OVERFLOW" if it is above
    ``fmt.max``, "UNDERFLOW" if below ``fmt.min_normal``, else "IN_RANGE".

    Kept exactly as the article wrote it (it ignores rounding and the subnormal band); compare with
    ``Format.classify`` for the exact picture.  Negative, NaN or infinite arguments raise
    ValueError naming the argument.
    """
    g = _checks.as_positive("g_abs_max", g_abs_max, zero_ok=True)
    s = _checks.as_positive("scale", scale, zero_ok=True)
    scaled = g * s
    if scaled > fmt.max:
        return scaled, "OVERFLOW"
    if scaled < fmt.min_normal:
        return scaled, "UNDERFLOW"
    return scaled, "IN_RANGE"


def safe_scale_window(g_min: float, g_max: float, fmt: Format | str = FP16) -> ScaleWindow:
    """The window of loss scales S for gradient magnitudes in [g_min, g_max] (both > 0, finite).

    S is judged the way numpy and ``Format.classify`` see it: the product ``g * S`` in float64,
    then the library's cast to ``fmt``.  ``s_max`` is the largest S with ``g_max * S`` finite
    after the cast (below the overflow threshold: 65520 for fp16), ``s_min`` the smallest with the
    product itself at least ``fmt.min_normal``, ``s_min_nonzero`` the smallest with the product
    not rounded to 0 by the cast (above ``fmt.underflow_threshold``).  Found by bisection over
    float64 bit patterns (about 130 scalar casts, ~2 ms).  Where no float64 S reaches a floor
    (g_min below ~1e-300) it is inf and its ``p2_*`` exponent is still exact.  ValueError for
    g_min <= 0, g_max < g_min, NaN or inf, naming the argument.
    """
    return _window.scale_window(g_min, g_max, get(fmt))
