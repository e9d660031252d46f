"""Rules from the first runs of heldout163-168 (notations, not lines): a step or epoch word after
``Total``, ``Num``, ``Max``, ``Warmup`` or ``Accumulation`` names a setting of the run (Unsloth's and
the HF Trainer's start-up banners), not its progress; a traceback's header glued to the end of the
line before it (a progress bar ends with no newline) is read as a line of its own."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._notation import pairs


def test_totals_and_counts_of_steps_and_epochs_are_settings_not_progress() -> None:
    assert pairs("total batch size = 8 | total steps = 580") == {
        "total batch size": "8", "total steps": "580"}
    assert "num epochs" in pairs("num examples = 467 | num epochs = 5")
    assert "steps" not in pairs("batch size per device = 2 | gradient accumulation steps = 4")
    assert pairs("global steps = 580") == {"steps": "580"}     # (progress: no setting word)
    assert pairs("epoch 3 loss 0.5") == {"epoch": "3", "loss": "0.5"}
    banner = ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1",
              "   \\\\   /|    Num examples = 467 | Num Epochs = 5",
              "O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4",
              "\\        /    Total batch size = 8 | Total steps = 580",
              "  0%|          | 0/2900 [00:00<?, ?it/s]"]
    assert [e.rule for e in logs.parse(banner) if e.rule == "metrics"] == []    # (no progress)
    d = _both(banner)
    assert d.verdict == "unknown", d.reason


def test_a_traceback_header_glued_to_a_progress_bar_ends_the_run() -> None:
    bar = ("Steps:   0% 0/15000 [00:03<?, ?it/s, lr=0.0001, step_loss=0.126] "
           "Traceback (most recent call last):")
    frames = ['  File "train.py", line 798, in main',
              "    accelerator.clip_grad_norm_(params_to_clip, args.max_grad_norm)"]
    evs = list(logs.parse([bar, *frames]))
    assert [(e.kind, e.rule) for e in evs] == [("loss", "loss"), ("note", "traceback")]
    assert evs[0].loss == 0.126
    d = _both([bar, *frames])
    assert d.verdict == "unknown" and "traceback" in d.reason, d.reason
    # the header on a line of its own reads as before; a line that only names it is no header
    assert [e.rule for e in logs.parse(["Traceback (most recent call last):"])] == ["traceback"]
    assert [e.rule for e in logs.parse(["see the Traceback (most recent call last): above"])
            if e.kind == "note"] == []
