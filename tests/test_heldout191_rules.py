"""Rules from the first runs of heldout189-199 (notations, roles and message kinds, not lines):
the evaluation rows of gradient-boosting libraries (XGBoost's ``[N]<tab>train-gamma-nloglik:nan``,
CatBoost's ``N:<tab>learn: …<tab>test: …``) name their losses and steps; a value glued to the
next name is two fields (CatBoost's ``learn nanpassed: 17.5 sec``); a best value so far at
infinity is where its search starts (LightGBM's ``best gain: -inf``), not a value of the run;
fastText's ``Encountered NaN.`` says the loss went NaN, and ends the run; a value named after the
step it was taken at (``Cost after iteration 1000: 0.62``) is that step's; DeepSpeed's skip counter
printed unchanged after a backoff (``step=650, skipped=10`` after ``skipped=10``) shows that the
steps since went through, and so does one that rose by no more than the overflow records printed
since while the step moved on further: the scale held; a record that names a scaler's settings
(``loss_scale_window``, ``initial_scale_power``) is its configuration, whose ``loss_scale`` is no
scale in force; a row of Lightning's model summary (``1 | loss_fn | CrossEntropyLoss | 0``) is no
record, nor is a traceback's source line (``tsne = TSNE(perplexity=30)``)."""

from __future__ import annotations

import math
from pathlib import Path

from doctor_helpers import diagnose_both as _both

from fampnb import logs


