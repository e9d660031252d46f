"""The general rules heldout58's to heldout68's first runs led to, each on lines of its own (not the
held-out files): training and evaluation values named bare (``train=... valid=...``), a separation
objective (SI-SNR, SI-SDR) as the loss, a user's check saying ``NaN detected in ...``, an evaluation
line that starts ``Validation of Epoch``, fields that end in ``...`` and a line saying the input
holds NaN."""

from __future__ import annotations

import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import role


def _records(lines: list[str]) -> list[tuple[str, str, float | None]]:
    return [(e.kind, e.rule, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_bare_train_and_validation_values_are_the_losses() -> None:
    lines = [f"[2024-10-03 09:27:16,231][solver][INFO] - Epoch {i}: train={4.6 - i / 10:.5f} "
             f"valid={13.2 - i / 10:.5f} best={13.2 - i / 10:.5f}" for i in range(3)]
    assert _records(lines) == [("loss", "loss-eval", 4.6), ("loss", "loss-eval", 4.5),
                               ("loss", "loss-eval", 4.4)]
    assert _both(lines).verdict == "healthy"
    nan = [f"INFO ] Loss(time/mini-batch) - Epoch  {i}: train = {v}(1581.14s/2500) | "
           f"dev = {v}(152.82s/625)" for i, v in enumerate(["nan", "nan"], 1)]
    assert [k for k, _, _ in _records(nan)] == ["nan", "nan"]
    assert _both(nan).verdict == "data"


def test_bare_values_under_another_measure_or_beside_a_loss_are_not_losses() -> None:
    assert _records(["Epoch 1: Accuracy train=0.93 valid=0.91",
                     "epoch 2 top-1 error: train=12.5 val=14.0",
                     "[trainer.py:150 - INFO ] Accuracy - Epoch  1: train = 0.9 | dev = 0.8"]) == []
    assert _records(["Epoch 3: loss=2.5 train=0.93 valid=0.91"]) == [("loss", "loss", 2.5)]
    assert _records(["train: 45%|####5     | 176/391 [00:09<00:11, 18.95it/s]"]) == []


def test_a_separation_objective_is_a_loss() -> None:
    for name in ("si-snr", "train si-snr", "valid si-snr", "neg_si_sdr", "sisdr", "train_sisnr"):
        assert role(name) == "loss", name
    assert role("snr") is None and role("pesq") is None
    lines = [f"epoch: {i}, lr: 1.50e-04 - train si-snr: {v} - valid si-snr: {w}"
             for i, (v, w) in enumerate([("1.96", "8.69e-02"), ("-1.57e-01", "-2.32e-01")], 1)]
    assert [(k, x) for k, _, x in _records(lines)] == [("loss", 1.96), ("loss", -0.157)]
    assert _both(lines).verdict == "healthy"
    nan = lines + ["epoch: 3, lr: 1.50e-04 - train si-snr: nan - valid si-snr: nan"] * 3
    assert _both(nan).verdict != "healthy"


def test_a_check_saying_nan_detected_is_a_nan() -> None:
    for line in ("NaN detected in gradient of embedding.weight", "NaN detected in model output",
                 "nan values detected in loss"):
        (got,) = _records([line])
        assert got[:2] == ("nan", "nan-detected") and math.isnan(got[2]), line
    assert _records(["No NaN detected in model output"]) == []
    lines = ["Batch loss: 9.6656", "NaN detected in gradient of embedding.weight",
             "NaN detected in parameter embedding.weight after update"]
    assert _both(lines).verdict != "healthy"


def test_a_validation_of_epoch_line_is_the_evaluations() -> None:
    lines = []
    for i, v in enumerate([95.8, 81.0, 77.5]):
        lines += [f"Training of Epoch {i} - loss: inf", f"Validation of Epoch {i} - loss: {v}"]
    assert [(k, r) for k, r, _ in _records(lines)] == [("nan", "loss")] * 3
    assert [e.rule for e in logs.parse(lines) if e.kind == "note"] == ["eval-loss"] * 3
    assert _both(lines).verdict == "data"


def test_fields_that_end_in_an_ellipsis() -> None:
    lines = [f"Epoch: {i}/500...{sep}Train Loss: {v}...{sep}Val Loss: 0.75...{sep}Val Acc: 0.81..."
             for i, (v, sep) in enumerate([("0.1521", ""), ("0.1344", " "), ("0.1328", " ")], 289)]
    assert [(k, x) for k, _, x in _records(lines)] == [("loss", 0.1521), ("loss", 0.1344),
                                                        ("loss", 0.1328)]
    assert _both(lines).verdict == "healthy"
    nan = [f"Epoch: {i}/500... Train Loss: nan... Val Loss: nan..." for i in range(1, 4)]
    assert _both(nan).verdict == "data"
    assert _records(["version 1.2.3 loss 0.5"]) == [("loss", "loss", 0.5)]


def test_a_message_that_the_input_holds_nan_is_a_data_nan() -> None:
    head = [f"step {k} loss={2.0 - k / 100:.3f}" for k in range(1, 6)]
    for line in ("WARNING : Skipping prediction for ERA5 because of 40320 NaN in tc_tokens.",
                 "ValueError: Input X contains NaN.",
                 "ValueError: Input contains NaN, infinity or a value too large for dtype('float64')."):
        d = _both([*head, line, "step 6 loss=0.000"])
        assert (d.check, d.verdict) == ("nan-input", "data"), line
    assert _both([*head, "checked: no NaN in input_tokens"]).verdict == "healthy"
