"""Rules from the first runs of heldout149-154 (each a notation or a role, not a line): a NaN
padded with zeros (``0000nan``), names listed before their values (``round, loss, acc ===> 003,
0.82, 0.39``), federated learning's rounds as steps, and Flower's ``fit progress`` record."""

from __future__ import annotations

import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._event import _f
from fampnb.logs._notation import pairs
from fampnb.logs._vocab import role


def test_a_nan_padded_with_zeros_is_a_nan() -> None:
    """A zero-padded format pads a NaN as it pads a number (``loss = 0000nan``): NaN, not 0 and
    not an unread field; a number with leading zeros stays that number."""
    assert math.isnan(_f("0000nan")) and _f("-00inf") == -math.inf and _f("0003.5") == 3.5
    assert pairs("step 80 (23.64%): loss = 0000nan eer=0.00000")["loss"] == "0000nan"
    lines = [f"Step {10 * k:7d} ({3.21 * k:5.2f}%): loss = {4 - k / 10:.5f} EER=0.3" for k in range(1, 7)]
    d = _both(lines + ["Step      80 (23.64%): loss = 0000nan EER=0.00000"])
    assert d.verdict == "no-scaler" and d.first_nan_step == 80, d.reason


def test_names_listed_before_their_values() -> None:
    """``names ===> values`` (and ``(a, b) = (x, y)``): each value is the name's at its place counted
    from the end, a leading name without a value being the record's label; lists whose lengths
    differ by more than that label are not read as pairs."""
    line = "::: train, round, loss, acc, auc  ===> 003, 0.82290, 0.39816, 0.38508,"
    assert pairs(line) == {"round": "003", "loss": "0.82290", "acc": "0.39816", "auc": "0.38508"}
    assert pairs("(loss, acc) = (0.52, 0.81)") == {"loss": "0.52", "acc": "0.81"}
    assert "loss" not in pairs("a, b, c, loss ===> 1.5, 2.5")
    assert pairs("epoch 3, loss=0.5, acc=0.9") == {"epoch": "3", "loss": "0.5", "acc": "0.9"}
    lines = [f"2020-12-18 11:1{k}:22,720 - run.py - main - L133 ::: train, round, loss, acc, auc  "
             f"===> {k:03d}, 0.{90 - k}290, 0.39816, 0.38508," for k in range(2, 8)]
    recs = [e for e in logs.parse(lines) if e.kind == "loss"]
    assert [e.step for e in recs] == list(range(2, 8)) and recs[0].loss == 0.88290
    assert _both(lines).verdict == "healthy"
    nan = lines + [lines[-1].replace("0.83290", "nan").replace("007", "008")]
    d = _both(nan)
    assert d.first_nan_step == 8 and d.verdict != "healthy", d.reason


def test_federated_rounds_are_steps() -> None:
    assert role("round") == "step" and role("server_round") == "step"


def test_flowers_fit_progress_is_a_loss_record_at_its_round() -> None:
    """Flower's server logs ``fit progress: (round, loss, metrics, seconds)`` after each round's
    evaluation: the loss at that round, NaN included."""
    lines = [f"INFO :      fit progress: ({k}, {2.5 - k / 10}, {{'accuracy': 0.{k}}}, {30.5 * k})"
             for k in range(1, 6)]
    recs = [e for e in logs.parse(lines) if e.kind == "loss"]
    assert [(e.step, e.loss, e.rule) for e in recs[:2]] == [
        (1, 2.4, "flower-fit-progress"), (2, 2.3, "flower-fit-progress")]
    assert _both(lines).verdict == "healthy"
    d = _both(lines + [f"INFO :      fit progress: ({k}, nan, {{'accuracy': 0.1}}, 200.0)"
                       for k in range(6, 9)])
    assert d.first_nan_step == 6 and d.verdict != "healthy", d.reason
