"""Figures of notebooks 01-02: format ranges, bit layouts, the threshold / safe-window plot.

Pure ``draw_*(ax, data) -> artists`` / ``update_*(artists, data)`` pairs: ``draw_*`` makes the
artists once, ``update_*`` changes their data in place (no new artists, no pyplot, no
rcParams), so a widget can redraw cheaply.  Every number shown comes from ``fampnb.formats``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .. import formats as F
from .common import (
    BIT_COLORS,
    ZONE_COLORS,
    draw_bands,
    format_bands,
    log2,
    pow2_label,
    setup_log2_axis,
)
from .common import sup as _sup
from .lang import pt

__all__ = [
    "draw_format_ranges", "update_format_ranges",
    "draw_bits", "update_bits",
    "draw_number_line", "update_number_line",
    "ThresholdData", "draw_thresholds", "update_thresholds",
    "draw_article_vs_exact", "update_article_vs_exact",
]

# --------------------------------------------------------------------------- format ranges
def draw_format_ranges(ax: Any, formats: Any = None, *, lo: float = -152, hi: float = 132,
                       value: float | None = None, annotate: bool = True) -> dict[str, Any]:
    """One row per format: its bands (rounds to 0, subnormal, normal, overflow) on a log2 axis.

    ``value`` (optional) draws a vertical marker at ``|value|``; move it with
    ``update_format_ranges``.  Returns ``{"bands": {name: [patches]}, "labels": [...],
    "marker": Line2D}``.
    """
    fmts = [F.get(f) for f in (formats or F.FORMATS)]
    bands, labels = {}, []
    for i, fmt in enumerate(fmts):
        y = len(fmts) - 1 - i
        bands[fmt.name] = draw_bands(ax, fmt, y, lo, hi)
        if annotate:
            labels.append(ax.text(1.01, y, f"max {fmt.max:.5g}\nmin normal "
                                  f"{pow2_label(round(log2(fmt.min_normal)))}",
                                  transform=ax.get_yaxis_transform(), va="center", ha="left",
                                  fontsize=8, linespacing=1.1))
    ax.set_yticks(range(len(fmts)), [f.name for f in reversed(fmts)])
    ax.set_ylim(-0.6, len(fmts) - 0.4)
    setup_log2_axis(ax, lo, hi, step=16, label=pt("plot.value_log2_ticks"))
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    handles = bands[fmts[1].name] if len(fmts) > 1 else bands[fmts[0].name]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4,
              fontsize=8, frameon=False)
    (marker,) = ax.plot([math.nan, math.nan], [-0.5, len(fmts) - 0.5], color="black", lw=1.2,
                        ls="--")
    art = {"bands": bands, "labels": labels, "marker": marker}
    if value is not None:
        update_format_ranges(art, value)
    return art


def update_format_ranges(artists: dict[str, Any], value: Any) -> None:
    """Move the vertical marker(s) to ``|value|`` (a number or a sequence of numbers; None, 0,
    inf and NaN are not drawn)."""
    vals = [] if value is None else list(value) if hasattr(value, "__len__") else [value]
    y0, y1 = artists["marker"].get_ydata()[:2] if len(artists["marker"].get_ydata()) > 1 else (0, 1)
    xs, ys = [], []
    for v in vals:
        x = log2(v)
        if math.isfinite(x):
            xs += [x, x, math.nan]
            ys += [y0, y1, math.nan]
    if not xs:
        xs, ys = [math.nan, math.nan], [y0, y1]
    artists["marker"].set_data(xs, ys)


# --------------------------------------------------------------------------- bit layout
_MAX_BITS = 32


def draw_bits(ax: Any, bits: Any) -> dict[str, Any]:
    """The bits of ``bits`` (a ``formats.Bits``) as coloured cells: sign, exponent, mantissa.

    Cells for up to 32 bits are made once; ``update_bits`` recolours/relabels them and hides the
    unused ones, so switching formats creates no artists.
    """
    from matplotlib.patches import Rectangle

    cells, texts = [], []
    for i in range(_MAX_BITS):
        r = Rectangle((i, 0), 0.92, 1, facecolor="white", edgecolor="white", lw=0)
        ax.add_patch(r)
        cells.append(r)
        texts.append(ax.text(i + 0.46, 0.5, "", ha="center", va="center", fontsize=10,
                             color="white", fontweight="bold", family="monospace"))
    fields = {k: ax.text(0, 1.18, "", ha="center", va="bottom", fontsize=9, color=c)
              for k, c in BIT_COLORS.items()}
    formula = ax.text(0, -0.25, "", ha="left", va="top", fontsize=9, family="monospace")
    ax.set_ylim(-1.0, 1.7)
    ax.set_axis_off()
    art = {"cells": cells, "texts": texts, "fields": fields, "formula": formula, "ax": ax}
    update_bits(art, bits)
    return art


def _field_of(i: int, fmt: Any) -> str:
    if i == 0:
        return "sign"
    return "exponent" if i <= fmt.exponent_bits else "mantissa"


def update_bits(artists: dict[str, Any], bits: Any) -> None:
    """Show ``bits`` (its format decides how many cells are visible)."""
    fmt = F.get(bits.format_name)
    n = fmt.bits
    # a wide format gets narrower cells: the row always spans 0..32 data units
    width = _MAX_BITS / n
    string = f"{bits.sign}{bits.exponent_bits}{bits.mantissa_bits}"
    size = 10 if n > 16 else 13
    for i, (cell, txt) in enumerate(zip(artists["cells"], artists["texts"])):
        if i < n:
            cell.set_x(i * width)
            cell.set_width(width * 0.92)
            cell.set_facecolor(BIT_COLORS[_field_of(i, fmt)])
            cell.set_alpha(1.0 if string[i] == "1" else 0.35)
            cell.set_visible(True)
            txt.set_x((i + 0.46) * width)
            txt.set_text(string[i])
            txt.set_fontsize(size)
            txt.set_visible(True)
        else:
            cell.set_visible(False)
            txt.set_visible(False)
    e, m = fmt.exponent_bits, fmt.mantissa_bits
    spans = {"sign": (0, 1), "exponent": (1, 1 + e), "mantissa": (1 + e, n)}
    names = {"sign": "sign", "exponent": f"exponent ({e} bits)", "mantissa": f"mantissa ({m} bits)"}
    for k, t in artists["fields"].items():
        a, b = spans[k]
        t.set_x((a + b) / 2 * width)
        t.set_text(names[k])
    artists["formula"].set_text(_formula(bits, fmt))
    artists["ax"].set_xlim(-0.2, _MAX_BITS + 0.2)


def _formula(bits: Any, fmt: Any) -> str:
    """``(-1)^s × 2^(e) × 1.f`` spelled with this value's numbers."""
    if not math.isfinite(bits.stored):
        return f"{bits.hex}  =  {bits.stored!r}"
    sgn = "−" if bits.sign else "+"
    lead = "0" if bits.is_subnormal or bits.stored == 0 else "1"
    return (f"{bits.hex}  =  {sgn} 2{_sup(bits.exponent)} × {lead}.{bits.mantissa_bits}₂"
            f"  =  {bits.stored!r}")


