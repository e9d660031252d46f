"""Where the first NaN is named: by its step where the log counts steps, else by its line alone
(a record of a log without a step counter takes its line number as its step; "step 20 (line 20)"
named a step the log never printed)."""

from __future__ import annotations

from fampnb.diagnose import diagnose
from fampnb.logs import parse
from fampnb.report import render_report


def _lines(*records: str) -> list[str]:
    return ["Using device mps", "model built, 124M parameters", *records]


def test_a_nan_in_a_log_without_steps_is_named_by_its_line() -> None:
    d = diagnose(parse(_lines("loss:  tensor(nan, device='mps:0')")))
    assert d.verdict == "data" and d.first_nan_line == 3
    assert "(line 3)" in d.reason and "step 3" not in d.reason, d.reason
    text = render_report(d, "x.log")
    assert "first NaN: line 3 " in text and "step 3" not in text, text


def test_a_nan_in_a_log_with_steps_is_named_by_its_step_and_line() -> None:
    d = diagnose(parse(_lines("step 1 loss 2.31", "step 2 loss nan", "step 3 loss nan")))
    assert d.first_nan_step == 2 and d.first_nan_line == 4
    assert "step 2 (line 4)" in d.reason, d.reason
    assert "first NaN: step 2 (line 4)" in render_report(d, "x.log")
