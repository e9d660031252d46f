"""Ratio of ``import fampnb`` to ``import numpy`` (fresh processes, median of several).

Target (issue 2): <= 1.3x, and ``import fampnb`` pulls in no matplotlib, ipywidgets or torch.
"import fampnb" here means what a user touches first: the package plus ``fampnb.formats``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 11
SNIPPETS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import fampnb (+formats)": "import fampnb, fampnb.formats",
}


def timed(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def main() -> None:
    for code in SNIPPETS.values():  # warm the OS file cache
        timed(code)
    samples: dict[str, list[float]] = {k: [] for k in SNIPPETS}
    for _ in range(RUNS):  # interleaved, so drift hits every snippet alike
        for name, code in SNIPPETS.items():
            samples[name].append(timed(code))
    med = {k: statistics.median(v) for k, v in samples.items()}
    for name, m in med.items():
        print(f"{name:<28} median {m * 1000:7.1f} ms  ({RUNS} fresh processes)")
    ratio = med["import fampnb (+formats)"] / med["import numpy"]
    print(f"ratio import fampnb / import numpy = {ratio:.2f}x  (target <= 1.3x)")
    heavy = subprocess.run(
        [sys.executable, "-c", "import sys, fampnb, fampnb.formats; print(sorted(m for m in "
         "('matplotlib', 'ipywidgets', 'torch') if m in sys.modules))"],
        capture_output=True, text=True, check=True).stdout.strip()
    print(f"heavy modules imported: {heavy}")


if __name__ == "__main__":
    main()
