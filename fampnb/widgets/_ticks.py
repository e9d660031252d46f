"""A figure that works out each axis's ticks once per axes position within a draw (``TickFigure``).

matplotlib 3.10 recomputes an axis's ticks (locator, formatter, label texts) and the boxes of their
labels whenever a part of the draw asks for them: each constrained-layout pass, each spine, the
axis label's position and that of its siblings, the title's position and the axis itself, 10-20
times per axis per draw.  Within one draw nothing they depend on changes but the axes' position
(the layout moves the axes), so a ``TickFigure`` keeps, for the length of one ``draw``, each
axis's ticks and label boxes under the key (view interval, axes box in pixels) and hands them
back while the key is unchanged: the same inputs, the same ticks, the same picture
(``tests/test_widgets_base.py`` compares it pixel for pixel with a draw that recomputes them).

It works by giving each axis of the figure its own ``_update_ticks`` and ``_get_ticklabel_bboxes``
(matplotlib's private names for the two computations).  Outside a draw they call straight
through; should a later matplotlib stop calling them, the memo is simply never consulted.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

__all__ = ["TickFigure"]


class TickFigure(Figure):
    """A ``Figure`` whose ``draw`` computes each axis's ticks once per axes position."""

    #: per axis, during a draw: (key, the ticks to draw, their label boxes or None); else None
    _tick_memo: dict[Any, tuple[tuple[float, ...], list[Any], Any]] | None = None

    def draw(self, renderer: Any) -> None:
        for ax in self.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if "_update_ticks" not in vars(axis):
                    _remember_ticks(self, axis)
        self._tick_memo = {}
        try:
            super().draw(renderer)
        finally:
            self._tick_memo = None


def _key(axis: Any) -> tuple[float, ...]:
    """What an axis's ticks depend on that can change within a draw: its limits and where its
    axes sits (the layout moves it; the locators count ticks by the axis's length)."""
    return (*axis.get_view_interval(), *axis.axes.bbox.bounds)


def _remember_ticks(fig: TickFigure, axis: Any) -> None:
    update, boxes = axis._update_ticks, axis._get_ticklabel_bboxes

    def update_ticks() -> list[Any]:
        memo = fig._tick_memo
        if memo is None:
            return update()  # type: ignore[no-any-return]
        key = _key(axis)
        hit = memo.get(axis)
        if hit is not None and hit[0] == key:
            return hit[1]
        ticks = update()
        memo[axis] = (key, ticks, None)
        return ticks  # type: ignore[no-any-return]

    def ticklabel_bboxes(ticks: list[Any], renderer: Any = None) -> Any:
        memo = fig._tick_memo
        hit = None if memo is None else memo.get(axis)
        if hit is None or hit[1] is not ticks or hit[0] != _key(axis):
            return boxes(ticks, renderer)  # not the ticks remembered for this position
        if hit[2] is None:
            memo[axis] = (hit[0], ticks, boxes(ticks, renderer))  # type: ignore[index]
        return memo[axis][2]  # type: ignore[index]

    axis._update_ticks = update_ticks
    axis._get_ticklabel_bboxes = ticklabel_bboxes
