"""A figure that works out, once per draw, what matplotlib works out many times per draw (``MemoFigure``).

matplotlib 3.10 recomputes, whenever a part of a draw asks:

- an axis's ticks (locator, formatter, label texts) and the boxes of their labels: each
  constrained-layout pass, each spine, the axis label's position and that of its siblings, the
  title's position and the axis itself ask, 10-20 times per axis per draw;
- the size of each box of a legend (``OffsetBox.get_bbox``): every enclosing box asks again for
  each of its own measurements, so a legend's texts are measured several times per draw;
- the layout of each text (``Text._get_layout``: its size and line offsets), whenever its box is
  asked for: a tick label's, at every position the layout tries.

Within one draw nothing these depend on changes but where the axes sit (the layout moves them;
locators count ticks by the axis's length) and which string a tick label shows, so a
``MemoFigure`` keeps, for the length of one ``draw`` (or of ``remembering()``: a refresh
measures its layout key and draws in one such span), each axis's ticks and label boxes under
the key (view interval, axes box in pixels), each legend box's size (under its set size) and
each text's layout (under its string and the dpi; not for a wrapped text, whose lines depend
on where it stands), and hands them back while the key is unchanged: the same inputs, the same
values, the same picture (``tests/test_widgets_memo.py`` compares it pixel for pixel with a
draw that recomputes everything, after every control change of every widget).

It works by giving each axis of the figure its own ``_update_ticks`` and
``_get_ticklabel_bboxes``, each legend box its own ``get_bbox`` and each text its own
``_get_layout`` (matplotlib's names for these computations, two of them private).  Outside a
draw they call straight through; should a later matplotlib stop calling them, the memo is
simply never consulted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.offsetbox import OffsetBox
from matplotlib.text import Text

__all__ = ["MemoFigure"]


class MemoFigure(Figure):
    """A ``Figure`` whose ``draw`` works out each axis's ticks once per axes position, each
    legend box's size once and each text's layout once per string."""

    #: during a draw: what was worked out, by (artist, what); None outside a draw
    _memo: dict[tuple[int, str], Any] | None = None

    def draw(self, renderer: Any) -> None:
        with self.remembering():
            super().draw(renderer)

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Within: what is worked out is kept (a draw; or measuring the layout key and then
        drawing, ``LiveFigure.refresh``: nothing changes in between).  Nested: the outer span."""
        if self._memo is not None:
            yield
            return
        for ax in self.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if "_update_ticks" not in vars(axis):
                    _remember_ticks(self, axis)
        for box in _boxes(self):
            if "get_bbox" not in vars(box):
                box.get_bbox = _remembered(self, box, "bbox", box.get_bbox, _set_size(box))
        for text in _texts(self):
            if "_get_layout" not in vars(text):
                text._get_layout = _remembered(self, text, "layout", text._get_layout,
                                               _string(self, text))
        self._memo = {}
        try:
            yield
        finally:
            self._memo = None


def _boxes(fig: Figure) -> Iterator[OffsetBox]:
    """The offset boxes of the figure's legends (and of any other box placed in it)."""
    todo = [a for ax in fig.axes for a in ax.get_children() if isinstance(a, (Legend, OffsetBox))]
    todo += [a for a in fig.get_children() if isinstance(a, (Legend, OffsetBox))]
    while todo:
        a = todo.pop()
        if isinstance(a, OffsetBox):
            yield a
        todo += [c for c in a.get_children() if isinstance(c, OffsetBox)]


def _texts(fig: Figure) -> Iterator[Text]:
    """The texts of the figure's axes: tick labels, axis labels, titles, texts, legend texts."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in (*axis.majorTicks, *axis.minorTicks):
                yield from (tick.label1, tick.label2)
            yield from (axis.label, axis.offsetText)
        yield from (ax.title, ax._left_title, ax._right_title, *ax.texts)
        legend = ax.get_legend()
        if legend is not None:
            yield from legend.get_texts()


def _set_size(box: OffsetBox) -> Callable[[], Any]:
    """A box's size depends within a draw on its set width and height only (a legend in mode
    "expand" sets its rows' width while it draws)."""
    return lambda: (getattr(box, "width", None), getattr(box, "height", None))


def _string(fig: Figure, text: Text) -> Callable[[], Any]:
    """A text's layout depends within a draw on its string and the dpi (``get_window_extent``
    may ask at another); a wrapped text's also on where it stands: not kept (None)."""
    return lambda: None if text.get_wrap() else (text.get_text(), fig.dpi)


def _remembered(fig: MemoFigure, obj: Any, what: str, compute: Callable[..., Any],
                state: Callable[[], Any]) -> Callable[..., Any]:
    """``compute(renderer)``, once per span while ``state()`` is unchanged (None: not kept)."""

    def remembered(renderer: Any) -> Any:
        memo = fig._memo
        now = None if memo is None else state()
        if memo is None or now is None:
            return compute(renderer)
        hit = memo.get((id(obj), what))
        if hit is None or hit[0] != now:
            hit = memo[id(obj), what] = (now, compute(renderer))
        return hit[1]

    return remembered


def _key(axis: Any) -> tuple[float, ...]:
    """What an axis's ticks depend on that can change within a draw: its limits and where its
    axes sits (the layout moves it; the locators count ticks by the axis's length)."""
    return (*axis.get_view_interval(), *axis.axes.bbox.bounds)


def _remember_ticks(fig: MemoFigure, axis: Any) -> None:
    """Ticks are kept under ``_key``; an axes moved with the same limits keeps its ticks when
    ``Axis.get_tick_space`` (what the locators read of its position: how many labels fit along
    it) is unchanged.  The layout's passes move an axes by float noise (a height of
    229.05488888888883, then ...888), and a new log's layout first measures the axes where the
    last log's left them: without this, each such move worked the ticks out once more.  Label
    boxes are window extents: kept under the full key."""
    update, boxes = axis._update_ticks, axis._get_ticklabel_bboxes

    def update_ticks() -> list[Any]:
        memo = fig._memo
        if memo is None:
            return update()  # type: ignore[no-any-return]
        key, hit = _key(axis), memo.get((id(axis), "ticks"))
        if hit is not None:
            if hit[0] == key:
                return hit[2]  # type: ignore[no-any-return]
            if hit[0][:2] == key[:2] and hit[1] == axis.get_tick_space():
                memo[id(axis), "ticks"] = (key, hit[1], hit[2])
                return hit[2]  # type: ignore[no-any-return]
        ticks = update()
        memo[id(axis), "ticks"] = (key, axis.get_tick_space(), ticks)
        return ticks  # type: ignore[no-any-return]

    def ticklabel_bboxes(ticks: list[Any], renderer: Any = None) -> Any:
        memo = fig._memo
        hit = None if memo is None else memo.get((id(axis), "ticks"))
        if memo is None or hit is None or hit[2] is not ticks or hit[0] != _key(axis):
            return boxes(ticks, renderer)  # not the ticks remembered for this position
        got = memo.get((id(axis), "boxes"))
        if got is None or got[0] != hit[0] or got[1] is not ticks:
            got = memo[id(axis), "boxes"] = (hit[0], ticks, boxes(ticks, renderer))
        return got[2]

    axis._update_ticks = update_ticks
    axis._get_ticklabel_bboxes = ticklabel_bboxes
