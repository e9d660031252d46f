"""Rules from the first runs of heldout149-162 (a message kind and a notation, not lines): Pyro's
check of the ELBO, ``UserWarning: Encountered NaN: loss``, says the loss of the step in progress is
NaN; svoice's bare ``train``/``valid`` losses read in a JSON object as on a line."""

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


def test_bare_train_and_valid_values_in_a_json_object_are_losses() -> None:
    """svoice prints ``Epoch 0: train=4.61770 valid=13.24654`` and keeps the same in its
    ``history.json``, pretty-printed one field a line: its losses either way; a whole number under
    ``train`` is a count (Megatron's ``train: 4000000`` samples), no loss."""
    obj = ["{", '    "train": -6.68186240196228,', '    "valid": -15.98158609867096,',
           '    "best": -15.98158609867096', "}"]
    recs = [e for e in logs.parse(obj) if e.kind == "loss"]
    assert [e.loss for e in recs] == [-6.68186240196228]
    assert _both(obj).verdict == "healthy"
    counts = ["> building train, validation, and test datasets ...",
              "    train:      4000000", "    validation: 40080", "    test:       80"]
    assert [e for e in logs.parse(counts) if e.kind in ("loss", "nan")] == []
