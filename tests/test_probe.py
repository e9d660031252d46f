"""fampnb.probe: casts and arithmetic against the model, real GradScaler against the simulator,
the no-torch path, and the exact gradient histogram against brute force."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from fampnb import probe
from fampnb.formats import BF16, FP8_E4M3, FP8_E5M2, FP16, FP32, Zone
from fampnb.probe import GradHistogram, GradHistogramRecorder
from fampnb.probe import casts as _probe_casts
from fampnb.probe.histogram import DEFAULT_FORMATS

ALL = DEFAULT_FORMATS + (FP32,)


def test_import_probe_does_not_import_torch():
    code = "import sys, fampnb.probe; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ casts
def test_cast_checks_cpu_agree_except_documented_saturation(torch_mod):
    res = probe.cast_checks("cpu")
    assert res["device"] == "cpu" and res["measurement"] == "CPU — not a GPU measurement"
    rows = res["rows"]
    assert {r["kind"] for r in rows} == {"cast", "product", "reduction", "subnormal"}
    documented = [r for r in rows if r["documented"]]
    # torch >= 2.12 (CI pins 2.13) saturates e4m3fn overflow to 448; the model (ml_dtypes) says NaN.
    # Older torch gives NaN like the model (torch 2.11 did, on the CPU and on an H200).
    saturates = _probe_casts._version_at_least(torch_mod.__version__, (2, 12))
    assert [r["label"] for r in documented] == (["465", "1000", "+inf"] if saturates else [])
    for r in documented:
        assert r["dtype"] == "float8_e4m3fn" and r["agree"] is False
        assert r["device_result"] == 448.0 and math.isnan(r["model_result"])
        assert "448" in r["note"] and "ml_dtypes" in r["note"]
    for r in rows:
        if not r["documented"]:
            assert r["agree"] is True, r
    assert res["disagreements"] == []
    assert res["flushes_subnormals"] == {"float16": False, "bfloat16": False, "float32": False}


def test_cast_rows_cover_the_boundary_values(torch_mod):
    rows = {(r["dtype"], r["label"]): r for r in probe.cast_checks("cpu")["rows"]}
    assert rows[("float16", "65520 (fp16 overflow threshold)")]["device_result"] == math.inf
    assert rows[("float16", "65519.99")]["device_result"] == 65504.0
    assert rows[("float16", "2^-25 (tie: rounds to 0)")]["device_result"] == 0.0
    assert rows[("float16", "2^-24 (fp16 min subnormal)")]["device_result"] == 2.0 ** -24
    assert rows[("bfloat16", "bf16 overflow threshold")]["device_result"] == math.inf
    sub = rows[("bfloat16", "1e-40 (bf16 subnormal)")]["device_result"]
    assert sub == pytest.approx(9.18354961579912e-41)
    assert rows[("float8_e5m2", "61440 (tie: to inf)")]["device_result"] == math.inf
    assert rows[("float8_e4m3fn", "464 (tie: to 448)")]["device_result"] == 448.0
    red = {r["label"]: r for r in probe.cast_checks("cpu")["rows"] if r["kind"] == "reduction"}
    assert red["running fp16 sum of 128 x 1000"]["device_result"] == math.inf
    assert red["mean of 128 x 1000, fp16 tensor"]["device_result"] == 1000.0


# ------------------------------------------------------------------ AMP
def test_amp_decay_cpu_matches_simulator(torch_mod):
    res = probe.amp_decay("cpu", steps=8)
    assert res["device"] == "cpu" and "not a GPU" in res["measurement"]
    assert res["scales"] == res["simulated"] and res["match"] is True
    assert res["scales"][0] == 65536.0 and res["found_inf"][0] is True
    assert min(res["scales"]) < 65536.0  # the overflow pushed the scale down
    assert any(not f for f in res["found_inf"])  # ... until it fit
    bf = res["bf16"]
    assert "error" not in bf and not any(bf["found_inf"])
    assert all(math.isfinite(v) for v in bf["losses"])


def test_amp_decay_rejects_bad_steps():
    with pytest.raises(ValueError, match="steps"):
        probe.amp_decay("cpu", steps=0)


# ------------------------------------------------------------------ no torch
@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError


def test_no_torch_functions_return_labelled_results(no_torch):
    dev = probe.device_report()
    assert dev["device"] == probe.NO_TORCH and dev["available"] is False
    assert "pip install" in dev["message"]
    casts = probe.cast_checks()
    assert casts["device"] == probe.NO_TORCH
    assert all(r["device_result"] is None and r["agree"] is None for r in casts["rows"])
    fp16_thr = [r for r in casts["rows"] if r["label"].startswith("65520")][0]
    assert fp16_thr["model_result"] == math.inf  # the model's prediction is still there
    amp = probe.amp_decay()
    assert amp["device"] == probe.NO_TORCH and amp["scales"] is None
    h = probe.grad_histogram(None, None, None)
    assert h.device == probe.NO_TORCH and h.total == 0 and "pip install" in h.note
    assert probe.measurement_label(probe.NO_TORCH).startswith("no device")
    # what real GPUs recorded stays readable without torch (notebook 06 shows it)
    assert all(r["probe"]["device"]["device"].startswith("cuda:") for r in probe.recorded_results())


def test_no_torch_cli(no_torch, capsys):
    assert probe.main([]) == 0
    out = capsys.readouterr().out
    assert "torch is not installed" in out and "pip install" in out and "Traceback" not in out
    assert probe.main(["--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["device"]["device"] == probe.NO_TORCH
    assert obj["cast_checks"]["rows"] and obj["amp_decay"]["available"] is False


def test_no_torch_cli_subprocess(tmp_path):
    (tmp_path / "torch.py").write_text("raise ImportError('simulated: no torch here')\n")
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "fampnb", "probe"], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "torch is not installed" in out.stdout and "Traceback" not in out.stderr


def test_cli_usage_error(run_cli):
    r = run_cli("probe", "--bogus")
    assert r.returncode == 2 and "usage" in r.stderr and "Traceback" not in r.stderr


def test_cli_json(torch_mod, run_cli):
    r = run_cli("probe", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert set(obj) == {"device", "cast_checks", "amp_decay"}
    # CUDA when the machine has it (as the notebook does), else the CPU, and labelled so
    where = obj["device"]["device"]
    assert where == "cpu" or where.startswith("cuda:"), where
    assert obj["cast_checks"]["device"] == obj["amp_decay"]["device"] == where
    assert obj["device"]["measurement"] == probe.measurement_label(where)
    assert obj["amp_decay"]["scales"] == obj["amp_decay"]["simulated"]
    thr = [r for r in obj["cast_checks"]["rows"] if r["label"].startswith("65520")][0]
    assert thr["device_result"] == "inf"  # strict JSON: non-finite floats as strings


# ------------------------------------------------------------------ histogram
def _tricky_values() -> np.ndarray:
    """Random magnitudes over 45 octaves plus every zone boundary (ties!) at several shifts."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal(5000) * np.exp2(rng.uniform(-45, 2, 5000))
    extra = []
    for f in ALL:
        for v in (f.underflow_threshold, f.min_normal - f.min_subnormal / 2, f.overflow_threshold,
                  f.max, f.min_subnormal, f.min_normal):
            for k in (0, 3, -9, 20):
                x = v * 2.0 ** -k
                if 2.0 ** -126 <= x < 2.0 ** 127:
                    extra += [x, -x, float(np.nextafter(np.float32(x), np.float32(0))),
                              float(np.nextafter(np.float32(x), np.float32(np.inf)))]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 464.0, 0.90625 * 2.0 ** -7]
    return np.concatenate([g, extra, special]).astype(np.float32)


