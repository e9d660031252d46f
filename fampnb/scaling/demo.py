"""Notebook 07's demo model as data, and what each fp8 scheme does to it (for notebook 09).

``demo_gradients()`` / ``demo_activations()`` are the tensors of ``probe.demo_problem()`` (the MLP
of notebook 07 after its warm-up), recorded once with torch by ``tools/fp8_demo_data.py`` and
shipped in ``fampnb/data/fp8/demo.npz`` so that this runs, and gives the same numbers, without
torch.  ``demo_amax_trace()`` is the gradients' amax over 96 further training steps.
``scheme_view(scheme, elem, ...)`` puts a set of tensors through one scheme and returns the
scaled values and their exact ``Shares``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from .delayed import DelayedScaling, DelayedTrace
from .mx import block_scaled, element_format, mx_quantize
from .shares import Shares, zone_codes
from .tensorwise import as_margin, current_scale, rowwise_scales, scale_tensor

__all__ = ["SCHEMES", "SchemeView", "demo_gradients", "demo_activations", "demo_amax_trace",
           "with_spike", "scheme_view", "SPIKE_STEP"]

#: scheme names, in the order notebook 09 introduces them
SCHEMES = ("global", "tensorwise", "rowwise", "delayed", "mx")
SPIKE_STEP = 64  # default step of the loss spike in the delayed-scaling demo (1-based)


@lru_cache(maxsize=1)
def _data() -> dict[str, np.ndarray]:
    ref = resources.files("fampnb") / "data" / "fp8" / "demo.npz"
    with ref.open("rb") as fh, np.load(fh) as npz:
        return {k: npz[k] for k in npz.files}


def _group(prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v.copy() for k, v in _data().items() if k.startswith(prefix)}


def demo_gradients() -> dict[str, np.ndarray]:
    """Parameter name -> gradient (float32) of notebook 07's demo model (6,792 values)."""
    return _group("grad/")


def demo_activations() -> dict[str, np.ndarray]:
    """Layer -> the input activation of each Linear layer in the same forward (float32)."""
    return _group("act/")


def demo_amax_trace() -> np.ndarray:
    """The amax of all the demo model's gradients at each of 96 training steps (float32)."""
    return _data()["trace/grad_amax"].copy()


def with_spike(amax: Any, step: int = SPIKE_STEP, factor: float = 16.0) -> np.ndarray:
    """A copy of ``amax`` (per step) with step ``step`` (1-based) multiplied by ``factor``: a loss
    spike that blows the gradients up for one step.  ValueError for a step out of range or a
    factor that is not finite and > 0."""
    a = np.array(amax, np.float32).ravel()
    if not 1 <= int(step) <= a.size:
        raise ValueError(f"step must be in 1..{a.size}, got {step!r}")
    f = float(factor)
    if not (np.isfinite(f) and f > 0):
        raise ValueError(f"factor must be finite and > 0, got {factor!r}")
    a[int(step) - 1] *= np.float32(f)
    return a


@dataclass(frozen=True)
class SchemeView:
    """One scheme applied to a set of tensors.  ``scaled``: all scaled values (float32, the
    tensors concatenated in order) before the element cast; ``codes``: their ``Zone`` codes;
    ``shares``: over all values; ``per_tensor``: name -> ``Shares``; ``scales``: name -> the
    scale(s) used (a float, an array per row, or MX's exponents); ``trace``: the delayed-scaling
    run (scheme "delayed" only; its spike step is ``spike_step``)."""

    scheme: str
    elem: str
    scaled: np.ndarray
    codes: np.ndarray
    shares: Shares
    per_tensor: dict[str, Shares]
    scales: dict[str, Any]
    trace: DelayedTrace | None = None
    spike_step: int | None = None
    notes: list[str] = field(default_factory=list)


