"""Seeded gradient-max schedules that produce the patterns learners meet, and synthetic logs.

``scenario(name)`` (or the function of that name) returns a ``Scenario``: a per-step gradient abs
max (unscaled), the policy it is meant for, and ``run()`` -> ``fampnb.scaler.Trace``.  Names
(``SCENARIOS``): ``calibration`` (initial scale too big: three halvings, then stable),
``spike`` (rare one-step spikes: one backoff each, then regrowth), ``drift`` (gradients drift
upward until every step overflows and the scale collapses), ``persistent`` (the article's eight
halvings, continued), ``underflow`` (tiny scale: even the largest gradient rounds to 0 in fp16).
``synthetic_log(kind, style)`` renders a whole training log of one diagnostic ``kind``
(``LOG_KINDS``: ``overflow``, ``data``, ``no-scaler``, ``healthy``) in a framework's real wording.
``run_scale_decay(policy, ..., scenario)`` is the loss-scale explorer's model (notebook 03): a
policy built from the explorer's settings (``build_policy``, each framework's own argument names)
simulated on a story, and ``summarize`` its one-line reading.  Everything is deterministic for a
given ``seed`` (an RNG seed; the article's numbers live in ``fampnb.seed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .formats import BF16, FP16, Format
from .i18n import t
from .scaler import (
    STYLES,
    ApexScaler,
    DeepSpeedScaler,
    FairseqScaler,
    MegatronScaler,
    Policy,
    SeedHalving,
    StaticScaler,
    TorchGradScaler,
    Trace,
    simulate,
    start_up_lines,
)
from .seed import EXP2_G_MAX, EXP2_START, WARN_SCALE

__all__ = ["Scenario", "SCENARIOS", "LOG_KINDS", "POLICY_LABELS", "STEPS", "scenario",
           "calibration", "spike", "drift", "persistent", "underflow", "synthetic_log",
           "synthetic_run", "synthetic_gradients", "build_policy", "has_backoff", "load_scenario",
           "suggested",
           "scenario_grads", "run_scale_decay", "summarize", "format_scale"]

#: the gradient stories: name -> label (the explorer's dropdown)
SCENARIOS: dict[str, str] = {k: t(f"scenarios.story.{k}", lang="en")   # labels: fampnb/messages/
                             for k in ("calibration", "spike", "drift", "persistent", "underflow")}
#: the kinds of synthetic training log (``synthetic_log``): kind -> label
LOG_KINDS: dict[str, str] = {k: t(f"chain.kind.{k}", lang="en")   # labels: fampnb/messages/
                             for k in ("overflow", "data", "no-scaler", "healthy")}


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
        raise ValueError(f"name must be one of {tuple(SCENARIOS)}, got {name!r}")
    return _MAKERS[name](**kwargs)


def synthetic_gradients(n: int = 20000, seed: int = 0) -> np.ndarray:
    """A gradient-like float32 sample (normal signs, log-normal magnitudes around 2**-20, seeded):
    the stand-in for a real model's gradients when torch is not installed."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * np.exp2(rng.normal(-20.0, 3.5, n))).astype(np.float32)


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
    if kind not in LOG_KINDS:
        raise ValueError(f"kind must be one of {tuple(LOG_KINDS)}, got {kind!r}")
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
    return (start_up_lines(style, trace, steps) if header else []) + lines


# ------------------------------------------------------- the explorer's model (notebook 03)

#: the policies the explorer offers: a name of ``fampnb.scaler.POLICIES`` -> label
POLICY_LABELS: dict[str, str] = {k: t(f"scenarios.policy.{k}", lang="en")
                                 for k in ("seed", "torch", "deepspeed", "megatron", "fairseq")}
#: per policy, the framework's own names of the explorer's settings: (class, start scale,
#: growth interval or None: never grows, backoff factor or None: always halves)
_SETTINGS: dict[str, tuple[type[Policy], str, str | None, str | None]] = {
    "seed": (SeedHalving, "start", None, None),
    "torch": (TorchGradScaler, "init_scale", "growth_interval", "backoff_factor"),
    "deepspeed": (DeepSpeedScaler, "init_scale", "scale_window", None),
    "megatron": (MegatronScaler, "initial_scale", "growth_interval", None),
    "fairseq": (FairseqScaler, "init_scale", "scale_window", None),
}
#: run length of each story in the explorer (None: the scenario's own length)
STEPS: dict[str, int | None] = {"calibration": 120, "spike": 600, "drift": 300,
                                "persistent": None, "underflow": 200}


def _settings(policy: str) -> tuple[type[Policy], str, str | None, str | None]:
    if policy not in _SETTINGS:
        raise ValueError(f"policy must be one of {', '.join(POLICY_LABELS)}, got {policy!r}")
    return _SETTINGS[policy]


def has_backoff(policy: str) -> bool:
    """Whether ``policy``'s framework has a backoff-factor setting (the others always halve)."""
    return _settings(policy)[3] is not None


