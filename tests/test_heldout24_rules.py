"""The general rules heldout24's to heldout26's misses led to, each on lines of its own (not the
held-out files): a value that ends a sentence (``loss: 0.52.``), the end of a longer value left
after a ``nan`` that overwrote it (``Loss: nan.08``), TensorFlow's numeric-check errors, a step's
fields on lines of their own (``(Step: 100) train_mel_loss_before = nan.``), skipped steps with
no loss record, guided-diffusion's fp32 tables and a traceback that ends the log."""

from __future__ import annotations

import pytest
from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import role


def _records(lines: list[str]) -> list[tuple[str, int, float | None]]:
    return [(e.kind, e.step, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


# ---- how values are written ------------------------------------------------------------------
def test_a_value_may_end_a_sentence() -> None:
    assert _records(["Epoch 3: Estimated average loss: 0.52."]) == [("loss", 1, 0.52)]
    assert _records(["(Step: 100) train_loss = 0.25. (lr 1e-3)"]) == [("loss", 100, 0.25)]
    # a version or a file name is still no value
    assert _records(["loss 1.2.3 installed", "saved loss 0.5.ckpt"]) == []


def test_a_nan_keeps_the_end_of_the_value_it_overwrote() -> None:
    # ``print(..., end="\r")``: the shorter ``nan`` leaves the last characters of ``0.1208``
    rec = _records(["Training step: 4/10800. Played games: 1. Loss: nan.08",
                    "Training step: 5/10800. Loss: -inf12"])
    assert [(k, s) for k, s, _ in rec] == [("nan", 4), ("nan", 5)]
    assert rec[1][2] == float("-inf")
    assert _records(["Loss: nan.png written"]) == []


def test_a_loss_component_may_carry_a_qualifier_after_loss() -> None:
    assert role("mel_loss_before") == "loss" and role("train_mel_loss_after") == "loss"
    assert role("d_loss_real") == "loss"
    assert role("mel_loss_scale") is None and role("kl_loss_weight") is None


# ---- TensorFlow's numeric checks ----------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "Gradient for resnet/bn/gamma:0 is NaN : Tensor had NaN values",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Nan in summary histogram for: "
    "clone_0/BatchNorm/moving_variance",
    "E tensorflow/core/kernels/check_numerics_op.cc:185] abnormal_detected_host = {1, 0} Found Inf "
    "or NaN global norm.",
    "InvalidArgumentError: logits : Tensor had Inf and NaN values",
])
def test_tensorflow_numeric_check_errors_are_a_nan(line: str) -> None:
    ev = [e for e in logs.parse(["INFO:tensorflow:global_step/sec: 2.2", line])
          if e.kind == "nan"]
    assert [e.rule for e in ev] == ["tf-check-numerics"]
    # a NaN that ends the run after finite records is not healthy
    d = _both([f"Total loss is :[{5.1 - k / 10:.4f}]" for k in range(3)] + [line])
    assert d.verdict != "healthy" and d.first_nan_line is not None, d.reason
    # alone, the message does not show when the NaN began
    assert _both([line]).verdict == "unknown"


# ---- one step's fields on lines of their own ---------------------------------------------------
def test_a_finite_field_after_a_nan_of_the_same_step_does_not_clear_it() -> None:
    step = "2020-09-10 11:52:14,449 (base_trainer:831) INFO: (Step: {s}) train_{k}_loss = {v}."
    lines = [step.format(s=s, k=k, v=v) for s in (95000, 95200)
             for k, v in (("duration", 0.04), ("f0", 0.07), ("mel", 0.3))]
    lines += [step.format(s=95400, k=k, v=v)
              for k, v in (("duration", 0.035), ("mel", "nan"), ("f0", 0.066))]
    d = _both(lines)
    assert d.verdict != "healthy" and d.first_nan_line is not None, d.reason
    # a later step's finite record does clear it: the NaN did not last
    d = _both(lines + [step.format(s=95600, k="mel", v=0.3)])
    assert d.verdict == "healthy", d.reason


