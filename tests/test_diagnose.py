"""fampnb.diagnose: the 14 real excerpts, rules from reference section 7, round trips."""

from __future__ import annotations

import importlib.util
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fampnb import logs
from fampnb.diagnose import VERDICTS, Diagnosis, diagnose

EXPECTED = logs.expected_verdicts()


def diag(name: str, **kw) -> Diagnosis:
    return diagnose(logs.parse(logs.read_sample(name)), **kw)


def lines_diag(lines: list[str], **kw) -> Diagnosis:
    return diagnose(logs.parse(lines), **kw)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_excerpts(name):
    d = diag(name)
    assert d.verdict == EXPECTED[name]["verdict"], (d.verdict, d.reason)
    assert d.reason and d.advice
    json.dumps(d.to_dict(), allow_nan=False)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_excerpts_fast_scan_agrees(name):
    data = logs.sample_logs()[name].read_bytes()
    assert diagnose(logs.scan(io.BytesIO(data))).to_dict() == diagnose(
        logs.parse(io.BytesIO(data))).to_dict()


def test_apex_collapse_details():
    d = diag("apex_apex_834.log")
    assert (d.backoffs, d.min_scale, d.final_scale, d.certainty) == (17, 0.5, 0.5, "certain")
    assert d.first_nan_line is None
    assert any("below 1" in c for c in d.caveats)
    assert [e.line_no for e in d.evidence][:1] == [1] and d.evidence[-1].line_no == 17
    assert "learning rate" in d.first_switch and "clipping" in d.first_switch
    assert "256" in d.advice[1]


def test_calibration_is_named():
    d = diag("deepspeed_CogVideo_233.log")
    assert d.backoffs == 6 and d.final_scale == 2 ** 26
    assert any("calibration" in c for c in d.caveats)
    d = diag("apex_DG-Net_11.log")
    assert d.first_nan_line == 8 and any("single NaN" in c for c in d.caveats)


def test_data_verdicts_carry_the_bf16_caveat():
    d = diag("fp32-noscaler_faster-rcnn.pytorch_562.log")
    assert (d.first_nan_step, d.first_nan_line) == (100, 5)
    assert "labels" in d.first_switch
    assert any("bf16" in c and "one batch" in c for c in d.caveats)
    d = diag("gradscaler_insightface_2262.log")
    assert any("silent" in c for c in d.caveats)


def test_hidden_nan_caveats():
    assert any("logging_nan_inf_filter" in c for c in diag("hf-trainer_LlamaFactory_5660-bf16.log")
               .caveats)
    d = diag("megatron_Megatron-LLM_33.log")
    assert d.first_nan_step == 3385 and any("vanish" in c for c in d.caveats)


def test_precision_hint_and_validation():
    assert diag("hf-trainer_LlamaFactory_5660-bf16.log", precision="bf16").verdict == "no-scaler"
    assert diag("fp32-noscaler_faster-rcnn.pytorch_562.log", precision="fp32").verdict == "data"
    assert diag("apex_apex_834.log", precision="float16").precision == "fp16"
    with pytest.raises(ValueError, match="precision"):
        diag("apex_apex_834.log", precision="int8")


MIDRUN = [f"step {i}: loss {2.0 - i / 100}" for i in range(10, 300, 10)] + [
    "step 300: loss nan", "step 310: loss nan"]


def test_precision_from_the_log():
    assert lines_diag(["--bf16 True"] + MIDRUN).verdict == "no-scaler"
    assert lines_diag(['"bf16": {"enabled": true}'] + MIDRUN).precision == "bf16"
    d = lines_diag(["Using 16bit Automatic Mixed Precision (AMP)"] + MIDRUN)
    assert d.precision == "fp16" and d.verdict == "unknown"
    d = lines_diag(MIDRUN)
    assert d.verdict == "no-scaler" and any("silent" in c.lower() for c in d.caveats)


def ds(a: float, b: float) -> str:
    return f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {a:g}, reducing to {b:g}"


