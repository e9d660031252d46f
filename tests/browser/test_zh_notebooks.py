"""The Chinese edition in JupyterLab: every notebooks/zh/ notebook runs clean once (Run All), shows
its Chinese prose, and one widget per notebook is driven like a reader does, with the texts
checked against a twin built here in Chinese (``fampnb.i18n``) — the same numbers as in English.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import ROOT
from fampnb import i18n

from .twin import Twin, table_rows

pytestmark = pytest.mark.browser

ZH = sorted(p.name for p in (ROOT / "notebooks" / "zh").glob("[0-9][0-9]-*.ipynb"))
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module", autouse=True)
def _chinese() -> Iterator[None]:
    """The twins are built and updated in Chinese, as the zh notebooks' kernels are."""
    with i18n.language("zh"):
        yield


def _hist_from_kernel(nb: Any) -> Any:
    import ast
    import base64
    import pickle

    text = nb.kernel_eval("__import__('base64').b64encode(__import__('pickle').dumps(hist))"
                          ".decode()")
    return pickle.loads(base64.b64decode(ast.literal_eval(text)))  # noqa: S301 - our kernel


def _bits(nb: Any) -> None:
    from fampnb.widgets import make_bit_explorer

    twin = Twin(nb, make_bit_explorer, value=65510.0, fmt="fp16")
    twin.sync_from_kernel()
    twin.wait_matches()
    twin.step("value", twin.type_text("value", "65520"))
    rows = {r[0]: r[1] for r in table_rows(twin.loc("readout_text")) if len(r) >= 2}
    assert rows[i18n.t("widget.bits.row.stored", fmt="fp16")] == "inf", rows
    assert rows[i18n.t("widget.bits.row.zone")].startswith("上溢"), rows


def _thresholds(nb: Any) -> None:
    from fampnb.widgets import make_threshold_explorer

    twin = Twin(nb, make_threshold_explorer, g_max=3.2e4, scale=65536.0, g_min=1e-3)
    twin.sync_from_kernel()
    twin.wait_matches()
    twin.step("scale", twin.type_readout("scale", "1"), via=1.0)
    shown = twin.shown()
    assert "安全窗口" in shown["window_text"] and "在窗口内" in shown["window_text"], shown


def _decay(nb: Any) -> None:
    from fampnb.widgets import make_scale_decay

    twin = Twin(nb, make_scale_decay)
    twin.sync_from_kernel()
    twin.wait_matches()
    before = float(twin.kernel_value("init_scale"))
    assert twin.step("init_scale", twin.press("init_scale", "ArrowLeft")) == pytest.approx(before / 2)


def _walkthrough(nb: Any) -> None:
    from fampnb.widgets import make_walkthrough

    twin = Twin(nb, make_walkthrough)
    twin.sync_from_kernel()
    twin.wait_matches()
    twin.step("scale", twin.type_readout("scale", "1"), via=1.0)
    text = twin.shown()["chain_text"]
    assert i18n.t("chain.q1") in text and i18n.t("widget.walk.verdict").strip() in text, text
    assert "G x 尺度 = 32000 x 1 = 32000" in text, text      # the same number as in English


def _log_reader(nb: Any) -> None:
    from fampnb import logs
    from fampnb.widgets import make_log_reader

    twin = Twin(nb, make_log_reader, sample="deepspeed_Chinese-LLaMA-Alpaca_534.log")
    twin.sync_from_kernel()
    twin.wait_matches()
    other = next(n for n in logs.sample_logs() if n != "deepspeed_Chinese-LLaMA-Alpaca_534.log")
    twin.step("sample", twin.choose("sample", other))
    assert twin.shown()["verdict_text"].startswith("判定："), twin.shown()


def _histogram(nb: Any) -> None:
    from fampnb.widgets import make_histogram_explorer
    from fampnb.widgets.histogram import verdict

    hist = _hist_from_kernel(nb)
    twin = Twin(nb, make_histogram_explorer, hist=hist, scale=1.0)
    twin.sync_from_kernel()
    twin.wait_matches()
    new = twin.step("scale", twin.press("scale", "ArrowRight"))
    assert twin.shown()["verdict_text"] == verdict(hist, float(new), twin.kernel_value("format"))
    assert "在 S = 2^1 时" in twin.shown()["verdict_text"]


def _hazards(nb: Any) -> None:
    from fampnb.widgets import make_hazards

    twin = Twin(nb, make_hazards, scale=4.0)
    twin.sync_from_kernel()
    twin.wait_matches()
    twin.step("scale", twin.press("scale", "ArrowLeft"))


def _fp8(nb: Any) -> None:
    from fampnb.widgets import make_fp8_scaling

    from .test_nb09_fp8_scaling import SlowTwin  # its recompute takes a moment

    twin = SlowTwin(nb, make_fp8_scaling, scheme="delayed", history=16)
    twin.sync_from_kernel()
    twin.wait_matches()
    twin.step("spike", twin.press("spike", "ArrowRight"))


#: notebook number -> the widget driven there (None: a notebook without a widget)
DRIVE: dict[str, Callable[[Any], None] | None] = {
    "00": None, "01": _bits, "02": _thresholds, "03": _decay, "04": _walkthrough,
    "05": _log_reader, "06": None, "07": _histogram, "08": _hazards, "09": _fp8,
}


def test_every_zh_notebook_is_driven_here():
    assert ZH, "no notebooks in notebooks/zh/ (python tools/nbtool.py zh)"
    assert not [n for n in ZH if n[:2] not in DRIVE], f"add the new notebooks to DRIVE: {ZH}"


@pytest.mark.parametrize("name", ZH)
def test_zh_notebook_runs_and_its_widget_speaks_chinese(open_notebook, name):
    nb = open_notebook(f"zh/{name}")
    try:
        heading = nb.root.locator(".jp-MarkdownOutput h1").first
        assert CJK.search(nb.shown_text(heading)), "the first heading is not Chinese"
        drive = DRIVE.get(name[:2])
        if drive is not None:
            drive(nb)
        nb.assert_clean()
    finally:
        nb.close()