def scheme_view(scheme: str, elem: str = "fp8_e4m3", tensors: Mapping[str, Any] | None = None,
                margin: float = 0, block: int = 32, history: int = 1024, spike: float = 64.0,
                spike_step: int = SPIKE_STEP, amax_compute_algo: str = "max") -> SchemeView:
    """Put ``tensors`` (default: the demo gradients) through ``scheme``:

    - ``"global"``: one power-of-two scale for every tensor, the largest that keeps the overall
      amax (times ``2**margin``) at or below max (a loss scale, as in notebook 07);
    - ``"tensorwise"``: ``current_scale`` per tensor (TE's ``Float8CurrentScaling``, torchao's
      ``tensorwise``), with ``margin``;
    - ``"rowwise"``: a power-of-two scale per row (torchao's ``rowwise``; a 1-D tensor is a row);
    - ``"delayed"``: TE's ``DelayedScaling(margin, history, amax_compute_algo)`` over the demo
      amax trace with a spike of ``spike`` at ``spike_step``; the tensors (concatenated, one
      tensor) are shown at the spike step, cast with the scale in force there;
    - ``"mx"``: ``mx_quantize(t, elem, block)`` per tensor (blocks along the last axis).
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    fmt = element_format(elem)
    m = as_margin(margin)
    src = demo_gradients() if tensors is None else tensors
    ts = {k: np.asarray(v, np.float32) for k, v in src.items()}
    if not ts:
        raise ValueError("tensors is empty")
    scaled: dict[str, np.ndarray] = {}
    nan: dict[str, Any] = {}
    scales: dict[str, Any] = {}
    trace, notes = None, []
    if scheme == "global":
        amax = max(float(np.max(np.abs(t))) if t.size else 0.0 for t in ts.values())
        s = current_scale(amax, fmt, m, power_of_two=True)
        for k, t in ts.items():
            scales[k], scaled[k] = s, scale_tensor(t, s)
    elif scheme == "tensorwise":
        for k, t in ts.items():
            s = current_scale(float(np.max(np.abs(t))) if t.size else 0.0, fmt, m)
            scales[k], scaled[k] = s, scale_tensor(t, s)
    elif scheme == "rowwise":
        for k, t in ts.items():
            rows = t.reshape(1, -1) if t.ndim < 2 else t
            s = rowwise_scales(rows, fmt, m)
            scales[k], scaled[k] = s, scale_tensor(rows, s).reshape(t.shape)
    elif scheme == "mx":
        for k, t in ts.items():
            q = mx_quantize(t, fmt.name, block)
            scales[k] = q.scale_exponents
            scaled[k], nan[k] = block_scaled(t, q)
    else:
        one = np.concatenate([t.ravel() for t in ts.values()])
        amaxes = with_spike(demo_amax_trace(), spike_step, spike)
        recipe = DelayedScaling(margin=m, amax_history_len=history,
                                amax_compute_algo=amax_compute_algo, fp8_format=fmt.name)
        trace = recipe.simulate(amaxes, tensor=one)
        i = int(spike_step) - 1
        s = np.float32(trace.scale[i])
        step_tensor = one * np.float32(amaxes[i] / np.float32(np.max(np.abs(one))))
        ts = {"all gradients": step_tensor}
        scales["all gradients"], scaled["all gradients"] = float(s), step_tensor * s
        notes.append(f"step {spike_step} of {amaxes.size}: the spike (x{spike:g}) is cast with "
                     f"the scale computed after step {spike_step - 1}")
    per = {k: Shares.from_codes(zone_codes(ts[k], scaled[k], fmt, nan.get(k))) for k in ts}
    codes = np.concatenate([zone_codes(ts[k], scaled[k], fmt, nan.get(k)).ravel() for k in ts])
    total = Shares.from_codes(codes)
    flat = np.concatenate([scaled[k].ravel() for k in ts])
    return SchemeView(scheme=scheme, elem=fmt.name, scaled=flat, codes=codes, shares=total,
                      per_tensor=per, scales=scales, trace=trace,
                      spike_step=int(spike_step) if trace is not None else None, notes=notes)
