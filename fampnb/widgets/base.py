"""Shared wiring for every fampnb widget: figures that update in place, CSS classes, error display.

Rules every ``make_*`` follows (DESIGN.md):
- each control gets the CSS class ``fampnb-<name>`` (``tag``), the hook browser tests use;
- the figure is created once (``LiveFigure``); a change calls the ``update_*`` of ``fampnb.plots``
  on the existing artists and then ``LiveFigure.refresh()``: ``draw_idle()`` under ipympl, a re-show
  inside the widget's fixed-height ``Output`` under the inline backend (never both).  The inline
  re-show costs one Agg draw: the figure uses constrained layout, so no tight-box pass
  (``bbox_inches="tight"`` draws twice), and the PNG is encoded from the buffer that draw filled,
  at a fast compression level (a live view, not an archive);
- callbacks are wrapped by ``guard``: an exception becomes a one-line message in the widget's status
  line (class ``fampnb-<name>-status``) and the widget keeps working.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["is_ipympl", "LiveFigure", "tag", "status_line", "guard", "show_error", "show_ok"]

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

    ``view`` is what goes into the widget layout: the ipympl canvas, or an ``Output`` of fixed
    height holding the inline PNG.  Under the inline backend the figure is a plain
    ``matplotlib.figure.Figure`` (not registered with pyplot), so the number of open pyplot figures
    never grows however many changes are made.
    """

    def __init__(self, figsize: tuple[float, float] = (7.0, 3.2), height: str = "360px",
                 nrows: int = 1, ncols: int = 1, **subplot_kw: Any) -> None:
        _require()
        import ipywidgets as w

        self.ipympl = is_ipympl()
        if self.ipympl:
            import matplotlib.pyplot as plt

            with plt.ioff():
                self.fig = plt.figure(figsize=figsize)
            self.fig.canvas.header_visible = False
            self.view: Any = self.fig.canvas
        else:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            self.fig = Figure(figsize=figsize)
            FigureCanvasAgg(self.fig)  # refresh() draws on it and encodes its buffer
            self.view = w.Output(layout=w.Layout(height=height, overflow="hidden"))
        self.axes = self.fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
        self.ax = self.axes[0, 0]
        self.fig.set_layout_engine("constrained")

    def refresh(self) -> None:
        """Show the updated artists: ``draw_idle`` under ipympl, else re-display in the Output."""
        if self.ipympl:
            self.fig.canvas.draw_idle()
            return
        from IPython.display import Image, clear_output, display

        # Render the PNG here rather than display(fig): the figure's image formatter exists only
        # once pyplot has set up the inline backend, which a kernel may not have done yet.
        data = self.png()
        with self.view:
            clear_output(wait=True)
            display(Image(data=data, format="png"))

    def png(self, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
        """The figure as PNG bytes: one Agg draw, then the RGBA buffer that draw filled, encoded.

        What ``savefig(format="png")`` shows (same size and dpi, the whole figure: constrained
        layout already keeps every artist inside it), without the second draw that
        ``bbox_inches="tight"`` costs and with a fast zlib level.
        """
        import io

        from PIL import Image as PILImage

        canvas = self.fig.canvas
        canvas.draw()
        width, height = canvas.get_width_height(physical=True)
        img = PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA",
                                  0, 1)
        buf = io.BytesIO()
        img.save(buf, format="png", compress_level=compress_level)
        return buf.getvalue()


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
