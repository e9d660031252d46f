"""The general rules heldout121's to heldout124's first runs led to, each on lines of its own (not
the held-out files): Caffe's softmax loss at its floor, -ln(FLT_MIN) = 87.3365, is a loss gone
non-finite; and a loss frozen to all its digits on the records after a NaN is no recovery."""

from __future__ import annotations

import numpy as np
from doctor_helpers import diagnose_both as _both

from fampnb.diagnose._limits import FROZEN, SOFTMAX_FLOOR, floored
from fampnb.diagnose._text import CAVEATS


def _caffe(losses: list[str], start: int = 100) -> list[str]:
    out = []
    for k, loss in enumerate(losses):
        it = start + 20 * k
        out += [f"I0818 01:17:{k:02d}.052695 30915 solver.cpp:228] Iteration {it}, loss = {loss}",
                f"I0818 01:17:{k:02d}.052738 30915 solver.cpp:244]     Train net output #0: "
                f"loss = {loss} (* 1 = {loss} loss)",
                f"I0818 01:17:{k:02d}.052752 30915 sgd_solver.cpp:106] Iteration {it}, lr = 0.0001"]
    return out


def test_the_floor_is_minus_log_of_float32_smallest_normal() -> None:
    assert SOFTMAX_FLOOR == float(-np.log(np.float64(np.finfo(np.float32).tiny)))
    assert floored(87.3365) and floored(87.3366) and floored(87.33654)
    assert not floored(87.34) and not floored(87.3) and not floored(None)


def test_a_caffe_loss_at_the_softmax_floor_is_a_nan_loss() -> None:
    healthy = _caffe(["2.31", "1.87", "1.52", "1.21", "0.98", "0.87"])
    floor = _caffe(["2.31", "1.87", "1.52", "1.21", "87.3365", "87.3365"])
    assert _both(healthy).verdict == "healthy"
    d = _both(floor)
    assert d.verdict in ("no-scaler", "unknown")
    assert d.first_nan_step == 180
    assert CAVEATS["softmax-floor"] in d.caveats
    # a large loss that is not the floor stays a finite loss
    assert _both(_caffe(["2.31", "1.87", "1.52", "1.21", "87.3", "86.9"])).verdict != "no-scaler"


def test_a_test_net_average_at_the_floor_is_not_a_finite_evaluation() -> None:
    lines = ["Iteration 18000, Testing net (#0)",
             "Test net output #0: accuracy/top-1 = 0.24",
             "Test net output #2: loss = 3.30735 (* 1 = 3.30735 loss)",
             "Iteration 19000, Testing net (#0)",
             "Test net output #0: accuracy/top-1 = 0.008",
             "Test net output #2: loss = 87.3366 (* 1 = 87.3366 loss)"]
    assert _both(lines).verdict != "healthy"


def _records(losses: list[str]) -> list[str]:
    return [f"[epoch {k + 1:2d}] iter {500 * (k + 1):5d} | loss: {loss} | lr: 1.0e-03"
            for k, loss in enumerate(losses)]


def test_a_loss_frozen_after_a_nan_keeps_the_nan_lasting() -> None:
    before = ["0.9805", "0.7491", "0.5711", "0.5234", "0.5011", "0.4800"]
    frozen = _records(before + ["nan"] + ["4.4755"] * FROZEN)
    d = _both(frozen)
    assert d.verdict != "healthy"
    assert d.first_nan_step is not None
    assert any("4.4755" in c and "lasting" in c for c in d.caveats)
    # one record fewer, or records that move again, or a loss printed to too few digits: the
    # NaN passed, as before
    assert _both(_records(before + ["nan"] + ["4.4755"] * (FROZEN - 1))).verdict == "healthy"
    moving = ["4.4755", "4.4712", "4.4755", "4.4755", "4.4755", "4.4755"]
    assert _both(_records(before + ["nan"] + moving)).verdict == "healthy"
    assert _both(_records(before + ["nan"] + ["0.50"] * (FROZEN + 2))).verdict == "healthy"


def test_the_fast_reader_picks_the_floor_in_a_long_log() -> None:
    """Far from the log's edges and samples, the first record at the floor is picked (the
    picker looks for the floor's digits where a template has their shape): the fast reader
    finds where the NaN began, as the full one does."""
    import io

    from fampnb import logs
    from fampnb.diagnose import diagnose

    losses = [f"{20.0 - k * 1e-3:.4f}" for k in range(3000)] + ["87.3365"] * 3000  # one shape
    lines = _caffe(losses)
    data = "\n".join(lines).encode() + b"\n"
    assert len(data) > 1_000_000
    full, fast = diagnose(logs.parse(lines)), diagnose(logs.scan(io.BytesIO(data)))
    assert full.first_nan_step == fast.first_nan_step == 100 + 20 * 3000
    assert full.verdict == fast.verdict != "healthy"
