"""On-device recording of the exact gradient histogram (internal to ``fampnb.probe``).

``GradHistogramRecorder`` keeps the ``GradHistogram`` table of ``fampnb._probe_hist`` on the
gradients' device and adds to it with a few element-wise kernels per step (no host copy until
``result()``); ``grad_histogram`` is the one-shot forward/backward + exact record.  torch is
imported inside the functions.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._probe_hist import (E_MAX, E_MIN, N_E, NO_TORCH_HINT, GradHistogram, _Layout, _layout,
                          _next32, _resolve_formats, power_of_two_exponent)

__all__ = ["GradHistogramRecorder", "grad_histogram"]

SHIFT = 12  # low mantissa bits summarised by one "all zero" flag; every cut sits on this grid


def _check_grid(lay: _Layout) -> None:
    """Every threshold mantissa must be on the 2**SHIFT grid of fp32 mantissa bits (or one above,
    for the strict ties); true for fp16/bf16/e4m3/e5m2, not for fp32 itself (``record_exact``)."""
    for c in lay.cuts[:-2]:
        v = _next32(c)                      # m >= v  <=>  m > c
        frac = round((v * 2 - 1) * 2 ** 23)  # the 23 fraction bits of m = 0.5 + frac * 2**-24
        if frac % (1 << SHIFT) not in (0, 1):
            raise ValueError(f"formats: a zone boundary (mantissa {v!r}) is finer than the "
                             f"recorder's grid; use GradHistogram.from_array instead")


@lru_cache(maxsize=8)
def _lut(lay: _Layout) -> np.ndarray:
    """int32 table key (row ``e - E_MIN``, sub-bin ``j``) for every index ``2*hi + 1 - z``, where
    ``hi = |bits| >> SHIFT`` and z = 1 when the low SHIFT bits are all zero.  The recorder computes
    that index as ``((|bits| - 1) >> SHIFT) + (|bits| >> SHIFT) + 1`` (the first term is ``hi - z``).
    Exact for fp32 normal numbers, zeros, inf and NaN (their zone depends only on these bits); an
    fp32 *subnormal* gradient (|g| < 2**-126) is represented by the low edge of its bit range."""
    _check_grid(lay)
    cuts = np.asarray(lay.cuts, dtype=np.float64)
    hi = np.arange(1 << (31 - SHIFT), dtype=np.int64)
    out = np.empty((hi.size, 2), dtype=np.int32)
    for col, z in ((0, 1), (1, 0)):
        bits = (hi << SHIFT) + (0 if z else 1)            # a representative bit pattern
        with np.errstate(invalid="ignore"):
            vals = bits.astype(np.uint32).view(np.float32).astype(np.float64)
            m, e = np.frexp(vals)
        e = np.where(np.isfinite(vals), e, 0)
        j = np.searchsorted(cuts, m, side="left")
        j = np.where(np.isnan(vals), lay.j_nan, j)
        out[:, col] = (np.clip(e, E_MIN, E_MAX) - E_MIN) * lay.n_sub + j
    return out.reshape(-1)



class GradHistogramRecorder:
    """Accumulates the histogram table of gradients on their device, without host copies.

    ``record()`` adds the current ``.grad`` of every parameter: 9 small element-wise kernels over the
    concatenated gradients (bit pattern -> lookup table -> ``index_add_``), exact for every fp32
    normal value, zero, inf and NaN.  fp32 *subnormal* gradients (0 < |g| < 2**-126) are binned by
    their top bits only (their exact zone in bf16 can then be off by one bin edge); ``record_exact()``
    (``frexp`` + ``bucketize``, about twice the cost) is exact for those too and is what
    ``grad_histogram`` uses.  ``attach(optimizer, every)`` records from an optimizer step pre-hook,
    so it sees the final gradients of every step actually taken (a GradScaler unscales before it
    steps, and skipped steps are not recorded).  ``result(scale)`` does the single host copy.
    """

    def __init__(self, params: Any, formats: Any = None, device_label: str | None = None) -> None:
        import torch

        if hasattr(params, "parameters"):
            params = params.parameters()
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("params: no parameter requires grad")
        self.layout = _layout(_resolve_formats(formats))
        self.device = self.params[0].device
        self.label = device_label or _label(self.device)
        self._lut: Any = None  # built on the first record(); record_exact() does not need it
        self._table = torch.zeros(N_E * self.layout.n_sub, dtype=torch.int64, device=self.device)
        self._ones = torch.ones(0, dtype=torch.int64, device=self.device)
        self._cuts: Any = None
        self.steps = 0
        self.every = 1
        self._calls = 0
        self._handle: Any = None

    def record(self) -> None:
        """Add the current gradients to the on-device table: 9 small element-wise kernels, no host copy."""
        import torch

        grads = [p.grad.detach().reshape(-1) for p in self.params if p.grad is not None]
        if not grads:
            return
        if self._lut is None:
            self._lut = torch.from_numpy(_lut(self.layout)).to(self.device)
        a = torch.cat(grads) if len(grads) > 1 else grads[0]
        if a.dtype != torch.float32:
            a = a.float()
        bits = a.view(torch.int32).bitwise_and(0x7FFFFFFF)     # |g| as an ordered bit pattern
        lo = bits.sub(1).bitwise_right_shift_(SHIFT)           # hi - z  (-1 for a zero)
        idx = bits.bitwise_right_shift_(SHIFT).add_(lo).add_(1)  # 2*hi + 1 - z
        key = torch.index_select(self._lut, 0, idx)             # -> (exponent, mantissa sub-bin)
        if self._ones.numel() < key.numel():
            self._ones = torch.ones(key.numel(), dtype=torch.int64, device=self.device)
        self._table.index_add_(0, key, self._ones[:key.numel()])
        self.steps += 1

    def record_exact(self) -> None:
        """Like ``record`` but exact for fp32 subnormal gradients too (frexp + bucketize)."""
        import torch

        grads = [p.grad.detach().reshape(-1) for p in self.params if p.grad is not None]
        if not grads:
            return
        a = torch.cat(grads).float()
        if self._cuts is None:
            self._cuts = torch.tensor(self.layout.cuts, dtype=torch.float32, device=self.device)
        m, e = torch.frexp(a.abs())
        j = torch.bucketize(m, self._cuts)            # right=False: number of cuts < m
        key = torch.add(j, e.clamp_(E_MIN, E_MAX), alpha=self.layout.n_sub)
        key += -E_MIN * self.layout.n_sub
        self._table += torch.bincount(key, minlength=self._table.numel())
        self.steps += 1

    def attach(self, optimizer: Any, every: int = 1) -> GradHistogramRecorder:
        """Record before every ``every``-th optimizer step (``register_step_pre_hook``);
        ``detach()`` undoes it.  ``every > 1`` samples steps, as histogram loggers do."""
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer >= 1, got {every!r}")
        self.detach()
        self.every, self._calls = every, 0

        def hook(*_: Any) -> None:
            self._calls += 1
            if (self._calls - 1) % self.every == 0:
                self.record()

        self._handle = optimizer.register_step_pre_hook(hook)
        return self

    def detach(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def reset(self) -> None:
        self._table.zero_()
        self.steps = 0

    def result(self, scale: float = 1.0, note: str = "") -> GradHistogram:
        """The accumulated histogram (one device-to-host copy), reported at ``scale``."""
        power_of_two_exponent(scale)
        table = self._table.cpu().numpy().reshape(N_E, self.layout.n_sub).astype(np.int64)
        return GradHistogram(table, self.layout, self.label, float(scale), self.steps, note)


def _label(device: Any) -> str:
    """``"cpu"`` or ``"cuda:0 <name>"``: where a result was computed."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        idx = dev.index if dev.index is not None else torch.cuda.current_device()
        return f"cuda:{idx} {torch.cuda.get_device_name(idx)}"
    return str(dev)


