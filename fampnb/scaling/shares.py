"""Exact shares of a tensor lost to zero, kept, saturated or NaN once it is scaled and cast.

Every scheme of this package ends the same way: a float32 array of *scaled* values is cast to an
element format with saturation (values beyond ±max become ±max, as Transformer Engine's and
torchao's casts do).  ``zone_codes`` reads each value's fate off ``Format.classify`` on the scaled
values (exact: it agrees with the real cast), with three corrections that need the input too:

- a value beyond the saturation threshold is ``Zone.OVERFLOW`` ("saturated": the clip keeps it at
  ±max where a plain ml_dtypes cast would give NaN for e4m3, inf for e5m2).  fp4 e2m1's own cast
  already saturates, so ``classify`` calls those values normal; the threshold finds them;
- a non-zero input whose scaled value is 0 (the scale itself underflowed it) is ``Zone.UNDERFLOW``;
- a value whose scale is NaN (an MX block holding a NaN) is ``Zone.NAN``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..formats import Format, Zone, get

__all__ = ["CATEGORIES", "Shares", "saturation_threshold", "zone_codes", "shares"]

#: the categories of ``Shares``, in display order
CATEGORIES = ("lost", "subnormal", "normal", "saturated", "nan", "zero")
_OF_ZONE = {Zone.UNDERFLOW: "lost", Zone.SUBNORMAL: "subnormal", Zone.NORMAL: "normal",
            Zone.OVERFLOW: "saturated", Zone.NAN: "nan", Zone.ZERO: "zero"}


@cache
def saturation_threshold(fmt: Format | str) -> tuple[float, bool]:
    """``(t, tie_saturates)``: a magnitude above ``t`` (float32) rounds past ``fmt.max`` and is
    clipped; at exactly ``t`` (the midpoint above max) round-half-to-even goes up when max's last
    mantissa bit is 1 (e5m2's 57344, e2m1's 6) and stays at max when it is 0 (e4m3fn's 448)."""
    f = get(fmt)
    code = int(np.asarray(f.max, np.float32).astype(f.dtype).view(np.uint8)) & 1
    return float(np.float32(f.overflow_threshold)), bool(code)


def zone_codes(x: Any, scaled: Any, fmt: Format | str, nan_mask: Any = None) -> np.ndarray:
    """``Zone`` codes (int8) of ``scaled`` (float32) cast to ``fmt`` with saturation; ``x`` is the
    unscaled input (same shape) and ``nan_mask`` marks values whose scale is NaN."""
    f = get(fmt)
    s = np.asarray(scaled, np.float32)
    codes = f.classify(s)
    t, tie = saturation_threshold(f)
    mag = np.abs(s)
    over = (mag >= t) if tie else (mag > t)
    codes[over] = Zone.OVERFLOW
    a = np.asarray(x)
    if a.shape != s.shape:
        raise ValueError(f"x and scaled differ in shape: {a.shape} vs {s.shape}")
    codes[(codes == Zone.ZERO) & (a != 0)] = Zone.UNDERFLOW
    if nan_mask is not None:
        codes[np.asarray(nan_mask, bool)] = Zone.NAN
    return codes


@dataclass(frozen=True)
class Shares:
    """How many values of a tensor end in each category (``CATEGORIES``) after a scheme.

    ``lost``: non-zero, became 0; ``subnormal``: kept with fewer significant bits; ``normal``:
    kept at full precision; ``saturated``: clipped to ±max; ``nan``: NaN (NaN input, or a NaN
    block scale); ``zero``: input already 0.  ``fraction(k)`` is the count over ``total``.
    """

    counts: dict[str, int]
    total: int

    @classmethod
    def from_codes(cls, codes: np.ndarray) -> Shares:
        n = np.bincount(np.asarray(codes, np.int64).ravel(), minlength=len(Zone))
        return cls({_OF_ZONE[z]: int(n[z]) for z in Zone}, int(np.asarray(codes).size))

    def fraction(self, category: str) -> float:
        if category not in self.counts:
            raise ValueError(f"category must be one of {CATEGORIES}, got {category!r}")
        return self.counts[category] / self.total if self.total else 0.0

    @property
    def kept(self) -> float:
        """Share kept as a finite non-zero value (normal + subnormal) or an input zero."""
        return self.fraction("normal") + self.fraction("subnormal") + self.fraction("zero")

    def __add__(self, other: Shares) -> Shares:
        return Shares({k: self.counts[k] + other.counts[k] for k in self.counts},
                      self.total + other.total)


def shares(x: Any, scaled: Any, fmt: Format | str, nan_mask: Any = None) -> Shares:
    """``Shares`` of ``zone_codes(x, scaled, fmt, nan_mask)``."""
    return Shares.from_codes(zone_codes(x, scaled, fmt, nan_mask))
