"""The op chain of ``fampnb.hazards.op_chain`` against a format's range (notebook 08).

``draw_op_chain(ax, chain, fmt)`` draws one horizontal bar per op, its length ``log2`` of the op's
abs max, with the format's max as a dashed line; an op whose values include inf or NaN is drawn
to the right edge in the overflow (inf) or NaN colour and labelled.  ``update_op_chain(artists,
chain)`` moves the bars in place.  Nothing here touches pyplot state or rcParams.
"""

from __future__ import annotations

import math
from typing import Any

from .common import ZONE_COLORS, log2, pow2_label
from .lang import pt

__all__ = ["draw_op_chain", "update_op_chain", "chain_title", "CHAIN_XLIM"]

#: x range in log2 units: from 2**-4 to past the fp16 max
CHAIN_XLIM: tuple[float, float] = (-4.0, 20.0)


def _bar(step: Any, xlim: tuple[float, float]) -> tuple[float, str, str]:
    """(bar length from the left edge, colour, label) of one op."""
    lo, hi = xlim
    if step.n_nan:
        return hi - lo, ZONE_COLORS["nan"], f"NaN ×{step.n_nan}"
    if step.n_inf:
        return hi - lo, ZONE_COLORS["overflow"], f"inf ×{step.n_inf}"
    v = step.abs_max
    k = log2(v) if v > 0 else lo
    return max(min(k, hi) - lo, 0.0), ZONE_COLORS["normal"], f"{v:.4g}"


def chain_title(chain: list[Any], fmt: Any) -> str:
    """"first op out of fp16: exp" or "every op stays inside fp16"."""
    bad = next((s for s in chain if s.n_inf or s.n_nan), None)
    return (pt("plot.hazards.first_out", fmt=fmt.name, op=bad.name) if bad is not None
            else pt("plot.hazards.all_inside", fmt=fmt.name))


def draw_op_chain(ax: Any, chain: list[Any], fmt: Any, *,
                  xlim: tuple[float, float] = CHAIN_XLIM) -> dict[str, Any]:
    """Draw ``chain`` (``OpStep`` list) on ``ax`` against ``fmt`` (a ``Format``).  Returns the
    artists: ``bars`` (a BarContainer), ``labels`` (one Text per op), ``title``, ``max_line``."""
    lo, hi = xlim
    names = [s.name for s in chain]
    parts = [_bar(s, xlim) for s in chain]
    ys = list(range(len(chain)))
    bars = ax.barh(ys, [p[0] for p in parts], left=lo, color=[p[1] for p in parts],
                   edgecolor="#555555", linewidth=0.5, height=0.7)
    labels = [ax.text(lo + p[0] + 0.2 if p[0] < hi - lo - 3 else hi - 0.2, y, p[2],
                      va="center", ha="left" if p[0] < hi - lo - 3 else "right", fontsize=8)
              for y, p in zip(ys, parts)]
    ax.set_yticks(ys, names)
    ax.set_ylim(len(chain) - 0.5, -0.5)
    ax.set_xlim(lo, hi)
    ticks = list(range(int(math.ceil(lo)), int(hi) + 1, 4))
    ax.set_xticks(ticks, [pow2_label(t) for t in ticks])
    ax.set_xlabel(pt("plot.hazards.xlabel"))
    max_line = ax.axvline(min(log2(fmt.max), hi), color="#b00020", ls="--", lw=1)
    max_text = ax.text(hi, -0.45, "", color="#b00020", fontsize=7, va="top", ha="right")
    title = ax.set_title(chain_title(chain, fmt), fontsize=10)
    artists = {"bars": bars, "labels": labels, "title": title, "max_line": max_line,
               "max_text": max_text, "fmt": fmt, "xlim": xlim}
    _set_format(artists, fmt)
    return artists


def _set_format(artists: dict[str, Any], fmt: Any) -> None:
    """The dashed max line and its label for ``fmt`` (at the right edge when off the axis)."""
    lo, hi = artists["xlim"]
    k = log2(fmt.max)
    artists["fmt"] = fmt
    artists["max_line"].set_xdata([min(k, hi)] * 2)
    artists["max_text"].set_text(pt("plot.hazards.max", fmt=fmt.name, max=f"{fmt.max:.6g}")
                                 + (pt("plot.hazards.off_axis") if k > hi else " "))


def update_op_chain(artists: dict[str, Any], chain: list[Any], fmt: Any = None) -> None:
    """Move the bars and labels of ``draw_op_chain`` to ``chain`` (same ops, new values); ``fmt``
    switches the format whose max is marked."""
    if fmt is not None:
        _set_format(artists, fmt)
    xlim = artists["xlim"]
    lo, hi = xlim
    for rect, text, step in zip(artists["bars"].patches, artists["labels"], chain):
        width, colour, label = _bar(step, xlim)
        rect.set_width(width)
        rect.set_facecolor(colour)
        inside = width < hi - lo - 3
        text.set_text(label)
        text.set_x(lo + width + 0.2 if inside else hi - 0.2)
        text.set_ha("left" if inside else "right")
    artists["title"].set_text(chain_title(chain, artists["fmt"]))
