"""Cost of the gradient-histogram hook on a training step of the demo model, measured side by side.

Target (issue 6): recording the exact gradient histogram (``GradHistogramRecorder`` attached to the
optimizer, every step) adds <= 10% to a training step of the demo model
(``fampnb.probe.demo_problem``).  Two steps are timed, both against the target: the Adam step the
demo model is trained with (``demo_problem``, and notebook 07, which records it on every step), and
a plain SGD step (no momentum: the cheapest step there is, so the hook's worst case, and what the
GPU record in docs/gpu-results.md timed).  Plain and hooked steps are interleaved in blocks, so
drift hits both alike; each ratio is the median over blocks of a hooked block against the plain
block of the same optimizer next to it.  Runs on CUDA when present (synchronised per block), else
on the CPU, and says which.  The recorder does no host copy inside the step: the table stays on
the device until ``result()``.  It bins staged steps in batches (``fampnb.probe.recorder``), so each
hooked block ends with ``rec.flush()`` inside the timed region: a block pays for binning every step
it recorded, never for another block's.  On the CPU the ratio of this thread's CPU time is printed
too: on a shared machine it is not inflated by other jobs preempting the benchmark.

A reference line, "copy only", times a hook that does nothing but the recorder's per-step work
before binning: list the gradients and copy them into a staging slot (one ``_foreach_copy_``).  No
histogram is made; it shows how much of the budget that floor takes on the machine at hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

BLOCKS = 21
STEPS = 40


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=0, metavar="H",
                    help="also time a wider MLP (32-H-H-8, same data) to see how the hook scales")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench_probe: torch is not installed (pip install 'fampnb[torch]'); skipped")
        return 0
    from fampnb.probe import demo_problem, resolve_device

    dev = resolve_device()
    if dev.type == "cpu":
        torch.set_num_threads(1)  # a shared 2-core box: one thread gives stable, comparable times
    model, loss_fn, (x, y) = demo_problem(dev)
    _bench(torch, dev, model, loss_fn, x, y, "demo model")
    if args.hidden > 0:
        h = args.hidden
        wide = torch.nn.Sequential(torch.nn.Linear(32, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                                   torch.nn.ReLU(), torch.nn.Linear(h, 8)).to(dev)
        print()
        _bench(torch, dev, wide, loss_fn, x, y, f"wider MLP (H={h})")
    return 0


def _bench(torch: Any, dev: Any, model: Any, loss_fn: Any, x: Any, y: Any, title: str) -> None:
    from fampnb.probe import GradHistogramRecorder

    opts = {"Adam": torch.optim.Adam(model.parameters(), lr=1e-3),   # as the demo trains
            "SGD": torch.optim.SGD(model.parameters(), lr=1e-4)}     # the cheapest step
    rec = GradHistogramRecorder(model)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    params = list(model.parameters())
    slot = [torch.empty_like(q) for q in params]

    def copy_only(*_: Any) -> None:  # the recorder's per-step work without binning (reference)
        torch._foreach_copy_(slot, [q.grad for q in params])

    def block(opt: Any, how: int | str | None) -> tuple[float, float]:
        """Time STEPS steps: plain (None), recorder every ``how``-th step, or "copy" only."""
        handle = opt.register_step_pre_hook(copy_only) if how == "copy" else None
        if isinstance(how, int):
            rec.attach(opt, every=how)
        try:
            sync()
            t0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(STEPS):
                opt.zero_grad(set_to_none=True)
                loss_fn(model(x), y).backward()
                opt.step()
            if isinstance(how, int):
                rec.flush()  # bin what this block staged, inside the timed region
            sync()
            return (time.perf_counter() - t0) / STEPS, (time.thread_time() - c0) / STEPS
        finally:
            rec.detach()
            if handle is not None:
                handle.remove()

    hooks: dict[str, int | str | None] = {"plain": None, "hook every step": 1,
                                          "hook every 10th step": 10,
                                          "copy only (reference)": "copy"}
    variants = [(o, h) for o in opts for h in hooks]
    times: dict[tuple[str, str], list[tuple[float, float]]] = {v: [] for v in variants}
    for _ in range(3):  # warm-up, every variant
        for o, h in variants:
            block(opts[o], hooks[h])
    for b in range(BLOCKS):  # interleaved blocks, the order reversed every other round
        for o, h in variants if b % 2 == 0 else variants[::-1]:
            times[(o, h)].append(block(opts[o], hooks[h]))
    where = "cuda" if dev.type == "cuda" else "cpu, 1 thread (CPU — not a GPU measurement)"
    n = sum(q.numel() for q in params)
    print(f"device: {where}; {title}, {n} parameters, batch {x.shape[0]}")
    print("(Adam: the step the demo model trains with; SGD: a plain step, the cheapest there is, "
          "so the hook's worst case)")
    for o in opts:
        plain = times[(o, "plain")]
        for h in hooks:
            med = statistics.median(t[0] for t in times[(o, h)])
            line = f"{o} step, {h:<22} median {med * 1e6:9.1f} us"
            if h != "plain":
                ratio = statistics.median(b[0] / a[0] for a, b in zip(plain, times[(o, h)]))
                line += f"   ratio to plain {ratio:.3f}x"
                if title == "demo model" and hooks[h] != "copy":
                    line += " (target <= 1.10x)"
                if dev.type == "cpu":
                    cpu = statistics.median(b[1] / a[1] for a, b in zip(plain, times[(o, h)]))
                    line += f"; CPU-time ratio {cpu:.3f}x"
            print(line)
    print(f"({BLOCKS} interleaved blocks x {STEPS} steps per variant; recorded {rec.steps} steps, "
          f"histogram table kept on {rec.result().device} until read)")
    if dev.type == "cuda":
        print(_host_syncs(torch, rec, opts["SGD"], lambda: loss_fn(model(x), y).backward()))


def _host_syncs(torch: Any, rec: Any, opt: Any, backward: Callable[[], None]) -> str:
    """On CUDA: run plain, then hooked steps (staging and binning included) with torch's sync
    debug mode set to "error", so any device-to-host copy or synchronisation in a step raises."""
    steps = 2 * rec._slots + 1 if rec._slots > 1 else 3  # crosses at least one binning
    for hooked in (False, True):
        if hooked:
            rec.attach(opt, every=1)
        try:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
            for _ in range(steps):
                opt.zero_grad(set_to_none=True)
                backward()
                opt.step()
            rec.flush()
        except RuntimeError as exc:
            where = "hooked" if hooked else "plain (no hook)"
            return f"host synchronisation inside a {where} step: {str(exc).splitlines()[0]}"
        finally:
            torch.cuda.set_sync_debug_mode("default")
            rec.detach()
    return (f"{steps} plain and {steps} hooked steps (binning included) ran under "
            f"torch.cuda.set_sync_debug_mode('error'): no host copy or synchronisation in a step")


if __name__ == "__main__":
    sys.exit(main())
