"""A rule from the first runs of heldout159-162 (a message kind, not a line): Pyro's check of the
ELBO, ``UserWarning: Encountered NaN: loss``, says the loss of the step in progress is NaN."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def test_pyros_encountered_nan_loss_is_a_nan_at_the_step_in_progress() -> None:
    warn = ("/site-packages/pyro/infer/tracegraph_elbo.py:261: UserWarning: Encountered NaN: loss")
    evs = [e for e in logs.parse(["step 40 loss 12.5", warn]) if e.kind == "nan"]
    assert [(e.rule, e.step) for e in evs] == [("pyro-nan-loss", 40)]
    assert [e for e in logs.parse(["UserWarning: Encountered NaN: grad"]) if e.kind == "nan"] == []
    records = [f"step {k} loss {900 - k:.1f}" for k in range(100, 1000, 100)]
    d = _both(records + [warn, "  warn_if_nan(loss, \"loss\")"])
    assert d.first_nan_step == 900 and d.verdict == "no-scaler", d.reason
    d = _both(["step 0 loss 1.5e6", warn])
    assert d.first_nan_step == 0 and d.verdict == "data", d.reason
