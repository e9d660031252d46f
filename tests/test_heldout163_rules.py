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


def test_a_headerless_csv_print_with_tensor_cells_is_a_bare_row() -> None:
    """A user's ``print(f"{step},{loss},{a},{b}")`` without its header: a counter, then numbers
    split by commas, a scalar tensor printed as ``tensor(1.4541)`` among them."""
    rows = ["994,tensor(1.4541),0.3743850642442703,0.42320576310157776",
            "1988,tensor(1.4568),0.3762083804607391,0.3572617173194885",
            "2000,tensor(nan),0.37433584868907926,0.3778816759586334"]
    evs = [e for e in logs.parse(rows) if e.kind in ("loss", "nan")]
    assert [(e.rule, e.step, e.loss) for e in evs[:2]] == [
        ("bare-row", 994, 1.4541), ("bare-row", 1988, 1.4568)]
    assert evs[2].kind == "nan" and evs[2].step == 2000
    assert _both(rows[:2]).verdict == "healthy"
    # two numbers are not enough to call a line a record; nor is a list of whole numbers
    assert [e for e in logs.parse(["0, 11.2299", "1,300,000"]) if e.kind in ("loss", "nan")] == []


def test_ultralytics_results_csv_reads_under_its_header_with_training_losses_first() -> None:
    """Ultralytics' ``results.csv`` names a column ``metrics/mAP50-95(B)`` (a number inside a name,
    no value) and holds training and validation losses side by side: the record's loss is the
    training split's, and a NaN only under ``val/`` is the evaluation's."""
    head = ("epoch, train/box_loss, train/cls_loss, train/dfl_loss, metrics/precision(B), "
            "metrics/mAP50-95(B), val/box_loss, val/cls_loss, lr/pg0")
    rows = [f"{k}, {1.1 - k / 20:.4f}, {4.0 / k:.4f}, 1.0164, 0.5, 0.3, nan, nan, 0.0033"
            for k in range(1, 7)]
    evs = [e for e in logs.parse([head, *rows]) if e.kind in ("loss", "nan")]
    assert [e.kind for e in evs] == ["loss"] * 6
    assert evs[0].loss == 1.05
    d = _both([head, *rows])
    assert d.verdict == "unknown" and "validation" in d.reason, d.reason
    finite = [r.replace("nan, nan", "0.9, 0.8") for r in rows]
    assert _both([head, *finite]).verdict == "healthy"


def test_segmentation_models_pytorch_names_its_values_with_a_dash() -> None:
    """segmentation_models.pytorch's epoch bars print ``name - value`` pairs in the postfix
    (``bce_dice_loss - -3.208e+03, iou - 1.163``): the dash parts a name from its value."""
    assert pairs("bce_dice_loss - -3.208e+03, iou - 1.163, f-score - 0.9803") == {
        "bce_dice_loss": "-3.208e+03", "iou": "1.163", "f-score": "0.9803"}
    assert pairs("epoch 3/10 - 12s - loss: 0.5 - acc: 0.9") == {"loss": "0.5", "acc": "0.9"}
    bars = [f"train: 100%|##########| 40/40 [00:06<00:00,  7.23it/s, dice_loss - {x}, "
            f"iou_score - 0.3]" for x in ("0.5312", "0.4811", "nan", "nan")]
    evs = [e for e in logs.parse(bars) if e.kind in ("loss", "nan")]
    assert [e.kind for e in evs] == ["loss", "loss", "nan", "nan"]
    assert evs[0].loss == 0.5312
