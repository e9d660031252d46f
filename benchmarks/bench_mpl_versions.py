"""One widget draw under two matplotlib releases, side by side in one run.

Each interpreter given (``--python``, two or more: environments with different matplotlib
releases and fampnb importable) builds every widget figure of ``fampnb.widgets`` (as
``bench_widgets.py`` finds them) and times ``fig.canvas.draw()`` of each, with its constrained
layout and without it (the draw a slider move makes when the layout is kept).  The interpreters
take turns, ROUNDS times, so a slow spell of this shared machine hits both alike; printed per
widget: the median draw of each release and the ratio to the first interpreter's.  This is the
measurement behind the matplotlib pin of ``requirements/lab.in``.

    .venv/bin/python benchmarks/bench_mpl_versions.py --python .venv/bin/python \\
        --python .venv-latest/bin/python [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

#: run in each interpreter: one round of draws of every widget figure, as JSON
CHILD = r"""
import json, sys, time, io, contextlib
import matplotlib
matplotlib.use("Agg")
sys.path.insert(0, sys.argv[1])
from bench_widgets import discover, find_figure, needs_args
out = {"version": matplotlib.__version__, "draws": {}}
for name, fn in discover():
    if needs_args(fn):
        continue
    with contextlib.redirect_stdout(io.StringIO()):
        fig = find_figure(fn())
    if fig is None:
        continue
    times = {}
    for mode in ("constrained", "none"):
        fig.set_layout_engine(mode)
        fig.canvas.draw()
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            fig.canvas.draw()
            ts.append(time.perf_counter() - t0)
        times[mode] = sorted(ts)[2]
    out["draws"][name] = times
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", required=True, help="an interpreter (2 or more)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    if len(args.python) < 2:
        ap.error("give at least two --python interpreters")
    runs: dict[str, list[dict]] = {p: [] for p in args.python}
    for _ in range(args.rounds):
        for py in args.python:
            res = subprocess.run([py, "-c", CHILD, str(ROOT)], capture_output=True, text=True)
            if res.returncode:
                raise SystemExit(f"{py} failed: {res.stderr.strip().splitlines()[-1:]}")
            runs[py].append(json.loads(res.stdout.strip().splitlines()[-1]))
    versions = {py: r[0]["version"] for py, r in runs.items()}
    base = args.python[0]
    print("median draw (ms) per matplotlib release; ratio to matplotlib "
          f"{versions[base]}; {args.rounds} alternating rounds")
    head = "".join(f"{versions[py]:>24}" for py in args.python)
    print(f"{'widget':<26}{'layout':<12}{head}")
    for name in runs[base][0]["draws"]:
        for mode, label in (("constrained", "constrained"), ("none", "kept")):
            med = {py: statistics.median(r["draws"][name][mode] for r in runs[py]) * 1e3
                   for py in args.python}
            cells = "".join(f"{med[py]:>12.1f} ({med[py] / med[base]:4.2f}x)  " for py in args.python)
            print(f"{name:<26}{label:<12}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
