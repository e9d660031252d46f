"""The general rules heldout69's to heldout72's first runs led to, each on lines of its own (not the
held-out files): a key with a parenthesised qualifier (``loss train (curr): 1.657``), Open MPI's
rank prefix (``[1,0]<stderr>:``), ranks whose interleaved losses only look like an explosion, an
aligned table row that is a progress bar's description (its last cell ends in ``:``), and a
record's loss among components of which some are exactly 0."""

from __future__ import annotations

import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose
from fampnb.logs._vocab import pick_loss


def _records(lines: list[str]) -> list[tuple[str, float | None]]:
    return [(e.kind, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_a_key_may_carry_a_parenthesised_qualifier() -> None:
    lines = [f"Ep 1 | iter {i} | step {i}: loss train (curr): {v}, val (prev val iter): None | "
             f"iter time: 298.27 ms" for i, v in enumerate(["1.657", "1.506", "1.610"], 1)]
    assert _records(lines) == [("loss", 1.657), ("loss", 1.506), ("loss", 1.61)]
    assert _both(lines).verdict == "healthy"
    nan = lines + [f"Ep 1 | iter {i} | step {i}: loss (curr): nan | iter time: 101.2 ms"
                   for i in range(4, 8)]
    assert [k for k, _ in _records(nan)][3:] == ["nan"] * 4
    assert _both(nan).verdict != "healthy"
    assert _records(["epoch 2 | loss(avg)=0.5"]) == [("loss", 0.5)]
    # a qualifier needs its ``:`` or ``=``; a time stays a time
    assert _records(["time (ms): 12.5", "loss (curr) 1.25 of the run"]) == []


def _horovod(rank0: list[str], rank1: list[str]) -> list[str]:
    out = []
    for a, b in zip(rank1, rank0):
        out.append(f"[1,1]<stderr>:INFO:tensorflow:cross_entropy = {a}, learning_rate = 0.0139 "
                   "(7.317 sec)")
        out.append(f"[1,0]<stderr>:INFO:tensorflow:cross_entropy = {b}, learning_rate = 0.0139 "
                   "(7.314 sec)")
    return out


def test_open_mpi_tag_output_names_the_rank() -> None:
    lines = _horovod(["3936.8564"], ["3.2162714"])
    assert [(e.rank, e.loss) for e in logs.parse(lines)] == [(1, 3.2162714), (0, 3936.8564)]
    assert [e.rank for e in logs.parse(["[1,12]<stdout>:loss = 0.5"])] == [12]


def test_ranks_printing_losses_of_different_sizes_are_read_apart() -> None:
    calm = _horovod(["3936.8", "8630.3", "10853.7", "19648.4"], ["3.2", "3.4", "11.1", "3.98"])
    d = _both(calm)
    assert d.verdict == "healthy"
    assert any("ranks 0, 1" in c for c in diagnose(logs.parse(calm)).caveats)
    # interleaved without rank prefixes the same values read as an explosion
    assert diagnose(logs.parse([line.split(":", 1)[1] for line in calm])).verdict != "healthy"
    # a rank whose own series explodes is still read as exploding
    blown = _horovod(["3.1", "3.0", "9000.5", "12000.2"], ["3.2", "3.4", "3.3", "3.1"])
    assert _both(blown).verdict != "healthy"


def test_a_table_row_may_be_a_progress_bars_description() -> None:
    head = "     Epoch  iou_loss  dfl_loss  cls_loss"
    lines = []
    for i, v in enumerate(["0.5756", "0.1631", "0.1029"]):
        lines += [head, f"      {i}/99         0         0    {v}: 100%|██████████| 106/106 "
                        "[00:17<00:00,", ""]
    assert _records(lines) == [("loss", 0.5756), ("loss", 0.1631), ("loss", 0.1029)]
    assert _both(lines).verdict == "healthy"
    nan = [head, "      0/99       0.3       0.2    nan: 100%|██████████| 106/106 [00:17<00:00,"]
    assert [k for k, _ in _records(nan)] == ["nan"]


def test_a_component_at_exactly_zero_is_not_the_records_loss() -> None:
    assert pick_loss({"iou_loss": 0.0, "dfl_loss": 0.0, "cls_loss": 0.5756}) == 0.5756
    assert pick_loss({"iou_loss": 0.0, "dfl_loss": 0.0}) == 0.0
    assert math.isnan(pick_loss({"iou_loss": 0.0, "cls_loss": math.nan}) or 0.0)
    assert pick_loss({"loss": 0.0, "loss_cls": 0.3}) == 0.0      # a total is the total
    zero = [f"step {i} | box_loss 0.0000e+00 | cls_loss 0.0000e+00" for i in range(1, 6)]
    assert all(e.exact_zero for e in logs.parse(zero))
    assert _both(zero).verdict != "healthy"
