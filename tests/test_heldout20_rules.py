"""The general rules heldout20's and heldout21's misses led to, each on lines of its own (not the
held-out files): a bracketed ``[N/M]`` step counter (torchvision's MetricLogger and its kin), the
step of an aligned table row that goes on with its progress bar (and YOLO's silent GradScaler), a
loss printed as 0 while the gradients flow, and a loss that explodes without a NaN printed."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def _records(lines: list[str]) -> list[tuple[str, int, int | None, float | None]]:
    return [(e.kind, e.step, e.total, e.loss) for e in logs.parse(lines)
            if e.kind in ("loss", "nan")]


# ---- [N/M] counters -------------------------------------------------------------------------
def _metric_logger(epoch: int, it: int, total: int, loss: str) -> str:
    return (f"Epoch: [{epoch}]  [{it:>4}/{total}]  eta: 0:10:00  lr: 0.000100  loss: {loss} "
            f"({loss})  loss_cls: 0.5000 (0.5000)  time: 0.3000  data: 0.0100  max mem: 4000")


def test_a_bracketed_counter_is_the_step_but_not_an_epochs() -> None:
    assert _records([_metric_logger(0, 40, 500, "2.5000")]) == [("loss", 40, 500, 2.5)]
    assert _records(["[120/90000] lr: 0.01 train_loss: 1.25"]) == [("loss", 120, 90000, 1.25)]
    # an epoch's own counter is no step: the record keeps its line number
    assert _records(["Epoch [7/100] loss: 0.75", "epoch: [8/100] loss: 0.5"]) == [
        ("loss", 1, None, 0.75), ("loss", 2, None, 0.5)]


def test_a_nan_check_right_after_the_first_iteration_is_at_the_start() -> None:
    d = _both([_metric_logger(0, 0, 800, "4.1000"), "Loss is nan, stopping training",
               "{'loss_cls': tensor(nan, device='cuda:0')}"])
    assert d.verdict == "data", d.reason


# ---- a table row with its progress bar -------------------------------------------------------
def _yolo_row(batch: int, loss: str) -> str:
    return (f"      3/99     4.12G    {loss}    0.0500    0.0200       12       640:  40%|####  "
            f"| {batch}/5000 [10:00<15:00,  3.10it/s]")


def test_a_table_row_takes_its_step_from_the_bar_after_it() -> None:
    head = "     Epoch   gpu_mem       box       obj       cls    labels  img_size"
    ev = [e for e in logs.parse([head, _yolo_row(2000, "0.0400"), _yolo_row(2001, "nan")])
          if e.kind in ("loss", "nan")]
    assert [(e.kind, e.step) for e in ev] == [("loss", 2000), ("nan", 2001)]
    # YOLO's train.py runs torch.cuda.amp's GradScaler, which never prints: a NaN mid-epoch with
    # no stated precision cannot tell a hidden overflow from bf16/fp32
    assert {e.framework for e in ev} == {"torch"}
    d = _both([head] + [_yolo_row(2000 + k, "0.0400") for k in range(4)]
              + [_yolo_row(2004 + k, "nan") for k in range(3)])
    assert d.verdict == "unknown", d.reason


# ---- a loss printed as 0 ---------------------------------------------------------------------
def _hf(loss: float, gn: float, epoch: float) -> str:
    return f"{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': 1e-05, 'kl': 0.0004, 'epoch': {epoch}}}"


def test_a_zero_loss_whose_gradients_flow_is_no_underflow() -> None:
    flowing = _both([_hf(0.0, 0.09 + k / 100, 0.1 * (k + 1)) for k in range(5)])
    assert flowing.verdict == "healthy", flowing.reason
    # the same records with no gradient: the loss and gradients underflowed, or nothing trains
    stuck = _both([_hf(0.0, 0.0, 0.1 * (k + 1)) for k in range(5)])
    assert stuck.verdict == "unknown" and stuck.check == "loss-became-zero", stuck.reason


# ---- an exploded loss ------------------------------------------------------------------------
def _step(step: int, loss: float) -> str:
    return f"step: {step}  loss: {loss:.4f}  lr: 0.001"


def test_a_loss_that_explodes_and_stays_up_is_no_health() -> None:
    mid = _both([_step(1000 + 50 * k, 0.5 - k / 100) for k in range(6)]
                + [_step(1300, 9.2e4), _step(1350, 3.1e7), _step(1400, 8.8e9)])
    assert mid.verdict == "no-scaler" and mid.check == "loss-explodes", mid.reason
    start = _both([_step(0, 2.3), _step(20, 7.7e12), _step(40, 6.1e15)])
    assert start.verdict == "data" and start.check == "loss-explodes", start.reason


def test_a_spike_that_falls_back_or_stays_small_is_not_an_explosion() -> None:
    recovering = _both([_step(1000 + 50 * k, 0.05) for k in range(6)]
                       + [_step(1300, 4.0e7), _step(1350, 2.0e10), _step(1400, 9.0e4)])
    assert recovering.verdict == "healthy", recovering.reason
    small = _both([_step(1000 + 50 * k, 1e-5) for k in range(6)] + [_step(1300, 0.2)])
    assert small.verdict == "healthy", small.reason


# ---- heldout23: evaluation lines, summaries, aligned tables with lists ------------------------
def test_a_line_that_opens_with_an_evaluation_tag_is_the_evaluations() -> None:
    ev = [e for e in logs.parse(["Valid Epoch: 3 Loss: nan: 100%|##########| 60/60 [00:04<00:00]",
                                 "Test Epoch: 3 loss: 0.25"]) if e.loss is not None]
    assert [(e.kind, e.rule) for e in ev] == [("note", "eval-loss"), ("note", "eval-loss")]
    # a NaN on every evaluation while training stays finite: the evaluation's NaN
    lines = []
    for ep in range(5):
        lines += [f"Train Epoch: {ep} Loss: {0.9 - ep / 20:.4f}: 100%|######| 900/900 [00:53<00:00]",
                  f"Valid Epoch: {ep} Loss: nan: 100%|######| 60/60 [00:04<00:00]"]
    d = _both(lines)
    assert d.verdict == "unknown" and d.check == "eval-nan-only", d.reason


def test_a_best_so_far_is_no_record() -> None:
    assert _records(["Min_val_loss: 10000000000.0", "best_loss: 0.31", "lowest loss: 0.2"]) == []
    assert _records(["min_lr: 0.001 loss: 0.5"]) == [("loss", 1, None, 0.5)]


def test_a_log_of_finite_evaluations_only_is_healthy() -> None:
    d = _both([f"eval epoch: {k}, loss: {120 - k:.4f}, acc: 0.9" for k in range(1, 8)])
    assert d.verdict == "healthy", d.reason


def test_an_aligned_table_with_spaced_names_and_lists_of_loss_terms() -> None:
    head = "Step      Train loss                Test loss                 Test metric"
    rows = [f"{s:<10}[{a:.2e}, {b:.2e}]    [{a:.2e}, {b:.2e}]    []  "
            for s, a, b in ((0, 5.1, 0.7), (1000, 2.2, 0.3), (2000, 1.1, 0.1))]
    ev = [e for e in logs.parse([head, *rows]) if e.kind in ("loss", "nan")]
    assert [(e.step, round(e.loss, 3)) for e in ev] == [(0, 2.9), (1000, 1.25), (2000, 0.6)]
    nan = f"{3000:<10}[nan, 1.00e-01]    [nan, 1.00e-01]    []  "
    d = _both([head, *rows, nan, nan.replace("3000", "4000")])
    assert d.first_nan_step == 3000 and d.verdict != "healthy", d.reason
