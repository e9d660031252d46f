"""Loss-scale plots: the scale over steps and the gradient window it opens.

Pure ``draw_*(ax, data) -> artists`` / ``update_*(artists, data)`` pairs (no pyplot state, no new
figure per change).  ``data`` is a ``fampnb.scaler.Trace`` (anything with ``.rows`` whose items have
``step, scale, grad_abs_max, overflow, skipped, next_scale, event``) or a ``ScaleSeries`` made by
``scale_series``.  Scales are drawn on a log2 axis; the horizontal line at 256 is the level the source
article warns about ("the scale drops below 256 and keeps going").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..seed import WARN_SCALE
from .common import fast_log_ticks
from .lang import pt

__all__ = [
    "ScaleSeries", "scale_series", "WARN_SCALE",
    "draw_scale_trace", "update_scale_trace",
    "draw_grad_window", "update_grad_window",
    "draw_range_check", "update_range_check",
]

_COLORS = {"scale": "#1f5fa8", "backoff": "#c62828", "skip": "#ef6c00", "growth": "#2e7d32",
           "fatal": "#000000", "grad": "#6a1b9a", "window": "#90caf9", "warn": "#757575"}


@dataclass
class ScaleSeries:
    """Per-step arrays of a scaler run (steps are 1-based; one entry per simulated step)."""

    steps: np.ndarray
    scales: np.ndarray          #: the scale in force at each step
    grad: np.ndarray            #: gradient abs max at each step (NaN where unknown)
    overflow: np.ndarray        #: bool: the scaled gradient did not fit
    skipped: np.ndarray         #: bool: the optimizer step was skipped
    events: list[str | None] = field(default_factory=list)  #: "backoff" "growth" ... or None
    next_scale: float = float("nan")  #: the scale after the last step
    label: str = ""
    fatal: str | None = None    #: the exception a fatal minimum raised (the run ends there)


def scale_series(data: Any, label: str = "") -> ScaleSeries:
    """Normalise a ``Trace`` (``.rows``), a ``ScaleSeries`` or a mapping of arrays to ``ScaleSeries``.

    Mapping keys: ``scales`` (required), ``steps``, ``grad``, ``overflow``, ``skipped``, ``events``.
    """
    if isinstance(data, ScaleSeries):
        return data
    rows = getattr(data, "rows", None)
    if rows is not None:
        rows = list(rows)
        n = len(rows)
        get = (lambda r, k, d=None: getattr(r, k, r.get(k, d) if isinstance(r, dict) else d))
        g = [get(r, "grad_abs_max") for r in rows]
        return ScaleSeries(
            steps=np.array([get(r, "step", i + 1) for i, r in enumerate(rows)], dtype=float),
            scales=np.array([get(r, "scale") for r in rows], dtype=float),
            grad=np.array([np.nan if v is None else v for v in g], dtype=float),
            overflow=np.array([bool(get(r, "overflow", False)) for r in rows], dtype=bool),
            skipped=np.array([bool(get(r, "skipped", False)) for r in rows], dtype=bool),
            events=[get(r, "event") for r in rows],
            next_scale=float(get(rows[-1], "next_scale", np.nan)) if n else float("nan"),
            label=label, fatal=getattr(data, "fatal", None),
        )
    d = dict(data)
    scales = np.asarray(d["scales"], dtype=float)
    n = len(scales)
    return ScaleSeries(
        steps=np.asarray(d.get("steps", np.arange(1, n + 1)), dtype=float),
        scales=scales,
        grad=np.asarray(d.get("grad", np.full(n, np.nan)), dtype=float),
        overflow=np.asarray(d.get("overflow", np.zeros(n, bool)), dtype=bool),
        skipped=np.asarray(d.get("skipped", np.zeros(n, bool)), dtype=bool),
        events=list(d.get("events", [None] * n)),
        next_scale=float(d.get("next_scale", np.nan)),
        label=str(d.get("label", label)), fatal=d.get("fatal"),
    )


def _xy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if len(x) == 0:
        return np.empty((0, 2))
    return np.column_stack([x, y])


def _positive(y: np.ndarray) -> np.ndarray:
    """Values a log axis can show: zero / negative become NaN (a gap, not a warning)."""
    y = np.asarray(y, dtype=float).copy()
    y[~(y > 0)] = np.nan
    return y


def _marks(s: ScaleSeries) -> dict[str, np.ndarray]:
    ev = np.array([e or "" for e in s.events]) if s.events else np.full(len(s.steps), "")
    backoff = ev == "backoff"
    fatal = np.zeros(len(ev), dtype=bool)
    if s.fatal and len(ev):
        fatal[-1] = True  # the run ended there; other "min-scale" steps sit at the floor
    growth = ev == "growth"
    # skipped without a backoff: hysteresis, or sitting at the floor
    skip = s.skipped & ~backoff & ~fatal
    return {"backoff": backoff, "skip": skip, "growth": growth, "fatal": fatal}


def _scale_limits(ax: Any, s: ScaleSeries) -> None:
    ys = _positive(np.concatenate([s.scales, [s.next_scale], [WARN_SCALE]]))
    ys = ys[np.isfinite(ys)]
    lo, hi = (float(ys.min()), float(ys.max())) if len(ys) else (1.0, 65536.0)
    ax.set_ylim(lo / 4, hi * 4)
    n = len(s.steps)
    right = float(s.steps[-1]) + 1 if n else 2.0
    ax.set_xlim(0.5, max(right, 2.0) + 0.5)


def draw_scale_trace(ax: Any, data: Any, *, title: str | None = None) -> dict[str, Any]:
    """Scale in force at each step (log2 axis) with backoff, skip, growth and fatal markers.

    The line shows the scale step by step and ends with the scale after the last step; red
    triangles mark backoffs (overflow, scale halved), orange rings skipped steps without a backoff
    (DeepSpeed/Megatron hysteresis, or a scale pinned at its floor), green triangles growth, a black
    cross the step where a fatal minimum ended the run (``Trace.fatal``).  The dashed line is the
    article's 256.
    """
    s = scale_series(data)
    ax.set_yscale("log", base=2)
    fast_log_ticks(ax.yaxis, 2)
    (line,) = ax.plot([], [], drawstyle="steps-mid", color=_COLORS["scale"], lw=2,
                      label=pt("plot.loss_scale"))
    warn = ax.axhline(WARN_SCALE, color=_COLORS["warn"], ls="--", lw=1)
    warn_text = ax.text(0.005, WARN_SCALE, pt("plot.warn_line"), color=_COLORS["warn"],
                        fontsize=8, ha="left", va="bottom", transform=ax.get_yaxis_transform())
    styles = {"backoff": dict(marker="v", color=_COLORS["backoff"], s=36, label=pt("plot.overflow_backoff")),
              "skip": dict(marker="o", facecolors="none", edgecolors=_COLORS["skip"], s=40,
                           label=pt("plot.overflow_skipped")),
              "growth": dict(marker="^", color=_COLORS["growth"], s=36, label=pt("plot.growth")),
              "fatal": dict(marker="X", color=_COLORS["fatal"], s=70, label=pt("plot.minimum_reached"))}
    artists: dict[str, Any] = {"line": line, "warn": warn, "warn_text": warn_text}
    for key, kw in styles.items():
        artists[key] = ax.scatter(np.empty(0), np.empty(0), zorder=3, **kw)
    ax.set_xlabel(pt("plot.step"))
    ax.set_ylabel(pt("plot.loss_scale_log2"))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    artists["title"] = ax.set_title(title or s.label or pt("plot.loss_scale_over_steps"), fontsize=10)
    artists["ax"] = ax
    update_scale_trace(artists, s, title=title)
    return artists


def update_scale_trace(artists: dict[str, Any], data: Any, *, title: str | None = None) -> None:
    """Move the existing artists of ``draw_scale_trace`` to ``data`` (no new artists)."""
    s = scale_series(data)
    x = np.append(s.steps, s.steps[-1] + 1) if len(s.steps) else np.empty(0)
    y = np.append(s.scales, s.next_scale if np.isfinite(s.next_scale) else s.scales[-1]) \
        if len(s.steps) else np.empty(0)
    artists["line"].set_data(x, _positive(y))
    for key, mask in _marks(s).items():
        sc = _positive(s.scales[mask])
        artists[key].set_offsets(_xy(s.steps[mask], sc))
    if title is not None or s.label:
        artists["title"].set_text(title or s.label)
    _scale_limits(artists["ax"], s)


def _window(s: ScaleSeries, fmt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = fmt.overflow_threshold / s.scales
        bottom = fmt.min_normal / s.scales
        zero = fmt.underflow_threshold / s.scales
    return _positive(top), _positive(bottom), _positive(zero)


def draw_grad_window(ax: Any, data: Any, fmt: Any = None) -> dict[str, Any]:
    """The gradient window each scale opens: between ``min_normal / scale`` and
    ``overflow_threshold / scale`` (fp16 by default) a gradient survives the cast; the purple dots
    are the gradient abs max of each step (above the band: overflow; the band moves as the scale
    changes)."""
    from ..formats import FP16

    fmt = fmt or FP16
    s = scale_series(data)
    ax.set_yscale("log", base=10)
    fast_log_ticks(ax.yaxis, 10)
    (top,) = ax.plot([], [], drawstyle="steps-mid", color=_COLORS["backoff"], lw=1.2,
                     label=pt("plot.overflow_ceiling", threshold=f"{fmt.overflow_threshold:g}", fmt=fmt.name))
    (bottom,) = ax.plot([], [], drawstyle="steps-mid", color=_COLORS["skip"], lw=1.2,
                        label=pt("plot.normal_floor", min_normal=f"{fmt.min_normal:.3g}"))
    (zero,) = ax.plot([], [], drawstyle="steps-mid", color="0.45", lw=1, ls=":",
                      label=pt("plot.rounds_to_zero_below", threshold=f"{fmt.underflow_threshold:.3g}"))
    (grad,) = ax.plot([], [], "o", color=_COLORS["grad"], ms=4, label=pt("plot.gradient_abs_max"))
    (nonfinite,) = ax.plot([], [], "x", color=_COLORS["backoff"], ms=5,
                           transform=ax.get_xaxis_transform(), label=pt("plot.g_nonfinite"))
    ax.set_xlabel(pt("plot.step"))
    ax.set_ylabel(pt("plot.unscaled_gradient"))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    artists = {"top": top, "bottom": bottom, "zero": zero, "grad": grad, "nonfinite": nonfinite,
               "ax": ax,
               "fmt": fmt, "band": None}
    update_grad_window(artists, s)
    return artists


def update_grad_window(artists: dict[str, Any], data: Any) -> None:
    """Move the ceiling, floor and gradient dots of ``draw_grad_window`` to ``data``."""
    s = scale_series(data)
    ax = artists["ax"]
    top, bottom, zero = _window(s, artists["fmt"])
    artists["top"].set_data(s.steps, top)
    artists["bottom"].set_data(s.steps, bottom)
    if "zero" in artists:
        artists["zero"].set_data(s.steps, zero)
    artists["grad"].set_data(s.steps, _positive(s.grad))
    artists["grad"].set_markersize(4 if len(s.steps) <= 120 else 2)
    # inf, or NaN on an overflowing step (also a ``found_inf`` trace, whose G is unknown)
    bad = np.isinf(s.grad) | (np.isnan(s.grad) & s.overflow)
    artists["nonfinite"].set_data(s.steps[bad], np.full(int(bad.sum()), 0.96))
    if artists["band"] is not None:
        artists["band"].remove()
    artists["band"] = ax.fill_between(s.steps, bottom, top, step="mid", color=_COLORS["window"],
                                      alpha=0.25, lw=0)
    vals = np.concatenate([top, bottom, zero, _positive(s.grad)])
    vals = vals[np.isfinite(vals)]
    if len(vals):
        ax.set_ylim(vals.min() / 10, vals.max() * 10)
    n = len(s.steps)
    ax.set_xlim(0.5, (float(s.steps[-1]) if n else 1.0) + 1.5)


# --- one product against the format's zones (walkthrough step 2) -----------------------------

def draw_range_check(ax: Any, data: dict[str, Any]) -> dict[str, Any]:
    """A log10 axis with the format's zones (zero, subnormal, normal, overflow) and a marker at
    ``G x scale``.  ``data``: ``{"g": float, "scale": float, "fmt": Format}``."""
    ax.set_xscale("log", base=10)
    fast_log_ticks(ax.xaxis, 10)
    ax.set_yticks([])
    ax.set_xlim(1e-12, 1e12)
    ax.set_autoscale_on(False)
    from .common import ZONE_COLORS as zc

    spans = {
        "zero": ax.axvspan(1e-11, 1e-10, color=zc["zero"], alpha=0.7, lw=0, label="rounds to 0"),
        "sub": ax.axvspan(1e-10, 1e-9, color=zc["subnormal"], alpha=0.7, lw=0,
                          label="subnormal (precision lost)"),
        "normal": ax.axvspan(1e-9, 1e9, color=zc["normal"], alpha=0.7, lw=0, label="normal"),
        "over": ax.axvspan(1e9, 1e10, color=zc["overflow"], alpha=0.7, lw=0, label="overflow (inf)"),
    }
    marker = ax.axvline(1.0, color="black", lw=2.5)
    text = ax.text(1.0, 0.5, "", transform=ax.get_xaxis_transform(), fontsize=9, va="center",
                   ha="left", bbox=dict(boxstyle="round", fc="white", ec="0.5", alpha=0.9))
    edges = [ax.text(1.0, 0.97, "", transform=ax.get_xaxis_transform(), fontsize=7, ha="center",
                     va="top", color="0.25") for _ in range(3)]
    ax.set_xlabel("G x scale (log axis)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=4, fontsize=8, frameon=False)
    artists = {"spans": spans, "marker": marker, "text": text, "edges": edges, "ax": ax}
    update_range_check(artists, data)
    return artists


def _span(poly: Any, x0: float, x1: float) -> None:
    # axvspan returns a Rectangle in matplotlib >= 3.9, a Polygon before
    if hasattr(poly, "set_x") and hasattr(poly, "set_width"):
        poly.set_x(x0)
        poly.set_width(x1 - x0)
    else:  # pragma: no cover - older matplotlib
        poly.set_xy([[x0, 0], [x0, 1], [x1, 1], [x1, 0], [x0, 0]])


def update_range_check(artists: dict[str, Any], data: dict[str, Any]) -> None:
    """Redraw the zones for ``data["fmt"]`` and move the marker to ``data["g"] * data["scale"]``."""
    from ..formats import FP16, Zone

    fmt = data.get("fmt") or FP16
    g, scale = float(data["g"]), float(data["scale"])
    with np.errstate(over="ignore", invalid="ignore"):
        x = g * scale
    lo_edge, sub_edge, top_edge = fmt.underflow_threshold, fmt.min_normal, fmt.overflow_threshold
    left, right = lo_edge / 1e3, top_edge * 1e3
    if np.isfinite(x) and x > 0:
        left, right = min(left, x / 10), max(right, x * 10)
    sp = artists["spans"]
    _span(sp["zero"], left, lo_edge)
    _span(sp["sub"], lo_edge, sub_edge)
    _span(sp["normal"], sub_edge, top_edge)
    _span(sp["over"], top_edge, right)
    ax = artists["ax"]
    ax.set_xlim(left, right)
    for t, edge in zip(artists.get("edges", ()), (lo_edge, sub_edge, top_edge)):
        t.set_position((edge, 0.97))
        t.set_text(f"{edge:.6g}" if edge >= 1 else f"{edge:.3g}")
    shown = x if (np.isfinite(x) and x > 0) else (right if np.isinf(x) else left)
    artists["marker"].set_xdata([shown, shown])
    zone = Zone(int(fmt.classify(np.float64(x))))
    artists["text"].set_position((shown, 0.5))
    artists["text"].set_ha("right" if shown > np.sqrt(left * right) else "left")
    artists["text"].set_text(f" G x scale = {x:.4g}  ->  {fmt.name} {zone.name} ")
