"""Where fp16 NaN comes from inside a model: the hazards' exact numbers (notebook 08).

Every threshold is found by real arithmetic in the format (numpy float16, ml_dtypes bfloat16:
each operation computed in float32 and rounded once to the format, as a GPU kernel that keeps
fp16 in and out does), scanning the format's own values; nothing is typed in.  numpy/ml_dtypes
only; the same hazards firing in a tiny PyTorch model live in ``fampnb.hazard_demos``.

- ``mask_numbers``: ``finfo.min`` added to a negative score, ``-1e9`` cast to fp16, a fully
  masked row through softmax;
- ``exp_numbers``: the smallest input whose ``exp`` is inf;
- ``norm_numbers``: the deviation whose square is inf, the variance whose row sum is inf,
  LayerNorm's eps values after the cast;
- ``adam_numbers``: Adam's eps after the cast, the update of a zero gradient, the scaled gradient
  whose second moment overflows;
- ``swamp_numbers`` / ``weight_paths``: bf16 updates swamped by rounding, and what fp32 master
  weights, Kahan summation and stochastic rounding do about it;
- ``op_chain(scale)``: a small attention + LayerNorm block computed op by op in fp16, each op's
  abs max, and the first op that leaves the format (the widget's model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .formats import BF16, FP16, FP32, Format, get

__all__ = ["mask_numbers", "exp_numbers", "norm_numbers", "adam_numbers", "swamp_numbers",
           "weight_paths", "softmax", "OpStep", "op_chain", "first_out", "format_values",
           "CHAIN_OPS"]


def _q(x: Any, fmt: Format) -> np.ndarray:
    """``x`` cast to ``fmt`` (an array of the format's own dtype)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x, np.float32).astype(fmt.dtype)


def _f(x: Any) -> float:
    return float(np.asarray(x, np.float64))


def format_values(fmt: Format | str = FP16, negative: bool = False) -> np.ndarray:
    """Every finite non-negative value of ``fmt`` (2-byte formats), ascending, in its dtype;
    ``negative`` gives their negatives (descending magnitudes become ascending values)."""
    fmt = get(fmt)
    if fmt.bits != 16:
        raise ValueError(f"format_values scans 16-bit formats only, got {fmt.name}")
    codes = np.arange(0, 1 << 15, dtype=np.uint16).view(fmt.dtype)
    vals = codes[np.isfinite(codes.astype(np.float32))]
    return -vals if negative else vals


def _first(vals: np.ndarray, hit: np.ndarray) -> float:
    """The first value of the ascending ``vals`` where ``hit`` is true (NaN if none)."""
    idx = np.flatnonzero(hit)
    return _f(vals[idx[0]]) if idx.size else math.nan


def softmax(x: Any, fmt: Format | str = FP16, stable: bool = True, axis: int = -1) -> np.ndarray:
    """Softmax computed op by op in ``fmt`` (float64 result); ``stable`` subtracts the row max
    first (what every framework's softmax does), else ``exp(x) / sum(exp(x))`` as written.  The
    row sum is accumulated in float32 and rounded once (as fused kernels do)."""
    fmt = get(fmt)
    a = _q(x, fmt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if stable:
            a = (a.astype(np.float32) - a.astype(np.float32).max(axis=axis, keepdims=True))
            a = a.astype(fmt.dtype)
        e = np.exp(a.astype(np.float32)).astype(fmt.dtype)
        s = e.astype(np.float32).sum(axis=axis, keepdims=True).astype(fmt.dtype)
        out = (e.astype(np.float32) / s.astype(np.float32)).astype(fmt.dtype)
    return out.astype(np.float64)


# ------------------------------------------------------------------------ attention masks
def mask_numbers(fmt: Format | str = FP16, row: int = 4) -> dict[str, Any]:
    """Attention-mask hazards in ``fmt``.

    ``min`` (the format's most negative finite value), ``minus_1e9`` (``-1e9`` after the cast:
    -inf in fp16), ``inf_from_score`` (the negative score of smallest magnitude for which
    ``min + score`` rounds to -inf: any score at or below it turns an additive mask into -inf),
    ``min_twice`` (two additive masks: ``min + min``), ``masked_row_inf`` (softmax of a fully
    masked row of ``row`` scores at -inf: NaN), ``masked_row_min`` (the same row masked once with
    ``min``: uniform, ``1/row``), ``masked_row_fp32`` (the -inf row with min added again, softmax in
    fp32 on a mask of fp32's min: finite)."""
    fmt = get(fmt)
    lo = _q(-fmt.max, fmt)
    neg = format_values(fmt, negative=True)
    with np.errstate(over="ignore"):
        summed = (lo.astype(np.float32) + neg.astype(np.float32)).astype(fmt.dtype)
    inf_row = np.full(row, -np.inf)
    min_row = np.full(row, _f(lo))
    twice = _q(_f(lo) * 2, fmt)
    fp32_row = _q(np.full(row, -FP32.max), FP32)
    return {
        "format": fmt.name, "min": _f(lo), "minus_1e9": _f(_q(-1e9, fmt)),
        "inf_from_score": _first(np.abs(neg.astype(np.float64)), np.isinf(summed)) * -1,
        "min_twice": _f(twice),
        "masked_row_inf": softmax(inf_row, fmt).tolist(),
        "masked_row_min": softmax(min_row, fmt).tolist(),
        "masked_row_fp32": softmax(fp32_row.astype(np.float64) + _f(lo), FP32).tolist(),
    }


# ------------------------------------------------------------------------ exp in softmax
def exp_numbers(fmt: Format | str = FP16) -> dict[str, Any]:
    """``exp`` in ``fmt``: ``first_inf`` (the smallest value of the format whose exp rounds to
    inf), ``last_finite`` (the value just below it) and its exp, ``ln_max`` (``log(max)``)."""
    fmt = get(fmt)
    vals = format_values(fmt)
    with np.errstate(over="ignore"):
        e = np.exp(vals.astype(np.float32)).astype(fmt.dtype)
    bad = np.isinf(e.astype(np.float32))
    i = int(np.flatnonzero(bad)[0])
    return {"format": fmt.name, "first_inf": _f(vals[i]), "last_finite": _f(vals[i - 1]),
            "exp_last_finite": _f(e[i - 1]), "ln_max": math.log(fmt.max)}


# ------------------------------------------------------------------------ normalisation
def norm_numbers(fmt: Format | str = FP16, width: int = 256,
                 eps: tuple[float, ...] = (1e-12, 1e-6, 1e-5)) -> dict[str, Any]:
    """Normalisation hazards: ``square_inf`` (the smallest deviation ``|x - mean|`` whose square
    rounds to inf), ``variance_inf`` (the smallest per-element variance whose sum over ``width``
    features, accumulated and stored in ``fmt`` before the division, is inf: a fp16 row sum of
    squares), ``eps`` (each eps after the cast, with its zone name), and ``zero_var_out`` (what
    ``(x - mean) / sqrt(var + eps)`` gives on a constant row for the first eps: 0/0)."""
    fmt = get(fmt)
    vals = format_values(fmt)
    v32 = vals.astype(np.float32)
    with np.errstate(over="ignore"):
        sq = (v32 * v32).astype(fmt.dtype)
        row = (v32 * np.float32(width)).astype(fmt.dtype)
    e0 = _q(eps[0], fmt).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero_out = np.float32(0.0) / np.sqrt(np.float32(0.0) + e0)
    return {
        "format": fmt.name, "square_inf": _first(vals.astype(np.float64), np.isinf(sq.astype(
            np.float32))), "width": width,
        "variance_inf": _first(vals.astype(np.float64), np.isinf(row.astype(np.float32))),
        "eps": [(float(e), _f(_q(e, fmt)), fmt.classify(np.float32(e)).item()) for e in eps],
        "zero_var_out": _f(_q(zero_out, fmt)),
    }


# ------------------------------------------------------------------------ optimizer state
def adam_numbers(fmt: Format | str = FP16, eps: float = 1e-8, scale: float = 2.0 ** 16,
                 grad: float = 0.01) -> dict[str, Any]:
    """Adam's state in ``fmt``: ``eps_stored`` (``eps`` after the cast), ``zero_grad_update``
    (``m / (sqrt(v) + eps)`` with ``m = v = 0``: 0/0), ``v_inf_scaled`` (the smallest scaled
    gradient ``|g * S|`` whose square, the second moment, rounds to inf), ``scaled_grad`` and
    ``scaled_v`` (``grad * scale`` and its square in ``fmt``)."""
    fmt = get(fmt)
    e = _q(eps, fmt).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        upd = (np.float32(0) / (np.sqrt(np.float32(0)) + e)).astype(fmt.dtype)
        g = _q(grad * scale, fmt).astype(np.float32)
        v = (g * g).astype(fmt.dtype)
    return {"format": fmt.name, "eps": eps, "eps_stored": _f(_q(eps, fmt)),
            "zero_grad_update": _f(upd), "v_inf_scaled": norm_numbers(fmt)["square_inf"],
            "grad": grad, "scale": scale, "scaled_grad": _f(g), "scaled_v": _f(v)}


# ------------------------------------------------------------------------ bf16 swamping
def swamp_numbers(fmt: Format | str = BF16, weight: float = 1.0) -> dict[str, Any]:
    """Updates lost to rounding at ``weight``: ``one_plus_2m9`` (``weight + 2**-9`` in ``fmt``),
    ``largest_lost`` (the largest power of two ``u`` with ``weight + u == weight`` in ``fmt``; a tie
    rounds to even, so ``2**-8`` is lost too in bf16 at 1.0), ``first_kept`` (the smallest power
    of two that changes the weight)."""
    fmt = get(fmt)
    w = _q(weight, fmt)
    ks = np.arange(-40, 1)
    kept = [(_q(w.astype(np.float32) + np.float32(2.0 ** k), fmt) != w).item() for k in ks]
    first = int(ks[kept.index(True)])
    return {"format": fmt.name, "weight": _f(w),
            "one_plus_2m9": _f(_q(np.float32(weight) + np.float32(2.0 ** -9), fmt)),
            "largest_lost": 2.0 ** (first - 1), "first_kept": 2.0 ** first}


def weight_paths(update: float = 1e-4, steps: int = 1000, weight: float = 1.0,
                 fmt: Format | str = BF16, seed: int = 0) -> dict[str, np.ndarray]:
    """A weight receiving the same small update ``steps`` times, four ways (float64 arrays of the
    weight after each step): ``fmt`` (stored and updated in ``fmt``), ``fp32 master`` (fp32 copy
    updated, ``fmt`` copy cast from it), ``Kahan`` (``fmt`` weight plus a ``fmt`` compensation
    term), ``stochastic`` (rounded to ``fmt`` stochastically: random low bits, seeded), and
    ``exact``."""
    fmt = get(fmt)
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps!r}")
    rng = np.random.default_rng(seed)
    u = np.float32(update)
    w16, w32, wk, comp, wsr = (_q(weight, fmt), np.float32(weight), _q(weight, fmt),
                               _q(0, fmt), _q(weight, fmt))
    out = {k: np.empty(steps) for k in (fmt.name, "fp32 master", "Kahan", "stochastic")}
    for i in range(steps):
        w16 = _q(w16.astype(np.float32) + u, fmt)
        w32 = np.float32(w32 + u)
        y = _q(u - comp.astype(np.float32), fmt)
        t = _q(wk.astype(np.float32) + y.astype(np.float32), fmt)
        comp = _q((t.astype(np.float32) - wk.astype(np.float32)) - y.astype(np.float32), fmt)
        wk = t
        wsr = _stochastic(wsr.astype(np.float32) + u, fmt, rng)
        for k, v in zip(out, (w16, _q(w32, fmt), wk, wsr)):
            out[k][i] = _f(v)
    out["exact"] = weight + update * np.arange(1, steps + 1)
    return out


def _stochastic(x: np.float32, fmt: Format, rng: np.random.Generator) -> np.ndarray:
    """Stochastic rounding of a float32 to bf16 (add random low 16 bits, truncate)."""
    if fmt.name != "bf16":
        raise ValueError("stochastic rounding is modelled for bf16 only")
    bits = np.asarray(x, np.float32).view(np.uint32)
    r = np.uint32(rng.integers(0, 1 << 16))
    t = np.uint32((int(bits) + int(r)) & 0xFFFF0000)
    return np.asarray(t, np.uint32).view(np.float32).astype(fmt.dtype)


# ------------------------------------------------------------------------ the op chain
#: the ops of ``op_chain``, in order, with what each computes
CHAIN_OPS: tuple[tuple[str, str], ...] = (
    ("x", "activations x = base × scale, cast to the format"),
    ("scores", "q·kᵀ/√d (products summed in fp32, stored in the format)"),
    ("exp", "exp(scores) (fix: exp(scores − row max))"),
    ("row sum", "Σ exp over the row"),
    ("softmax", "exp / row sum (fix: softmax in fp32)"),
    ("x − mean", "LayerNorm: deviation from the row mean"),
    ("(x − mean)²", "LayerNorm: squared deviation (fix: in fp32)"),
    ("variance", "LayerNorm: Σ squares / d, summed in the format (fix: in fp32)"),
    ("normalised", "(x − mean) / √(variance + eps)"),
)


@dataclass(frozen=True)
class OpStep:
    """One op of ``op_chain``: its name, abs max (of the values that are not NaN; inf kept), how
    many of its values are inf and NaN, and whether it stays inside the format (finite)."""

    name: str
    abs_max: float
    n_inf: int
    n_nan: int

    @property
    def finite(self) -> bool:
        return self.n_inf == 0 and self.n_nan == 0


def _base(seed: int = 0, tokens: int = 6, width: int = 16) -> np.ndarray:
    g = np.random.default_rng(seed)
    return g.standard_normal((tokens, width)).astype(np.float32)


def op_chain(scale: float, fix: bool = False, fmt: Format | str = FP16,
             seed: int = 0) -> list[OpStep]:
    """A self-attention score + LayerNorm block (6 tokens × 16 features, seeded) on activations
    ``base × scale``, computed op by op in ``fmt`` (each op rounded once to it); ``fix`` applies
    the fixes: softmax with the row max subtracted and in fp32, LayerNorm statistics in fp32.
    Returns the ops of ``CHAIN_OPS`` in order.  ``scale`` must be positive and finite."""
    fmt = get(fmt)
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    x0 = _base(seed)
    d = x0.shape[1]
    q = lambda a: _q(a, fmt).astype(np.float32)  # noqa: E731 - round to the format, compute in f32
    work = (lambda a: np.asarray(a, np.float32)) if fix else q
    steps: list[tuple[str, np.ndarray]] = []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = q(x0 * np.float32(scale))
        steps.append(("x", x))
        scores = q((x @ x.T) / np.float32(math.sqrt(d)))
        steps.append(("scores", scores))
        shifted = scores - scores.max(axis=1, keepdims=True) if fix else scores
        e = work(np.exp(shifted))
        steps.append(("exp", e))
        s = work(e.sum(axis=1, keepdims=True))
        steps.append(("row sum", s))
        steps.append(("softmax", q(e / s)))
        dev = work(x - x.mean(axis=1, keepdims=True))
        steps.append(("x − mean", dev))
        sq = work(dev * dev)
        steps.append(("(x − mean)²", sq))
        var = work(sq.sum(axis=1, keepdims=True)) / np.float32(d)
        var = work(var)
        steps.append(("variance", var))
        eps = work(np.float32(1e-5))
        steps.append(("normalised", q(dev / np.sqrt(var + eps))))
    return [OpStep(name, _abs_max(a), int(np.isinf(a).sum()), int(np.isnan(a).sum()))
            for name, a in steps]


def _abs_max(a: np.ndarray) -> float:
    """The largest magnitude that is not NaN (inf counts); NaN when every value is NaN."""
    ok = np.abs(a[~np.isnan(a)])
    return float(ok.max()) if ok.size else math.nan


def first_out(chain: list[OpStep]) -> OpStep | None:
    """The first op of ``chain`` with an inf or NaN value (None when all stay finite)."""
    return next((s for s in chain if not s.finite), None)
