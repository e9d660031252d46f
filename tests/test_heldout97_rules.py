"""The general rules heldout97's to heldout100's first runs led to, each on lines of its own (not the
held-out files): a value named with the step it was taken at, names of four words, a tqdm bar's
percentage after its description, ``>>`` between a name and its value, a column named
``Train(loss)``, MXNet's ``Train-`` prefix, a perplexity above any vocabulary, records of other
values only (no loss), and a traceback after the run said it finished training."""

from __future__ import annotations

import math

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import role


def _records(lines: list[str]) -> list[tuple[int, float]]:
    return [(e.step, e.loss) for e in logs.parse(lines)
            if e.kind in ("loss", "nan") and e.loss is not None]


def test_a_value_named_with_the_step_it_was_taken_at() -> None:
    lines = [f"2021-12-29 12:36:19 INFO     Training average loss at step {s}: {19.2 - s / 1000:.4f}"
             for s in (0, 100, 200)]
    assert _records(lines) == [(0, 19.2), (100, 19.1), (200, 19.0)]
    (e,) = logs.parse(["Average loss at batch 100: nan, \tthroughput: 571 samples/sec"])
    assert e.kind == "nan" and e.step == 100 and e.explicit


def test_a_name_of_four_words() -> None:
    lines = [f"2023-09-29 20:{m}:01,559 backprop done, loss after forward pass = 1.{m}8"
             for m in (16, 18, 21)]
    assert [x for _, x in _records(lines)] == [1.168, 1.188, 1.218]
    assert _both(lines).verdict == "healthy"


def test_a_tqdm_bars_percentage_after_its_description_is_no_value() -> None:
    bar = ("train loss:   5%|\u258c         | 8000/145652 [00:00<00:11, 11976.12ex/s, cont=0, "
           "loss={x}, reg=0]")
    got = [x for _, x in _records([bar.format(x="9"), bar.format(x="nan")])]
    assert got[0] == 9.0 and math.isnan(got[1])     # (not the 5 of ``5%|``)
    assert [e.loss for e in logs.parse(["train loss:   0%|          | 0/145652 [00:00<?, ?ex/s]"])
            if e.kind == "loss"] == []


def test_double_angle_brackets_separate_a_name_from_its_value() -> None:
    lines = []
    for ep in (250, 260, 270):
        lines += [f"-- EPOCH {ep} (13.588 seconds per epoch):",
                  f"COST >> 0.58{ep % 7} +/- 0.0275, % updates: 28.603%"]
    got = [e for e in logs.parse(lines) if e.kind == "loss"]
    assert [e.loss for e in got] == [0.585, 0.581, 0.584] and got[0].epoch == 250
    assert _both(lines).verdict == "healthy"


def test_a_column_named_for_its_split_with_the_measure_in_parentheses() -> None:
    lines = ["Epoch\tTrain(loss)\tValid(MRR)\tTest(MRR)"] + [
        f"{k}\t0.{k + 2}8557111\t0.21563877\t0.21695131" for k in range(4)]
    assert [x for _, x in _records(lines)] == [0.28557111, 0.38557111, 0.48557111, 0.58557111]
    assert _both(lines).verdict == "healthy"


def test_mxnets_train_prefix_and_a_perplexity_above_any_vocabulary() -> None:
    assert role("train-perplexity") == "ppl" and role("train-accuracy") is None
    line = "04:38:54 INFO:Epoch[0] Batch [{b}]       Speed: 31.41 samples/sec        Train-Perplexity={p}"
    big = [line.format(b=b, p="10000000000.010738") for b in (50, 100, 150)]
    d = _both(big)
    assert d.verdict == "unknown" and "perplexity reaches 1e+10" in d.reason
    assert _both([line.format(b=b, p=f"{300 - b:.3f}") for b in (50, 100, 150)]).verdict == "healthy"


def test_records_of_other_values_only_are_healthy_where_they_show() -> None:
    rows = [f"Iter: {k}0000 PSNR: 22.{k}5 NRays:  5312 IPS: 39.1 LR: 0.0010" for k in range(1, 5)]
    d = _both(rows)
    assert (d.verdict, d.check) == ("healthy", "metrics-only"), d.reason
    kgat = []
    for ep in range(1, 4):
        kgat += [f"CF + KG Training: Epoch {ep:04d} | Total Time 451.1s",
                 f"CF Evaluation: Epoch {ep:04d} | Total Time 119.1s | Precision 0.0138 Recall 0.13"]
    assert _both(kgat).verdict == "healthy"
    assert _both(rows[:2]).verdict == "unknown"          # (two records: too few to tell)
    assert _both(rows + ["Iter: 50000 PSNR: nan NRays:  5312"]).verdict != "healthy"
    assert _both(rows + ["Traceback (most recent call last):",
                         '  File "train.py", line 5, in <module>']).verdict != "healthy"


def test_a_traceback_after_the_run_said_it_finished_is_not_the_trainings() -> None:
    lines = [f"{s}: vae loss: 1.0{s % 9} - discr loss: 1.99" for s in (121000, 122000, 123000)]
    tb = ["Resuming VAE from:  other/vae.23000.base.pt", "Traceback (most recent call last):",
          '  File "muse_train.py", line 352, in <module>', "AssertionError"]
    assert _both(lines + tb).verdict == "unknown"                        # (stopped: cause unseen)
    assert _both(lines + ["training complete"] + tb).verdict == "healthy"
    assert _both(lines + ["Epoch 3 training complete"] + tb).verdict == "unknown"
