"""Rules from the first runs of heldout145-148 (each a notation, a role or a message kind, not a
line): two decimals split by ``/`` hold a value, EDSR names its loss by its kind (``[L1: 5.96]``),
and a NaN before the first step or epoch is placed by the epoch that follows it."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb.logs._notation import pairs
from fampnb.logs._vocab import role


def test_two_decimals_split_by_a_slash_hold_the_first_as_the_value() -> None:
    """``PSNR/SSIM: 33.85/0.92`` (an evaluation's pair, a dataset's ``33.8534/0.0000``) holds a
    value; ``iter 0/88`` stays a counter (whole numbers), read by the step rules."""
    assert pairs("psnr/ssim: 33.85/0.92") == {"psnr/ssim": "33.85"}
    assert pairs("iter: 10000, siddsrgbvalidationdataset: 33.8534/0.0000") == {
        "iter": "10000", "siddsrgbvalidationdataset": "33.8534"}
    assert "iter" not in pairs("iter 0/88 loss 1.25")
    d = _both([f"2022-10-17, 11:46:34  iter: {k}0000, SIDDSrgbValidationDataset: 3{k}.8534/0.0000"
               for k in range(1, 9)])
    assert d.verdict == "healthy", d.reason


def test_edsr_names_its_loss_by_its_kind() -> None:
    """EDSR and its descendants (RCAN, HAN, HRAN, ...) print ``[1600/16000]\\t[L1: 5.9633]``: the
    L1 loss, the record's loss."""
    assert role("l1") == "loss"
    bar = "[Epoch 26]\tLearning rate: 1.00e-4"
    d = _both([bar] + [f"[{k * 1600}/16000]\t[L1: {5.9 + k / 100:.4f}]\t65.8+0.4s" for k in range(1, 9)])
    assert d.verdict == "healthy" and d.losses, d.reason
    d = _both(["[Epoch 1]\tLearning rate: 1.00e-4"]
              + [f"[{k * 1600}/16000]\t[L1: nan]\t65.8+0.4s" for k in range(1, 6)])
    assert d.first_nan_line == 2 and d.verdict != "healthy", d.reason


def test_a_nan_before_the_first_epoch_named_is_placed_by_that_epoch() -> None:
    """A window that starts inside a record (the loss terms printed before ``EP 42 ( 75) |
    loss: nan``): the epoch that follows says the NaN is not at the start of training."""
    lines = []
    for batch in (75, 150, 225):
        lines += ["2022-05-17 16:12:20,277:   (loss terms) l1 nan, cont nan, var nan",
                  f"2022-05-17 16:12:24,159: EP 42 ({batch:3d}) |  32m 55s, 1139 samples/s | loss: nan,"]
    d = _both(lines)
    assert d.verdict != "data", d.reason
    d = _both([line.replace("EP 42", "EP 1") for line in lines])
    assert d.verdict == "data", d.reason


def test_losses_named_by_capital_letters_are_the_records_losses() -> None:
    """lucidrains' GAN bars (``G: 1.51 | D: 0.21 | GP: 0.00 | PL: 0.00``), yolact's meter (``B:
    4.292 | C: 2.520 | ... | T: 12.029``) and PytorchSSD's ``L: nan C: nan``: two or more names of
    one or two capitals, on a line that names no loss otherwise, are its losses.  Case decides
    (``g: 1.5 d: 0.2`` names nothing), and capitals that name other things do not count."""
    bars = [f"0% {k * 49}/90000 [02:46<81:43:57,  3.27s/it]G: {2.0 - k / 10:.2f} | D: 0.05 | "
            f"GP: 0.50 | PL: 0.02" for k in range(1, 6)]
    d = _both(bars)
    assert d.verdict == "healthy" and len(d.losses) == 5, d.reason
    ssd = [f"Epoch:1 || epochiter: {k * 10}/150|| Totel iter {k * 10} || L: nan C: nan||"
           f"Batch time: 0.4946 sec. ||LR: 0.00001000" for k in range(4)]
    assert _both(ssd).verdict == "data"
    assert _both([b.replace("G:", "g:").replace("D:", "d:").replace("GP:", "gp:").replace("PL:", "pl:")
                  for b in bars]).verdict == "unknown"
    coords = [f"step {k} X: nan Y: nan" for k in range(1, 6)]     # a point, not two losses
    assert _both(coords).losses == []
    named = [f"it {k} | loss: {1.0 - k / 10:.2f} | G: nan | D: 0.3" for k in range(1, 6)]
    assert _both(named).verdict == "healthy"    # the loss is named: the capitals stay what they are