def test_rules_calibration_isolated_cascade():
    healthy = [ds(2 ** k, 2 ** (k - 1)) for k in range(32, 26, -1)]
    healthy += [f"{{'loss': {2 - i / 100}, 'learning_rate': 1e-4}}" for i in range(50)]
    assert lines_diag(healthy).verdict == "healthy"
    isolated = healthy + [ds(65536, 32768)] + [f"{{'loss': {1.4 - i / 100}}}" for i in range(20)]
    assert lines_diag(isolated).verdict == "healthy"
    cascade = healthy + [ds(2 ** k, 2 ** (k - 1)) for k in range(16, 7, -1)]
    d = lines_diag(cascade)
    assert d.verdict == "overflow" and "below 256" in d.reason


def test_rules_endings():
    floor = [ds(1, 1)] * 5
    assert lines_diag(floor).verdict == "overflow"
    fatal = ["{'loss': 2.0}"] * 5 + ["Exception: Current loss scale already at minimum - cannot "
                                     "decrease scale anymore. Exiting run."]
    d = lines_diag(fatal)
    assert (d.verdict, d.certainty) == ("overflow", "certain")
    article = [f"Loss scaling: {2 ** k} -> {2 ** (k - 1)} (overflow)" for k in range(16, 8, -1)]
    assert lines_diag(article).verdict == "overflow"   # the article's eight halvings, still falling
    nan_after = ["{'loss': 2.0}"] * 30 + [ds(65536, 32768), ds(32768, 16384), "{'loss': nan}",
                                          "{'loss': nan}"]
    assert lines_diag(nan_after).verdict == "overflow"


def test_rules_grad_norm_nan():
    falling = [f"loss: {2 - i / 50:.3f}  grad_norm: {'nan' if i % 3 == 0 else '1.0'}"
               for i in range(30)]
    assert lines_diag(falling).verdict == "healthy"
    stuck = [f"loss: 2.0  grad_norm: {'1.0' if i < 10 else 'nan'}" for i in range(40)]
    assert lines_diag(stuck).verdict == "overflow"


def test_rules_window_ends_on_a_nonfinite_grad_norm():
    """A window that ends on a non-finite grad norm whose loss jumps does not show that training
    went on (as for a backoff at the window's end); without the jump it is a skipped step."""
    base = [f"loss: {2 - i / 100:.3f}  grad_norm: 1.0" for i in range(10)]
    d = lines_diag(base + ["loss: 3.100  grad_norm: nan"])
    assert d.verdict == "unknown" and "jumps" in d.reason
    assert lines_diag(base + ["loss: 1.900  grad_norm: nan"]).verdict == "healthy"
    assert lines_diag(base + ["loss: 3.100  grad_norm: nan", "loss: 1.900  grad_norm: 1.0"]
                      ).verdict == "healthy"


def test_a_step_only_fp16_skips_makes_fp16_the_inferred_precision():
    def rec(loss: str, gn: str, lr: str) -> str:
        return f"{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': {lr}, 'epoch': 0.01}}"

    lines = [rec("3.6", "7.3", "4.9997e-05"), rec("63.4", "nan", "4.9990e-05"),
             rec("0.0", "nan", "4.9990e-05")]
    d = lines_diag(lines)
    assert (d.verdict, d.precision) == ("overflow", "fp16")
    assert any("fp16 is inferred" in c for c in d.caveats)
    assert any(e.rule == "lr-frozen" for e in d.evidence)
    stated = lines_diag(["TrainingArguments(bf16=True)"] + lines)     # a stated precision wins
    assert stated.precision == "bf16" and stated.verdict == "no-scaler"
    assert not any("fp16 is inferred" in c for c in stated.caveats)
    given = lines_diag(lines, precision="bf16")                         # and so does --precision
    assert given.precision == "bf16" and given.verdict == "no-scaler"


def test_unknown_and_misuse():
    assert diagnose([]).verdict == "unknown"
    assert lines_diag(["hello", "world"]).verdict == "unknown"
    d = lines_diag(["ValueError: Attempting to unscale FP16 gradients."])
    assert d.verdict == "unknown" and any("misuse" in c for c in d.caveats)