# ---- skipped steps and no loss ---------------------------------------------------------------
def test_skipped_steps_without_a_loss_record_are_not_healthy() -> None:
    lines = ["[node7:0/6] 2023-03-27 16:10:37,131 (trainer:663) WARNING: The grad norm is nan. "
             "Skipping updating the model."] * 6
    d = _both(lines)
    assert (d.check, d.verdict) == ("skips-only", "unknown"), d.reason
    # with finite loss records around them, they are skipped steps of a healthy run
    recs = [f"{{'loss': {2.0 - k / 10:.2f}, 'grad_norm': 0.5}}" for k in range(6)]
    assert _both(recs[:3] + lines[:1] + recs[3:]).verdict == "healthy"


# ---- guided-diffusion's table ----------------------------------------------------------------
def _table(loss: str, step: int, fp16: bool) -> list[str]:
    rows = [("grad_norm", loss), ("loss", loss), ("param_norm", "312"), ("samples", "1.2e+05"),
            ("step", f"{step}")] + ([("lg_loss_scale", "15.2")] if fp16 else [])
    return (["-" * 25] + [f"| {k:<10} | {v:<8} |" for k, v in sorted(rows)] + ["-" * 25])


def test_a_guided_diffusion_table_without_its_loss_scale_row_is_fp32() -> None:
    lines = [x for s in range(100, 600, 100) for x in _table("0.05", s, False)]
    lines += _table("nan", 600, False)
    d = _both(lines)
    assert d.precision == "fp32" and d.verdict == "no-scaler", d.reason
    fp16 = [x for s in range(100, 600, 100) for x in _table("0.05", s, True)]
    assert _both(fp16 + _table("nan", 600, True)).precision != "fp32"


# ---- a traceback at the end ------------------------------------------------------------------
_RECS = [f"epoch 1 | step {k} | loss {2.0 - k / 100:.3f}" for k in range(1, 6)]
_TRACE = ["Traceback (most recent call last):", '  File "train.py", line 500, in main',
          "    scaled_loss.backward()"]


def test_a_traceback_after_the_last_record_is_not_healthy() -> None:
    d = _both(_RECS + _TRACE)
    assert (d.check, d.verdict) == ("traceback-ends-log", "unknown"), d.reason
    # Ctrl-C is the reader's, not the run's: healthy
    assert _both(_RECS + _TRACE + ["KeyboardInterrupt"]).verdict == "healthy"
    # a traceback (a warning's, a worker's) with records after it: the run went on
    assert _both(_RECS[:2] + _TRACE + _RECS[2:]).verdict == "healthy"


# ---- heldout27 ---------------------------------------------------------------------------------
def test_a_batch_counter_is_the_step() -> None:
    assert _records(["Batch 706/56191 - Loss: 2.5", "batch: 5/10 loss 1.5"]) == [
        ("loss", 706, 2.5), ("loss", 5, 1.5)]
    # NaN on every line from batch 706 on: the window does not show the start of training
    d = _both([f"Batch {k}/56191 - Loss: nan" for k in range(706, 719)])
    assert d.first_nan_step == 706 and d.verdict == "unknown", d.reason


def test_a_loss_of_exactly_zero_on_every_record_is_not_healthy_even_once() -> None:
    # HF Trainer's NaN filter logs the first window of NaN losses as 0.0
    d = _both(["{'loss': 0.0, 'learning_rate': 3.3e-07, 'epoch': 0.01}"])
    assert (d.check, d.verdict) == ("loss-became-zero", "unknown"), d.reason
    # a perplexity printed as 0 is a meter that logged nothing, not a loss of 0
    d = _both(["| INFO | train | epoch 001 | loss None | nll_loss None | ppl 0 | wps 59093 | "
               "num_updates None | gnorm None | loss_scale None"])
    assert d.verdict == "healthy", d.reason


# ---- heldout30 ---------------------------------------------------------------------------------
def _hf(loss: str, lr: str, epoch: float) -> str:
    return f"{{'loss': {loss}, 'learning_rate': {lr}, 'epoch': {epoch}}}"


