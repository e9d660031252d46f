"""Cost of ``fampnb.probe.watch`` on a training step of notebook 08's demo model, side by side.

Targets (issue 19): watching every module every step costs <= 1.3x a plain training step on the
CPU; ``every=10`` <= 1.05x.  The step is notebook 08's: the tiny attention block of
``fampnb.hazard_demos.demo_model`` in fp16, MSE loss, SGD, one batch (``demo_batch``).  A block is
10 steps by default (``--steps``): one whole ``every=10`` cycle, its watched step, the hooks taken
off after it and put back at its end, and nine steps without hooks; 90 blocks per variant
(``--blocks``; a block's CPU time varies by several per cent on this VM, so the median of a
few-per-cent cost needs many pairs).  Plain and watched blocks are interleaved (the order rotated
and reversed round by round, so that each variant runs before and after each other equally
often) so that drift hits all alike; each ratio
is the median over blocks of a watched block against the plain block next to it.  A watched
block includes its ``w.step(loss)`` calls (the one host read per step).  On the CPU the ratio of
this thread's CPU time is printed too, and it is the one judged against the targets there: on a
shared machine other jobs preempting the benchmark inflate wall time (a plain step's wall time
can be several times its CPU time), not this thread's CPU time.  On CUDA the wall-time ratio is
judged.  Beside it, the ratio of the fastest blocks of each variant (noise only ever adds
time, so each variant's fastest block is its cost with the least noise in it; not judged).  Runs
on CUDA when present, else on the CPU, and says which.  Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

BLOCKS = 90
STEPS = 10
TARGETS = {1: 1.30, 10: 1.05}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=BLOCKS, help="interleaved blocks per variant")
    ap.add_argument("--steps", type=int, default=STEPS,
                    help="training steps per block (10: one every=10 cycle, a watched step and "
                         "nine without hooks)")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench_watch: torch is not installed (pip install 'fampnb[torch]'); skipped")
        return 0
    from fampnb.hazard_demos import demo_batch, demo_model
    from fampnb.probe import resolve_device, watch

    dev = resolve_device()
    if dev.type == "cpu":
        torch.set_num_threads(1)  # a shared 2-core box: one thread gives stable, comparable times
    model = demo_model().to(dev)
    x, y = (t.to(dev) for t in demo_batch())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    mse = torch.nn.functional.mse_loss

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def block(every: int | None) -> tuple[float, float]:
        w = watch(model, every=every) if every else None
        if w is not None:
            w.__enter__()
        try:
            sync()
            t0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(args.steps):
                opt.zero_grad(set_to_none=True)
                loss = mse(model(x).float(), y.float())
                loss.backward()
                opt.step()
                if w is not None:
                    w.step(loss)
            sync()
            return (time.perf_counter() - t0) / args.steps, (time.thread_time() - c0) / args.steps
        finally:
            if w is not None:
                w.close()
                assert w.first is None, f"the demo model must stay finite, got {w.first}"

    variants: list[int | None] = [None, 1, 10]
    times: dict[int | None, list[tuple[float, float]]] = {v: [] for v in variants}
    for _ in range(2):  # warm-up
        for v in variants:
            block(v)
    orders = [variants[i:] + variants[:i] for i in range(len(variants))]
    orders += [o[::-1] for o in orders]  # every variant before and after every other, alike
    for b in range(args.blocks):
        for v in orders[b % len(orders)]:
            times[v].append(block(v))
    where = "cuda" if dev.type == "cuda" else "cpu, 1 thread (CPU — not a GPU measurement)"
    n = sum(p.numel() for p in model.parameters())
    mods = len(list(model.modules()))
    print(f"device: {where}; notebook 08 demo model, {n} parameters, {mods} modules, fp16, "
          f"batch {tuple(x.shape)}, SGD")
    plain = times[None]
    med = statistics.median(t[0] for t in plain)
    line = f"plain step                 median {med * 1e6:9.1f} us"
    if dev.type == "cpu":
        line += f"   (CPU time {statistics.median(t[1] for t in plain) * 1e6:.1f} us)"
    print(line)
    ok = True
    for every, target in TARGETS.items():
        ts = times[every]
        med = statistics.median(t[0] for t in ts)
        ratio = statistics.median(b[0] / a[0] for a, b in zip(plain, ts))
        label = "watch every step" if every == 1 else f"watch every={every}"
        line = (f"{label:<26} median {med * 1e6:9.1f} us   ratio to plain {ratio:.3f}x "
                f"(target <= {target:.2f}x)")
        judged = ratio
        if dev.type == "cpu":
            cpu = statistics.median(b[1] / a[1] for a, b in zip(plain, ts))
            line += f"; CPU-time ratio {cpu:.3f}x"
            judged = cpu  # a shared CPU: preemption inflates wall time, not this thread's time
            # noise only adds time: the fastest block of each variant is its cost without it
            fast = min(t[1] for t in ts) / min(t[1] for t in plain)
            line += f" (fastest blocks: {fast:.3f}x)"
        met = judged <= target
        ok &= met
        print(line + ("" if met else "   MISSED"))
    print(f"({args.blocks} interleaved blocks x {args.steps} steps per variant)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
