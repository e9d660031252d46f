"""Rules from the first runs of heldout155-158 (notations, message kinds and judgements, not
lines): a value named with the iteration it was taken in (``Train RMSE in iter 0: nan``, ``loss
iter 0: 0.18``); an error saying the gradients are not finite with nothing before it to place it;
a NaN training loss beside a finite, moving evaluation; a NaN first record before the backoffs; a
format string's placeholder marking program source, and the step an error's "loss became NaN"
names."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb.logs._notation import pairs


def test_a_value_named_with_the_iteration_it_was_taken_in() -> None:
    """cuMF's ALS prints ``Train RMSE in iter 0: nan``: the value is the name's, the iteration the
    step's (as ``Average loss at step 2000: 4.36``); a training RMSE stands in for the loss."""
    assert pairs("--------- train rmse in iter 0: nan") == {"train rmse": "nan", "iter": "0"}
    assert pairs("average loss at step 2000: 4.36") == {"average loss": "4.36", "step": "2000"}
    # (auto-round names it with no word between: ``loss iter 0: 0.184206 -> iter 174: 0.094373``)
    assert pairs("quantized 7/7 layers in the block, loss iter 0: 0.184206 -> iter 174: 0.094373"
                 ) == {"loss": "0.184206", "iter": "0"}
    assert pairs("global step 100: loss 2.3") == {"global step": "100", "loss": "2.3"}
    lines = []
    for k in range(10):
        lines += [f"--------- Train RMSE in iter {k}: nan", f"--------- Test RMSE in iter {k}: nan"]
    d = _both(lines)
    assert d.verdict == "data" and d.first_nan_step == 0, d.reason
    fine = [f"--------- Train RMSE in iter {k}: {0.9 - k / 100:.3f}" for k in range(10)]
    assert _both(fine).verdict == "healthy"


def test_a_bad_gradient_error_with_nothing_before_it_is_not_placed() -> None:
    """DyNet's ``Magnitude of gradient is bad: inf`` (fairseq's ``gradients are Nan/Inf``) ends the
    run: alone, with no record and no start of training before it, the lines do not say whether
    that was at the start; after a start-up line it is the start, after records mid-run."""
    tb = ["Traceback (most recent call last):", '  File "train.py", line 956, in <module>',
          "    adam.update()", "RuntimeError: Magnitude of gradient is bad: inf"]
    d = _both(tb)
    assert d.verdict == "unknown" and "how far" in d.reason, d.reason
    assert _both(["Starting training"] + tb).verdict == "data"
    records = [f"epoch 1 iter {k} loss {3.0 - k / 10:.2f}" for k in range(1, 9)]
    assert _both(records + tb).verdict == "no-scaler"


def test_a_nan_training_loss_beside_a_moving_finite_evaluation_is_not_the_models() -> None:
    """Keras prints ``loss: nan - ... - val_loss: 0.2637`` epoch after epoch when the training
    loss is averaged wrongly across devices: the evaluation, finite and moving, shows finite
    weights.  An evaluation that stays at one value (held over, not evaluated again: dlib's
    ``test loss: 2.56974``, cellpose's ``test_loss=0.0000``) shows nothing, and a NaN evaluation
    beside it is the model's NaN."""
    bar = "469/469 ━━━━━━━━━━━━━━━━━━━━ 28s 45ms/step - loss: nan - acc: 0.1 - val_loss: {v} - val_acc: 0.9"
    moving = [line for k, v in enumerate(["0.3587", "0.2637", "0.2188"], 1)
              for line in (f"Epoch {k}/3", bar.format(v=v))]
    d = _both(moving)
    assert d.verdict == "unknown" and "evaluation loss beside it" in d.reason, d.reason
    held = [line for k in range(1, 4) for line in (f"Epoch {k}/3", bar.format(v="2.5697"))]
    assert _both(held).verdict == "data"
    nan_eval = [line for k in range(1, 4) for line in (f"Epoch {k}/3", bar.format(v="nan"))]
    assert _both(nan_eval).verdict == "data"


def test_a_nan_first_record_before_the_backoffs_is_the_data_case() -> None:
    """The first record's loss is already NaN (at learning rate 0), and then the scaler halves
    from 1024 down to 1 with no finite loss after: the scaler meets non-finite values at every
    scale (section 7: like a data case), not an overflow that a scale could fix.  The same
    backoffs after a finite start are an overflow."""
    backoffs = [f"Found inf or nan, current scale is: {2.0 ** k}, decrease to: {2.0 ** k}*0.5"
                for k in range(10, 0, -1)]
    first = "Epoch: [0 ] [  0/179] learning_rate: 0.000000 loss: nan loss_cls: 2.017496"
    d = _both([first] + backoffs)
    assert d.verdict == "data" and d.check == "nan-before-backoffs", d.reason
    fine = [f"Epoch: [0 ] [ {k}0/179] learning_rate: 0.0001 loss: {3 - k / 10:.3f}" for k in range(1, 6)]
    assert _both(fine + backoffs + [first.replace("[  0/179]", "[ 60/179]")]).verdict == "overflow"


def test_a_format_strings_placeholder_marks_program_source() -> None:
    """A traceback shows the ``raise`` line, ``f"Loss became infinite or NaN at
    iteration={self.iter}!"``: program source, not output (no NaN record from it); the message
    line after it, ``FloatingPointError: Loss became infinite or NaN at iteration=0!``, is a NaN
    at the step it names.  A dict printed as output (``{'loss': nan}``) is no placeholder."""
    from fampnb import logs

    src = '    f"Loss became infinite or NaN at iteration={self.iter}!\\n"'
    assert [e for e in logs.parse([src]) if e.kind != "note"] == []
    msg = "FloatingPointError: Loss became infinite or NaN at iteration=0!"
    d = _both([src])
    assert d.verdict == "unknown", d.reason
    d = _both([src, msg])
    assert d.verdict == "data" and d.first_nan_step == 0, d.reason
    late = [f"iter: {k}0  total_loss: {2 - k / 10:.2f}" for k in range(1, 9)]
    d = _both(late + [src, msg.replace("=0!", "=390!")])
    assert d.verdict != "data" and d.first_nan_step == 390, d.reason
    assert [e.kind for e in logs.parse(["{'loss': nan, 'epoch': 3.0}"])] == ["nan"]
    assert [e.kind for e in logs.parse(["step 3 {loss: nan, acc: 0.1}"])] == ["nan"]
    assert [e.kind for e in logs.parse(['print(f"step {step} loss {loss:.4f}")'])] == []
