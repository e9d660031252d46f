"""Notebook 08: the hazard explorer (an activation-scale slider over an op chain in fp16)."""

from __future__ import annotations

import pytest

from .twin import Twin, check_display_shows_defaults

pytestmark = pytest.mark.browser

NOTEBOOK = "08-where-nan-starts.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the keyword arguments of the notebook's make_hazards(...) call
ARGS = {"scale": 4.0}


@pytest.fixture(scope="module")
def hz(nb):
    from fampnb.widgets import make_hazards

    twin = Twin(nb, make_hazards, **ARGS)
    twin.sync_from_kernel()
    return twin


def expect_verdict(twin: Twin) -> None:
    """The page's verdict is the package's for the kernel's settings, and names the op that
    ``fampnb.hazards`` finds first out of range."""
    from fampnb import hazards as H
    from fampnb.widgets.hazards import verdict

    st = twin.kernel_state()
    scale, fix, fmt = float(st["scale"]), bool(st["fix"]), st["format"]
    shown = twin.shown()["verdict_text"]
    assert shown == verdict(scale, fix, fmt)
    bad = H.first_out(H.op_chain(scale, fix=fix, fmt=fmt))
    assert (f"is {bad.name} (" in shown) if bad else ("every op stays inside" in shown)


def test_runs_clean(nb, hz, save_screenshot):
    hz.wait_matches()
    expect_verdict(hz)
    assert "first op out of fp16 is exp" in hz.shown()["verdict_text"]
    save_screenshot(nb, hz.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb):
    from fampnb.widgets import make_hazards

    check_display_shows_defaults(nb, make_hazards, **ARGS)


def test_scale_slider(hz):
    before = float(hz.kernel_value("scale"))
    new = hz.step("scale", hz.press("scale", "ArrowLeft"))
    assert new == pytest.approx(before * 2 ** -0.25)
    expect_verdict(hz)
    new = hz.step("scale", hz.type_readout("scale", "1"), via=1.0)
    assert new == 1.0
    expect_verdict(hz)
    assert "every op stays inside fp16" in hz.shown()["verdict_text"]


def test_fix_checkbox_and_format(hz):
    hz.step("scale", hz.type_readout("scale", "8"), via=8.0)
    expect_verdict(hz)
    assert "is exp" in hz.shown()["verdict_text"]
    hz.step("fix", hz.check("fix"))
    expect_verdict(hz)
    assert "every op stays inside" in hz.shown()["verdict_text"]
    hz.step("scale", hz.press("scale", "End"))
    expect_verdict(hz)
    assert "is scores" in hz.shown()["verdict_text"]
    hz.step("format", hz.choose("format", "bf16"))
    expect_verdict(hz)
    assert "inside bf16" in hz.shown()["verdict_text"]


def test_slider_extremes(nb, hz):
    hz.step("scale", hz.press("scale", "Home"))
    expect_verdict(hz)
    nb.assert_clean()
