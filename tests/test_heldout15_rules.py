"""The general rules heldout15's and heldout16's misses led to, each on lines of its own (not the
held-out files): Marian's records and cost-scaling messages, MindSpore's overflow messages, a
leading ``[N]`` round counter, Trax's ``name | value`` and the GluonCV/Trax loss names, records of
an evaluation kept apart from training, a step named on a line of its own, tiny epochs, every step
skipped at the floor, calibration from the scale the first update prints, and a failed NaN check
in a traceback."""

from __future__ import annotations

import io
import json

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose


def _records(lines: list[str]) -> list[tuple[str, int, bool, float | None]]:
    return [(e.kind, e.step, e.explicit, e.loss) for e in logs.parse(lines)
            if e.kind in ("loss", "nan")]


# ---- Marian ---------------------------------------------------------------------------------
def _marian(up: int, cost: str) -> str:
    return (f"[2022-05-09 06:45:23] Ep. 8 : Up. {up} : Sen. 94,495,934 : Cost {cost} : "
            f"Time 149.83s : 144461.61 words/s : gNorm 0.6068 : L.r. 5.1856e-05")


def test_marian_records_name_their_update_and_cost() -> None:
    got = _records([_marian(535500, "2.46588373"), _marian(536000, "nan")])
    assert [r[:3] for r in got] == [("loss", 535500, True), ("nan", 536000, True)]
    assert got[0][3] == 2.46588373
    d = _both([_marian(100 * k, f"{3 - k / 10:.4f}") for k in range(1, 8)]
              + [_marian(800, "nan"), _marian(900, "nan")])
    assert d.framework == "marian" and d.first_nan_step == 800
    # Marian's cost scaling logs at the debug level: no scaler lines prove nothing
    assert d.verdict == "unknown", d.reason


def test_a_time_cost_is_no_loss() -> None:
    assert _records(["epoch 3 time cost 35.2 s", "batch_cost: 0.41 s, reader_cost: 0.001 s"]) == []


def test_marian_cost_scaling_messages_are_backoffs_growths_and_the_floor() -> None:
    ev = list(logs.parse([
        "NaN/Inf percentage 0.20 in 10 gradient updates, reducing cost-scaling factor to 16384",
        "Seen NaN/Inf after 3 gradient updates. Reduced cost-scaling factor to 8192",
        "No NaN/Inf after 2000 gradient updates. Increasing cost-scaling factor to 16384"]))
    assert [(e.kind, e.scale_after, e.framework) for e in ev] == [
        ("backoff", 16384.0, "marian"), ("backoff", 8192.0, "marian"), ("growth", 16384.0, "marian")]
    d = _both([_marian(535500, "nan"), _marian(536000, "2.4"), _marian(536500, "nan"),
               "[2022-05-09 06:55:01] NaN/Inf percentage 0.70 in 10 gradient updates, but "
               "cost-scaling factor 7.62939e-06 is already at minimum"])
    assert d.verdict == "overflow" and d.check == "stuck-at-floor", d.reason
    assert "1 overflow record (line 4)" in d.reason


# ---- MindSpore --------------------------------------------------------------------------------
def _ms(loss: str, k: int, word: str = "still update", scale: str = "1024.0") -> list[str]:
    return [f"2024-12-25 09:58:34,125 [WARNING] overflow, {word}, loss scale adjust to {scale}",
            f"2024-12-25 09:58:42,787 [INFO] Epoch 1/200, Step {k}00/3995, loss: {loss}"]


def test_overflow_again_and_again_at_one_scale_is_a_failure() -> None:
    lines = _ms("11.7", 1) + _ms("8.8", 2) + _ms("8712.6", 3) + _ms("15806.4", 4)
    d = _both(lines)
    assert (d.verdict, d.check) == ("overflow", "overflow-at-fixed-scale"), d.reason
    assert "4 overflow records in a row" in d.reason and "applies the overflowed steps" in d.reason
    # twice is not yet a pattern; once at the end leaves the run as it was
    assert _both(_ms("11.7", 1) + _ms("8.8", 2)).check != "overflow-at-fixed-scale"
    ok = [f"Epoch {e}/300, Step 4/4, loss: {0.28 - e / 1000:.4f}" for e in range(30, 36)]
    assert _both(ok + _ms("0.27", 4)[:1]).verdict in ("healthy", "unknown")


