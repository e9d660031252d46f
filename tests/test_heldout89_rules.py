"""The general rules heldout89's to heldout92's first runs led to, each on lines of its own (not the
held-out files): spaCy v3's training table (a step column named ``#``) and a MetricLogger
evaluation header (``Test: [1/4]``) tagging its record as the evaluation's."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose
from fampnb.logs._vocab import role


def test_spacy_v3s_table_names_its_step_column_hash() -> None:
    assert role("#") == "step" and role("step#") == "step"
    head = ["E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
            "---  ------  ------------  --------  ------  ------  ------  ------"]
    rows = ["  0       0          0.00     40.00    9.57    6.09   22.33    0.10",
            "  0     200         35.70   2163.45   83.16   83.79   82.53    0.83",
            "  0     400         11.09   1182.04   88.91   89.03   88.78    0.89"]
    got = [(e.step, e.loss) for e in logs.parse(head + rows) if e.kind == "loss"]
    assert got == [(0, 40.0), (200, 35.7), (400, 11.09)]   # (a component at 0 is not the loss)
    assert _both(head + rows).verdict == "healthy"
    nan = rows + [f"  0     {s}           nan       nan    0.00    0.00    0.00    0.00"
                  for s in (600, 800, 1000)]
    assert _both(head + nan).verdict != "healthy"


def test_a_metric_logger_evaluation_header_tags_an_evaluation() -> None:
    lines = [f"[2025-04-08 21:06:54,711 INFO evaluator.py line 162 99145] Interp. Test: [{i}/4] "
             "Loss nan " for i in range(1, 5)]
    assert {e.rule for e in logs.parse(lines)} == {"eval-loss"}
    d = diagnose(logs.parse(lines))
    assert d.verdict == "unknown" and "validation loss is NaN on 4 record(s)" in d.reason
    assert _both(lines).verdict == "unknown"
    train = ["Epoch: [0]  [  10/500]  eta: 0:01:00  lr: 0.000100  loss: 2.3010 (2.3010)"]
    assert [e.rule for e in logs.parse(train) if e.kind == "loss"] != ["eval-loss"]
