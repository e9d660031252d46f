"""Seeded gradient-max schedules that produce the patterns learners meet, and synthetic logs.

``scenario(name)`` (or the function of that name) returns a ``Scenario``: a per-step gradient abs
max (unscaled), the policy it is meant for, and ``run()`` -> ``fampnb.scaler.Trace``.  Names
(``SCENARIOS``): ``calibration`` (initial scale too big: three halvings, then stable),
``spike`` (rare one-step spikes: one backoff each, then regrowth), ``drift`` (gradients drift
upward until every step overflows and the scale collapses), ``persistent`` (the article's eight
halvings, continued), ``underflow`` (tiny scale: even the largest gradient rounds to 0 in fp16).
``synthetic_log(kind, style)`` renders a whole training log of one diagnostic ``kind``
(``KINDS``: ``overflow``, ``data``, ``no-scaler``, ``healthy``) in a framework's real wording.
Everything is deterministic for a given ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .formats import BF16, FP16, Format
from .scaler import (STYLES, ApexScaler, DeepSpeedScaler, FairseqScaler, MegatronScaler, Policy,
                     SeedHalving, StaticScaler, Trace, TorchGradScaler, simulate)
from .seed import EXP2_G_MAX, EXP2_START

__all__ = ["Scenario", "SCENARIOS", "KINDS", "scenario", "calibration", "spike", "drift",
           "persistent", "underflow", "synthetic_log", "synthetic_run"]

SCENARIOS: tuple[str, ...] = ("calibration", "spike", "drift", "persistent", "underflow")
KINDS: tuple[str, ...] = ("overflow", "data", "no-scaler", "healthy")


@dataclass(frozen=True, eq=False)
class Scenario:
    """A named gradient schedule: ``grad_abs_max`` (float64 array, one value per step, unscaled),
    the suggested ``policy`` and its ``init_scale``, ``steps``, ``fmt`` and the ``seed`` used."""

    name: str
    description: str
    grad_abs_max: np.ndarray = field(repr=False)
    policy: Policy
    init_scale: float
    steps: int
    fmt: Format = FP16
    seed: int = 0

    def run(self, policy: Policy | None = None) -> Trace:
        """Simulate the suggested policy (or ``policy``) on this schedule."""
        return simulate(policy or self.policy, self.grad_abs_max, fmt=self.fmt)


def _check(steps: Any, least: int, name: str = "steps") -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {steps!r}")
    return int(steps)


def _jitter(rng: np.random.Generator, n: int, width: float) -> np.ndarray:
    """Bounded multiplicative noise in [1 - width, 1 + width]."""
    return 1.0 + width * np.tanh(rng.standard_normal(n))


def calibration(steps: int = 300, seed: int = 0) -> Scenario:
    """Gradients ~6 (+-4 %): 65536, 32768 and 16384 overflow, 8192 fits; then nothing happens."""
    n = _check(steps, 4)
    g = 6.0 * _jitter(np.random.default_rng(seed), n, 0.04)
    return Scenario("calibration", "initial scale 65536 is too big for gradients around 6: "
                    "three start-up halvings to 8192, then stable (benign)", g,
                    TorchGradScaler(), 65536.0, n, FP16, seed)


def spike(steps: int = 600, seed: int = 0, spikes: int = 3) -> Scenario:
    """Gradients ~0.05 with ``spikes`` one-step spikes of x300..x3000: one backoff each, the scale
    grows back every 200 clean steps (``growth_interval=200``)."""
    n = _check(steps, 100)
    rng = np.random.default_rng(seed)
    g = 0.05 * _jitter(rng, n, 0.1)
    at = np.sort(rng.choice(np.arange(50, n - 20), size=min(spikes, n - 70), replace=False))
    g[at] *= 10.0 ** rng.uniform(2.5, 3.5, size=at.size)
    return Scenario("spike", f"steady small gradients with {at.size} isolated spikes (steps "
                    f"{', '.join(str(int(s) + 1) for s in at)}): one backoff each, then "
                    "regrowth (benign)", g, TorchGradScaler(growth_interval=200), 65536.0, n,
                    FP16, seed)


def drift(steps: int = 600, seed: int = 0) -> Scenario:
    """Gradients drift up x10**6 over the first 90 % of the run, then are inf (the loss blew up):
    backoffs grow frequent, then every step overflows and the scale collapses toward 0."""
    n = _check(steps, 20)
    rng = np.random.default_rng(seed)
    t = np.arange(n) / n
    g = 0.02 * 10.0 ** (6.0 * t / 0.9) * _jitter(rng, n, 0.05)
    g[int(0.9 * n):] = np.inf
    return Scenario("drift", "gradients drift steadily upward (learning rate too high?): "
                    "backoffs come faster and faster, then every step overflows and the scale "
                    "collapses (overflow failure)", g, TorchGradScaler(growth_interval=100),
                    65536.0, n, FP16, seed)


def persistent(steps: int = 8, seed: int = 0) -> Scenario:
    """The article's experiment 2 (``seed.EXP2_G_MAX``) for the first 8 steps; after that the
    gradient doubles as the scale halves (scaled value stays 128000), so every step keeps
    overflowing until the integer scale reaches 0 (step 18 from 65536)."""
    n = _check(steps, 1)
    base = list(EXP2_G_MAX[:n])
    while len(base) < n:
        base.append(base[-1] * 2)
    return Scenario("persistent", "the article's eight halvings: every step overflows, "
                    "65536 -> 256; act on gradients and data, not on the scaler",
                    np.asarray(base, dtype=np.float64), SeedHalving(EXP2_START),
                    float(EXP2_START), n, FP16, seed)


def underflow(steps: int = 300, seed: int = 0) -> Scenario:
    """Gradient maxima 3e-7..3e-6 at a scale of 2**-8: scaled maxima 1.2e-9..1.2e-8 are all below
    half fp16's smallest subnormal (2**-25 = 2.98e-8), so every gradient rounds to 0; nothing
    overflows, so a GradScaler would only grow it back after ``growth_interval`` steps."""
    n = _check(steps, 1)
    g = 10.0 ** np.random.default_rng(seed).uniform(-6.5, -5.5, size=n)
    return Scenario("underflow", "scale far too small (2**-8, e.g. after a collapse): every "
                    "scaled gradient rounds to 0 in fp16 and no overflow ever signals it",
                    g, TorchGradScaler(init_scale=2.0 ** -8), 2.0 ** -8, n, FP16, seed)


_MAKERS: dict[str, Callable[..., Scenario]] = {
    "calibration": calibration, "spike": spike, "drift": drift, "persistent": persistent,
    "underflow": underflow}


def scenario(name: str, **kwargs: Any) -> Scenario:
    """The scenario called ``name`` (``SCENARIOS``); keyword arguments go to its function."""
    if name not in _MAKERS:
        raise ValueError(f"name must be one of {SCENARIOS}, got {name!r}")
    return _MAKERS[name](**kwargs)


# ---------------------------------------------------------------------------- synthetic logs

#: fp16 policy per style, as a run of that framework would start it
_FP16: dict[str, Policy] = {
    "deepspeed": DeepSpeedScaler(init_scale=2.0 ** 16), "megatron": MegatronScaler(),
    "fairseq": FairseqScaler(), "apex": ApexScaler(), "hf": TorchGradScaler(),
    "torch": TorchGradScaler(), "seed": SeedHalving()}
_START_UP_HALVINGS = {"megatron": 9, "deepspeed": 4}


def synthetic_run(kind: str, style: str = "deepspeed", steps: int = 200, seed: int = 0,
                  log_interval: int = 10) -> tuple[Trace, np.ndarray]:
    """The simulated run behind ``synthetic_log``: ``(trace, loss)`` (loss may hold NaN)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    n = _check(steps, 20)
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    loss = (0.9 + 1.6 * np.exp(-t / (0.3 * n))) * _jitter(rng, n, 0.02)
    noise = _jitter(rng, n, 0.05)
    thr = 0.75 * FP16.max
    if kind in ("data", "no-scaler"):  # bf16/fp32: scale 1.0, no overflow check, no skips
        policy: Policy = StaticScaler(1.0)
        g = 0.5 * noise
        k = 0 if kind == "data" else int(0.6 * n)
        loss[k:], g[k:] = np.nan, np.nan
        if kind == "no-scaler":
            loss[k - 3:k] *= (3.0, 10.0, 60.0)  # a short blow-up before the NaN
        return simulate(policy, g, fmt=BF16), loss
    policy = _FP16[style]
    if kind == "overflow" and style == "megatron":
        policy = MegatronScaler(initial_scale=2.0 ** 16)
    start = float(policy.start_scale)
    if kind == "healthy":
        settle = start / 2.0 ** _START_UP_HALVINGS.get(style, 3)
        g = thr / settle * noise * 0.95
        return simulate(policy, g, fmt=FP16), loss
    # overflow: settled run, then a gradient blow-up that outruns the halving, then NaN
    g = 0.3 * FP16.max / start * noise
    k0 = int(0.6 * n)
    m = max(12, 3 * int(log_interval))  # the blow-up lasts a few records before the loss is NaN
    ramp = np.arange(1, m + 1, dtype=np.float64)[: max(0, min(m, n - k0))]
    g[k0:k0 + m] = g[k0] * 2.0 ** (1.3 * ramp)
    loss[k0:k0 + m] *= 1.04 ** ramp
    g[k0 + m:], loss[k0 + m:] = np.nan, np.nan
    return simulate(policy, g, fmt=FP16), loss