def test_to_dict_is_json_safe():
    d = diagnose(logs.parse(["{'loss': nan, 'grad_norm': inf}", "{'loss': nan}"]))
    out = d.to_dict()
    text = json.dumps(out, allow_nan=False)
    assert '"nan"' in text
    assert set(out) >= {"verdict", "reason", "evidence", "first_nan_step", "first_nan_line",
                        "backoffs", "min_scale", "final_scale", "framework", "advice", "caveats"}


def test_memory_is_bounded():
    lines = (f"{{'loss': {1 + (i % 7) / 10}, 'grad_norm': 1.0}}" for i in range(200_000))
    d = diagnose(logs.parse(lines))
    assert d.verdict == "healthy" and len(d.losses) <= 2 * 4096


# ---- round trips through the scaler simulator ------------------------------------------------
HAVE_SCENARIOS = importlib.util.find_spec("fampnb.scenarios") is not None
needs_scenarios = pytest.mark.skipif(not HAVE_SCENARIOS, reason="fampnb.scenarios not written yet")


@needs_scenarios
@pytest.mark.parametrize("kind", ["overflow", "data", "no-scaler", "healthy"])
@pytest.mark.parametrize("style", ["seed", "deepspeed", "apex", "fairseq", "megatron", "hf",
                                   "torch"])
@pytest.mark.parametrize("steps,seed", [(200, 0), (600, 1)])
def test_round_trip_scenarios(kind, style, steps, seed):
    from fampnb.scenarios import synthetic_log

    lines = synthetic_log(kind, style, steps, seed)
    d = diagnose(logs.parse(lines))
    assert d.verdict == kind, d.reason
    data = ("\n".join(lines) + "\n").encode()
    assert diagnose(logs.scan(io.BytesIO(data))).verdict == kind


@pytest.mark.parametrize("style", ["seed", "deepspeed", "apex", "fairseq", "megatron", "torch"])
def test_round_trip_simulated_collapse(style):
    from fampnb.scaler import TorchGradScaler, simulate

    grads = [0.5] * 50 + [1e3 * 2 ** i for i in range(40)]
    tr = simulate(TorchGradScaler(), grads)
    lines = tr.log_lines(style, loss=[2.0 - 0.01 * i for i in range(len(tr.scales))])
    assert lines_diag(lines).verdict == "overflow"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([
    "Loss scaling: 65536 -> 32768 (overflow)", "{'loss': nan}", "{'loss': 1.5, 'grad_norm': nan}",
    "loss: 2.0", "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 0.5",
    "[Rank 0] step=10, skipped=5", "FloatingPointError: gradients are Nan/Inf", "garbage",
    " iteration 5/10 | loss scale: 1.0 | number of skipped iterations: 0 |", "--bf16"]),
    max_size=40))
def test_property_diagnose_total(lines):
    d = lines_diag(lines)
    assert d.verdict in VERDICTS
    json.dumps(d.to_dict(), allow_nan=False)
    if d.first_nan_line is not None:
        assert 1 <= d.first_nan_line <= len(lines)
    assert d.min_scale is None or not math.isnan(d.min_scale)


def test_rules_silent_collapse_and_counters():
    printed = [f"step {i}: loss {2 - i / 100:.3f}, loss scale {s}"
               for i, s in enumerate([65536, 65536, 1024, 0.5, 0.0625])]
    d = lines_diag(printed)
    assert d.verdict == "overflow" and "below 1" in d.reason
    stuck = [f"[Rank 0] step={k}, skipped={k}, lr=[0.0]" for k in range(10, 110, 10)]
    assert lines_diag(stuck).verdict == "overflow"
    startup = [f"[Rank 0] step={k}, skipped={k}, lr=[0.0]" for k in (5, 10)]
    assert lines_diag(startup + ["{'loss': 2.0}"] * 5).verdict == "healthy"


def test_rules_mid_excerpt_cascade_from_a_low_scale():
    lines = [ds(2 ** k, 2 ** (k - 1)) for k in (12, 11, 10)]   # no start-up in sight
    d = lines_diag(lines)
    assert d.verdict == "overflow", d.reason
    assert lines_diag([ds(8192, 4096)] + ["{'loss': 1.0}"] * 10).verdict == "healthy"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_verdict_shows_evidence_with_line_numbers(name):
    d = diag(name)
    assert d.evidence, d.verdict
    assert all(1 <= e.line_no <= len(logs.read_sample(name)) for e in d.evidence)


