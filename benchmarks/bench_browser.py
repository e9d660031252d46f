"""What the reader feels: a key press on a widget -> the new picture on the page.

Opens each widget notebook in the real JupyterLab + headless Chromium the browser tests use
(``tests/browser/labdriver.py``), once per matplotlib backend:

* ``inline``: the default (what Colab and a plain JupyterLab show), the figure is a PNG in an
  ``Image`` widget;
* ``ipympl``: ``%matplotlib widget`` before Run All (``make lab`` installs ipympl), the figure is an
  ipympl canvas, drawn by ``LiveFigure.refresh()`` on each change.

After Run All it focuses the widget's slider handle and presses an arrow key PRESSES times, one
step each (the direction reverses at an end); the log reader has no slider: it picks the next
option of its sample dropdown instead (timed from the select's change event).  Each press
is timed inside the page (``performance.now()``): from the keydown event to the first new picture
inside the widget: an ``<img>`` that has loaded (inline), a frame drawn onto the visible canvas
(ipympl).  Before each press the page has been quiet (no new picture) for a moment, so a press
never sees the previous one's picture.

Each press is followed by one *refresh round*: a silent kernel request that shows the widget's
figure again (under ipympl ``canvas.draw_idle()``: a draw_idle round, the page asking the kernel
for the draw; under inline what ``LiveFigure.refresh()`` does: one Agg draw, the PNG, into the
widget's ``Image``), timed from the request to the new
picture: the same kernel round trip and the same picture, without the recompute.  The ratio
change / round shows what the recompute adds; the round alone, what showing a picture costs.
(Inline, the round's PNG is encoded at zlib level 2, a change's at level 1: the same pixels in
other bytes, since an Image widget does not send a value equal to the one it has.)

Targets: median key press -> picture <= 200 ms for every widget and backend (on the project's
2-core machine); under ipympl, median change <= 1.2x median draw_idle round (the inline ratio is
printed too, without a target).  Exit status 1 when
one is missed or a press brought no picture; 0 with a note when Chromium or playwright is
missing.  The load average is printed before and after: on a shared machine the milliseconds
grow with the load, the ratio much less.

    .venv/bin/python benchmarks/bench_browser.py [--presses 20] [--backend inline|ipympl]
                                                 [widget ...]   # bits thresholds decay ...
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser.labdriver import (  # noqa: E402
    CHROMIUM_FLAGS,
    HOW_TO_ENABLE,
    LabPage,
    LabServer,
    NotebookPage,
    chromium_path,
    playwright_available,
)

#: (notebook, the widget's CSS name, the control pressed): classes fampnb-<name>[-<control>]
WIDGETS = [
    ("01-number-formats.ipynb", "bits", "magnitude"),
    ("02-overflow-underflow-thresholds.ipynb", "thresholds", "scale"),
    ("03-loss-scale-decay.ipynb", "decay", "init-scale"),
    ("04-nan-decision-walkthrough.ipynb", "walk", "scale"),
    ("05-reading-real-logs.ipynb", "logreader", "sample"),
    ("07-gradient-histograms.ipynb", "hist", "scale"),
    ("08-where-nan-starts.ipynb", "hazards", "scale"),
    ("09-fp8-scaling.ipynb", "fp8", "spike"),
]
TARGET_MS = 200.0
TARGET_RATIO = 1.2
#: no new picture for this long before a press: the previous change has fully landed
QUIET_MS = 400
#: a press that brings no picture within this time moved nothing (the control is at an end)
NO_PICTURE_MS = 15_000
#: the ``LiveFigure`` of widget ``fampnb-<name>`` in the kernel (the one whose view is inside
#: that widget's tree); ``_fampnb_bench_refresh()`` is what a change calls last
_FIND_LIVE = """
def _fampnb_bench_live(cls):
    import gc
    import ipywidgets
    stack = [w for w in list(ipywidgets.widgets.widget._instances.values())
             if cls in getattr(w, '_dom_classes', ())][:1]
    inside = set()
    while stack:
        x = stack.pop()
        inside.add(id(x))
        stack.extend(getattr(x, 'children', ()))
    for obj in gc.get_objects():
        if type(obj).__name__ == 'LiveFigure' and id(getattr(obj, 'view', None)) in inside:
            return obj
    raise LookupError('no LiveFigure in ' + cls)
def _fampnb_bench_refresh(live=_fampnb_bench_live({cls!r})):
    if live.ipympl:  # the target's unit: one draw_idle round (the page asks the kernel to draw)
        return live.fig.canvas.draw_idle()
    # inline: what refresh() does (one draw, the PNG, into the Image widget), at zlib level 2
    # where a change writes level 1: the same pixels in other bytes, so that the value is sent and
    # the page shows the picture anew (an equal value would not be sent at all)
    data = live.png(compress_level=2)
    live.view.value = data if data != live.view.value else live.png(compress_level=3)
