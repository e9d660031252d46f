"""Per-step cost of ``simulate(TorchGradScaler)`` against the real GradScaler cycle, same run.

Real: ``torch.amp.GradScaler("cpu")`` driving ``scale(loss).backward()``, ``step(opt)``,
``update()`` on a one-parameter model (SGD), overflow injected on every 7th step (inf in the
gradient), 10**4 steps after a warm-up.  Simulated: 10**6 steps of the same kind of pattern, in
both input modes (``grad_abs_max`` and ``found_inf``).  Target (issue 3): simulated per step
< 1/50 of real.  Prints the ratio; exits 1 if the target is missed.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from fampnb.scaler import TorchGradScaler, simulate

REAL_STEPS = 10_000
SIM_STEPS = 1_000_000
TARGET = 1 / 50


def real_per_step(steps: int) -> float:
    import torch

    w = torch.nn.Parameter(torch.ones(1))
    x = torch.ones(1)
    opt = torch.optim.SGD([w], lr=1e-3)
    scaler = torch.amp.GradScaler("cpu", growth_interval=100)
    inf = torch.tensor(float("inf"))

    def cycle(i: int) -> None:
        opt.zero_grad(set_to_none=True)
        loss = (w * x).sum()
        scaler.scale(loss).backward()
        if i % 7 == 0:
            w.grad.fill_(inf)
        scaler.step(opt)
        scaler.update()

    for i in range(200):  # warm-up (first optimizer step imports a lot)
        cycle(i)
    t0 = time.perf_counter()
    for i in range(steps):
        cycle(i)
    return (time.perf_counter() - t0) / steps


def sim_per_step(steps: int, mode: str) -> float:
    rng = np.random.default_rng(0)
    g = np.full(steps, 0.5)
    g[rng.random(steps) < 1 / 7] = np.inf
    policy = TorchGradScaler(growth_interval=100)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        if mode == "grad_abs_max":
            simulate(policy, g)
        else:
            simulate(policy, found_inf=np.isinf(g))
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs) / steps


def main() -> int:
    real = real_per_step(REAL_STEPS)
    print(f"real GradScaler cycle (torch, cpu): {real * 1e6:9.2f} us/step  ({REAL_STEPS} steps)")
    worst = 0.0
    for mode in ("grad_abs_max", "found_inf"):
        sim = sim_per_step(SIM_STEPS, mode)
        ratio = sim / real
        worst = max(worst, ratio)
        print(f"simulate(TorchGradScaler, {mode:<12}): {sim * 1e6:9.3f} us/step  "
              f"({SIM_STEPS} steps)  ratio sim/real = 1/{1 / ratio:.0f}")
    ok = worst < TARGET
    verdict = "OK" if ok else "MISSED"
    print(f"worst ratio 1/{1 / worst:.0f}  (target < 1/{1 / TARGET:.0f}): {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
