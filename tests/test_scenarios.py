"""fampnb.scenarios: the gradient schedules produce their patterns; synthetic logs of each kind."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from fampnb import scenarios
from fampnb.formats import FP16, Zone
from fampnb.scaler import STYLES, SeedHalving, TorchGradScaler
from fampnb.scenarios import LOG_KINDS, SCENARIOS, scenario, synthetic_log, synthetic_run
from fampnb.seed import EXP2_G_MAX, experiment_2

BACKOFF = re.compile(r"OVERFLOW!|Gradient overflow|overflow detected|Loss scaling: .*\(overflow\)")


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenarios_are_deterministic_dataclasses(name):
    a, b = scenario(name), scenario(name)
    assert a.name == name and a.description and a.steps == len(a.grad_abs_max)
    assert np.array_equal(a.grad_abs_max, b.grad_abs_max)
    assert a.grad_abs_max.dtype == np.float64 and a.fmt is FP16
    assert a.run().scales == b.run().scales
    assert a.run().scales[0] == a.init_scale == a.policy.start_scale


def test_seed_changes_random_schedules():
    assert not np.array_equal(scenario("spike", seed=0).grad_abs_max,
                              scenario("spike", seed=1).grad_abs_max)


def test_calibration_a_few_halvings_then_stable():
    tr = scenario("calibration").run()
    assert tr.events[:3] == ["backoff"] * 3 and tr.final_scale == 8192
    assert tr.count("backoff") == 3 and not any(tr.overflow[3:])


def test_spike_one_isolated_backoff_per_spike_and_regrowth():
    sc = scenario("spike", spikes=3)
    tr = sc.run()
    at = [i for i, o in enumerate(tr.overflow) if o]
    assert len(at) == 3 and all(b - a > 1 for a, b in zip(at, at[1:]))
    assert tr.count("growth") >= 1
    assert tr.overflow == list(sc.grad_abs_max * np.asarray(tr.scales) >= FP16.overflow_threshold)


def test_drift_ends_in_collapse():
    sc = scenario("drift")
    tr = sc.run()
    n = sc.steps
    assert all(tr.overflow[int(0.9 * n):])
    first, second = sum(tr.overflow[: n // 2]), sum(tr.overflow[n // 2: int(0.9 * n)])
    assert second > first
    assert tr.final_scale < 1e-10


def test_persistent_is_the_articles_eight_halvings():
    sc = scenario("persistent")
    assert tuple(sc.grad_abs_max) == EXP2_G_MAX and isinstance(sc.policy, SeedHalving)
    assert [r.scale for r in sc.run().rows] == [r.scale for r in experiment_2()]
    longer = scenario("persistent", steps=20).run()
    assert longer.scales[:8] == [r.scale for r in experiment_2()]
    assert all(longer.overflow[:17]) and longer.scales[17] == 0 and not longer.overflow[17]


def test_underflow_every_gradient_rounds_to_zero_and_nothing_signals_it():
    sc = scenario("underflow")
    tr = sc.run()
    assert isinstance(sc.policy, TorchGradScaler) and not any(tr.overflow)
    scaled = sc.grad_abs_max * np.asarray(tr.scales)
    assert (FP16.round(scaled) == 0).all()
    assert (FP16.classify(scaled) == Zone.UNDERFLOW).all()


def test_bad_scenario_arguments():
    with pytest.raises(ValueError, match="'nope'"):
        scenario("nope")
    with pytest.raises(ValueError, match="steps"):
        scenario("calibration", steps=0)
    with pytest.raises(ValueError, match="kind"):
        synthetic_log("weird")
    with pytest.raises(ValueError, match="style"):
        synthetic_log("overflow", "tensorboard")
    with pytest.raises(ValueError, match="steps"):
        synthetic_log("overflow", steps=5)


def _losses(lines: list[str]) -> list[float]:
    """Loss values of the records, whatever the style (NaN where the record shows nan)."""
    out = []
    for ln in lines:
        m = re.search(r"'loss': ([^,}]+)|\bloss=([^,]+)|\bloss (nan|[-\d.]+)|lm loss: ([^ |]+)", ln)
        if m:
            out.append(float(next(g for g in m.groups() if g)))
        elif re.match(r" iteration ", ln) and not ("skipped iterations:  10" in ln
                                                    and "nan iterations:   0" in ln):
            out.append(math.nan)  # Megatron: lm loss vanished (not merely: all skipped, no NaN)
    return out


def _longest_run(flags: list[bool]) -> int:
    best = cur = 0
    for f in flags:
        cur = cur + 1 if f else 0
        best = max(best, cur)
    return best


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("kind", LOG_KINDS)
def test_synthetic_logs_are_deterministic_and_have_their_kinds_signature(kind, style):
    lines = synthetic_log(kind, style)
    assert lines == synthetic_log(kind, style) and all(isinstance(x, str) for x in lines)
    trace, loss = synthetic_run(kind, style)
    if kind != "data":
        assert lines != synthetic_log(kind, style, seed=1)
    backoffs = [ln for ln in lines if BACKOFF.search(ln)]
    losses = _losses(lines)
    text = "\n".join(lines)
    if kind == "data":
        assert not backoffs and not any(trace.skipped)
        assert math.isnan(loss[0]) and (math.isnan(losses[0]) if losses else "Nan/Inf" in text)
        assert "fp16=True" not in text
    elif kind == "no-scaler":
        assert not backoffs and not any(trace.skipped) and set(trace.scales) == {1.0}
        assert not math.isnan(losses[0])
        assert math.isnan(losses[-1]) or lines[-1] == "FloatingPointError: gradients are Nan/Inf"
        assert "fp16=True" not in text
        assert any(w in text for w in ("bf16", "bfloat16", "fp32", "FP32"))
    elif kind == "healthy":
        assert losses and not any(math.isnan(v) for v in losses) and losses[-1] < losses[0]
        assert "Traceback" not in text and not np.isnan(loss).any()
        ov = [i for i, o in enumerate(trace.overflow) if o]
        assert 1 <= len(ov) <= 12 and ov[-1] < 12 and trace.fatal is None
        if style in ("deepspeed", "apex", "fairseq", "seed"):
            assert len(backoffs) == len(ov)
    else:  # overflow: a settled start, then consecutive backoffs, then fatal or lasting NaN
        assert not any(trace.overflow[:100]) and _longest_run(trace.skipped) >= 15
        if style in ("deepspeed", "apex", "fairseq", "seed"):
            assert len(backoffs) >= 15
        if style == "deepspeed":
            assert lines[-1].startswith("Exception: Current loss scale already at minimum")
        elif style == "fairseq":
            assert lines[-1].startswith("FloatingPointError: Minimum loss scale reached (0.0001)")
        else:
            assert math.isnan(losses[-1])
        if style == "megatron":
            assert "loss scale: 1.0 | number of skipped iterations:  10" in lines[-1]
        if style == "hf":
            assert any("'grad_norm': nan" in ln and "'loss': nan" not in ln for ln in lines)


@pytest.mark.parametrize("kind", LOG_KINDS)
def test_short_synthetic_logs_still_show_their_kind(kind):
    """The walkthrough widget asks for 40 steps."""
    for style in STYLES:
        trace, loss = synthetic_run(kind, style, steps=40)
        assert len(loss) == 40 and 1 <= len(trace) <= 40
        lines = synthetic_log(kind, style, steps=40)
        assert lines
        if kind == "overflow":
            assert sum(trace.skipped) >= 8


def test_headers_state_the_precision():
    assert any("bfloat16_enabled ............. True" in ln
               for ln in synthetic_log("no-scaler", "deepspeed"))
    assert "  fp16 ............................................ True" in \
        synthetic_log("healthy", "megatron")
    assert synthetic_log("healthy", "megatron", header=False)[0].startswith(" iteration ")
    assert scenarios.synthetic_log("healthy", "megatron", steps=200)[-1].startswith(" iteration")
