"""The general rules heldout129's to heldout132's first runs led to, each on lines of its own (not
the held-out files): an error whose message says a gradient is not finite, whatever the framework
(DyNet's ``RuntimeError: Magnitude of gradient is bad: -nan``), is read as fairseq's ``gradients
are Nan/Inf`` is; and a header of single-spaced names that read as a program's (identifiers, one
with an underscore: fastai's table flattened to text) is a header."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def test_an_error_that_says_the_gradient_is_not_finite() -> None:
    assert [(e.kind, e.rule) for e in logs.parse(
        ["RuntimeError: Magnitude of gradient is bad: -nan"])] == [("fatal", "nonfinite-grad")]
    assert not [e for e in logs.parse(["RuntimeError: grad norm is 0.5"]) if e.kind == "fatal"]
    lines = ["Starting epoch 91"]
    lines += [f"Processing sentence number: {k}00 , Loss: {0.05 - k / 100:.4f} , Time: 12.89"
              for k in range(1, 4)]
    lines += ["Traceback (most recent call last):",
              '  File "_dynet.pyx", line 5733, in _dynet.Trainer.update',
              "RuntimeError: Magnitude of gradient is bad: -nan"]
    d = _both(lines)
    assert (d.verdict, d.check) == ("no-scaler", "nonfinite-grad-error")


def test_single_spaced_names_of_a_program_are_a_header() -> None:
    rows = [f"{k} {2.97 - 0.3 * k:.6f} {3.0 - 0.4 * k:.6f} {0.24 + 0.05 * k:.6f} 00:06"
            for k in range(4)]
    events = [e for e in logs.parse(["epoch train_loss valid_loss accuracy time"] + rows)
              if e.kind != "note"]
    assert [e.loss for e in events] == [float(r.split()[1]) for r in rows]
    assert _both(["epoch train_loss valid_loss accuracy time"] + rows).verdict == "healthy"
    # prose with an identifier in it: its words are not the rows' columns, so no row is read
    assert not [e for e in logs.parse(["the train_loss went up at epoch end"] + rows)
                if e.kind != "note"]
    assert not [e for e in logs.parse(["The train_loss went up, see epoch 3"] + rows)
                if e.kind != "note"]
