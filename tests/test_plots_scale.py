"""fampnb.plots.scale: draw/update pairs for the loss-scale trace, the gradient window and the
range check (headless, Agg)."""

from __future__ import annotations

import math

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402

from fampnb.formats import BF16, FP16  # noqa: E402
from fampnb.plots.scale import (  # noqa: E402
    WARN_SCALE,
    draw_grad_window,
    draw_range_check,
    draw_scale_trace,
    scale_series,
    update_grad_window,
    update_range_check,
    update_scale_trace,
)


def _ax():
    return Figure().subplots()


def _series(scales, events=None, skipped=None, grad=None, next_scale=None):
    n = len(scales)
    return {"scales": scales, "events": events or [None] * n,
            "skipped": skipped or [False] * n, "overflow": skipped or [False] * n,
            "grad": grad if grad is not None else [1.0] * n,
            "next_scale": next_scale if next_scale is not None else scales[-1]}


def test_scale_trace_line_markers_and_warning_line():
    ax = _ax()
    data = _series([8.0, 4.0, 4.0, 8.0], events=["backoff", None, "growth", None],
                   skipped=[True, False, False, False], next_scale=8.0)
    a = draw_scale_trace(ax, data)
    assert ax.get_yscale() == "log"
    x, y = a["line"].get_data()
    assert list(x) == [1, 2, 3, 4, 5] and list(y) == [8, 4, 4, 8, 8]
    assert a["backoff"].get_offsets().tolist() == [[1.0, 8.0]]
    assert a["growth"].get_offsets().tolist() == [[3.0, 4.0]]
    assert len(a["skip"].get_offsets()) == 0 and len(a["fatal"].get_offsets()) == 0
    assert list(a["warn"].get_ydata()) == [WARN_SCALE, WARN_SCALE] and WARN_SCALE == 256
    lo, hi = ax.get_ylim()
    assert lo <= 4 and hi >= 256


def test_update_scale_trace_moves_artists_without_adding_any():
    ax = _ax()
    a = draw_scale_trace(ax, _series([65536.0]))
    n_artists = len(ax.get_children())
    data = _series([4.0, 2.0, 1.0], events=["backoff"] * 3, skipped=[True] * 3, next_scale=0.5)
    update_scale_trace(a, data, title="t")
    assert len(ax.get_children()) == n_artists
    assert list(a["line"].get_ydata()) == [4, 2, 1, 0.5]
    assert len(a["backoff"].get_offsets()) == 3
    assert a["title"].get_text() == "t"
    assert ax.get_ylim()[0] <= 0.5


def test_hysteresis_skip_and_fatal_markers():
    ax = _ax()
    data = _series([4.0, 4.0, 2.0, 1.0, 1.0], events=[None, "backoff", None, "min-scale", "min-scale"],
                   skipped=[True] * 5)
    a = draw_scale_trace(ax, data)  # no fatal: the floor is sat on (Megatron)
    assert a["skip"].get_offsets().tolist() == [[1.0, 4.0], [3.0, 2.0], [4.0, 1.0], [5.0, 1.0]]
    assert len(a["fatal"].get_offsets()) == 0
    data["fatal"] = "Current loss scale already at minimum"
    update_scale_trace(a, data)  # DeepSpeed: the last step raised
    assert a["fatal"].get_offsets().tolist() == [[5.0, 1.0]]
    assert a["skip"].get_offsets().tolist()[-1] == [4.0, 1.0]


def test_zero_scale_is_a_gap_not_an_error():
    ax = _ax()
    a = draw_scale_trace(ax, _series([2.0, 0.0], next_scale=0.0))
    y = a["line"].get_ydata()
    assert y[0] == 2 and all(math.isnan(v) for v in y[1:])
    ax.figure.canvas.draw()


def test_grad_window_follows_the_scale():
    ax = _ax()
    data = _series([1024.0, 512.0], grad=[100.0, 50.0])
    a = draw_grad_window(ax, data)
    np.testing.assert_allclose(a["top"].get_ydata(), [FP16.overflow_threshold / 1024,
                                                     FP16.overflow_threshold / 512])
    np.testing.assert_allclose(a["bottom"].get_ydata(), [FP16.min_normal / 1024,
                                                        FP16.min_normal / 512])
    n = len(ax.get_children())
    update_grad_window(a, _series([2.0, 4.0, 8.0], grad=[1.0, np.inf, 3.0]))
    assert len(ax.get_children()) == n
    assert list(a["grad"].get_xdata()) == [1, 2, 3]
    assert math.isnan(a["grad"].get_ydata()[1]) is False  # inf stays inf (off-axis), no crash
    ax.figure.canvas.draw()


def test_series_from_trace_like_rows():
    class R:
        def __init__(self, step, scale, ev):
            self.step, self.scale, self.grad_abs_max = step, scale, 1.0
            self.overflow = self.skipped = ev == "backoff"
            self.next_scale, self.event = scale / 2 if ev else scale, ev

    class T:
        rows = [R(1, 8.0, "backoff"), R(2, 4.0, None)]

    s = scale_series(T())
    assert list(s.scales) == [8, 4] and s.events == ["backoff", None] and s.next_scale == 4


@pytest.mark.parametrize("g, scale, zone", [(3.2e4, 65536.0, "OVERFLOW"), (1.0, 1024.0, "NORMAL"),
                                            (3e3, 2.0**-32, "SUBNORMAL"), (1e-9, 1e-3, "UNDERFLOW")])
def test_range_check_marker_and_zone(g, scale, zone):
    ax = _ax()
    a = draw_range_check(ax, {"g": g, "scale": scale, "fmt": FP16})
    assert zone in a["text"].get_text()
    x = a["marker"].get_xdata()[0]
    if zone != "OVERFLOW" or math.isfinite(g * scale):
        assert x == pytest.approx(g * scale)
    update_range_check(a, {"g": g, "scale": scale, "fmt": BF16})
    assert "bf16" in a["text"].get_text()
    ax.figure.canvas.draw()


def test_range_check_infinite_product_does_not_crash():
    ax = _ax()
    a = draw_range_check(ax, {"g": 1e300, "scale": 1e300, "fmt": FP16})
    assert "OVERFLOW" in a["text"].get_text()
    ax.figure.canvas.draw()


def test_grad_window_marks_non_finite_gradients_at_the_top():
    ax = _ax()
    data = _series([4.0, 2.0, 1.0], grad=[1.0, np.inf, np.nan], skipped=[False, True, True])
    a = draw_grad_window(ax, data)
    assert list(a["nonfinite"].get_xdata()) == [2, 3]


def test_fast_log_ticks_use_unicode_superscripts():
    from fampnb.plots.common import fast_log_ticks

    ax = _ax()
    ax.set_yscale("log", base=2)
    ax.set_ylim(2.0 ** -10, 2.0 ** 20)
    fast_log_ticks(ax.yaxis, 2)
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(t.startswith("2") and "$" not in t for t in labels)
    assert len(labels) <= 10
