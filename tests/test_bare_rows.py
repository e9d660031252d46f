"""Rows of numbers under no name (a table whose header is not in the log): Chainer's PrintReport,
nolearn's epoch table, WeSpeaker's per-rank rows, DeepXDE's bracketed loss terms, FNO's bare
epoch lines.  The leading integers are the step (and the epoch), the row's first non-finite
number or else its first non-integer is the record's loss; after a loss under a name, bare
numbers are something else and are not read."""

from __future__ import annotations

import io
import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose
from fampnb.logs._event import LineState
from fampnb.logs._fields import bare_row
from fampnb.logs._rules import parse_segment


def _records(lines: list[str]) -> list[logs.Event]:
    return [e for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_leading_integers_are_step_and_epoch_and_the_first_number_after_them_the_loss() -> None:
    rows = [f"{8 + k // 5}           {3400 + 100 * k}        2.1{k}381     0              "
            f"9.8{k}201e-05" for k in range(8)]
    recs = _records(rows)
    assert [(e.step, e.epoch, e.loss, e.rule) for e in recs[:2]] == [
        (3400, 8, 2.10381, "bare-row"), (3500, 8, 2.11381, "bare-row")]
    assert recs[-1].epoch == 9 and recs[-1].explicit
    assert _both(rows).verdict == "healthy"


def test_a_non_finite_number_anywhere_in_the_row_is_its_loss() -> None:
    """WeSpeaker's columns are epoch, batch, lr, margin, loss, acc: the lr and margin come first,
    so a finite row's loss is the lr; a row with ``nan`` in it is a NaN record all the same."""
    prefix = "[ INFO : 2023-07-06 07:55:30,898 ] - "
    rows = [f"{prefix}|         3|       {b}|   0.52112|         0|    {loss}|    17.698|"
            for b, loss in [(100, "5.2225"), (200, "3.8506"), (300, "   nan")]]
    recs = _records(rows)
    assert [e.kind for e in recs] == ["loss", "loss", "nan"]
    assert recs[0].loss == 0.52112 and recs[2].step == 300 and recs[2].epoch == 3
    assert math.isnan(recs[2].loss)


def test_bracketed_cells_and_a_duration_cell() -> None:
    """DeepXDE prints each loss term list in brackets (the record's loss: the sum, or the first
    NaN); nolearn ends its rows with the epoch's duration (``431.44s``)."""
    recs = _records(["0         [5.47e+03, 1.00e+00]    [6.44e+03]    [1.00e+00]",
                     "1000      [nan, 2.0]         [nan]         [nan]"])
    assert recs[0].loss == 5471.0 and recs[0].step == 0
    assert recs[1].kind == "nan" and recs[1].step == 1000
    rows = [f"     {k}       0.{60 - k}286       0.4{k}760      1.09477      0.62482  431.44s"
            for k in range(3, 12)]
    rows += [f"     {k}           nan           nan          nan      0.62500  419.85s"
             for k in range(12, 15)]
    d = _both(rows)
    assert d.verdict == "no-scaler" and d.first_nan_step == 12, d.reason


def test_lines_that_are_not_bare_rows() -> None:
    """Too few numbers after the counter, a version, a date, words, a numpy array, a confusion
    matrix row in brackets: not rows (nothing is read, nothing is guessed)."""
    st = LineState()
    for line in ["3 0.5 0.25", "2024 1.2.3 4 5", "2024-12-03 12:00:01 0.5 0.7", "epoch 3 0.5 0.25 0.1",
                 "[0.1 0.2 0.3 0.4]", "[[12  0  3  1]", "tensor([0.1, 0.2, 0.3])",
                 "12 0.5 0.25 abc 0.1"]:
        assert bare_row(line.lower(), st) is None, line
        assert parse_segment(line, 1, st) == [], line


def test_after_a_loss_under_a_name_bare_numbers_are_not_records() -> None:
    """A classification report's rows (``0  0.95  0.93  0.94  120``) after the training records are
    not losses; before any named record the same line would be read; a header in force reads its
    rows itself."""
    report = ["           0       0.95      0.93      0.94       120",
              "           1       0.91      0.90      0.90        98"]
    train = [f"step {k} loss {2.0 - k / 10:.2f}" for k in range(1, 9)]
    recs = _records(train + report)
    assert all(e.rule != "bare-row" for e in recs) and len(recs) == 8
    assert _both(train + report).verdict == "healthy"
    assert [e.rule for e in _records(report)] == ["bare-row", "bare-row"]


def test_scan_reads_bare_rows_as_parse_does_in_a_long_log() -> None:
    """The fast reader counts a bare row a record line (its template matches the same pattern):
    the samples it parses give the verdict the full parse gives, NaN late in a long table."""
    rows = [f"{k // 1000}  {k}  {2.0 + (k % 7) / 100:.5f}  0  9.9e-05" for k in range(40000)]
    rows[31000:] = [f"{k // 1000}  {k}  nan  0  9.9e-05" for k in range(31000, 40000)]
    data = ("\n".join(rows) + "\n").encode()
    full = diagnose(logs.parse(io.BytesIO(data)))
    fast = diagnose(logs.scan(io.BytesIO(data)))
    assert full.events_read == 40000 and fast.events_read < 10000   # (it parsed a sample)
    assert ((fast.verdict, fast.check, fast.first_nan_line, fast.first_nan_step)
            == (full.verdict, full.check, full.first_nan_line, full.first_nan_step))
    assert full.verdict == "no-scaler" and full.first_nan_step == 31000, full.reason


def test_a_growing_unnamed_column_is_no_explosion() -> None:
    """Which column of a bare row is the loss is not known: an elapsed time in the first
    non-integer column grows a thousandfold in a long run, and that is no diverging loss."""
    rows = [f"{k:<5d} {0.9 + 1020.0 * k:<12.3f} {1.2 - 0.001 * k:<9.6g} 0.0001"
            for k in range(12)]     # (0.9 s after the first epoch, then 1021 s after the second)
    d = _both(rows)
    assert d.verdict == "healthy", d.reason
