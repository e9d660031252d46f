"""The article's three-step NaN decision chain, as a walkthrough widget (notebook 04).

The chain itself is pure and lives in ``fampnb.chain`` (``walk_chain``, ``ChainResult``,
``CHECKLIST``): import it from there.  ``make_walkthrough()`` puts the chain behind controls, and
adds a generator of synthetic training logs (``fampnb.scenarios.synthetic_log``) whose lines are
shown, diagnosed with ``fampnb.diagnose`` and used to fill in the chain's answers.
"""

from __future__ import annotations

import html
from typing import Any

from ..chain import (
    LINES,
    LOG_KINDS,
    LOG_STYLES,
    NAN_WHEN,
    ChainResult,
    answers_from_diagnosis,
    checklist,
    generate_log,
    walk_chain,
)
from ..i18n import t

__all__ = ["make_walkthrough"]

# --- the widget -----------------------------------------------------------------------------

NAME = "walk"


def _window(n: int, focus: int | None, head: int = 4, before: int = 3, after: int = 14,
            tail: int = 3) -> list[int | None]:
    """0-based line indices to show (None: an elision): the head, a window around ``focus``
    (1-based line number), the tail."""
    if focus is None or n <= head + before + after + tail + 2:
        keep = set(range(min(n, head + before + after + tail)))
    else:
        f = focus - 1
        keep = set(range(min(head, n))) | set(range(max(0, f - before), min(n, f + after)))
    keep |= set(range(max(0, n - tail), n))
    out: list[int | None] = []
    for i in range(n):
        if i in keep:
            out.append(i)
        elif out and out[-1] is not None:
            out.append(None)
    return out


def _pre(lines: list[str], focus: int | None = None) -> str:
    rows = ["     ..." if i is None else f"{i + 1:>4}  {lines[i]}"
            for i in _window(len(lines), focus)]
    body = html.escape("\n".join(rows) + f"\n({len(lines)} lines)")
    return (f'<pre style="font-size:11px;line-height:1.3;max-height:300px;overflow:auto;'
            f'white-space:pre;background:#f7f7f7;padding:6px">{body}</pre>')


def _diag_html(d: Any) -> str:
    from ..localize import localize

    d = localize(d)
    adv = getattr(d, "advice", None) or []
    adv = [adv] if isinstance(adv, str) else list(adv)
    ev = getattr(d, "evidence", None) or []
    ev_lines = []
    for e in list(ev)[:6]:
        ln = getattr(e, "line_no", None)
        text = str(getattr(e, "text", e))
        text = text if len(text) <= 150 else "..." + text[-140:]
        ev_lines.append(t("widget.walk.line", n=ln, text=text) if ln is not None else text)
    parts = [f"<b>fampnb.diagnose: {html.escape(str(d.verdict))}</b> - "
             f"{html.escape(str(getattr(d, 'reason', '')))}"]
    if adv:
        parts.append(t("widget.walk.first_switch") + html.escape(str(adv[0])))
    if ev_lines:
        parts.append(t("widget.walk.evidence") + "<br>" + "<br>".join(
            "&nbsp;&nbsp;" + html.escape(line) for line in ev_lines))
    return "<br>".join(parts)


def _chain_html(r: ChainResult) -> str:
    colour = {"healthy": "#2e7d32", "overflow": "#c62828", "data": "#6a1b9a",
              "no-scaler": "#ef6c00", "underflow": "#1565c0",
              "forward-overflow": "#ad1457"}.get(r.verdict, "#333")
    steps = "".join(f"<li><b>{html.escape(q)}</b><br>{html.escape(a)}</li>" for q, a in r.steps)
    return (f"<ol style='margin:0 0 4px 0'>{steps}</ol>"
            f"<div style='font-size:15px'>{t('widget.walk.verdict')}<b style='color:{colour}'>"
            f"{r.verdict}</b></div>"
            f"<div>{t('widget.walk.first_switch')}<b>{html.escape(r.first_switch)}</b></div>")


