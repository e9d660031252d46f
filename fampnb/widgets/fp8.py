"""The fp8 scaling explorer (notebook 09): one scale per tensor, per row, per block, delayed.

``make_fp8_scaling()`` wires a scheme dropdown, an element-format dropdown, a tensor-set dropdown
and sliders for margin, amax history length and spike size to ``fampnb.scaling.scheme_view`` and
the draw/update pair of ``fampnb.plots.fp8``; a table gives the exact shares per tensor.  The pure
helper ``shares_table_html`` needs neither ipywidgets nor matplotlib.
"""

from __future__ import annotations

import html
from typing import Any

from ..i18n import t

__all__ = ["NAME", "HISTORY_OPTIONS", "shares_table_html", "make_fp8_scaling"]

NAME = "fp8"
HISTORY_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 1024)
_COLS = ("lost", "subnormal", "normal", "saturated", "nan")


def shares_table_html(view: Any) -> str:
    """An HTML table: per tensor (and all together), the share lost to 0, subnormal, normal,
    saturated and NaN under ``view`` (rows with a loss in red)."""
    from ..plots.fp8 import share_pct
    head = "".join(f"<th>{'NaN' if c == 'nan' else t('widget.fp8.col.' + c)}</th>"
                   for c in _COLS)
    rows = list(view.per_tensor.items())
    if len(rows) > 1:
        rows.append((t("widget.fp8.all"), view.shares))
    body = []
    for name, s in rows:
        bad = s.counts["lost"] or s.counts["saturated"] or s.counts["nan"]
        style = " style='color:#b00020'" if bad else ""
        cells = "".join(f"<td>{share_pct(s.fraction(c))}</td>" for c in _COLS)
        body.append(f"<tr{style}><td>{html.escape(name)}</td>{cells}</tr>")
    first = f"<th style='text-align:left'>{t('widget.fp8.col.tensor')}</th>"
    return f"<table style='font-size:90%'><tr>{first}{head}</tr>{''.join(body)}</table>"


def make_fp8_scaling(scheme: str = "tensorwise", elem: str = "fp8_e4m3",
                     tensors: str = "gradients", margin: int = 0, history: int = 1024,
                     spike: float = 64.0) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """fp8 scaling explorer -> ``(ui, controls, artists)``.

    controls: ``scheme`` (``fampnb.scaling.SCHEMES``), ``elem`` (MX element formats),
    ``tensors`` ("gradients" / "activations" of notebook 07's demo model; delayed scaling always
    runs on the gradients' amax trace, and history and spike act on it only: the status line
    says so), ``margin`` (0..8), ``history`` (amax_history_len),
    ``spike`` (the loss spike's factor, powers of two); artists: those of ``draw_fp8_scaling``
    plus ``table_text``, ``status``, ``figure`` (the ``LiveFigure``) and ``view`` (a one-item
    list holding the current ``SchemeView``).  The arguments are the controls' starting values
    (``margin`` 0..8, ``history`` one of ``HISTORY_OPTIONS``, ``spike`` a power of two from 1 to
    4096); anything else is a ValueError naming it.
    """
    import ipywidgets as w

    from ..plots.fp8 import draw_fp8_scaling, update_fp8_scaling
    from ..scaling import ELEMENTS, SCHEMES, demo_activations, demo_gradients, scheme_view
    from .base import LiveFigure, guard, show_ok, status_line, tag

    sets = {"gradients": demo_gradients(), "activations": demo_activations()}
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if elem not in ELEMENTS:
        raise ValueError(f"elem must be one of {sorted(ELEMENTS)}, got {elem!r}")
    if tensors not in sets:
        raise ValueError(f"tensors must be one of {sorted(sets)}, got {tensors!r}")
    if margin not in range(9):
        raise ValueError(f"margin must be an integer 0..8, got {margin!r}")
    if history not in HISTORY_OPTIONS:
        raise ValueError(f"history must be one of {HISTORY_OPTIONS}, got {history!r}")
    if spike not in [2.0 ** k for k in range(13)]:
        raise ValueError(f"spike must be a power of two from 1 to 4096, got {spike!r}")
    style = {"description_width": "70px"}
    controls: dict[str, Any] = {
        "scheme": w.Dropdown(options=list(SCHEMES), value=scheme, description=t("widget.fp8.scheme"),
                             style=style, layout=w.Layout(width="220px")),
        "elem": w.Dropdown(options=list(ELEMENTS), value=elem, description=t("widget.fp8.elem"),
                           style=style, layout=w.Layout(width="220px")),
        "tensors": w.Dropdown(options=list(sets), value=tensors, description=t("widget.fp8.tensors"),
                              style=style, layout=w.Layout(width="220px")),
        "margin": w.IntSlider(value=int(margin), min=0, max=8,
                              description=t("widget.fp8.margin"), style=style,
                              continuous_update=False, layout=w.Layout(width="330px")),
        "history": w.SelectionSlider(options=list(HISTORY_OPTIONS), value=history,
                                     description=t("widget.fp8.history"), style=style,
                                     continuous_update=False, layout=w.Layout(width="330px")),
        "spike": w.FloatLogSlider(value=float(spike), base=2, min=0, max=12, step=1,
                                  description=t("widget.fp8.spike"), readout_format=".4g", style=style,
                                  continuous_update=False, layout=w.Layout(width="330px")),
    }
    for key, c in controls.items():
        tag(c, f"{NAME}-{key}")
    table = tag(w.HTML(), f"{NAME}-table-text")
    status = status_line(NAME)

    def current() -> Any:
        c = controls
        return scheme_view(c["scheme"].value, c["elem"].value, sets[c["tensors"].value],
                           margin=c["margin"].value, history=int(c["history"].value),
                           spike=float(c["spike"].value))

    view = current()
    live = LiveFigure(figsize=(9.5, 5.4), nrows=2,
                      gridspec_kw={"height_ratios": [3.0, 1.6]})
    drawn = draw_fp8_scaling(live.axes[0, 0], view, trace_ax=live.axes[1, 0])
    artists: dict[str, Any] = {**drawn, "table_text": table, "status": status, "figure": live,
                               "view": [view]}

    def recompute(_change: Any = None) -> None:
        v = current()
        artists["view"][0] = v
        update_fp8_scaling(artists, v)
        notes = list(v.notes)
        if v.scheme != "delayed":
            notes.append(t("widget.fp8.note.delayed_only"))
        elif controls["tensors"].value != "gradients":
            notes.append(t("widget.fp8.note.gradients_trace"))
        live.refresh()
        show_ok(status, "; ".join(notes))
        table.value = shares_table_html(v)  # last: a changed table means the update is done

    cb = guard(status, recompute)
    for c in controls.values():
        c.observe(cb, names="value")
    cb()
    ui = tag(w.VBox([w.HBox([controls["scheme"], controls["elem"], controls["tensors"]]),
                     w.HBox([controls["margin"], controls["history"], controls["spike"]]),
                     table, status, live.view]), NAME)
    return ui, controls, artists
