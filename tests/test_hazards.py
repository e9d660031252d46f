"""fampnb.hazards: the in-model fp16/bf16 hazards, each threshold checked against real casts and
arithmetic at the boundary (the value fails, its neighbour below does not)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from fampnb import hazards as H
from fampnb.formats import BF16, FP16


def _below(x: float, dtype=np.float16) -> np.float32:
    """The value of ``dtype`` just below ``x`` (toward 0), as float32."""
    return np.float32(np.nextafter(np.asarray(x, dtype), np.asarray(0, dtype)))


def test_format_values_are_every_finite_fp16():
    vals = H.format_values(FP16)
    assert vals.size == 0x7C00 and vals[0] == 0 and float(vals[-1]) == FP16.max
    assert np.all(np.diff(vals.astype(np.float64)) > 0)
    with pytest.raises(ValueError, match="16-bit"):
        H.format_values("fp32")


def test_mask_numbers():
    m = H.mask_numbers()
    lo = np.finfo(np.float16).min
    assert m["min"] == float(lo) and m["minus_1e9"] == -math.inf and m["min_twice"] == -math.inf
    s = np.float16(m["inf_from_score"])
    with np.errstate(over="ignore"):
        assert np.isneginf(lo + s)
    assert np.isfinite(lo + np.float16(-_below(-float(s))))  # the next smaller magnitude fits
    assert all(math.isnan(v) for v in m["masked_row_inf"])
    assert m["masked_row_min"] == [0.25] * 4 and m["masked_row_fp32"] == [0.25] * 4


def test_exp_threshold_is_ln_of_the_overflow_threshold():
    e = H.exp_numbers()
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(e["first_inf"])))
        assert np.isfinite(np.exp(np.float16(e["last_finite"])))
    assert e["last_finite"] < e["ln_max"] < e["first_inf"]
    assert e["last_finite"] == float(_below(e["first_inf"]))
    assert e["exp_last_finite"] <= FP16.max


def test_norm_numbers():
    n = H.norm_numbers()
    with np.errstate(over="ignore"):
        x = np.float16(n["square_inf"])
        assert np.isinf(x * x) and np.isfinite(np.float16(_below(float(x))) ** 2)
        v = np.float16(n["variance_inf"])
        assert np.isinf(v * np.float16(n["width"]))
    stored = {e: s for e, s, _ in n["eps"]}
    assert stored[1e-12] == 0.0 and float(np.float16(1e-12)) == 0.0
    assert stored[1e-5] == float(np.float16(1e-5)) and 0 < stored[1e-5] < FP16.min_normal
    assert math.isnan(n["zero_var_out"])


def test_adam_in_fp16_and_bf16():
    a = H.adam_numbers()
    assert a["eps_stored"] == 0.0 and math.isnan(a["zero_grad_update"])
    assert a["scaled_grad"] == float(np.float16(0.01 * 65536)) and a["scaled_v"] == math.inf
    b = H.adam_numbers(BF16)
    assert b["eps_stored"] > 0 and b["zero_grad_update"] == 0.0 and math.isfinite(b["scaled_v"])


def test_bf16_swamping():
    s = H.swamp_numbers()
    bf = ml_dtypes.bfloat16
    assert s["one_plus_2m9"] == 1.0 == float(bf(np.float32(1) + np.float32(2 ** -9)))
    assert float(bf(np.float32(1) + np.float32(s["largest_lost"]))) == 1.0
    assert float(bf(np.float32(1) + np.float32(s["first_kept"]))) > 1.0
    assert s["first_kept"] == 2 * s["largest_lost"] == BF16.eps


def test_weight_paths():
    p = H.weight_paths(update=1e-4, steps=1000)
    assert p["bf16"][-1] == 1.0  # every update lost
    for k in ("fp32 master", "Kahan", "stochastic"):
        assert abs(p[k][-1] - 1.1) < 0.02, (k, p[k][-1])
    assert p["exact"][-1] == pytest.approx(1.1)
    again = H.weight_paths(seed=3)["stochastic"]
    assert np.array_equal(H.weight_paths(seed=3)["stochastic"], again)
    with pytest.raises(ValueError):
        H.weight_paths(steps=0)


def test_softmax_stable_and_naive():
    x = np.array([12.0, 0.0, -1.0])
    naive, stable = H.softmax(x, stable=False), H.softmax(x)
    assert np.isnan(naive[0]) and naive[1] == 0  # exp(12) is inf: inf/inf, 1/inf
    assert np.all(np.isfinite(stable)) and stable.sum() == pytest.approx(1, abs=2e-3)


def test_op_chain_first_out_moves_with_scale_and_fix():
    assert H.first_out(H.op_chain(1.0)) is None
    assert [s.name for s in H.op_chain(1.0)] == [n for n, _ in H.CHAIN_OPS]
    hot = H.first_out(H.op_chain(4.0))
    assert hot is not None and hot.name == "exp" and hot.n_inf > 0
    assert H.first_out(H.op_chain(4.0, fix=True)) is None
    fixed = H.first_out(H.op_chain(256.0, fix=True))
    assert fixed is not None and fixed.name == "scores"
    # the exp op fails exactly where a score passes the exp threshold
    thr = H.exp_numbers()["first_inf"]
    for scale in (1.0, 1.5, 2.0, 3.0):
        chain = {s.name: s for s in H.op_chain(scale)}
        assert (chain["scores"].abs_max >= thr) == (not chain["exp"].finite)
    for bad in (0, -1, math.inf, math.nan, "2"):
        with pytest.raises(ValueError, match="scale"):
            H.op_chain(bad)
