"""The general rules heldout73's to heldout76's first runs led to, each on lines of its own (not the
held-out files): BasicSR's ``l_`` loss names, a step counted in groups of three digits (``iter:
25,377``), a line that opens with ``eval:`` as an evaluation's record, a step's records counted
once when a trainer prints its loss twice (Caffe), the Microsoft C runtime's NaN spellings
(``1.#QNAN000``, ``-1.#IND00``) and a loss per sample (CNTK's ``TrainLossPerSample``)."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._notation import number
from fampnb.logs._vocab import role


def _records(lines: list[str]) -> list[tuple[str, int, float | None]]:
    return [(e.kind, e.step, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def _basicsr(it: int, fields: str) -> str:
    return (f"2023-06-15 21:08:{it % 60:02d},450 INFO: [train..][epoch:  0, iter: {it:>9,d}, "
            f"lr:(2.000e-04,)] [eta: 5 days, 8:38:06, time (data): 0.699 (0.005)] {fields} ")


def test_basicsr_names_its_losses_l_() -> None:
    for name in ("l_pix", "l_g_pix", "l_g_gan", "l_d_real", "l_feat_encoder", "l_total"):
        assert role(name) == "loss", name
    for name in ("l2", "lr", "l_1", "val"):      # (``l1`` is a loss by its own name: EDSR's
        assert role(name) != "loss", name         # ``[L1: 5.96]``, tests/test_heldout145_rules.py)
    calm = [_basicsr(it, f"l_pix: {v}") for it, v in ((70400, "-2.8745e+01"), (70600, "-2.9588e+01"),
                                                     (70800, "-2.8007e+01"))]
    assert _records(calm) == [("loss", 70400, -28.745), ("loss", 70600, -29.588),
                              ("loss", 70800, -28.007)]
    assert _both(calm).verdict == "healthy"
    nan = [_basicsr(1 + i, "l_g_pix: nan l_g_percep: nan cross_entropy_loss: 2.2916e+00")
           for i in range(4)]
    assert [k for k, _, _ in _records(nan)] == ["nan"] * 4
    assert _both(nan).verdict == "data"


def test_a_count_may_be_written_in_groups_of_three_digits() -> None:
    lines = [_basicsr(it, f"l_g_pix: {v}") for it, v in ((25377, "0.0078"), (25378, "0.0091"),
                                                        (1025379, "0.0085"))]
    assert [s for _, s, _ in _records(lines)] == [25377, 25378, 1025379]
    assert [s for _, s, _ in _records(["step 3,14 loss 0.5", "Step: 1,000 loss: 0.4"])] == [3, 1000]


def test_a_line_opening_with_eval_and_a_colon_is_an_evaluation() -> None:
    lines = ["global step 13800 learning rate 0.4851 step-time 0.18 perplexity 1.01",
             "  eval: bucket 0 perplexity 8992400.69",
             "  eval: bucket 1 perplexity 23779421.72",
             "global step 14000 learning rate 0.4851 step-time 0.18 perplexity 1.02",
             "  eval: bucket 0 perplexity 9992400.69"]
    assert [s for _, s, _ in _records(lines)] == [13800, 14000]
    assert _both(lines).verdict == "healthy"
    assert [e.rule for e in logs.parse(["valid: loss nan"])] == ["eval-loss"]


def test_records_of_one_step_count_once() -> None:
    lines = ["I0712 12:10:37.058244  3123 solver.cpp:228] Iteration 0, loss = 2.46876",
             "I0712 12:10:37.058358  3123 solver.cpp:244]     Train net output #0: loss = 2.46876 "
             "(* 1 = 2.46876 loss)",
             "I0712 12:10:37.058405  3123 sgd_solver.cpp:106] Iteration 0, lr = 0.01",
             "I0712 12:10:45.123456  3123 solver.cpp:228] Iteration 20, loss = 2.40112",
             "I0712 12:10:45.123500  3123 solver.cpp:244]     Train net output #0: loss = 2.40112 "
             "(* 1 = 2.40112 loss)",
             "I0712 12:18:40.334496  3123 solver.cpp:228] Iteration 40, loss = -nan",
             "I0712 12:18:40.334661  3123 solver.cpp:244]     Train net output #0: loss = -nan "
             "(* 1 = -nan loss)"]
    # the third step's NaN is at the start of training, however many lines its steps printed
    assert _both(lines).verdict == "data"


def test_the_microsoft_c_runtime_spellings_are_non_finite() -> None:
    import math

    for text in ("1.#QNAN000", "-1.#IND00", "1.#QNAN", "-1.#qnan"):
        assert math.isnan(number(text.lower())), text
    assert number("1.#inf000") == math.inf and number("-1.#inf") == -math.inf
    assert role("trainlosspersample") == "loss" and role("loss per token") == "loss"
    lines = [f" Epoch[ 1 of 1]-Minibatch[{i * 500 + 1:4d}-{i * 500 + 500:4d}]: SamplesSeen = 500; "
             f"TrainLossPerSample = {v}; EvalErr[0]PerSample = 0.276; TotalTime = 2.76s"
             for i, v in enumerate([" 5.87155566", " 1.#QNAN000", "-1.#IND00", " 1.#QNAN000"])]
    assert [k for k, _, _ in _records(lines)] == ["loss", "nan", "nan", "nan"]
    assert _both(lines).verdict == "data"