SCALES = [2.0 ** k for k in range(-12, 48, 3)] + [1.0, 2.0 ** 16, 2.0 ** 24]


def test_from_array_matches_brute_force_zone_counts():
    g = _tricky_values()
    g64 = g.astype(np.float64)
    for s in SCALES:
        # Documented limit: the histogram takes g*S exactly; below fp32's normal range (2**-126)
        # the brute force (like real fp32 arithmetic) rounds g*S to fp32 first, which can move a
        # value by one bf16/fp32 subnormal step.  Only bf16 and fp32 have zones down there.
        keep = ~(np.abs(g64 * s) < 2.0 ** -126) | (g64 == 0)
        h = GradHistogram.from_array(g[keep], formats=ALL)
        for f in ALL:
            assert h.zone_counts(f, s) == f.zone_counts(g64[keep], s), (f.name, s)
        full = GradHistogram.from_array(g, formats=ALL)
        for f in (FP16, FP8_E4M3, FP8_E5M2):  # these are exact on every value
            assert full.zone_counts(f, s) == f.zone_counts(g64, s), (f.name, s)


def test_fp32_subnormal_gradients_exact_in_record_exact(torch_mod):
    g = np.concatenate([_tricky_values(), np.float32([1e-40, -3e-42, 2.0 ** -149, 2.0 ** -130])])
    p = torch_mod.nn.Parameter(torch_mod.zeros(g.size))
    p.grad = torch_mod.from_numpy(g.copy())
    rec = GradHistogramRecorder([p], formats=ALL)
    rec.record_exact()
    assert np.array_equal(rec.result().table, GradHistogram.from_array(g, formats=ALL).table)


