"""The general rules heldout81's to heldout84's first runs led to, each on lines of its own (not the
held-out files): a loss that climbs record after record a thousandfold has exploded, and a Keras
progress bar's record is a Keras run's (whose loss scaler is silent)."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.diagnose import diagnose


def _keras(losses: list[str]) -> list[str]:
    out = []
    for i, v in enumerate(losses, 1):
        out += [f"Epoch {i}/500", f"1/1 [==============================] - 0s 4ms/step - loss: {v}"]
    return out


def test_a_loss_climbing_a_thousandfold_record_after_record_has_exploded() -> None:
    climb = [f"step {i} | loss {450.98 * 3.55 ** i:.4f} | lr 0.01" for i in range(1, 12)]
    d = _both(climb)
    assert d.verdict != "healthy" and "explodes" in d.reason
    # a slow climb (a running total) and a climb of less than a thousandfold are no explosion
    total = [f"step {i} | loss {12.5 * i:.4f}" for i in range(1, 2000, 50)]
    assert _both(total).verdict == "healthy"
    mild = [f"step {i} | loss {2.0 * 1.8 ** i:.4f}" for i in range(1, 10)]
    assert _both(mild).verdict == "healthy"


def test_a_keras_progress_bar_is_a_keras_run() -> None:
    lines = _keras(["450.9794", "1603.0852", "5698.4731", "20256.3398"])
    assert {e.framework for e in logs.parse(lines) if e.kind == "loss"} == {"keras"}
    # a NaN after finite epochs, no precision stated: Keras's scaler would be silent
    nan = _keras(["0.6931", "0.6512", "0.6207", "nan", "nan", "nan"])
    d = diagnose(logs.parse(nan))
    assert d.verdict == "unknown" and _both(nan).verdict == "unknown"
