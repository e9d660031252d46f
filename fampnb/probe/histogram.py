"""Gradient log2-magnitude histograms, re-evaluable at any power-of-two scale (the table).

Internal to ``fampnb.probe`` (public names are re-exported there).  Every gradient value ``g``
(fp32) is ``m * 2**e`` with ``m`` in [0.5, 1) (``frexp``).  Multiplying by a power-of-two loss
scale ``S = 2**k`` only adds ``k`` to ``e``.  Whether ``g * S`` overflows, becomes subnormal or
rounds to zero in a target format is decided by comparing it with three exact thresholds per format
(from ``fampnb.formats``); each threshold is ``f_t * 2**e_t`` too, so the comparison is "is the
exponent larger, or equal with ``m`` at least the threshold's mantissa".  So one table of counts
indexed by (exponent, mantissa sub-bin), whose sub-bin cuts are exactly the thresholds' mantissas,
gives the exact zone counts at every power-of-two scale, and the slider's histogram is the same
table shifted by ``k`` bins.  The table is filled on the device by ``fampnb.probe.recorder`` (no host
copy until it is read) or with numpy by ``GradHistogram.from_array``.

Semantics: ``g * S`` is taken in exact arithmetic (equal to the fp32 product whenever that product
is a normal fp32 number or zero, i.e. always for realistic gradients and scales), then cast with
round-to-nearest-even, as ``Format.classify`` does.  Known limit: where ``|g * S|`` falls below
fp32's normal range (2**-126), real fp32 arithmetic rounds the product itself first, which can move
it by one bf16 (or fp32) subnormal step; fp16 and fp8 are exact there too (everything that small
rounds to 0 in them).  Non-finite gradients count as ``Zone.OVERFLOW`` (inf) and ``Zone.NAN``;
exact zeros as ``Zone.ZERO``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import as_positive
from ..formats import BF16, FP8_E4M3, FP8_E5M2, FP16, Format, Zone, get

__all__ = ["GradHistogram", "DEFAULT_FORMATS", "power_of_two_exponent", "NO_TORCH_HINT"]

DEFAULT_FORMATS: tuple[Format, ...] = (FP16, BF16, FP8_E4M3, FP8_E5M2)

#: frexp exponents of finite non-zero fp32 values lie in [-148, 128]; keep a margin both sides
E_MIN, E_MAX = -160, 160
N_E = E_MAX - E_MIN + 1


def power_of_two_exponent(scale: float, name: str = "scale") -> int:
    """``k`` with ``scale == 2**k``; ValueError naming ``name`` when ``scale`` is not a power of two."""
    m, e = math.frexp(as_positive(name, scale))
    if m != 0.5:
        raise ValueError(f"{name} must be a power of two (2**k, as loss scalers use) for exact "
                         f"re-evaluation, got {scale!r}")
    return e - 1


def _next32(x: float) -> float:
    return float(np.nextafter(np.float32(x), np.float32(np.inf)))


def _prev32(x: float) -> float:
    return float(np.nextafter(np.float32(x), np.float32(-np.inf)))


def _up32(x: float, strict: bool) -> float:
    """Smallest fp32 value >= x (> x when ``strict``); x in [0.5, 1]."""
    v = np.float32(x)
    if float(v) < x or (strict and float(v) == x):
        v = np.nextafter(v, np.float32(np.inf))
    return float(v)


@dataclass(frozen=True)
class _Threshold:
    """The magnitude condition ``|x| >= f * 2**e`` (``f`` is an fp32 value in [0.5, 1))."""

    f: float
    e: int


def _ge(value: float, strict: bool) -> _Threshold:
    """Threshold for ``|x| >= value`` (``> value`` when ``strict``), x being fp32 mantissas."""
    m, e = math.frexp(value)
    f = _up32(m, strict)
    if f >= 1.0:  # no fp32 mantissa reaches f (e.g. fp32's own overflow threshold): next octave
        f, e = 0.5, e + 1
    return _Threshold(f, e)


@dataclass(frozen=True)
class _FormatCuts:
    """The three zone boundaries of one format, as ``|x| >= threshold`` conditions."""

    fmt: Format
    sub: _Threshold     # |x| >= sub     <=> x does not round to zero
    normal: _Threshold  # |x| >= normal  <=> x rounds to a normal number (or overflows)
    over: _Threshold    # |x| >= over    <=> x overflows (inf, or NaN where the format has no inf)


def _round(fmt: Format, v: float) -> float:
    return float(fmt.round(np.float64(v)))


def _format_cuts(fmt: Format) -> _FormatCuts:
    u = fmt.underflow_threshold                      # largest magnitude that rounds to 0 ...
    u_rounds_to_zero = _round(fmt, u) == 0.0         # ... checked with the real cast
    n = fmt.min_normal - fmt.min_subnormal / 2       # tie: top subnormal / min_normal
    n_is_normal = _round(fmt, n) == fmt.min_normal
    return _FormatCuts(
        fmt,
        sub=_ge(u, strict=u_rounds_to_zero),
        normal=_ge(n, strict=not n_is_normal),
        over=_ge(fmt.overflow_threshold, strict=not fmt.overflow_at_threshold),
    )


@dataclass(frozen=True)
class _Layout:
    """Mantissa sub-bins: sub-bin ``j`` = number of cuts strictly below ``m`` (bucketize, right=False).

    ``cuts`` always holds prev32(0.5) (so j == 0 means m == 0, a zero), then 1.0 and +inf (finite
    mantissas are < 1, so inf alone lands on ``j_inf`` and NaN past every cut, on ``j_nan``).  A
    threshold with mantissa ``f`` adds the cut prev32(f): then ``m >= f`` <=> ``j > index(prev32(f))``.
    """

    formats: tuple[_FormatCuts, ...]
    cuts: tuple[float, ...]

    @property
    def n_sub(self) -> int:
        return len(self.cuts) + 1

    @property
    def j_inf(self) -> int:
        return len(self.cuts) - 1

    @property
    def j_nan(self) -> int:
        return len(self.cuts)

    def j_min(self, t: _Threshold) -> int:
        """Smallest sub-bin whose mantissas satisfy ``m >= t.f``."""
        return self.cuts.index(_prev32(t.f)) + 1


def _layout(formats: tuple[Format, ...]) -> _Layout:
    fc = tuple(_format_cuts(f) for f in formats)
    cuts = {_prev32(0.5)}
    for c in fc:
        for t in (c.sub, c.normal, c.over):
            cuts.add(_prev32(t.f))
    return _Layout(fc, tuple(sorted(cuts)) + (1.0, math.inf))


def _resolve_formats(formats: Any) -> tuple[Format, ...]:
    if formats is None:
        return DEFAULT_FORMATS
    if isinstance(formats, (str, Format)):
        formats = (formats,)
    out = tuple(get(f) for f in formats)
    if not out:
        raise ValueError("formats must name at least one format, got an empty sequence")
    return out


@dataclass
class GradHistogram:
    """Exact log2-magnitude histogram of gradient values, re-evaluable at any power-of-two scale.

    ``table[e - E_MIN, j]`` counts values with frexp exponent ``e`` (|g| in [2**(e-1), 2**e)) and
    mantissa sub-bin ``j``.  ``scale`` is the loss scale the numbers are reported at by default
    (``fractions()``); ``at``/``zone_counts``/``fractions``/``log2_counts`` take any other power of two
    without recomputing anything.  ``device`` says where the table was computed (``"cpu"``,
    ``"cuda:0 NVIDIA ..."`` or ``"numpy"``).
    """

    table: np.ndarray
    layout: _Layout = field(repr=False)
    device: str
    scale: float = 1.0
    steps: int = 1
    note: str = ""

    # ---------- construction without torch ----------
    @classmethod
    def from_array(cls, values: Any, scale: float = 1.0, formats: Any = None,
                   device: str = "numpy") -> GradHistogram:
        """The same table built with numpy from an array of gradient values (cast to float32)."""
        lay = _layout(_resolve_formats(formats))
        a = np.abs(np.asarray(values, dtype=np.float32).ravel())
        m, e = np.frexp(a)
        e = np.where(np.isfinite(a), e, 0)
        j = np.searchsorted(np.asarray(lay.cuts, dtype=np.float32), m, side="left")
        j = np.where(np.isnan(m), lay.j_nan, j)
        key = (np.clip(e, E_MIN, E_MAX).astype(np.int64) - E_MIN) * lay.n_sub + j
        table = np.bincount(key, minlength=N_E * lay.n_sub).reshape(N_E, lay.n_sub)
        power_of_two_exponent(scale)
        return cls(table.astype(np.int64), lay, device, float(scale))

    # ---------- basic counts ----------
    @property
    def formats(self) -> tuple[Format, ...]:
        return tuple(c.fmt for c in self.layout.formats)

    @property
    def total(self) -> int:
        return int(self.table.sum())

    @property
    def zeros(self) -> int:
        return int(self.table[:, 0].sum())

    @property
    def infs(self) -> int:
        return int(self.table[:, self.layout.j_inf].sum())

    @property
    def nans(self) -> int:
        return int(self.table[:, self.layout.j_nan].sum())

    def _finite(self) -> np.ndarray:
        return self.table[:, 1:self.layout.j_inf]

    def log2_counts(self, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(edges, counts)``: counts of finite non-zero ``|g*S|`` in ``[2**b, 2**(b+1))``.

        ``edges`` are the log2 bin edges (integers, len(counts) + 1), already shifted by log2 S:
        the slider's whole job is ``log2|g*S| = log2|g| + log2 S``.
        """
        k = power_of_two_exponent(self.scale if scale is None else scale)
        counts = self._finite().sum(axis=1)
        b = np.arange(E_MIN, E_MAX + 1) - 1 + k
        nz = np.nonzero(counts)[0]
        if nz.size == 0:
            return np.array([k - 1, k], dtype=np.int64), np.zeros(1, dtype=np.int64)
        lo, hi = nz[0], nz[-1] + 1
        return np.append(b[lo:hi], b[hi - 1] + 1).astype(np.int64), counts[lo:hi].astype(np.int64)

    def _count_ge(self, t: _Threshold, k: int) -> int:
        """Number of finite values with ``|g| * 2**k >= t.f * 2**t.e``."""
        e_star = t.e - k                  # |g| >= t.f * 2**e_star
        idx = e_star - E_MIN
        fin = self._finite()
        if idx < 0:
            return int(fin.sum())
        if idx >= N_E:
            return 0
        above = int(fin[idx + 1:].sum())
        same = int(self.table[idx, self.layout.j_min(t):self.layout.j_inf].sum())
        return above + same

    def zone_counts(self, fmt: Any, scale: float | None = None) -> dict[Zone, int]:
        """Counts per ``Zone`` of ``g * S`` cast to ``fmt`` — equal to ``fmt.zone_counts(g, S)``."""
        k = power_of_two_exponent(self.scale if scale is None else scale)
        f = get(fmt)
        for c in self.layout.formats:
            if c.fmt.name == f.name:
                break
        else:
            raise ValueError(f"fmt {f.name!r} was not tabulated; this histogram has "
                             f"{[x.name for x in self.formats]}")
        finite = int(self._finite().sum())
        n_sub, n_norm, n_over = (self._count_ge(t, k) for t in (c.sub, c.normal, c.over))
        return {
            Zone.NAN: self.nans,
            Zone.OVERFLOW: n_over + self.infs,
            Zone.NORMAL: n_norm - n_over,
            Zone.SUBNORMAL: n_sub - n_norm,
            Zone.UNDERFLOW: finite - n_sub,
            Zone.ZERO: self.zeros,
        }

    def fractions(self, scale: float | None = None) -> dict[str, dict[str, float]]:
        """Per format: fraction of all values that ``overflow``, become ``subnormal``, ``underflow``
        to zero, stay ``normal``, were ``zero`` already, or are ``nan`` — at scale S (power of two)."""
        n = max(self.total, 1)
        out: dict[str, dict[str, float]] = {}
        for f in self.formats:
            z = self.zone_counts(f, scale)
            out[f.name] = {"overflow": z[Zone.OVERFLOW] / n, "subnormal": z[Zone.SUBNORMAL] / n,
                           "underflow": z[Zone.UNDERFLOW] / n, "normal": z[Zone.NORMAL] / n,
                           "zero": z[Zone.ZERO] / n, "nan": z[Zone.NAN] / n}
        return out

    def at(self, scale: float) -> GradHistogram:
        """The same histogram reported at another power-of-two scale (no recomputation)."""
        power_of_two_exponent(scale)
        return GradHistogram(self.table, self.layout, self.device, float(scale), self.steps,
                             self.note)

    def lossless_scales(self, fmt: Any) -> tuple[float, float] | None:
        """``(lowest, highest)`` power-of-two scales at which nothing underflows to zero and nothing
        overflows in ``fmt`` (subnormals allowed), or None when no such scale exists."""
        ok = [k for k in range(-160, 300)
              if (z := self.zone_counts(fmt, 2.0 ** k))[Zone.UNDERFLOW] == 0
              and z[Zone.OVERFLOW] == self.infs]
        if not ok:
            return None
        return 2.0 ** ok[0], 2.0 ** ok[-1]

    def to_dict(self, scale: float | None = None) -> dict[str, Any]:
        edges, counts = self.log2_counts(scale)
        return {"device": self.device, "scale": self.scale if scale is None else float(scale),
                "steps": self.steps, "total": self.total, "zeros": self.zeros, "infs": self.infs,
                "nans": self.nans, "log2_edges": edges.tolist(), "counts": counts.tolist(),
                "fractions": self.fractions(scale), "note": self.note}


NO_TORCH_HINT = ("torch is not installed, so nothing ran on any device. Install it with "
                 "`pip install 'fampnb[torch]'` (on Colab it is already there; on a Linux machine "
                 "without a GPU, `pip install torch --index-url https://download.pytorch.org/whl/cpu` "
                 "avoids the multi-GB CUDA build).")
