"""Shared plot helpers: zone/band colours, bit-field colours, a log2 number line, format bands.

Every figure of the collection that shows a number line uses a *log2 axis drawn in exponent units*:
the x data are ``log2(|value|)`` and the ticks read ``2⁻¹⁴``, ``2¹⁵``...  This keeps fp32's
2⁻¹⁴⁹ … 2¹²⁸ and fp8's 2⁻⁹ … 2⁹ on the same kind of axis, and makes powers of two (the only scales
loss scalers use) evenly spaced.  Nothing here touches pyplot or rcParams.
"""

from __future__ import annotations

import math
from typing import Any

from .. import formats as _F
from .lang import pt

__all__ = [
    "ZONE_COLORS", "BIT_COLORS", "BAND_LABELS", "log2", "sup", "pow2_label", "pow2_formatter",
    "setup_log2_axis", "format_bands", "draw_bands", "precision_curve", "draw_precision",
    "fast_log_ticks",
]

#: colour of each band of a format's number line (``format_bands`` names)
ZONE_COLORS: dict[str, str] = {
    "zero": "#bab0ac",       # rounds to 0 (underflow)
    "subnormal": "#f1ce63",  # kept, but with fewer significant bits
    "normal": "#8cd17d",     # full precision
    "overflow": "#ff9d9a",   # rounds to inf (or NaN where the format has no inf)
    "nan": "#b07aa1",
}
#: colour of each bit field (sign, exponent, mantissa)
BIT_COLORS: dict[str, str] = {"sign": "#e15759", "exponent": "#4e79a7", "mantissa": "#59a14f"}
BAND_LABELS: dict[str, str] = {
    "zero": "rounds to 0", "subnormal": "subnormal", "normal": "normal", "overflow": "overflow",
}

_SUP = str.maketrans("0123456789-+.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺·")


def log2(x: float) -> float:
    """log2 of ``|x|``; -inf for 0, nan for NaN (no warnings)."""
    x = abs(float(x))
    if x == 0:
        return -math.inf
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.inf
    return math.log2(x)


def sup(text: str | int) -> str:
    """Unicode superscript of ``text`` (digits, sign): ``sup(-14) == "⁻¹⁴"``."""
    return str(text).translate(_SUP)


def pow2_label(k: float) -> str:
    """``2⁻¹⁴`` for k = -14 (integers only; others get one decimal)."""
    if float(k).is_integer():
        return "2" + sup(int(k))
    return "2" + sup(f"{k:.1f}")