# --------------------------------------------------------------------------- number line
def draw_number_line(ax: Any, fmt: Any, value: float, *, pad: float = 4.0) -> dict[str, Any]:
    """One format's bands on a log2 axis with a marker at ``|value|`` and at its stored value."""
    fmt = F.get(fmt)
    patches = {}
    for name in ("zero", "subnormal", "normal", "overflow"):
        (p,) = ax.barh([0], [0], left=[0], height=0.8, color=ZONE_COLORS[name], alpha=0.9,
                       edgecolor="white")
        p.set_label(pt(f"plot.band.{name}"))
        patches[name] = p
    (typed,) = ax.plot([math.nan], [0.3], marker="v", ms=11, color="black", ls="none",
                       label=pt("plot.typed_value"))
    (stored,) = ax.plot([math.nan], [0.0], marker="o", ms=7, mfc="white", mec="black", ls="none",
                        label=pt("plot.stored_value"))
    note = ax.text(0, 0.62, "", ha="center", va="bottom", fontsize=8)
    ax.set_yticks([])
    ax.set_ylim(-0.6, 1.0)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=6, fontsize=8, frameon=False)
    art = {"patches": patches, "typed": typed, "stored": stored, "note": note, "ax": ax,
           "pad": pad, "fmt": None}
    update_number_line(art, fmt, value)
    return art