def test_fast_recorder_equals_exact_table_for_normal_values(torch_mod):
    g = _tricky_values()
    g = g[~((np.abs(g) < 2.0 ** -126) & (g != 0))]  # fp32 subnormals: top bits only (documented)
    p = torch_mod.nn.Parameter(torch_mod.zeros(g.size))
    p.grad = torch_mod.from_numpy(g.copy())
    fast, exact = GradHistogramRecorder([p]), GradHistogramRecorder([p])
    fast.record()
    exact.record_exact()
    assert np.array_equal(fast.result().table, exact.result().table)


def test_grad_histogram_equals_brute_force_on_copied_gradients(torch_mod):
    model, loss_fn, batch = probe.demo_problem("cpu")
    h = probe.grad_histogram(model, loss_fn, batch, scale=2.0 ** 8)
    assert h.device == "cpu" and h.scale == 2.0 ** 8
    grads = np.concatenate([p.grad.detach().cpu().numpy().ravel() for p in model.parameters()])
    assert h.total == grads.size
    g64 = grads.astype(np.float64)
    for s in SCALES:
        for f in DEFAULT_FORMATS:
            assert h.zone_counts(f, s) == f.zone_counts(g64, s), (f.name, s)
    fr = h.fractions()  # at the histogram's own scale, 2**8
    z = FP16.zone_counts(g64, 2.0 ** 8)
    assert fr["fp16"]["underflow"] == z[Zone.UNDERFLOW] / grads.size
    assert fr["fp16"]["overflow"] == z[Zone.OVERFLOW] / grads.size


def test_recorder_hook_accumulates_on_device_steps(torch_mod):
    model, loss_fn, (x, y) = probe.demo_problem("cpu", warmup_steps=0)
    opt = torch_mod.optim.SGD(model.parameters(), lr=1e-3)
    rec = GradHistogramRecorder(model).attach(opt, every=2)
    for _ in range(5):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    rec.detach()
    n = sum(p.numel() for p in model.parameters())
    h = rec.result()
    assert rec.steps == 3 and h.total == 3 * n and h.steps == 3
    with pytest.raises(ValueError, match="every"):
        rec.attach(opt, every=0)


def test_histogram_shift_is_exact():
    g = _tricky_values()
    h = GradHistogram.from_array(g)
    e0, c0 = h.log2_counts(1.0)
    e1, c1 = h.log2_counts(2.0 ** 10)
    assert np.array_equal(e1, e0 + 10) and np.array_equal(c0, c1)
    assert h.at(2.0 ** 10).fractions() == h.fractions(2.0 ** 10)


@pytest.mark.parametrize("bad", [0, -1.0, 3.0, 1000, math.nan, math.inf, "x"])
def test_non_power_of_two_scale_rejected(bad):
    h = GradHistogram.from_array([1.0, 2.0])
    with pytest.raises(ValueError, match="scale"):
        h.zone_counts(FP16, bad)


def test_lossless_scales_bracket():
    g = np.float32([2.0 ** -30, 2.0 ** -3, 1.0])
    h = GradHistogram.from_array(g)
    lo, hi = h.lossless_scales(FP16)
    # 2**-30 * S must exceed 2**-25 (S >= 2**6); 1.0 * S must stay below 65520 (S <= 2**15)
    assert (lo, hi) == (2.0 ** 6, 2.0 ** 15)
    assert h.zone_counts(FP16, lo)[Zone.UNDERFLOW] == 0
    assert h.zone_counts(FP16, lo / 2)[Zone.UNDERFLOW] == 1
    assert h.zone_counts(FP16, hi * 2)[Zone.OVERFLOW] == 1
    assert h.lossless_scales(FP8_E4M3) is None  # 30 octaves do not fit e4m3's range
    assert h.lossless_scales(BF16) is not None and FP8_E5M2 in h.formats


