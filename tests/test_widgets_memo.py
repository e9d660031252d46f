"""MemoFigure: what matplotlib works out many times per draw, worked out once per draw.

Every widget's figure, drawn with the memo, is pixel for pixel the figure drawn without it, after
every control change (the two copies of a widget take the same changes and make the same layout
decisions); and the memo does save the work it is there to save."""

from __future__ import annotations

import contextlib
import io
import types

import pytest

pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")

from fampnb import widgets  # noqa: E402


def _synthetic_histogram():
    from fampnb import probe
    from fampnb.scenarios import synthetic_gradients

    return {"hist": probe.GradHistogram.from_array(synthetic_gradients(), device="synthetic")}


#: every widget with a figure, with the arguments its notebook passes (notebook 07's histogram
#: without torch: the synthetic sample it falls back to)
WIDGETS = [
    ("make_bit_explorer", lambda: {"value": 65510.0, "fmt": "fp16"}),
    ("make_threshold_explorer", dict),
    ("make_scale_decay", dict),
    ("make_walkthrough", dict),
    ("make_log_reader", lambda: {"sample": "deepspeed_Chinese-LLaMA-Alpaca_534.log"}),
    ("make_histogram_explorer", _synthetic_histogram),
    ("make_hazards", lambda: {"scale": 4.0}),
    ("make_fp8_scaling", lambda: {"scheme": "delayed", "history": 16}),
]


