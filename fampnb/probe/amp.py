"""Real ``torch.autocast`` + ``torch.amp.GradScaler`` next to ``fampnb.scaler``, and the histogram demo.

``amp_decay(device, steps)``: a tiny model whose gradients overflow fp16 at the initial scale,
trained with the real scaler; its scale sequence next to ``fampnb.scaler.simulate`` for the same
overflow pattern, and the same run in bf16.  ``demo_problem(device)``: the small model whose
gradients notebook 07 histograms.  torch is imported inside the functions (internal to
``fampnb.probe``; re-exported there).
"""

from __future__ import annotations

import math
from typing import Any

from .device import _label, _no_torch, _torch, measurement_label, resolve_device

__all__ = ["amp_decay", "demo_problem", "AMP_INIT_SCALE", "AMP_GROWTH_INTERVAL"]

AMP_INIT_SCALE = 2.0 ** 16
AMP_GROWTH_INTERVAL = 2


def _amp_model(torch: Any, dev: Any) -> tuple[Any, Any, Any]:
    """Tiny MLP (8-16-1, 161 parameters) and a batch whose fp16 weight gradients overflow at
    scale 2**15 and above but fit at 2**14 (so the scaler settles into a saw-tooth).  Seeded with a
    local generator: no global RNG state is touched."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 8, generator=g) * 2
    y = torch.randn(16, 1, generator=g) * 2
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    gw = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gw) * 0.5)
    return model.to(dev), x.to(dev), y.to(dev)


def _amp_run(torch: Any, dev: Any, dtype: Any, steps: int, scaler_on: bool) -> dict[str, Any]:
    model, x, y = _amp_model(torch, dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(dev.type, init_scale=AMP_INIT_SCALE,
                                  growth_interval=AMP_GROWTH_INTERVAL, enabled=scaler_on)
    scales, found, losses, gmax = [], [], [], []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=dtype):
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
        scales.append(float(scaler.get_scale()) if scaler_on else 1.0)
        scaler.scale(loss).backward()
        grads = [p.grad for p in model.parameters()]
        finite = torch.stack([torch.isfinite(gr).all() for gr in grads]).all()
        amax = torch.stack([gr.abs().max() for gr in grads]).max()
        found.append(not bool(finite))
        gmax.append(float(amax) / scales[-1])
        losses.append(float(loss.detach()))
        scaler.step(opt)
        scaler.update()
    return {"scales": scales, "found_inf": found, "losses": losses,
            "final_scale": float(scaler.get_scale()) if scaler_on else 1.0,
            "grad_abs_max": gmax}


def amp_decay(device: Any = None, steps: int = 8) -> dict[str, Any]:
    """Real ``torch.autocast`` + ``torch.amp.GradScaler`` on the device, next to the simulator.

    A tiny model (``_amp_model``) trains ``steps`` SGD steps with fp16 autocast and
    ``GradScaler(init_scale=2**16, growth_interval=2)``: its weight gradients exceed 65504 at the
    start scale, so the scaler backs off until they fit, then grows and backs off again.  Returned:
    ``scales`` (the real scale in force at each step), ``found_inf`` (non-finite gradients, checked
    independently of the scaler), ``simulated`` (``fampnb.scaler.simulate`` of
    ``TorchGradScaler`` with the same settings on that ``found_inf`` pattern), ``match``,
    ``losses``,
    ``grad_abs_max`` (unscaled; inf on overflowed steps), and ``bf16``: the same run under bf16
    autocast without a scaler (``scales`` all 1.0; ``found_inf`` should be all False).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    settings = {"init_scale": AMP_INIT_SCALE, "growth_factor": 2.0, "backoff_factor": 0.5,
                "growth_interval": AMP_GROWTH_INTERVAL}
    torch = _torch()
    if torch is None:
        return _no_torch(steps=steps, settings=settings, scales=None, found_inf=None,
                         simulated=None, match=None, bf16=None)
    dev = resolve_device(device)
    label = _label(dev)
    fp16 = _amp_run(torch, dev, torch.float16, steps, True)
    try:
        bf16: dict[str, Any] = _amp_run(torch, dev, torch.bfloat16, steps, False)
        bf16.pop("scales")
        bf16.pop("final_scale")
    except RuntimeError as exc:  # e.g. a GPU without bf16 support
        bf16 = {"error": str(exc).splitlines()[0][:200]}
    simulated, sim_note = _simulate(fp16["found_inf"], settings)
    return {
        "device": label, "available": True, "measurement": measurement_label(label),
        "torch": torch.__version__, "steps": steps, "settings": settings, **fp16,
        "simulated": simulated,
        "match": None if simulated is None else simulated == fp16["scales"],
        "simulator_note": sim_note, "bf16": bf16,
    }


def _simulate(found_inf: list[bool], settings: dict[str, Any]) -> tuple[list[float] | None, str]:
    try:
        from .. import scaler
    except ImportError as exc:  # the simulator module is optional for the probe
        return None, f"fampnb.scaler is not available: {exc}"
    trace = scaler.simulate(scaler.TorchGradScaler(**settings), found_inf=found_inf)
    note = "fampnb.scaler.simulate(TorchGradScaler, found_inf=...)"
    return [float(s) for s in trace.scales], note


# ------------------------------------------------------------------------------------ demo
def demo_problem(device: Any = None, seed: int = 0, warmup_steps: int = 40) -> tuple[Any, Any, Any]:
    """The gradient-histogram demo: ``(model, loss_fn, batch)`` on the device.

    A small MLP (32-64-64-8, ReLU, 6,792 parameters) regressing a fixed random "teacher" on 256
    synthetic samples; targets are small (|y| <= 0.02) and the output layer starts small, as is
    common, so the loss gradients are small.  It is trained ``warmup_steps`` Adam steps in fp32, so
    its gradients are mid-training ones, spread over ~24 octaves with a tail below fp16's 2**-24.
    Seeded with a local generator (the global RNG is untouched); milliseconds on a CPU.
    """
    import torch

    dev = resolve_device(device)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 32, generator=g)
    teacher = torch.randn(32, 8, generator=g)
    y = torch.tanh(x @ teacher / 6) * 0.02
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 8))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            fan_in = p.shape[-1] if p.dim() > 1 else 64
            p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in) * (1e-2 if i >= 4 else 1))
    model = model.to(dev)
    batch = (x.to(dev), y.to(dev))
    loss_fn = torch.nn.functional.mse_loss
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(warmup_steps):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(batch[0]), batch[1]).backward()
        opt.step()
    model.zero_grad(set_to_none=True)
    return model, loss_fn, batch
