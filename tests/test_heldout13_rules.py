"""The general rules heldout13's and heldout14's misses led to, each on lines of its own (not the
held-out files): an overflow record with the scale already at 0, a loss of exactly 0 on every
record, a step counter in parentheses after an epoch counter (``Epoch:[1/3](300/5544)``), and a NaN
validation loss beside a finite training loss."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


# ---- one overflow record at a scale of 0 -------------------------------------------------------
def _ds(before: str, after: str) -> str:
    return (f"[2024-03-04 05:06:07,890] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
            f"Rank 0 Skipping step. Attempted loss scale: {before}, reducing to {after}")


def test_one_overflow_at_a_float_scale_of_zero_is_a_collapse() -> None:
    d = _both([_ds("0.0", "0.0")])
    assert d.verdict == "overflow", d.reason
    assert "stuck at its floor" in d.reason and "halved to nothing" in d.reason
    # two records at an int()-printed 0 (a scale somewhere below 1): stuck, as before
    d = _both([_ds("0", "0"), _ds("0", "0")])
    assert "stuck at its floor" in d.reason and "printed as an integer" in d.reason


def test_one_overflow_at_an_integer_zero_or_at_one_is_not_enough() -> None:
    # int() of a scale below 1, or DeepSpeed's default floor: once may be followed by recovery
    for value in ("0", "1"):
        assert "stuck" not in _both([_ds(value, value)]).reason


# ---- a loss of exactly 0 on every record -------------------------------------------------------
def _hf(loss: str, epoch: float) -> str:
    return f"{{'loss': {loss}, 'learning_rate': 2e-05, 'epoch': {epoch}}}"


def test_zero_on_every_record_is_not_healthy() -> None:
    lines = [_hf("0.0", 0.01 * i) for i in range(1, 6)]
    d = _both(lines)
    assert d.verdict == "unknown", d.reason
    assert "every finite record, from the first one at line 1" in d.reason


def test_zero_on_every_record_with_nan_evaluations_between() -> None:
    lines = [_hf("0.0", 0.01), "{'eval_loss': nan, 'eval_runtime': 12.5, 'epoch': 0.01}"]
    lines += [_hf("0.0", 0.02) for _ in range(4)]
    assert _both(lines).verdict not in ("healthy", "data")


def test_zero_on_every_record_is_not_healthy_and_rounded_zeros_do_not_count() -> None:
    # (heldout27: HF Trainer's NaN filter logs a first window of NaN losses as 0.0, so a loss
    # of exactly 0 on every record is not healthy from the first record on)
    assert _both([_hf("0.0", 0.01), _hf("0.0", 0.02)]).check == "loss-became-zero"
    rounded = [f"step {i} loss 0.0000" for i in range(1, 8)]     # a small loss printed with 4 decimals
    assert _both(rounded).verdict == "healthy"


# ---- ``Epoch:[e/E](s/S)`` --------------------------------------------------------------------
def test_a_step_counter_in_parentheses_after_the_epoch() -> None:
    lines = [f"Epoch:[2/3]({s}/500) loss:{'nan' if s > 300 else '2.5'} lr:0.0001"
             for s in (100, 200, 300, 400)]
    evs = [e for e in logs.parse(lines) if e.kind in ("loss", "nan")]
    # the step within epoch 2 of 500-step epochs: (2 - 1) * 500 + s
    assert [(e.step, e.explicit) for e in evs] == [(600, True), (700, True), (800, True), (900, True)]
    assert _both(lines).verdict != "data"


def test_a_nan_in_the_first_steps_of_epoch_one_is_still_the_start() -> None:
    lines = [f"Epoch:[1/3]({s}/500) loss:nan lr:0.0001" for s in (1, 2, 3)]
    assert _both(lines).verdict == "data"


# ---- (heldout14) a NaN validation loss beside a finite training loss ---------------------------
def _epoch(k: int, val: str) -> str:
    return (f"Epoch: {k:04d} train_loss= {0.5 / k:.5f} train_acc= 0.51 val_loss= {val} val_acc= 0.50 "
            "time= 8.1")


def test_nan_validation_beside_finite_training_is_its_own_finding() -> None:
    lines = [_epoch(k, "nan") for k in range(1, 9)]
    evs = [e for e in logs.parse(lines) if e.kind in ("loss", "nan")]
    assert [(e.kind, e.rule) for e in evs] == [("loss", "loss-eval-nan")] * 8   # training is finite
    d = _both(lines)
    assert (d.verdict, d.check) == ("unknown", "eval-nan-only"), d.reason
    assert "NaN on 8 record(s) beside 8 finite training record(s)" in d.reason and "evaluation" in d.reason


def test_a_rare_nan_validation_or_a_training_nan_is_left_to_the_other_checks() -> None:
    few = [_epoch(k, "nan" if k == 5 else "0.61") for k in range(1, 13)]
    assert _both(few).check != "eval-nan-only"
    train_nan = [_epoch(k, "nan") for k in range(1, 5)] + [
        f"Epoch: {k:04d} train_loss= nan train_acc= 0.1 val_loss= nan" for k in range(5, 9)]
    assert _both(train_nan).check != "eval-nan-only"
