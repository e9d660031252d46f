"""The gradient-histogram plot and the scale-slider explorer (notebook 07), without a browser."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")

from fampnb.formats import FP16, Zone  # noqa: E402
from fampnb.probe import GradHistogram  # noqa: E402
from fampnb.widgets.histogram import (  # noqa: E402
    loss_rows,
    make_histogram_explorer,
    snap_scale,
    synthetic_histogram,
    verdict,
)


@pytest.fixture(scope="module")
def hist() -> GradHistogram:
    rng = np.random.default_rng(3)
    g = rng.standard_normal(4000) * np.exp2(rng.uniform(-34, -10, 4000))
    return GradHistogram.from_array(np.concatenate([g, [0.0, 0.0]]).astype(np.float32),
                                    device="numpy-test")


def test_draw_and_update_shift_the_curve(hist):
    from matplotlib.figure import Figure

    from fampnb.plots.histogram import draw_grad_histogram, update_grad_histogram

    fig = Figure()
    ax, bax = fig.subplots(2, 1, sharex=True)
    art = draw_grad_histogram(ax, hist, 1.0, band_ax=bax)
    edges0 = np.asarray(art["curve"].get_data().edges).copy()
    vals0 = np.asarray(art["curve"].get_data().values).copy()
    assert set(art["bands"]) == {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}
    assert math.isclose(vals0.sum(), 100 * (hist.total - hist.zeros) / hist.total)
    update_grad_histogram(art, hist, 2.0 ** 12)
    edges1 = np.asarray(art["curve"].get_data().edges)
    assert np.array_equal(edges1, edges0 + 12)
    assert np.array_equal(np.asarray(art["curve"].get_data().values), vals0)
    assert "2¹²" in art["title"].get_text()
    fig2 = Figure()
    art2 = draw_grad_histogram(fig2.subplots(), hist, 1.0)  # single axis: fp16 shading
    assert list(art2["bands"]) == ["fp16"]


def test_explorer_slider_updates_text_and_curve(hist):
    ui, controls, artists = make_histogram_explorer(hist, scale=1.0)
    assert "fampnb-hist" in ui._dom_classes
    assert "fampnb-hist-scale" in controls["scale"]._dom_classes
    assert "fampnb-hist-verdict-text" in artists["verdict_text"]._dom_classes
    assert "fampnb-hist-table-text" in artists["table_text"]._dom_classes
    g0 = np.asarray(artists["curve"].get_data().edges).copy()
    before = artists["table_text"].value
    lost0 = hist.zone_counts(FP16, 1.0)[Zone.UNDERFLOW]
    assert lost0 > 0 and "become 0" in artists["verdict_text"].value
    controls["scale"].value = 2.0 ** 16
    assert np.array_equal(np.asarray(artists["curve"].get_data().edges), g0 + 16)
    assert artists["table_text"].value != before
    assert artists["verdict_text"].value == f"<b>{verdict(hist, 2.0 ** 16, 'fp16')}</b>"
    rows = {r["format"]: r for r in loss_rows(hist, 2.0 ** 16)}
    lost = hist.zone_counts(FP16, 2.0 ** 16)[Zone.UNDERFLOW]
    assert rows["fp16"]["zero"] == 100 * lost / hist.total
    lo, hi = hist.lossless_scales(FP16)
    controls["scale"].value = lo
    assert "loses nothing" in artists["verdict_text"].value
    controls["format"].value = "fp8_e4m3"
    assert artists["verdict_text"].value.startswith("<b>fp8_e4m3 at S = 2^")


def test_explorer_bad_input_shows_message(hist):
    _, controls, artists = make_histogram_explorer(hist)
    controls["scale"].value = 1000.0  # not a power of two: snapped, with a note
    assert controls["scale"].value == 1024.0
    assert "powers of two" in artists["status"].value
    controls["scale"].value = float("nan")
    assert "scale must be" in artists["status"].value
    assert controls["scale"].value == 1024.0  # the widget keeps its last good value
    controls["scale"].value = 2.0 ** 3
    assert "&#9888;" not in artists["status"].value
    for extreme in (controls["scale"].min, controls["scale"].max):
        controls["scale"].value = 2.0 ** extreme
        assert "&#9888;" not in artists["status"].value


def test_snap_scale():
    s, note = snap_scale(2500)  # nearest on a log scale
    assert s == 2048.0 and "powers of two" in note
    assert snap_scale(3000)[0] == 4096.0
    assert snap_scale(2.0 ** 5) == (32.0, "")
    assert snap_scale(2.0 ** 90)[0] == 2.0 ** 40
    for bad in (0, -1, math.nan, math.inf, "x"):
        with pytest.raises(ValueError, match="scale"):
            snap_scale(bad)


def test_synthetic_fallback_is_labelled():
    h = synthetic_histogram(2000)
    assert h.device.startswith("synthetic") and h.total == 2000
    _, _, artists = make_histogram_explorer(h)
    assert "synthetic" in artists["title"].get_text()


def test_explorer_default_histogram_is_the_demo_model(torch_mod):
    _, controls, artists = make_histogram_explorer()
    assert artists["hist"].device in ("cpu",) or artists["hist"].device.startswith("cuda")
    assert artists["hist"].total == 6792
