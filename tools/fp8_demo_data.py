"""Regenerate ``fampnb/data/fp8/demo.npz``: notebook 07's demo model as data for notebook 09.

Notebook 09 must run without torch, and its checked outputs must not depend on whether torch is
there, so the tensors it scales are recorded once, here, with torch on the CPU:
``probe.demo_problem()`` (the MLP of notebook 07, after its 40 fp32 Adam warm-up steps), then

- ``grad/<name>``: every parameter's gradient of one forward/backward (float32, 6,792 values);
- ``act/<name>``: the input of each Linear layer in that forward (the activations fp8 would cast);
- ``trace/grad_amax``: the amax of all gradients at each of ``STEPS`` further Adam steps (one per
  step, float32), the per-step amax sequence a delayed-scaling recipe sees.

``tests/test_scaling.py`` checks the shipped file against a fresh run when torch is installed.
Usage: ``python tools/fp8_demo_data.py [OUT]`` (default: the packaged file).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

STEPS = 96
DEFAULT = Path(__file__).resolve().parent.parent / "fampnb" / "data" / "fp8" / "demo.npz"


def record(steps: int = STEPS) -> dict[str, np.ndarray]:
    """The arrays of ``demo.npz``, computed now (torch, CPU)."""
    import torch

    from fampnb import probe

    model, loss_fn, (x, y) = probe.demo_problem(device="cpu")
    acts: dict[str, np.ndarray] = {}
    hooks = [m.register_forward_pre_hook(
        lambda mod, inp, name=name: acts.__setitem__(name, inp[0].detach().numpy().copy()))
        for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    loss_fn(model(x), y).backward()
    for h in hooks:
        h.remove()
    out = {f"grad/{n}": p.grad.detach().numpy().astype(np.float32).copy()
           for n, p in model.named_parameters()}
    out.update({f"act/{n}.input": a.astype(np.float32) for n, a in acts.items()})
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    amax = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        amax.append(max(float(p.grad.abs().max()) for p in model.parameters()))
        opt.step()
    out["trace/grad_amax"] = np.array(amax, np.float32)
    return out


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **record())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
