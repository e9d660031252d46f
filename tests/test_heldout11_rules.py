"""The general rules heldout11's misses led to, each on lines of its own (not the held-out files):
progress updates glued on one line (their carriage returns lost in a paste), and the epoch column
that starts a YOLO training row."""

from __future__ import annotations

import io

from fampnb import logs
from fampnb.diagnose import diagnose


def _events(lines: list[str]) -> list[logs.Event]:
    full = list(logs.parse(lines))
    fast = list(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert [e.to_dict() for e in fast] == [e.to_dict() for e in full]
    return full


def _keras(i: int, m: int, loss: str) -> str:
    bar = "=" * (30 * i // m) + "." * (30 - 30 * i // m)
    return f"{i:3d}/{m} [{bar}] - ETA: 1:{i:02d}:00 - loss: {loss} - acc: 0.10"


# ---- several progress updates on one physical line --------------------------------------------
def test_glued_keras_updates_are_one_record_each() -> None:
    line = "Epoch 1/5 " + " ".join(_keras(i, 400, "nan" if i > 1 else "2.3026") for i in range(1, 5))
    recs = [(e.kind, e.step, e.line_no) for e in _events([line]) if e.kind in ("loss", "nan")]
    assert recs == [("loss", 1, 1), ("nan", 2, 1), ("nan", 3, 1), ("nan", 4, 1)]


def test_glued_tqdm_updates_are_one_record_each() -> None:
    parts = [f"train:  {10 * i}%|{'#' * i}{' ' * (10 - i)}| {i}/10 [00:0{i}<00:0{10 - i},  1.00it/s, "
             f"loss={'nan' if i > 2 else f'{1.0 / i:.3f}'}]" for i in range(1, 5)]
    recs = [(e.kind, e.step) for e in _events([" ".join(parts)]) if e.kind in ("loss", "nan")]
    assert recs == [("loss", 1), ("loss", 2), ("nan", 3), ("nan", 4)]


def test_a_line_with_two_different_counters_is_not_cut() -> None:
    # an epoch counter and a batch counter of other totals: one record, not two
    line = "epoch 3/10 [==>...] batch 120/400 [00:10<00:30] loss 0.512"
    assert [(e.kind, e.loss) for e in _events([line]) if e.kind == "loss"] == [("loss", 0.512)]


def test_one_update_per_line_is_unchanged() -> None:
    lines = [_keras(i, 50, f"{2.0 / i:.4f}") for i in range(1, 11)]
    assert [e.step for e in _events(lines) if e.kind == "loss"] == list(range(1, 11))


# ---- YOLO's epoch column ----------------------------------------------------------------------
STOP = "WARNING: non-finite loss, ending training  tensor([nan, nan, nan, nan])"

def _yolo(epoch: int, epochs: int, batch: int, tail: str = "") -> str:
    return (f"    {epoch:>3}/{epochs}     5.12G   0.04012   0.01523   0.01002   0.06537        88       640:"
            f"  50%|█████     | {batch}/40 [00:10<00:10,  2.00it/s]{tail}")


def test_the_yolo_row_names_its_epoch() -> None:
    lines = [_yolo(41, 299, b) for b in (10, 20)]
    lines.append(_yolo(41, 299, 21, STOP))
    evs = [e for e in _events(lines) if e.kind in ("loss", "nan")]
    assert evs and all(e.epoch == 41 for e in evs)
    # a NaN in epoch 41 is not "NaN from the start of training", whatever its batch counter says
    assert diagnose(logs.parse(lines)).verdict != "data"


def test_a_yolo_row_of_the_first_epoch_can_still_be_the_start() -> None:
    lines = [_yolo(0, 299, 1, STOP)]
    evs = [e for e in _events(lines) if e.kind == "nan"]
    assert evs and evs[0].epoch == 0
