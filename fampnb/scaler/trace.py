"""Loss-scaler policies of the real frameworks, simulated step by step: ``simulate() -> Trace``.

Policies (argument names and defaults as in the framework they model): ``TorchGradScaler``,
``DeepSpeedScaler``, ``MegatronScaler``, ``FairseqScaler``, ``ApexScaler``, ``KerasScaler``,
``SeedHalving`` (the article's rule) and ``StaticScaler`` (bf16/fp32: a constant scale).  A step
overflows when ``grad_abs_max * scale`` does not fit the format (it rounds to inf/NaN in the real
cast: ``Format.overflow_threshold``), or as an explicit ``found_inf`` sequence says.  A trace that
reaches a fatal minimum (DeepSpeed ``raise_error_at_min_scale``, fairseq ``min_loss_scale``) ends at
that step with ``event="min-scale"`` and ``Trace.fatal`` holding the exception text.
``Trace.log_lines(style)`` renders what the framework prints (``STYLES``).  numpy only; no torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..formats import FP16, Format, Zone, get
from . import loops as _loops
from .policies import POLICIES, Policy

__all__ = ["EVENTS", "STYLES", "Row", "Trace", "simulate", "overflows", "halvings"]

#: values of ``Row.event``
EVENTS: tuple[str | None, ...] = ("backoff", "growth", "hysteresis", "min-scale", None)
#: log styles ``Trace.log_lines`` renders: the five of DESIGN.md, then HF Trainer and a silent
#: GradScaler's user loop
STYLES: tuple[str, ...] = ("seed", "deepspeed", "apex", "fairseq", "megatron", "hf", "torch")


class Row(NamedTuple):
    """One simulated step (a NamedTuple): the scale in force, the gradient abs max and the scaled
    value (both None with ``found_inf``), whether it overflowed and was skipped, the scale for the
    next step and the scaler's event (``"backoff" "growth" "hysteresis" "min-scale"`` or None).
    """

    step: int
    scale: float
    grad_abs_max: float | None
    scaled: float | None
    overflow: bool
    skipped: bool
    next_scale: float
    event: str | None


def overflows(fmt: Format = FP16) -> Callable[[float], bool]:
    """A predicate ``f(x) -> bool``: does ``x`` (float64) round to inf/NaN in ``fmt``'s real cast?

    Exact: far from the threshold it compares, within 2**-20 of it (where the cast's double
    rounding through float32, used for bf16/fp8 by ml_dtypes up to 0.6, can matter) it asks
    ``Format.classify``.  NaN and inf inputs overflow.
    """
    thr = float(fmt.overflow_threshold)
    lo, hi = thr * (1 - 2.0 ** -20), thr * (1 + 2.0 ** -20)
    classify, bad = fmt.classify, (int(Zone.OVERFLOW), int(Zone.NAN))

    def ovf(x: float) -> bool:  # x >= 0 here: grad_abs_max >= 0 and scale >= 0
        if x < lo:
            return False
        if x >= hi or x != x:
            return True
        return int(classify(np.float64(x))[()]) in bad

    return ovf


@dataclass(frozen=True, eq=False)
class Trace:
    """The simulated run: columns per step (``scales``, ``overflow``, ``skipped``, ``events``),
    ``final_scale`` (the scale after the last step), ``fatal`` (exception text or None), the
    ``policy`` and ``fmt``; ``rows`` builds ``Row`` objects on first use.  ``scales[i]`` is the
    scale in force at step ``i + 1``."""

    policy: Policy
    fmt: Format
    scales: list
    overflow: list
    skipped: list
    events: list
    final_scale: float
    fatal: str | None
    grad_abs_max: list | None = None

    def __len__(self) -> int:
        return len(self.scales)

    @property
    def steps(self) -> int:
        return len(self.scales)

    @cached_property
    def next_scales(self) -> list:
        """The scale after each step (``scales`` shifted by one, ending in ``final_scale``)."""
        return self.scales[1:] + [self.final_scale]

    @cached_property
    def rows(self) -> list[Row]:
        g, sc, n = self.grad_abs_max, self.scales, len(self.scales)
        gs = [None] * n if g is None else g
        scaled = [None] * n if g is None else [a * b for a, b in zip(g, sc)]
        return list(map(Row, range(1, n + 1), sc, gs, scaled, self.overflow, self.skipped,
                        self.next_scales, self.events))

    def count(self, event: str | None) -> int:
        """How many steps had this event."""
        return self.events.count(event)

    def as_arrays(self) -> dict[str, np.ndarray]:
        """Columns as numpy arrays (``scale``, ``next_scale``, ``overflow``, ``skipped``,
        ``grad_abs_max`` as NaN when unknown), e.g. for plotting."""
        n = len(self.scales)
        g = np.full(n, np.nan) if self.grad_abs_max is None else np.asarray(self.grad_abs_max)
        return {"step": np.arange(1, n + 1), "scale": np.asarray(self.scales, dtype=float),
                "next_scale": np.asarray(self.next_scales, dtype=float),
                "overflow": np.asarray(self.overflow, dtype=bool),
                "skipped": np.asarray(self.skipped, dtype=bool), "grad_abs_max": g}

    def log_lines(self, style: str | None = None, *, loss: Sequence[float] | None = None,
                  log_interval: int = 10, **options: Any) -> list[str]:
        """The lines the framework would print for this run (``STYLES``; default: the policy's
        own).  ``loss`` (one float per step, NaN allowed) adds the framework's progress records
        every ``log_interval`` steps.  Options: ``lr`` (1e-4), ``warmup`` (0 steps), ``decay``
        (linear LR decay over ``total_steps``; on for "hf"/"deepspeed"), ``total_steps``,
        ``global_batch_size`` (64), ``steps_per_epoch`` (1000), ``start`` (datetime of step 1),
        ``seconds_per_step`` (2.0), ``show_scale`` (user-loop styles), ``nan_inf_filter``
        ("hf": the Trainer's default NaN hiding; False here).  The LR advances only on applied
        steps.  See ``fampnb.scaler.render``."""
        from . import render as _render

        return _render.render(self, style or self.policy.style, loss=loss,
                              log_interval=log_interval, **options)


def _policy(policy: Policy | str) -> Policy:
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str) and policy.lower() in POLICIES:
        return POLICIES[policy.lower()]()
    raise ValueError(f"policy must be a scaler policy (or one of {sorted(POLICIES)}), "
                     f"got {policy!r}")


def _grads(grad_abs_max: Any) -> list[float]:
    try:
        a = np.asarray(grad_abs_max, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"grad_abs_max must be a sequence of numbers, got {grad_abs_max!r}") \
            from None
    if a.ndim != 1:
        raise ValueError(f"grad_abs_max must be a 1-D sequence, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"grad_abs_max must not be empty, got {grad_abs_max!r}")
    neg = np.flatnonzero(a < 0)
    if neg.size:
        raise ValueError(f"grad_abs_max must be >= 0 (an absolute value), got "
                         f"grad_abs_max[{neg[0]}] = {a[neg[0]]!r}")
    return a.tolist()


def _found(found_inf: Any) -> list[bool]:
    if isinstance(found_inf, (str, bytes)) or not hasattr(found_inf, "__len__"):
        raise ValueError(f"found_inf must be a sequence of booleans, got {found_inf!r}")
    a = np.asarray(found_inf)
    if a.ndim != 1:
        raise ValueError(f"found_inf must be a 1-D sequence, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"found_inf must not be empty, got {found_inf!r}")
    if a.dtype != bool:
        if a.dtype.kind not in "iuf" or not np.isin(a, (0, 1)).all():
            raise ValueError(f"found_inf must hold booleans (or 0/1), got {found_inf!r}")
        a = a.astype(bool)
    return a.tolist()


def simulate(policy: Policy | str, grad_abs_max: Sequence[float] | np.ndarray | None = None, *,
             found_inf: Sequence[bool] | np.ndarray | None = None, fmt: Format | str = FP16) -> Trace:
    """Run ``policy`` over the steps and return the ``Trace``.

    Give exactly one of ``grad_abs_max`` (per-step gradient abs max before scaling, >= 0; inf and
    NaN allowed and always overflow; a step overflows when ``grad_abs_max * scale`` rounds to
    inf/NaN in ``fmt``) or ``found_inf`` (per-step booleans).  ``policy`` may be a policy object or
    a name in ``POLICIES`` (framework defaults).  Invalid input raises ``ValueError`` naming the
    argument and value.  Cost: well under a microsecond per step for ``TorchGradScaler``.
    """
    p = _policy(policy)
    if (grad_abs_max is None) == (found_inf is None):
        which = "both" if grad_abs_max is not None else "neither"
        raise ValueError(f"give exactly one of grad_abs_max and found_inf, got {which}")
    f = get(fmt) if isinstance(fmt, str) else fmt
    if not isinstance(f, Format):
        raise ValueError(f"fmt must be a Format or a format name, got {fmt!r}")
    g = _grads(grad_abs_max) if grad_abs_max is not None else None
    found = _found(found_inf) if found_inf is not None else None
    n = len(g) if g is not None else len(found)  # type: ignore[arg-type]
    scales, ovs, skipped, events, final, fatal = _loops.run(p, n, g, found, overflows(f))
    m = len(scales)
    return Trace(policy=p, fmt=f, scales=scales, overflow=ovs[:m] if m < n else ovs,
                 skipped=skipped[:m] if m < n else skipped, events=events, final_scale=final,
                 fatal=fatal, grad_abs_max=None if g is None else g[:m])


def halvings(start: float, end: float) -> float:
    """``log2(start / end)``: how many halvings lead from ``start`` to ``end``."""
    return math.log2(start / end)