def test_a_falling_printed_scale_is_a_backoff_not_a_fixed_scale() -> None:
    lines = []
    for k, s in enumerate(["1024.0", "512.0", "256.0", "128.0"], 1):
        lines += _ms("2.0", k, "drop step", s)
    d = diagnose(logs.parse(lines))
    assert d.check != "overflow-at-fixed-scale" and d.backoffs == 3


def test_an_overflow_message_before_a_nan_at_the_start_is_no_plain_data_case() -> None:
    d = _both(["overflow, still update, loss scale adjust to 1024.0",
               "2025-04-10 10:09:58,322 [INFO] Epoch 1/300, Step 64/64, loss: nan, lbox: nan"])
    assert (d.verdict, d.check) == ("unknown", "overflow-skips-at-nan"), d.reason


# ---- counters and names ---------------------------------------------------------------------
def test_a_leading_round_counter_is_the_step() -> None:
    lines = [f"[{k}]\ttrain-logloss:{0.5 - k / 1000:.6f}\tvalid-logloss:0.6" for k in range(160, 200, 10)]
    lines += [f"[{k}]\ttrain-logloss:nan\tvalid-logloss:nan" for k in range(200, 240, 10)]
    d = _both(lines)
    assert d.first_nan_step == 200 and d.verdict == "no-scaler", d.reason
    # a bracketed date or a rank tag is no round counter
    assert _records(["[2024-01-02] loss: 2.0"])[0][2] is False


def test_trax_and_gluoncv_loss_names() -> None:
    assert _records(["Step  11000: train CrossEntropyLossWithLogSoftmax |  nan"])[0][:3] == (
        "nan", 11000, True)
    ev = _records(["INFO:root:[Epoch 0][Batch 1], Speed: 24.2 samples/sec, CrossEntropy=2.91, "
                   "SmoothL1=nan"])
    assert ev[0][0] == "nan"


def test_a_counter_after_a_key_is_no_value_of_it() -> None:
    # ``iter 0/88`` is the step counter within epoch 2 (step 88), not a key ``iter`` = 0
    lines = ["[session 1][epoch  1][iter    0/  88] loss: 4.7430, lr: 1.00e-04",
             "[session 1][epoch  2][iter    0/  88] loss: nan, lr: 1.00e-04"]
    assert [r[1] for r in _records(lines)] == [0, 88]
    # tiny epochs: the step, which counts the epochs before, says this is the start
    assert _both(lines).verdict == "data"


# ---- evaluation records -----------------------------------------------------------------------
def _hf(loss: float, epoch: float) -> str:
    return f"{{'loss': {loss}, 'learning_rate': 0.002, 'epoch': {epoch}}}"


def test_an_evaluation_nan_beside_finite_training_is_not_healthy() -> None:
    lines = [_hf(1.2 + k / 10, k / 10) for k in range(1, 8)]
    lines.append("{'eval_loss': nan, 'eval_wer': 100.0, 'eval_runtime': 22.4, 'epoch': 1.0}")
    lines.append(_hf(2.4, 1.07))
    d = _both(lines)
    assert (d.verdict, d.check) == ("unknown", "eval-nan-only"), d.reason
    # the evaluation's record is not a training record
    assert d.first_nan_step is None
    # a finite evaluation elsewhere: one NaN evaluation decides nothing
    assert _both(lines[:4] + ["{'eval_loss': 0.9, 'epoch': 0.4}"] + lines[4:]).verdict == "healthy"


def test_evaluation_objects_of_trainer_state_are_kept_apart() -> None:
    hist = []
    for step, loss in ((500, 14.84), (1000, 1.2), (1500, 1.1)):
        hist += [{"epoch": step / 80, "learning_rate": 3e-5, "loss": loss, "step": step},
                 {"epoch": step / 80, "eval_loss": float("nan"), "eval_wer": 1.0, "step": step}]
    text = json.dumps({"global_step": 1500, "log_history": hist}, indent=2)
    d = diagnose(logs.parse(io.StringIO(text)))
    assert (d.verdict, d.check) == ("unknown", "eval-nan-only"), d.reason


