"""The general rules heldout8's misses led to, each on lines of its own (not the held-out files)."""

from __future__ import annotations

import pytest
from doctor_helpers import diagnose_both as _both

from fampnb import logs

# ---- quoted keys and quoted values inside a ``key: value, ...`` record ------------------------
QUOTED = "[{t}] iter: {i}, lr: 0.0005, 'loss_a': '{a}', 'loss_b': '0.25', 'loss': '{l}', time: 0.4"


def test_quoted_values_among_plain_fields_are_a_record():
    events = list(logs.parse([QUOTED.format(t="12:00", i=200, a="1.5", l="3.125")]))
    assert [(e.kind, e.loss, e.step, e.explicit) for e in events] == [("loss", 3.125, 200, True)]


def test_quoted_value_records_of_a_falling_loss_are_healthy():
    lines = [QUOTED.format(t=f"12:{k:02d}", i=100 * k, a=f"{2 - k / 20:.3f}", l=f"{6 - k / 10:.4f}")
             for k in range(1, 12)]
    assert _both(lines).verdict == "healthy"


def test_a_quoted_nan_value_is_a_nan_record():
    events = list(logs.parse([QUOTED.format(t="12:00", i=300, a="nan", l="nan")]))
    assert [e.kind for e in events] == ["nan"]


def test_an_hf_dict_is_still_read_as_one():
    events = list(logs.parse(["{'loss': 0.75, 'grad_norm': 1.5, 'learning_rate': 1e-05, 'epoch': 0.1}"]))
    assert [(e.rule, e.loss, e.grad_norm) for e in events] == [("hf-dict", 0.75, 1.5)]


# ---- an epoch above 1 is never the start of training ------------------------------------------
SEMI = "Time: 2024-01-02 10:00:00; Epoch: {e}; LR, 3e-05; a_loss: nan;  b_loss: nan;  "
BAR = "Epoch {e}: : 300it [05:00,  1.00s/it, loss=nan, v_num=0, val_loss=0.05]"


@pytest.mark.parametrize("line", [SEMI, BAR], ids=["semicolon-record", "lightning-bar"])
def test_the_epoch_field_of_a_record_is_read(line):
    (event,) = logs.parse([line.format(e=9)])
    assert (event.kind, event.epoch) == ("nan", 9.0)


@pytest.mark.parametrize("line", [SEMI, BAR], ids=["semicolon-record", "lightning-bar"])
def test_a_first_nan_record_past_the_first_epoch_is_not_at_the_start(line):
    d = _both([line.format(e=9)])
    assert d.verdict != "data", d.reason
    assert "not at the start of training" in d.reason


@pytest.mark.parametrize("line", [SEMI, BAR], ids=["semicolon-record", "lightning-bar"])
def test_a_first_nan_record_in_the_first_epoch_is_still_at_the_start(line):
    for epoch in (0, 1):
        assert _both([line.format(e=epoch)]).verdict == "data"