def test_rules_megatron_skipping_forever_and_bf16_zero_loss():
    meg = [f" iteration {i * 100:8d}/  100000 | learning rate: 0.000E+00 | global batch size:    64"
           f" | loss scale: 1.0 | number of skipped iterations: 100 | number of nan iterations:   0 |"
           for i in range(20, 26)]
    d = lines_diag(meg)
    assert d.verdict == "overflow" and "skipping forever" in d.reason
    # loss 0.0 with grad_norm nan means "the update reached the weights" once training happened
    # (a finite, non-zero loss before it)
    trained = "{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 1e-05, 'epoch': 0.08}"
    zero = [trained] + ["{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.1}"] * 3
    assert lines_diag(zero).verdict == "no-scaler"
    assert lines_diag(zero, precision="fp16").verdict == "overflow"


def test_rules_fairseq_calibrates_from_128():
    note = ("2021-01-01 12:00:00 | INFO | fairseq.trainer | NOTE: gradient overflow detected, "
            "ignoring gradient, setting loss scale to: {}")
    inner = ("2021-01-01 12:00:10 | INFO | train_inner | epoch 001:    100 / 1000 loss=9.1, "
             "num_updates=100, gnorm=2.1, loss_scale=32")
    assert lines_diag([note.format(64.0), note.format(32.0)] + [inner] * 3).verdict == "healthy"
    late = [inner] * 5 + [note.format(x) for x in (0.5, 0.25, 0.125)]
    assert lines_diag(late).verdict == "overflow"


# ---- general rules behind the held-out generalisation ------------------------------------------
def apex(x: float) -> str:
    return f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {x!r}"


def fs_note(x: float) -> str:
    return ("2020-05-01 10:00:00 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss "
            f"scale to: {x!r}")


def fs_inner(n: int, loss: float, gnorm: float, scale: float) -> str:
    return (f"2020-05-01 10:00:00 | INFO | train_inner | epoch 004:    {n} / 9000 loss={loss}, "
            f"num_updates={n}, gnorm={gnorm}, loss_scale={scale:g}")


def test_legacy_apex_collapse_counts_as_backoffs():
    lines = ["Epoch 1/10"]
    scale = 2.0 ** 16
    for i in range(12):
        lines += [f"Grad overflow on iteration {i}", f"Using dynamic loss scale of {scale}",
                  f" {i + 1}/500 [00:0{i % 10}<03:00, 2.1it/s, loss={4.0 - i / 10:.3f}]"]
        scale /= 2
    d = lines_diag(lines)
    assert d.verdict == "overflow" and d.backoffs == 12, d.reason
    short = lines[:1] + lines[1:10] + [f" {i}/500 [00:01<03:00, 2.1it/s, loss=3.5]"
                                       for i in range(5, 40)]
    assert lines_diag(short).verdict == "healthy"


def test_window_opening_with_backoffs_from_an_unseen_scale():
    # the start of the halving lies before the window: calibration position, unless it goes on
    assert lines_diag([apex(4096.0), apex(2048.0), apex(1024.0)]).verdict == "healthy"
    d = lines_diag([apex(2.0 ** k) for k in range(12, 3, -1)])
    assert d.verdict == "overflow", d.reason
    # a printed starting scale below any initial one is another matter (no start-up in sight)
    assert lines_diag([ds(2048, 1024), ds(1024, 512), ds(512, 256)]).verdict == "overflow"


def test_scale_below_one_that_grows_back_is_healthy():
    lines = [fs_note(0.5)]
    for k, loss in enumerate((5.31, 5.30, 5.28)):
        lines += [fs_inner(100 * k + 100, loss, 0.3, 0.75), fs_inner(100 * k + 150, loss, 0.3, 1)]
        lines.append(fs_note(1.0 if k < 2 else 0.5))
    d = lines_diag(lines)
    assert d.verdict == "healthy", d.reason
    # the same values without growth between them keep halving: overflow
    falling = [fs_inner(100, 5.3, 0.3, 1)] * 3 + [fs_note(x) for x in (0.5, 0.25, 0.125, 0.0625)]
    assert lines_diag(falling).verdict == "overflow"


