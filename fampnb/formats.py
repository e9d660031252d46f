"""Number formats of mixed-precision training and the exact zone every value falls into.

Limits come from ``numpy.finfo`` / ``ml_dtypes.finfo`` and from real casts, never typed in.
``Format.classify`` agrees with the real cast ``x.astype(fmt.dtype)`` for every input of the
input's own dtype.  Note that ml_dtypes converts float64 to bf16/fp8 *through float32* (two
roundings) while numpy converts float64 to float16 directly; the cast is the reference, so this
module mirrors the library.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "Zone", "Format", "FP32", "FP16", "BF16", "FP8_E4M3", "FP8_E5M2", "FORMATS", "get", "judge",
]


class Zone(enum.IntEnum):
    """Where a value lands after the cast.  UNDERFLOW: non-zero input rounded to 0; ZERO: input 0."""

    NAN = 0
    OVERFLOW = 1
    NORMAL = 2
    SUBNORMAL = 3
    UNDERFLOW = 4
    ZERO = 5


def _cast(x: Any, dtype: Any) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x).astype(dtype)


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
        """Zone code (``Zone`` values, int8) of every element of ``x`` after the cast to this format.

        NaN inputs give ``Zone.NAN``; ±inf inputs ``Zone.OVERFLOW``.
        """
        a = np.asarray(x)
        if a.dtype.kind not in "fc":
            a = a.astype(np.float64)
        r = np.abs(_cast(_cast(a, self.dtype), np.float64))
        out = np.full(a.shape, Zone.NORMAL, dtype=np.int8)
        out[r < self.min_normal] = Zone.SUBNORMAL
        out[r == 0] = Zone.UNDERFLOW
        out[a == 0] = Zone.ZERO
        out[~np.isfinite(r)] = Zone.OVERFLOW
        out[np.isnan(a)] = Zone.NAN
        return out

    def zone_counts(self, x: Any, scale: float = 1.0) -> dict[Zone, int]:
        """How many elements of ``x * scale`` land in each zone (every Zone present as a key)."""
        a = np.asarray(x)
        if scale != 1.0:
            a = a * scale
        counts = np.bincount(self.classify(a).ravel(), minlength=len(Zone))
        return {z: int(counts[z]) for z in Zone}


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

_ALIASES = {
    "fp32": FP32, "float32": FP32, "single": FP32,
    "fp16": FP16, "float16": FP16, "half": FP16,
    "bf16": BF16, "bfloat16": BF16,
    "e4m3": FP8_E4M3, "fp8_e4m3": FP8_E4M3, "e4m3fn": FP8_E4M3, "float8_e4m3fn": FP8_E4M3,
    "e5m2": FP8_E5M2, "fp8_e5m2": FP8_E5M2, "float8_e5m2": FP8_E5M2,
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


def _check_magnitude(arg: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{arg} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{arg} must be a finite number >= 0, got {value!r}")
    return v


def judge(g_abs_max: float, scale: float, fmt: Format = FP16) -> tuple[float, str]:
    """The article's simple range model: ``scaled = g_abs_max * scale``; "OVERFLOW" if it is above
    ``fmt.max``, "UNDERFLOW" if below ``fmt.min_normal``, else "IN_RANGE".

    Kept exactly as the article wrote it (it ignores rounding and the subnormal band); compare with
    ``Format.classify`` for the exact picture.  Negative, NaN or infinite arguments raise ValueError.
    """
    g = _check_magnitude("g_abs_max", g_abs_max)
    s = _check_magnitude("scale", scale)
    scaled = g * s
    if scaled > fmt.max:
        return scaled, "OVERFLOW"
    if scaled < fmt.min_normal:
        return scaled, "UNDERFLOW"
    return scaled, "IN_RANGE"
