"""Notebook 05: the log reader on the shipped real excerpts, on pasted text and bad input."""

from __future__ import annotations

import pytest

from .twin import Twin, check_display_shows_defaults

pytestmark = pytest.mark.browser

NOTEBOOK = "05-reading-real-logs.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the arguments of the notebook's make_log_reader(...) call (``start`` in the notebook)
ARGS = {"sample": "deepspeed_Chinese-LLaMA-Alpaca_534.log"}


@pytest.fixture(scope="module")
def reader(nb):
    from fampnb.widgets import make_log_reader

    twin = Twin(nb, make_log_reader, **ARGS)
    twin.sync_from_kernel()
    return twin


def verdict_of(data, precision=None) -> str:
    from fampnb.widgets.logreader import read_log

    r = read_log(data, precision)
    return r.diagnosis.verdict if r.diagnosis is not None else r.message


def test_runs_clean(nb, reader, save_screenshot):
    from fampnb import logs

    reader.wait_matches()
    want = verdict_of("\n".join(logs.read_sample(ARGS["sample"])))
    assert want in reader.shown()["verdict_text"]
    save_screenshot(nb, reader.output(), STEM)
    nb.assert_clean()


def test_display_shows_the_default(nb):
    from fampnb.widgets import make_log_reader

    check_display_shows_defaults(nb, make_log_reader, **ARGS)


def test_sample_dropdown(reader):
    from fampnb import logs

    names = [n for n in logs.sample_logs() if n != ARGS["sample"]]
    for name in names[:2]:
        reader.step("sample", reader.choose("sample", name))
        assert verdict_of("\n".join(logs.read_sample(name))) in reader.shown()["verdict_text"]


def test_precision_dropdown(reader):
    reader.step("precision", reader.choose("precision", "bf16"), must_change=False)
    st = reader.kernel_state()
    assert verdict_of(st["paste"], "bf16") in reader.shown()["verdict_text"]


def test_pasted_log(reader):
    from fampnb import scenarios

    text = "\n".join(line.rstrip("\n") for line in scenarios.synthetic_log("data", "deepspeed"))
    reader.step("paste", reader.type_text("paste", text))
    assert verdict_of(text, reader.kernel_value("precision") or None) in \
        reader.shown()["verdict_text"]


def test_bad_input_gives_a_message(nb, reader):
    reader.step("paste", reader.type_text("paste", "hello, this is not a training log"))
    reader.step("paste", reader.type_text("paste", ""), must_change=False)
    assert "Traceback" not in " ".join(reader.shown().values())
    nb.assert_clean()
