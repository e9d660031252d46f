"""fampnb.probe.watch: the first non-finite tensor named (module, phase, tensor, step), judged in the
doctor's vocabulary, and no hook left behind."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.torch


def _mlp(torch, w2: float | None = None, dtype=None):
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        if w2 is not None:
            m[2].weight.fill_(w2)
    return m.to(dtype or torch.float16)


def _batch(torch, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(16, 4, generator=g).to(dtype), torch.randn(16, 2, generator=g).to(dtype)


def _train(torch, model, w, steps=4, nan_step=None, loss_mult=1.0):
    dtype = next(model.parameters()).dtype
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for i in range(1, steps + 1):
        x, y = _batch(torch, dtype)
        if i == nan_step:
            x = x.clone()
            x[3, 1] = float("nan")
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x).float(), y.float()) * loss_mult
        loss.backward()
        opt.step()
        w.step(loss)


def _hook_count(model) -> int:
    n = 0
    for m in model.modules():
        n += len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)
        for p in m.parameters(recurse=False):
            n += len(p._backward_hooks or {})
    return n


def test_import_probe_does_not_import_torch_or_the_watch():
    code = ("import sys, fampnb, fampnb.probe, fampnb.hazards, fampnb.hazard_demos; "
            "fampnb.probe.watch; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_layer_whose_output_overflows_is_named_at_step_1(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch, w2=30000.0)
    x, _ = _batch(torch, torch.float16)
    assert torch.isfinite(model[1](model[0](x))).all()  # the layer before is finite
    with watch(model, fmt="fp16") as w:
        _train(torch, model, w, steps=2)
    o = w.first
    assert (o.step, o.module, o.phase, o.tensor, o.kind) == (1, "2", "forward", "output", "inf")
    assert math.isinf(o.abs_max) and 0 < o.before < 65504
    d = w.diagnose()
    assert d.verdict == "overflow" and d.where == o and d.first_nan_step == 1
    assert "'2'" in d.reason and "65504" in d.reason and "fp32" in d.first_switch
    assert any("timing rule" in c for c in d.caveats)
    assert d.to_dict()["where"]["abs_max"] == "inf"


def test_nan_in_the_batch_at_step_3_is_data_at_step_3(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch)
    with watch(model) as w:
        _train(torch, model, w, steps=5, nan_step=3)
    o = w.first
    assert (o.step, o.module, o.phase, o.tensor, o.kind) == (3, "", "forward", "input", "nan")
    assert [s.step for s in w.steps if s.origin] == [3, 4, 5]  # the NaN reached the weights
    d = w.diagnose()
    assert d.verdict == "data" and d.first_nan_step == 3 and d.where.step == 3


def test_clean_run_is_healthy_and_first_is_none(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch)
    with watch(model) as w:
        _train(torch, model, w, steps=3)
    assert w.first is None and w.origins == [] and len(w.steps) == 3
    assert all(s.watched for s in w.steps) and all(s.loss is not None for s in w.steps)
    d = w.diagnose()
    assert d.verdict == "healthy" and d.where is None
    from fampnb.diagnose import diagnose
    from fampnb.logs import parse

    assert diagnose(parse(w.log_lines()), precision="fp16").verdict == "healthy"


def test_backward_only_overflow_is_found_in_the_backward_phase(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch)
    with watch(model) as w:  # the loss, in fp32, is finite; its gradient in fp16 is not
        _train(torch, model, w, steps=1, loss_mult=3e5)
    assert not w.steps[0].forward_bad and w.steps[0].backward_bad
    o = w.first
    assert o.phase == "backward" and o.tensor == "grad" and o.kind in ("inf", "nan")
    d = w.diagnose()
    assert d.verdict == "overflow" and d.where == o and "backward" in d.reason


def test_scaler_start_up_backoffs_are_healthy(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch, w2=3.0, dtype=torch.float32)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=100)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    x, y = _batch(torch, torch.float32)
    with watch(model, fmt="fp16", scaler=scaler) as w:
        for _ in range(12):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.float16):
                out = model(x)
            loss = torch.nn.functional.mse_loss(out.float(), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            w.step(loss)
    assert w.first.phase == "backward" and w.first.step == 1
    scales = [s.scale for s in w.steps]
    assert scales[0] == 2.0 ** 16 and scales[-1] < scales[0]
    assert scales[-1] == scales[-2]  # it settled
    d = w.diagnose()
    assert d.verdict == "healthy" and d.where == w.first and "skipped by the scaler" in d.reason
    assert any(line.startswith("Loss scaling: 65536 -> 32768") for line in w.log_lines())


def test_hooks_are_gone_after_the_block_also_when_it_raises(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch)
    assert _hook_count(model) == 0
    with watch(model) as w:
        assert w.hooks > 0 and _hook_count(model) == w.hooks
        _train(torch, model, w, steps=1)
    assert _hook_count(model) == 0 and w.hooks == 0
    with pytest.raises(RuntimeError, match="boom"):
        with watch(model) as w2:
            model(_batch(torch, torch.float16)[0])
            raise RuntimeError("boom")
    assert _hook_count(model) == 0 and w2.hooks == 0
    model(_batch(torch, torch.float16)[0])  # still works, records nothing
    assert w2.steps == []


def test_every_watches_steps_1_11_21(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch)
    with watch(model, every=10) as w:
        _train(torch, model, w, steps=12, nan_step=5)
    assert [s.step for s in w.steps if s.watched] == [1, 11]
    assert w.first.step == 11  # the NaN of step 5 went unseen until step 11
    assert w.first.module != "" or w.first.tensor != "input"


def test_near_lists_modules_close_to_the_format_max(torch_mod):
    from fampnb.probe import watch

    torch = torch_mod
    model = _mlp(torch, w2=2000.0)
    with watch(model, near=16) as w, torch.no_grad():  # a forward pass only (evaluation)
        model(_batch(torch, torch.float16)[0])
        w.step()
    assert w.first is None
    near = w.near
    assert near and near[0].module == "2" and near[0].tensor == "output"
    assert 1 / 16 <= near[0].ratio < 1 and near[0].abs_max == pytest.approx(
        near[0].ratio * 65504)
    assert all(n.ratio >= 1 / 16 for n in near)
    d = w.diagnose()
    assert d.verdict == "healthy" and d.caveats and "'2'" not in d.reason


def test_bad_arguments_are_one_line_errors(torch_mod):
    from fampnb.probe import watch

    model = _mlp(torch_mod)
    with pytest.raises(TypeError, match="nn.Module"):
        watch("model")
    with pytest.raises(ValueError, match="every"):
        watch(model, every=0)
    with pytest.raises(ValueError, match="unknown format"):
        watch(model, fmt="fp13")
    with pytest.raises(ValueError, match="near"):
        watch(model, near=0.5)


def test_demo_model_attention_overflow_is_named(torch_mod):
    from fampnb import hazard_demos as D
    from fampnb.probe import watch

    model = D.demo_model(gain=64.0)
    with watch(model) as w:
        D.train(model, steps=2, watch=w)
    assert (w.first.step, w.first.module, w.first.tensor) == (1, "attn", "output")
    clean = D.demo_model()
    with watch(clean) as w2:
        D.train(clean, steps=2, watch=w2)
    assert w2.first is None
