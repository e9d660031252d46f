"""fampnb.scaling: TE's current and delayed scaling, torchao's rowwise, OCP MX blocks, exact shares.

Expectations come from the formulas of the code they model (TE's ``compute_scale_from_amax`` and
``delayed_scaling.cu``, the OCP MX v1.0 conversion) evaluated independently here, from real
ml_dtypes casts, and, with torch and torchao installed, from torchao's reference ``to_mx``.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from conftest import require
from fampnb.formats import FP4_E2M1, FP8_E4M3, FP8_E5M2, Zone, get
from fampnb.scaling import (
    CATEGORIES,
    SCHEMES,
    DelayedScaling,
    Shares,
    current_scale,
    demo_activations,
    demo_amax_trace,
    demo_gradients,
    mx_quantize,
    rowwise_scales,
    saturation_threshold,
    scheme_view,
    shares,
    with_spike,
    zone_codes,
)
from fampnb.scaling.mx import block_scaled, emax

F32 = np.float32


# ------------------------------------------------------------------------------ current scaling
@pytest.mark.parametrize("fmt", [FP8_E4M3, FP8_E5M2])
@pytest.mark.parametrize("amax", [2.0, 3.0, 1e-3, 7.25e4, 1.0000001])
def test_current_scale_is_te_float32_division(fmt, amax):
    for margin in (0, 1, 3):
        want = F32(F32(F32(fmt.max) * F32(2.0 ** -margin)) / F32(amax))
        assert current_scale(amax, fmt, margin) == float(want)


@pytest.mark.parametrize("amax", [0.0, math.inf, math.nan])
def test_current_scale_without_an_amax_is_one(amax):
    assert current_scale(amax, "e4m3") == 1.0
    assert current_scale(amax, "e4m3", power_of_two=True) == 1.0


def test_current_scale_of_a_tiny_amax_is_float32_max():
    assert current_scale(1e-45, "e4m3") == float(np.finfo(F32).max)


def test_power_of_two_scale_rounds_down_and_never_saturates():
    rng = np.random.default_rng(0)
    for a in np.exp2(rng.uniform(-60, 60, 300)).astype(F32):
        for fmt in (FP8_E4M3, FP8_E5M2):
            s = current_scale(float(a), fmt, power_of_two=True)
            assert math.log2(s).is_integer()
            full = current_scale(float(a), fmt)
            assert s <= full < 2 * s
            assert F32(a) * F32(s) <= fmt.max


@pytest.mark.parametrize("bad", [{"amax": -1.0}, {"amax": 1.0, "margin": math.nan},
                                 {"amax": 1.0, "margin": "x"}, {"amax": 1.0, "fmt": "fp7"}])
def test_current_scale_rejects_bad_arguments(bad):
    with pytest.raises(ValueError):
        current_scale(**bad)


def test_rowwise_scales_are_per_row_powers_of_two():
    x = np.array([[1.0, -3.0], [0.5, 0.25], [0.0, 0.0]], F32)
    s = rowwise_scales(x)
    assert s.shape == (3, 1)
    assert [float(v) for v in s.ravel()] == [current_scale(3.0, "e4m3", power_of_two=True),
                                            current_scale(0.5, "e4m3", power_of_two=True), 1.0]


# ------------------------------------------------------------------------------ delayed scaling
def _reference_scales(amax, length, algo="max", margin=0, fmax=448.0):
    """The scale in force at each step, straight from the rule: after step t the scale is
    fp8_max * 2**-margin / (max of the last ``length`` recorded amaxes, or the latest)."""
    scaled_max = F32(F32(fmax) * F32(2.0 ** -margin))
    out, scale, recorded = [], F32(1.0), []
    for a in amax:
        out.append(scale)
        if a == 0:
            continue
        recorded.append(F32(a))
        ref = recorded[-1] if algo == "most_recent" else np.fmax.reduce(
            np.array(recorded[-length:], F32), initial=F32(0))
        if np.isfinite(ref) and ref > 0:
            scale = F32(scaled_max / ref)
    return np.array(out, F32)


@pytest.mark.parametrize("length", [1, 2, 5, 1024])
@pytest.mark.parametrize("algo", ["max", "most_recent"])
@pytest.mark.parametrize("margin", [0, 2])
def test_delayed_scale_follows_the_history_rule(length, algo, margin):
    rng = np.random.default_rng(length)
    amax = np.exp2(rng.uniform(-20, 4, 60)).astype(F32)
    amax[[7, 30]] = 0.0
    tr = DelayedScaling(margin=margin, amax_history_len=length, amax_compute_algo=algo).simulate(amax)
    assert np.array_equal(tr.scale, _reference_scales(amax, length, algo, margin))
    assert np.array_equal(tr.next_scale[:-1], tr.scale[1:])


def test_a_spike_is_cast_with_the_old_scale_then_holds_the_scale_down():
    amax = [1.0] * 5 + [10.0] + [1.0] * 6
    tr = DelayedScaling(amax_history_len=3).simulate(amax)
    assert tr.scale[0] == 1.0 and tr.scale[1] == 448.0
    assert tr.scale[5] == 448.0                       # the spike step: the lag
    assert tr.scaled_amax[5] == F32(4480.0) and tr.saturated[5]
    assert not tr.saturated[:5].any() and not tr.saturated[6:].any()
    assert np.all(tr.scale[6:9] == F32(F32(448.0) / F32(10.0)))  # 3 steps with the spike inside
    assert tr.scale[9] == 448.0
    assert tr.reference_amax[6] == 10.0 and math.isnan(tr.reference_amax[0])


def test_history_buffer_layout_is_te_s():
    tr = DelayedScaling(amax_history_len=4).simulate([1.0, 2.0, 3.0])
    assert tr.history.tolist() == [0.0, 1.0, 2.0, 3.0]
    tr = DelayedScaling(amax_history_len=2).simulate([1.0, 2.0, 3.0, 0.0])
    assert tr.history.tolist() == [0.0, 3.0]          # a zero amax does not roll the history


def test_nan_amax_is_skipped_and_inf_freezes_the_scale():
    tr = DelayedScaling(amax_history_len=2).simulate([2.0, math.nan, 4.0, math.inf, 1.0, 1.0, 1.0])
    assert tr.scale.tolist()[:4] == [1.0, 224.0, 224.0, 112.0]
    # inf sits in the window for 2 updates: the scale is kept, then 448/1
    assert tr.scale.tolist()[4:] == [112.0, 112.0, 448.0]


def test_delayed_tensor_shares_match_the_real_cast():
    g = demo_gradients()
    one = np.concatenate([t.ravel() for t in g.values()])
    amax = with_spike(demo_amax_trace(), 50, 64.0)
    tr = DelayedScaling(amax_history_len=8).simulate(amax, tensor=one)
    assert tr.saturated[49] and tr.fraction("saturated")[49] > 0
    top = F32(np.max(np.abs(one)))
    for t in (0, 48, 49, 50, 95):
        step = one * F32(amax[t] / top)
        cast = (step * tr.scale[t]).astype(ml_dtypes.float8_e4m3fn).astype(F32)
        assert tr.amax[t] == np.max(np.abs(step))
        assert tr.shares[t].counts["saturated"] == int(np.isnan(cast).sum())
        assert tr.shares[t].counts["lost"] == int(((cast == 0) & (step != 0)).sum())


@pytest.mark.parametrize("kw", [{"amax_history_len": 0}, {"amax_history_len": 2.5},
                                {"amax_compute_algo": "mean"}, {"fp8_format": "HYBRID"},
                                {"margin": math.inf}])
def test_delayed_rejects_bad_arguments(kw):
    with pytest.raises(ValueError):
        DelayedScaling(**kw)


def test_delayed_rejects_bad_amaxes():
    with pytest.raises(ValueError):
        DelayedScaling().simulate([])
    with pytest.raises(ValueError):
        DelayedScaling().simulate([1.0, -1.0])
    with pytest.raises(ValueError):
        DelayedScaling().simulate([1.0], tensor=np.zeros(4))


def test_delayed_e5m2_uses_its_max():
    tr = DelayedScaling(fp8_format="E5M2").simulate([2.0, 2.0])
    assert tr.scale[1] == F32(57344.0 / 2.0)


# ------------------------------------------------------------------------------ shares / zones
@pytest.mark.parametrize("fmt", [FP8_E4M3, FP8_E5M2])
def test_saturation_is_exactly_where_the_plain_cast_goes_non_finite(fmt):
    t, _ = saturation_threshold(fmt)
    around = np.nextafter(F32(t), F32(0)), F32(t), np.nextafter(F32(t), F32(np.inf))
    x = np.concatenate([np.array(around, F32), np.linspace(fmt.max * 0.9, fmt.max * 1.2, 4001,
                                                           dtype=F32)])
    x = np.concatenate([x, -x])
    codes = zone_codes(x, x, fmt)
    plain = x.astype(fmt.dtype).astype(F32)
    assert np.array_equal(codes == Zone.OVERFLOW, ~np.isfinite(plain))


def test_fp4_saturation_threshold_is_the_tie_above_six():
    assert FP4_E2M1.max == 6.0 and saturation_threshold(FP4_E2M1) == (7.0, True)
    x = np.array([6.0, np.nextafter(F32(7), F32(0)), 7.0, 100.0, np.inf], F32)
    assert zone_codes(x, x, FP4_E2M1).tolist() == [Zone.NORMAL, Zone.NORMAL] + [Zone.OVERFLOW] * 3
    assert x[:2].astype(ml_dtypes.float4_e2m1fn).astype(F32).tolist() == [6.0, 6.0]


def test_zone_codes_need_the_input_for_losses_and_nan_scales():
    x = np.array([0.0, 1e-30, 1.0, np.nan], F32)
    scaled = np.array([0.0, 0.0, 1.0, np.nan], F32)
    assert zone_codes(x, scaled, "e4m3").tolist() == [Zone.ZERO, Zone.UNDERFLOW, Zone.NORMAL,
                                                      Zone.NAN]
    nan = np.array([False, False, True, False])
    assert zone_codes(x, scaled, "e4m3", nan)[2] == Zone.NAN
    s = shares(x, scaled, "e4m3")
    assert s.total == 4 and sum(s.counts.values()) == 4 and set(s.counts) == set(CATEGORIES)
    assert s.fraction("lost") == 0.25 and math.isclose(s.kept, 0.5)
    assert (s + s).total == 8
    with pytest.raises(ValueError):
        s.fraction("overflow")
    with pytest.raises(ValueError):
        zone_codes(x, scaled[:2], "e4m3")


# ------------------------------------------------------------------------------ MX
def _mx_reference(x, fmt, block):
    """OCP MX v1.0 section 6.3, block by block with exact Python arithmetic (floor(log2) from
    frexp), corner cases as torchao's FLOOR mode (see fampnb.scaling.mx)."""
    x = np.asarray(x, F32).reshape(-1, block)
    exps, elems = [], []
    for row in x:
        m = np.max(np.abs(row))
        if np.isnan(m):
            e = 128
            with np.errstate(invalid="ignore"):
                p = row * F32(0)
        else:
            if np.isinf(m):
                lg = 128
            elif m == 0 or m < np.finfo(F32).tiny:
                lg = -127
            else:
                lg = math.frexp(float(m))[1] - 1
            e = max(lg - emax(fmt), -127)
            p = np.array([float(v) / 2.0 ** e for v in row], np.float64).astype(F32)
        exps.append(e)
        elems.append(np.clip(p, -fmt.max, fmt.max).astype(fmt.dtype))
    return np.array(exps), np.concatenate(elems)