def update_number_line(artists: dict[str, Any], fmt: Any, value: float,
                       stored: float | None = None) -> None:
    """Re-band for ``fmt`` (only when it changed) and move the markers to ``value`` / ``stored``."""
    fmt = F.get(fmt)
    ax, pad = artists["ax"], artists["pad"]
    lo = math.floor(log2(fmt.underflow_threshold)) - pad
    hi = math.ceil(log2(fmt.overflow_threshold)) + pad
    if artists["fmt"] is not fmt:
        for p in artists["patches"].values():
            p.set_width(0)
        for name, a, b in format_bands(fmt, lo, hi):
            artists["patches"][name].set_x(a)
            artists["patches"][name].set_width(b - a)
        setup_log2_axis(ax, lo, hi, label=pt("plot.value_in_fmt", fmt=fmt.name))
        artists["fmt"] = fmt
    if stored is None:
        stored = float(fmt.round(value))
    x_typed, x_stored = log2(value), log2(stored)
    note = ""
    if x_typed == -math.inf:
        note = "0: not on a log axis"
    if x_typed == -math.inf or x_stored == -math.inf:
        note = note or "stored as 0: not on a log axis"
    x_typed = _clip(x_typed, lo, hi) if x_typed != -math.inf else math.nan
    x_stored = _clip(x_stored, lo, hi) if x_stored != -math.inf else math.nan
    artists["typed"].set_xdata([x_typed])
    artists["stored"].set_xdata([x_stored])
    artists["note"].set_x(x_typed if math.isfinite(x_typed) else lo + 2)
    artists["note"].set_horizontalalignment("center" if math.isfinite(x_typed) else "left")
    artists["note"].set_text(note)


def _clip(x: float, lo: float, hi: float) -> float:
    if math.isnan(x):
        return math.nan
    return min(max(x, lo + 0.3), hi - 0.3)


# --------------------------------------------------------------------------- thresholds
@dataclass(frozen=True)
class ThresholdData:
    """What the threshold figure shows: a gradient range [g_min, g_max] times a scale S, against
    the bands of each format in ``formats`` (default fp16 and bf16)."""

    g_max: float
    scale: float
    g_min: float
    formats: tuple[Any, ...] = (F.FP16, F.BF16)

    @property
    def scaled(self) -> float:
        return self.g_max * self.scale

    @property
    def scaled_min(self) -> float:
        return self.g_min * self.scale

    @cached_property
    def windows(self) -> dict[str, Any]:
        """``formats.safe_scale_window`` of [g_min, g_max] for each format, by format name."""
        return {F.get(f).name: F.safe_scale_window(self.g_min, self.g_max, F.get(f))
                for f in self.formats}


_VIEW = (-64.0, 48.0)  # exponents in view (G·S): fp16 whole, plus room for the article's cases
_SVIEW = (-50.0, 50.0)  # exponents in view (S)


