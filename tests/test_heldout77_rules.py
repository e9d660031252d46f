"""The general rules heldout77's to heldout80's first runs led to, each on lines of its own (not the
held-out files): a message saying the first epoch (step, iteration) gave NaN."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def test_a_message_saying_the_first_epoch_gave_nan_is_a_nan_at_the_start() -> None:
    for line in ("gluonts.core.exception.GluonTSUserError: Got NaN in first epoch. Try reducing "
                 "initial learning rate.",
                 "RuntimeError: NaN loss at the first iteration",
                 "Warning: NaN during the first step, stopping"):
        (ev,) = [e for e in logs.parse([line]) if e.kind == "nan"]
        assert ev.rule == "nan-first" and ev.step == 0, line
    lines = ["Epoch 1/10: loss 2.31", "Epoch 1/10: loss 2.29",
             "  File \"trainer/_base.py\", line 328, in __call__",
             "    \"Got NaN in first epoch. Try reducing initial learning rate.\"",
             "gluonts.core.exception.GluonTSUserError: Got NaN in first epoch. Try reducing initial "
             "learning rate."]
    assert _both(lines).verdict == "data"
    assert [e.kind for e in logs.parse(["no NaN in the first epoch", "first epoch done, nan count 0"])
            if e.kind == "nan"] == []