"""


@dataclass
class Result:
    widget: str
    backend: str
    latency_ms: list[float] = field(default_factory=list)
    round_ms: list[float] = field(default_factory=list)
    error: str = ""


class Control:
    """The pressed control in the page: a slider's handle or a dropdown's ``<select>``."""

    def __init__(self, nb: NotebookPage, locator: Any) -> None:
        self.nb = nb
        self.slider = locator.locator(".noUi-handle").count() > 0
        self.el = locator.locator(".noUi-handle" if self.slider else "select").first
        self.el.scroll_into_view_if_needed()
        self.el.focus()
        lo, hi, now = self.el.evaluate(
            "e => e.tagName === 'SELECT' ? [0, e.options.length - 1, e.selectedIndex] : "
            "['aria-valuemin', 'aria-valuemax', 'aria-valuenow'].map(a => +e.getAttribute(a))")
        self.up = (now - lo) <= (hi - now)  # towards the farther end

    def key(self) -> str:
        return "ArrowRight" if self.up else "ArrowLeft"

    def press(self) -> float:
        """Press one step; the page time of the keydown."""
        t_before = self.nb.page_now()
        if self.slider:
            self.el.focus()
            self.nb.page.keyboard.press(self.key())
        else:  # a dropdown: the next option (its change event is the "key press")
            i = self.el.evaluate("e => e.selectedIndex") + (1 if self.up else -1)
            if 0 <= i < self.el.evaluate("e => e.options.length"):
                self.el.select_option(index=i)
        return next((t for t in self.nb.key_times() if t > t_before), t_before)


def measure(lab: LabPage, server: LabServer, notebook: str, name: str, control: str,
            backend: str, presses: int) -> Result:
    res = Result(name, backend)
    nb = NotebookPage(lab, notebook)
    try:
        nb.open()
        if backend == "ipympl":
            nb.use_ipympl()
        nb.run_all()
        ui = nb.root.locator(f".fampnb-{name}").first
        ui.wait_for()
        nb.watch_pictures(ui)
        ctl = Control(nb, nb.root.locator(f".fampnb-{name}-{control}").first)
        nb.execute_silent(_FIND_LIVE.format(cls=f"fampnb-{name}"))
        misses = 0
        while len(res.latency_ms) < presses:
            nb.wait_pictures_quiet(QUIET_MS)
            pic = nb.wait_picture_after(t_key := ctl.press(), timeout_ms=NO_PICTURE_MS)
            if pic is None:  # at an end (a press that moves nothing draws nothing): turn round
                ctl.up = not ctl.up
                misses += 1
                if misses > 2:
                    raise RuntimeError(f"no new picture within {NO_PICTURE_MS} ms of a key "
                                       f"press on {control}, either way")
                continue
            misses = 0
            res.latency_ms.append(pic - t_key)
            nb.wait_pictures_quiet(QUIET_MS)
            t0 = nb.execute_silent("_fampnb_bench_refresh()", wait=True)
            pic = nb.wait_picture_after(t0)
            if pic is None:
                raise RuntimeError("no new picture within 30 s of LiveFigure.refresh()")
            res.round_ms.append(pic - t0)
    except Exception as exc:  # noqa: BLE001 - one broken widget must not hide the others
        res.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
    finally:
        nb.close()
    return res


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def report(results: list[Result]) -> bool:
    ok = True
    print(f"{'widget':<12} {'backend':<7} {'presses':>7} {'median ms':>10} {'worst ms':>9}  "
          f"{'target':<13} {'refresh round':>13}  change/round")
    for r in results:
        if r.error:
            print(f"{r.widget:<12} {r.backend:<7} FAILED: {r.error}")
            ok = False
            continue
        med, worst = statistics.median(r.latency_ms), max(r.latency_ms)
        hit = med <= TARGET_MS
        ok &= hit
        line = (f"{r.widget:<12} {r.backend:<7} {len(r.latency_ms):>7} {med:>10.0f} {worst:>9.0f}"
                f"  {f'<= {TARGET_MS:.0f} ' + ('OK' if hit else 'OVER'):<13}")
        rnd = statistics.median(r.round_ms)
        ratio = med / rnd
        line += f" {rnd:>13.0f}  {ratio:4.2f}x"
        if r.backend == "ipympl":
            ok &= ratio <= TARGET_RATIO
            line += f" (<= {TARGET_RATIO}x {'OK' if ratio <= TARGET_RATIO else 'OVER'})"
        print(line)
    return ok


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=20)
    ap.add_argument("--backend", choices=("inline", "ipympl"), action="append")
    ap.add_argument("widgets", nargs="*", help="widget names (default: all): "
                    + " ".join(w[1] for w in WIDGETS))
    args = ap.parse_args(argv)
    chromium = chromium_path()
    if chromium is None or not playwright_available():
        print(f"skipped: needs Chromium and the playwright package. {HOW_TO_ENABLE}")
        return 0
    from playwright.sync_api import sync_playwright

    todo = [(b, w) for b in (args.backend or ["inline", "ipympl"]) for w in WIDGETS
            if not args.widgets or w[1] in args.widgets]
    import matplotlib

    print(f"machine: {os.cpu_count()} cores | matplotlib {matplotlib.__version__} | "
          f"load average (1/5/15 min) before: {load()}")
    t_start = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="fampnb-bench-browser-") as tmp:
        server = LabServer(ROOT / "notebooks", Path(tmp), package_root=ROOT).start()
        pw = sync_playwright().start()
        try:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=CHROMIUM_FLAGS)
            lab = LabPage(browser, server).load()
            for i, (backend, (notebook, name, control)) in enumerate(todo):
                if i + 1 < len(todo):  # the next notebook's kernel starts meanwhile
                    server.start_kernels([todo[i + 1][1][0]])
                results.append(measure(lab, server, notebook, name, control, backend,
                                       args.presses))
                r = results[-1]
                print(f"  {name} ({backend}): {r.error or f'{len(r.latency_ms)} presses'}",
                      flush=True)
            lab.close()
            browser.close()
        finally:
            pw.stop()
            server.stop()
    print(f"load average after: {load()} | {time.monotonic() - t_start:.0f} s in all")
    ok = report(results)
    print("all targets met" if ok else "some targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