def draw_thresholds(axes: Any, data: ThresholdData) -> dict[str, Any]:
    """Two panels.  Top: the scaled range [g_min·S, G·S] over each format's bands (log2 axis).
    Bottom: the scale axis, the safe window of S for each format shaded, the current S marked.

    ``axes`` is a pair of Axes (top, bottom).  Returns the artists ``update_thresholds`` moves.
    """
    ax, bx = axes[0], axes[1]
    fmts = [F.get(f) for f in data.formats]
    lo, hi = -160.0, 140.0  # bands drawn wide; the view limits are set per update
    rows = {}
    for i, fmt in enumerate(fmts):
        y = len(fmts) - 1 - i
        rows[fmt.name] = draw_bands(ax, fmt, y, lo, hi, height=0.55)
    ax.set_yticks(range(len(fmts)), [f.name for f in reversed(fmts)])
    ax.set_ylim(-0.7, len(fmts) - 0.3)
    ys = [len(fmts) - 1 - i for i in range(len(fmts))]
    (span,) = ax.plot([], [], color="black", lw=3, solid_capstyle="butt",
                      label="[g_min·S, G·S]")
    (top,) = ax.plot([], [], marker="v", ms=10, color="black", ls="none", label="G·S")
    (bottom,) = ax.plot([], [], marker="^", ms=8, color="#555555", ls="none", label="g_min·S")
    ax.legend(handles=[*rows[fmts[0].name], top, bottom], loc="lower left",
              bbox_to_anchor=(0.0, 1.0), ncol=6, fontsize=7.5, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_xlabel(pt("plot.scaled_gradient"), fontsize=9)

    windows, loose, wtexts = {}, {}, {}
    for i, fmt in enumerate(fmts):
        y = len(fmts) - 1 - i
        (q,) = bx.barh([y], [0], left=[0], height=0.55, color=ZONE_COLORS["subnormal"],
                       alpha=0.7, edgecolor="none")
        q.set_label(pt("plot.window_subnormal"))
        (p,) = bx.barh([y], [0], left=[0], height=0.55, color=ZONE_COLORS["normal"],
                       edgecolor="#2f6b2f", alpha=0.9)
        p.set_label(pt("plot.window_safe"))
        windows[fmt.name], loose[fmt.name] = p, q
        wtexts[fmt.name] = bx.text(0, y + 0.3, "", ha="center", va="bottom", fontsize=8)
    bx.legend(handles=[windows[fmts[0].name], loose[fmts[0].name]], loc="upper center",
              bbox_to_anchor=(0.5, -0.32), ncol=2, fontsize=7.5, frameon=False)
    (s_line,) = bx.plot([0, 0], [-0.7, len(fmts) - 0.4], color="black", lw=1.5)
    s_text = bx.text(0, -0.95, "", ha="left", va="bottom", fontsize=8)
    bx.set_yticks(range(len(fmts)), [pt("plot.s_for", fmt=f.name) for f in reversed(fmts)])
    bx.set_ylim(-1.0, len(fmts) - 0.05)
    bx.grid(axis="x", alpha=0.3)
    bx.set_axisbelow(True)
    bx.set_xlabel(pt("plot.loss_scale_s"), fontsize=9)
    art = {"axes": (ax, bx), "fmts": fmts, "ys": ys, "span": span, "top": top, "bottom": bottom,
           "windows": windows, "loose": loose, "window_texts": wtexts, "s_line": s_line,
           "s_text": s_text, "view": None}
    update_thresholds(art, data)
    return art


def update_thresholds(artists: dict[str, Any], data: ThresholdData) -> None:
    """Move the markers to ``data``'s G·S and g_min·S, reshade the safe windows, mark S."""
    ax, bx = artists["axes"]
    ys, fmts = artists["ys"], artists["fmts"]
    xt, xb, xs = log2(data.scaled), log2(data.scaled_min), log2(data.scale)
    lo, hi = _VIEW
    if artists["view"] is None:  # fixed views: no axis jumps, cheap redraws
        setup_log2_axis(ax, lo, hi)
        setup_log2_axis(bx, *_SVIEW)
        artists["view"], artists["bview"] = _VIEW, _SVIEW
    # values beyond the view sit at its edge, drawn as an arrow pointing off the chart
    ct, cb = _clip(xt, lo, hi), _clip(xb, lo, hi)
    artists["top"].set_marker(">" if xt > hi else "<" if xt < lo else "v")
    artists["bottom"].set_marker(">" if xb > hi else "<" if xb < lo else "^")
    seg_x, seg_y = [], []
    for y in ys:
        seg_x += [cb, ct, math.nan]
        seg_y += [y, y, math.nan]
    artists["span"].set_data(seg_x, seg_y)
    artists["top"].set_data([ct] * len(ys), ys)
    artists["bottom"].set_data([cb] * len(ys), ys)
    for fmt, y in zip(fmts, ys):
        w = data.windows[fmt.name]
        p, q = artists["windows"][fmt.name], artists["loose"][fmt.name]
        t = artists["window_texts"][fmt.name]
        a, b, c = log2(w.s_min), log2(w.s_max), log2(w.s_min_nonzero)
        q.set_x(c)
        q.set_width(max(0.0, min(a, b) - c))
        if w.empty:
            p.set_width(0)
            t.set_x(_clip((c + b) / 2 if c < b else xs, *artists["bview"]))
            t.set_text("no scale keeps both ends normal" if c < b else
                       "no scale at all: the range is wider than the format")
        else:
            p.set_x(a)
            p.set_width(b - a)
            t.set_x(_clip((a + b) / 2, artists["bview"][0] + 10, artists["bview"][1] - 10))
            t.set_text(f"powers of two {pow2_label(w.p2_min)} … {pow2_label(w.p2_max)}"
                       if not w.p2_empty else "no power of two fits")
    artists["s_line"].set_xdata([xs, xs])
    artists["s_text"].set_x(xs)
    artists["s_text"].set_text(f" S = {data.scale:.6g}")


# --------------------------------------------------------------------------- article vs exact
def draw_article_vs_exact(axes: Any, fmt: Any = F.FP16, *, values: Any = ()) -> dict[str, Any]:
    """Where the article's model and the exact cast disagree, for ``fmt``.

    Left (``axes[0]``): two rows on a log2 axis: the article's three verdicts (UNDERFLOW below
    ``min_normal``, OVERFLOW above ``max``) over the exact bands; ``values`` are marked on both.
    Right (``axes[1]``): a linear close-up of the top end: the value stored for x (a staircase,
    from ``Format.round``), the article's line at ``max`` and the exact overflow threshold.
    """
    import numpy as np

    ax, bx = axes[0], axes[1]
    fmt = F.get(fmt)
    lo = math.floor(log2(fmt.underflow_threshold)) - 3
    hi = math.ceil(log2(fmt.overflow_threshold)) + 3
    exact = draw_bands(ax, fmt, 0, lo, hi, height=0.6)
    a_edges = [lo, log2(fmt.min_normal), log2(fmt.max), hi]
    article = []
    for (name, col), a, b in zip((("UNDERFLOW", "zero"), ("IN_RANGE", "normal"),
                                  ("OVERFLOW", "overflow")), a_edges[:-1], a_edges[1:]):
        (p,) = ax.barh([1], [b - a], left=[a], height=0.6, color=ZONE_COLORS[col], alpha=0.9,
                       edgecolor="white")
        p.set_gid(name)
        article.append(p)
        ax.text(min(max((a + b) / 2, lo + 3), hi - 3), 1.34, name, ha="center", va="bottom",
                fontsize=8)
    for p in exact:
        x = p.get_x() + p.get_width() / 2
        label = "→ 0" if p.get_gid() == "zero" else pt(f"plot.band.{p.get_gid()}")
        ax.text(min(max(x, lo + 2), hi - 3), -0.34, label, ha="center",
                va="top", fontsize=8)
    ax.set_yticks([0, 1], [pt("plot.exact_cast", fmt=fmt.name), pt("plot.articles_model")])
    ax.set_ylim(-0.85, 1.85)
    setup_log2_axis(ax, lo, hi, step=5, label=pt("plot.value_log2"))
    (marks,) = ax.plot([], [], ls="none", marker="|", ms=16, mew=1.5, color="black")

    # close-up of the top: x from a bit below max to beyond the threshold
    step = fmt.max - float(np.nextafter(np.asarray(fmt.max, fmt.dtype), np.asarray(0, fmt.dtype)))
    xs = np.linspace(fmt.max - 2 * step, fmt.overflow_threshold + step, 801)
    ys = fmt.round(xs)
    finite = np.where(np.isfinite(ys), ys, np.nan)
    (stair,) = bx.plot(xs, finite, color="#4e79a7", lw=2, label=pt("plot.stored_in", fmt=fmt.name))
    over = np.where(np.isfinite(ys), np.nan, fmt.max + step)
    (inf_line,) = bx.plot(xs, over, color="#e15759", lw=2,
                          label="inf" if fmt.has_inf else "NaN (no inf)")
    v1 = bx.axvline(fmt.max, color="black", ls="--", lw=1)
    v1.set_label(pt("plot.article_overflow_above", max=f"{fmt.max:g}"))
    v2 = bx.axvline(fmt.overflow_threshold, color="#e15759", ls=":", lw=1.5)
    v2.set_label(pt("plot.exact_overflow_from", threshold=f"{fmt.overflow_threshold:g}"))
    bx.set_xlabel(pt("plot.x_before_cast"))
    bx.set_ylabel(pt("plot.value_after_cast"))
    bx.set_yticks([fmt.max - step, fmt.max, fmt.max + step],
                  [f"{fmt.max - step:g}", f"{fmt.max:g}", "inf" if fmt.has_inf else "NaN"])
    bx.legend(fontsize=7.5, loc="upper left", frameon=False)
    art = {"article": article, "exact": exact, "marks": marks, "stair": stair, "inf": inf_line}
    update_article_vs_exact(art, values)
    return art


def update_article_vs_exact(artists: dict[str, Any], values: Any) -> None:
    """Mark ``values`` (magnitudes) on both rows of the left panel."""
    xs = [log2(v) for v in values if math.isfinite(log2(v))]
    artists["marks"].set_data(xs + xs, [0.0] * len(xs) + [1.0] * len(xs))

