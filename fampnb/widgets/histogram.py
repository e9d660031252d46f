"""The gradient-histogram explorer (notebook 07): a loss-scale slider over a real gradient histogram.

``make_histogram_explorer(hist, scale)`` shows a ``fampnb.probe.GradHistogram`` against the fp16 /
bf16 / fp8 bands and a power-of-two scale slider; moving it shifts the histogram (no backward pass
is re-run: ``GradHistogram.at``) and updates, per format, the percentages lost to zero, kept as
subnormals, and overflowing.  The pure helpers (``loss_rows``, ``loss_table_html``, ``verdict``,
``snap_scale``) need neither ipywidgets nor matplotlib.
"""

from __future__ import annotations

import html
import math
from typing import Any

from .._checks import as_positive
from ..i18n import t
from ..scenarios import synthetic_gradients

__all__ = ["NAME", "snap_scale", "loss_rows", "loss_table_html", "verdict",
           "synthetic_histogram", "make_histogram_explorer"]

NAME = "hist"
SLIDER_MIN, SLIDER_MAX = -16, 40  # log2 of the slider's scale range


def snap_scale(value: Any) -> tuple[float, str]:
    """``(2**k, note)``: the nearest power of two within the slider's range, and a note when the
    value had to be changed (loss scales are powers of two).  ValueError for NaN, inf, <= 0."""
    v = as_positive("scale", value)
    k = round(math.log2(v))
    k = min(max(k, SLIDER_MIN), SLIDER_MAX)
    s = 2.0 ** k
    note = "" if s == v else t("widget.hist.snapped", v=f"{v:g}", k=k, s=f"{s:g}")
    return s, note


def loss_rows(hist: Any, scale: float) -> list[dict[str, Any]]:
    """Per format: percentages (of all values) lost to zero, subnormal, overflow, and normal."""
    rows = []
    for name, fr in hist.fractions(scale).items():
        rows.append({"format": name, "zero": 100 * fr["underflow"],
                     "subnormal": 100 * fr["subnormal"], "overflow": 100 * fr["overflow"],
                     "normal": 100 * fr["normal"]})
    return rows


def _pct(x: float) -> str:
    if x == 0:
        return "0"
    if x < 0.01:
        return "<0.01%"
    return f"{x:.2f}%"


def loss_table_html(hist: Any, scale: float) -> str:
    """An HTML table of ``loss_rows``: what each format does to the scaled gradients."""
    head = (f"<tr><th style='text-align:left'>{t('widget.hist.col.format')}</th>" + "".join(
        f"<th>{t(f'widget.hist.col.{c}')}</th>" for c in ("zero", "subnormal", "overflow", "normal"))
        + "</tr>")
    body = []
    for r in loss_rows(hist, scale):
        bad = r["zero"] > 0 or r["overflow"] > 0
        style = " style='color:#b00020'" if bad else ""
        body.append(f"<tr{style}><td>{html.escape(r['format'])}</td><td>{_pct(r['zero'])}</td>"
                    f"<td>{_pct(r['subnormal'])}</td><td>{_pct(r['overflow'])}</td>"
                    f"<td>{_pct(r['normal'])}</td></tr>")
    return f"<table style='font-size:90%'>{head}{''.join(body)}</table>"


def verdict(hist: Any, scale: float, fmt: str) -> str:
    """One line: does ``fmt`` keep every non-zero gradient at this scale?"""
    z = {r["format"]: r for r in loss_rows(hist, scale)}[fmt]
    k = round(math.log2(scale))
    if z["zero"] == 0 and z["overflow"] == 0:
        what = t("widget.hist.loses_nothing") + (
            t("widget.hist.kept_subnormal", pct=_pct(z["subnormal"])) if z["subnormal"] else "")
    else:
        bits = []
        if z["zero"]:
            bits.append(t("widget.hist.become_zero", pct=_pct(z["zero"])))
        if z["overflow"]:
            bits.append(t("widget.hist.overflow", pct=_pct(z["overflow"])))
        what = t("widget.hist.sep").join(bits)
    return t("widget.hist.verdict", fmt=fmt, k=k, what=what)


