"""The general rules heldout109's to heldout112's first runs led to, each on lines of its own (not
the held-out files): an evaluation's summary without a step (measures of quality, every one
finite, no loss anywhere) shows what it shows of the run: healthy there; a value beyond
``ASTRONOMICAL`` beside such measures is no healthy one."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs

SUMMARY = ["test_Accuracy = 0.6976743936538696", "test_CohenKappa = 0.31783050298690796",
           "test_F1 = 0.6536316871643066", "test_Recall = 0.6494898200035095",
           "auc = 0.7441326379776001"]


def test_an_evaluations_summary_without_a_step_is_healthy_where_it_shows() -> None:
    d = _both(SUMMARY)
    assert (d.verdict, d.check) == ("healthy", "metrics-only"), d.reason
    assert "no training step" in d.reason
    assert {e.rule for e in logs.parse(SUMMARY)} == {"metrics-unstepped"}
    table = ["            hp_metric                     0.7555411331847474",
             "   test/student/event_f1_macro            0.234224334359169",
             "test/student/intersection_f1_macro        0.6208451326131922",
             "   test/teacher/event_f1_macro           0.24510306119918823",
             "test/teacher/intersection_f1_macro        0.6308451326131922"]
    assert _both(table).verdict == "healthy"
    # too few measures, a NaN among them, or an error after them: not healthy
    assert _both(SUMMARY[:2]).verdict == "unknown"
    assert _both(SUMMARY + ["test_Specificity = nan"]).verdict != "healthy"
    assert _both(SUMMARY + ["Traceback (most recent call last):",
                            '  File "eval.py", line 3, in <module>',
                            "RuntimeError: CUDA error: device-side assert triggered"]).verdict \
        != "healthy"


def test_start_up_numbers_are_no_measures_and_astronomical_values_no_health() -> None:
    config = ["batch_size = 32", "num_workers = 8", "seed = 42", "image_size = 224"]
    assert _both(config).verdict == "unknown"
    blown = [f"After {n} sequences: TokenAcc = {a}%   objective = {o}"
             for n, a, o in ((62000, 97.49, -8.45), (63000, 97.49, -8.56), (65000, 19.01, -8.6e29))]
    assert "metrics-nonfinite" in {e.rule for e in logs.parse(blown)}
    assert _both(blown).verdict != "healthy"
    assert _both(blown[:2] + blown[:1]).verdict == "healthy"