def make_walkthrough(kind: str = "overflow", style: str = "deepspeed", seed: int = 0,
                     steps: int = 100) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The decision walkthrough -> ``(ui, controls, artists)``.

    controls: ``lines, g, scale, nan, precision, bf16_pretrained`` (the chain's answers) and
    ``kind, style, seed, load`` (the log generator; ``load`` is a Button copying the generated
    log's answers into the chain).  artists: ``chain_text`` (steps, verdict, first switch),
    ``log_text`` (the generated lines), ``diagnosis_text`` (``fampnb.diagnose`` on them),
    ``checklist_text``, ``range`` (``draw_range_check`` artists), ``status``, ``figure``.
    """
    import ipywidgets as w

    from .. import diagnose as doctor
    from .. import logs
    from ..formats import get
    from ..plots.scale import draw_range_check, update_range_check
    from .base import LiveFigure, guard, status_line, tag

    st = {"description_width": "150px"}
    tb = {"description_width": "150px", "button_width": "auto"}
    wide = w.Layout(width="460px")
    c: dict[str, Any] = {
        "lines": w.ToggleButtons(options=[(t(f"chain.lines.{k}"), k) for k in LINES],
                                 value="updating", description=t("widget.walk.q1"), style=tb),
        "g": w.FloatText(value=3.2e4, description=t("widget.walk.q2"), style=st,
                         layout=w.Layout(width="300px")),
        "scale": w.FloatLogSlider(value=65536.0, base=2, min=-48, max=32, step=1,
                                  description=t("widget.walk.scale"), readout_format=".6g", style=st,
                                  continuous_update=False, layout=wide),
        "nan": w.ToggleButtons(options=[(t(f"chain.nan.{k}"), k) for k in NAN_WHEN],
                               value="later", description=t("widget.walk.q3"), style=tb),
        "precision": w.ToggleButtons(options=["fp16", "bf16"], value="fp16",
                                     description=t("widget.walk.precision"), style=st),
        "bf16_pretrained": w.Checkbox(value=False, description=t("widget.walk.bf16_pretrained"),
                                      indent=False),
        "kind": w.Dropdown(options=[(t(f"chain.kind.{k}"), k) for k in LOG_KINDS], value=kind,
                           description=t("widget.walk.kind"), style=st, layout=wide),
        "style": w.Dropdown(options=[(t("chain.style.seed") if k == "seed" else v, k)
                                     for k, v in LOG_STYLES.items()], value=style,
                            description=t("widget.walk.style"), style=st),
        "seed": w.BoundedIntText(value=seed, min=0, max=10**6, description=t("widget.walk.seed"), style=st,
                                 layout=w.Layout(width="260px")),
        "load": w.Button(description=t("widget.walk.load"), icon="arrow-up",
                         layout=w.Layout(width="260px")),
    }
    for key, ctl in c.items():
        tag(ctl, f"{NAME}-{key.replace('_', '-')}")
    chain_text = tag(w.HTML(), f"{NAME}-chain-text")
    log_text = tag(w.HTML(), f"{NAME}-log-text")
    diag_text = tag(w.HTML(), f"{NAME}-diagnosis-text")
    checklist_text = tag(w.HTML(f"<pre style='font-size:11px'>{html.escape(checklist())}</pre>"),
                         f"{NAME}-checklist-text")
    status = status_line(NAME)

    live = LiveFigure(figsize=(8.0, 1.9))
    fmt0 = get(c["precision"].value)
    rng = draw_range_check(live.ax, {"g": c["g"].value, "scale": c["scale"].value, "fmt": fmt0})
    artists: dict[str, Any] = {"chain_text": chain_text, "log_text": log_text,
                               "diagnosis_text": diag_text, "checklist_text": checklist_text,
                               "range": rng, "status": status, "figure": live,
                               "diagnosis": None, "result": None, "log_lines": []}

    def rechain(_: Any = None) -> None:
        g, s = float(c["g"].value), float(c["scale"].value)
        r = walk_chain(c["lines"].value, g, s, c["nan"].value, c["precision"].value,
                       bool(c["bf16_pretrained"].value))
        artists["result"] = r
        chain_text.value = _chain_html(r)
        update_range_check(rng, {"g": g, "scale": s, "fmt": get(c["precision"].value)})
        live.refresh()

    def regenerate(_: Any = None) -> None:
        lines = generate_log(c["kind"].value, c["style"].value, steps, int(c["seed"].value))
        artists["log_lines"] = lines
        d = doctor.diagnose(logs.parse(lines))
        artists["diagnosis"] = d
        ev = [e for e in (d.evidence or []) if getattr(e, "line_no", None)]
        log_text.value = _pre(lines, ev[0].line_no if ev else None)
        diag_text.value = _diag_html(d)

    def load(_: Any = None) -> None:
        d = artists["diagnosis"]
        if d is None:
            return
        ans = answers_from_diagnosis(d)
        for key in ("precision", "lines", "nan", "scale"):
            if key in ans:
                c[key].value = ans[key]
        rechain()

    cb_chain, cb_log, cb_load = guard(status, rechain), guard(status, regenerate), guard(status, load)
    for key in ("lines", "g", "scale", "nan", "precision", "bf16_pretrained"):
        c[key].observe(cb_chain, names="value")
    for key in ("kind", "style", "seed"):
        c[key].observe(cb_log, names="value")
    c["load"].on_click(lambda _b: cb_load())
    cb_log()
    cb_chain()

    chain_box = w.VBox([w.HTML(t("widget.walk.chain_head")), c["lines"],
                        c["g"], c["scale"], c["nan"], w.HBox([c["precision"], c["bf16_pretrained"]]),
                        live.view, chain_text])
    log_box = w.VBox([w.HTML(t("widget.walk.log_head")),
                      w.HBox([c["kind"], c["style"]]), w.HBox([c["seed"], c["load"]]),
                      log_text, diag_text])
    ui = tag(w.VBox([chain_box, status, log_box, w.HTML(t("widget.walk.checklist_head")),
                     checklist_text]), NAME)
    return ui, c, artists