def grad_histogram(model: Any, loss_fn: Any, batch: Any, scale: float = 1.0, *,
                   formats: Any = None) -> GradHistogram:
    """One forward/backward of ``model`` on ``batch`` and the exact histogram of its gradients.

    ``batch`` is ``(inputs, targets)`` (``loss = loss_fn(model(inputs), targets)``) or a single input
    (``loss = loss_fn(model(inputs))``); it must already be on the model's device, where everything
    is computed.  ``scale`` (a power of two, as loss scalers use) is the scale the fractions are
    reported at; ``.at(S)`` re-evaluates at another scale without another backward pass.  Existing
    ``.grad`` values are replaced.  Without torch: a ``GradHistogram`` labelled "torch is not
    installed", with an empty table.
    """
    k_check = power_of_two_exponent(scale)
    del k_check
    try:
        import torch  # noqa: F401
    except ImportError:
        lay = _layout(_resolve_formats(formats))
        return GradHistogram(np.zeros((N_E, lay.n_sub), dtype=np.int64), lay,
                             "none (torch is not installed)", float(scale), 0, NO_TORCH_HINT)
    model.zero_grad(set_to_none=True)
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        loss = loss_fn(model(batch[0]), batch[1])
    else:
        loss = loss_fn(model(batch))
    loss.backward()
    rec = GradHistogramRecorder(model, formats)
    rec.record_exact()
    return rec.result(scale)
