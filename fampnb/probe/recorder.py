"""On-device recording of the exact gradient histogram (internal to ``fampnb.probe``).

``GradHistogramRecorder`` keeps a table of counts on the gradients' device and adds to it without
any host copy until ``result()``; ``grad_histogram`` is the one-shot forward/backward + exact record.
torch is imported inside the functions.

How a step is recorded, and why it is cheap.  Every fp32 value's zone (zero / underflow / subnormal /
normal / overflow, in every tabulated format, at every power-of-two scale) is decided by its exponent
and the top ``23 - SHIFT`` fraction bits, plus whether the ``SHIFT`` bits below them are all zero (the
boundaries that are ties, such as fp16's 2**-25, are exclusive).  So the device keeps one counter per
key ``k = floor(|bits| / 2**SHIFT) + ceil(|bits| / 2**SHIFT)`` (= 2*hi + [low bits != 0], 2**20 keys,
sign dropped), computed from the fp32 bit pattern with five integer kernels and counted with one
``index_add_``; ``result()`` folds the keys into the ``(exponent, mantissa sub-bin)`` table of
``fampnb.probe.histogram`` with a host-side lookup table (per-format work happens there, once).

On a small model the cost of a step is a handful of kernel launches, not arithmetic, so the recorder
batches: each step's gradients are copied into the next slot of a persistent fp32 staging buffer (one
``torch._foreach_copy_``; nothing else happens in the step) and the slots are binned together when the
buffer is full, at ``result()`` and at ``flush()``.  Every recorded step is counted exactly once; only
*when* it is binned changes.  Models larger than the buffer (``buffer_elems``: 2 MiB on the CPU,
64 MiB on a GPU) are binned at each step (the per-kernel cost is then small next to the work).
What this costs, measured, and the variants tried and found no faster are in
``benchmarks/README.md`` (``bench_probe.py``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .histogram import (
    E_MAX,
    E_MIN,
    N_E,
    NO_TORCH_HINT,
    GradHistogram,
    _Layout,
    _layout,
    _next32,
    _resolve_formats,
    power_of_two_exponent,
)

__all__ = ["GradHistogramRecorder", "grad_histogram"]

SHIFT = 12  # low mantissa bits summarised by one "all zero" flag; every cut sits on this grid
N_KEYS = 1 << (32 - SHIFT)  # keys 2*hi + [low bits != 0], hi = |bits| >> SHIFT < 2**(31 - SHIFT)
#: default staging capacity on the CPU, fp32 elements (2 MiB): 64 steps of the demo model a binning
BUFFER_ELEMS = 1 << 19
#: default on a GPU (64 MiB of device memory): models up to 8M parameters are staged, since there a
#: step's cost is kernel launches and binning every step would add ~7 of them (on an H200, a
#: 1.1M-parameter MLP: 1.24x a plain step binning every step, 1.06x staged; docs/gpu-results.md)
CUDA_BUFFER_ELEMS = 1 << 24
#: at most this many steps per binning (the fixed cost of a binning is then ~1 us a step)
MAX_SLOTS = 64


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
    """int32 table key (row ``e - E_MIN``, sub-bin ``j``) for every device key ``2*hi + 1 - z``,
    where ``hi = |bits| >> SHIFT`` and z = 1 when the low SHIFT bits are all zero.  The recorder
    computes that key as ``(|bits| >> SHIFT) - (-|bits| >> SHIFT)`` (floor plus ceil of
    ``|bits| / 2**SHIFT``).  Exact for fp32 normal numbers, zeros, inf and NaN (their zone depends
    only on these bits); an fp32 *subnormal* gradient (|g| < 2**-126) is represented by the low edge
    of its bit range."""
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


def _fold(keys: np.ndarray, lay: _Layout) -> np.ndarray:
    """The ``(N_E, n_sub)`` table from the per-key counts (host side, once per ``result()``)."""
    table = np.zeros(N_E * lay.n_sub, dtype=np.int64)
    nz = np.flatnonzero(keys)
    np.add.at(table, _lut(lay)[nz], keys[nz])
    return table.reshape(N_E, lay.n_sub)


class GradHistogramRecorder:
    """Accumulates the histogram of gradients on their device, without host copies.

    ``record()`` adds the current ``.grad`` of every parameter, exact for every fp32 normal value,
    zero, inf and NaN (fp16/bf16 gradients are widened to fp32 exactly).  On a model smaller than
    ``buffer_elems`` (default ``BUFFER_ELEMS`` on the CPU, ``CUDA_BUFFER_ELEMS`` on a GPU) it only
    copies the gradients into a persistent on-device staging buffer (one kernel) and bins several
    steps at once later (see the module notes); ``flush()`` bins what is
    pending, and ``result()`` flushes first.  fp32 *subnormal* gradients (0 < |g| < 2**-126) are
    binned by their top bits only (their exact zone in bf16 can then be off by one bin edge);
    ``record_exact()`` (``frexp`` + ``bucketize``, immediately) is exact for those too and is what
    ``grad_histogram`` uses.  ``attach(optimizer, every)`` records from an optimizer step pre-hook,
    so it sees the final gradients of every step actually taken (a GradScaler unscales before it
    steps, and skipped steps are not recorded).  ``result(scale)`` does the single host copy.
    """

    def __init__(self, params: Any, formats: Any = None, device_label: str | None = None, *,
                 buffer_elems: int | None = None) -> None:
        import torch  # (fails here, not mid-training, without torch)

        if hasattr(params, "parameters"):
            params = params.parameters()
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("params: no parameter requires grad")
        self.device = self.params[0].device
        if buffer_elems is None:
            buffer_elems = CUDA_BUFFER_ELEMS if self.device.type == "cuda" else BUFFER_ELEMS
        if isinstance(buffer_elems, bool) or not isinstance(buffer_elems, int) or buffer_elems < 0:
            raise ValueError(f"buffer_elems must be an integer >= 0, got {buffer_elems!r}")
        self.layout = _layout(_resolve_formats(formats))
        self.label = device_label or _label(self.device)
        self._n = sum(p.numel() for p in self.params)
        self._slots = min(buffer_elems // self._n, MAX_SLOTS)  # 0 or 1: bin every step
        self._keys: Any = None      # int64[N_KEYS] counts per device key, allocated on first use
        self._exact: Any = None     # int64[N_E * n_sub], filled by record_exact()
        self._stage: Any = None     # fp32[slots * n] staging buffer
        self._views: list[list[Any]] = []  # per slot, one view per parameter (shaped like it)
        self._ones: Any = None
        self._scratch: Any = None
        self._fill = 0              # staged elements not yet binned
        self._slot = 0              # next free slot (== _fill // n when every step had all grads)
        self._free = 0              # record() stages directly while _slot < _free (set by _alloc)
        self._copy = torch._foreach_copy_
        self._cuts: Any = None
        self.steps = 0
        self.every = 1
        self._calls = 0
        self._handle: Any = None

    # ------------------------------------------------------------------ recording
    def record(self) -> None:
        """Add the current gradients (all kernels on the device, no host copy)."""
        slot = self._slot
        if slot < self._free:       # the per-step path: one copy into a free staging slot
            try:
                self._copy(self._views[slot], [p.grad for p in self.params])
            except TypeError:       # a parameter has no .grad this step (nothing was copied)
                pass
            else:
                self._slot, self._fill, self.steps = slot + 1, self._fill + self._n, self.steps + 1
                return
        self._record_slow()

    def _record_slow(self) -> None:
        """``record`` when no slot is free, staging is not set up yet or not used (a model larger
        than the buffer), or some ``.grad`` is None (those steps are binned now)."""
        import torch

        grads = [p.grad for p in self.params]
        if self._slots > 1 and not any(g is None for g in grads):  # (`None in` compares tensors)
            if self._stage is None:
                _lut(self.layout)  # checks the grid (ValueError) and warms the cache for result()
                self._alloc()
            if self._slot == self._slots:
                self.flush()
            self._copy(self._views[self._slot], grads)  # (raises what the per-step path caught)
            self._slot += 1
            self._fill += self._n
            self.steps += 1
            return
        present = [g.detach().reshape(-1) for g in grads if g is not None]
        if not present:
            return
        self.flush()
        flat = torch.cat(present).to(torch.float32)  # a fresh copy: binned in place
        self._bin(flat)
        self.steps += 1

    def _alloc(self) -> None:
        import torch

        self._stage = torch.empty(self._slots * self._n, dtype=torch.float32, device=self.device)
        self._views = []
        for s in range(self._slots):
            off, views = s * self._n, []
            for p in self.params:
                views.append(self._stage[off:off + p.numel()].view(p.shape))
                off += p.numel()
            self._views.append(views)
        self._free = self._slots

    def flush(self) -> None:
        """Bin the staged steps now (kernels on the device; no host copy)."""
        if self._fill:
            self._bin(self._stage[:self._fill])
            self._fill = self._slot = 0

    def _bin(self, flat: Any) -> None:
        """Count the fp32 values of ``flat`` (a buffer the recorder owns: overwritten) by key."""
        import torch

        n = flat.numel()
        if self._keys is None:
            _lut(self.layout)
            self._keys = torch.zeros(N_KEYS, dtype=torch.int64, device=self.device)
        if self._ones is None:
            self._ones = torch.ones(1, dtype=torch.int64, device=self.device)
        if self._scratch is None or self._scratch.numel() < n:  # persistent: no allocation
            self._scratch = torch.empty(max(n, self._slots * self._n), dtype=torch.int32,
                                        device=self.device)
        bits = flat.view(torch.int32).bitwise_and_(0x7FFFFFFF)  # |g| as an ordered bit pattern
        neg = torch.neg(bits, out=self._scratch[:n])
        neg.bitwise_right_shift_(SHIFT)                         # -ceil(|bits| / 2**SHIFT)
        key = bits.bitwise_right_shift_(SHIFT).sub_(neg)        # floor + ceil = 2*hi + [low != 0]
        self._keys.index_add_(0, key, self._ones.expand(n))

    def record_exact(self) -> None:
        """Like ``record`` but exact for fp32 subnormal gradients too (frexp + bucketize)."""
        import torch

        grads = [p.grad.detach().reshape(-1) for p in self.params if p.grad is not None]
        if not grads:
            return
        a = torch.cat(grads).float()
        if self._cuts is None:
            self._cuts = torch.tensor(self.layout.cuts, dtype=torch.float32, device=self.device)
        if self._exact is None:
            self._exact = torch.zeros(N_E * self.layout.n_sub, dtype=torch.int64,
                                      device=self.device)
        m, e = torch.frexp(a.abs())
        j = torch.bucketize(m, self._cuts)            # right=False: number of cuts < m
        key = torch.add(j, e.clamp_(E_MIN, E_MAX), alpha=self.layout.n_sub)
        key += -E_MIN * self.layout.n_sub
        self._exact += torch.bincount(key, minlength=self._exact.numel())
        self.steps += 1

    # ------------------------------------------------------------------ hooks and results
    def attach(self, optimizer: Any, every: int = 1) -> GradHistogramRecorder:
        """Record before every ``every``-th optimizer step (``register_step_pre_hook``);
        ``detach()`` undoes it.  ``every > 1`` samples steps, as histogram loggers do."""
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer >= 1, got {every!r}")
        self.detach()
        self.every, self._calls = every, 0

        def hook(*_: Any) -> None:
            calls = self._calls
            self._calls = calls + 1
            if calls % self.every == 0:
                self.record()

        self._handle = optimizer.register_step_pre_hook(hook)
        return self

    def detach(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def reset(self) -> None:
        self._fill = self._slot = 0
        for t in (self._keys, self._exact):
            if t is not None:
                t.zero_()
        self.steps = 0

    def result(self, scale: float = 1.0, note: str = "") -> GradHistogram:
        """The accumulated histogram (flushes; one device-to-host copy), reported at ``scale``."""
        power_of_two_exponent(scale)
        self.flush()
        table = np.zeros((N_E, self.layout.n_sub), dtype=np.int64)
        if self._keys is not None:
            table += _fold(self._keys.cpu().numpy(), self.layout)
        if self._exact is not None:
            table += self._exact.cpu().numpy().reshape(N_E, self.layout.n_sub)
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
    power_of_two_exponent(scale)  # ValueError now, before any work
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