def test_lone_mid_run_backoff_needs_evidence_that_the_scale_held():
    before = [fs_inner(100 * k, 4.0 - k / 100, 1.2, 256) for k in range(1, 6)]
    ends = before + [fs_note(128.0)]
    assert lines_diag(ends).verdict == "unknown"
    spike = ends + [fs_inner(700, 5.9, 7.5, 128)]
    d = lines_diag(spike)
    assert d.verdict == "unknown" and "jumps" in d.reason
    calm = ends + [fs_inner(700, 3.94, 1.3, 128)]
    assert lines_diag(calm).verdict == "healthy"
    settles = spike + [fs_inner(800 + 100 * k, 4.0 - k / 50, 1.4, 128) for k in range(3)]
    assert lines_diag(settles).verdict == "healthy"


def test_nan_near_the_first_step_is_read_from_the_step_counter():
    def meg(i: int, total: int) -> str:
        return (f" iteration {i:8d}/{total:8d} | learning rate: 3.0E-04 | loss scale: 1.0 | "
                "grad norm: nan | number of skipped iterations:   0 | number of nan iterations:   0 |")
    late = [meg(i, 400000) for i in (9120, 9121, 9122)]
    d = lines_diag(late)
    assert d.verdict == "no-scaler" and d.first_nan_step == 9120, d.reason
    early = [meg(i, 400000) for i in (1, 2, 3)]
    assert lines_diag(early).verdict == "data"
    # a NaN ending message with no counter and no start-up line cannot be placed in time
    ending = ["I1010 10:00:00.1 hooks.py:1] checkpoint saved",
              "ERROR:tensorflow:Model diverged with loss = NaN."]
    assert lines_diag(ending).verdict == "unknown"
    start = ["INFO:tensorflow:Mixed precision policy: mixed_float16"] + ending[1:]
    assert lines_diag(start).verdict == "data"


def test_silent_scaler_frameworks_prove_nothing_by_silence():
    mm = ("01/02 10:00:00 - mmengine - INFO - Epoch(train)  [1][ 900/2000]  lr: 1.0e-02  "
          "loss: nan  loss_cls: nan  loss_bbox: nan")
    d = lines_diag([mm])
    assert d.verdict == "unknown", d.reason
    assert lines_diag([mm], precision="bf16").verdict == "no-scaler"
    bar = ("Epoch 1:  80%|████████  | 4000/5000 [10:00<02:30, 6.7it/s, v_num=2, "
           "train_loss_step=nan.0]")
    assert lines_diag(["Using bfloat16 Automatic Mixed Precision (AMP)", bar]).verdict == "no-scaler"
    assert lines_diag([bar]).verdict == "unknown"


def test_log2_scale_collapse_from_a_table():
    table = ["-" * 24, "| lg_loss_scale | -90.5 |", "| loss          | nan   |",
             "| step          | 2e+05 |", "-" * 24]
    lines = table + [f"Found NaN, decreased lg_loss_scale to {-91.5 - k}" for k in range(4)]
    d = lines_diag(lines)
    assert d.verdict == "overflow" and d.first_nan_step == 200000, d.reason


def test_skip_counter_at_zero_through_a_nan_means_nothing_skips():
    lines = []
    for s in range(200, 330, 10):
        lines.append(f"[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] "
                     f"step={s}, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]")
        lines.append(f"{{'loss': {'nan' if s >= 300 else 1.0 - s / 1000}, 'learning_rate': 1e-05}}")
    d = lines_diag(lines)
    assert d.verdict == "no-scaler" and "counter" in d.reason, d.reason
    assert lines_diag(lines, precision="fp16").verdict == "unknown"


