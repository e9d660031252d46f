"""Results recorded on a real GPU (fampnb/data/gpu, docs/gpu-results.md) keep checking the model.

No GPU is needed: the records are what an H200 printed.  The model columns are recomputed now, so a
change to ``fampnb.formats`` or ``fampnb.scaler`` that would disagree with the real hardware fails
here, and the page must be the rendering of the records (no hand-edited number).
"""

from __future__ import annotations

import json
import math

import pytest

from conftest import ROOT, load_tool
from fampnb import probe, scaler
from fampnb.probe import casts as _probe_casts

RECORDS = sorted((ROOT / "fampnb" / "data" / "gpu").glob("*.json"))


def _tool():
    return load_tool("gpu_results")


def test_there_is_a_gpu_record():
    assert RECORDS, "no GPU record in fampnb/data/gpu"
    recs = probe.recorded_results()
    assert len(recs) == len(RECORDS)
    for rec in recs:
        dev = rec["probe"]["device"]
        assert dev["device"].startswith("cuda:") and dev["measurement"].startswith("GPU measurement")
        assert rec["probe"]["cast_checks"]["device"] == rec["probe"]["amp_decay"]["device"]


def test_recorded_device_results_agree_with_the_model_as_it_is_now():
    model = {(r["kind"], r["dtype"], r["label"]): r["model_result"]
             for r in _probe_casts.cast_rows(None, None) + _probe_casts.arithmetic_rows(None, None)}
    for rec in probe.recorded_results():
        rows = rec["probe"]["cast_checks"]["rows"]
        assert len(rows) >= 40
        for r in rows:
            key = (r["kind"], r["dtype"], r["label"])
            assert key in model, f"recorded row {key} no longer exists in the probe"
            now = model[key]
            assert _probe_casts._same(r["model_result"], now), (key, r["model_result"], now)
            if not r["documented"]:  # the real GPU's value against today's model
                assert _probe_casts._same(r["device_result"], now), (key, r["device_result"], now)
        # non-finite values come back as floats, not the JSON strings
        assert any(isinstance(r["device_result"], float) and math.isinf(r["device_result"])
                   for r in rows)


def test_recorded_real_scaler_sequence_is_the_simulators():
    for rec in probe.recorded_results():
        amp = rec["probe"]["amp_decay"]
        assert any(amp["found_inf"]) and not all(amp["found_inf"])
        sim = scaler.simulate(scaler.TorchGradScaler(**amp["settings"]), found_inf=amp["found_inf"])
        assert [float(s) for s in sim.scales] == amp["scales"] == amp["simulated"]


def test_page_is_the_rendering_of_the_records():
    page = (ROOT / "docs" / "gpu-results.md").read_text(encoding="utf-8")
    assert page == _tool().render(), "docs/gpu-results.md is stale: python tools/gpu_results.py render"
    for path in RECORDS:
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert f"## {rec['probe']['device']['name']} — recorded {rec['recorded']}" in page
        assert "| real GradScaler scale | " + " | ".join(
            f"{s:.10g}" for s in rec["probe"]["amp_decay"]["scales"]) + " |" in page


def test_render_marks_a_disagreement():
    rec = json.loads(RECORDS[0].read_text(encoding="utf-8"))
    row = rec["probe"]["cast_checks"]["rows"][0]
    row["device_result"], row["agree"] = 65536.0, False
    page = "\n".join(_tool().render_record(rec))
    n = len(rec["probe"]["cast_checks"]["rows"])
    assert f"{n - 1} of {n} rows agree" in page and "**NO**" in page


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_restore_non_finite(value):
    from fampnb.probe.recorded import _restore

    out = _restore({"a": [value, "+inf", 1.0]})
    assert isinstance(out["a"][0], float) and str(out["a"][0]) == value and out["a"][1] == "+inf"


def test_row_differences_nan_equals_nan_and_zero_sign_counts():
    from fampnb.probe import row_differences

    def row(label, v):
        return {"kind": "cast", "dtype": "float16", "label": label, "device_result": v}

    mine = [row("a", math.nan), row("b", 0.0), row("c", 1.0), row("d", None), row("e", 2.0)]
    theirs = [row("a", math.nan), row("b", -0.0), row("c", 1.0), row("d", 5.0)]
    assert [(r["label"], v) for r, v in row_differences(mine, theirs)] == [("b", -0.0)]
