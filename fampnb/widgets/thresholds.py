"""Threshold explorer (notebook 02): gradient abs max G, loss scale S, smallest gradient g_min ->
where G·S lands in fp16 and bf16, the article's verdict next to the exact one, and the safe window.

``make_threshold_explorer()`` returns ``(ui, controls, artists)``.  Controls (CSS class
``fampnb-thresholds-<key>``): ``g_max``, ``scale``, ``g_min`` (log2 sliders).  Text outputs:
``artists["verdict_text"]`` (per format: G·S, the article's ``judge``, the exact ``Zone`` of G·S and
of g_min·S, the stored value), ``artists["window_text"]`` (the safe window of S) and
``artists["status_text"]``.  Numbers come from ``fampnb.formats`` (``judge``, ``Format.classify``,
``Format.round``, ``safe_scale_window``).
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from .. import formats as F
from .._checks import as_positive
from ..i18n import t
from ..plots.common import ZONE_COLORS, pow2_label
from ..plots.formats import ThresholdData, draw_thresholds, update_thresholds
from .base import LiveFigure, guard, status_line, tag
from .bits import SnapGuard

__all__ = ["make_threshold_explorer", "verdicts", "verdict_html", "window_html"]

NAME = "thresholds"
_RANGES = {"g_max": (-40, 40), "scale": (-48, 48), "g_min": (-60, 40)}
_ZCOL = {F.Zone.NORMAL: "normal", F.Zone.SUBNORMAL: "subnormal", F.Zone.UNDERFLOW: "zero",
         F.Zone.ZERO: "zero", F.Zone.OVERFLOW: "overflow", F.Zone.NAN: "nan"}
#: which exact zones the article's three verdicts correspond to
_AGREES = {"OVERFLOW": {F.Zone.OVERFLOW, F.Zone.NAN}, "UNDERFLOW": {F.Zone.UNDERFLOW},
           "IN_RANGE": {F.Zone.NORMAL}}


def verdicts(g_max: float, scale: float, g_min: float, fmt: Any) -> dict[str, Any]:
    """Everything the verdict table shows for one format (computed by ``fampnb.formats``)."""
    fmt = F.get(fmt)
    scaled, article = F.judge(g_max, scale, fmt)
    with np.errstate(over="ignore"):
        top = np.float64(g_max) * np.float64(scale)
        low = np.float64(g_min) * np.float64(scale)
        zone = F.Zone(int(fmt.classify(top)))
        zone_min = F.Zone(int(fmt.classify(low)))
        stored = float(fmt.round(top))
    return {"format": fmt.name, "scaled": scaled, "article": article, "zone": zone,
            "zone_min": zone_min, "stored": stored, "agree": zone in _AGREES[article]}


def _badge(zone: F.Zone) -> str:
    return (f'<span style="background:{ZONE_COLORS[_ZCOL[zone]]};padding:0 4px">'
            f'{zone.name}</span>')


def verdict_html(rows: list[dict[str, Any]]) -> str:
    """The verdict table (one row per format)."""
    head = ("<tr><th></th><th>G·S</th>" + "".join(
        f"<th>{t(f'widget.thresholds.col.{c}')}</th>" for c in ("judge", "zone", "stored", "zone_min"))
        + "<th></th></tr>")
    body = ""
    for r in rows:
        flag = ("" if r["agree"] else
                f"<span style='color:#b00020'>{t('widget.thresholds.disagree')}</span>")
        body += (f"<tr><td><b>{r['format']}</b></td><td>{r['scaled']:.6g}</td>"
                 f"<td>{r['article']}</td><td>{_badge(r['zone'])}</td>"
                 f"<td>{r['stored']!r}</td><td>{_badge(r['zone_min'])}</td><td>{flag}</td></tr>")
    style = "font-size:13px;border-collapse:collapse"
    return f"<table style='{style}' cellpadding='3'>{head}{body}</table>"


def window_html(data: ThresholdData) -> str:
    """One line per format: the safe window of S and where the current S is."""
    lines = []
    for name, w in data.windows.items():
        if w.empty:
            where = t("widget.thresholds.no_window")
            if not w.empty_nonzero:
                where += t("widget.thresholds.no_window_nonzero", s_max=f"{w.s_max:.4g}",
                           s_min=f"{w.s_min_nonzero:.4g}")
        else:
            p2 = (t("widget.thresholds.p2", lo=pow2_label(w.p2_min), hi=pow2_label(w.p2_max))
                  if not w.p2_empty else t("widget.thresholds.no_p2"))
            pos = t("widget.thresholds.pos." + ("inside" if w.s_min <= data.scale <= w.s_max else
                                                "above" if data.scale > w.s_max else "below"))
            where = t("widget.thresholds.window", s_min=f"{w.s_min:.4g}", s_max=f"{w.s_max:.4g}",
                      p2=p2, pos=pos)
        lines.append(f"<div>{t('widget.thresholds.window_head', fmt=name)}{where}</div>")
    return "<div style='font-size:13px'>" + "".join(lines) + "</div>"


def make_threshold_explorer(g_max: float = 3.2e4, scale: float = 65536.0, g_min: float = 1e-3,
                            formats: tuple[str, ...] = ("fp16", "bf16")) -> tuple[Any, dict, dict]:
    """Build the threshold explorer; returns ``(ui, controls, artists)``."""
    import ipywidgets as w

    fmts = tuple(F.get(f) for f in formats)
    inits = {"g_max": g_max, "scale": scale, "g_min": g_min}
    labels = {k: t(f"widget.thresholds.{k}") for k in ("g_max", "scale", "g_min")}
    controls: dict[str, Any] = {}
    for key, (lo, hi) in _RANGES.items():
        controls[key] = tag(w.FloatLogSlider(
            value=as_positive(key, inits[key]), base=2, min=lo, max=hi,
            step=1.0 if key == "scale" else 0.25, description=labels[key], readout_format=".4g",
            continuous_update=False, style={"description_width": "90px"},
            layout=w.Layout(width="70%")), f"{NAME}-{key.replace('_', '-')}")
    status = status_line(NAME)
    tag(status, f"{NAME}-status-text")
    verdict = tag(w.HTML(), f"{NAME}-verdict-text")
    window = tag(w.HTML(), f"{NAME}-window-text")

    live = LiveFigure(figsize=(8.0, 4.6), nrows=2)
    data = ThresholdData(g_max, scale, min(g_min, g_max), fmts)
    plot = draw_thresholds(live.axes[:, 0], data)
    artists: dict[str, Any] = {
        "plot": plot, "scaled_marker": plot["top"], "min_marker": plot["bottom"],
        "span": plot["span"], "s_line": plot["s_line"], "windows": plot["windows"],
        "verdict_text": verdict, "window_text": window, "status_text": status,
        "figure": live.fig,
    }
    state: dict[str, Any] = {"data": data, "exact": {k: float(inits[k]) for k in controls}}
    snaps = {k: SnapGuard(c) for k, c in controls.items()}
    for k, c in controls.items():
        snaps[k].expect(c.value)

    def recompute(change: Any = None) -> None:
        if change is not None:
            key = next(k for k, c in controls.items() if c is change["owner"])
            new = as_positive(labels[key], change["new"])
            if snaps[key].is_echo(new):  # the browser snapped our exact value to its grid
                return
            state["exact"][key] = new
        vals = {k: as_positive(labels[k], state["exact"][k]) for k in controls}
        note = ""
        g_lo, g_hi = vals["g_min"], vals["g_max"]
        if g_lo > g_hi:
            g_lo, note = g_hi, t("widget.thresholds.g_min_above")
        d = ThresholdData(g_hi, vals["scale"], g_lo, fmts)
        update_thresholds(plot, d)
        rows = [verdicts(d.g_max, d.scale, d.g_min, f) for f in fmts]
        verdict.value = (f"<div style='font-size:13px;margin-bottom:2px'>G = {d.g_max:.6g}, "
                         f"S = {d.scale:.6g}, g_min = {d.g_min:.6g}</div>" + verdict_html(rows))
        window.value = window_html(d) + (
            f"<div style='color:#555;font-size:12px'>{html.escape(note)}</div>" if note else "")
        live.refresh()
        state["data"] = d

    cb = guard(status, recompute)
    for c in controls.values():
        c.observe(cb, names="value")
    recompute()
    ui = tag(w.VBox([controls["g_max"], controls["scale"], controls["g_min"], live.view, verdict,
                     window, status]), NAME)
    return ui, controls, artists