def _losses(lines: list[str]) -> list[tuple[int | None, float]]:
    return [(e.step, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_xgboost_negative_log_likelihood_is_a_loss() -> None:
    rows = [f"[{i}]\ttrain-gamma-nloglik:nan" for i in range(6)]
    got = _losses(rows)
    assert [s for s, _ in got] == list(range(6)) and all(math.isnan(x) for _, x in got)
    assert _both(rows).verdict == "data"
    finite = [f"[{i}]\ttrain-poisson-nloglik:{2.5 - i / 10:.5f}" for i in range(6)]
    assert [x for _, x in _losses(finite)] == [2.5 - i / 10 for i in range(6)]
    assert _both(finite).verdict == "healthy"


def test_catboost_learn_is_the_training_loss() -> None:
    rows = [f"{i}:\tlearn: {0.95 - i / 1000:.7f}\ttest: 0.8235312\tbest: 0.8356368 (1)\t"
            f"total: {17 + i}.5s\tremaining: 1h 39m 38s" for i in range(30, 40)]
    got = _losses(rows)
    assert [s for s, _ in got] == list(range(30, 40))
    assert got[0][1] == 0.92
    assert _both(rows).verdict == "healthy"


def test_a_best_value_at_infinity_is_no_nonfinite_measure() -> None:
    lines = []
    for i in range(38, 44):
        lines += [f"[LightGBM] [Info] {0.2 + i / 1000:.6f} seconds elapsed, finished iteration {i}",
                  "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf",
                  f"[LightGBM] [Info] Iteration:{i + 1}, valid_1 auc : {0.81 + i / 10000:.6f}"]
    assert not [e for e in logs.parse(lines) if e.rule == "metrics-nonfinite"]
    assert _both(lines).verdict == "healthy"
    # a measure that is not finite still is one, and a best value that is NaN is no start value
    assert [e.rule for e in logs.parse(["Iteration:39, valid_1 auc : nan"])] == ["metrics-nonfinite"]
    assert [e.rule for e in logs.parse(["Iteration:39, auc: 0.8, best auc: nan"])] == [
        "metrics-nonfinite"]


def test_fasttext_encountered_nan_is_a_nan_loss() -> None:
    log = ["Read 2M words", "Number of words:  360860", "Number of labels: 25272",
           "Progress:   12.4% words/s:   1441702 lr:  0.875922 loss: 118.363022 eta:   0h 0m"
           "terminate called after throwing an instance of 'std::runtime_error'",
           "  what():  Encountered NaN.terminate called recursively", "Aborted (core dumped)"]
    evs = [(e.line_no, e.kind, e.rule) for e in logs.parse(log) if e.kind == "nan"]
    assert evs == [(5, "nan", "fasttext-nan-loss")]
    # (the message ends the run: it says when the run stopped, not that the NaN came at the start)
    assert _both(log).verdict == "no-scaler"
    # (not a count of NaN values: ``encountered nan.5`` is no sentence's end)
    assert not [e for e in logs.parse(["encountered nan.5 times"]) if e.kind == "nan"]


def test_a_value_glued_to_the_next_name_is_two_fields() -> None:
    rows = [f"{61 + i}:     learn 0.12{i}1191019passed: 17.7 sec      total: 20m 5{i}s  "
            f"remaining: 12m 50s" for i in range(4)]
    rows += [f"{65 + i}:     learn nanpassed: 17.5 sec       total: 22m {i}s   remaining: 11m"
             for i in range(4)]
    got = _losses(rows)
    assert [s for s, _ in got] == list(range(61, 69))
    assert got[0][1] == 0.1201191019 and all(math.isnan(x) for _, x in got[4:])
    assert _both(rows).verdict == "no-scaler"
    # a word that merely holds ``nan`` or digits is left whole
    assert logs._notation.pairs("financial: 3, mp3files: 4, policy inference: 6.1") == {
        "financial": "3", "mp3files": "4", "policy inference": "6.1"}


def test_a_value_named_after_its_step() -> None:
    log = ["Cost after iteration 0: inf"] + [f"Cost after iteration {k}000: {0.62 - k / 100:.4f}"
                                             for k in range(1, 15)]
    got = _losses(log)
    assert got[0][0] == 0 and math.isinf(got[0][1])
    assert [s for s, _ in got[1:]] == [k * 1000 for k in range(1, 15)]
    assert _both(log).verdict == "healthy"     # (an infinite first cost that training leaves)
    assert _both([f"Cost after epoch {k}: {x}" for k, x in
                  enumerate([0.7, 0.6, 0.5, 0.4, "nan", "nan", "nan", "nan"])]).verdict != "healthy"


DS_CHAT = (Path(__file__).parent / "data" / "heldout190"
           / "deepspeed-chat-sft-periodic-overflow-at-ceiling_DeepSpeedExamples_step1-opt-1.3b.log")


def test_a_skip_counter_unchanged_after_a_backoff_shows_the_scale_held() -> None:
    lines = DS_CHAT.read_text(encoding="utf-8").splitlines()
    held = [e.line_no for e in logs.parse(lines) if e.rule == "ds-counter-held"]
    assert held[:3] == [3, 8, 10] and 18 not in held and 20 in held   # (line 18: 6 -> 8)
    # the window cut at the first backoff: nothing shows that it held
    assert _both(lines[:17]).verdict == "unknown"
    # the next counter rose by the two overflow records (6 -> 8) while the step moved on by ten
    # (500 -> 510): the other eight steps went through
    assert _both(lines[:18]).verdict == "healthy"
    # a counter that rose by more than the overflow records printed says nothing of the sort
    more = lines[:17] + [lines[17].replace("skipped=8", "skipped=9")]
    assert _both(more).verdict == "unknown"
    # the second backoff starts from 65536 again: the scale grew back, and holds
    d = _both(lines)
    assert d.verdict == "healthy" and "2 backoff" in d.reason, d.reason


def test_deepspeed_progress_lines_read_fast_as_in_full(monkeypatch) -> None:
    """``_rules.DS_LINE`` reads DeepSpeed's progress lines by their counter alone: the events
    are the ones the full reading gives, on every stored log that prints such a line."""
    from fampnb.logs import _rules

    root = Path(__file__).parent.parent
    paths = sorted(p for folder in (root / "tests" / "data", root / "fampnb" / "data")
                   for p in folder.rglob("*.log") if b"skipped=" in p.read_bytes())
    fast = 0
    for p in paths:
        text = p.read_text(encoding="utf-8", errors="replace").splitlines()
        fast += sum(1 for line in text if _rules.DS_LINE.fullmatch(line.lower()))
        monkeypatch.setattr(_rules, "FAST_DS", True)
        a = [repr(e) for e in logs.parse(text)]       # (repr: a NaN is not equal to itself)
        monkeypatch.setattr(_rules, "FAST_DS", False)
        b = [repr(e) for e in logs.parse(text)]
        assert a == b, p.name
    assert len(paths) >= 15 and fast >= 50       # (the fast reading was exercised)


def test_a_scalers_configuration_is_no_scale_in_force() -> None:
    config = ['    "fp16": {', '        "enabled": true, ', '        "loss_scale": 0, ',
              '        "loss_scale_window": 1000, ', '        "initial_scale_power": 9, ',
              '        "hysteresis": 1', '    }, ']
    assert not [e for e in logs.parse(config) if e.scale_after is not None]
    records = [f"epoch: 0|step: {i}|ppo_ep: 1|act_loss: 0.3{i}|cri_loss: 2.3{i}|unsuper_loss: 0.0"
               for i in range(6)]
    assert _both(config + records).verdict == "healthy"
    # a scale printed without the settings beside it is the scale in force
    assert [e.scale_after for e in logs.parse(['    "loss_scale": 0.5, ', '    "step": 10'])
            if e.scale_after is not None] == [0.5]


def test_a_model_summary_row_is_no_record() -> None:
    summary = ["  | Name     | Type               | Params | Mode ",
               "--------------------------------------------------------",
               "0 | encoder  | EfficientNet       | 52.9 M | train",
               "1 | loss_fn  | CrossEntropyLoss   | 0      | train",
               "2 | accuracy | MulticlassAccuracy | 0      | train"]
    assert list(logs.parse(summary)) == []
    assert list(logs.parse(["1 | loss_fn | CrossEntropyLoss | 0"])) == []   # (older Lightning)
    # a row of values under no class name is still read
    assert [e.loss for e in logs.parse(["3 | val | loss | 0.52"])] == [0.52]


def test_a_tracebacks_source_line_is_no_record() -> None:
    tb = ["[t-SNE] Mean sigma: 1125899906842624.000000",
          "Traceback (most recent call last):",
          '  File "main.py", line 33, in <module>',
          "    tsne = TSNE(n_components=2, perplexity=30, verbose=2).fit_transform(X)",
          '  File "train.py", line 12, in step',
          "    loss = 0.0; step = 5"]
    assert [e.kind for e in logs.parse(tb) if e.kind in ("loss", "nan")] == []
    assert _both(tb).verdict == "unknown"
    # the same text outside a traceback is read
    assert [e.loss for e in logs.parse(["perplexity=30"])] == [30.0]
    # a source line that checks for NaN is still read as one (``AssertionError`` after it)
    check = ["Traceback (most recent call last):", '  File "train.py", line 80, in <module>',
             "    assert not torch.isnan(loss)", "AssertionError"]
    assert [e.kind for e in logs.parse(check) if e.kind == "nan"] == ["nan"]