def synthetic_histogram(n: int = 20000, seed: int = 0) -> Any:
    """``synthetic_gradients`` as a ``GradHistogram`` built with numpy (labelled "synthetic")."""
    from ..probe import GradHistogram

    return GradHistogram.from_array(synthetic_gradients(n, seed),
                                    device="synthetic (numpy; no torch)")


def make_histogram_explorer(hist: Any = None, scale: float = 1.0, fmt: str = "fp16"
                            ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Gradient-histogram explorer -> ``(ui, controls, artists)``.

    ``hist``: a ``GradHistogram`` (default: the demo model's, via ``fampnb.probe``, on CUDA when
    available; a synthetic sample when torch is missing).  controls: ``scale`` (power-of-two log
    slider) and ``format`` (which format the verdict speaks about); artists: ``curve``, ``bands``,
    ``title``, ``zero_text`` (from ``draw_grad_histogram``), ``table_text`` (per-format losses),
    ``verdict_text``, ``status``, ``figure`` (the ``LiveFigure``), ``hist``.
    """
    import ipywidgets as w

    from ..plots.histogram import draw_grad_histogram, update_grad_histogram
    from .base import LiveFigure, guard, show_ok, status_line, tag

    if hist is None:
        hist = _default_histogram()
    scale, _ = snap_scale(scale)
    names = [f.name for f in hist.formats]
    if fmt not in names:
        raise ValueError(f"fmt must be one of {names}, got {fmt!r}")
    style = {"description_width": "60px"}
    controls: dict[str, Any] = {
        "scale": w.FloatLogSlider(value=scale, base=2, min=SLIDER_MIN, max=SLIDER_MAX, step=1,
                                  description=t("widget.hist.scale"), readout_format=".4g", style=style,
                                  continuous_update=False, layout=w.Layout(width="520px")),
        "format": w.Dropdown(options=names, value=fmt, description=t("widget.hist.format"), style=style,
                             layout=w.Layout(width="200px")),
    }
    for key, c in controls.items():
        tag(c, f"{NAME}-{key}")
    table = tag(w.HTML(), f"{NAME}-table-text")
    verdict_w = tag(w.HTML(), f"{NAME}-verdict-text")
    status = status_line(NAME)

    live = LiveFigure(figsize=(9.5, 5.0), nrows=2, sharex=True,
                      gridspec_kw={"height_ratios": [3.0, 1.3]})
    drawn = draw_grad_histogram(live.axes[0, 0], hist, scale, band_ax=live.axes[1, 0])
    artists: dict[str, Any] = {**{k: v for k, v in drawn.items() if k not in ("ax", "band_ax")},
                               "table_text": table, "verdict_text": verdict_w, "status": status,
                               "figure": live, "hist": hist}
    busy = [False]
    last = [scale]

    def recompute(_change: Any = None) -> None:
        if busy[0]:
            return
        raw = controls["scale"].value
        try:
            s, note = snap_scale(raw)
        except ValueError:
            busy[0] = True
            try:
                controls["scale"].value = last[0]  # keep the widget usable
            finally:
                busy[0] = False
            raise
        if s != raw:
            busy[0] = True
            try:
                controls["scale"].value = s
            finally:
                busy[0] = False
        last[0] = s
        update_grad_histogram(artists, hist, s)
        table.value = loss_table_html(hist, s)
        verdict_w.value = f"<b>{html.escape(verdict(hist, s, controls['format'].value))}</b>"
        live.refresh()
        show_ok(status, note)

    cb = guard(status, recompute)
    for c in controls.values():
        c.observe(cb, names="value")
    cb()
    ui = tag(w.VBox([w.HBox([controls["scale"], controls["format"]]), verdict_w, table, status,
                     live.view]), NAME)
    return ui, controls, artists


def _default_histogram() -> Any:
    from .. import probe

    try:
        import torch  # noqa: F401
    except ImportError:
        return synthetic_histogram()
    model, loss_fn, batch = probe.demo_problem()
    return probe.grad_histogram(model, loss_fn, batch)