def build_policy(policy: str, init_scale: float, backoff: float = 0.5,
                 growth_interval: int = 2000) -> tuple[Policy, list[str]]:
    """The ``fampnb.scaler`` policy for ``policy`` and the list of settings it ignores.

    Each framework's own argument names are used (``init_scale``/``initial_scale``/``start``,
    ``growth_interval``/``scale_window``); a backoff is passed only where the framework has such
    a knob (``backoff_factor``); a start scale below 1 lowers DeepSpeed's and Megatron-LM's floor.
    """
    cls, start, interval, backoff_arg = _settings(policy)
    v = float(init_scale)
    kw: dict[str, Any] = {start: int(v) if (start == "start" and v.is_integer()) else v}
    ignored: list[str] = []
    if interval is not None:
        kw[interval] = int(growth_interval)
    else:
        ignored.append("growth interval (this rule never grows)")
    if policy in ("deepspeed", "megatron") and v < 1.0:
        kw["min_scale"] = v
        ignored.append("min_scale lowered to the initial scale (the default floor is 1)")
    if backoff_arg is not None:
        kw[backoff_arg] = float(backoff)
    elif backoff != 0.5:
        ignored.append("backoff (fixed at x0.5 here)")
    return cls(**kw), ignored


def load_scenario(name: str, steps: int | None = None, seed: int = 0) -> Scenario:
    """The story called ``name`` at the explorer's length (``STEPS``) unless ``steps`` is given."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, got {name!r}")
    n = steps if steps is not None else STEPS[name]
    kw: dict[str, Any] = {"seed": int(seed)}
    if n is not None:
        kw["steps"] = int(n)
    return scenario(name, **kw)


def suggested(name: str) -> tuple[float, int]:
    """The start scale and growth interval a story is meant for (from its suggested policy)."""
    sc = load_scenario(name)
    pol = sc.policy
    interval = getattr(pol, "growth_interval", None) or getattr(pol, "scale_window", None) or 2000
    return float(sc.init_scale), int(interval)


def scenario_grads(name: str, steps: int | None = None, seed: int = 0) -> np.ndarray:
    """Per-step gradient abs max (unscaled; inf allowed) of the story ``name``."""
    return np.asarray(load_scenario(name, steps, seed).grad_abs_max, dtype=float)


def run_scale_decay(policy: str = "torch", init_scale: float | None = None, backoff: float = 0.5,
                    growth_interval: int | None = None, scenario: str = "drift",
                    steps: int | None = None, seed: int = 0) -> Trace:
    """Simulate ``policy`` on ``scenario``'s gradients in fp16; returns the ``scaler.Trace``.

    ``init_scale`` / ``growth_interval`` default to what the story suggests (``suggested``).
    """
    s0, gi0 = suggested(scenario)
    init_scale = s0 if init_scale is None else init_scale
    growth_interval = gi0 if growth_interval is None else growth_interval
    if not (isinstance(init_scale, (int, float)) and math.isfinite(init_scale) and init_scale > 0):
        raise ValueError(f"init_scale must be a finite number > 0, got {init_scale!r}")
    pol, _ = build_policy(policy, init_scale, backoff, growth_interval)
    return simulate(pol, scenario_grads(scenario, steps, seed))


def format_scale(x: float) -> str:
    """A loss scale as the explorer prints it: an integer when it is one (65536), else 6 digits."""
    if not math.isfinite(x):
        return str(x)
    if x >= 1 and float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.6g}"


def summarize(trace: Trace) -> str:
    """One line: steps, backoffs, skipped steps, growths, final and minimum scale, the article's
    256 warning (``seed.WARN_SCALE``) and the steps whose scaled gradient falls below fp16's
    normal floor."""
    rows = trace.rows
    n = len(rows)
    if n == 0:
        return t("scenarios.sum.none")
    scales = np.array([r.scale for r in rows], dtype=float)
    grad = np.array([np.nan if r.grad_abs_max is None else r.grad_abs_max for r in rows], dtype=float)
    ev = [r.event or "" for r in rows]
    backoffs, growths = ev.count("backoff"), ev.count("growth")
    nxt = float(rows[-1].next_scale)
    final = nxt if math.isfinite(nxt) else float(scales[-1])
    lowest = float(np.nanmin(np.append(scales, final)))
    skipped = sum(bool(r.skipped) for r in rows)
    parts = [t("scenarios.sum.steps", n=n),
             t("scenarios.sum.backoffs" if backoffs != 1 else "scenarios.sum.backoff", n=backoffs),
             t("scenarios.sum.skipped", n=skipped),
             t("scenarios.sum.growths" if growths != 1 else "scenarios.sum.growth", n=growths),
             t("scenarios.sum.final", scale=format_scale(final)),
             t("scenarios.sum.min", scale=format_scale(lowest))]
    if trace.fatal:
        parts.append(t("scenarios.sum.fatal", n=n))
    elif "min-scale" in ev:
        parts.append(t("scenarios.sum.pinned", n=ev.count("min-scale")))
    tail = ev[-3:]
    if final < WARN_SCALE and backoffs:
        falling = "backoff" in tail and "growth" not in ev[-10:]
        parts.append(t("scenarios.sum.below") + (t("scenarios.sum.falling") if falling else ""))
    with np.errstate(invalid="ignore", over="ignore"):
        prod = grad * scales
    under = int(np.sum(prod < FP16.min_normal))
    if under:
        zero = int(np.sum(prod <= FP16.underflow_threshold))
        parts.append(t("scenarios.sum.under" if under != 1 else "scenarios.sum.under1", n=under)
                     + (t("scenarios.sum.zero", n=zero) if zero else ""))
    return " · ".join(parts)