def test_periodic_backoffs_at_a_settled_scale_are_healthy_even_at_the_window_end():
    lines: list[str] = []
    for cycle in range(5):     # the scale grows back (silently) and overflows again, like DeepSpeed
        lines += [f"{{'loss': {2 - cycle / 10 - i / 1000}, 'grad_norm': 0.5}}" for i in range(10)]
        lines.append(ds(65536, 32768))
    assert lines_diag(lines).verdict == "healthy"


# ---- rules found by the second held-out set (general, on our own lines) ------------------------
def _ds_line(before: str, after: str, ts: int = 0) -> str:
    return (f"[2024-05-02 11:{ts // 60:02d}:{ts % 60:02d},100] [INFO] [loss_scaler.py:183:update_scale]"
            f" [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {before}, reducing "
            f"to {after}")


def _bar(i: int, n: int) -> str:
    return f"  1%|▏         | {i}/{n} [10:00<20:00:00,  4.10s/it]"


@pytest.mark.parametrize("value", ["1", "0"])
def test_overflow_records_at_the_floor_mean_the_scaler_is_stuck(value):
    """DeepSpeed prints int(scale): at a min_loss_scale below 1 it reads 0 -> 0; at the default
    floor, 1 -> 1.  Repeated, the scale cannot halve any more and every step is skipped."""
    lines = []
    for k, i in enumerate(range(310, 313)):
        lines += [_bar(i, 20000) + _ds_line(value, value, k)]
    d = lines_diag(lines)
    assert d.verdict == "overflow" and "stuck at its floor" in d.reason, d.reason
    assert ("printed as an integer" in d.reason) == (value == "0")
    assert d.evidence and d.evidence[0].line_no == 1
    # steps skipped at the floor are skips in the counters, not hysteresis credits spent
    assert d.hysteresis == 0 and d.skips + d.backoffs == 3
    # once is not "repeating": a single record at the floor decides nothing by itself
    assert "stuck" not in lines_diag(lines[:1]).reason


def test_repeated_equal_scales_above_the_floor_are_not_a_floor():
    """Old ZeRO-2 printed ``reducing to`` the unchanged value, once per rank, at start-up."""
    lines = [f"[2022-06-01 10:00:0{r},000] [INFO] [stage2.py:1000:step] [deepspeed] fp16 dynamic loss "
             f"scale overflow! Rank {r} Skipping step. Attempted loss scale: 4294967296, reducing to "
             "4294967296" for r in range(7)]
    lines.append("{'loss': 2.1, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.01}")
    assert lines_diag(lines).verdict == "healthy"


def test_wrapped_cascade_mid_run_reads_like_the_unwrapped_one():
    """Four halvings on consecutive steps, mid-run (the window opens at step 512 of 4000), each
    record wrapped at the terminal width mid-word: past calibration, a failure."""
    whole = ["[train_loss: 0.61 | kl: 0.02]:  13%|█ | 512/4000 [40:00<4:30:00, 4.6s/it]"]
    for k, i in enumerate(range(520, 524)):
        whole.append(_ds_line(f"{8192.0 / 2 ** k}", f"{4096.0 / 2 ** k}", k))
        whole.append(f"[train_loss: 0.7{k} | kl: 0.02]:  13%|█ | {i}/4000 [40:0{k}<4:30:00, 4.6s/it]")
    wrapped = []
    for line in whole:
        cut = line.find("loss scale:") + 7 if "OVERFLOW" in line else -1
        wrapped += [line[:cut], line[cut:]] if cut > 0 else [line]
    a, b = lines_diag(whole), lines_diag(wrapped)
    assert a.verdict == b.verdict == "overflow", (a.reason, b.reason)
    assert (a.backoffs, a.final_scale) == (b.backoffs, b.final_scale) == (4, 512.0)
    assert b.reason == a.reason


