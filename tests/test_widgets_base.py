"""The shared widget wiring: in-place figures, CSS hooks, errors shown instead of lost."""

from __future__ import annotations

import matplotlib
import pytest

from fampnb.widgets import base


def test_inline_refresh_sends_a_png_even_before_pyplot_exists(monkeypatch):
    """Under the inline backend a refresh puts PNG bytes into the widget's Image, never the
    Figure's text repr (a kernel that has not imported pyplot has no image formatter for
    Figures); nothing goes through IPython's display (no output area is cleared and rebuilt)."""
    import IPython.display as ipd
    import ipywidgets as w

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "module://matplotlib_inline.backend_inline")
    live = base.LiveFigure(figsize=(3, 2))
    assert not live.ipympl and isinstance(live.view, w.Image) and live.view.format == "png"
    live.ax.plot([0, 1], [1, 0])
    live.refresh()
    first = live.view.value
    assert first[:8] == b"\x89PNG\r\n\x1a\n"
    live.ax.plot([0, 1], [0, 1])
    live.refresh()
    assert live.view.value[:8] == b"\x89PNG\r\n\x1a\n" and live.view.value != first
    assert shown == []


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

    import numpy as np
    from PIL import Image

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(3, 2), nrows=2)
    live.ax.plot([0, 1], [1, 0], label="a line")
    live.ax.legend()
    live.ax.set_title("a title")
    draws = []
    live.fig.canvas.mpl_connect("draw_event", draws.append)
    live.refresh()
    assert len(draws) == 1
    got = np.asarray(Image.open(io.BytesIO(live.view.value)).convert("RGBA"))
    buf = io.BytesIO()
    live.fig.savefig(buf, format="png")
    want = np.asarray(Image.open(buf).convert("RGBA"))
    dpi = live.fig.dpi
    assert got.shape == want.shape == (round(2 * dpi), round(3 * dpi), 4)
    assert np.array_equal(got, want)


def _laid_out(live: base.LiveFigure) -> bool:
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    return isinstance(live.fig.get_layout_engine(), ConstrainedLayoutEngine)


def test_a_change_that_keeps_the_layout_skips_the_layout_pass(monkeypatch):
    """New data inside the same limits keeps what constrained layout reads: the next refresh
    draws without the layout pass, and its picture is the one a laid-out draw gives."""
    import io

    import numpy as np
    from PIL import Image

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(4, 3))
    (line,) = live.ax.plot([0, 1], [0, 1])
    live.ax.set_xlim(0, 1)
    live.ax.set_ylim(0, 1)
    live.ax.set_title("a title")
    live.refresh()
    assert _laid_out(live)  # the first draw lays the figure out
    line.set_ydata([1, 0])
    live.refresh()
    assert not _laid_out(live)
    got = np.asarray(Image.open(io.BytesIO(live.view.value)).convert("RGBA"))
    live.fig.set_layout_engine("constrained")
    live.fig.canvas.draw()
    assert np.array_equal(got, np.asarray(live.fig.canvas.buffer_rgba()))


def test_a_change_of_what_the_layout_reads_lays_out_again(monkeypatch):
    """Longer tick labels, a new axis label, a taller title, a text reaching out of the axes:
    each makes the next refresh run constrained layout again."""
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(4, 3))
    ax = live.ax
    ax.plot([0, 1], [0, 1])
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    live.refresh()
    changes = [lambda: ax.set_ylim(0, 100000),           # wider y tick labels
               lambda: ax.set_ylabel("a label"),
               lambda: ax.set_title("two\nlines"),
               lambda: ax.text(0.9, 0.5, "reaches far out of the axes", transform=ax.transAxes)]
    for change in changes:
        live.refresh()
        assert not _laid_out(live)  # nothing changed: no layout pass
        change()
        live.refresh()
        assert _laid_out(live)


