"""Transformer Engine's ``DelayedScaling`` recipe, step by step, and what it does to a tensor.

TE casts a tensor at step t with the scale computed *after* step t-1, from a history of amaxes; the
amax of step t is recorded during the cast and enters the scale only from step t+1 on.  So a spike
(an amax far above the history's) is cast with the old scale: it saturates; and it then sits in the
history for ``amax_history_len`` steps, keeping the scale low (small values lost to zero) until it
rolls out.  The update mirrors TE's ``delayed_scaling.cu`` (the bulk kernel that TE's PyTorch
modules call): the history is a float32 buffer of ``amax_history_len`` slots, slot 0 receives the
step's amax; after the step, unless that amax is 0, the buffer rolls (slot 0's value goes to the
end, the oldest is dropped, slot 0 is cleared) and the reference amax is the max over all slots
(``"max"``; NaNs are skipped, as ``fmaxf`` does) or the step's own (``"most_recent"``); the new
scale is ``float32(fmt.max * 2**-margin) / amax`` when that amax is finite and > 0, else the old
scale is kept; an infinite result becomes float32's max.  The first step runs at scale 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..formats import FP8_E4M3, FP8_E5M2, Format, get
from .shares import Shares, saturation_threshold, shares
from .tensorwise import as_margin

__all__ = ["DelayedScaling", "DelayedTrace"]

_F32_MAX = np.float32(np.finfo(np.float32).max)
_TE_FORMATS = {"E4M3": FP8_E4M3, "E5M2": FP8_E5M2}


def _fp8_format(name: Any) -> Format:
    if isinstance(name, Format):
        return name
    key = str(getattr(name, "name", name)).strip()
    if key.upper() in _TE_FORMATS:
        return _TE_FORMATS[key.upper()]
    if key.upper() == "HYBRID":
        raise ValueError("fp8_format HYBRID means E4M3 for forward tensors and E5M2 for "
                         "gradients: pass the one of the tensor you simulate")
    return get(key)


@dataclass(frozen=True)
class DelayedTrace:
    """One row per step (arrays of equal length; step t is index t-1).

    ``amax``: the amax recorded at the step; ``scale``: the scale in force (computed after the
    previous step; 1.0 at step 1); ``reference_amax``: the amax that scale was computed from (NaN
    while the initial 1.0 is in force); ``scaled_amax``: ``amax * scale`` in float32;
    ``saturated``: the step's amax lands beyond max (it is clipped); ``next_scale``: the scale
    after the step's update; ``history``: the final TE buffer (slot 0 cleared for the next step,
    the most recent amax last); ``shares``: per step, when a tensor was given, the ``Shares`` of
    the step's tensor at the scale in force.
    """

    amax: np.ndarray
    scale: np.ndarray
    reference_amax: np.ndarray
    scaled_amax: np.ndarray
    saturated: np.ndarray
    next_scale: np.ndarray
    history: np.ndarray
    fmt: Format
    shares: list[Shares] = field(default_factory=list)

    def fraction(self, category: str) -> np.ndarray:
        """Per step, the share of the tensor in ``category`` (needs ``shares``)."""
        if not self.shares:
            raise ValueError("no tensor was simulated: pass tensor= to simulate()")
        return np.array([s.fraction(category) for s in self.shares])


@dataclass(frozen=True)
class DelayedScaling:
    """TE's ``recipe.DelayedScaling`` (argument names as TE's).

    ``margin``: the scale is ``2**margin`` below the one that maps the reference amax to max;
    ``amax_history_len``: slots in the history (TE's default 1024); ``amax_compute_algo``:
    ``"max"`` (over the history) or ``"most_recent"``; ``fp8_format``: ``"E4M3"`` or ``"E5M2"``
    (TE's ``HYBRID`` uses E4M3 forward and E5M2 for gradients: simulate each tensor with its own).
    A callable ``amax_compute_algo`` or ``scaling_factor_compute_algo`` (allowed by TE) is not
    modelled.  Invalid arguments raise ValueError naming the argument.
    """

    margin: float = 0
    amax_history_len: int = 1024
    amax_compute_algo: str = "max"
    fp8_format: Any = "E4M3"

    def __post_init__(self) -> None:
        as_margin(self.margin)
        n = self.amax_history_len
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"amax_history_len must be an integer >= 1, got {n!r}")
        if self.amax_compute_algo not in ("max", "most_recent"):
            raise ValueError('amax_compute_algo must be "max" or "most_recent", '
                             f"got {self.amax_compute_algo!r}")
        _fp8_format(self.fp8_format)

    @property
    def fmt(self) -> Format:
        return _fp8_format(self.fp8_format)

    def simulate(self, amax_per_step: Any, tensor: Any = None) -> DelayedTrace:
        """Run the recipe over ``amax_per_step`` (one amax >= 0 per step; NaN/inf allowed).

        ``tensor`` (optional): the shape of the tensor being cast; step t's tensor is modelled as
        ``tensor * float32(amax_t / max|tensor|)`` (the same values, resized to that step's amax;
        the amax recorded is then that tensor's own), and the trace gets the exact ``Shares`` of
        each step's tensor times the scale in force.
        """
        amaxes = np.asarray(amax_per_step, np.float32).ravel()
        if amaxes.size == 0:
            raise ValueError("amax_per_step is empty")
        if np.any(amaxes < 0):
            raise ValueError("amax_per_step must be >= 0 (an amax is a maximum magnitude)")
        base = None
        if tensor is not None:
            base = np.asarray(tensor, np.float32).ravel()
            top = np.float32(np.max(np.abs(base))) if base.size else np.float32(0)
            if not (np.isfinite(top) and top > 0):
                raise ValueError("tensor must hold a finite non-zero value to be resized")
        fmt = self.fmt
        scaled_max = np.float32(np.float32(fmt.max) * np.float32(2.0 ** -as_margin(self.margin)))
        n = int(self.amax_history_len)
        hist = np.zeros(n, np.float32)
        scale, ref = np.float32(1.0), np.float32(np.nan)
        rows = {k: np.empty(amaxes.size, np.float32) for k in ("amax", "scale", "ref", "next")}
        out_shares: list[Shares] = []
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for t, a in enumerate(amaxes):
                if base is not None:
                    step_tensor = base * np.float32(a / top)
                    a = np.float32(np.max(np.abs(step_tensor)))
                    out_shares.append(shares(step_tensor, step_tensor * scale, fmt))
                rows["amax"][t], rows["scale"][t], rows["ref"][t] = a, scale, ref
                hist[0] = a
                if a != 0:
                    window = np.concatenate([hist[1:], hist[:1]])
                    amax = np.fmax.reduce(window, initial=np.float32(0))
                    hist = window.copy()
                    hist[0] = 0
                    if self.amax_compute_algo == "most_recent":
                        amax = a
                    if np.isfinite(amax) and amax > 0:
                        scale = np.float32(scaled_max / np.float32(amax))
                        ref = np.float32(amax)
                        if np.isinf(scale):
                            scale = _F32_MAX
                rows["next"][t] = scale
            scaled = rows["amax"] * rows["scale"]
        t_sat, tie = saturation_threshold(fmt)
        sat = (np.abs(scaled) >= t_sat) if tie else (np.abs(scaled) > t_sat)
        return DelayedTrace(amax=rows["amax"], scale=rows["scale"], reference_amax=rows["ref"],
                            scaled_amax=scaled, saturated=sat,
                            next_scale=rows["next"], history=hist, fmt=fmt, shares=out_shares)
