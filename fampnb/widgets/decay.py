"""The scale-decay explorer (notebook 03) and the article's row question.

``make_scale_decay()`` wires a policy (the article's halving rule, PyTorch, DeepSpeed, Megatron-LM,
fairseq), an initial scale, a backoff factor, a growth interval and a gradient scenario to
the model of ``fampnb.scenarios`` (``run_scale_decay``, ``summarize``) and to the plots of
``fampnb.plots.scale``.  ``make_row_question()`` is the article's closing question ("what is the
value on row 5?") as an answer box checked against the computed experiment-2 table
(``check_row_answer``, which needs neither ipywidgets nor matplotlib).
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

from ..i18n import t
from ..scenarios import (
    POLICY_LABELS,
    SCENARIOS,
    build_policy,
    format_scale,
    has_backoff,
    run_scale_decay,
    suggested,
    summarize,
)

__all__ = ["make_scale_decay", "check_row_answer", "make_row_question"]

# --- the widget -----------------------------------------------------------------------------

NAME = "decay"


def make_scale_decay(policy: str = "torch", init_scale: float | None = None,
                     backoff: float = 0.5, growth_interval: int | None = None,
                     scenario: str = "drift", steps: int | None = None,
                     seed: int = 0) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Scale-decay explorer -> ``(ui, controls, artists)``.

    Choosing a scenario loads the start scale and growth interval it is meant for (``suggested``);
    change them afterwards.  controls: ``policy, scenario, init_scale, backoff, growth_interval``;
    artists: ``scale`` and
    ``window`` (the artist dicts of ``draw_scale_trace`` / ``draw_grad_window``), ``summary_text``,
    ``note_text``, ``status``, ``figure`` (the ``LiveFigure``).
    """
    import ipywidgets as w

    from ..plots.scale import draw_grad_window, draw_scale_trace, update_grad_window, update_scale_trace
    from .base import LiveFigure, guard, show_error, status_line, tag

    s0, gi0 = suggested(scenario)
    init_scale = s0 if init_scale is None else init_scale
    growth_interval = gi0 if growth_interval is None else growth_interval
    style = {"description_width": "110px"}
    controls: dict[str, Any] = {
        "policy": w.Dropdown(options=[(t(f"scenarios.policy.{k}"), k) for k in POLICY_LABELS],
                             value=policy, description=t("widget.decay.policy"), style=style,
                             layout=w.Layout(width="380px")),
        "scenario": w.Dropdown(options=[(t(f"scenarios.story.{k}"), k) for k in SCENARIOS],
                               value=scenario, description=t("widget.decay.scenario"), style=style,
                               layout=w.Layout(width="380px")),
        "init_scale": w.FloatLogSlider(value=init_scale, base=2, min=-24, max=32, step=1,
                                       description=t("widget.decay.init_scale"), readout_format=".6g",
                                       style=style, continuous_update=False,
                                       layout=w.Layout(width="285px")),
        "backoff": w.FloatSlider(value=backoff, min=0.05, max=0.95, step=0.05,
                                 description=t("widget.decay.backoff"), style=style, continuous_update=False,
                                 layout=w.Layout(width="285px")),
        "growth_interval": w.IntSlider(value=growth_interval, min=1, max=2000,
                                       description=t("widget.decay.growth_interval"), style=style,
                                       continuous_update=False, layout=w.Layout(width="285px")),
    }
    for key, c in controls.items():
        tag(c, f"{NAME}-{key.replace('_', '-')}")
    summary = tag(w.HTML(), f"{NAME}-summary-text")
    note = tag(w.HTML(), f"{NAME}-note-text")
    status = status_line(NAME)

    live = LiveFigure(figsize=(9.5, 5.6), nrows=2, sharex=True)
    ax_scale, ax_win = live.axes[0, 0], live.axes[1, 0]
    trace = run_scale_decay(policy, init_scale, backoff, growth_interval, scenario, steps, seed)
    a_scale = draw_scale_trace(ax_scale, trace, title=_title(policy, scenario))
    ax_scale.set_xlabel("")
    a_win = draw_grad_window(ax_win, trace)
    artists: dict[str, Any] = {"scale": a_scale, "window": a_win, "summary_text": summary,
                               "note_text": note, "status": status, "figure": live,
                               "trace": trace}

    def _notes(pol: str, init: float) -> None:
        _, ignored = build_policy(pol, init, controls["backoff"].value, 1)
        controls["growth_interval"].disabled = any(i.startswith("growth") for i in ignored)
        fixed_backoff = not has_backoff(pol)
        controls["backoff"].disabled = fixed_backoff
        bits = []
        if fixed_backoff:
            bits.append(t("widget.decay.fixed_backoff"))
        if controls["growth_interval"].disabled:
            bits.append(t("widget.decay.never_grows"))
        bits += [i for i in ignored if i.startswith("min_scale")]
        note.value = html.escape(t("widget.hist.sep").join(bits))

    busy = [False]

    def recompute(_change: Any = None) -> None:
        if busy[0]:
            return
        pol, scen = controls["policy"].value, controls["scenario"].value
        s = float(controls["init_scale"].value)
        if not (math.isfinite(s) and s > 0):
            show_error(status, f"initial scale must be > 0, got {s}")
            return
        _notes(pol, s)
        tr = run_scale_decay(pol, s, float(controls["backoff"].value),
                             int(controls["growth_interval"].value), scen, steps, seed)
        artists["trace"] = tr
        update_scale_trace(a_scale, tr, title=_title(pol, scen))
        update_grad_window(a_win, tr)
        summary.value = f"<b>{html.escape(summarize(tr))}</b>"
        live.refresh()

    def load_story(_change: Any = None) -> None:
        s_init, s_gi = suggested(controls["scenario"].value)
        busy[0] = True
        try:
            controls["init_scale"].value = s_init
            controls["growth_interval"].value = min(s_gi, controls["growth_interval"].max)
        finally:
            busy[0] = False
        recompute()

    cb = guard(status, recompute)
    for key, c in controls.items():
        if key != "scenario":
            c.observe(cb, names="value")
    controls["scenario"].observe(guard(status, load_story), names="value")
    cb()
    ui = tag(w.VBox([w.HBox([controls["policy"], controls["scenario"]]),
                     w.HBox([controls["init_scale"], controls["backoff"],
                             controls["growth_interval"]], layout=w.Layout(flex_flow="row wrap")),
                     note, summary, status, live.view]), NAME)
    return ui, controls, artists