def test_a_finite_evaluation_before_a_training_nan_shows_training_happened() -> None:
    lines = ["| epoch 001 | valid on 'valid' subset | valid loss 11.74 | valid ppl 3421.0"]
    for e in range(2, 6):
        lines += [f"| epoch 00{e} | train loss nan | train ppl nan | lr 0.25 | gnorm nan",
                  f"| epoch 00{e} | valid on 'valid' subset | valid loss nan | valid ppl nan"]
    assert _both(lines).verdict == "no-scaler"
    # without it the first training record is the NaN: nothing shows training before it
    assert _both(lines[1:]).verdict != "no-scaler"


def test_an_informer_summary_with_nan_evaluations() -> None:
    d = _both(["Epoch: 1, Steps: 35 | Train Loss: 1.0262758 Vali Loss: nan Test Loss: nan"])
    assert (d.verdict, d.check) == ("unknown", "eval-nan-only"), d.reason


# ---- a step named alone -------------------------------------------------------------------------
def test_a_step_on_a_line_of_its_own_is_the_next_records_step() -> None:
    d = _both(["wandb: Run summary:", "wandb:      epoch 0", "wandb:       step 458",
               "wandb: train loss nan"])
    assert d.first_nan_step == 458 and d.verdict != "data", d.reason
    # five lines later it no longer is
    assert _records(["step 458", "x", "y", "z", "w", "v", "loss nan"])[0][2] is False


# ---- the floor, calibration, NaN checks -------------------------------------------------------
def _ds_counter(step: int) -> str:
    return (f"[2024-01-17 10:10:24,477] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, "
            f"skipped={step}, lr=[0.0001], mom=[(0.9, 0.95)]")


def test_every_step_skipped_with_the_scale_at_its_floor() -> None:
    lines = [_ds_counter(16),
             "[2024-01-17 10:10:25,080] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
             "Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1", _ds_counter(17)]
    d = _both(lines)
    assert (d.verdict, d.check) == ("overflow", "skipping-at-floor"), d.reason
    # a few steps are too few to say "every step"
    short = [_ds_counter(4), lines[1], _ds_counter(5)]
    assert _both(short).check != "skipping-at-floor"


def _fs(update: int, loss: float, scale: str) -> str:
    return (f'2021-03-08 12:31:36 | INFO | train_inner | {{"epoch": 1, "update": 0.0, "loss": '
            f'"{loss}", "num_updates": "{update}", "gnorm": "20.7", "loss_scale": "{scale}"}}')


def test_calibration_from_the_scale_the_first_update_prints() -> None:
    note = "2021-03-08 12:33:12 | INFO | fairseq.trainer | NOTE: gradient overflow detected, " \
           "ignoring gradient, setting loss scale to: {}"
    lines = [_fs(1, 16.4, "4"), _fs(2, 16.4, "4"), note.format("2.0"), note.format("1.0")]
    lines += [_fs(k, 18.0 - k / 10, "1") for k in range(3, 11)]
    assert _both(lines).verdict == "healthy"
    # the same halvings from a scale printed mid-run are no calibration
    late = [_fs(k, 16.4, "4") for k in (500, 501)] + lines[2:4]
    late += [_fs(k, 18.0, "1") for k in range(502, 510)]
    assert _both(late).verdict == "overflow"


TRACEBACK = """\
iter: 100 / 70000, total loss: 1.238060
iter: 120 / 70000, total loss: 1.312589
Traceback (most recent call last):
  File "./lib/nets/network.py", line 198, in _add_losses
    {check}
AssertionError"""


def test_a_failed_nan_check_in_a_traceback_is_a_nan() -> None:
    for check in ("assert (rpn_bbox_pred==rpn_bbox_pred).all()", "assert not torch.isnan(loss)",
                  "assert torch.isfinite(grad).all()"):
        lines = TRACEBACK.format(check=check).splitlines()
        d = _both(lines)
        assert d.first_nan_line == 6 and d.verdict != "healthy", (check, d.reason)
    # any other assertion is no NaN
    other = TRACEBACK.format(check="assert len(boxes) == len(labels)").splitlines()
    assert _both(other).first_nan_line is None


