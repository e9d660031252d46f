"""Notebook 04: the decision walkthrough (the article's chain, and synthetic logs diagnosed)."""

from __future__ import annotations

import pytest

from .twin import Twin, check_display_shows_defaults

pytestmark = pytest.mark.browser

NOTEBOOK = "04-nan-decision-walkthrough.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the arguments of the notebook's make_walkthrough(...) call
ARGS: dict = {}


@pytest.fixture(scope="module")
def walk(nb):
    from fampnb.widgets import make_walkthrough

    twin = Twin(nb, make_walkthrough, **ARGS)
    twin.sync_from_kernel()
    return twin


def expect_chain(twin: Twin) -> None:
    """The chain's verdict and first switch are ``fampnb.chain.walk_chain`` of the answers."""
    from fampnb.chain import walk_chain

    st = twin.kernel_state()
    r = walk_chain(st["lines"], float(st["g"]), float(st["scale"]), st["nan"], st["precision"],
                   bool(st["bf16_pretrained"]))
    shown = twin.shown()["chain_text"]
    assert f"verdict: {r.verdict}" in shown, shown
    assert f"first switch: {r.first_switch}" in shown, shown


def expect_diagnosis(twin: Twin) -> None:
    """The doctor's verdict is ``fampnb.diagnose`` of the generated log."""
    from fampnb import diagnose, logs
    from fampnb.chain import generate_log

    st = twin.kernel_state()
    lines = generate_log(st["kind"], st["style"], ARGS.get("steps", 100), int(st["seed"]))
    d = diagnose.diagnose(logs.parse(lines))
    assert twin.shown()["diagnosis_text"].startswith(f"fampnb.diagnose: {d.verdict}")


def label(twin: Twin, key: str, value: str) -> str:
    return next(lbl for lbl, v in twin.controls[key].options if v == value)


def test_runs_clean(nb, walk, save_screenshot):
    walk.wait_matches()
    expect_chain(walk)
    expect_diagnosis(walk)
    save_screenshot(nb, walk.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb):
    from fampnb.widgets import make_walkthrough

    check_display_shows_defaults(nb, make_walkthrough, **ARGS)


def test_scale_slider(walk):
    before = float(walk.kernel_value("scale"))
    new = walk.step("scale", walk.press("scale", "ArrowLeft"))
    assert new == pytest.approx(before / 2)
    expect_chain(walk)
    walk.step("scale", walk.type_readout("scale", "1"), via=1.0)
    assert walk.kernel_value("scale") == 1.0
    expect_chain(walk)


def test_answers(walk):
    walk.step("g", walk.type_text("g", "1e-9"))
    expect_chain(walk)
    walk.step("nan", walk.toggle("nan", label(walk, "nan", "step0")))
    expect_chain(walk)
    walk.step("precision", walk.toggle("precision", "bf16"))
    expect_chain(walk)
    walk.step("bf16_pretrained", walk.check("bf16_pretrained"), must_change=False)
    expect_chain(walk)
    walk.step("lines", walk.toggle("lines", label(walk, "lines", "none")), must_change=False)
    expect_chain(walk)


def test_generated_log_and_load(nb, walk):
    for kind in ("data", "no-scaler"):
        walk.step("kind", walk.choose("kind", label(walk, "kind", kind)))
        expect_diagnosis(walk)
    walk.step("style", walk.choose("style", label(walk, "style", "fairseq")))
    expect_diagnosis(walk)
    walk.step("seed", walk.type_text("seed", "3"), must_change=False)
    expect_diagnosis(walk)
    walk.step("load", walk.click("load"), must_change=False)
    expect_chain(walk)
    nb.assert_clean()
