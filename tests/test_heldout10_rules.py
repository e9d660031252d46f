"""The general rules heldout10's misses led to, each on lines of its own (not the held-out files):
a non-finite value printed with a fill character (``nanxxx``), a key with a bracketed index, a date
or a time after a metric's name (not its value), the plural ``losses`` in a NaN-loss exception, and
two bare counters before a record's fields (``print(epoch, i, "Loss=...")``)."""

from __future__ import annotations

import io
import math

import pytest
from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._notation import number, pairs


def _records(lines: list[str]) -> list[tuple[str, float | None]]:
    full = list(logs.parse(lines))
    fast = list(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert [e.to_dict() for e in fast] == [e.to_dict() for e in full]
    return [(e.kind, e.loss) for e in full if e.kind in ("loss", "nan")]


# ---- ``{:x<6f}``: a NaN or inf padded with the fill character ``x`` -------------------------
@pytest.mark.parametrize("text,expected", [("nanxxx", math.nan), ("NANXXX", math.nan),
                                           ("infxxx", math.inf), ("-infxx", -math.inf),
                                           ("nanx", math.nan)])
def test_filled_non_finite_is_a_number(text: str, expected: float) -> None:
    got = number(text.lower())
    assert got is not None
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_filled_nan_is_a_nan_record_in_both_readers() -> None:
    lines = [f"[2024/01/02 03:04:{i:02d}] trainer INFO: epoch: [1/50], global_step: {i}, "
             f"lr: 0.001000, loss: {2.5 - 0.01 * i:.6f}, batch_cost: 0.51234 s" for i in range(1, 9)]
    lines.append("[2024/01/02 03:04:09] trainer INFO: epoch: [1/50], global_step: 9, lr: 0.001000, "
                 "loss: nanxxx, batch_cost: 0.51234 s")
    recs = _records(lines)
    assert [k for k, _ in recs] == ["loss"] * 8 + ["nan"]
    assert _both(lines).verdict != "healthy"


def test_a_word_that_starts_with_nan_x_is_not_a_nan() -> None:
    lines = [f"step {i}: loss {1.0 / i:.4f} host nanxing-{i}" for i in range(1, 6)]
    assert [k for k, _ in _records(lines)] == ["loss"] * 5
    assert _both(lines).verdict == "healthy"


# ---- ``key[ N ]: value`` ------------------------------------------------------------------------
def test_a_key_with_a_bracketed_index_keeps_its_value() -> None:
    assert pairs("train_batch_loss[ 6590 ]:  nan") == {"train_batch_loss": "nan"}
    assert pairs("loss[3] = 0.25, acc[3] = 0.9") == {"loss": "0.25", "acc": "0.9"}


def test_bracketed_index_records_show_a_late_nan() -> None:
    lines = [f"batch_loss[ {10 * i} ]:  {2.0 - 0.01 * i}" for i in range(1, 21)]
    lines += [f"batch_loss[ {10 * i} ]:  nan" for i in range(21, 26)]
    recs = _records(lines)
    assert [k for k, _ in recs] == ["loss"] * 20 + ["nan"] * 5
    d = _both(lines)
    assert d.verdict in ("no-scaler", "unknown")


# ---- a date or a time after a name is not its value --------------------------------------------
@pytest.mark.parametrize("line", ["checkpoint saved 2021-10-28 23:20:46",
                                  "losses 2021-10-28 23:20:46.797813",
                                  "loss at 12:30:01 written"])
def test_a_date_or_time_is_not_a_value(line: str) -> None:
    assert "loss" not in pairs(line) and "losses" not in pairs(line)


def test_values_next_to_dates_still_read() -> None:
    assert pairs("2021-10-28 23:20:46 loss: 0.512, lr 1e-4") == {"loss": "0.512", "lr": "1e-4"}


# ---- an exception about NaN *losses* ----------------------------------------------------------
def test_nan_losses_exception_is_a_nan_message_not_a_record() -> None:
    lines = ["Traceback (most recent call last):",
             '  File "train.py", line 88, in check',
             '    raise RuntimeError("ERROR: Got NaN losses {}".format(datetime.now()))',
             "RuntimeError: ERROR: Got NaN losses 2023-05-06 07:08:09.123456"]
    evs = list(logs.parse(lines))
    assert not [e for e in evs if e.kind == "loss"]          # (not a loss of 2023)
    assert ("fatal", "runtimeerror", 4) in [(e.kind, e.rule, e.line_no) for e in evs]
    assert _both(lines).verdict in ("unknown", "data")


def test_an_error_about_losses_without_a_nan_word_is_not_a_nan_message() -> None:
    assert not [e for e in logs.parse(["RuntimeError: no losses were logged for 3 steps"])
                if e.kind == "fatal"]


# ---- ``print(epoch, i, "Loss=%.3f" % loss)`` ---------------------------------------------------
def test_two_bare_counters_name_the_epoch() -> None:
    lines = [f"{57} {i} Loss=nan Time=0.040" for i in range(1, 9)]
    evs = [e for e in logs.parse(lines) if e.kind == "nan"]
    assert evs and all(e.epoch == 57 for e in evs)
    # NaN on every record of an excerpt from epoch 57 is not "NaN from the start of training"
    assert _both(lines).verdict != "data"


def test_bare_counters_of_the_first_epoch_still_start_the_run() -> None:
    lines = [f"1 {i} Loss=nan Time=0.040" for i in range(1, 9)]
    assert _both(lines).verdict == "data"


def test_numbers_without_a_named_field_after_them_name_no_epoch() -> None:
    lines = [f"12 {i} 0.5 0.25" for i in range(1, 4)] + [f"step {i}: loss nan" for i in range(1, 4)]
    evs = [e for e in logs.parse(lines) if e.kind == "nan"]
    assert evs and all(e.epoch is None for e in evs)