def _bits_equal(a, b):
    """Element arrays equal bit for bit, any NaN equal to any NaN."""
    fa, fb = a.astype(F32), b.astype(F32)
    nan = np.isnan(fa)
    return bool(np.array_equal(nan, np.isnan(fb))
                and np.array_equal(a.view(np.uint8)[~nan], b.view(np.uint8)[~nan]))


def _nasty(n_blocks, seed=0, block=32):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n_blocks, block)) * np.exp2(rng.uniform(-40, 40, (n_blocks, 1)))
         * np.exp2(rng.uniform(-12, 0, (n_blocks, block)))).astype(F32)
    x[0] = 0
    x[1, 3] = np.inf
    x[2, 5] = np.nan
    x[3] *= F32(1e-37)                      # float32 subnormals: exponent clamps to -127
    x[4, 7] = -np.inf
    x[5] = F32(2.0 ** -119)                 # exponent exactly -127 for e4m3
    x[6] = F32(1.99 * 2 ** 8)               # the block max saturates in FLOOR mode
    x[7] = F32(2.0 ** -140)
    x[8, :] = np.finfo(F32).max             # the largest exponent: 127 - emax
    x[9, 0], x[9, 1] = np.nan, np.inf
    x[10] = -0.0
    return x.ravel()


@pytest.mark.parametrize("elem", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1"])
def test_mx_matches_the_spec_block_by_block(elem):
    fmt = get(elem)
    x = _nasty(5000)                        # more blocks than one chunk
    q = mx_quantize(x, elem)
    exps, elems = _mx_reference(x, fmt, 32)
    assert q.scale_exponents.dtype == np.int16 and q.elements.dtype == fmt.dtype
    assert np.array_equal(q.scale_exponents, exps)
    if elem == "fp4_e2m1":                  # no NaN code in e2m1: compare where the scale is not NaN
        ok = np.repeat(exps != 128, 32)
        assert np.array_equal(q.elements.view(np.uint8)[ok], elems.view(np.uint8)[ok])
    else:
        assert _bits_equal(q.elements, elems)


def test_mx_spec_examples():
    q = mx_quantize(np.ones(32, F32))
    assert q.scale_exponents.tolist() == [-8] and np.all(q.elements.astype(F32) == 256)
    assert q.scales.view(np.uint8).tolist() == [127 - 8]
    assert np.array_equal(q.dequantize(), np.ones(32, F32))
    v = np.array([6.0, 1.5, -0.5, 0.25] + [0.0] * 28, F32)
    q4 = mx_quantize(v, "fp4_e2m1")          # max 6 = 1.5 * 2**2, emax 2: X = 1
    assert q4.scale_exponents.tolist() == [0]
    assert q4.elements.astype(F32)[:4].tolist() == [6.0, 1.5, -0.5, 0.0]   # 0.25 ties to 0
    q5 = mx_quantize(np.full(32, 1.99 * 256, F32))   # FLOOR: X = 1, 509.44 clips to 448
    assert q5.scale_exponents.tolist() == [0] and np.all(q5.elements.astype(F32) == 448)


def test_mx_special_blocks():
    x = np.zeros((4, 32), F32)
    x[1, 0] = np.nan
    x[2, 0], x[2, 1] = np.inf, 1.0
    x[3, 0] = 3.0
    q = mx_quantize(x)
    assert q.scale_exponents.ravel().tolist() == [-127, 128, 128 - 8, 1 - 8]
    assert q.scales.view(np.uint8).ravel().tolist() == [0, 255, 247, 120]
    d = q.dequantize()
    assert np.all(d[0] == 0) and np.all(np.isnan(d[1]))
    assert d[2, 0] == np.inf and d[2, 1] == 0   # 448 * 2**120 overflows float32
    assert d[3, 0] == 3.0


def test_mx_round_trip_and_shapes():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 40)) * 10).astype(F32)
    q = mx_quantize(x)
    assert q.scale_exponents.shape == (3, 2) and q.elements.shape == (3, 40)
    padded = np.zeros((3, 64), F32)
    padded[:, :40] = x
    qp = mx_quantize(padded)
    assert np.array_equal(qp.scale_exponents, q.scale_exponents)
    assert np.array_equal(qp.elements[:, :40].view(np.uint8), q.elements.view(np.uint8))
    d = q.dequantize()
    assert d.dtype == F32 and d.shape == x.shape
    rel = np.abs(d - x) / np.abs(x)
    assert rel.max() <= 2.0 ** -4            # e4m3: 3 mantissa bits, RNE
    assert np.array_equal(mx_quantize(x.astype(np.float64)).elements.view(np.uint8),
                          q.elements.view(np.uint8))
    scaled, nan = block_scaled(x, q)
    assert not nan.any()
    assert np.array_equal(np.clip(scaled, -448, 448).astype(FP8_E4M3.dtype).view(np.uint8),
                          q.elements.view(np.uint8))