def pow2_formatter() -> Any:
    """A tick formatter for an axis in log2 units: tick k reads ``2ᵏ``."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda k, _pos: pow2_label(k))


def setup_log2_axis(ax: Any, lo: float, hi: float, *, axis: str = "x", step: int | None = None,
                    label: str | None = None) -> None:
    """Limit ``ax`` to exponents [lo, hi], with ticks every ``step`` (chosen for ~8-12 ticks)."""
    from matplotlib.ticker import MultipleLocator

    span = max(hi - lo, 1.0)
    if step is None:
        step = next(s for s in (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64) if span / s <= 12)
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xlim if axis == "x" else ax.set_ylim)(lo, hi)
    target.set_major_locator(MultipleLocator(step))
    target.set_major_formatter(pow2_formatter())
    if label:
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)(label)


def format_bands(fmt: Any, lo: float, hi: float) -> list[tuple[str, float, float]]:
    """The bands of ``fmt`` on a log2 axis from ``lo`` to ``hi`` (exponent units).

    ``[(name, start, end), ...]`` with names ``zero`` (|x| <= underflow_threshold rounds to 0),
    ``subnormal`` (up to min_normal), ``normal`` (up to the overflow threshold) and ``overflow``.
    Every number comes from the ``Format`` (derived from real casts).
    """
    edges = [lo, log2(fmt.underflow_threshold), log2(fmt.min_normal), log2(fmt.overflow_threshold),
             hi]
    names = ["zero", "subnormal", "normal", "overflow"]
    out = []
    for name, a, b in zip(names, edges[:-1], edges[1:]):
        a, b = max(a, lo), min(b, hi)
        if b > a:
            out.append((name, a, b))
    return out


def draw_bands(ax: Any, fmt: Any, y: float, lo: float, hi: float, *, height: float = 0.6,
               alpha: float = 0.9) -> list[Any]:
    """Horizontal coloured bars for the bands of ``fmt`` at row ``y``; returns the patches."""
    patches = []
    for name, a, b in format_bands(fmt, lo, hi):
        (p,) = ax.barh([y], [b - a], left=[a], height=height, color=ZONE_COLORS[name],
                       alpha=alpha, edgecolor="white", linewidth=0.8)
        p.set_label(pt(f"plot.band.{name}"))
        p.set_gid(name)
        patches.append(p)
    return patches


# --------------------------------------------------------------------------- precision
def precision_curve(fmt: Any, lo: float, hi: float, n: int = 600) -> tuple[Any, Any]:
    """``(log2 x, ulp(x)/x)`` on ``n`` points from 2**lo to 2**hi, from ``Format.decompose``
    (NaN where x rounds to 0 or overflows): the relative gap between neighbours around x."""
    import numpy as np

    fmt = _F.get(fmt)
    ks = np.linspace(lo, hi, n)
    rel = np.full(n, np.nan)
    for i, k in enumerate(ks):
        b = fmt.decompose(float(2.0 ** k))
        if b.stored != 0 and math.isfinite(b.stored):
            rel[i] = b.ulp / abs(b.stored)
    return ks, rel


def draw_precision(ax: Any, formats: Any = ("fp16", "bf16"), *, lo: float = -30.0,
                   hi: float = 20.0, shade: Any = "fp16") -> dict[str, Any]:
    """Relative spacing ``ulp(x)/x`` (log2 y axis) against |x| (log2 x axis) for each format,
    over the bands of ``shade``: flat in the normal band (about eps), rising to 1 across the
    subnormal band, gone where x rounds to 0 or overflows."""
    import numpy as np

    lines = {}
    colors = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1")
    if shade is not None:
        for name, a, b in format_bands(_F.get(shade), lo, hi):
            ax.axvspan(a, b, color=ZONE_COLORS[name], alpha=0.35, lw=0)
    for fmt, col in zip(formats, colors):
        fmt = _F.get(fmt)
        ks, rel = precision_curve(fmt, lo, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            (ln,) = ax.plot(ks, np.log2(rel), color=col, lw=1.8, label=fmt.name)
        lines[fmt.name] = ln
    setup_log2_axis(ax, lo, hi, step=5, label=pt("plot.abs_x_log2"))
    ax.yaxis.set_major_formatter(pow2_formatter())
    ax.set_ylabel(pt("plot.relative_gap"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    return {"lines": lines}


def fast_log_ticks(axis: Any, base: int) -> None:
    """Log ticks labelled with Unicode superscripts (``2¹⁶``, ``10⁻⁹``) instead of mathtext, at
    most ~8 of them and no minor ticks: text layout is most of a redraw's cost otherwise."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    def label(v: float, _pos: Any = None) -> str:
        if not (v > 0 and math.isfinite(v)):
            return ""
        k = math.log(v, base)
        return f"{base}{sup(int(round(k)))}" if abs(k - round(k)) < 1e-9 else ""

    class AtMost(LogLocator):  # matplotlib 3.10.0 (Colab's) can give more than numticks
        def tick_values(self, vmin: float, vmax: float) -> Any:
            lo, hi = sorted((vmin, vmax))
            ticks = [t for t in super().tick_values(vmin, vmax) if lo <= t <= hi]
            return ticks[::-(-len(ticks) // 8) or 1]

    axis.set_major_locator(AtMost(base=base, numticks=8))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_locator(NullLocator())