def _title(policy: str, scenario: str) -> str:
    return f"{POLICY_LABELS[policy]} · {SCENARIOS[scenario]}"


# --- the article's question: "what is the value on row 5?" ---------------------------------

_POW = re.compile(r"^\s*2\s*(?:\*\*|\^)\s*(\d{1,3})\s*$")


def _parse_number(text: str) -> float:
    """A typed number: ``4096``, ``4,096``, ``4096.0``, ``2**12``, ``2^12`` (never evaluated)."""
    t = str(text).strip()
    m = _POW.match(t)
    if m:
        return float(2 ** int(m.group(1)))
    t = t.replace(",", "").replace("_", "").replace(" ", "")
    return float(t)


def check_row_answer(answer: str, row: int = 5) -> tuple[bool | None, str]:
    """Check a typed answer to "what is the scale on row ``row`` of experiment 2?".

    Returns ``(ok, message)``; ``ok`` is None when the input is not a number (empty, text, NaN).
    The table is ``fampnb.seed.experiment_2()`` (the computed one, not a typed-in 4096).
    """
    from ..seed import experiment_2

    rows = experiment_2()
    if not 1 <= row <= len(rows):
        raise ValueError(f"row must be between 1 and {len(rows)}, got {row!r}")
    target = rows[row - 1]
    if not str(answer).strip():
        return None, t("widget.row.type", row=row)
    try:
        x = _parse_number(answer)
    except ValueError:
        return None, t("widget.row.not_number", answer=repr(str(answer).strip()[:40]))
    if not math.isfinite(x):
        return None, t("widget.row.not_finite")
    if x == target.scale:
        return True, t("widget.row.right", row=row, scale=target.scale, g=repr(target.g_abs_max),
                       scaled=repr(target.scaled), verdict=target.verdict, next=target.next_scale)
    other = [r.row for r in rows if r.scale == x]
    prev = rows[row - 2] if row > 1 else None
    hint = t("widget.row.hint", prev=prev.row, scale=prev.scale, verdict=prev.verdict) if prev else ""
    where = t("widget.row.where", x=format_scale(x), row=other[0]) if other else ""
    return False, t("widget.row.wrong") + where + hint


def make_row_question(row: int = 5) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The answer box -> ``(ui, controls, artists)``: controls ``answer`` (Text) and ``check``
    (Button); artists ``verdict_text`` (HTML) and ``status``."""
    import ipywidgets as w

    from .base import guard, status_line, tag

    name = "row-question"
    answer = tag(w.Text(value="", placeholder=t("widget.row.placeholder", row=row),
                        description=t("widget.row.label", row=row), continuous_update=False),
                 f"{name}-answer")
    button = tag(w.Button(description=t("widget.row.check"), button_style="primary"), f"{name}-check")
    verdict = tag(w.HTML(value=""), f"{name}-verdict-text")
    status = status_line(name)

    def check(_: Any = None) -> None:
        ok, msg = check_row_answer(answer.value, row)
        colour = {True: "#2e7d32", False: "#c62828", None: "#555555"}[ok]
        mark = {True: "&#10004; ", False: "&#10008; ", None: ""}[ok]
        verdict.value = f'<span style="color:{colour}">{mark}{html.escape(msg)}</span>'

    cb = guard(status, check)
    answer.observe(cb, names="value")
    button.on_click(lambda _b: cb())
    ui = tag(w.VBox([w.HBox([answer, button]), verdict, status]), name)
    return ui, {"answer": answer, "check": button}, {"verdict_text": verdict, "status": status}