@pytest.mark.parametrize("kw", [{"elem": "fp16"}, {"block": 0}, {"block": True}])
def test_mx_rejects_bad_arguments(kw):
    with pytest.raises(ValueError):
        mx_quantize(np.ones(32, F32), **kw)


def _torchao():
    try:
        import torch
        from torchao.prototype.mx_formats.mx_tensor import to_mx
    except ImportError:
        require(False, "torch and torchao are not installed",
                "Enable with: .venv/bin/pip install torch==2.13.0 torchao==0.18.0")
    return torch, to_mx


@pytest.mark.torch
@pytest.mark.parametrize("elem", ["fp8_e4m3", "fp8_e5m2"])
def test_mx_matches_torchao_to_mx(elem):
    torch, to_mx = _torchao()
    fmt = get(elem)
    tdtype = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}[elem]
    x = _nasty(600, seed=5).reshape(60, 320)
    q = mx_quantize(x, elem)
    scale, data = to_mx(torch.from_numpy(x.copy()), tdtype, 32)
    assert np.array_equal(scale.view(torch.uint8).numpy().astype(np.int16) - 127,
                          q.scale_exponents)
    theirs = data.view(torch.uint8).numpy().view(fmt.dtype)
    # where they differ: blocks at exponent -127, which torchao divides by 2**-126 (float32's
    # smallest normal) instead of the spec's 2**-127
    at_min = np.repeat(q.scale_exponents == -127, 32, axis=-1)
    assert _bits_equal(q.elements[~at_min], theirs[~at_min])
    want = np.clip(x[at_min] / F32(2.0 ** -126), -fmt.max, fmt.max).astype(fmt.dtype)
    assert _bits_equal(theirs[at_min], want)
    assert at_min.any() and not _bits_equal(q.elements[at_min], theirs[at_min])


