"""The general rules heldout9's misses led to, each on lines of its own (not the held-out files):
numpy-style arrays as a metric's value (wrapped over lines), ColossalAI's overflow messages (wrapped
by the rich console), and a loss that collapses to exactly 0."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose
from fampnb.diagnose._checks import CHECKS
from fampnb.logs._notation import exact_zero
from fampnb.logs._vocab import role


def _events(lines: list[str]) -> list[logs.Event]:
    """The events of ``lines`` by the full reader, checked against the fast reader's."""
    full = list(logs.parse(lines))
    fast = list(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert [e.to_dict() for e in fast] == [e.to_dict() for e in full]
    return full


def _records(lines: list[str]) -> list[tuple[str, float | None, int]]:
    return [(e.kind, e.loss, e.line_no) for e in _events(lines) if e.kind in ("loss", "nan")]


# ---- a bracketed list of numbers as a metric's value ----------------------------------------
@pytest.mark.parametrize("line,loss", [
    ("epoch 2 iter 30 loss [0.5 1.5]", 1.0),
    ("epoch 2 iter 30 loss: [0.25, 0.75]", 0.5),
    ("epoch 2 iter 30 loss=[ 1.  2.  3.]", 2.0),
    ("epoch 2 iter 30 | train loss: [4.5]", 4.5),
], ids=["numpy-spaces", "list-commas", "key=value", "one-element"])
def test_a_bracketed_list_of_numbers_is_one_value_its_mean(line, loss):
    assert _records([line]) == [("loss", loss, 1)]


@pytest.mark.parametrize("values", ["[nan, 1.2]", "[1.5     nan 2.5]", "[-nan 0.5]", "[2.0 inf]"])
def test_a_list_with_a_non_finite_element_is_a_nan_record(values):
    ((kind, loss, _),) = _records([f"step 7, loss: {values}"])
    assert kind == "nan" and not math.isfinite(loss)


def test_numpys_summary_of_a_long_array_reads_as_the_mean_of_what_it_shows():
    values = np.arange(4000) / 8                 # more than numpy's threshold: summarised
    lines = _numpy_lines("epoch 1 step 5 loss", values)
    assert "..." in "".join(lines)
    shown = np.concatenate([values[:3], values[-3:]])
    assert _records(lines) == [("loss", pytest.approx(float(shown.mean())), 1)]
    assert _records(["step 2 loss [0.5, 1.5, ..., nan, 2.5]"])[0][0] == "nan"


def test_a_very_long_run_of_continuation_lines_stays_fast_and_bounded():
    import time

    lines = ["step 1 loss [1.5"] + [" 2.5 " * 10] * 20_000 + [" 1 ]", "step 2 loss [2.5 3.5]"]
    t = time.perf_counter()
    records = _records(lines)
    assert time.perf_counter() - t < 30         # (linear: a bounded join, not a quadratic one)
    assert records[-1] == ("loss", 3.0, len(lines))


def test_a_list_with_no_metric_name_or_with_words_inside_is_not_a_value():
    assert _records(["shape [4, 3, 224, 224] step 9"]) == []
    assert _records(["step 9 loss [warmup 1.5]"]) == []


def _numpy_lines(prefix: str, values: np.ndarray) -> list[str]:
    """``print(prefix, values)`` as numpy writes it: wrapped at its line width."""
    return f"{prefix} {np.array2string(values)}".split("\n")


@pytest.mark.parametrize("n", [12, 30, 64])
def test_a_numpy_array_wrapped_over_lines_reads_as_one_record_on_its_first_line(n):
    values = 100 + np.arange(n) / 4          # printed exactly (quarters)
    lines = _numpy_lines("Pass 3, batch 250, loss", values)
    assert len(lines) >= 2, lines              # numpy wrapped it
    evs = [e for e in _events(lines + ["Pass 3, batch 260, loss [1.5 2.5]"])
           if e.kind == "loss"]
    assert [(e.line_no, e.step, e.epoch) for e in evs] == [(1, 250, 3.0), (len(lines) + 1, 260, 3.0)]
    assert evs[0].loss == pytest.approx(float(values.mean()))
    assert evs[1].loss == 2.0


def test_a_wrapped_array_with_a_nan_element_is_a_nan_record():
    values = np.full(32, 12.25)
    values[25] = np.nan
    lines = _numpy_lines("Pass 0, batch 90, loss", values)
    assert len(lines) >= 2 and "nan" in lines[-1]
    assert [(k, ln) for k, _, ln in _records(lines)] == [("nan", 1)]


def test_an_open_bracket_that_no_line_closes_leaves_the_next_record_alone():
    lines = ["Pass 0, batch 10, loss [1.25 1.5 1.75", "Pass 0, batch 20, loss [1.0 1.5]"]
    assert _records(lines) == [("loss", 1.25, 2)]


def test_pass_is_an_epoch_word_and_batch_the_step_within_it():
    assert role("pass") == "epoch" and role("batch") == "step"
    (ev,) = _events(["Pass 4, batch 30, loss [0.5 0.25]"])
    assert (ev.epoch, ev.step, ev.explicit, ev.loss) == (4.0, 30, True, 0.375)


def _pass_log(nan_at: int) -> list[str]:
    rng = np.random.default_rng(11)
    lines = []
    for b in range(0, 1000, 100):
        values = np.round(6.0 - b / 500 + rng.uniform(-0.1, 0.1, 16), 4)
        if b >= nan_at:
            values[[0, 2, 3, 7, 11]] = np.nan
        lines += _numpy_lines(f"Pass 0, batch {b}, loss", values)
    return lines


def test_per_trainer_arrays_that_turn_nan_late_read_as_a_late_nan_with_no_scaler():
    d = _both(_pass_log(nan_at=700))
    assert d.verdict == "no-scaler", d.reason
    assert d.first_nan_step == 700 and "mid-run" in d.reason


def test_per_trainer_arrays_that_stay_finite_are_healthy():
    assert _both(_pass_log(nan_at=10_000)).verdict == "healthy"


# ---- ColossalAI's overflow messages (colossalai/ sources) -------------------------------------
RICH = "[12/01/26 10:00:00] WARNING  colossalai - {name} - WARNING: "


@pytest.mark.parametrize("message,kind,rule,scale", [
    ("found inf during ShardedOptimV2 step", "skip", "colossalai-skip", None),
    ("Found overflow. Skip step", "skip", "colossalai-skip", None),
    ("Overflow occurs, the loss scale is adjusted to 32768.0", "backoff", "colossalai-backoff",
     32768.0),
    ("No overflow for consecutive 1000 steps, the loss scale is adjusted to 131072.0", "growth",
     "colossalai-growth", 131072.0),
], ids=["sharded-optim-v2", "low-level-zero", "scaler-backoff", "scaler-growth"])
def test_colossalai_messages(message, kind, rule, scale):
    (ev,) = _events([RICH.format(name="Optimizer") + message])
    assert (ev.kind, ev.rule, ev.framework, ev.scale_after) == (kind, rule, "colossalai", scale)


def _rich_wrapped(message: str, cut: int, width: int = 80) -> list[str]:
    """A rich-console log record whose message breaks after its ``cut``-th word: the rest goes on
    the next line, indented to the message column; both lines padded to the console width."""
    head = RICH.format(name="ShardedOptimizerV2")
    words = message.split(" ")
    col = len("[12/01/26 10:00:00] WARNING  ")
    first = (head + " ".join(words[:cut])).ljust(width)
    return [first, (" " * col + " ".join(words[cut:])).ljust(width)]


@pytest.mark.parametrize("message,kind", [
    ("found inf during ShardedOptimV2 step", "skip"),
    ("Overflow occurs, the loss scale is adjusted to 1024.0", "backoff"),
])
def test_a_message_wrapped_by_the_rich_console_at_any_word_reads_as_one(message, kind):
    for cut in range(1, len(message.split(" "))):
        lines = _rich_wrapped(message, cut) + ["Epoch 0 step 9 loss=2.5"]
        evs = [e for e in _events(lines) if e.framework == "colossalai"]
        assert [(e.kind, e.line_no) for e in evs] == [(kind, 1)], lines


def _nan_bars(messages: bool) -> list[str]:
    lines = []
    for step in range(300, 306):
        lines.append(f"[Epoch 0 / Train]:   0% {step}/500000 [20:00<9:00:00,  3.50s/it, loss=nan, "
                     "lr=1e-4]")
        if messages:
            lines += _rich_wrapped("found inf during ShardedOptimV2 step", 1)
    return lines


def test_a_nan_at_the_start_with_the_scalers_overflow_messages_is_not_data():
    d = _both(_nan_bars(messages=True))
    assert (d.verdict, d.check) == ("unknown", "overflow-skips-at-nan"), d.reason
    assert "overflow messages" in d.reason and d.precision == "fp16"


def test_the_same_nan_with_no_overflow_message_is_still_data():
    assert _both(_nan_bars(messages=False)).verdict == "data"


def test_an_isolated_overflow_skip_in_a_finite_run_is_healthy():
    lines = [f"step {s} loss={3 - s / 100:.3f}" for s in range(1, 30)]
    lines.insert(12, RICH.format(name="LowLevelZeroOptimizer") + "Found overflow. Skip step")
    d = _both(lines)
    assert d.verdict == "healthy" and d.skips == 1


# ---- a loss that collapses to exactly 0 ------------------------------------------------------
@pytest.mark.parametrize("text,exact", [
    ("0", True), ("0.0", True), ("0.", True), ("0.0000e+00", True), ("0.000000e+00", True),
    ("-0.0", True), ("0.000000", True), ("0.00000000", True), ("0.0000", False), ("0.00", False),
    ("0.00001", False), ("1e-08", False),
])
def test_exact_zero_spellings(text, exact):
    assert exact_zero(text) is exact


def _epochs(losses: list[str], head: list[str] | None = None) -> list[str]:
    return (head or []) + [f"Epoch {k}/30 - 12s - loss: {x} - accuracy: 0.1012 - val_loss: 0.0"
                           for k, x in enumerate(losses, 1)]


def test_the_check_is_in_the_chain_before_the_healthy_verdict():
    names = [n for n, _ in CHECKS]
    assert names.index("loss-became-zero") < names.index("healthy")


@pytest.mark.parametrize("zero", ["0.0000e+00", "0.0", "0.000000"])
def test_a_loss_that_becomes_exactly_zero_and_stays_is_not_healthy(zero):
    d = _both(_epochs(["2.3010", "0.0412", zero, zero, zero, zero]))
    assert (d.verdict, d.check) == ("unknown", "loss-became-zero"), d.reason
    assert "exactly 0" in d.reason and "precision" in d.reason and "labels" in d.reason


def test_stated_fp16_with_no_scaler_makes_it_no_scaler():
    zero = "0.0000e+00"
    d = _both(_epochs(["2.3010", zero, zero, zero], head=["mixed_precision: fp16"]))
    assert (d.verdict, d.check) == ("no-scaler", "loss-became-zero"), d.reason


def test_stated_fp16_with_a_scaler_at_work_stays_unknown():
    zero = "0.0000e+00"
    lines = _epochs(["2.3010", "1.9000", zero, zero, zero], head=["mixed_precision: fp16"])
    lines.insert(3, "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0")
    d = _both(lines)
    assert (d.verdict, d.check) == ("unknown", "loss-became-zero"), d.reason


@pytest.mark.parametrize("losses", [
    [f"{2.0 * 0.5 ** k:.4f}" for k in range(20)],          # a long decline, rounded to 0.0000
    ["2.3010", "0.0412", "0.00", "0.00", "0.00"],           # two decimals: rounding
    ["2.3010", "0.0412", "0.0012", "0.0000e+00", "0.0000e+00"],   # only two zero records
    ["2.3010", "0.0000e+00", "0.0000e+00", "0.0000e+00", "0.0105"],  # not at the end
], ids=["rounded-decline", "two-decimals", "two-zeros", "recovers"])
def test_zeros_that_may_be_rounding_or_do_not_last_are_left_to_the_other_checks(losses):
    d = _both(_epochs(losses))
    assert d.check != "loss-became-zero", d.reason


def test_zero_from_the_first_record_on_is_not_healthy_either():
    # (heldout13: an exact 0 on every record is no training at all; it was left to the other
    # checks here, which read it as healthy)
    d = _both(_epochs(["0.0000e+00"] * 6))
    assert (d.verdict, d.check) == ("unknown", "loss-became-zero"), d.reason
    assert "every finite record" in d.reason


# ---- the fast reader picks the wrapped records in the middle of a long log -------------------
def test_wrapped_records_deep_inside_a_long_log_are_read_by_the_fast_reader_too():
    lines = [f"Pass 0, batch {b}, loss [{6 - b / 1e4:.4f} {6 - b / 2e4:.4f}]" for b in range(3000)]
    values = np.full(32, 3.25)
    values[30] = np.nan
    lines += _numpy_lines("Pass 0, batch 3000, loss", values)       # far past the first 64 KiB
    lines += _rich_wrapped("found inf during ShardedOptimV2 step", 2)
    lines += [f"Pass 0, batch {b}, loss [nan nan]" for b in range(3001, 6000)]
    assert sum(map(len, lines)) > 3 * (64 << 10)
    full = diagnose(logs.parse(lines))
    fast = diagnose(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))   # (a sample)
    for d in (full, fast):
        assert (d.verdict, d.check, d.first_nan_step, d.first_nan_line, d.skips) == (
            "unknown", "lasting-nan", 3000, 3001, 1), d.reason     # (fp16: the skip says so)


# ---- a user's records in a log that TensorFlow's logger writes too ---------------------------
TF = ["INFO:tensorflow:Restoring parameters from /ckpt/model.ckpt-0",
      "INFO:tensorflow:Starting queue runners."]


def _printed(losses: list[str]) -> list[str]:
    return [f"my total loss = {x}" for x in losses]


def test_user_records_after_tensorflow_logger_lines_are_a_tf_runs():
    evs = [e for e in _events(TF + _printed(["0.5"])) if e.kind == "loss"]
    assert [e.framework for e in evs] == ["keras"]
    assert [e.framework for e in _events(_printed(["0.5"]))] == ["generic"]


def test_a_later_nan_in_a_tf_run_with_no_stated_precision_is_unknown_not_no_scaler():
    losses = ["0.9", "0.8", "0.7", "0.6", "0.5", "nan", "nan"]
    tf = _both(TF + _printed(losses))
    assert tf.verdict == "unknown" and "silent" in tf.reason, tf.reason
    assert _both(_printed(losses)).verdict == "no-scaler"
