"""Every widget notebook once more under ipympl (``%matplotlib widget``, what ``make lab`` installs).

The notebook's kernel is switched to ipympl before Run All, so every ``LiveFigure`` is an ipympl
canvas that each change draws (``LiveFigure.refresh``).  For each widget the test moves one control
in the browser (the same step as the inline tests: the kernel's texts must equal the package
twin's), and checks that the widget's figure is an ipympl canvas (no inline PNG) whose pixels
changed after the move.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from . import (
    test_nb01_number_formats,
    test_nb02_overflow_underflow_thresholds,
    test_nb03_loss_scale_decay,
    test_nb04_nan_decision_walkthrough,
    test_nb05_reading_real_logs,
    test_nb07_gradient_histograms,
)
from .twin import Twin, selector_of

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class Case:
    module: ModuleType  # the notebook's inline test module (NOTEBOOK, ARGS)
    factory: str
    key: str  # the control moved
    move: str  # "ArrowLeft"/"ArrowRight" on a slider, or "choose" another dropdown option


CASES = [
    Case(test_nb01_number_formats, "make_bit_explorer", "magnitude", "ArrowLeft"),
    Case(test_nb02_overflow_underflow_thresholds, "make_threshold_explorer", "scale", "ArrowLeft"),
    Case(test_nb03_loss_scale_decay, "make_scale_decay", "init_scale", "ArrowLeft"),
    Case(test_nb04_nan_decision_walkthrough, "make_walkthrough", "scale", "ArrowLeft"),
    Case(test_nb05_reading_real_logs, "make_log_reader", "sample", "choose"),
    Case(test_nb07_gradient_histograms, "make_histogram_explorer", "scale", "ArrowRight"),
]


def action(twin: Twin, case: Case) -> Any:
    if case.move != "choose":
        return twin.press(case.key, case.move)
    ctl = twin.controls[case.key]
    other = next(label for label, value in ctl.options if value and value != ctl.value)
    return twin.choose(case.key, other)


#: what the page has of the canvases inside an element (said when one stays empty)
_CANVASES_JS = """(el) => [...el.querySelectorAll('canvas')].map(c => ({
    w: c.width, h: c.height, shown: c.offsetParent !== null,
    css: getComputedStyle(c).display, rect: c.getBoundingClientRect().toJSON()}))"""


def wait_canvas_painted(nb: Any, area: Any, timeout_s: float = 30.0) -> str:
    """The canvas's first picture: the page lays the ipympl canvas out and paints the kernel's
    first frame a moment after the widget's controls show, so this waits (bounded) for it, with
    the figure scrolled into view (where a reader sees it)."""
    area.scroll_into_view_if_needed()
    deadline = time.monotonic() + timeout_s
    while not (now := nb.canvas_data_url(area)):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{nb.name}: the ipympl canvas stayed empty for {timeout_s:.0f} s; canvases: "
                f"{area.evaluate(_CANVASES_JS)}; frames drawn: {len(nb.picture_times())}; kernel: "
                f"{nb.kernel_eval(_KERNEL_CANVAS)}\n{nb.problems_text()}")
        nb.page.wait_for_timeout(100)
    return now


#: the kernel's side of the last figure: ipympl's handshake state and the frame state
_KERNEL_CANVAS = ("(lambda c: (c.syncing_data_url, c._png_is_old, c._force_full, c._image_mode, "
                  "c._size))(__import__('matplotlib.pyplot').pyplot.gcf().canvas)")


def wait_canvas_changed(nb: Any, area: Any, before: str, timeout_s: float = 30.0) -> str:
    deadline = time.monotonic() + timeout_s
    while True:
        now = nb.canvas_data_url(area)
        if now and now != before:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"{nb.name}: the ipympl canvas did not change within "
                                 f"{timeout_s:.0f} s\n{nb.problems_text()}")
        nb.page.wait_for_timeout(100)


@pytest.mark.parametrize("case", CASES, ids=[c.factory for c in CASES])
def test_widget_redraws_under_ipympl(open_notebook, case):
    import fampnb.widgets

    nb = open_notebook(case.module.NOTEBOOK, ipympl=True)
    try:
        in_kernel = "__import__('fampnb.widgets.base').widgets.base.is_ipympl()"
        assert nb.kernel_eval(in_kernel) == "True", f"{nb.name}: the kernel is not on ipympl"
        kwargs = dict(case.module.ARGS)
        if case.module is test_nb07_gradient_histograms:
            kwargs["hist"] = test_nb07_gradient_histograms.kernel_hist(nb)
        twin = Twin(nb, getattr(fampnb.widgets, case.factory), **kwargs)
        twin.sync_from_kernel()
        twin.wait_matches()
        area = nb.root.locator(selector_of(twin.ui)).first
        assert area.locator(".jupyter-matplotlib-figure").count() == 1, \
            f"{nb.name}: the widget shows no ipympl figure"
        assert area.locator(".widget-output img").count() == 0, \
            f"{nb.name}: the widget still shows an inline PNG under ipympl"
        nb.watch_pictures(area)
        before = wait_canvas_painted(nb, area)
        twin.step(case.key, action(twin, case))
        wait_canvas_changed(nb, area, before)
        assert nb.picture_times(), f"{nb.name}: no frame was drawn onto the canvas"
        nb.assert_clean()
    finally:
        nb.close()
