"""The hazards of ``fampnb.hazards`` firing in real PyTorch ops on the CPU, and notebook 08's demo
model (torch imported inside the functions; ``import fampnb.hazard_demos`` never imports it).

Each ``*_demo()`` returns a dict of plain floats/lists: what torch computed in fp16 (or bf16)
next to the fix.  ``demo_model`` / ``demo_batch`` / ``train`` are the tiny attention block (2,081
parameters) that ``fampnb.probe.watch`` is shown on and benchmarked with.  Everything is seeded
with local generators (the global RNG is untouched) and runs in milliseconds.
"""

from __future__ import annotations

import math
from typing import Any

from .formats import FP16
from .hazards import exp_numbers, norm_numbers

__all__ = ["mask_demo", "exp_demo", "norm_demo", "adam_demo", "swamp_demo", "demo_model",
           "demo_batch", "train", "TORCH_HINT"]

TORCH_HINT = "these demos need torch: pip install torch (the CPU wheel is enough)"


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - exercised only without torch
        raise ModuleNotFoundError(TORCH_HINT) from exc
    return torch


def _l(t: Any) -> list[float]:
    return [float(v) for v in t.detach().float().flatten().tolist()]


def mask_demo() -> dict[str, Any]:
    """A row of 4 fp16 scores, all masked: two additive masks of ``finfo(fp16).min`` (a padding
    mask plus a causal mask) make -inf and softmax NaN; ``masked_fill`` with the dtype's min, once,
    gives a uniform row; the same additive masks with softmax in fp32 (as autocast runs it) too."""
    torch = _torch()
    h = torch.float16
    scores = torch.tensor([[-1.5, 0.25, 2.0, -0.5]], dtype=h)
    lo = torch.finfo(h).min
    pad = torch.full_like(scores, lo)
    added = scores + pad + pad
    once = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool), lo)
    fp32 = torch.softmax(scores.float() + pad.float() + pad.float(), dim=-1)
    return {"min": float(lo), "minus_1e9": float(torch.tensor(-1e9).to(h)),
            "added": _l(added), "softmax_added": _l(torch.softmax(added, dim=-1)),
            "softmax_once": _l(torch.softmax(once, dim=-1)), "softmax_fp32": _l(fp32)}


def exp_demo() -> dict[str, Any]:
    """``torch.exp`` in fp16 at the threshold of ``hazards.exp_numbers`` and a softmax written as
    ``exp(x) / exp(x).sum()`` next to ``torch.softmax`` (which subtracts the row max)."""
    torch = _torch()
    e = exp_numbers(FP16)
    x = torch.tensor([e["last_finite"], e["first_inf"]], dtype=torch.float16)
    row = torch.tensor([12.0, 0.0, -1.0], dtype=torch.float16)
    naive = torch.exp(row) / torch.exp(row).sum()
    return {"inputs": _l(x), "exp": _l(torch.exp(x)), "row": _l(row), "naive": _l(naive),
            "softmax": _l(torch.softmax(row, dim=-1))}


def norm_demo(spread: float = 300.0) -> dict[str, Any]:
    """LayerNorm of a fp16 row whose values sit ``spread`` from their mean: the statistics written
    out in fp16 (``((x - mean)**2).mean()``) are inf, ``F.layer_norm`` (fp32 statistics inside)
    is finite; a constant row with ``eps=1e-12`` (0 in fp16) gives 0/0."""
    torch = _torch()
    F = torch.nn.functional
    h = torch.float16
    x = torch.tensor([spread, -spread, spread / 2, -spread / 2], dtype=h)
    var = ((x - x.mean()) ** 2).mean()
    const = torch.full((4,), 3.0, dtype=h)
    eps = torch.tensor(1e-12, dtype=h)
    manual = (const - const.mean()) / torch.sqrt(((const - const.mean()) ** 2).mean() + eps)
    return {"row": _l(x), "variance_fp16": float(var),
            "manual": _l((x - x.mean()) / torch.sqrt(var + eps)),
            "layer_norm": _l(F.layer_norm(x, (4,))), "eps_fp16": float(eps),
            "constant_row_manual": _l(manual),
            "constant_row_layer_norm": _l(F.layer_norm(const, (4,), eps=1e-12)),
            "square_inf": norm_numbers(FP16)["square_inf"]}


