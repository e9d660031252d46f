"""The general rules heldout37's to heldout57's first runs led to, each on lines of its own (not the
held-out files): the negative log-likelihood spelled out is a loss, an aligned table whose column
names carry ``%`` and whose full-width values leave one space, an evaluation's NaN with no
training record at all, a loss history of ``(step, value)`` pairs, a ``|`` table printed through a
logger, Chinese prints (full-width punctuation, Chinese names), a value printed as a tuple, a record
wrapped right after its key, non-finite grad norms at a static scale of 1, the first epoch's
summary as the start, tinygrad's value-first fields, IPython's traceback header, an astronomical
finite loss, Deeplearning4j's score lines, a key ending in ``#``, a CUDA device-side assertion and
a trainer's NaN guard."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import role


def _records(lines: list[str]) -> list[tuple[str, float | None]]:
    return [(e.kind, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_the_negative_log_likelihood_spelled_out_is_a_loss() -> None:
    for name in ("negative loglikelihood", "negative log likelihood", "negative log-likelihood",
                 "neg_log_likelihood"):
        assert role(name) == "loss", name
    assert role("log likelihood") is None        # (higher is better: not a loss)
    lines = [f"Epoch:0-{i}/469, Negative loglikelihood: {9806.5 - i:.4f}" for i in range(3)]
    assert _records(lines) == [("loss", 9806.5), ("loss", 9805.5), ("loss", 9804.5)]
    assert _both(lines).verdict == "healthy"
    nan = [f"epoch {i} | negative log-likelihood: {v}" for i, v in enumerate(["2.31", "nan", "nan"])]
    assert _both(nan).verdict == "data"


def test_an_aligned_table_with_percent_columns_and_full_width_values() -> None:
    head = "Itn.  Dep Loss  NER Loss  UAS     Tag %   Token %  CPU WPS"
    rows = ["0     12.500    3.000     0.000   100.000 100.000  349.7",
            "1     10.250    2.500     40.000  99.500  100.000  350.1"]
    assert _records([head, *rows]) == [("loss", 12.5), ("loss", 10.25)]
    assert _both([head, *rows]).verdict == "healthy"
    # a row with a cell too few, even split at every space, is still no record
    assert _records([head, "0     12.500    3.000     0.000   100.000 100.000"]) == []


def test_an_evaluation_nan_alone_says_no_training_record_is_there() -> None:
    block = ["***** eval metrics *****", "  epoch                     =     3.0",
             "  eval_loss                 =     nan", "  eval_runtime              = 72.1865"]
    d = _both(block)
    assert d.verdict == "unknown"
    assert "evaluation" in d.reason and "no training record" in d.reason
    assert "0 event(s) read" not in d.reason


def test_a_loss_history_of_step_value_pairs_is_a_record_each() -> None:
    line = ("INFO flwr 2024-01-02 10:00:00,000 | app.py:221 | app_fit: losses_distributed "
            "[(1, 2.3012), (2, 2.1034), (3, 1.9876)]")
    events = [e for e in logs.parse([line]) if e.kind in ("loss", "nan")]
    assert [(e.step, e.loss, e.explicit) for e in events] == [
        (1, 2.3012, True), (2, 2.1034, True), (3, 1.9876, True)]
    assert _both([line]).verdict == "healthy"
    late = ("app_fit: losses_centralized [" + ", ".join(f"({i}, {2.0 - i / 100:.4f})"
                                                         for i in range(200)) + ", (200, nan)]")
    assert [e.step for e in logs.parse([late]) if e.kind == "nan"] == [200]
    # a list of pairs under a name without a loss role is no record
    assert _records(["app_fit: metrics_centralized {'accuracy': [(0, 0.1), (1, nan)]}"]) == []


def test_a_table_printed_through_a_logger_reads_under_its_header() -> None:
    pre = "[ INFO : 2023-07-06 07:55:{:02d},898 ] - "
    lines = [pre.format(0) + "+----------+----------+----------+----------+",
             pre.format(0) + "|     Epoch|     Batch|        Lr|      Loss|",
             pre.format(0) + "+----------+----------+----------+----------+",
             pre.format(1) + "|         3|       200|   0.52112|    5.2225|",
             pre.format(2) + "|         3|       300|   0.54052|       nan|"]
    recs = _records(lines)
    assert [k for k, _ in recs] == ["loss", "nan"] and recs[0][1] == 5.2225
    steps = [(e.step, e.explicit) for e in logs.parse(lines) if e.kind in ("loss", "nan")]
    assert steps == [(200, True), (300, True)]
    assert _both(lines).verdict != "healthy"
    # the rows alone, their header outside the window: numbers under no name, whose first
    # non-finite number (else the first after the counters) is the record's (``test_bare_rows``)
    assert [k for k, _ in _records(lines[3:])] == ["loss", "nan"]


# ---- Chinese prints (heldout42's threads; heldout13's ``训练次数：100, Loss：1.98``) ----------
def test_full_width_punctuation_separates_fields_as_ascii_does() -> None:
    from fampnb.logs._notation import lower

    line = "Epoch 1，Loss：2.3100；lr＝0.01"
    assert lower(line) == "epoch 1,loss:2.3100;lr=0.01" and len(lower(line)) == len(line)
    assert _records([line, "Epoch 2，Loss：nan"])[0] == ("loss", 2.31)
    assert _both(["Epoch 1，Loss：2.31", "Epoch 2，Loss：2.12", "Epoch 3，Loss：2.05"]).verdict == "healthy"


def test_chinese_names_have_their_roles() -> None:
    assert [role(k) for k in ("损失", "训练损失", "验证集损失", "训练次数", "轮次", "学习率")] == [
        "loss", "loss", "loss", "step", "epoch", "lr"]
    lines = ["-------第 1 轮训练开始------", "训练次数：100, 损失：1.98", "训练次数：200, 损失：1.75",
             "整体测试集上的Loss: 262.6", "-------第 2 轮训练开始------", "训练次数：300, 损失：nan",
             "训练次数：400, 损失：nan"]
    events = [e for e in logs.parse(lines) if e.kind in ("loss", "nan", "note")]
    assert [(e.kind, e.step, e.explicit, e.epoch) for e in events] == [
        ("loss", 100, True, 1), ("loss", 200, True, 1), ("note", 200, False, 1),
        ("nan", 300, True, 2), ("nan", 400, True, 2)]
    assert events[2].rule == "eval-loss"          # the test set's loss: an evaluation's
    assert _both(lines).verdict != "healthy"


# ---- heldout44 and heldout45 -------------------------------------------------------------------
def test_a_tuple_of_numbers_is_read_as_a_list_is() -> None:
    lines = [f"[{i:02d}] loss: ({0.045 - i / 1000:.6f}, {0.031 - i / 2000:.6f}) f1: (0.000, 0.000)"
             for i in range(4)]
    recs = _records(lines)
    assert [k for k, _ in recs] == ["loss"] * 4 and abs(recs[0][1] - 0.038) < 1e-9
    assert _both(lines).verdict == "healthy"
    assert [k for k, _ in _records(["[00] loss: (0.0451, nan)"])] == ["nan"]
    # a value followed by a bracketed running mean is still the value (maskrcnn-benchmark)
    assert _records(["loss: 0.5 (0.6)  loss_cls: 0.2 (0.3)"]) == [("loss", 0.5)]


def test_a_record_wrapped_right_after_its_key_is_joined() -> None:
    pre = "[rank0]:[titan] 2026-07-16 11:20:4{}, - root - INFO - step:  {}  loss:"
    lines = []
    for i, (loss, gn) in enumerate([("7.98820", "3.7762"), ("6.08364", "4.2124"), ("5.5", "2.1")]):
        lines += [pre.format(i, i + 1), f"{loss}  grad_norm:  {gn}  memory:  3.87GiB(2.17%)  tps: 1,578",
                  "tflops: 0.86  mfu: N/A"]
    recs = [(e.step, e.loss, e.grad_norm) for e in logs.parse(lines) if e.kind == "loss"]
    assert recs == [(1, 7.9882, 3.7762), (2, 6.08364, 4.2124), (3, 5.5, 2.1)]
    assert _both(lines).verdict == "healthy"
    # a line ending in a key that is no loss, scale or grad norm is not held for the next
    assert [(e.line_no, e.loss) for e in logs.parse(["eta:", "0.5 loss: 1.2"])] == [(2, 1.2)]


def test_non_finite_grad_norms_at_a_static_scale_of_one_are_not_healthy() -> None:
    rec = ["iteration {}/50 | elapsed time per iteration: 21392.5 ms |",
           "learning rate: 1.350000E-04 | global batch size: 4096 |",
           "loss scale: 1.0 | grad norm: nan |",
           "number of skipped iterations: 0 | number of nan iterations: 0", ""]
    lines = [ln.format(i) for i in (5, 6) for ln in rec]
    assert _both(lines).verdict == "unknown"
    # a dynamic scale that moves is the scaler at work: not this rule's case
    moving = ["loss scale: 65536.0 | grad norm: nan |", "loss scale: 32768.0 | grad norm: nan |"]
    assert "skipped for a non-finite" not in _both(moving).reason


def test_the_first_epochs_summary_is_the_start_however_many_batches_it_counts() -> None:
    bar = "124/124 [==============================] - 72s 582ms/step - loss: {} - val_loss: {}"
    first = ["Training model...", "Epoch 1/50", bar.format("nan", "nan"), "Epoch 2/50",
             bar.format("nan", "nan")]
    assert _both(first).verdict == "data"
    # a NaN first seen in the second epoch's summary is not the start
    later = ["Epoch 1/50", bar.format("0.5123", "0.4981"), "Epoch 2/50", bar.format("nan", "nan"),
             "Epoch 3/50", bar.format("nan", "nan")]
    assert _both(later).verdict != "data"
    # nor is a bar 800 batches into the first epoch (not its summary: the counter decides)
    mid = ["Epoch 1/50", " 800/1240 [==================>...........] - ETA: 40s - loss: nan"]
    assert _both(mid).verdict != "data"


def test_a_loss_written_value_first_among_comma_fields() -> None:
    line = ("    {} 4158.77 ms run,   77.01 ms python,   0.43 ms fetch data, 4081.33 ms AMD * 8,  "
            "{} loss, 0.000571 LR, 1038.57 GB used,  85881.58 GFLOPS")
    lines = [line.format(i, v) for i, v in enumerate(["0.69", "0.68", "0.66"])]
    assert _records(lines) == [("loss", 0.69), ("loss", 0.68), ("loss", 0.66)]
    assert _both(lines).verdict == "healthy"
    assert [k for k, _ in _records([line.format(0, "nan")])] == ["nan"]
    # a number before the word loss in prose, not a comma field, is no record
    assert _records(["we saw a 2.5 loss spike at step 10 and went on"]) == []


def test_a_notebooks_traceback_header_ends_the_run_as_pythons_does() -> None:
    bar = "Epoch 2:  71%|███████   | 10815/15299 [06:41<02:46, 26.91it/s, Loss: {}]"
    head = ["Epoch 1: 100%|██████████| 15299/15299 [09:31<00:00, 26.77it/s, Loss: 1.6120]",
            bar.format("1.4837"), "-" * 75]
    tb = ["RuntimeError                              Traceback (most recent call last)",
          "/scratch/x/ipykernel_1/11.py in <module>", "---> 25  start_run(config_file=cfg)"]
    d = _both(head + tb)
    assert d.verdict == "unknown" and "traceback" in d.reason
    # Ctrl-C in a notebook is no failure
    ctrl_c = ["KeyboardInterrupt                         Traceback (most recent call last)"]
    assert _both(head + ctrl_c).verdict == "healthy"


def test_an_astronomical_finite_loss_is_no_healthy_run() -> None:
    line = " {}/50000: episode: {}, duration: 5.514s, episode reward: -752.191, loss: {}, mean_q: -3.0e10"
    lines = [line.format(11000 + 100 * k, 81 + k, x) for k, x in enumerate(["3.6e23", "2.1e24", "6.1e25"])]
    d = _both(lines)
    assert (d.verdict, d.check) == ("unknown", "loss-astronomical"), d.reason
    # a large loss that is still a loss (a summed CRF likelihood, 1.8e7 at the start) is not this
    big = [line.format(11000 + 100 * k, 81 + k, x) for k, x in enumerate(["1.8e7", "9.1e6", "4.2e6"])]
    assert _both(big).verdict == "healthy"


def test_deeplearning4j_scores_and_a_key_with_a_number_sign() -> None:
    dl4j = "09:54:{:02d}.023 [main] INFO  o.d.o.l.ScoreIterationListener - Score at iteration {} is {}"
    lines = [dl4j.format(i, 20 * i, x) for i, x in enumerate(["2.3025", "2.1011", "1.9876", "1.8"])]
    events = [e for e in logs.parse(lines) if e.kind in ("loss", "nan")]
    assert [(e.step, e.loss, e.explicit) for e in events] == [
        (0, 2.3025, True), (20, 2.1011, True), (40, 1.9876, True), (60, 1.8, True)]
    assert _both(lines).verdict == "healthy"
    assert _both([dl4j.format(i, 20 * i, "NaN") for i in range(3)]).verdict == "data"
    # dlib's ``step#:``: the key's number sign is no part of its name
    dlib = "step#: {}  learning rate: 0.1   train loss: {}      test loss: 2.56974"
    recs = [(e.step, e.explicit) for e in logs.parse([dlib.format(15853, "1.57"), dlib.format(15873, "inf")])
            if e.kind in ("loss", "nan")]
    assert recs == [(15853, True), (15873, True)]


def test_a_cuda_device_assertion_ends_the_run_as_a_traceback_does() -> None:
    recs = [f"cellbender:remove-background: [epoch {k:03d}]  average training loss: {1600 - 2 * k:.4f}"
            for k in range(30, 35)]
    cuda = ("/opt/conda/work/aten/src/ATen/native/cuda/Distributions.cu:290: lambda [](int, float &)->auto: "
            "block: [0,0,0], thread: [96,0,0] Assertion `0 <= p4 && p4 <= 1` failed.")
    d = _both(recs + [cuda])
    assert (d.verdict, d.check) == ("unknown", "traceback-ends-log"), d.reason
    # a Python assert in the user's code is not a kernel's
    assert _both(recs + ["assert x > 0, 'Assertion `x` failed'"]).verdict == "healthy"


def test_a_trainers_nan_guard_says_when_it_noticed_not_when_the_nan_began() -> None:
    warn = "WARNING ⚠️ Loss NaN/Inf detected (attempt 1/3), recovering from last.pt..."
    events = [e for e in logs.parse([warn]) if e.kind == "nan"]
    assert [e.rule for e in events] == ["nan-detected"]
    # alone, with no start of training in the window: not "from the start"
    assert _both([warn, "Traceback (most recent call last):"]).verdict == "unknown"
    # where the window shows the start of training, a NaN noticed right after it is the start's
    assert _both(["Start training", warn]).verdict == "data"
