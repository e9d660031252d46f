"""Notebook 09: the fp8 scaling explorer (scheme, element format, margin, history, spike)."""

from __future__ import annotations

import pytest

from .twin import Twin, check_display_shows_defaults, table_rows

pytestmark = pytest.mark.browser

NOTEBOOK = "09-fp8-scaling.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the keyword arguments of the notebook's make_fp8_scaling(...) call
ARGS = {"scheme": "delayed", "history": 16}


class SlowTwin(Twin):
    """A change takes this widget a second or more (a delayed-scaling run and a re-rendered
    figure), and the kernel answers the test's state queries while the change's callback is
    still running: each action waits until the kernel's table (the callback's last write)
    has changed before the usual checks."""

    def step(self, key, action, **kw):
        def act_and_wait():
            before = self.kernel_state()["table_text"]
            action()
            for _ in range(200):
                if self.kernel_state()["table_text"] != before:
                    return
                self.nb.page.wait_for_timeout(150)

        return super().step(key, act_and_wait, **kw)


@pytest.fixture(scope="module")
def fx(nb):
    from fampnb.widgets import make_fp8_scaling

    twin = SlowTwin(nb, make_fp8_scaling, **ARGS)
    twin.sync_from_kernel()
    return twin


def expect_table(twin: Twin) -> None:
    """The page's table is the exact shares of ``scheme_view`` for the kernel's settings."""
    from fampnb.plots.fp8 import share_pct
    from fampnb.scaling import demo_activations, demo_gradients, scheme_view

    st = twin.kernel_state()
    tensors = {"gradients": demo_gradients(), "activations": demo_activations()}[st["tensors"]]
    view = scheme_view(st["scheme"], st["elem"], tensors, margin=int(st["margin"]),
                       history=int(st["history"]), spike=float(st["spike"]))
    rows = table_rows(twin.loc("table_text"))
    names = list(view.per_tensor) + (["all"] if len(view.per_tensor) > 1 else [])
    assert [r[0] for r in rows[1:]] == names
    pct = rows[-1][1:]
    s = view.shares
    for cell, cat in zip(pct, ("lost", "subnormal", "normal", "saturated", "nan")):
        assert cell == share_pct(s.fraction(cat))


def test_runs_clean(nb, fx, save_screenshot):
    fx.wait_matches()
    expect_table(fx)
    assert "spike" in fx.shown()["status"]
    save_screenshot(nb, fx.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb):
    from fampnb.widgets import make_fp8_scaling

    check_display_shows_defaults(nb, make_fp8_scaling, **ARGS)


def test_delayed_sliders(fx):
    fx.step("spike", fx.press("spike", "ArrowRight"))
    expect_table(fx)
    for _ in range(3):
        fx.step("margin", fx.press("margin", "ArrowRight"))
    assert int(fx.kernel_value("margin")) == 3
    expect_table(fx)
    fx.step("history", fx.press("history", "End"))
    assert int(fx.kernel_value("history")) == 1024
    expect_table(fx)
    fx.step("history", fx.press("history", "Home"))
    expect_table(fx)


def test_scheme_and_element_dropdowns(fx):
    for scheme in ("mx", "tensorwise", "global", "rowwise"):
        fx.step("scheme", fx.choose("scheme", scheme))
        expect_table(fx)
        assert "delayed scaling only" in fx.shown()["status"]
    for elem in ("fp4_e2m1", "fp8_e5m2", "fp8_e4m3"):
        fx.step("elem", fx.choose("elem", elem))
        expect_table(fx)
    fx.step("tensors", fx.choose("tensors", "activations"))
    expect_table(fx)


def test_back_to_delayed(nb, fx):
    fx.step("scheme", fx.choose("scheme", "delayed"))
    expect_table(fx)
    assert "amax trace" in fx.shown()["status"]
    fx.step("spike", fx.press("spike", "End"))
    expect_table(fx)
    nb.assert_clean()