def adam_demo(big_grad: float = 8192.0) -> dict[str, Any]:
    """``torch.optim.Adam`` (eps=1e-8) on fp16 parameters: a zero gradient gives 0/0 = NaN
    weights; a gradient of ``big_grad`` (a scaled gradient) makes the second moment inf, and the
    update silently 0 from then on; the same in fp32 state is fine."""
    torch = _torch()
    out: dict[str, Any] = {}
    for name, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
        p = torch.nn.Parameter(torch.ones(2, dtype=dtype))
        opt = torch.optim.Adam([p], lr=1e-3, eps=1e-8, foreach=False)
        p.grad = torch.zeros(2, dtype=dtype)
        opt.step()
        q = torch.nn.Parameter(torch.ones(2, dtype=dtype))
        opt2 = torch.optim.Adam([q], lr=1e-3, eps=1e-8, foreach=False)
        q.grad = torch.full((2,), big_grad, dtype=dtype)
        opt2.step()
        out[name] = {"zero_grad_weight": _l(p), "big_grad_v": _l(opt2.state[q]["exp_avg_sq"]),
                     "big_grad_weight": _l(q)}
    out["big_grad"] = big_grad
    return out


def swamp_demo(update: float = 1e-4, steps: int = 1000) -> dict[str, Any]:
    """A bf16 weight 1.0 plus ``update``, ``steps`` times, with torch: in bf16 it never moves;
    an fp32 master copy moves to ``1 + steps * update``."""
    torch = _torch()
    w16 = torch.ones(1, dtype=torch.bfloat16)
    w32 = torch.ones(1, dtype=torch.float32)
    for _ in range(steps):
        w16 += update
        w32 += update
    return {"bf16": float(w16), "fp32_master": float(w32), "bf16_from_master":
            float(w32.to(torch.bfloat16)), "expected": 1 + steps * update}


# ------------------------------------------------------------------------ the demo model
def demo_model(gain: float = 1.0, dtype: Any = "float16", seed: int = 0) -> Any:
    """The tiny attention block of notebook 08: ``embed`` (8->16), ``attn`` (``q``, ``k``, ``v``
    16->16, scores ``q·kᵀ/√16``, softmax), ``norm`` (LayerNorm), ``mlp`` (16->32, GELU, 32->16),
    ``head`` (16->1); 2,081 parameters.  ``gain`` multiplies the embedding weights: at 1 (and up to 48)
    every tensor stays inside fp16; at 64 the attention scores pass 65504 inside ``attn`` and
    its softmax turns them into NaN.  ``dtype`` is a torch dtype or its name."""
    torch = _torch()
    nn = torch.nn

    class Attention(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.d = d

        def forward(self, x: Any) -> Any:
            scores = self.q(x) @ self.k(x).transpose(-1, -2) / math.sqrt(self.d)
            return torch.softmax(scores, dim=-1) @ self.v(x)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(8, 16)
            self.attn = Attention(16)
            self.norm = nn.LayerNorm(16)
            self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
            self.head = nn.Linear(16, 1)

        def forward(self, x: Any) -> Any:
            h = self.embed(x)
            h = self.norm(h + self.attn(h))
            h = h + self.mlp(h)
            return self.head(h).mean(dim=1)

    g = torch.Generator().manual_seed(seed)
    model = Block()
    with torch.no_grad():
        for name, p in model.named_parameters():
            fan_in = p.shape[-1] if p.dim() > 1 else 16
            p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in))
            if name.startswith("norm"):
                p.copy_(torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p))
        model.embed.weight.mul_(gain)
    dt = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    return model.to(dt)


def demo_batch(n: int = 64, tokens: int = 8, dtype: Any = "float16", seed: int = 1,
               nan_at: int | None = None) -> tuple[Any, Any]:
    """``(x, y)``: ``n`` sequences of ``tokens`` 8-feature tokens and a target each; ``nan_at``
    puts a NaN into sample 0 (a broken record in the data)."""
    torch = _torch()
    dt = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, tokens, 8, generator=g)
    y = torch.randn(n, 1, generator=g) * 0.5
    if nan_at is not None:
        x[0, nan_at % tokens, 0] = float("nan")
    return x.to(dt), y.to(dt)


def train(model: Any, steps: int = 5, lr: float = 1e-2, nan_step: int | None = None,
          watch: Any = None, batch_seed: int = 1) -> list[float]:
    """SGD ``steps`` steps of ``model`` on ``demo_batch`` (its dtype), MSE loss; a NaN is put into
    the batch of step ``nan_step`` (counted from 1).  ``watch``: a ``fampnb.probe.watch`` whose
    ``step(loss)`` is called after each step.  Returns the losses (one ``.item()`` per step)."""
    torch = _torch()
    dtype = next(model.parameters()).dtype
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for i in range(1, steps + 1):
        x, y = demo_batch(dtype=dtype, seed=batch_seed, nan_at=0 if i == nan_step else None)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x).float(), y.float())
        loss.backward()
        opt.step()
        if watch is not None:
            watch.step(loss)
        losses.append(float(loss.detach()))
    return losses
