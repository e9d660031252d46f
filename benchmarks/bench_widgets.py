"""A widget change costs one draw: change / one full Agg draw, for every ``make_*`` in ``fampnb.widgets``.

For each widget that can be built without arguments (the others are listed as skipped), this
script makes CHANGES control changes, cycling through every slider / toggle / dropdown the widget
has.  A *change* is what the reader waits for under the inline backend (``MPLBACKEND=Agg``, the
path every notebook takes without ``%matplotlib widget``): setting the control's value, which runs
the callback (recompute + ``update_*`` + ``LiveFigure.refresh()``: one Agg draw and the PNG
encoded from its buffer, shown in the widget's ``Image``).  Each change is followed by one full
``fig.canvas.draw()`` of the same figure (with its constrained layout: a change skips the layout
pass when what the layout reads is unchanged, a full draw does not), timed on its own, so that
changes and draws are interleaved and see the same machine load.

Printed per widget: median change, median draw, their ratio next to the target (change <= 1.2x
one draw), the number of draws a change made (``draw_event`` count: 1 expected; the old
``bbox_inches="tight"`` refresh made 2) and in how many changes the layout pass ran.  It also
checks that the number of open pyplot figures is the same before and after the changes (no new
figure per change).  Exit status 1 when a widget
misses its target or a check fails.

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
from matplotlib.layout_engine import ConstrainedLayoutEngine  # noqa: E402

#: changes timed per widget (median), each followed by one timed draw
CHANGES = 20
#: target: one change <= TARGET x one full Agg draw of the widget's figure
TARGET = 1.2


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


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(name: str, make: Any) -> bool:
    """Benchmark one widget; True when its target and checks pass."""
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):  # the inline refresh prints a repr outside a kernel
        ui, controls, artists = make()
    fig = find_figure(artists)
    if fig is None:
        print(f"{name:<26} skipped: no matplotlib figure in its artists")
        return True
    if type(fig.canvas) is FigureCanvasBase:
        FigureCanvasAgg(fig)  # a plain Figure without a canvas: give it a real one to draw on
    moves = [(k, v) for k, c in controls.items() if (v := value_cycle(c))]
    if not moves:
        print(f"{name:<26} skipped: no slider/toggle/dropdown to move")
        return True
    plan = [(k, v) for _, (k, v) in zip(range(CHANGES + 1), itertools.cycle(
        [(k, v) for k, vals in moves for v in vals]))]
    draws = [0]
    fig.canvas.mpl_connect("draw_event", lambda _event: draws.__setitem__(0, draws[0] + 1))

    n_before = len(plt.get_fignums())
    t_change, t_draw, per_change, text_only, laid_out = [], [], [], 0, 0
    with contextlib.redirect_stdout(quiet):
        fig.canvas.draw()  # warm caches (fonts, text layout) before timing anything
        for key, value in itertools.islice(itertools.cycle(plan), 10 * len(plan)):
            if len(t_change) == CHANGES:
                break
            if controls[key].value == value:
                continue  # not a change: the control already has this value
            draws[0] = 0
            dt = timed(lambda: setattr(controls[key], "value", value))
            if draws[0] == 0:
                text_only += 1  # a control that changes text only (no figure to wait for)
                continue
            t_change.append(dt)
            per_change.append(draws[0])
            engine = fig.get_layout_engine()
            laid_out += isinstance(engine, ConstrainedLayoutEngine)
            # the figure that change produced, drawn once more in full: with its constrained
            # layout, as every draw of it ran before a change could skip the layout pass
            fig.set_layout_engine("constrained")
            t_draw.append(timed(fig.canvas.draw))
            fig.set_layout_engine(engine)
    n_after = len(plt.get_fignums())
    if not t_change:
        print(f"{name:<26} FAILED: no change of {[k for k, _ in moves]} redrew the figure")
        return False

    change, draw = statistics.median(t_change), statistics.median(t_draw)
    # each change against the draw of the figure it produced, right after it: the ratio sees
    # the same load and the same picture (a collapse run has more markers than a calm one)
    ratio = statistics.median(c / d for c, d in zip(t_change, t_draw))
    figs_ok = n_before == n_after
    one_draw = all(n == 1 for n in per_change)
    ok = figs_ok and one_draw and ratio <= TARGET
    keys = ",".join(k for k, _ in moves)
    print(f"{name:<26} controls {keys}" + (f" ({text_only} text-only changes not timed)"
                                           if text_only else ""))
    print(f"{'':<26} change/draw {ratio:4.2f}x (target <= {TARGET}x) "
          f"{'OK' if ratio <= TARGET else 'OVER'} | one change {change * 1e3:6.1f} ms, "
          f"one draw {draw * 1e3:6.1f} ms (medians of {len(t_change)}) | draws per change "
          f"{min(per_change)}-{max(per_change)} {'OK' if one_draw else 'FAIL (expected 1)'} | "
          f"layout pass in {laid_out} of {len(t_change)} changes")
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