def test_zero_loss_with_nan_grad_norm_needs_training_before_it():
    """``loss 0.0, grad_norm nan`` is the no-scaler trace (a non-finite update reached the weights)
    only after a finite, non-zero loss; as the run's very first record it is NaN from step 1."""
    rec = "{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': 2e-05, 'epoch': {ep}}}"
    first = [rec.format(loss=0.0, gn="nan", ep=0.01)]
    d = lines_diag(first)
    assert d.verdict == "data" and d.first_nan_line == 1, d.reason
    assert lines_diag(first * 3).verdict == "data"
    # a huge but finite first loss is training: then the 0.0 records are the bf16 trace
    huge = [rec.format(loss=512093.7, gn="nan", ep=0.0)] + [rec.format(loss=0.0, gn="nan", ep=0.0)] * 2
    assert lines_diag(huge).verdict == "no-scaler"
    # a window that opens mid-run (epoch 0.6) on 0.0 records shows neither: not "data"
    late = [rec.format(loss=0.0, gn="nan", ep=0.6)] * 2
    assert lines_diag(late).verdict == "unknown"


def test_log2_scales_below_the_float_range_are_named_by_their_exponent():
    lines = ["| lg_loss_scale | -2.4e+04 |", "| loss | nan |", "| step | 9e+04 |", "-" * 20]
    lines += [f"Found NaN, decreased lg_loss_scale to {-24001.5 - k:.3f}" for k in range(4)]
    d = lines_diag(lines)
    assert d.verdict == "overflow" and "(2^-24000 -> 2^-24004.5 in 4" in d.reason, d.reason
    assert " 0 -> 0 " not in d.reason


def test_precision_line_is_evidence_only_where_it_decides():
    cfg = "[2024-03-02 10:11:12,345] [INFO] [config.py:988:print]   bfloat16_enabled ............. True"
    ok = [f"{{'loss': {2.0 - k / 10}, 'grad_norm': 1.0}}" for k in range(5)]
    d = lines_diag([cfg] + ok + ["{'loss': nan, 'grad_norm': nan}"] * 2)
    assert (d.precision, d.verdict) == ("bf16", "no-scaler")
    assert d.evidence[0].line_no == 1
    d = lines_diag([cfg, "{'loss': 2.0, 'grad_norm': 1.0}", "{'loss': 1.9, 'grad_norm': 1.0}"])
    assert d.verdict == "healthy" and 1 not in [e.line_no for e in d.evidence]


