"""``mx_quantize`` against torchao's reference ``to_mx`` on 2**24 float32 values, side by side.

Prints the median time of torchao's eager ``to_mx(x, float8_e4m3fn, 32)`` (FLOOR mode, CPU)
divided by the median time of ``fampnb.scaling.mx_quantize(x, "fp8_e4m3", 32)`` on the same
values (the numpy array and the torch tensor share memory), the two measured interleaved, round by
round, in this run; then the peak extra memory of ``mx_quantize`` (tracemalloc, which numpy reports
to; its result included) over the input's size.  Targets (issue 20): ratio > 1 (faster than
torchao), memory <= 3x the input.  Exit status 1 when a target is missed, 2 when torch/torchao are
missing.  Not a timed test: read the ratio, not the seconds.  Run from anywhere:
``python benchmarks/bench_scaling.py [log2_size]`` (default 24); it benchmarks this checkout.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's fampnb
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers of bench_formats

import numpy as np  # noqa: E402
from bench_formats import REPEATS, gradient_like, median_times, peak_extra  # noqa: E402

from fampnb.scaling import mx_quantize  # noqa: E402

RATIO_TARGET = 1.0
MEMORY_TARGET = 3.0

def main(argv: list[str]) -> int:
    k = int(argv[0]) if argv else 24
    logging.disable(logging.WARNING)  # torchao logs each GPU kernel it cannot load on a CPU
    try:
        import torch
        from torchao.prototype.mx_formats.mx_tensor import to_mx
    except ImportError as exc:
        print(f"bench_scaling: needs torch and torchao ({exc.name} missing): "
              ".venv/bin/pip install torch==2.13.0 torchao==0.18.0")
        return 2
    finally:
        logging.disable(logging.NOTSET)
    x = gradient_like(1 << k)
    xt = torch.from_numpy(x)
    ours = mx_quantize(x)
    scale, data = to_mx(xt, torch.float8_e4m3fn, 32)
    same = np.array_equal(scale.view(torch.uint8).numpy().astype(np.int16) - 127,
                          ours.scale_exponents)
    t = median_times({"fampnb": lambda: mx_quantize(x),
                      "torchao": lambda: to_mx(xt, torch.float8_e4m3fn, 32)})
    ratio = t["torchao"] / t["fampnb"]
    extra = peak_extra(lambda: mx_quantize(x)) / x.nbytes
    ok_t, ok_m = ratio > RATIO_TARGET, extra <= MEMORY_TARGET
    print(f"mx_quantize on 2^{k} float32 values (e4m3, blocks of 32; same exponents as torchao: "
          f"{same}); torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"  torchao to_mx / mx_quantize time: {ratio:.2f}x  (target > {RATIO_TARGET:g}x: "
          f"{'met' if ok_t else 'MISSED'}; medians {t['fampnb'] * 1e3:.0f} ms vs "
          f"{t['torchao'] * 1e3:.0f} ms, {REPEATS} interleaved rounds)")
    print(f"  mx_quantize peak extra memory: {extra:.2f}x the input  (target <= "
          f"{MEMORY_TARGET:g}x: {'met' if ok_m else 'MISSED'})")
    return 0 if ok_t and ok_m and same else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
