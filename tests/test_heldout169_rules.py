"""Rules from the first runs of heldout169-178 (notations, roles and a message kind, not lines): an
evaluation's measures of quality (PSNR, SSIM, LPIPS) count one by one, so one evaluation that
prints three of them shows the run where it shows; a traceback's ``raise`` statement is program
source, not a record; a header of identifiers keeps each as a column however it is spaced
(n2p2's ``epoch RMSEpa_Etrain_pu  RMSEpa_Etest_pu``); a GAN trainer's terms named without
``loss`` (``gen_gan``, ``perceptual``) are losses."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def test_one_evaluation_with_three_measures_is_finite_where_it_shows() -> None:
    line = "PSNR: 21.020, SSIM: 0.6344, LPIPS: 0.303 Time: 0.002s/image Number of GS: 605829"
    notes = [e for e in logs.parse([line]) if e.kind == "note"]
    assert [(e.rule, e.count) for e in notes] == [("metrics-unstepped", 3)]
    d = _both(["Running evaluation...", line, "Running trajectory rendering..."])
    assert d.verdict == "healthy", d.reason
    # one measure alone is too little to say anything of the run
    assert _both(["PSNR: 21.020"]).verdict == "unknown"
    # a block of one-field lines (right-aligned names) is one record of its measures
    block = ["PSNR :   11.0347091", "  SSIM :    0.4105126", "  LPIPS:    0.6871817"]
    assert sum(e.count or 0 for e in logs.parse(block) if e.kind == "note") == 3
    assert _both(block).verdict == "healthy"
    # a non-finite measure is no sign of health
    assert _both(["PSNR: nan, SSIM: 0.6344, LPIPS: 0.303"]).verdict != "healthy"


def test_a_raise_statement_in_a_traceback_is_source_not_a_record() -> None:
    tb = ["Traceback (most recent call last):",
          '  File "train_distilled_image.py", line 283, in train',
          "    raise RuntimeError('loss became NaN')",
          "RuntimeError: loss became NaN"]
    evs = list(logs.parse(tb))
    assert [(e.line_no, e.kind, e.rule) for e in evs if e.kind == "nan"] == [
        (4, "nan", "loss-became-nan")]
    d = _both(tb)
    assert d.verdict == "unknown", d.reason      # (when in the run: no record, no start)
    # the same words as output are a record
    assert [e.kind for e in logs.parse(["step 5 loss became nan"]) if e.kind == "nan"] == ["nan"]


def test_a_header_of_identifiers_keeps_one_column_each_however_spaced() -> None:
    rows = ["epoch RMSEpa_Etrain_pu  RMSEpa_Etest_pu   RMSE_Ftrain_pu    RMSE_Ftest_pu",
            "   0   3.68089707E-03   3.68151650E-03   3.59133943E-02   3.57132410E-02 ",
            "   1   7.52728841E-05   7.53545746E-05   4.70025592E-03   4.69005246E-03 ",
            "   2   5.88296966E-05   5.83460717E-05   4.43031439E-03   4.41829441E-03 "]
    evs = [e for e in logs.parse(rows) if e.kind == "loss"]
    assert [(e.epoch, e.loss) for e in evs] == [
        (0.0, 3.59133943e-02), (1.0, 4.70025592e-03), (2.0, 4.43031439e-03)]
    assert _both(rows).verdict == "healthy"
    # names with a space inside, aligned, stay whole
    aligned = ["Epoch  Train loss  Valid loss", "1      0.52        0.61", "2      0.41        0.55"]
    assert [e.loss for e in logs.parse(aligned) if e.kind == "loss"] == [0.52, 0.41]


def test_a_gan_trainers_terms_are_losses() -> None:
    """first-order-model (and its forks) write ``log.txt`` records of its GAN terms, ``name -
    value`` pairs with no ``loss`` in any name."""
    rows = [f"{k:08d}) perceptual - {144.0 - 3 * k:.5f}; gen_gan - 0.43809; feature_matching - "
            f"2.58715; equivariance_value - 0.32446; disc_gan - 0.38356" for k in range(4)]
    evs = [e for e in logs.parse(rows) if e.kind == "loss"]
    assert [e.loss for e in evs] == [144.0, 141.0, 138.0, 135.0]
    assert _both(rows).verdict == "healthy"
    bad = rows + ["00000004) perceptual - nan; gen_gan - nan; feature_matching - nan; "
                  "equivariance_value - nan; disc_gan - nan"]
    assert [e.kind for e in logs.parse(bad) if e.kind in ("loss", "nan")][-1] == "nan"
    # other names that end in ``gan`` are no loss: an organ, a slogan
    assert [e for e in logs.parse(["organ 3 slogan 4"]) if e.kind == "loss"] == []
