"""``safe_scale_window``: the loss scales a gradient range tolerates (internal to ``fampnb.formats``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import as_positive

if TYPE_CHECKING:
    from .format import Format


@dataclass(frozen=True)
class ScaleWindow:
    """Loss scales S that keep a gradient range [g_min, g_max] representable in one format.

    ``s_max``: largest S with ``g_max * S`` finite after the cast; ``s_min``: smallest S with
    ``g_min * S`` at least ``min_normal`` (no subnormal precision loss); ``s_min_nonzero``: the
    looser floor, smallest S with ``g_min * S`` not rounded to zero by the cast.  ``p2_*`` are
    the matching power-of-two exponents k (scale ``2.0**k``): ``p2_max`` the largest,
    ``p2_min``/``p2_min_nonzero`` the smallest.  ``empty``: no S keeps both ends normal
    (``s_min > s_max``).  Scales are float64; a floor no float64 reaches is inf.
    """

    format_name: str
    g_min: float
    g_max: float
    s_min: float
    s_max: float
    s_min_nonzero: float
    p2_min: int
    p2_max: int
    p2_min_nonzero: int
    empty: bool

    @property
    def empty_nonzero(self) -> bool:
        """No S keeps g_max finite and g_min non-zero."""
        return self.s_min_nonzero > self.s_max

    @property
    def p2_empty(self) -> bool:
        """No power of two lies in [s_min, s_max]."""
        return self.p2_min > self.p2_max


_F64_MAX_CODE = int(np.array([np.finfo(np.float64).max]).view(np.uint64)[0])


def _f64(code: int) -> float:
    return float(np.array([code], np.uint64).view(np.float64)[0])


def _bisect_f64(pred: Any, want_largest: bool) -> float:
    """The largest (or smallest) positive finite float64 S where the monotone ``pred`` holds."""
    lo, hi = 1, _F64_MAX_CODE  # codes of 5e-324 and of the float64 max
    while lo < hi:
        if want_largest:  # pred true below, false above
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if pred(_f64(mid)) else (lo, mid - 1)
        else:  # pred false below, true above
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pred(_f64(mid)) else (mid + 1, hi)
    return _f64(lo)


def _ceil_log2(s: float) -> int:
    m, e = math.frexp(s)
    return e - 1 if m == 0.5 else e


def _p2_exact(bound: float, g: float, strict: bool) -> int:
    """Smallest k with ``g * 2**k >= bound`` (``>`` if ``strict``) in exact arithmetic, for
    floors no float64 scale reaches."""
    from fractions import Fraction  # rare path; keeps ``import fampnb.formats`` light

    q = Fraction(bound) / Fraction(g)

    def ok(k: int) -> bool:
        return Fraction(2) ** k > q if strict else Fraction(2) ** k >= q

    k = q.numerator.bit_length() - q.denominator.bit_length()
    while not ok(k):
        k += 1
    while ok(k - 1):
        k -= 1
    return k


def scale_window(g_min: float, g_max: float, fmt: Format) -> ScaleWindow:
    """``formats.safe_scale_window`` (documented there) for a resolved ``fmt``."""
    lo, hi = as_positive("g_min", g_min), as_positive("g_max", g_max)
    if hi < lo:
        raise ValueError(f"g_max must be >= g_min, got g_max={hi!r} < g_min={lo!r}")

    def stored(g: float, s: float) -> float:
        return abs(float(fmt.round(np.float64(g) * np.float64(s))))

    with np.errstate(all="ignore"):
        s_max = _bisect_f64(lambda s: math.isfinite(stored(hi, s)), want_largest=True)
        s_min = _bisect_f64(lambda s: lo * s >= fmt.min_normal, want_largest=False)
        s_nz = _bisect_f64(lambda s: stored(lo, s) != 0, want_largest=False)
    if not lo * s_min >= fmt.min_normal:  # no float64 S is large enough
        s_min, p2_min = math.inf, _p2_exact(fmt.min_normal, lo, strict=False)
    else:
        p2_min = _ceil_log2(s_min)
    if stored(lo, s_nz) == 0:
        s_nz, p2_nz = math.inf, _p2_exact(fmt.underflow_threshold, lo, strict=True)
    else:
        p2_nz = _ceil_log2(s_nz)
    return ScaleWindow(
        format_name=fmt.name, g_min=lo, g_max=hi, s_min=s_min, s_max=s_max, s_min_nonzero=s_nz,
        p2_min=p2_min, p2_max=math.frexp(s_max)[1] - 1, p2_min_nonzero=p2_nz,
        empty=s_min > s_max,
    )
