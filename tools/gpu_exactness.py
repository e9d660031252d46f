"""The on-device gradient histogram against numpy on the host, on whatever device is present.

Trains the demo model (``fampnb.probe.demo_problem``) for a number of steps with the loss scaled by
a power of two, records every step's gradients three ways — the staged recorder (binned in batches),
the per-step recorder (``buffer_elems=0``) and ``record_exact`` (frexp + bucketize) — and compares
each table with ``GradHistogram.from_array`` of the same gradients copied to the host (outside the
recorders, for the check only).  Prints one line per way; exit status 1 if any table differs.
Part of ``tools/gpu_check.sh``; on the CPU it is what tests/test_probe.py checks too.
"""

from __future__ import annotations

import sys

import numpy as np


def main() -> int:
    import torch

    from fampnb.probe import GradHistogram, GradHistogramRecorder, demo_problem

    model, loss_fn, (x, y) = demo_problem()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    staged = GradHistogramRecorder(model)
    per_step = GradHistogramRecorder(model, buffer_elems=0)
    exact = GradHistogramRecorder(model)
    host = []
    steps = 2 * staged._slots + 7  # crosses binnings and leaves some pending for result()
    for i in range(steps):
        opt.zero_grad(set_to_none=True)
        (loss_fn(model(x), y) * 2.0 ** (i % 24 - 12)).backward()  # spread over 24 octaves
        staged.record()
        per_step.record()
        exact.record_exact()
        host.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]).cpu().numpy())
        opt.step()
    ref = GradHistogram.from_array(np.concatenate(host)).table
    bad = 0
    print(f"device: {staged.label}; {steps} steps of the demo model, {sum(a.size for a in host)} "
          f"gradient values")
    for name, rec in (("staged recorder", staged), ("per-step recorder", per_step),
                      ("record_exact", exact)):
        table = rec.result().table
        same = bool(np.array_equal(table, ref))
        bad += not same
        print(f"  {name:<18} table == numpy from_array on the host: {same}"
              + ("" if same else f" ({int(np.abs(table - ref).sum())} counts differ)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
