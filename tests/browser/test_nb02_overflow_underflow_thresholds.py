"""Notebook 02: the threshold explorer (G, S, g_min sliders -> verdicts per format, safe window)."""

from __future__ import annotations

import numpy as np
import pytest

from fampnb import formats as F

from .twin import Twin, check_display_shows_defaults, table_rows

pytestmark = pytest.mark.browser

NOTEBOOK = "02-overflow-underflow-thresholds.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the arguments of the notebook's make_threshold_explorer(...) call
ARGS = {"g_max": 3.2e4, "scale": 65536.0, "g_min": 1e-3}


@pytest.fixture(scope="module")
def th(nb):
    from fampnb.widgets import make_threshold_explorer

    twin = Twin(nb, make_threshold_explorer, **ARGS)
    twin.sync_from_kernel()
    return twin


#: the setting the widget should be showing (the notebook's arguments, then each step's value)
SETTING = dict(ARGS)


def expect_verdicts(twin: Twin) -> None:
    """Each format's row shows G·S, the article's judge, the exact zone and the stored value as
    ``fampnb.formats`` computes them for the setting the test made (SETTING)."""
    g, s = SETTING["g_max"], SETTING["scale"]
    g_min = min(SETTING["g_min"], g)
    text = twin.shown()["verdict_text"]
    assert text.startswith(f"G = {g:.6g}, S = {s:.6g}, g_min = {g_min:.6g}"), text
    rows = {r[0]: r for r in table_rows(twin.loc("verdict_text")) if r and r[0]}
    for name in ("fp16", "bf16"):
        fmt = F.get(name)
        scaled, article = F.judge(g, s, fmt)
        with np.errstate(over="ignore"):
            zone = F.Zone(int(fmt.classify(np.float64(g) * np.float64(s))))
            zone_min = F.Zone(int(fmt.classify(np.float64(g_min) * np.float64(s))))
            stored = float(fmt.round(np.float64(g) * np.float64(s)))
        assert rows[name][1:6] == [f"{scaled:.6g}", article, zone.name, repr(stored),
                                   zone_min.name], rows[name]


def test_runs_clean(nb, th, save_screenshot):
    th.wait_matches()
    expect_verdicts(th)
    save_screenshot(nb, th.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb):
    from fampnb.widgets import make_threshold_explorer

    check_display_shows_defaults(nb, make_threshold_explorer, **ARGS)


def test_scale_slider_keyboard(th):
    before = SETTING["scale"]
    SETTING["scale"] = th.step("scale", th.press("scale", "ArrowRight"))
    assert SETTING["scale"] == pytest.approx(2 * before)  # one step of a base-2 slider: S x 2
    expect_verdicts(th)
    assert F.judge(SETTING["g_max"], SETTING["scale"], F.FP16)[1] == "OVERFLOW"


def test_scale_slider_typed(th):
    th.step("scale", th.type_readout("scale", "1024"), via=1024.0)
    SETTING["scale"] = 1024.0
    expect_verdicts(th)


def test_g_max_slider(th):
    SETTING["g_max"] = th.step("g_max", th.press("g_max", "ArrowLeft"))
    expect_verdicts(th)
    th.step("g_max", th.type_readout("g_max", "60000"), via=60000.0)
    SETTING["g_max"] = 60000.0  # a typed value is taken exactly
    expect_verdicts(th)


def test_g_min_slider_extremes(nb, th):
    th.step("g_max", th.type_readout("g_max", "16384"), via=16384.0)  # on the slider's grid
    SETTING["g_max"] = 16384.0
    expect_verdicts(th)
    SETTING["g_min"] = th.step("g_min", th.press("g_min", "Home"))
    assert SETTING["g_min"] == pytest.approx(2.0 ** th.controls["g_min"].min)
    expect_verdicts(th)
    SETTING["g_min"] = th.step("g_min", th.press("g_min", "End"))
    expect_verdicts(th)  # above G: the window uses g_min = G, with a note
    assert "g_min is above G" in th.shown()["window_text"]
    nb.assert_clean()
