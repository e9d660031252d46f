"""Notebook 03: the scale-decay explorer and the article's row question."""

from __future__ import annotations

import pytest

from fampnb import seed

from .twin import Twin, check_display_shows_defaults

pytestmark = pytest.mark.browser

NOTEBOOK = "03-loss-scale-decay.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the arguments of the notebook's make_scale_decay(...) and make_row_question(...) calls
ARGS: dict = {}
QUESTION_ARGS = {"row": 5}


@pytest.fixture(scope="module")
def decay(nb):
    from fampnb.widgets import make_scale_decay

    twin = Twin(nb, make_scale_decay, **ARGS)
    twin.sync_from_kernel()
    return twin


@pytest.fixture(scope="module")
def question(nb):
    from fampnb.widgets import make_row_question

    twin = Twin(nb, make_row_question, **QUESTION_ARGS)
    twin.sync_from_kernel()
    return twin


def expect_summary(twin: Twin) -> None:
    """The summary line is ``summarize`` of ``scaler.simulate`` for the kernel's settings."""
    from fampnb.widgets.decay import run_scale_decay, summarize

    st = twin.kernel_state()
    trace = run_scale_decay(st["policy"], float(st["init_scale"]), float(st["backoff"]),
                            int(st["growth_interval"]), st["scenario"])
    assert twin.shown()["summary_text"] == summarize(trace)


def label(twin: Twin, key: str, value: str) -> str:
    return next(lbl for lbl, v in twin.controls[key].options if v == value)


def test_runs_clean(nb, decay, question, save_screenshot):
    decay.wait_matches()
    question.wait_matches()
    expect_summary(decay)
    save_screenshot(nb, decay.output(), STEM)
    nb.assert_clean()


def test_display_keeps_the_default(nb):
    from fampnb.widgets import make_scale_decay

    check_display_shows_defaults(nb, make_scale_decay, **ARGS)


def test_initial_scale_slider(decay):
    before = float(decay.kernel_value("init_scale"))
    new = decay.step("init_scale", decay.press("init_scale", "ArrowLeft"))
    assert new == pytest.approx(before / 2)
    expect_summary(decay)
    new = decay.step("init_scale", decay.type_readout("init_scale", "1024"))
    assert new == 1024.0
    expect_summary(decay)


def test_policy_dropdown_and_backoff_slider(decay):
    for policy in ("seed", "deepspeed", "torch"):  # torch last: it has a backoff factor
        if decay.kernel_value("policy") != policy:
            decay.step("policy", decay.choose("policy", label(decay, "policy", policy)))
            expect_summary(decay)
    before = float(decay.kernel_value("backoff"))
    new = decay.step("backoff", decay.press("backoff", "ArrowLeft"))
    assert new == pytest.approx(before - decay.controls["backoff"].step)
    expect_summary(decay)
    new = decay.step("backoff", decay.type_readout("backoff", "0.25"))
    assert new == 0.25
    expect_summary(decay)


def test_growth_interval_and_scenario(decay):
    # a growth interval longer than the run changes nothing visible: no change required
    target = 7 if decay.kernel_value("growth_interval") != 7 else 11
    new = decay.step("growth_interval", decay.type_readout("growth_interval", str(target)),
                     must_change=False)
    assert new == target
    expect_summary(decay)
    before = decay.kernel_value("growth_interval")
    new = decay.step("growth_interval", decay.press("growth_interval", "ArrowRight"),
                     must_change=False)
    assert new == before + 1
    expect_summary(decay)
    other = next(k for _, k in decay.controls["scenario"].options
                 if k != decay.kernel_value("scenario"))
    decay.step("scenario", decay.choose("scenario", label(decay, "scenario", other)))
    expect_summary(decay)


def test_slider_extremes(nb, decay):
    decay.step("init_scale", decay.press("init_scale", "Home"))
    expect_summary(decay)
    decay.step("init_scale", decay.press("init_scale", "End"))
    expect_summary(decay)
    nb.assert_clean()


def test_row_question(nb, question):
    rows = seed.experiment_2()
    right = rows[QUESTION_ARGS["row"] - 1].scale
    question.step("answer", question.type_text("answer", str(right)), changes=("verdict_text",))
    assert question.shown()["verdict_text"].startswith("✔")
    assert str(right) in question.shown()["verdict_text"]
    wrong = rows[0].scale
    question.step("answer", question.type_text("answer", str(wrong)), changes=("verdict_text",))
    assert question.shown()["verdict_text"].startswith("✘")
    question.step("answer", question.type_text("answer", "lots"), changes=("verdict_text",))
    assert "not a number" in question.shown()["verdict_text"]
    nb.assert_clean()
