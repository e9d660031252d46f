"""Cost of ``Format.classify`` on 2**25 float32 values, as ratios measured side by side.

Prints, for FP16 and BF16, the median time of ``fmt.classify(x)`` over a few rounds divided by
the median time of one ``np.abs(x)`` pass (the memory-bound floor: read 4 bytes, write 4 bytes per
element; also shown into a preallocated buffer, which skips the page faults of a fresh result)
and by the real cast ``x.astype(fmt.dtype)``, all measured interleaved in this run on the same
array; then the peak extra memory of ``classify`` (tracemalloc, which numpy reports to) relative
to the input size.  Targets (issue 2): <= 5x np.abs, <= 2x the input.  Not a timed test: timings on
shared machines are noisy, so read the ratios, not the seconds.  Run from anywhere:
``python benchmarks/bench_formats.py [log2_size]`` (default 25); it benchmarks this checkout.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's fampnb

import numpy as np  # noqa: E402

from fampnb.formats import BF16, FP16  # noqa: E402

REPEATS = 5


def median_times(fns: dict[str, Callable[[], Any]], repeats: int = REPEATS) -> dict[str, float]:
    """Median wall time (s) of each ``fn()``; the functions run interleaved, round by round, so
    that load from other processes hits all of them alike (results are dropped at once)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def peak_extra(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated while ``fn()`` runs, its result included (tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return peak - base


def gradient_like(n: int) -> np.ndarray:
    """``n`` float32 values spread over ~50 binades, signs mixed, some 0/inf/NaN (seeded)."""
    rng = np.random.default_rng(20260401)
    x = rng.standard_normal(n, dtype=np.float32)
    x *= np.exp2(rng.uniform(-30.0, 20.0, n)).astype(np.float32)
    x[:: 1 << 12] = 0.0
    x[1 :: 1 << 16] = np.inf
    x[2 :: 1 << 16] = np.nan
    return x


def main(log2_n: int = 25) -> None:
    x = gradient_like(1 << log2_n)
    print(f"input: 2**{log2_n} float32 values ({x.nbytes / 2**20:.0f} MiB), "
          f"numpy {np.__version__}, median of {REPEATS}")
    cold = {}
    for fmt in (FP16, BF16):  # the first call finds the thresholds with real casts
        t0 = time.perf_counter()
        fmt.classify(x[:1])
        cold[fmt.name] = time.perf_counter() - t0
    with np.errstate(over="ignore"):
        buf = np.empty_like(x)
        t = median_times({
            "abs": lambda: np.abs(x), "abs out": lambda: np.abs(x, out=buf),
            "cast fp16": lambda: x.astype(FP16.dtype), "fp16": lambda: FP16.classify(x),
            "cast bf16": lambda: x.astype(BF16.dtype), "bf16": lambda: BF16.classify(x),
        })
    t_abs = t["abs"]
    t_out = t["abs out"]
    print(f"  np.abs(x)            {t_abs * 1e3:8.1f} ms   (1.00x, the floor)")
    print(f"  np.abs(x, out=buf)   {t_out * 1e3:8.1f} ms   ({t_out / t_abs:5.2f}x np.abs)")
    for fmt in (FP16, BF16):
        t_cast, t_cls = t[f"cast {fmt.name}"], t[fmt.name]
        extra = peak_extra(lambda: fmt.classify(x))
        print(f"  x.astype({fmt.name})      {t_cast * 1e3:8.1f} ms   "
              f"({t_cast / t_abs:5.2f}x np.abs)")
        print(f"  {fmt.name.upper()}.classify(x)    {t_cls * 1e3:8.1f} ms   "
              f"({t_cls / t_abs:5.2f}x np.abs, {t_cls / t_out:5.2f}x np.abs(out=), "
              f"{t_cls / t_cast:5.3f}x the cast; first call {cold[fmt.name] * 1e3:.1f} ms)")
        print(f"  {fmt.name.upper()}.classify peak extra memory: {extra / 2**20:.1f} MiB = "
              f"{extra / x.nbytes:.3f}x the input")
    abs_extra = peak_extra(lambda: np.abs(x)) / x.nbytes
    print(f"  np.abs(x) peak extra memory: {abs_extra:.3f}x the input")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 25)