def _values(control):
    """The ends and the middle of a slider, every option of a choice, both states of a box."""
    import ipywidgets as w

    if isinstance(control, w.FloatLogSlider):
        lo, hi = control.min, control.max
        return [control.base ** k for k in (lo, round((lo + hi) / 2), hi)]
    if isinstance(control, (w.FloatSlider, w.IntSlider)):
        lo, hi = control.min, control.max
        mid = (lo + hi) / 2
        return [lo, round(mid) if isinstance(control.value, int) else mid, hi]
    if isinstance(control, w.SelectionSlider):
        options = control._options_values
        return [options[0], options[len(options) // 2], options[-1]]
    if isinstance(control, (w.Dropdown, w.ToggleButtons, w.RadioButtons)):
        return [v for v in control._options_values if v != ""]
    if isinstance(control, (w.Checkbox, w.ToggleButton)):
        return [not control.value, control.value]
    return []


def _build(name, kwargs):
    from fampnb.widgets.base import LiveFigure

    with contextlib.redirect_stdout(io.StringIO()):
        ui, controls, artists = getattr(widgets, name)(**kwargs)
    live = next(a for a in artists.values() if isinstance(a, LiveFigure)) \
        if any(isinstance(a, LiveFigure) for a in artists.values()) else None
    if live is None:  # a widget that lists its Figure rather than its LiveFigure
        import gc

        fig = artists["figure"]
        live = next(o for o in gc.get_referrers(fig) if isinstance(o, LiveFigure))
    return controls, live


def _forget_nothing(live):
    """Make ``live`` draw as a plain Figure does: every part of a draw works out what it needs."""
    from matplotlib.figure import Figure

    live.fig.draw = types.MethodType(Figure.draw, live.fig)
    live.fig.remembering = contextlib.nullcontext


@pytest.mark.parametrize(("name", "arguments"), WIDGETS, ids=[w[0] for w in WIDGETS])
def test_memo_draws_the_picture_a_full_draw_draws(monkeypatch, name, arguments):

    from fampnb.widgets._memo import MemoFigure

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    kwargs = arguments()
    controls, live = _build(name, kwargs)
    plain_controls, plain = _build(name, kwargs)
    assert isinstance(live.fig, MemoFigure)
    _forget_nothing(plain)
    changes = 0
    for key, control in controls.items():
        for value in _values(control):
            if control.value == value:
                continue
            with contextlib.redirect_stdout(io.StringIO()):
                control.value = value
                plain_controls[key].value = value
            changes += 1
            assert live.view.value == plain.view.value, f"{name}: {key} = {value!r}"
    assert changes >= 3


def _counting(monkeypatch, cls, name):
    calls = []
    original = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


def test_memo_works_out_ticks_and_legend_sizes_once_per_draw(monkeypatch):
    """A kept-layout draw of two axes with a legend: each axis's ticks once (a draw without the
    memo works them out again for each spine, label and title), each legend text measured once,
    no text laid out twice; the next draw, after new limits, shows the new ticks; and a refresh
    measures the layout key with the ticks and legend sizes its draw then uses."""
    from matplotlib.axis import Axis
    from matplotlib.offsetbox import TextArea
    from matplotlib.text import Text

    from fampnb.widgets.base import LiveFigure

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    ticks = _counting(monkeypatch, Axis, "_update_ticks")
    texts = _counting(monkeypatch, TextArea, "get_bbox")
    layouts = _counting(monkeypatch, Text, "_get_layout")
    live = LiveFigure(figsize=(5, 4), nrows=2, sharex=True)
    for ax in live.axes[:, 0]:
        ax.plot([0, 1, 2], [3, 1, 2], label="one")
        ax.plot([0, 1, 2], [1, 2, 3], label="two")
        ax.legend()
        ax.set_title("a title")
    live.fig.canvas.draw()  # lays the figure out
    live.fig.set_layout_engine("none")
    ticks.clear()
    texts.clear()
    layouts.clear()
    live.fig.canvas.draw()
    assert len(ticks) == len(set(ticks)) == 4   # two axes, x and y
    assert len(texts) == len(set(texts)) == 4   # two legends of two texts
    assert len(layouts) == len(set(layouts)) > 10
    live.axes[1, 0].set_ylim(0, 1000)
    live.fig.canvas.draw()
    shown = [t.get_text() for t in live.axes[1, 0].get_yticklabels()]
    assert "1000" in shown

    for _ in range(3):  # until the layout is kept
        live.refresh()
    ticks.clear()
    texts.clear()
    live.refresh()  # the layout key and the draw: the ticks and legend sizes the key measured
    assert len(ticks) == len(set(ticks)) == 4
    assert len(texts) == len(set(texts)) == 4

    ticks.clear()
    texts.clear()
    layouts.clear()
    _forget_nothing(live)
    live.fig.canvas.draw()
    assert len(ticks) > 2 * 4 and len(texts) > 2 * 4  # what the memo saves
    assert len(layouts) > 2 * len(set(layouts))


def test_memo_keeps_a_legend_that_sets_its_width_while_it_draws(monkeypatch):
    """A legend in mode "expand" gives its rows the anchor's width during its draw: a size
    measured before that is not the size it draws at (the memo keys a box by its set size)."""

    from fampnb.widgets.base import LiveFigure

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")

    def make():
        live = LiveFigure(figsize=(5, 3))
        live.ax.plot([0, 1], [0, 1], label="one")
        live.ax.plot([0, 1], [1, 0], label="two and more")
        live.ax.legend(mode="expand", ncols=2, bbox_to_anchor=(0, 1.02, 1, 0.1), loc="lower left")
        return live

    live, plain = make(), make()
    _forget_nothing(plain)
    for each in (live, plain):
        each.refresh()
        each.ax.set_ylim(0, 5)
        each.refresh()
    assert live.view.value == plain.view.value


def test_memo_keeps_ticks_where_a_move_leaves_the_tick_space(monkeypatch):
    """Within one span, an axes moved with the same limits keeps its ticks while as many labels fit
    along each axis (``Axis.get_tick_space``: what the locators read of its position), and works
    them out again when fewer fit; its label boxes always follow the move."""
    from matplotlib.axis import Axis

    from fampnb.widgets.base import LiveFigure

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    ticks = _counting(monkeypatch, Axis, "_update_ticks")
    live = LiveFigure(figsize=(5, 4))
    live.ax.plot([0, 1, 2], [3, 1, 2])
    live.fig.canvas.draw()
    renderer = live.fig.canvas.get_renderer()
    ax, axis = live.ax, live.ax.xaxis
    with live.fig.remembering():
        ticks.clear()
        first = axis._update_ticks()
        boxes = axis._get_ticklabel_bboxes(first, renderer)
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position([x0 + 1e-13, y0, w, h])        # float noise, as the layout's passes move it
        assert axis._update_ticks() is first
        ax.set_position([x0 + 0.05, y0, w, h])          # moved right, as wide: same ticks
        assert axis._update_ticks() is first and ticks == [axis]
        moved = axis._get_ticklabel_bboxes(first, renderer)
        assert moved[0][0].x0 > boxes[0][0].x0          # the label boxes moved with it
        ax.set_position([x0, y0, w / 4, h])             # fewer labels fit: worked out again
        axis._update_ticks()
        assert ticks == [axis, axis]