def test_a_learning_rate_that_never_leaves_zero_means_every_step_was_skipped() -> None:
    d = _both([_hf("243687.9", "0.0", 0.0), _hf("141.6975", "0.0", 0.01)])
    assert (d.check, d.verdict) == ("lr-never-stepped", "data"), d.reason
    # a warm-up from 0 that starts: the scheduler steps, the optimizer ran
    d = _both([_hf("2.5", "0.0", 0.0), _hf("2.4", "0.0", 0.01), _hf("2.3", "1e-06", 0.02),
               _hf("2.2", "2e-06", 0.03)])
    assert d.verdict == "healthy", d.reason
    # a schedule that decays to 0 at its last record
    assert _both([_hf("2.5", "2e-05", 0.9), _hf("2.4", "0.0", 1.0)]).verdict == "healthy"
    # bf16 has no scaler to skip steps: a zero learning rate there is the configuration's
    lines = ["--bf16 True", _hf("2.5", "0.0", 0.0), _hf("2.4", "0.0", 0.01)]
    assert _both(lines).check != "lr-never-stepped"


def test_a_loss_never_zero_before_that_ends_on_zero_is_not_healthy() -> None:
    lines = [_hf(x, "1.9e-05", 0.52) for x in ("1.0645", "1.157", "1.1938")] + [
        _hf("0.0", "1.89e-05", 0.53)]
    assert _both(lines).check == "loss-became-zero"
    # a loss that has been 0 before and came back (DPO's saturating objective): healthy
    dpo = [_hf(x, "7e-05", 0.1) for x in ("0.69", "0.0", "2.504", "0.3", "0.0")]
    assert _both(dpo).verdict == "healthy"


# ---- heldout32 ---------------------------------------------------------------------------------
def test_a_failed_assertion_that_received_a_nan_is_a_nan() -> None:
    rec = [f"Epoch: [3] [{k}/922] learning_rate: 0.000404 loss: {9 - k / 100:.4f}"
           for k in (100, 120)]
    line = ("Error: /paddle/phi/kernels/gpu/bce_loss_kernel.cu:42 Assertion `(x >= 0) && (x <= one)` "
            "failed. Input is expected to be within the interval [0, 1], but recieved nan.")
    d = _both(rec + [line])
    assert d.verdict != "healthy" and d.first_nan_line == 3, d.reason
    # an assertion about something else is no NaN
    assert _both(rec + ["Assertion `idx < n` failed. got 7"]).verdict == "healthy"


def test_overflows_at_a_fixed_scale_follow_a_nan_from_the_first_record() -> None:
    warn = "2023-11-28 08:21:16,093 [WARNING] overflow, still update, loss scale adjust to 1024.0"
    recs = [f"2023-11-28 08:21:16,219 [INFO] Epoch 1/500, Step {s}/1048, loss: {{}}, cur_lr: 0.09"
            for s in (100, 200, 300, 400)]
    nan_run = [x for r in recs for x in (warn, r.format("nan"))]
    assert _both(nan_run).check != "overflow-at-fixed-scale"
    finite_run = [x for r, v in zip(recs, ("11.7", "8.8", "9.1", "8712.6")) for x in (warn, r.format(v))]
    assert _both(finite_run).check == "overflow-at-fixed-scale"


# ---- heldout34 ---------------------------------------------------------------------------------
_MEG = ("iteration {s}/  286102 | lm loss: 2.795609E+00 | loss scale: 32768.0 | grad norm: 0.207 | "
        "number of skipped iterations:   0 | number of nan iterations:   0 |")
_DS_HYST = ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, but hysteresis "
            "is 2. Reducing hysteresis to 1")
_DS_BACK = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, reducing to 16384"


def test_a_stepless_backoff_after_a_record_far_into_the_run_is_no_calibration() -> None:
    d = _both([_MEG.format(s=2090), _DS_HYST, _DS_BACK])
    assert (d.check, d.verdict) == ("unheld-backoff", "unknown"), d.reason
    # at the start of the run it is the scaler's calibration
    assert _both([_MEG.format(s=3), _DS_HYST, _DS_BACK]).verdict == "healthy"


def test_an_exit_on_overflows_in_a_row_is_overflow() -> None:
    d = _both(["Traceback (most recent call last):", '  File "megatron/utils.py", line 353, in check',
               "    raise Exception(",
               "Exception: Skipped 50 iterations in a row due to Overflow - Exiting training."])
    assert (d.check, d.verdict) == ("min-scale-error", "overflow"), d.reason