def _ds_cfg(arg: str, value: Any) -> str:
    """DeepSpeed's config dump line (``DeepSpeedConfig.print``: 29-column dot padding)."""
    return (f"[2024-09-11 17:51:58,046] [INFO] [config.py:988:print]   {arg} "
            f"{'.' * (29 - len(arg))} {value}")


def _mg_arg(arg: str, value: Any) -> str:
    """Megatron-LM's argument dump line (48-column dot padding)."""
    return f"  {arg} {'.' * (48 - len(arg))} {value}"


def _apex_banner(level: str, what: str, scale: str, half: bool) -> list[str]:
    """What ``amp.initialize`` prints for an optimization level."""
    return [f"Selected optimization level {level}:  {what}", "",
            "Defaults for this optimization level are:",
            "enabled                : True", f"opt_level              : {level}",
            f"cast_model_type        : {'None' if half else 'torch.float32'}",
            f"patch_torch_functions  : {half}", "keep_batchnorm_fp32    : None",
            f"master_weights         : {'None' if half else 'False'}",
            f"loss_scale             : {scale}"]


def _header(style: str, trace: Trace, steps: int) -> list[str]:
    """Start-up lines that state the precision, as each framework (or user loop) prints them."""
    p = trace.policy
    bf16 = isinstance(p, StaticScaler)
    start = p.start_scale
    if style == "deepspeed":
        return [_ds_cfg("bfloat16_enabled", bf16), _ds_cfg("fp16_enabled", not bf16),
                _ds_cfg("initial_dynamic_scale", 1 if bf16 else int(start)),
                _ds_cfg("loss_scale", 1.0 if bf16 else 0)]
    if style == "megatron":
        return ["------------------------ arguments ------------------------",
                _mg_arg("bf16", bf16), _mg_arg("fp16", not bf16),
                _mg_arg("initial_loss_scale", float(getattr(p, "initial_scale", 2.0 ** 32))),
                _mg_arg("log_interval", 10), _mg_arg("loss_scale", None),
                "-------------------- end of arguments ---------------------", "training ..."]
    if style == "fairseq":
        init = 128 if bf16 else int(start)
        return [f"2024-09-11 17:51:58 | INFO | fairseq_cli.train | Namespace(arch='transformer', "
                f"bf16={bf16}, fp16={not bf16}, fp16_init_scale={init}, min_loss_scale=0.0001, "
                f"log_interval=10, max_update={steps})",
                "2024-09-11 17:52:10 | INFO | fairseq_cli.train | begin training epoch 1"]
    if style == "hf":
        return ["TrainingArguments(", f"bf16={bf16},", f"fp16={not bf16},",
                "logging_nan_inf_filter=False,", "logging_steps=10,", ")",
                "***** Running training *****", f"  Num examples = {steps * 64:,}",
                "  Num Epochs = 1", f"  Total optimization steps = {steps:,}"]
    if style == "apex":
        if bf16:
            return _apex_banner("O0", "Pure FP32 training.", "1.0", False)
        return _apex_banner("O1", "Insert automatic casts around Pytorch functions and Tensor "
                            "methods.", "dynamic", True)
    if style == "torch":
        return ["precision: fp32, GradScaler: off" if bf16 else
                f"precision: fp16 autocast, GradScaler(init_scale={start:g})"]
    return ["precision: bf16, loss scaling: off" if bf16 else
            f"precision: fp16, loss scaling: dynamic (start {start})"]


def synthetic_log(kind: str, style: str = "deepspeed", steps: int = 200, seed: int = 0,
                  log_interval: int = 10, header: bool = True) -> list[str]:
    """A whole synthetic training log of one diagnostic ``kind`` in ``style``'s real wording.

    ``overflow``: a settled fp16 run, then backoff records on consecutive steps down to the
    floor, ending in the framework's fatal error (DeepSpeed, fairseq) or a lasting NaN loss.
    ``data``: bf16/fp32, loss NaN from step 1, no backoff record anywhere.  ``no-scaler``:
    bf16 (scale 1.0, no scaler lines), finite falling loss, a short blow-up, then NaN from 60 % of
    the run on.  ``healthy``: fp16 start-up calibration backoffs, then a stable scale and a
    finite, falling loss.  ``steps`` >= 20; records every ``log_interval`` steps.  ``header``
    puts the framework's start-up lines first (its printed config: precision, initial scale), so
    bf16 runs say so as real logs do.
    """
    trace, loss = synthetic_run(kind, style, steps, seed, log_interval)
    lines = trace.log_lines(style, loss=loss.tolist(), log_interval=log_interval)
    return (_header(style, trace, steps) if header else []) + lines