def test_a_table_row_with_a_nan_validation_beside_finite_training() -> None:
    # fastai's progress table: every epoch's valid_loss is nan, the train_loss finite
    lines = ["epoch     train_loss  valid_loss  accuracy  time    "]
    lines += [f"{e:<10}{0.9 - e / 10:<12.6f}nan         0.100000  00:30     " for e in range(4)]
    d = _both(lines)
    assert (d.verdict, d.check) == ("unknown", "eval-nan-only"), d.reason
    finite = [ln.replace("nan        ", "0.650000   ") for ln in lines]
    assert _both(finite).verdict == "healthy"


def test_paddle_grad_scaler_decreases_are_backoffs() -> None:
    ev = [e for e in logs.parse([
        "Found inf or nan, current scale is: 32768.0, decrease to: 32768.0*0.5",
        "Found inf or nan, current scale is: 16384.0, decrease to: 16384.0*0.5"])]
    assert [(e.kind, e.scale_before, e.scale_after, e.framework) for e in ev] == [
        ("backoff", 32768.0, 16384.0, "paddle"), ("backoff", 16384.0, 8192.0, "paddle")]


def test_a_line_tagged_as_an_evaluation_is_the_evaluations_record() -> None:
    cv = [f"Epoch 0 [CV] progress {k}/341 loss nan polyphone_loss 1.02" for k in range(290, 350, 10)]
    train = [f"Epoch 1 [TRAIN] progress {k}/2754 loss {0.6 - k / 1e4:.4f}" for k in range(0, 60, 10)]
    d = _both(cv + train)
    assert d.first_nan_line is None and d.check == "eval-nan-only", d.reason
    wenet = [f"2025-02-20 00:46:13,777 DEBUG CV Batch 7/{k} loss nan rank 0" for k in (10, 20)]
    assert {e.rule for e in logs.parse(wenet)} == {"eval-loss"}
    # a train tag, a validation batch size: no evaluation
    assert {e.kind for e in logs.parse(["DEBUG TRAIN Batch 7/100 loss nan lr 0.00055",
                                        "validation batch size 32 loss 0.5"])} == {"nan", "loss"}


def test_icefall_keeps_its_scale_near_one_on_purpose() -> None:
    rec = ("2023-04-18 21:26:04,349 INFO [finetune.py:966] (3/4) Epoch 0, batch {b}, loss[loss={x}, "
           "simple_loss=1.08, pruned_loss=0.77, over 11669.00 frames. ], tot_loss[loss=1.3, "
           "simple_loss=2.379, pruned_loss=0.9, over 2150353.73 frames. ], batch size: 361, lr: "
           "5.00e-05, grad_scale: {s}")
    d = _both([rec.format(b=500 + 50 * k, x=1.2 - k / 100, s="0.25") for k in range(4)])
    assert d.framework == "icefall" and d.verdict == "healthy", d.reason
    # below its own "small" (0.01), one record is enough, as for any other scaler below 1
    d = _both([rec.format(b=500, x=1.2, s="0.001")])
    assert (d.verdict, d.check) == ("overflow", "scale-below-one"), d.reason
    assert _both([rec.format(b=500, x=1.2, s="0.25")]).verdict == "healthy"


# ---- a block of one-field lines is one record ------------------------------------------------
RSL = """\
                     Learning iteration {it}/10000

                       Computation: 14963 steps/s (collection: 6.407s, learning 0.163s)
               Value function loss: {v}
                    Surrogate loss: 0.0000
             Mean action noise std: 0.56
                 Mean total reward: 25.66
Episode_Reward/track_lin_vel_xy_exp: 1.2263
"""


def test_a_block_of_one_field_lines_is_one_record() -> None:
    lines = "".join(RSL.format(it=k, v=f"{0.5 - k / 1e5:.4f}") for k in range(8385, 8391))
    lines += RSL.format(it=8391, v="inf")
    d = _both(lines.splitlines())
    # the block's record is NaN (inf) at iteration 8391: no finite "Surrogate loss" record after it
    assert d.first_nan_step == 8391 and d.verdict in ("no-scaler", "unknown"), d.reason
    assert [e.kind for e in logs.parse(RSL.format(it=1, v="inf").splitlines())
            if e.kind in ("loss", "nan")] == ["nan"]


