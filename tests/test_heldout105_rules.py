"""The general rules heldout105's to heldout108's first runs led to, each on lines of its own (not
the held-out files): a regression error (RMSE, MSE, MAE) standing in for a loss that is not
printed; MXNet's ``Batch [a-b]`` counter and ``cross-entropy`` metric; and two messages that carry
a NaN by their words (PyTorch Ignite's ``TerminateOnNan``, ``torch.distributions``' argument
check)."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._vocab import pick_loss, role


def test_a_regression_error_stands_in_for_a_loss_not_printed() -> None:
    for name in ("rmse_train", "RMSE_train", "rmse_e_trn", "Validation RMSE", "val_mae", "mse",
                 "mean_squared_error", "train_mae"):
        assert role(name.lower()) == "error", name
    for name in ("mse_loss", "msec", "maestro", "error", "time_error_count"):
        assert role(name) != "error", name
    # a loss, where one is printed, is the record's loss; the training split's error otherwise
    assert pick_loss({"loss": 0.5, "mse": float("nan")}) == 0.5
    assert pick_loss({"rmse_val": 8.14, "rmse_trn": 0.2}) == 0.2
    table = ["Epoch\tTime(sec)\tRMSE_train\tR2_train\tRMSE_dev",
             "1\t591.2\t1.431\t0.093\t1.497", "2\t1090.9\t1.362\t0.178\t1.369",
             "3\t1534.7\t1.332\t0.214\t1.352"]
    assert _both(table).verdict == "healthy"
    assert [e.kind for e in logs.parse(table)] == ["loss"] * 3
    nan_table = table[:1] + ["1\t591.2\tnan\tnan\tnan", "2\t1090.9\tnan\tnan\tnan",
                             "3\t1534.7\tnan\tnan\tnan"]
    assert _both(nan_table).verdict == "data"
    fields = [f"epoch {e} | train_mae: {0.6 - e / 10:.2f} | val_mae: {0.7 - e / 10:.2f}"
              for e in (1, 2, 3)]
    assert [e.rule for e in logs.parse(fields)] == ["error"] * 3
    assert _both(fields).verdict == "healthy"


def test_mxnets_batch_range_and_cross_entropy() -> None:
    bar = ("2020-05-08T01:42:0{s}Z INFO     Epoch[{e}] Batch [{a}-{b}]  Speed: 30231.16 "
           "samples/sec     {m}={v}")
    acc = [bar.format(s=i, e=i // 3, a=100 * i, b=100 * i + 100, m="accuracy", v=0.9 + i / 100)
           for i in range(5)]
    assert [e.step for e in logs.parse(acc)] == [100, 200, 300, 400, 500]
    d = _both(acc)
    assert (d.verdict, d.check) == ("healthy", "metrics-only"), d.reason
    xent = [bar.format(s=i, e=0, a=100 * i, b=100 * i + 100, m="cross-entropy", v="nan")
            for i in range(3)]
    assert [(e.kind, e.step) for e in logs.parse(xent)] == [("nan", 100), ("nan", 200),
                                                            ("nan", 300)]
    assert _both(xent).verdict == "data"


IGNITE = ("2022-05-18 01:25:03,792 ignite.handlers.terminate_on_nan.TerminateOnNan WARNING: "
          "TerminateOnNan: Output '{'loss_g': nan, 'loss_d': 0.0660}' contains NaN or Inf. "
          "Stop training")
DIST = ("ValueError: Expected parameter loc (Tensor of shape (24, 16, 4, 4)) of distribution "
        "Normal(loc: torch.Size([24, 16, 4, 4]), scale: torch.Size([24, 16, 4, 4])) to satisfy "
        "the constraint Real(), but found invalid values:")


def test_messages_that_say_a_nan_stopped_the_run() -> None:
    records = [f"Iteration {s}: loss {2.5 - s / 1000:.3f}" for s in (100, 200, 300)]
    for message, rule in ((IGNITE, "nan-detected"), (DIST, "nan-distribution")):
        assert [e.rule for e in logs.parse([message])] == [rule]
        d = _both(records + [message])
        assert d.verdict == "no-scaler", d.reason      # (a NaN after finite records: mid-run)
    # noticed, not begun: alone in a window, no NaN from the start of training
    assert _both([IGNITE, "State:", "\titeration: 1878924", "\tepoch: 81"]).verdict == "unknown"
    assert [e.kind for e in logs.parse(["Output {'loss': 0.5} contains no NaN or Inf. Stop "
                                        "training when it does."])] == ["loss"]
