"""Two notations the doctor read wrongly before, each on lines written for the purpose: YOLO's
epoch table (its loss columns ``box obj cls total`` are named bare under a ``gpu_mem`` column, and
its ``36/299`` column is the epoch), and ranks that print their own loss records and disagree
(``[rank0]:`` NaN for good while ``[rank1]:`` stays finite: each rank's records are its own
series, so the interleaved records are not one NaN that came and went)."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs

HEAD = "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size"
BAR = ": 100%|██████████| 313/313 [02:11<00:00,  2.38it/s]"
VAL = ("                 all        640       4000      0.412      0.377      0.351      0.178")




def _row(epoch: int, box: str, obj: str, cls: str, total: str, header: str = HEAD) -> list[str]:
    return [header, f"{epoch:>10}/299     3.47G {box:>9} {obj:>9} {cls:>9} {total:>9}"
                    f"        55       640{BAR}", VAL]


# ---- YOLO's epoch table --------------------------------------------------------------------
def test_yolo_loss_columns_are_read_as_a_record_with_its_epoch() -> None:
    events = list(logs.parse(_row(36, "nan", "0.01516", "0", "nan")))
    nan = [e for e in events if e.kind == "nan"]
    assert len(nan) == 1 and nan[0].epoch == 36
    events = list(logs.parse(_row(3, "0.09899", "0.06524", "0.03543", "0.1997")))
    assert [(e.kind, e.loss, e.epoch) for e in events] == [("loss", 0.1997, 3)]


def test_yolo_components_without_a_total_give_the_non_finite_one() -> None:
    head = "     Epoch   gpu_mem       box       obj       cls    labels  img_size"
    row = f"      5/99     2.64G   0.04211       nan   0.01122         4       416{BAR}"
    events = [e for e in logs.parse([head, row]) if e.kind in ("loss", "nan")]
    assert [e.kind for e in events] == ["nan"] and events[0].epoch == 5


def test_yolo_nan_after_good_epochs_is_not_the_start_of_training() -> None:
    lines = []
    for ep in range(30, 36):
        lines += _row(ep, "0.03", "0.02", "0.01", "0.06")
    for ep in range(36, 39):
        lines += _row(ep, "nan", "nan", "nan", "nan")
    d = _both(lines)
    assert d.verdict not in ("healthy", "data"), d.reason
    assert d.first_nan_line == 6 * 3 + 2


def test_yolo_nan_in_the_first_epoch_is_data() -> None:
    assert _both(_row(0, "nan", "nan", "nan", "nan")).verdict == "data"


def test_bare_box_obj_cls_columns_elsewhere_are_not_losses() -> None:
    # the same names without YOLO's gpu_mem column are nobody's loss: no record under them; the
    # row is numbers the vocabulary names nothing, read as such (``test_bare_rows``: its NaN is
    # the row's, at the epoch that leads it), not as box/obj/cls losses
    head = "     epoch       box       obj       cls    labels"
    row = "         3   0.04211       nan   0.01122         4"
    assert [(e.rule, e.step) for e in logs.parse([head, row]) if e.kind in ("loss", "nan")] == [
        ("bare-row", 3)]
    assert [e for e in logs.parse([head, row.replace("nan", "0.9")])
            if e.kind in ("loss", "nan") and e.rule != "bare-row"] == []


# ---- ranks that disagree -------------------------------------------------------------------
def _ranks(bad: list[str], good: list[str], start: int = 100) -> list[str]:
    lines = []
    for i, (b, g) in enumerate(zip(bad, good)):
        step = start + 100 * i
        lines += [f"[rank0]: step {step} loss {b} lr 1e-4", f"[rank1]: step {step} loss {g} lr 1e-4"]
    return lines


def test_a_rank_that_stays_nan_is_read_on_its_own() -> None:
    good = ["2.31", "2.29", "2.27", "2.25", "2.24", "2.22"]
    d = _both(_ranks(["2.30", "2.28", "nan", "nan", "nan", "nan"], good))
    assert d.verdict == "no-scaler", d.reason        # NaN mid-run, for good, on rank 0
    assert d.first_nan_step == 300
    said = " ".join(d.caveats)
    assert "rank(s) 0 show a NaN loss, rank(s) 1 do not" in said and "rank 0's own records" in said


def test_a_rank_with_one_transient_nan_stays_healthy() -> None:
    good = ["2.31", "2.29", "2.27", "2.25", "2.24", "2.22"]
    d = _both(_ranks(["2.30", "2.28", "nan", "2.26", "2.25", "2.23"], good))
    assert d.verdict == "healthy", d.reason


def test_scaler_messages_of_another_rank_count_for_the_rank_read() -> None:
    good = ["2.31", "2.29", "2.27", "2.25", "2.24", "2.22", "2.21"]
    bad = ["2.30", "2.28", "2.27", "2.26", "nan", "nan", "nan"]
    lines = _ranks(bad, good)
    cascade = [f"[rank1]: Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to "
               f"{2.0 ** k}" for k in range(9, -3, -1)]
    lines[8:8] = cascade       # the halvings come between step 400 and the first NaN
    d = _both(lines)
    assert d.verdict == "overflow", d.reason
    assert d.backoffs == len(cascade)


def test_ranks_that_agree_are_read_as_one_run() -> None:
    d = _both(_ranks(["2.30", "nan", "nan"], ["2.31", "nan", "nan"]))
    assert not any("ranks disagree" in c for c in d.caveats)