COQUI = """\
   --> STEP: 395/405 -- GLOBAL_STEP: {g}
     | > loss_disc: {d}  ({d})
     | > amp_scaler: {s}  ({s})
     | > loss_gen: 2.1  (2.2)
     | > loss_mel: 21.53698  (21.33673)
     | > step_time: 0.75520  (0.56876)
"""


def test_coqui_blocks_with_their_global_step_and_scale() -> None:
    ev = [e for e in logs.parse(COQUI.format(g=246025, d="nan", s="0.00000").splitlines())
          if e.kind in ("loss", "nan")]
    assert [(e.kind, e.step, e.explicit, e.scale_after) for e in ev] == [("nan", 246025, True, 0.0)]
    ok = "".join(COQUI.format(g=246000 + k, d="1.5", s="512.00000") for k in range(5))
    d = _both((ok + COQUI.format(g=246025, d="nan", s="0.00000")).splitlines())
    assert d.verdict == "overflow", d.reason
    # the fast reader picks the whole block around a NaN field, wherever it sits in the block
    mid = COQUI.format(g=7, d="1.5", s="512.00000").replace("loss_gen: 2.1  (2.2)", "loss_gen: nan  (nan)")
    _both((ok + mid).splitlines())


def test_an_unindented_field_line_stays_a_record_of_its_own() -> None:
    assert [e.kind for e in logs.parse(["loss: 2.0", "loss: nan"])] == ["loss", "nan"]


# ---- heldout19: a temperature is no loss scale, CycleGAN's losses ------------------------------
def test_a_scale_that_is_part_of_a_longer_name_is_no_loss_scale() -> None:
    lines = [f"2023-06-29,15:44:40 | INFO | Train Epoch: 0 [{64 + 6400 * k:>6}/109468 ({3 * k}%)] "
             f"Loss: {1.07 - k / 20:.4f} ({1.07 - k / 40:.4f}) LR: 0.000001 "
             f"Logit Scale: {100 - k / 200:.3f} - V4"
             for k in range(7)]
    d = _both(lines)
    assert d.verdict == "healthy" and d.backoffs == 0, d.reason
    # the loss scale under its own names still is one
    assert [e.scale_after for e in logs.parse(["step 1 loss 2.0 loss scale 1024",
                                               "step 2 loss 2.0 dynamic loss scale: 512",
                                               "step 3 loss 2.0 scale: 256"])] == [1024.0, 512.0, 256.0]


def test_cyclegan_prints_its_losses_without_the_word() -> None:
    rec = ("(epoch: {e}, iters: {i}, time: 0.064, data: 0.001) G_GAN: {g} D_real: 0.000 "
           "D_fake: 0.000 G_L1: 7.467 ")
    ev = [e for e in logs.parse([rec.format(e=1, i=300, g="10.084"), rec.format(e=1, i=400, g="nan")])]
    assert [(e.kind, e.epoch) for e in ev] == [("loss", 1), ("nan", 1)]
    ok = [rec.format(e=e, i=i, g=f"{9.5 + i / 1000:.3f}") for e in range(3) for i in (100, 200, 300)]
    assert _both(ok).verdict == "healthy"


def test_darknet_names_no_value_on_its_iteration_line() -> None:
    lines = [f"{k}: {2.5 - k / 100:.6f}, {2.6 - k / 100:.6f} avg, 0.001000 rate, 3.21 seconds, "
             f"{64 * k} images" for k in range(1, 9)]
    lines += [f"\n {k}: -nan, -nan avg loss, 0.001000 rate, 3.2 seconds, {64 * k} images, "
              f"12.3 hours left" for k in range(200, 204)]
    ev = [e for e in logs.parse("\n".join(lines).splitlines()) if e.kind in ("loss", "nan")]
    assert [(e.kind, e.step) for e in ev][7:9] == [("loss", 8), ("nan", 200)]
    d = _both("\n".join(lines).splitlines())
    assert d.first_nan_step == 200 and d.verdict != "data", d.reason
    # the per-layer averages over zero boxes (``count: 0``) are no loss
    region = "Region 82 Avg IOU: -nan, Class: -nan, Obj: -nan, No Obj: 0.000001, .5R: -nan,  count: 0"
    assert _both(lines[:8] + [region, lines[0].replace("1:", "9:", 1)]).verdict == "healthy"
