"""The shared widget wiring: in-place figures, CSS hooks, errors shown instead of lost."""

from __future__ import annotations

import matplotlib

from fampnb.widgets import base


def test_inline_refresh_sends_a_png_even_before_pyplot_exists(monkeypatch):
    """Under the inline backend a refresh must display image data, never the Figure's text repr
    (a kernel that has not imported pyplot has no image formatter for Figures)."""
    import IPython.display as ipd

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(ipd, "clear_output", lambda wait=False: None)
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "module://matplotlib_inline.backend_inline")
    live = base.LiveFigure(figsize=(3, 2))
    assert not live.ipympl
    live.ax.plot([0, 1], [1, 0])
    live.refresh()
    live.refresh()
    assert len(shown) == 2
    for obj in shown:
        assert isinstance(obj, ipd.Image)
        assert obj.data[:8] == b"\x89PNG\r\n\x1a\n"


def test_guard_shows_the_error_and_clears_it_on_success():
    status = base.status_line("demo")
    assert "fampnb-demo-status" in status._dom_classes
    calls = []

    def callback(x):
        if x < 0:
            raise ValueError("x must be >= 0\nsecond line never shown")
        calls.append(x)

    wrapped = base.guard(status, callback)
    wrapped(-1)
    assert "ValueError: x must be &gt;= 0" in status.value and "second line" not in status.value
    wrapped(2)
    assert calls == [2] and status.value == ""


def test_tag_adds_the_css_class():
    import ipywidgets as w

    slider = base.tag(w.FloatSlider(), "bits-value")
    assert "fampnb-bits-value" in slider._dom_classes


def test_inline_refresh_draws_once_and_shows_the_whole_figure(monkeypatch):
    """One refresh is one Agg draw (no tight-box pass), and its PNG has the pixels of the
    figure as ``savefig`` renders it at the figure's size and dpi."""
    import io

    import IPython.display as ipd
    import numpy as np
    from PIL import Image

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(ipd, "clear_output", lambda wait=False: None)
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(3, 2), nrows=2)
    live.ax.plot([0, 1], [1, 0], label="a line")
    live.ax.legend()
    live.ax.set_title("a title")
    draws = []
    live.fig.canvas.mpl_connect("draw_event", draws.append)
    live.refresh()
    assert len(draws) == 1 and len(shown) == 1
    got = np.asarray(Image.open(io.BytesIO(shown[0].data)).convert("RGBA"))
    buf = io.BytesIO()
    live.fig.savefig(buf, format="png")
    want = np.asarray(Image.open(buf).convert("RGBA"))
    dpi = live.fig.dpi
    assert got.shape == want.shape == (round(2 * dpi), round(3 * dpi), 4)
    assert np.array_equal(got, want)