def test_a_tick_beyond_the_limits_does_not_hide_a_change(monkeypatch):
    """A locator also places a tick one step beyond each end, which matplotlib neither draws nor
    lays out: its label must not count for the layout key, or a text that now reaches further
    (but less far than that label would) keeps a stale layout (notebook 02's "S = ..." label
    near the right end of its axis did)."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(4, 3))
    ax = live.ax
    ax.set_xlim(0, 10)
    ax.xaxis.set_major_locator(MultipleLocator(5))  # ticks 0, 5, 10, and 15 beyond the end
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda x, _pos: "a label far too long to be drawn" if x > 10 else f"{x:g}"))
    text = ax.text(9, 0.5, "")
    live.refresh()
    live.refresh()
    assert not _laid_out(live)
    text.set_text("a text that reaches past the edge")
    live.refresh()
    assert _laid_out(live)


def test_narrower_tick_labels_lay_out_again_under_an_axis_label(monkeypatch):
    """An axis label stands where the last draw put it, beyond the tick labels of the last
    limits; the next draw moves it in to the new ones.  Measured where it stands, it hid that
    the tick labels got narrower (notebook 03's gradient axis: a 5.6 px wider margin than a
    laid-out draw gives)."""
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    live = base.LiveFigure(figsize=(4, 3))
    ax = live.ax
    ax.plot([0, 1], [0, 1])
    ax.set_ylabel("a label")
    ax.set_ylim(0, 100000)
    for _ in range(3):  # until the layout is kept (the label has been placed)
        live.refresh()
    assert not _laid_out(live)
    ax.set_ylim(0, 1)  # narrower tick labels: the label moves in, the margin shrinks
    live.refresh()
    assert _laid_out(live)


@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")  # ipympl's
def test_ipympl_frames_are_matplotlibs_frames_encoded_faster():  # toolbar, outside a kernel
    """Under ipympl a LiveFigure's canvas encodes its frames with ``_png_rgba``: the first frame
    whole, then the changed pixels (transparent elsewhere), the same pixels and the same
    full/diff modes as matplotlib's own encoder gives, over a series of changes."""
    import io

    import numpy as np
    from PIL import Image

    pytest.importorskip("ipympl")
    from ipympl.backend_nbagg import Canvas, FigureManager
    from matplotlib.figure import Figure

    frames: dict[str, list] = {"fast": [], "matplotlib": []}
    for kind, got in frames.items():
        fig = Figure(figsize=(3, 2))
        canvas = Canvas(fig)
        FigureManager(canvas, 1)
        if kind == "fast":
            base._fast_frames(canvas)
        canvas.send_binary = lambda png, canvas=canvas, got=got: got.append(  # what is sent
            (canvas._current_image_mode, np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))))
        (line,) = fig.subplots().plot([0, 1], [0, 1])
        for y in ([0, 1], [1, 0], [1, 0], [0.5, 0.2]):
            line.set_ydata(y)
            canvas.draw()
    assert [m for m, _ in frames["fast"]] == [m for m, _ in frames["matplotlib"]]
    assert {m for m, _ in frames["fast"]} == {"full", "diff"}
    assert len(frames["fast"]) == 4
    for (_, fast), (_, slow) in zip(frames["fast"], frames["matplotlib"]):
        assert np.array_equal(fast, slow)


@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")  # ipympl's
def test_ipympl_refresh_draws_and_sends_one_frame_per_change(monkeypatch):  # toolbar
    """Under ipympl, once a page shows the canvas, a refresh draws it at once: each change sends
    its frame itself, without ``draw_idle``'s request through the page (which would ask the
    kernel back for it); before that, ``draw_idle`` (the page asks for its first frame)."""
    pytest.importorskip("ipympl")
    import matplotlib.pyplot as plt

    old = matplotlib.get_backend()
    plt.switch_backend("module://ipympl.backend_nbagg")
    try:
        live = base.LiveFigure(figsize=(3, 2))
        assert live.ipympl and live.view is live.fig.canvas
        sent: list[bytes] = []
        asked: list[int] = []
        monkeypatch.setattr(live.fig.canvas, "send_binary", sent.append)
        monkeypatch.setattr(live.fig.canvas, "draw_idle", lambda: asked.append(1))
        (line,) = live.ax.plot([0, 1], [0, 1])
        # no page shows the canvas yet: it will ask for its first (whole) frame itself
        live.refresh()
        assert (len(sent), len(asked)) == (0, 1)
        live.fig.canvas.syncing_data_url = False    # what the page's "initialized" message sets
        for y in ([1, 0], [0.5, 0.2], [0.2, 0.9]):
            line.set_ydata(y)
            live.refresh()
        assert (len(sent), len(asked)) == (3, 1)
        plt.close(live.fig)
    finally:
        plt.switch_backend(old)


@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")  # ipympl's
def test_ipympl_handshake_finds_the_canvas_already_sized():  # toolbar, outside a kernel
    """The page sizes an ipympl view from ``_size``; ipympl's handshake ("initialized") sets it
    with a state update that the page applies asynchronously, after the ``resize`` message that
    reads it.  A LiveFigure's canvas has its size from the start, so that the handshake sends no
    state update for ``_size`` at all (its ``resize`` then finds the right size)."""
    pytest.importorskip("ipympl")
    import matplotlib.pyplot as plt

    old = matplotlib.get_backend()
    plt.switch_backend("module://ipympl.backend_nbagg")
    try:
        live = base.LiveFigure(figsize=(3, 2))
        canvas = live.fig.canvas
        dpi = live.fig.dpi
        assert canvas._size == (3 * dpi, 2 * dpi)
        updates: list[object] = []
        canvas.observe(lambda change: updates.append(change["new"]), names="_size")
        sent: list[dict] = []
        canvas.send = lambda msg, buffers=None: sent.append(msg)   # no page: record the messages
        canvas._handle_message(canvas, {"type": "initialized"}, [])
        assert not canvas.syncing_data_url
        assert updates == [], "the handshake changed _size: its state update could come late"
        assert any('"resize"' in m["data"] for m in sent)
        plt.close(live.fig)
    finally:
        plt.switch_backend(old)


