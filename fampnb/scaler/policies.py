"""Loss-scaler policies of the real frameworks: configuration, validation and the update rule.

Each policy is a frozen dataclass whose argument names and defaults are the framework's own; its
``_stepper()`` returns a small state machine whose ``update(overflow)`` follows the framework's
source line by line (each loop in ``loops`` names the file it transcribes: PyTorch's
``aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp``, DeepSpeed's
``deepspeed/runtime/fp16/loss_scaler.py`` as of 0.17.1, Megatron-LM's
``megatron/core/optimizer/grad_scaler.py``, fairseq's ``fairseq/optim/dynamic_loss_scaler.py``,
apex's ``apex/amp/scaler.py``, Keras 3's ``keras/src/optimizers/loss_scale_optimizer.py``).
Scales that the framework keeps in an fp32 tensor or variable (PyTorch, Megatron-LM, Keras 3) are
rounded to fp32 after every update exactly as the C++/CUDA kernel stores them; Python-float
scalers (DeepSpeed, fairseq, apex, the article's rule) stay in float64.  ``update`` returns
``(event, fatal)``: ``event`` in ``"backoff" "growth" "hysteresis" "min-scale" None`` and ``fatal``
the exception text when the framework would stop the run (then the scale is left as the framework
leaves it).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["Policy", "TorchGradScaler", "DeepSpeedScaler", "MegatronScaler", "FairseqScaler",
           "ApexScaler", "KerasScaler", "SeedHalving", "StaticScaler", "POLICIES",
           "F32_MAX", "F32_TINY", "F32_OVERFLOW", "f32"]

F32_MAX = 3.4028234663852886e38
F32_TINY = 2.0 ** -126
#: smallest magnitude a float64 -> float32 cast turns into inf (max + half an ulp, ties to even)
F32_OVERFLOW = F32_MAX + 2.0 ** 103

DS_MIN_SCALE_MSG = ("Current loss scale already at minimum - cannot decrease scale anymore. "
                    "Exiting run.")
FAIRSEQ_MIN_SCALE_MSG = ("Minimum loss scale reached ({}). Your loss is probably exploding. Try "
                         "lowering the learning rate, using gradient clipping or increasing the "
                         "batch size.")


def f32(x: float) -> float:
    """``x`` rounded to float32 as a C ``(float)`` cast does (ties to even; inf past the top)."""
    if x >= F32_OVERFLOW:
        return math.inf
    if x <= -F32_OVERFLOW:
        return -math.inf
    return struct.unpack("f", struct.pack("f", x))[0]


def _pow2(x: float) -> bool:
    m, _ = math.frexp(x)
    return m == 0.5


def _num(name: str, value: Any) -> float:
    if isinstance(value, (bool, str, bytes)) or not hasattr(value, "__float__"):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def _positive(name: str, value: Any) -> float:
    v = _num(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def _fits_f32(name: str, value: float) -> None:
    if f32(value) == 0.0 or math.isinf(f32(value)):
        raise ValueError(f"{name} must be representable as a non-zero float32, got {value!r}")


def _growth(name: str, value: Any) -> float:
    v = _num(name, value)
    if v <= 1:
        raise ValueError(f"{name} must be > 1, got {value!r}")
    return v


def _backoff(name: str, value: Any) -> float:
    v = _num(name, value)
    if not 0 < v < 1:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}")
    return v


def _interval(name: str, value: Any) -> int:
    if isinstance(value, bool) or not float(_num(name, value)).is_integer():
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


class Policy:
    """Base class: ``name`` (short label), ``style`` (default log style) and ``start_scale``."""

    name: ClassVar[str] = "policy"
    style: ClassVar[str] = "seed"
    fp32_scale: ClassVar[bool] = False

    @property
    def start_scale(self) -> float:
        raise NotImplementedError

    def _stepper(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class TorchGradScaler(Policy):
    """``torch.amp.GradScaler``: x backoff on overflow; x growth after ``growth_interval`` clean
    steps, kept only if finite in fp32; no floor (the scale can reach 0); fp32 scale."""

    init_scale: float = 2.0 ** 16
    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000
    name: ClassVar[str] = "torch"
    style: ClassVar[str] = "torch"
    fp32_scale: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _fits_f32("init_scale", _positive("init_scale", self.init_scale))
        _growth("growth_factor", self.growth_factor)
        _backoff("backoff_factor", self.backoff_factor)
        _interval("growth_interval", self.growth_interval)

    @property
    def start_scale(self) -> float:
        return f32(float(self.init_scale))


@dataclass(frozen=True)
class DeepSpeedScaler(Policy):
    """DeepSpeed ``DynamicLossScaler`` (fp16): hysteresis decrements before any halving and is
    refilled on growth (every clean step with ``consecutive_hysteresis``); halving is clamped at
    ``min_scale`` and an overflow *at* ``min_scale`` raises when ``raise_error_at_min_scale``.
    Growth timing of DeepSpeed >= 0.17.1 by default (first doubling after ``scale_window + 1``
    clean steps); ``legacy_growth=True`` doubles after ``scale_window`` clean steps (<= 0.17.0)."""

    init_scale: float = 2.0 ** 32
    scale_window: int = 1000
    hysteresis: int = 2
    consecutive_hysteresis: bool = False
    min_scale: float = 1
    raise_error_at_min_scale: bool = True
    legacy_growth: bool = False
    name: ClassVar[str] = "deepspeed"
    style: ClassVar[str] = "deepspeed"

    def __post_init__(self) -> None:
        _positive("init_scale", self.init_scale)
        _interval("scale_window", self.scale_window)
        _interval("hysteresis", self.hysteresis)
        _flag("consecutive_hysteresis", self.consecutive_hysteresis)
        _positive("min_scale", self.min_scale)
        _flag("raise_error_at_min_scale", self.raise_error_at_min_scale)
        _flag("legacy_growth", self.legacy_growth)

    @property
    def start_scale(self) -> float:
        return float(self.init_scale)


@dataclass(frozen=True)
class MegatronScaler(Policy):
    """Megatron-LM ``DynamicGradScaler``: growth 2, backoff 0.5 (hard-coded); the hysteresis
    tracker drops on every overflow and the scale halves once it is <= 0, clamped at
    ``min_scale`` (then it keeps skipping, never raises); the tracker is refilled only when the
    scale grows after ``growth_interval`` clean steps; fp32 scale."""

    initial_scale: float = 2.0 ** 32
    min_scale: float = 1.0
    growth_interval: int = 1000
    hysteresis: int = 2
    name: ClassVar[str] = "megatron"
    style: ClassVar[str] = "megatron"
    fp32_scale: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _fits_f32("initial_scale", _positive("initial_scale", self.initial_scale))
        _fits_f32("min_scale", _positive("min_scale", self.min_scale))
        if self.min_scale > self.initial_scale:
            raise ValueError(f"min_scale must be <= initial_scale, got {self.min_scale!r}")
        _interval("growth_interval", self.growth_interval)
        _interval("hysteresis", self.hysteresis)

    @property
    def start_scale(self) -> float:
        return f32(float(self.initial_scale))


@dataclass(frozen=True)
class FairseqScaler(Policy):
    """fairseq ``DynamicLossScaler``: halves when the share of overflowing iterations since the
    last rescale is >= ``tolerance`` (then floored at ``threshold``); a result <= ``min_loss_scale``
    restores the old scale and raises ``FloatingPointError`` (fatal); doubles after ``scale_window``
    clean iterations since the last overflow.  The CLI's defaults differ (init 128, window 16384 on
    one GPU); these are the class defaults."""

    init_scale: float = 2.0 ** 15
    scale_window: int = 2000
    tolerance: float = 0.0
    threshold: float | None = None
    min_loss_scale: float = 1e-4
    name: ClassVar[str] = "fairseq"
    style: ClassVar[str] = "fairseq"

    def __post_init__(self) -> None:
        _positive("init_scale", self.init_scale)
        _interval("scale_window", self.scale_window)
        if _num("tolerance", self.tolerance) < 0:
            raise ValueError(f"tolerance must be >= 0, got {self.tolerance!r}")
        if self.threshold is not None:
            _positive("threshold", self.threshold)
        _positive("min_loss_scale", self.min_loss_scale)

    @property
    def start_scale(self) -> float:
        return float(self.init_scale)


@dataclass(frozen=True)
class ApexScaler(Policy):
    """NVIDIA apex amp ``LossScaler`` (O1/O2 dynamic): starts at ``min(max_loss_scale,
    init_scale)``; halves on overflow (floored at ``min_loss_scale`` only when it is set);
    doubles after ``scale_window`` clean steps, capped at ``max_loss_scale``."""

    init_scale: float = 2.0 ** 16
    scale_window: int = 2000
    min_loss_scale: float | None = None
    max_loss_scale: float = 2.0 ** 24
    name: ClassVar[str] = "apex"
    style: ClassVar[str] = "apex"

    def __post_init__(self) -> None:
        _positive("init_scale", self.init_scale)
        _interval("scale_window", self.scale_window)
        if self.min_loss_scale is not None:
            _positive("min_loss_scale", self.min_loss_scale)
        _positive("max_loss_scale", self.max_loss_scale)

    @property
    def start_scale(self) -> float:
        return float(min(self.max_loss_scale, self.init_scale))


@dataclass(frozen=True)
class KerasScaler(Policy):
    """Keras 3 ``LossScaleOptimizer``: halves on non-finite grads with no floor; doubles after
    ``dynamic_growth_steps`` consecutive finite steps (no finiteness check); fp32 scale."""

    initial_scale: float = 2.0 ** 15
    dynamic_growth_steps: int = 2000
    name: ClassVar[str] = "keras"
    style: ClassVar[str] = "torch"
    fp32_scale: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _fits_f32("initial_scale", _positive("initial_scale", self.initial_scale))
        _interval("dynamic_growth_steps", self.dynamic_growth_steps)

    @property
    def start_scale(self) -> float:
        return f32(float(self.initial_scale))


@dataclass(frozen=True)
class SeedHalving(Policy):
    """The source article's rule: integer halving (``scale // 2``) on every overflow, never grows,
    no floor (1 // 2 is 0)."""

    start: int = 65536
    name: ClassVar[str] = "seed"
    style: ClassVar[str] = "seed"

    def __post_init__(self) -> None:
        _positive("start", self.start)

    @property
    def start_scale(self) -> float:
        return self.start  # kept an int, as the article prints it (an int is a float to mypy)


@dataclass(frozen=True)
class StaticScaler(Policy):
    """A constant loss scale (bf16/fp32 runs: 1.0, no scaler).  ``skip_on_overflow=False`` is
    DeepSpeed/Megatron bf16 (no overflow check: a non-finite step is applied); ``True`` is
    Megatron's ``ConstantGradScaler`` or a static apex/DeepSpeed ``loss_scale`` (skip, keep)."""

    loss_scale: float = 1.0
    skip_on_overflow: bool = False
    name: ClassVar[str] = "static"
    style: ClassVar[str] = "megatron"

    def __post_init__(self) -> None:
        _positive("loss_scale", self.loss_scale)
        _flag("skip_on_overflow", self.skip_on_overflow)

    @property
    def start_scale(self) -> float:
        return float(self.loss_scale)


POLICIES: dict[str, type[Policy]] = {
    c.name: c for c in (TorchGradScaler, DeepSpeedScaler, MegatronScaler, FairseqScaler,
                        ApexScaler, KerasScaler, SeedHalving, StaticScaler)
}
