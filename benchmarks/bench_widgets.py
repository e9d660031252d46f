"""Cost of a widget change vs one full redraw, for every ``make_*`` in ``fampnb.widgets``.

For each widget that can be built without arguments (the others are listed as skipped), this
script makes 100 control changes, cycling through every slider / toggle / dropdown the widget has,
and times each change *including a real draw*:

* ``draw``  : the change (callback: recompute + update_* + LiveFigure.refresh) followed by
  ``fig.canvas.draw()`` on an Agg canvas, against one ``fig.canvas.draw()`` of the same figure
  (measured interleaved with the changes, so both see the same machine load; medians);
* ``png``   : the change followed by the PNG render the inline backend performs on every refresh
  (``savefig(format="png", bbox_inches="tight")``, as matplotlib-inline does), against one such
  render alone.

Target (issue 5): change / draw <= 1.5x.  It also checks that the number of open pyplot figures is
the same before and after the 100 changes (no new figure per change).  Exit status 1 when a target
or a check fails.

    .venv/bin/python benchmarks/bench_widgets.py [make_name ...]   # default: all of them
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import itertools
import pkgutil
import statistics
import sys
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")  # a script: no display; LiveFigure takes the inline path

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

CHANGES = 100
TARGET = 1.5


def discover() -> list[tuple[str, Any]]:
    """Every public ``make_*`` function of the fampnb.widgets submodules, in module order."""
    import fampnb.widgets as pkg

    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        try:
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - report, keep benchmarking the others
            print(f"  ! fampnb.widgets.{info.name}: import failed: {type(exc).__name__}: {exc}")
            continue
        for name in getattr(mod, "__all__", dir(mod)):
            obj = getattr(mod, name, None)
            if name.startswith("make_") and callable(obj) and obj.__module__ == mod.__name__:
                found.setdefault(name, obj)
    return sorted(found.items())


def needs_args(fn: Any) -> list[str]:
    sig = inspect.signature(fn)
    return [p.name for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def find_figure(obj: Any, depth: int = 0) -> Figure | None:
    """The matplotlib Figure behind a widget's artists (a value, or inside dicts/lists)."""
    if isinstance(obj, Figure):
        return obj
    if isinstance(obj, Artist) and obj.figure is not None:
        return obj.figure.get_figure(root=True) if hasattr(obj.figure, "get_figure") else obj.figure
    if depth > 3:
        return None
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    for item in items:
        fig = find_figure(item, depth + 1)
        if fig is not None:
            return fig
    return None


def value_cycle(control: Any) -> list[Any] | None:
    """A list of valid values to cycle a control through (None: not a control we can move)."""
    import ipywidgets as w

    if isinstance(control, w.FloatLogSlider):
        lo, hi = control.min, control.max
        return [control.base ** (lo + (hi - lo) * k / 9) for k in range(10)]
    if isinstance(control, (w.FloatSlider, w.IntSlider, w.BoundedFloatText, w.BoundedIntText)):
        lo, hi = control.min, control.max
        vals = [lo + (hi - lo) * k / 9 for k in range(10)]
        return [int(round(v)) for v in vals] if isinstance(control.value, int) else vals
    if isinstance(control, (w.ToggleButtons, w.Dropdown, w.RadioButtons, w.Select,
                            w.SelectionSlider)):
        vals = list(control._options_values)
        return vals if len(vals) > 1 else None
    if isinstance(control, (w.Checkbox, w.ToggleButton)):
        return [not control.value, control.value]
    return None


def median_time(fn: Any, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def png(fig: Figure) -> None:
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")


def bench(name: str, make: Any) -> bool:
    """Benchmark one widget; True when its targets and checks pass."""
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):  # the inline refresh prints a repr outside a kernel
        ui, controls, artists = make()
    fig = find_figure(artists)
    if fig is None:
        print(f"{name:<26} skipped: no matplotlib figure in its artists")
        return True
    if type(fig.canvas) is FigureCanvasBase:
        FigureCanvasAgg(fig)  # a plain Figure (inline path): give it a real canvas to draw on
    moves = [(k, v) for k, c in controls.items() if (v := value_cycle(c))]
    if not moves:
        print(f"{name:<26} skipped: no slider/toggle/dropdown to move")
        return True
    plan = list(itertools.islice(
        itertools.cycle([(k, v) for k, vals in moves for v in vals]), CHANGES))
    fig.canvas.draw()  # warm caches (fonts, text layout) before timing anything
    png(fig)

    # Baselines are measured interleaved with the changes (every other change: one plain redraw
    # of the unchanged figure), so that both sides see the same machine load.
    n_before = len(plt.get_fignums())
    t_change, t_draw, t_png, base_draw, base_png = [], [], [], [], []
    with contextlib.redirect_stdout(quiet):
        for i, (key, value) in enumerate(plan):
            t0 = time.perf_counter()
            controls[key].value = value
            t1 = time.perf_counter()
            fig.canvas.draw()
            t_change.append(t1 - t0)
            t_draw.append(time.perf_counter() - t0)
            if i % 2:
                base_draw.append(median_time(fig.canvas.draw, 1))
        for key, value in plan[:10]:  # the inline path: a change, then the PNG it ships
            t0 = time.perf_counter()
            controls[key].value = value
            png(fig)
            t_png.append(time.perf_counter() - t0)
            base_png.append(median_time(lambda: png(fig), 1))
    draw, png_only = statistics.median(base_draw), statistics.median(base_png)
    n_after = len(plt.get_fignums())

    change, per_draw = statistics.median(t_change), statistics.median(t_draw)
    ratio, ratio_png = per_draw / draw, statistics.median(t_png) / png_only
    figs_ok = n_before == n_after
    ok = figs_ok and ratio <= TARGET
    keys = ",".join(k for k, _ in moves)
    print(f"{name:<26} controls {keys}")
    print(f"{'':<26} one canvas.draw {draw * 1e3:7.1f} ms | change alone {change * 1e3:6.1f} ms | "
          f"change+draw {per_draw * 1e3:7.1f} ms | ratio {ratio:4.2f}x (target <= {TARGET}x) "
          f"{'OK' if ratio <= TARGET else 'OVER'}")
    print(f"{'':<26} inline PNG render {png_only * 1e3:7.1f} ms | change+PNG "
          f"{statistics.median(t_png) * 1e3:7.1f} ms | ratio {ratio_png:4.2f}x")
    print(f"{'':<26} open pyplot figures: {n_before} before, {n_after} after {CHANGES} changes: "
          f"{'OK (constant)' if figs_ok else 'FAIL (grew)'}")
    return ok


def main(argv: list[str]) -> int:
    widgets = [(n, f) for n, f in discover() if not argv or n in argv]
    if not widgets:
        print("no make_* found in fampnb.widgets")
        return 1
    all_ok = True
    for name, fn in widgets:
        missing = needs_args(fn)
        if missing:
            print(f"{name:<26} skipped: needs arguments {missing}")
            continue
        try:
            all_ok &= bench(name, fn)
        except Exception as exc:  # noqa: BLE001 - one broken widget must not hide the others
            print(f"{name:<26} FAILED: {type(exc).__name__}: {exc}")
            all_ok = False
    print("all targets met" if all_ok else "some targets NOT met")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