def test_png_holds_the_buffers_pixels_exactly():
    """``_png_rgba`` encodes an RGBA buffer (opaque, or with transparent pixels: an ipympl
    difference frame) as a PNG whose pixels are the buffer's, every byte."""
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    opaque = rng.integers(0, 256, (5, 7, 4), dtype=np.uint8)
    opaque[:, :, 3] = 255
    clear = opaque.copy()
    clear[2, 3, 3] = 0
    for buf in (opaque, clear):
        img = Image.open(io.BytesIO(base._png_rgba(buf.tobytes(), 7, 5, 1)))
        assert img.mode == "RGBA" and np.array_equal(np.asarray(img), buf)


def test_a_large_frame_is_deflated_in_two_halves_that_decode_as_one_stream():
    """A frame of ``SPLIT_BYTES`` or more is compressed in two halves at once: the stream is
    one zlib stream (``zlib.decompress`` gives every byte back, at every level) and the PNG
    made of it holds the buffer's pixels; a smaller buffer is compressed in one call."""
    import io
    import zlib

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(1)
    for size in (0, 1, base.SPLIT_BYTES - 1, base.SPLIT_BYTES, 3 * base.SPLIT_BYTES + 7):
        data = rng.integers(0, 3, size, dtype=np.uint8)  # runs zlib can shorten
        for level in (0, 1, 6, 9):
            packed = base._deflate(data, level)
            assert zlib.decompress(packed) == data.tobytes()
            if size < base.SPLIT_BYTES:
                assert packed == zlib.compress(data.tobytes(), level)
    height, width = 300, 800  # the log reader's frame: 960,000 bytes of RGBA
    assert height * width * 4 >= base.SPLIT_BYTES
    buf = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    buf[: height // 2] = 255  # a white upper half, as a figure's margins are
    img = Image.open(io.BytesIO(base._png_rgba(buf.tobytes(), width, height, 1)))
    assert img.mode == "RGBA" and np.array_equal(np.asarray(img), buf)


def test_a_forked_child_deflates_with_a_worker_of_its_own():
    """The worker thread that deflates a frame's first half does not survive a fork: a child
    (the doctor's readers are forked) that encodes a frame makes its own, and does not wait
    forever on the parent's."""
    import os
    import zlib

    import numpy as np

    data = np.random.default_rng(2).integers(0, 3, 2 * base.SPLIT_BYTES, dtype=np.uint8)
    assert zlib.decompress(base._deflate(data, 1)) == data.tobytes()   # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports by its exit status
        import signal

        signal.alarm(30)  # a child waiting on a worker that is not there dies, not hangs
        os._exit(0 if zlib.decompress(base._deflate(data, 1)) == data.tobytes() else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_new_frame_lays_out_without_measuring_the_key(monkeypatch):
    """``refresh(new_frame=True)`` (the log reader's next log) runs the layout pass without
    measuring the layout key, and shows the picture the keyed refresh shows for the same change;
    the next keyed refresh lays out once more (the key of that layout is unknown), the one after
    keeps it."""
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    pair = [base.LiveFigure(figsize=(4, 3)) for _ in range(2)]
    lines = [live.ax.plot([0, 1], [0, 1])[0] for live in pair]
    for live in pair:
        live.refresh()
    measured = []
    real_key = base.layout_key
    monkeypatch.setattr(base, "layout_key", lambda fig: measured.append(fig) or real_key(fig))
    for live, line in zip(pair, lines):
        line.set_data([0, 1000], [0, 50000])
        live.ax.relim()
        live.ax.autoscale_view()
    pair[0].refresh()
    assert measured == [pair[0].fig] and _laid_out(pair[0])   # the keyed path: the key changed
    live = pair[1]
    live.refresh(new_frame=True)
    assert measured == [pair[0].fig] and _laid_out(live)
    assert live.view.value == pair[0].view.value
    live.refresh()
    assert measured[1:] == [live.fig] and _laid_out(live)
    live.refresh()
    assert measured[2:] == [live.fig] and not _laid_out(live)


def test_the_log_readers_next_log_is_a_new_frame(monkeypatch):
    """The log reader lays out a new log without measuring the key, and keys the same log read
    with another precision hint."""
    monkeypatch.setattr(matplotlib, "get_backend", lambda: "agg")
    from fampnb import logs
    from fampnb.widgets.logreader import make_log_reader

    _ui, c, _a = make_log_reader()
    names = [v for _, v in c["sample"].options if v]
    calls = []
    real = base.LiveFigure.refresh
    monkeypatch.setattr(base.LiveFigure, "refresh",
                        lambda self, new_frame=False: calls.append(new_frame) or real(self, new_frame))
    c["sample"].value = names[0]
    c["paste"].value = "\n".join(logs.read_sample(names[1]))
    c["precision"].value = next(v for _, v in c["precision"].options if v)
    assert calls == [True, True, False]
