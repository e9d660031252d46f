"""Notebook 07: the gradient-histogram explorer (a real model's gradients, a loss-scale slider)."""

from __future__ import annotations

import pytest

from .twin import Twin, check_display_shows_defaults

pytestmark = pytest.mark.browser

NOTEBOOK = "07-gradient-histograms.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the keyword arguments of the notebook's make_histogram_explorer(hist, ...) call
ARGS = {"scale": 1.0}


def kernel_hist(nb):
    """The notebook's own ``hist`` (computed in its kernel, on its device), copied exactly."""
    import ast
    import base64
    import pickle

    text = nb.kernel_eval("__import__('base64').b64encode(__import__('pickle').dumps(hist))"
                          ".decode()")
    return pickle.loads(base64.b64decode(ast.literal_eval(text)))  # noqa: S301 - our kernel


@pytest.fixture(scope="module")
def hist(nb):
    return kernel_hist(nb)


@pytest.fixture(scope="module")
def hx(nb, hist):
    from fampnb.widgets import make_histogram_explorer

    twin = Twin(nb, make_histogram_explorer, hist=hist, **ARGS)
    twin.sync_from_kernel()
    return twin


def expect_verdict(twin: Twin, hist) -> None:
    from fampnb.widgets.histogram import verdict

    st = twin.kernel_state()
    assert twin.shown()["verdict_text"] == verdict(hist, float(st["scale"]), st["format"])


def test_runs_clean(nb, hx, hist, save_screenshot):
    hx.wait_matches()
    expect_verdict(hx, hist)
    save_screenshot(nb, hx.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb, hist):
    from fampnb.widgets import make_histogram_explorer

    check_display_shows_defaults(nb, make_histogram_explorer, hist=hist, **ARGS)


def test_scale_slider(hx, hist):
    before = float(hx.kernel_value("scale"))
    new = hx.step("scale", hx.press("scale", "ArrowRight"))
    assert new == pytest.approx(2 * before)
    expect_verdict(hx, hist)
    new = hx.step("scale", hx.type_readout("scale", "65536"), via=65536.0)
    assert new == 65536.0
    expect_verdict(hx, hist)


def test_format_dropdown(hx, hist):
    for fmt in [f for f in hx.controls["format"].options if f != hx.kernel_value("format")][:2]:
        hx.step("format", hx.choose("format", fmt))
        expect_verdict(hx, hist)


def test_slider_extremes(nb, hx, hist):
    hx.step("scale", hx.press("scale", "End"))
    expect_verdict(hx, hist)
    hx.step("scale", hx.press("scale", "Home"))
    expect_verdict(hx, hist)
    nb.assert_clean()
