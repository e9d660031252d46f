"""The general rules heldout125's to heldout128's first runs led to, each on lines of its own (not
the held-out files): an excerpt whose every loss record has a non-finite grad norm shows no
training going on (unknown, not healthy), unless the log states fp16, whose scaler skips such
steps while it calibrates; a message that an evaluation's loss is NaN (``Current val loss is
nan``) is the evaluation's; a NaN before the log names any step is where the steps that follow
it begin; and a header behind a ``#`` may part its names by single spaces."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both


def _dicts(rows: list[tuple[str, str]]) -> list[str]:
    return [f"{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': 4e-06, 'epoch': {0.01 * (k + 1):.2f}}}"
            for k, (loss, gn) in enumerate(rows)]


def test_records_that_all_have_a_nonfinite_grad_norm_are_not_healthy() -> None:
    only = _dicts([("2.3101", "nan")])
    d = _both(only)
    assert (d.verdict, d.check) == ("unknown", "bad-grad-only")
    assert _both(_dicts([("2.3101", "nan"), ("2.2987", "inf")])).verdict == "unknown"
    # a record with a finite grad norm shows training going on: skipped steps, as before
    assert _both(_dicts([("2.3101", "nan"), ("2.2987", "0.91"), ("2.1044", "0.87")])).verdict \
        == "healthy"
    # the log states fp16: its scaler skips non-finite steps while it calibrates
    assert _both(["fp16: True"] + only).check != "bad-grad-only"


def test_an_evaluation_loss_said_to_be_nan_is_the_evaluation_s() -> None:
    """``Current val loss is nan`` (a message's wording) beside finite training records: the
    evaluation's NaN, not a run-ending one."""
    from fampnb import logs

    assert [(e.kind, e.rule) for e in logs.parse(["Current val loss is nan"])] == [
        ("note", "eval-loss")]
    assert [e.kind for e in logs.parse(["loss is nan"])] == ["nan"]
    lines = [f"epoch 7 iter {1500 + k:5d}, loss: {0.55 - 0.001 * k:.3f}" for k in range(5)]
    lines += ["Validation per class iou: ", "car : nan%", "Current val loss is nan",
              "epoch 7 iter  1506, loss: 0.544"]
    assert _both(lines).verdict == "unknown"


def test_a_nan_before_the_first_named_step_is_where_the_steps_begin() -> None:
    """A window that starts inside a record (Caffe's output line before its ``Iteration N``
    line): the NaN is at the start only if the steps that follow begin there."""
    def caffe(first: int) -> list[str]:
        out = ["I0403 09:59:07.896572 38087 solver.cpp:259]     Train net output #0: mbox_loss = nan"
               " (* 1 = nan loss)"]
        for it in range(first, first + 40, 10):
            out += [f"I0403 09:59:25.406322 38087 solver.cpp:243] Iteration {it}, loss = nan",
                    "I0403 09:59:25.406674 38087 solver.cpp:259]     Train net output #0: "
                    "mbox_loss = nan (* 1 = nan loss)"]
        return out

    assert _both(caffe(870)).verdict != "data"
    assert _both(caffe(0)).verdict == "data"


def test_a_commented_header_parts_its_names_by_single_spaces() -> None:
    """Caffe's ``parse_log.sh`` writes ``#Iters Seconds TrainingLoss LearningRate`` over rows of
    aligned numbers (numpy's ``savetxt`` and gnuplot data comment their header the same way)."""
    from fampnb import logs

    rows = [f"{20 * k:<4d} {3.0 + 55.8 * k:<12.6f} {1.2 - 0.01 * k:<9.6g} 0.0001" for k in range(12)]
    rows += ["240  672.909704   nan       0.0001", "260  728.026581   nan       0.0001"]
    events = [e for e in logs.parse(["#Iters Seconds TrainingLoss LearningRate"] + rows)
              if e.kind != "note"]
    assert [e.step for e in events][:3] == [0, 20, 40] and events[-1].kind == "nan"
    assert _both(["#Iters Seconds TrainingLoss LearningRate"] + rows).verdict == "no-scaler"
    # uncommented, single-spaced names stay prose: the rows under them are numbers under no name
    # (``test_bare_rows``), not values of those names
    assert {e.rule for e in logs.parse(["Iters Seconds TrainingLoss LearningRate"] + rows[:3])
            if e.kind != "note"} == {"bare-row"}
