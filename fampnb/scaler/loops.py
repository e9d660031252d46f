"""The per-step update rules of every policy, as lean loops over Python floats.

``run(policy, n, g, found, ovf)`` walks ``n`` steps and returns the columns of a trace.  Either
``g`` (list of gradient abs maxima, unscaled) is given and ``ovf(g * scale)`` decides overflow, or
``found`` (list of bools) says it directly.  Each loop transcribes its framework's update code;
comments name the source.  Kept apart from ``trace`` so that module stays short.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .policies import (
    DS_MIN_SCALE_MSG,
    F32_MAX,
    F32_TINY,
    FAIRSEQ_MIN_SCALE_MSG,
    ApexScaler,
    DeepSpeedScaler,
    FairseqScaler,
    KerasScaler,
    MegatronScaler,
    Policy,
    SeedHalving,
    StaticScaler,
    TorchGradScaler,
    _pow2,
    f32,
)

Columns = tuple[list, list, list, list, float, "str | None"]
OvFn = Callable[[float], bool]
#: the per-step gradient abs maxima (or None) and found-inf flags (or None): exactly one is given
Grads = Any
Found = Any


def _mul32(exact: bool) -> Callable[[float, float], float]:
    """Multiply and store as float32 (a C ``float`` times a ``double``, cast back)."""
    if exact:  # power-of-two factor: exact unless the result leaves the fp32 normal range
        def mul(s: float, k: float) -> float:
            r = s * k
            return r if F32_TINY <= r <= F32_MAX else f32(r)
        return mul
    return lambda s, k: f32(s * k)


def _torch(p: TorchGradScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp  _amp_update_scale_cpu_
    s, gi = p.start_scale, p.growth_interval
    gf, bf = float(p.growth_factor), float(p.backoff_factor)
    mul = _mul32(_pow2(gf) and _pow2(bf))
    scales: list[float] = []
    events: list = []
    ovs = [False] * n if found is None else found
    sa, ea = scales.append, events.append
    tracker = 0
    for i in range(n):
        sa(s)
        if found is None:
            ov = ovs[i] = ovf(g[i] * s)
        else:
            ov = found[i]
        if ov:
            s = mul(s, bf)
            tracker = 0
            ea("backoff")
        else:
            tracker += 1
            if tracker == gi:
                tracker = 0
                ns = mul(s, gf)
                if ns != math.inf and ns == ns:  # growth kept only if finite
                    s = ns
                    ea("growth")
                else:
                    ea(None)
            else:
                ea(None)
    return scales, ovs, list(ovs), events, s, None


class _Run:
    """Shared bookkeeping for the loops that are not speed-critical."""

    __slots__ = ("scales", "ovs", "events", "g", "found", "ovf")

    def __init__(self, g: Grads, found: Found, ovf: OvFn) -> None:
        self.scales: list = []
        self.ovs: list = []
        self.events: list = []
        self.g, self.found, self.ovf = g, found, ovf

    def overflow(self, i: int, s: float) -> bool:
        ov = bool(self.found[i]) if self.g is None else self.ovf(self.g[i] * s)
        self.scales.append(s)
        self.ovs.append(ov)
        return ov

    def done(self, s: float, fatal: str | None = None, skipped: list | None = None) -> Columns:
        return (self.scales, self.ovs, list(self.ovs) if skipped is None else skipped,
                self.events, s, fatal)


def _deepspeed(p: DeepSpeedScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # deepspeed/runtime/fp16/loss_scaler.py  DynamicLossScaler.update_scale
    r = _Run(g, found, ovf)
    s, mn, window = p.start_scale, float(p.min_scale), p.scale_window
    hyst, cur_iter, last_ov = p.hysteresis, 0, -1
    for i in range(n):
        ov = r.overflow(i, s)
        if ov:
            if p.hysteresis == 1 or hyst == 1:
                if s == mn and p.raise_error_at_min_scale:
                    r.events.append("min-scale")
                    return r.done(s, "Exception: " + DS_MIN_SCALE_MSG)
                ns = max(s / 2.0, mn)
                r.events.append("backoff" if ns < s else "min-scale")
                s = ns
            else:
                hyst -= 1
                r.events.append("hysteresis")
            last_ov = cur_iter
        else:
            if p.consecutive_hysteresis:
                hyst = p.hysteresis
            if p.legacy_growth:  # DeepSpeed <= 0.17.0
                grow = (cur_iter - last_ov) % window == 0
            else:  # DeepSpeed >= 0.17.1 (PR #6976)
                stable = (cur_iter - last_ov) - 1
                grow = stable > 0 and stable % window == 0
            if grow:
                if not p.consecutive_hysteresis:
                    hyst = p.hysteresis
                s *= 2.0
                r.events.append("growth")
            else:
                r.events.append(None)
        cur_iter += 1
    return r.done(s)


def _megatron(p: MegatronScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # megatron/core/optimizer/grad_scaler.py  DynamicGradScaler.update
    r = _Run(g, found, ovf)
    s, mn = p.start_scale, f32(float(p.min_scale))
    mul = _mul32(True)
    growth_tracker, hyst = 0, p.hysteresis
    for i in range(n):
        if r.overflow(i, s):
            growth_tracker = 0
            hyst -= 1
            if hyst <= 0:
                ns = max(mul(s, 0.5), mn)
                r.events.append("backoff" if ns < s else "min-scale")
                s = ns
            else:
                r.events.append("hysteresis")
        else:
            growth_tracker += 1
            if growth_tracker == p.growth_interval:
                growth_tracker = 0
                hyst = p.hysteresis
                s = mul(s, 2.0)
                r.events.append("growth")
            else:
                r.events.append(None)
    return r.done(s)


def _fairseq(p: FairseqScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # fairseq/optim/dynamic_loss_scaler.py  check_overflow (overflow) / update (clean step)
    r = _Run(g, found, ovf)
    s, window = p.start_scale, p.scale_window
    it, last_ov, last_rescale, since = 0, -1, -1, 0
    for i in range(n):
        if r.overflow(i, s):
            prev = s
            iter_since_rescale = it - last_rescale
            last_ov = it
            since += 1
            if since / float(iter_since_rescale) >= p.tolerance:
                s = s / 2.0
                if p.threshold is not None:
                    s = max(s, float(p.threshold))
                last_rescale = it
                since = 0
            if s <= p.min_loss_scale:
                r.events.append("min-scale")
                return r.done(prev, "FloatingPointError: "
                              + FAIRSEQ_MIN_SCALE_MSG.format(p.min_loss_scale))
            r.events.append("backoff" if s < prev else "hysteresis")
            it += 1
        else:
            if (it - last_ov) % window == 0:
                s *= 2.0
                last_rescale = it
                r.events.append("growth")
            else:
                r.events.append(None)
            it += 1
    return r.done(s)


def _apex(p: ApexScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # apex/amp/scaler.py  LossScaler.update_scale
    r = _Run(g, found, ovf)
    s, mn, mx, unskipped = p.start_scale, p.min_loss_scale, float(p.max_loss_scale), 0
    for i in range(n):
        ev = None
        if r.overflow(i, s):
            ns = max(float(mn), s / 2.0) if mn else s / 2.0
            ev = "backoff" if ns < s or not mn else "min-scale"
            s, unskipped = ns, 0
        else:
            unskipped += 1
        if unskipped == p.scale_window:
            ns = min(mx, s * 2.0)
            if ns > s:
                ev = "growth"
            s, unskipped = ns, 0
        r.events.append(ev)
    return r.done(s)


def _keras(p: KerasScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # keras/src/optimizers/loss_scale_optimizer.py  (Keras 3)
    r = _Run(g, found, ovf)
    s, counter, mul = p.start_scale, 0, _mul32(True)
    for i in range(n):
        if r.overflow(i, s):
            counter, s = 0, mul(s, 0.5)
            r.events.append("backoff")
        elif counter == p.dynamic_growth_steps - 1:
            counter, s = 0, mul(s, 2.0)
            r.events.append("growth")
        else:
            counter += 1
            r.events.append(None)
    return r.done(s)


def _seed(p: SeedHalving, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    # the article: scale //= 2 on every overflow, never grow
    r = _Run(g, found, ovf)
    s = p.start
    for i in range(n):
        if r.overflow(i, s):
            s //= 2
            r.events.append("backoff")
        else:
            r.events.append(None)
    return r.done(s)


def _static(p: StaticScaler, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    r = _Run(g, found, ovf)
    s = p.start_scale
    for i in range(n):
        r.overflow(i, s)
        r.events.append(None)
    skipped = list(r.ovs) if p.skip_on_overflow else [False] * n
    return r.done(s, None, skipped)


_LOOPS = {TorchGradScaler: _torch, DeepSpeedScaler: _deepspeed, MegatronScaler: _megatron,
          FairseqScaler: _fairseq, ApexScaler: _apex, KerasScaler: _keras, SeedHalving: _seed,
          StaticScaler: _static}


def run(policy: Policy, n: int, g: Grads, found: Found, ovf: OvFn) -> Columns:
    """Columns ``(scales, overflow, skipped, events, final_scale, fatal)`` of ``n`` steps."""
    for cls in type(policy).__mro__:
        if cls in _LOOPS:
            return _LOOPS[cls](policy, n, g, found, ovf)  # type: ignore[operator]
    raise ValueError(f"policy must be one of the fampnb.scaler policies, got {policy!r}")
