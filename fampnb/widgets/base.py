"""Shared wiring for every fampnb widget: figures that update in place, CSS classes, error display.

Rules every ``make_*`` follows (DESIGN.md):
- each control gets the CSS class ``fampnb-<name>`` (``tag``), the hook browser tests use;
- the figure is created once (``LiveFigure``); a change calls the ``update_*`` of ``fampnb.plots``
  on the existing artists and then ``LiveFigure.refresh()``: one draw of the ipympl canvas (which
  sends the changed pixels), or a new PNG in the widget's ``Image`` under the inline backend
  (never both).  The inline refresh costs one Agg draw: the figure uses constrained layout, so
  no tight-box pass (``bbox_inches="tight"`` draws twice), and the PNG is encoded from the
  buffer that draw filled, at a fast compression level (a live view, not an archive), its two
  halves compressed at once on two threads (``_deflate``).  The
  layout pass itself runs only when what it reads changed (``layout_key``: tick-label sizes,
  labels, titles, legends, texts reaching out of the axes); a change of data inside the same
  frame is drawn in the positions it gave;
- callbacks are wrapped by ``guard``: an exception becomes a one-line message in the widget's status
  line (class ``fampnb-<name>-status``) and the widget keeps working.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["is_ipympl", "LiveFigure", "layout_key", "tag", "status_line", "guard", "show_error", "show_ok"]

W = TypeVar("W")

#: zlib level of the inline PNG: 1 encodes several times faster than the default 6, for a
#: somewhat larger image (a live view is replaced at the next change)
PNG_COMPRESS_LEVEL = 1


def _require() -> None:
    try:
        import ipywidgets  # noqa: F401
        import matplotlib  # noqa: F401
    except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the deps
        raise ModuleNotFoundError(
            f"{exc.name} is needed for the fampnb widgets: pip install 'fampnb[lab]'"
        ) from exc


def is_ipympl() -> bool:
    """True when the active matplotlib backend is ipympl (``%matplotlib widget``)."""
    import matplotlib

    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend.endswith("widget")


class LiveFigure:
    """A figure made once and redrawn in place.

    ``view`` is what goes into the widget layout: the ipympl canvas, or an ``Image`` holding the
    inline PNG (a new value replaces the picture in place: no room to reserve, nothing on the
    page jumps).  Under the inline backend the figure is not registered with pyplot, so the
    number of open pyplot figures never grows however many changes are made.  In both it is a
    ``MemoFigure`` (``_memo``): a draw works out each axis's ticks and each legend box's size
    once, where matplotlib works them out again for every part of the draw that asks.
    """

    def __init__(self, figsize: tuple[float, float] = (7.0, 3.2), nrows: int = 1, ncols: int = 1,
                 **subplot_kw: Any) -> None:
        _require()
        import ipywidgets as w

        from ._memo import MemoFigure

        self.ipympl = is_ipympl()
        if self.ipympl:
            import matplotlib.pyplot as plt

            with plt.ioff():
                self.fig = plt.figure(figsize=figsize, FigureClass=MemoFigure)
            self.fig.canvas.header_visible = False
            _fast_frames(self.fig.canvas)
            _sized(self.fig.canvas)
            # a resized canvas needs the layout again (the reader dragged the figure's corner)
            self.fig.canvas.mpl_connect("resize_event", lambda _e: self._forget_layout())
            self.view: Any = self.fig.canvas
        else:
            from matplotlib.backends.backend_agg import FigureCanvasAgg

            self.fig = MemoFigure(figsize=figsize)
            FigureCanvasAgg(self.fig)  # refresh() draws on it and encodes its buffer
            # the PNG goes into an Image widget: a new value swaps the picture in place (sent as
            # binary; no output area is cleared and rebuilt, so nothing on the page jumps)
            self.view = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        self.axes = self.fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
        self.ax = self.axes[0, 0]
        self.fig.set_layout_engine("constrained")
        self._laid_out: tuple[Any, ...] | None = None  # layout_key() when the layout last ran

    def refresh(self, new_frame: bool = False) -> None:
        """Show the updated artists: one draw of the ipympl canvas, else a new PNG in the Image.

        ``new_frame``: the caller knows that what the layout reads has changed (the log reader's
        new log: other limits, other tick labels), so the layout pass runs without measuring the
        layout key first (measuring it would only confirm the change, at 10% of a draw).

        Under ipympl the canvas is drawn at once (``canvas.draw()`` renders and sends the pixels
        that changed) once a page shows it: ``draw_idle()`` would send the page a request to ask
        the kernel for that draw, one more round trip through the page per change.  Before a
        page shows it (ipympl still ``syncing_data_url``), ``draw_idle()``: the page asks for its
        first, whole frame when it is ready (a frame drawn earlier would be taken for the one it
        has, and the next ones sent as differences to nothing).  Inline, the PNG is rendered here
        rather than by display(fig): the figure's image formatter exists only once pyplot has
        set up the inline backend, which a kernel may not have done yet.  In both, what the
        layout key measures (ticks, legend sizes) the draw right after finds worked out.
        """
        with self.fig.remembering():
            if new_frame:
                self._forget_layout()     # (the next keyed refresh lays out once more)
            else:
                self._choose_layout()
            if self.ipympl:
                canvas = self.fig.canvas
                if getattr(canvas, "syncing_data_url", True):
                    canvas.draw_idle()
                else:
                    canvas.draw()
            else:
                self.view.value = self.png()

    def _forget_layout(self) -> None:
        self._laid_out = None
        self.fig.set_layout_engine("constrained")

    def _choose_layout(self) -> None:
        """Run constrained layout on the next draw only when what it depends on changed since it
        last ran (``layout_key``); otherwise the axes keep the positions it gave them, and a draw
        is one rendering pass instead of a layout pass and a rendering pass."""
        key = layout_key(self.fig)
        if key != self._laid_out:
            self.fig.set_layout_engine("constrained")
            self._laid_out = key
        else:
            self.fig.set_layout_engine("none")

    def png(self, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
        """The figure as PNG bytes: one Agg draw, then the RGBA buffer that draw filled, encoded.

        What ``savefig(format="png")`` shows (same size and dpi, the whole figure: constrained
        layout already keeps every artist inside it), without the second draw that
        ``bbox_inches="tight"`` costs and with a fast zlib level.
        """
        canvas = self.fig.canvas
        canvas.draw()
        width, height = canvas.get_width_height(physical=True)
        return _png_rgba(canvas.buffer_rgba(), width, height, compress_level)


def _png_rgba(rgba: Any, width: int, height: int, compress_level: int) -> bytes:
    """PNG bytes of an 8-bit RGBA buffer, rows unfiltered.  Pillow tries every PNG filter on
    every row, which costs more than compressing a figure (mostly flat colour) at a fast zlib
    level; unfiltered, the encoding takes half the time for about the same bytes.  The rows are
    built in one copy and handed to zlib as they are (``np.zeros`` and ``tobytes`` would copy twice
    more: 3 ms of the decay figure's 2 MB frame)."""
    import struct
    import zlib

    import numpy as np

    rows = np.empty((height, 1 + 4 * width), np.uint8)
    rows[:, 0] = 0                          # each row's filter byte: "None"
    rows[:, 1:] = np.frombuffer(rgba, np.uint8).reshape(height, 4 * width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", _deflate(rows, compress_level)) + chunk(b"IEND", b""))


#: a frame at least this large is compressed in two halves at once (smaller: one call)
SPLIT_BYTES = 256 * 1024
_halves: Any = None  # the one worker thread that deflates a frame's first half


def _forget_halves() -> None:
    global _halves
    _halves = None


if hasattr(os, "register_at_fork"):   # (POSIX; Windows does not fork)
    # a forked child has no worker thread: it makes its own pool when it needs one
    os.register_at_fork(after_in_child=_forget_halves)


def _deflate(data: Any, level: int) -> bytes:
    """``zlib.compress(data, level)``'s stream, its two halves deflated at once: zlib releases
    the GIL, so on two cores a frame's encoding, the largest cost of a change after its draw,
    takes about half the time.  The halves are joined as pigz joins its blocks: the first ends
    in a sync flush (byte-aligned, not final), the second finishes the stream, and the checksum
    is the whole buffer's (``zlib.decompress`` gives ``data`` back, every byte)."""
    import struct
    import zlib

    view = memoryview(data).cast("B")
    if len(view) < SPLIT_BYTES:
        return zlib.compress(view, level)
    global _halves
    if _halves is None:
        from concurrent.futures import ThreadPoolExecutor

        _halves = ThreadPoolExecutor(1, thread_name_prefix="fampnb-png")

    def raw(part: memoryview, last: bool) -> bytes:
        co = zlib.compressobj(level, zlib.DEFLATED, -15)  # raw deflate: no header, no checksum
        return co.compress(part) + co.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    half = len(view) // 2
    first = _halves.submit(raw, view[:half], False)
    check = zlib.adler32(view[:half])       # (while the worker deflates that half)
    second = raw(view[half:], True)
    check = zlib.adler32(view[half:], check)
    header = zlib.compress(b"", level)[:2]  # the stream header zlib writes at this level
    return header + first.result() + second + struct.pack(">I", check)


def _sized(canvas: Any) -> None:
    """Give an ipympl canvas its size in pixels now, as ipympl's handshake will (``_size``).

    ipympl's page model sizes its views from ``_size``; the kernel sets it only when the page
    says "initialized", with a ``resize`` message right after the state update.  The page applies
    a state update asynchronously and a message at once, so when the figure is displayed before
    the kernel answers (Run All: the kernel is busy with the next cells) the ``resize`` can find
    the old size, ``[0, 0]``, and the view's canvas stays 0 x 0: a blank figure.  With the size
    set here, the handshake changes nothing and its ``resize`` finds the right one."""
    if hasattr(canvas, "_size") and hasattr(canvas, "device_pixel_ratio"):
        width, height = canvas.figure.bbox.size / canvas.device_pixel_ratio
        canvas._size = (float(width), float(height))


def _fast_frames(canvas: Any) -> None:
    """ipympl sends each frame as a PNG of the pixels that changed, which matplotlib's webagg
    encodes at zlib's default level with every row filter tried (13-30 ms of a change); this
    gives ``canvas`` matplotlib 3.10's ``FigureCanvasWebAggCore.get_diff_image`` with that one
    step done by ``_png_rgba`` at ``PNG_COMPRESS_LEVEL`` (3-7 ms; the same pixels, the same
    full/diff frames).  A canvas without the state that method keeps is left as it is."""
    import numpy as np

    if not all(hasattr(canvas, a) for a in ("get_diff_image", "set_image_mode", "_png_is_old",
                                            "_force_full", "_last_buff")):
        return

    def get_diff_image() -> bytes | None:
        if not canvas._png_is_old:
            return None
        pixels = np.asarray(canvas.get_renderer().buffer_rgba())
        buff = pixels.view(np.uint32).squeeze(2)  # one uint32 per pixel: compared at once
        if (canvas._force_full or buff.shape != canvas._last_buff.shape
                or (pixels[:, :, 3] != 255).any()):  # a diff cannot carry transparency
            canvas.set_image_mode("full")
            frame = buff
        else:
            canvas.set_image_mode("diff")
            frame = np.where(buff != canvas._last_buff, buff, 0)
        canvas._last_buff = buff.copy()
        canvas._force_full = False
        canvas._png_is_old = False
        height, width = frame.shape
        return _png_rgba(np.ascontiguousarray(frame), width, height, PNG_COMPRESS_LEVEL)

    canvas.get_diff_image = get_diff_image


def _text(t: Any) -> tuple[str, bool] | None:
    return None if t is None else (t.get_text(), t.get_visible())


def _ticklabels(axis: Any) -> list[Any]:
    """The tick labels that decide how far an axis's labels reach, for the limits the axis has
    now: the first and the last (the ends reach sideways) and the longest string (the widest, in
    practice), minor ones included where the axis prints them (a log axis over few decades).
    Only the labels of the ticks matplotlib draws count (``Axis._update_ticks``, what its own
    layout reads): a locator also places a tick one step beyond each end, never drawn, whose
    label would hide how far the drawn ones reach."""
    labels = [label for tick in axis._update_ticks() for label in (tick.label1, tick.label2)
              if label.get_visible() and label.get_text()]
    if not labels:
        return []
    longest = max(labels, key=lambda t: len(t.get_text()))
    return list({id(t): t for t in (labels[0], labels[-1], longest)}.values())


def _reach(box: Any, exts: list[Any]) -> tuple[int, ...]:
    """How far (whole pixels) the extents ``exts`` reach past ``box`` on each side."""
    if not exts:
        return ()
    return (round(max(0.0, box.x0 - min(e.x0 for e in exts))),
            round(max(0.0, max(e.x1 for e in exts) - box.x1)),
            round(max(0.0, box.y0 - min(e.y0 for e in exts))),
            round(max(0.0, max(e.y1 for e in exts) - box.y1)))


def layout_key(fig: Any) -> tuple[Any, ...]:
    """What constrained layout reads, found without laying out: the figure's size, its own texts
    and legends, and per axes how far its decorations reach past its box on each side (whole
    pixels: tick labels for the limits it has now; titles, texts, legend), its axis labels,
    with its axes' scales and sides.  Equal keys give equal layouts, so a change that keeps the
    key (new data, new limits whose labels reach as far) skips the layout pass.

    An axis label is not measured where it stands: the draw puts it beyond the tick labels
    (it still stands where the last draw put it, for the last limits' labels).  Its text and the
    tick labels' reach, kept apart from the rest, decide where it goes."""
    renderer = fig.canvas.get_renderer()
    key: list[Any] = [tuple(fig.get_size_inches()), fig.dpi]
    key += [_text(t) for t in fig.texts]
    key += [_text(getattr(fig, a, None)) for a in ("_suptitle", "_supxlabel", "_supylabel")]
    key += [tuple(t.get_text() for t in leg.get_texts()) for leg in fig.legends]
    for ax in fig.axes:
        if not ax.get_visible():
            key.append(None)
            continue
        # (an axes drawn without axis: texts only)
        ticks = [*_ticklabels(ax.xaxis), *_ticklabels(ax.yaxis)] if ax.axison else []
        labels = (_text(ax.xaxis.label), _text(ax.yaxis.label)) if ax.axison else ()
        others = [ax.title, ax._left_title, ax._right_title, *ax.texts]
        exts = [[t.get_window_extent(renderer) for t in parts if t.get_visible() and t.get_text()]
                for parts in (ticks, others)]
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            exts[1].append(leg.get_window_extent(renderer))
        key.append((ax.axison, ax.xaxis.get_scale(), ax.yaxis.get_scale(), ax.xaxis.get_visible(),
                    ax.yaxis.get_visible(), ax.xaxis.get_label_position(),
                    ax.yaxis.get_label_position(), labels, *(_reach(ax.bbox, e) for e in exts)))
    return tuple(key)


def tag(widget: W, name: str) -> W:
    """Add the CSS class ``fampnb-<name>`` to ``widget`` (the hook browser tests select on)."""
    widget.add_class(f"fampnb-{name}")  # type: ignore[attr-defined]
    return widget


def status_line(name: str) -> Any:
    """An empty HTML line with class ``fampnb-<name>-status`` for errors and notes."""
    _require()
    import ipywidgets as w

    return tag(w.HTML(value=""), f"{name}-status")


def show_error(status: Any, message: str) -> None:
    status.value = f'<span style="color:#b00020">&#9888; {html.escape(message)}</span>'


def show_ok(status: Any, message: str = "") -> None:
    status.value = html.escape(message)


def guard(status: Any, fn: Callable[..., None]) -> Callable[..., None]:
    """Wrap a callback so that an exception is shown in ``status`` instead of being lost.

    The message is one line (``ValueError: ...``); no traceback reaches the output area.
    """

    def wrapped(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - shown to the reader, widget keeps working
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            show_error(status, f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
        else:
            if status.value.startswith('<span style="color:#b00020">'):
                show_ok(status)

    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped
