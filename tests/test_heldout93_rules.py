"""The general rules heldout93's to heldout96's first runs led to, each on lines of its own (not the
held-out files): a separator after a CSV row's last cell, a mean loss on a line of its own, Paddle
v1's ``AvgCost=``, the epoch abbreviated ``EP``, the values of a group named ``losses``, a NaN
under a bare ``scale`` (no loss scaler's) and a trainer's ``NaN loss value`` guard."""

from __future__ import annotations

import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import role


def _losses(lines: list[str]) -> list[float]:
    return [e.loss for e in logs.parse(lines) if e.kind in ("loss", "nan") and e.loss is not None]


def test_a_separator_after_the_last_cell_of_a_csv_row_adds_no_cell() -> None:
    head = "epoch, train_loss, test_loss, train_acc, time"
    rows = [f"{i}, {26.0 - i:.5f}, {158.2 - i:.5f}, {38.7 + i:.5f}, Aug16-15:41:0{i},"
            for i in range(4)]
    assert _losses([head] + rows) == [26.0, 25.0, 24.0, 23.0]
    assert _both([head] + rows).verdict == "healthy"
    assert _losses([head + ","] + rows) == [26.0, 25.0, 24.0, 23.0]   # (the header's too)
    bad = rows + [f"{i}, nan, nan, 10.0, Aug16-16:00:00," for i in range(4, 8)]
    assert _both([head] + bad).verdict != "healthy"


def test_a_mean_loss_on_a_line_of_its_own_is_a_record_not_a_component() -> None:
    lines = ["[02.06.24|21:13:26] \tIter 0 Done. | loss: 1.4058 | lr: 0.010000",
             "[02.06.24|21:13:31] \tmean_loss: nan",
             "[02.06.24|21:13:31] Done.",
             "[02.06.24|21:13:40] \tmean_loss: nan"]
    got = _losses(lines)
    assert got[0] == 1.4058 and len(got) == 3 and all(math.isnan(x) for x in got[1:])
    assert _both(lines).verdict != "healthy"
    # (a component on the line after its total stays part of that record: Caffe's one field a line)
    caffe = ["Iteration 20, loss = 1.25", "    Train net output #0: loss_cls = 0.75"]
    assert _losses(caffe) == [1.25]


def test_paddle_v1s_avgcost_and_currentcost_are_losses() -> None:
    assert role("avgcost") == role("currentcost") == "loss"
    assert role("batch_cost") is None and role("energy_cost") is None   # (a time; a reward term)
    line = ("I0401 16:41:14.938364  3162 TrainerInternal.cpp:165]  Batch={b} samples=100 "
            "AvgCost={c} CurrentCost={c} Eval: classification_error_evaluator=0.69")
    ok = [line.format(b=b, c=f"{3.0 - b / 100:.4f}") for b in (100, 200, 300)]
    assert _losses(ok) == [2.0, 1.0, 0.0] and _both(ok).verdict == "healthy"
    assert _both(ok + [line.format(b=b, c="nan") for b in (400, 500, 600)]).verdict != "healthy"


def test_ep_abbreviates_the_epoch() -> None:
    assert role("ep") == "epoch"
    line = "2022-05-17 16:12:24,159: EP 42 ( 75) |  32m 55s, 1139 samples/s | loss: nan,"
    (e,) = logs.parse([line])
    assert e.kind == "nan" and e.epoch == 42
    d = _both([line, line.replace("( 75)", "(150)")])
    assert d.verdict != "data" and "from the start" not in d.reason   # (epoch 42: mid-run)


def test_the_values_of_a_group_named_losses_are_losses() -> None:
    rows = [f"Epoch {e}, train losses: {{'rc': 0.00{e}55, 'vel': 0.0004, 'mixed_with_clip': "
            f"2.{e}5}}" for e in range(20, 24)]
    got = _losses(rows)
    assert len(got) == 4 and all(x > 0 for x in got)
    assert _both(rows).verdict == "healthy"
    smpl = ["iteration 499",
            "        losses: DATA:nan, LANDMARK:nan, PRIOR:nan, BETA:nan",
            "        losses weighted: DATA:nan, LANDMARK:nan, PRIOR:nan, BETA:nan"]
    got = _losses(smpl)
    assert len(got) == 2 and all(math.isnan(x) for x in got)
    val = ["Epoch 3, val losses: {'rc': 0.5, 'vel': 0.1}"]
    assert [e.rule for e in logs.parse(val)] == ["eval-loss"]


def test_a_nan_under_a_bare_scale_is_no_loss_scale() -> None:
    assert [e.kind for e in logs.parse(["        scale: [nan]"])] == []
    assert [e.scale_after for e in logs.parse(["scale: 1024.0"])] == [1024.0]


def test_a_trainers_nan_loss_value_guard_is_a_nan_record() -> None:
    for line in ("NaN loss value, stopping!", "Encountered NaN loss at batch 7",
                 "WARNING: nan loss detected, skipping"):
        assert [e.kind for e in logs.parse([line])] == ["nan"], line
    assert [e.kind for e in logs.parse(["no NaN loss values were found"]) if e.kind != "note"] == []