def _normal_only(g: np.ndarray) -> np.ndarray:
    return g[~((np.abs(g) < 2.0 ** -126) & (g != 0))]  # fp32 subnormals: top bits only (documented)


@pytest.mark.parametrize("buffer_elems", [0, 1, 3, 10 ** 6])  # per step, per step, 3 slots, many
def test_staged_recorder_is_exact_over_many_steps(torch_mod, buffer_elems):
    """Staged (batched) binning, flushes mid-run and at result(): every step counted exactly once."""
    rng = np.random.default_rng(7)
    base = _tricky_values()
    a = np.abs(base)
    base = base[(a == 0) | ~np.isfinite(a) | ((a >= 2.0 ** -120) & (a <= 2.0 ** 120))]  # x 2**+-3
    odd = np.array([0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x7F800001, 0xFFC00000, 0x7FFFF001,
                    0x00000000, 0x7F800000, 0xFF800000], dtype=np.uint32).view(np.float32)
    base = np.concatenate([base, odd])
    ps = [torch_mod.nn.Parameter(torch_mod.zeros(base.size - 100)),
          torch_mod.nn.Parameter(torch_mod.zeros(10, 10))]
    rec = GradHistogramRecorder(ps, buffer_elems=buffer_elems * base.size)
    seen = []
    for step in range(7):
        with np.errstate(invalid="ignore"):
            g = rng.permutation(base) * np.float32(2.0 ** rng.integers(-3, 4))
        g[:9] = odd  # special bit patterns survive the scaling untouched
        seen.append(g)
        ps[0].grad = torch_mod.from_numpy(g[:-100].copy())
        ps[1].grad = torch_mod.from_numpy(g[-100:].reshape(10, 10).copy())
        rec.record()
        if step == 4:
            mid = rec.result()  # flushes; recording goes on afterwards
            assert mid.steps == 5 and mid.total == 5 * base.size
    h = rec.result()
    want = GradHistogram.from_array(np.concatenate(seen))
    assert h.steps == 7 and np.array_equal(h.table, want.table)
    rec.reset()
    assert rec.result().total == 0 and rec.result().steps == 0


def test_recorder_default_staging_depends_on_the_device(torch_mod):
    from fampnb.probe import recorder as _probe_record

    model, _, _ = probe.demo_problem("cpu", warmup_steps=0)
    n = sum(p.numel() for p in model.parameters())
    rec = GradHistogramRecorder(model)   # CPU: a 2 MiB buffer holds 64 steps of the demo model
    assert rec._slots == min(_probe_record.BUFFER_ELEMS // n, _probe_record.MAX_SLOTS) == 64
    wide = torch_mod.nn.Linear(1024, 1024)   # 1M parameters: binned every step on the CPU ...
    assert GradHistogramRecorder(wide)._slots == 0
    # ... but staged on a GPU, where a step is kernel launches (docs/gpu-results.md)
    assert _probe_record.CUDA_BUFFER_ELEMS // sum(p.numel() for p in wide.parameters()) >= 8
    with pytest.raises(ValueError, match="buffer_elems"):
        GradHistogramRecorder(model, buffer_elems=-1)


def test_recorder_missing_grads_and_half_precision(torch_mod):
    g = _normal_only(_tricky_values())
    with np.errstate(over="ignore"):
        g16 = g.astype(np.float16)  # widened to fp32 exactly by the recorder
    a, b = torch_mod.nn.Parameter(torch_mod.zeros(g.size)), torch_mod.nn.Parameter(
        torch_mod.zeros(g16.size, dtype=torch_mod.float16))
    rec = GradHistogramRecorder([a, b])
    b.grad = torch_mod.from_numpy(g16.copy())
    rec.record()                      # a has no gradient: only b's values
    a.grad = torch_mod.from_numpy(g.copy())
    rec.record()                      # both (staged)
    a.grad = None
    rec.record()                      # staging is set up, a slot free, a grad missing: b alone
    a.grad = torch_mod.from_numpy(g.copy())
    rec.record()                      # both again
    h = rec.result()
    want = GradHistogram.from_array(np.concatenate([g16, g, g16, g16, g, g16]).astype(np.float32))
    assert h.steps == 4 and np.array_equal(h.table, want.table)
