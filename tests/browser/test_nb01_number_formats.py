"""Notebook 01: the bit explorer, driven in JupyterLab like a reader does."""

from __future__ import annotations

import math

import pytest

from fampnb import formats as F

from .twin import Twin, check_display_shows_defaults, table_rows

pytestmark = pytest.mark.browser

NOTEBOOK = "01-number-formats.ipynb"
STEM = NOTEBOOK.removesuffix(".ipynb")
#: the arguments of the notebook's make_bit_explorer(...) call
ARGS = {"value": 65510.0, "fmt": "fp16"}


@pytest.fixture(scope="module")
def bits(nb):
    from fampnb.widgets import make_bit_explorer

    twin = Twin(nb, make_bit_explorer, **ARGS)
    twin.sync_from_kernel()
    return twin


def row(twin: Twin, label: str) -> str:
    """The value column of the readout row ``label``, as the page renders it."""
    rows = {r[0]: r[1] for r in table_rows(twin.loc("readout_text")) if len(r) >= 2}
    assert label in rows, f"no row {label!r} in the readout: {rows}"
    return rows[label]


def expect_stored(twin: Twin, value: float, fmt: str) -> None:
    """The readout shows what the real cast to ``fmt`` stores for ``value`` (fampnb.formats)."""
    f = F.get(fmt)
    stored = float(f.round(value))
    assert row(twin, f"stored in {f.name}") == ("nan" if math.isnan(stored) else repr(stored))
    zone = F.Zone(int(f.classify(value)))
    names = {F.Zone.NAN: "NaN"}
    assert row(twin, "zone").startswith(names.get(zone, zone.name.lower()))


def test_runs_clean(nb, bits, save_screenshot):
    bits.wait_matches()
    value = float(bits.kernel_value("value"))
    expect_stored(bits, value, bits.controls["format"].value)
    save_screenshot(nb, bits.output(), STEM)
    nb.assert_clean()


def test_display_keeps_the_default(nb):
    from fampnb.widgets import make_bit_explorer

    check_display_shows_defaults(nb, make_bit_explorer, **ARGS)


def test_magnitude_slider_keyboard(bits):
    before = abs(float(bits.kernel_value("value")))
    new = bits.step("magnitude", bits.press("magnitude", "ArrowRight"))
    assert math.log2(new) - math.log2(before) == pytest.approx(bits.controls["magnitude"].step,
                                                               abs=0.051)
    value = float(bits.kernel_value("value"))
    assert value == float(f"{new:.5g}")
    expect_stored(bits, value, "fp16")


def test_magnitude_slider_typed(bits):
    bits.step("magnitude", bits.type_readout("magnitude", "1e-6"), via=1e-6)
    assert float(bits.kernel_value("value")) == 1e-6
    expect_stored(bits, 1e-6, "fp16")  # subnormal in fp16
    assert row(bits, "zone").startswith("subnormal")


def test_slider_extremes(bits):
    bits.step("magnitude", bits.press("magnitude", "End"))
    assert bits.kernel_value("magnitude") == pytest.approx(2.0 ** bits.controls["magnitude"].max)
    expect_stored(bits, float(bits.kernel_value("value")), "fp16")
    bits.step("magnitude", bits.press("magnitude", "Home"))
    expect_stored(bits, float(bits.kernel_value("value")), "fp16")
    assert row(bits, "zone").startswith("underflow")


def test_format_buttons(bits):
    bits.step("value", bits.type_text("value", "65519"))
    expect_stored(bits, 65519.0, "fp16")
    for fmt in ("bf16", "fp8_e4m3", "fp32"):
        bits.step("format", bits.toggle("format", fmt))
        expect_stored(bits, 65519.0, fmt)


def test_value_box(bits):
    bits.step("format", bits.toggle("format", "fp16"))
    bits.step("value", bits.type_text("value", "65520"))
    expect_stored(bits, 65520.0, "fp16")
    assert row(bits, "stored in fp16") == "inf"
    bits.step("value", bits.type_text("value", "2**-25"))
    expect_stored(bits, 2.0 ** -25, "fp16")


def test_bad_input_gives_a_message(nb, bits):
    bits.step("value", bits.type_text("value", "sixty"), changes=("status_text",))
    assert "sixty" in bits.status_shown()
    bits.step("value", bits.type_text("value", "1.5"), changes=("readout_text",))
    assert bits.status_shown() == ""
    expect_stored(bits, 1.5, "fp16")
    nb.assert_clean()
