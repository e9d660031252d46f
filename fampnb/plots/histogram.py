"""The gradient histogram against the fp16 / bf16 / fp8 bands (notebook 07, Micikevicius et al. 2018).

``draw_grad_histogram(ax, hist, scale)`` draws the log2-magnitude histogram of ``g * S`` (a
``fampnb.probe.GradHistogram``) as a step curve in percent of all values per octave, with every
format's bands (rounds to 0 / subnormal / normal / overflow, from ``fampnb.formats``) as rows of a
second axis sharing x.  ``update_grad_histogram(artists, hist, scale)`` shifts the curve: multiplying
by ``S = 2**k`` moves every value ``k`` octaves right (``log2|g*S| = log2|g| + k``), which is the
whole point of loss scaling.  Nothing here touches pyplot state or rcParams.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import ZONE_COLORS, draw_bands, log2, pow2_label, setup_log2_axis
from .lang import pt

__all__ = ["draw_grad_histogram", "update_grad_histogram", "histogram_title", "HIST_XLIM"]

#: default x range, in log2 units: fp16's whole range and a margin either side
HIST_XLIM: tuple[float, float] = (-48.0, 24.0)


def _pct(hist: Any, scale: float) -> tuple[np.ndarray, np.ndarray]:
    edges, counts = hist.log2_counts(scale)
    return edges.astype(float), 100.0 * counts / max(hist.total, 1)


def histogram_title(hist: Any, scale: float) -> str:
    """"gradients × S (S = 2ᵏ) — N values on <device>"."""
    from ..probe import power_of_two_exponent

    k = power_of_two_exponent(scale)
    return (f"|gradient × S|, S = {pow2_label(k)} = {scale:g} — {hist.total:,} values"
            f" ({hist.device})")


def draw_grad_histogram(ax: Any, hist: Any, scale: float = 1.0, *, band_ax: Any = None,
                        xlim: tuple[float, float] = HIST_XLIM) -> dict[str, Any]:
    """Draw the histogram of ``|g * scale|`` on ``ax`` and the format bands on ``band_ax``.

    ``hist`` is a ``GradHistogram`` (its ``formats`` decide the band rows); ``scale`` a power of two.
    Without ``band_ax`` the fp16 bands are shaded behind the histogram instead.  Returns the artists:
    ``curve`` (a ``StepPatch``), ``bands`` ({format name: patches}), ``title``, ``zero_text``
    (exact zeros are not on a log axis: their share is written in a corner).
    """
    lo, hi = xlim
    edges, pct = _pct(hist, scale)
    curve = ax.stairs(pct, edges, fill=True, color="#4e79a7", alpha=0.85,
                      label=pt("plot.gradient_values"))
    top = max(float(pct.max()) if pct.size else 1.0, 1.0)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel(pt("plot.pct_per_octave"))
    setup_log2_axis(ax, lo, hi, step=8)
    bands: dict[str, list[Any]] = {}
    if band_ax is not None:
        for row, fmt in enumerate(hist.formats):
            bands[fmt.name] = draw_bands(band_ax, fmt, float(row), lo, hi, height=0.7)
        band_ax.set_yticks(range(len(hist.formats)), [f.name for f in hist.formats])
        band_ax.set_ylim(len(hist.formats) - 0.5, -0.5)
        setup_log2_axis(band_ax, lo, hi, step=8, label=pt("plot.log2_grad_s"))
        f0 = hist.formats[0]
        for x in (log2(f0.underflow_threshold), log2(f0.min_normal), log2(f0.overflow_threshold)):
            ax.axvline(x, color="#555555", lw=0.8, ls="--", zorder=0)
        ax.text(0.01, 0.97, pt("plot.dashed_thresholds", fmt=f0.name), fontsize=7,
                transform=ax.transAxes, va="top", color="#555555")
        handles = list(bands[f0.name])
        band_ax.legend(handles=handles, loc="lower left", fontsize=7, ncol=4, frameon=False,
                       bbox_to_anchor=(0.0, 1.0))
    else:
        from .common import format_bands

        f0 = hist.formats[0]
        bands[f0.name] = [ax.axvspan(a, b, color=ZONE_COLORS[name], alpha=0.25, lw=0, zorder=0)
                          for name, a, b in format_bands(f0, lo, hi)]
        ax.set_xlabel(pt("plot.log2_grad_s_shaded", fmt=f0.name))
    title = ax.set_title(histogram_title(hist, scale), fontsize=10)
    zero_text = ax.text(0.99, 0.97, _zero_label(hist), transform=ax.transAxes, ha="right",
                        va="top", fontsize=8)
    return {"curve": curve, "bands": bands, "title": title, "zero_text": zero_text, "ax": ax,
            "band_ax": band_ax}


def _zero_label(hist: Any) -> str:
    n = max(hist.total, 1)
    parts = [f"exact zeros: {100 * hist.zeros / n:.2f}%"]
    if hist.infs or hist.nans:
        parts.append(f"inf/NaN: {100 * (hist.infs + hist.nans) / n:.2f}%")
    return "  ".join(parts)


def update_grad_histogram(artists: dict[str, Any], hist: Any, scale: float) -> None:
    """Shift the curve to ``scale`` (a power of two) and update the title; bands stay put."""
    edges, pct = _pct(hist, scale)
    artists["curve"].set_data(pct, edges)
    artists["title"].set_text(histogram_title(hist, scale))
    artists["zero_text"].set_text(_zero_label(hist))
