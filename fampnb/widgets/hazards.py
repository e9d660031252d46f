"""The hazard explorer (notebook 08): an activation-scale slider over an attention + LayerNorm
block computed op by op in fp16, showing live which op first leaves the format.

``make_hazards(scale, fix, fmt)`` returns ``(ui, controls, artists)``.  Controls (CSS class
``fampnb-hazards-<key>``): ``scale`` (a log2 slider: the activations' scale), ``fix`` (a checkbox:
softmax with the row max subtracted and in fp32, LayerNorm statistics in fp32), ``format``
(fp16 / bf16).  Texts: ``verdict_text`` (the first op out, or that all stay inside),
``table_text`` (every op's abs max) and ``status_text``.  Numbers come from
``fampnb.hazards.op_chain``.
"""

from __future__ import annotations

import html
from typing import Any

from .. import hazards as H
from ..formats import get
from ..i18n import t

__all__ = ["make_hazards", "verdict", "table_html", "NAME"]

NAME = "hazards"
SLIDER_MIN, SLIDER_MAX = -2.0, 10.0  # log2 of the activation scale


def verdict(scale: float, fix: bool, fmt: str) -> str:
    """One line: the first op of ``op_chain(scale, fix, fmt)`` that leaves the format."""
    f = get(fmt)
    chain = H.op_chain(scale, fix=fix, fmt=f)
    bad = H.first_out(chain)
    how = t("widget.hazards.how.fixed" if fix else "widget.hazards.how.plain")
    if bad is None:
        top = max(chain, key=lambda s: s.abs_max)
        return t("widget.hazards.inside", scale=f"{scale:g}", how=how, fmt=f.name, op=top.name,
                 abs_max=f"{top.abs_max:.4g}", max=f"{f.max:.6g}")
    what = f"{bad.n_nan} NaN" if bad.n_nan else f"{bad.n_inf} inf"
    return t("widget.hazards.out", scale=f"{scale:g}", how=how, fmt=f.name, op=bad.name, what=what)


def table_html(chain: list[Any]) -> str:
    """Every op's abs max, inf and NaN counts; rows out of range in red."""
    head = (f"<tr><th style='text-align:left'>{t('widget.hazards.col.op')}</th>"
            f"<th>{t('widget.hazards.col.abs_max')}</th><th>inf</th><th>NaN</th></tr>")
    rows = []
    for s in chain:
        style = "" if s.finite else " style='color:#b00020'"
        rows.append(f"<tr{style}><td>{html.escape(s.name)}</td><td>{s.abs_max:.4g}</td>"
                    f"<td>{s.n_inf}</td><td>{s.n_nan}</td></tr>")
    return f"<table style='font-size:90%'>{head}{''.join(rows)}</table>"


def make_hazards(scale: float = 1.0, fix: bool = False, fmt: str = "fp16"
                 ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Build the hazard explorer; returns ``(ui, controls, artists)`` (see the module)."""
    import ipywidgets as w

    from ..plots.hazards import draw_op_chain, update_op_chain
    from .base import LiveFigure, guard, status_line, tag

    f = get(fmt)
    H.op_chain(scale, fix=fix, fmt=f)  # validates scale with a one-line error
    style = {"description_width": "110px"}
    controls: dict[str, Any] = {
        "scale": w.FloatLogSlider(value=scale, base=2, min=SLIDER_MIN, max=SLIDER_MAX, step=0.25,
                                  description=t("widget.hazards.scale"), readout_format=".4g",
                                  style=style, continuous_update=False,
                                  layout=w.Layout(width="520px")),
        "fix": w.Checkbox(value=bool(fix), description=t("widget.hazards.fix"), indent=False,
                          layout=w.Layout(width="560px")),
        "format": w.Dropdown(options=["fp16", "bf16"], value=f.name, description=t("widget.hazards.format"),
                             style={"description_width": "60px"},
                             layout=w.Layout(width="160px")),
    }
    for key, c in controls.items():
        tag(c, f"{NAME}-{key}")
    verdict_w = tag(w.HTML(), f"{NAME}-verdict-text")
    table = tag(w.HTML(), f"{NAME}-table-text")
    status = status_line(NAME)
    tag(status, f"{NAME}-status-text")

    live = LiveFigure(figsize=(8.0, 3.6))
    plot = draw_op_chain(live.ax, H.op_chain(scale, fix=fix, fmt=f), f)
    artists: dict[str, Any] = {"plot": plot, "verdict_text": verdict_w, "table_text": table,
                               "status_text": status, "figure": live}

    def recompute(_change: Any = None) -> None:
        s, fx, name = float(controls["scale"].value), bool(controls["fix"].value), \
            controls["format"].value
        fm = get(name)
        chain = H.op_chain(s, fix=fx, fmt=fm)
        update_op_chain(plot, chain, fm)
        verdict_w.value = f"<b>{html.escape(verdict(s, fx, name))}</b>"
        table.value = table_html(chain)
        live.refresh()

    cb = guard(status, recompute)
    for c in controls.values():
        c.observe(cb, names="value")
    cb()
    ui = tag(w.VBox([w.HBox([controls["scale"], controls["format"]]), controls["fix"],
                     verdict_w, live.view, table, status]), NAME)
    return ui, controls, artists