# ---- the chain: every named check decides some log ----------------------------------------------
_HF = "{{'loss': {:.3f}, 'grad_norm': 0.5}}"
_HELD = Path(__file__).parent / "data"
#: for each check of the chain: lines it decides, or a held-out file it decides, and the verdict
CHAIN_CASES = {
    "min-scale-error": ("heldout7/icefall-amp_ZipVoice_17.log", "overflow"),
    "nan-before-backoffs": (["Epoch: [0 ] [  0/179] learning_rate: 0.000000 loss: nan"]
                            + [f"Found inf or nan, current scale is: {2.0 ** k}, decrease to: "
                               f"{2.0 ** k}*0.5" for k in range(10, 0, -1)], "data"),
    "failed-backoffs": ("heldout/apex_apex_715.log", "overflow"),
    "stuck-at-floor": ("heldout/deepspeed_DeepSpeed_697.log", "overflow"),
    "overflow-at-fixed-scale": ([line for k, x in enumerate(["11.7", "8.8", "8712.6"], 1)
                                 for line in ("overflow, drop step, loss scale adjust to 1024.0",
                                              f"Epoch 1/200, Step {k}00/3995, loss: {x}")],
                                "overflow"),
    "skipping-at-floor": ([_HF.format(2.0 - i / 100) for i in range(5)]
                          + ["[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, "
                             "reducing to 1"] + [_HF.format(1.9 - i / 100) for i in range(4)]
                          + ["Gradient overflow, skipping update"] * 3, "overflow"),
    "skipping-forever": ([f"[Rank 0] step={s}, skipped={max(0, s - 100)}, lr=[1e-05]"
                          for s in range(10, 400, 10)], "overflow"),
    "silent-skips-into-nan": ("heldout4/hf-trainer_LlamaFactory_4202.log", "overflow"),
    "overflow-skips-at-nan": (["step 3 loss=nan", "Gradient overflow, skipping update",
                               "step 4 loss=nan", "Gradient overflow, skipping update"], "unknown"),
    "nan-input": ([_HF.format(2.0 - i / 100) for i in range(5)]
                  + ["WARNING : Skipping sample 3 because of 512 NaN in input_tokens.",
                     _HF.format(1.9)], "data"),
    "nan-beside-finite-eval": ([f"epoch {k} train_loss=nan val_loss={1.0 / k:.4f}"
                                for k in range(1, 5)], "unknown"),
    "lasting-nan": ("heldout/lightning_RePlay_90.log", "no-scaler"),
    "scale-below-one": ("heldout3/guided-diffusion_SegDiff_20.log", "overflow"),
    "silent-scaler-stuck": ([f"{{'loss': 2.5, 'grad_norm': nan, 'epoch': {i / 100:.2f}}}"
                             for i in range(30)], "overflow"),
    "api-misuse": ([_HF.format(2.0), "ValueError: Attempting to unscale FP16 gradients."],
                   "unknown"),
    "nonfinite-grad-error": (["epoch 001 | loss 2.0 | num_updates 10",
                              "epoch 001 | loss 1.9 | num_updates 20",
                              "FloatingPointError: gradients are Nan/Inf"], "no-scaler"),
    "error-ends-log": ("heldout7/fairseq-fp32_fairseq_2089.log", "unknown"),
    "unheld-backoff": ("heldout/fairseq_NeuralSpeech_45.log", "unknown"),
    "bad-grad-jump-at-end": ("heldout3/ms-swift_ms-swift_2436.log", "unknown"),
    "bad-grad-only": (["{'loss': 2.3101, 'grad_norm': nan, 'epoch': 0.03}"], "unknown"),
    "lr-never-stepped": ([f"{{'loss': {x}, 'learning_rate': 0.0, 'epoch': {e}}}"
                          for x, e in (("2.5", 0.01), ("2.4", 0.02), ("2.45", 0.03))], "data"),
    "loss-became-zero": ([f"step {k} loss={x}" for k, x in enumerate(["1.5", "0", "0", "0"])],
                         "unknown"),
    "loss-explodes": ("heldout21/ppdet-explosion_PaddleDetection_3326.log", "data"),
    "loss-astronomical": ([f"episode: {k}, loss: {x}, mean_q: -3.0e10" for k, x in
                           enumerate(["3.6e23", "2.1e24", "1.2e26"], 81)], "unknown"),
    "eval-nan-only": ([f"epoch {k} train_loss={1.0 / k:.4f} val_loss=nan" for k in range(1, 6)],
                      "unknown"),
    "skips-only": ("heldout9/espnet2-tse_espnet_5065.log", "unknown"),
    "metrics-only": ([f"Iter: {k}00 PSNR: {20 + k / 10:.2f} IPS: 39.1" for k in range(1, 5)],
                     "healthy"),
    "no-records": (["Epoch 1: starting", "done"], "unknown"),
    "traceback-ends-log": ([_HF.format(2.0 - i / 100) for i in range(5)]
                           + ["Traceback (most recent call last):",
                              '  File "train.py", line 500, in main'], "unknown"),
    "healthy": ([_HF.format(2.0 - i / 100) for i in range(20)], "healthy"),
}


def test_the_chain_is_an_ordered_list_of_named_checks():
    from fampnb.diagnose._checks import CHECKS

    assert [name for name, _ in CHECKS] == list(CHAIN_CASES)
    assert CHECKS[-1][0] == "healthy"


@pytest.mark.parametrize("name", list(CHAIN_CASES))
def test_each_check_decides_its_case(name):
    source, verdict = CHAIN_CASES[name]
    d = diagnose(logs.parse(_HELD / source if isinstance(source, str) else source))
    assert (d.check, d.verdict) == (name, verdict), d.reason


def test_an_unknown_with_no_records_says_what_it_found_and_needs():
    d = diagnose(logs.parse(["Epoch 1: starting", "step 3 done", "grad_norm: 0.5"]))
    assert d.check == "no-records" and d.verdict == "unknown"
    assert "0 event(s) read" in d.reason and "roles seen: none" in d.reason
    assert "would need to show the loss per step" in d.reason