@pytest.mark.torch
def test_torch_e4m3_cast_saturates_where_ml_dtypes_gives_nan():
    torch, _ = _torchao()
    x = np.array([448.0, 464.0, 465.0, 1e6, np.inf, -1e6], F32)
    ml = x.astype(ml_dtypes.float8_e4m3fn).astype(F32)
    th = torch.from_numpy(x).to(torch.float8_e4m3fn).float().numpy()
    assert np.isnan(ml[2:5]).all()
    from torch.torch_version import TorchVersion

    if TorchVersion(torch.__version__) >= (2, 12):
        assert th.tolist() == [448.0, 448.0, 448.0, 448.0, 448.0, -448.0]


# ------------------------------------------------------------------------------ schemes / demo
def test_demo_data():
    g, a, tr = demo_gradients(), demo_activations(), demo_amax_trace()
    assert sum(v.size for v in g.values()) == 6792
    assert set(a) == {"0.input", "2.input", "4.input"} and tr.shape == (96,)
    assert all(v.dtype == F32 for v in (*g.values(), *a.values(), tr))
    assert tr[0] == max(float(np.max(np.abs(v))) for v in g.values())
    g["0.weight"][:] = 0                     # copies: the shipped data cannot be changed
    assert demo_gradients()["0.weight"].any()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("elem", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1"])
def test_every_scheme_accounts_for_every_value(scheme, elem):
    v = scheme_view(scheme, elem)
    assert v.shares.total == v.scaled.size == v.codes.size
    assert sum(v.shares.counts.values()) == v.shares.total
    assert v.shares == Shares.from_codes(v.codes)
    assert sum(s.total for s in v.per_tensor.values()) == v.shares.total


def test_scheme_scales_are_the_documented_ones():
    g = demo_gradients()
    glob = scheme_view("global", tensors=g)
    amax = max(float(np.max(np.abs(t))) for t in g.values())
    assert set(glob.scales.values()) == {current_scale(amax, "e4m3", power_of_two=True)}
    tw = scheme_view("tensorwise", tensors=g, margin=1)
    assert all(tw.scales[k] == current_scale(float(np.max(np.abs(t))), "e4m3", 1)
               for k, t in g.items())
    mx = scheme_view("mx", tensors=g)
    assert np.array_equal(mx.scales["0.weight"], mx_quantize(g["0.weight"]).scale_exponents)
    assert tw.shares.fraction("lost") <= glob.shares.fraction("lost")


def test_delayed_view_is_the_spike_step():
    v = scheme_view("delayed", history=16, spike=64.0, spike_step=64)
    assert v.spike_step == 64 and v.trace is not None
    assert v.shares == v.trace.shares[63]
    assert v.trace.saturated[63] and v.shares.counts["saturated"] > 0
    long = scheme_view("delayed", history=1024, spike=64.0)
    after = slice(64, 96)
    assert long.trace.fraction("lost")[after].mean() > v.trace.fraction("lost")[after].mean()


@pytest.mark.parametrize("kw", [{"scheme": "blockwise"}, {"scheme": "mx", "elem": "fp16"},
                                {"scheme": "delayed", "spike_step": 0},
                                {"scheme": "delayed", "spike": -1.0},
                                {"scheme": "global", "tensors": {}}])
def test_scheme_view_rejects_bad_arguments(kw):
    with pytest.raises(ValueError):
        scheme_view(**kw)


@pytest.mark.torch
def test_shipped_demo_data_is_what_the_demo_model_gives(torch_mod):
    from conftest import load_tool

    fresh = load_tool("fp8_demo_data").record()
    shipped = {**{f"grad/{k}": v for k, v in demo_gradients().items()},
               **{f"act/{k}": v for k, v in demo_activations().items()},
               "trace/grad_amax": demo_amax_trace()}
    assert set(fresh) == set(shipped)
    for k, v in shipped.items():
        assert v.shape == fresh[k].shape
        np.testing.assert_allclose(fresh[k], v, rtol=1e-4, atol=1e-12 * float(np.abs(v).max()),
                                   err_msg=k)


@pytest.mark.parametrize("elem", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1"])
def test_cast_table_equals_the_real_cast_for_every_float32_class(elem):
    from fampnb.scaling.mx import cast_codes

    fmt = get(elem)
    rng = np.random.default_rng(7)
    u = np.concatenate([rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint32),
                        np.arange(1 << 15, dtype=np.uint32) << np.uint32(17),  # every class edge
                        (np.arange(1 << 15, dtype=np.uint32) << np.uint32(17)) | np.uint32(1),
                        (np.arange(1 << 15, dtype=np.uint32) << np.uint32(17)) - np.uint32(1)])
    x = u.view(F32)
    with np.errstate(all="ignore"):
        want = x.astype(fmt.dtype).view(np.uint8)
    assert np.array_equal(cast_codes(x, fmt), want)
