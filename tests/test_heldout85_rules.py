"""The general rules heldout85's to heldout88's first runs led to, each on lines of its own (not the
held-out files): a table whose column names carry a ranking cut-off (``ndcg@10``) and whose cells
say there is no value (``-``, ``No log``), a scale already below 256 that keeps halving on NaN
records a few hundred steps apart, and a run that stops out of memory."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose


def _records(lines: list[str]) -> list[tuple[int, float | None]]:
    return [(e.step, e.loss) for e in logs.parse(lines) if e.kind in ("loss", "nan")]


def test_a_table_may_name_a_cut_off_and_leave_cells_without_a_value() -> None:
    lines = ["| Epoch  | Step | Training Loss | Validation Loss | NanoNQ_dot_ndcg@10 |",
             "|:------:|:----:|:-------------:|:---------------:|:------------------:|",
             "| -1     | -1   | -             | -               | 0.0645             |",
             "| 0.0511 | 9    | 944862.5556   | -               | -                  |",
             "| 0.1023 | 18   | 70073.7569    | -               | -                  |",
             "| 0.1534 | 27   | 775.0326      | -               | -                  |"]
    assert _records(lines) == [(9, 944862.5556), (18, 70073.7569), (27, 775.0326)]
    assert _both(lines).verdict == "healthy"
    hf = ["Epoch\tTraining Loss\tValidation Loss", "1\tNo log\t0.6931", "2\t0.6512\t0.6407",
          "3\tnan\tnan"]
    assert [x for _, x in _records(hf)][:1] == [0.6512]


def _grad_scale(scales_losses: list[tuple[float, str]]) -> list[str]:
    return [f"2024-12-22 17:54:52,310 Epoch[1/20][{6000 + 100 * i}/30477] eta: 9 days, "
            f"lr: 5.000e-05, grad_scale: {s:.3f}, total_loss: {v}"
            for i, (s, v) in enumerate(scales_losses)]


def test_a_scale_below_256_that_keeps_halving_on_nan_records_is_an_overflow() -> None:
    falling = _grad_scale([(4, "0.179"), (4, "0.174"), (4, "0.166"), (2, "nan"), (2, "0.180"),
                           (2, "0.185"), (1, "nan"), (1, "0.184")])
    assert _both(falling).verdict == "overflow"
    # one such backoff is isolated; two that start above 256 are calibration-like and held
    once = _grad_scale([(4, "0.179"), (4, "0.174"), (2, "nan"), (2, "0.180"), (2, "0.185")])
    assert _both(once).verdict == "healthy"
    high = _grad_scale([(65536, "0.179"), (65536, "0.174"), (32768, "nan"), (32768, "0.180"),
                        (32768, "0.185"), (16384, "nan"), (16384, "0.184")])
    assert _both(high).verdict == "healthy"


def test_a_run_that_stops_out_of_memory_stopped_for_memory() -> None:
    bar = ("Steps:   0%| | 1/3000 [00:08<6:44:13,  8.09s/it, loss=0.0584, loss_avg=0.0584, "
           "lr=1e-6, vram_usage=9.5]")
    lines = [bar + "OOM Detected, reducing batch/grad size to 0/1.",
             "Traceback (most recent call last):", '  File "train.py", line 12, in <module>']
    d = diagnose(logs.parse(lines))
    assert d.verdict == "healthy" and any("out of memory" in c for c in d.caveats)
    assert _both(lines).verdict == "healthy"
    torch_oom = [bar, "Traceback (most recent call last):",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"]
    assert _both(torch_oom).verdict == "healthy"
    # a traceback with no word of memory stays a stop whose cause the records do not show
    assert _both([bar, "Traceback (most recent call last):",
                  "ValueError: bad shape"]).verdict == "unknown"
