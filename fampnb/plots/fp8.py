"""fp8 scaling (notebook 09): the scaled values over an element format's bands, and a scale trace.

``draw_fp8_scaling(ax, view, trace_ax=None)`` draws the log2 histogram of the values a scheme casts
(``fampnb.scaling.SchemeView.scaled``: percent of all values per octave; values beyond the axis are
piled into its end bins) over the element format's bands (rounds to 0 / subnormal / normal /
saturates), with the exact shares written beside it; on ``trace_ax`` the delayed-scaling run: per
step, ``log2(amax * scale / max)`` (above 0: the step saturates) and the shares saturated and lost.
``update_fp8_scaling(artists, view)`` redraws the same artists for another view.  Nothing here
touches pyplot state or rcParams.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np

from .common import ZONE_COLORS, format_bands, setup_log2_axis
from .lang import pt

__all__ = ["draw_fp8_scaling", "update_fp8_scaling", "shares_label", "share_pct",
           "FP8_XLIM"]

#: x range of the histogram, in log2 units (fp4's, fp8's bands and the unscaled demo gradients)
FP8_XLIM: tuple[float, float] = (-40.0, 24.0)
_SHARES = ("lost", "subnormal", "normal", "saturated", "nan")
#: catalogue keys of the band legend (fampnb.plots.lang.pt)
_BAND_KEYS = {"zero": "plot.band.zero", "subnormal": "plot.band.subnormal",
              "normal": "plot.band.normal", "overflow": "plot.fp8.band.overflow"}


def share_pct(x: float) -> str:
    """A share (0..1) as the tables print it: "0", "<0.01%" or "12.34%"."""
    if x == 0:
        return "0"
    if x < 1e-4:
        return "<0.01%"
    return f"{100 * x:.2f}%"


def _pad(text: str, width: int) -> str:
    """``text`` left-aligned in ``width`` monospace columns (a Chinese character takes two)."""
    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(width - used, 0)


def shares_label(view: Any) -> str:
    """One line per category: the exact share of all values (input zeros counted apart)."""
    s = view.shares
    names = {k: "NaN" if k == "nan" else pt(f"plot.fp8.share.{k}") for k in _SHARES}
    lines = [f"{_pad(names[k], 28)} {share_pct(s.fraction(k)):>7}" for k in _SHARES]
    if s.counts["zero"]:
        lines.append(f"{_pad(pt('plot.fp8.input_zeros'), 28)} {share_pct(s.fraction('zero')):>7}")
    return "\n".join(lines)


def _hist(view: Any, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    v = np.abs(np.asarray(view.scaled, np.float64))
    v = v[np.isfinite(v) & (v > 0)]
    edges = np.arange(lo, hi + 1.0)
    with np.errstate(divide="ignore"):
        k = np.clip(np.floor(np.log2(v)), lo, hi - 1)
    counts = np.bincount((k - lo).astype(np.int64), minlength=len(edges) - 1)
    return edges, 100.0 * counts / max(int(view.shares.total), 1)


def _title(view: Any) -> str:
    what = pt(f"plot.fp8.scheme.{view.scheme}")
    return pt("plot.fp8.title", elem=view.elem, what=what, total=f"{view.shares.total:,}")


def _draw_bands(ax: Any, view: Any, lo: float, hi: float) -> list[Any]:
    from ..formats import get

    out = []
    for name, a, b in format_bands(get(view.elem), lo, hi):
        p = ax.axvspan(a, b, color=ZONE_COLORS[name], alpha=0.3, lw=0, zorder=0)
        p.set_label(pt(_BAND_KEYS[name]))
        p.set_gid(name)
        out.append(p)
    return out


def _trace_data(view: Any) -> dict[str, np.ndarray] | None:
    tr = view.trace
    if tr is None:
        return None
    steps = np.arange(1, tr.amax.size + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.log2(np.abs(tr.scaled_amax.astype(np.float64)) / tr.fmt.max)
    data = {"steps": steps, "rel": rel}
    if tr.shares:
        data["saturated"] = 100 * tr.fraction("saturated")
        data["lost"] = 100 * tr.fraction("lost")
    return data


def draw_fp8_scaling(ax: Any, view: Any, *, trace_ax: Any = None,
                     xlim: tuple[float, float] = FP8_XLIM) -> dict[str, Any]:
    """Draw ``view`` (a ``SchemeView``) on ``ax`` (and its trace on ``trace_ax``); returns the
    artists: ``curve``, ``bands``, ``title``, ``shares_text``, ``ax``, and with ``trace_ax``:
    ``rel_line``, ``sat_line``, ``lost_line``, ``spike_line``, ``trace_text``, ``trace_ax``."""
    lo, hi = xlim
    edges, pct = _hist(view, lo, hi)
    curve = ax.stairs(pct, edges, fill=True, color="#4e79a7", alpha=0.85, label=pt("plot.fp8.scaled_values"))
    ax.set_ylim(0, 105)
    ax.set_ylabel(pt("plot.pct_per_octave"))
    setup_log2_axis(ax, lo, hi, step=8, label=pt("plot.fp8.xlabel"))
    bands = _draw_bands(ax, view, lo, hi)
    ax.legend(handles=bands, loc="upper left", fontsize=7, frameon=False, ncol=2)
    title = ax.set_title(_title(view), fontsize=10)
    shares_text = ax.text(0.99, 0.97, shares_label(view), transform=ax.transAxes, ha="right",
                          va="top", fontsize=7.5, family="monospace",
                          bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
    artists: dict[str, Any] = {"curve": curve, "bands": bands, "title": title,
                               "shares_text": shares_text, "ax": ax, "trace_ax": trace_ax,
                               "_elem": view.elem}
    if trace_ax is not None:
        (rel,) = trace_ax.plot([], [], color="#4e79a7", lw=1.2, label=pt("plot.fp8.rel"))
        (sat,) = trace_ax.plot([], [], color="#e15759", lw=1.2, label=pt("plot.fp8.pct_saturated"))
        (lost,) = trace_ax.plot([], [], color="#79706e", lw=1.2, ls="--", label=pt("plot.fp8.pct_lost"))
        spike = trace_ax.axvline(np.nan, color="#e15759", lw=0.8, ls=":")
        trace_ax.axhline(0, color="#555555", lw=0.6)
        trace_ax.set_xlabel(pt("plot.fp8.training_step"))
        trace_ax.legend(loc="upper right", fontsize=7, frameon=False, ncol=3)
        text = trace_ax.text(0.5, 0.5, "", transform=trace_ax.transAxes, ha="center",
                             va="center", fontsize=8, color="#555555")
        artists.update(rel_line=rel, sat_line=sat, lost_line=lost, spike_line=spike,
                       trace_text=text)
        _update_trace(artists, view)
    return artists


def _update_trace(artists: dict[str, Any], view: Any) -> None:
    data = _trace_data(view)
    ax = artists["trace_ax"]
    lines = (artists["rel_line"], artists["sat_line"], artists["lost_line"])
    if data is None:
        for line in lines:
            line.set_data([], [])
        artists["spike_line"].set_xdata([np.nan, np.nan])
        artists["trace_text"].set_text(pt("plot.fp8.no_trace"))
        ax.set_xlim(0, 1)
        ax.set_ylim(-1, 1)
        return
    artists["trace_text"].set_text("")
    artists["rel_line"].set_data(data["steps"], data["rel"])
    artists["sat_line"].set_data(data["steps"], data.get("saturated", np.zeros_like(data["steps"])))
    artists["lost_line"].set_data(data["steps"], data.get("lost", np.zeros_like(data["steps"])))
    artists["spike_line"].set_xdata([view.spike_step] * 2)
    finite = [np.nanmax(np.where(np.isfinite(v), v, np.nan)) for v in data.values()]
    low = np.nanmin(np.where(np.isfinite(data["rel"]), data["rel"], np.nan))
    ax.set_xlim(0.5, data["steps"][-1] + 0.5)
    ax.set_ylim(min(low, 0) - 2, max(max(finite[1:]), 4) + 4)


def update_fp8_scaling(artists: dict[str, Any], view: Any) -> None:
    """Show another ``SchemeView`` on the same artists (bands are redrawn when the element
    format changes)."""
    ax = artists["ax"]
    lo, hi = ax.get_xlim()
    edges, pct = _hist(view, lo, hi)
    artists["curve"].set_data(pct, edges)
    if artists.get("_elem") != view.elem:
        for p in artists["bands"]:
            p.remove()
        artists["bands"] = _draw_bands(ax, view, lo, hi)
        ax.legend(handles=artists["bands"], loc="upper left", fontsize=7, frameon=False, ncol=2)
        artists["_elem"] = view.elem
    artists["title"].set_text(_title(view))
    artists["shares_text"].set_text(shares_label(view))
    if artists.get("trace_ax") is not None:
        _update_trace(artists, view)
