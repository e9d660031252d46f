"""The log doctor's timeline: loss scale (log2 axis) and loss over steps, backoffs and NaN marked.

``draw_timeline(ax, data)`` draws once and returns the artists; ``update_timeline(artists, data)``
moves them to new data (no new artists, no new figure).  ``data`` is a ``Diagnosis`` (made by
``fampnb.diagnose.diagnose``; the plot reads its ``verdict`` and its ``trajectory``, ``losses``,
``backoff_marks`` and ``nan_marks``, never diagnoses) or None / empty for "no log yet".  The
scale is on ``ax`` (log2 axis, with the article's 256 line); the loss on a twin axis on the right.
Red triangles mark backoffs, purple crosses NaN records (drawn on the top edge: NaN has no height).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..seed import WARN_SCALE
from .common import fast_log_ticks
from .lang import pt

__all__ = ["draw_timeline", "update_timeline", "timeline_series"]

_C = {"scale": "#4e79a7", "loss": "#59a14f", "backoff": "#e15759", "nan": "#b07aa1",
      "warn": "#f28e2b"}


def timeline_series(data: Any) -> dict[str, np.ndarray]:
    """Arrays of the timeline: ``scale_x/scale_y``, ``loss_x/loss_y``, ``backoff_x/backoff_y``,
    ``nan_x`` (steps), and ``verdict`` (a 0-d string array, ``""`` when there is no data).

    ``data``: a ``Diagnosis``, or None or an empty sequence (no log yet); anything else (raw
    events, say) is a TypeError: diagnose them first (``fampnb.diagnose.diagnose``)."""
    if data is None or (isinstance(data, (list, tuple)) and not data):
        e = np.empty(0)
        return {"scale_x": e, "scale_y": e, "loss_x": e, "loss_y": e, "backoff_x": e,
                "backoff_y": e, "nan_x": e, "verdict": np.array("")}
    if not hasattr(data, "verdict"):
        raise TypeError(f"data must be a Diagnosis (fampnb.diagnose.diagnose) or None, got "
                        f"{type(data).__name__}")

    def col(rows: list[tuple], i: int) -> np.ndarray:  # type: ignore[type-arg]
        return np.array([float(r[i]) for r in rows], dtype=float) if rows else np.empty(0)

    traj = data.trajectory
    marks = [m for m in data.backoff_marks if m[2] is not None and math.isfinite(m[2])]
    losses = [p for p in data.losses if math.isfinite(p[1])]
    return {"scale_x": col(traj, 0), "scale_y": col(traj, 2),
            "loss_x": col(losses, 0), "loss_y": col(losses, 1),
            "backoff_x": col(marks, 0), "backoff_y": col(marks, 2),
            "nan_x": col(data.nan_marks, 0), "verdict": np.array(data.verdict)}


def _xy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0)
    return np.column_stack([x[keep], y[keep]]) if keep.any() else np.empty((0, 2))


def draw_timeline(ax: Any, data: Any) -> dict[str, Any]:
    """Draw the timeline of ``data`` on ``ax`` and return the artists (see the module docstring)."""
    ax.set_yscale("log", base=2)
    fast_log_ticks(ax.yaxis, 2)
    (scale,) = ax.plot([], [], drawstyle="steps-post", color=_C["scale"], lw=2,
                       label=pt("plot.tl_loss_scale"))
    warn = ax.axhline(WARN_SCALE, color=_C["warn"], ls="--", lw=1)
    ax.text(0.005, WARN_SCALE, pt("plot.warn_line"), color=_C["warn"], fontsize=8,
            ha="left", va="bottom", transform=ax.get_yaxis_transform())
    backoff = ax.scatter(np.empty(0), np.empty(0), marker="v", color=_C["backoff"], s=30,
                         zorder=3, label=pt("plot.backoff"))
    nan = ax.scatter(np.empty(0), np.empty(0), marker="X", color=_C["nan"], s=50, zorder=4,
                     label=pt("plot.nan_record"), clip_on=False, transform=ax.get_xaxis_transform())
    lax = ax.twinx()
    (loss,) = lax.plot([], [], color=_C["loss"], lw=1.2, alpha=0.9, label=pt("plot.loss_right"))
    lax.set_ylabel("loss")
    ax.set_xlabel(pt("plot.step"))
    ax.set_ylabel(pt("plot.loss_scale_log2"))
    ax.grid(True, which="major", alpha=0.3)
    handles = [scale, loss, backoff, nan, warn]
    ax.legend(handles, [h.get_label() for h in handles[:4]] + ["256"], loc="upper right",
              fontsize=8, framealpha=0.8)
    title = ax.set_title("", fontsize=10)
    artists: dict[str, Any] = {"ax": ax, "loss_ax": lax, "scale": scale, "loss": loss,
                               "backoff": backoff, "nan": nan, "warn": warn, "title": title}
    update_timeline(artists, data)
    return artists


def update_timeline(artists: dict[str, Any], data: Any) -> None:
    """Move the artists of ``draw_timeline`` to ``data`` (no new artists)."""
    s = timeline_series(data)
    ax, lax = artists["ax"], artists["loss_ax"]
    sx, sy = s["scale_x"], s["scale_y"]
    keep = np.isfinite(sy) & (sy > 0)
    artists["scale"].set_data(sx[keep], sy[keep])
    artists["backoff"].set_offsets(_xy(s["backoff_x"], s["backoff_y"]))
    nx = s["nan_x"]
    artists["nan"].set_offsets(np.column_stack([nx, np.ones_like(nx)]) if nx.size
                               else np.empty((0, 2)))
    artists["loss"].set_data(s["loss_x"], s["loss_y"])
    xs = np.concatenate([sx, s["loss_x"], nx, s["backoff_x"]])
    xs = xs[np.isfinite(xs)]
    lo, hi = (float(xs.min()), float(xs.max())) if xs.size else (0.0, 1.0)
    pad = max(1.0, 0.02 * (hi - lo))
    ax.set_xlim(lo - pad, hi + pad)
    ys = np.concatenate([sy[keep], [WARN_SCALE]])
    ax.set_ylim(float(ys.min()) / 4, float(ys.max()) * 4)
    ly = s["loss_y"]
    if ly.size:
        a, b = float(ly.min()), float(ly.max())
        m = max(1e-9, 0.05 * (b - a) or 0.05 * abs(b) or 1.0)
        lax.set_ylim(a - m, b + m)
    verdict = str(s["verdict"])
    artists["title"].set_text(f"verdict: {verdict}" if verdict else "no log yet")
