"""Bit and threshold explorers wired without a browser: set controls, read artists and *_text."""

from __future__ import annotations

import math
import re

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402

from fampnb import formats as F  # noqa: E402
from fampnb.widgets import make_bit_explorer, make_threshold_explorer  # noqa: E402
from fampnb.widgets.bits import parse_value  # noqa: E402

ERR = "color:#b00020"


def text(h: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", h)).replace("&lt;", "<").strip()


@pytest.fixture
def bits():
    return make_bit_explorer()


@pytest.fixture
def thr():
    return make_threshold_explorer()


# ----------------------------------------------------------------------------- bit explorer
def test_bits_css_classes(bits):
    ui, controls, artists = bits
    for key, c in controls.items():
        assert f"fampnb-bits-{key}" in c._dom_classes
    for key in ("readout_text", "status_text"):
        assert f"fampnb-bits-{key.replace('_', '-')}" in artists[key]._dom_classes
    assert "fampnb-bits-status" in artists["status_text"]._dom_classes
    assert "fampnb-bits" in ui._dom_classes


def test_bits_default_is_65510_rounding_to_65504(bits):
    _, controls, artists = bits
    r = text(artists["readout_text"].value)
    assert "65510.0" in r and "65504.0" in r and "0x7bff" in r
    assert artists["stored_marker"].get_xdata()[0] == pytest.approx(math.log2(65504))


@pytest.mark.parametrize("typed,fmt", [("2**-20", "fp16"), ("1e-40", "bf16"), ("-3.5", "fp16"),
                                       ("448", "fp8_e4m3"), ("465", "fp8_e4m3"),
                                       ("65520", "fp16"), ("0.1", "fp32"), ("1e-5", "fp8_e5m2")])
def test_bits_typed_value_matches_decompose(bits, typed, fmt):
    _, controls, artists = bits
    controls["format"].value = fmt
    controls["value"].value = typed
    b = F.get(fmt).decompose(parse_value(typed))
    shown = "".join(t.get_text() for t in artists["bit_texts"] if t.get_visible())
    assert shown == f"{b.sign}{b.exponent_bits}{b.mantissa_bits}"
    r = text(artists["readout_text"].value)
    assert repr(b.stored) in r and b.hex in r
    assert ERR not in artists["status_text"].value


def test_bits_slider_and_sign_update_the_text_box(bits):
    _, controls, artists = bits
    controls["magnitude"].value = 2.0**-20
    assert float(controls["value"].value) == pytest.approx(2.0**-20, rel=1e-4)
    assert "SUBNORMAL".lower() in text(artists["readout_text"].value)
    controls["sign"].value = -1
    assert float(controls["value"].value) < 0
    assert artists["bit_texts"][0].get_text() == "1"
    # typing moves the slider and the sign
    controls["value"].value = "1024"
    assert controls["magnitude"].value == 1024 and controls["sign"].value == 1


def test_bits_format_switch_recolours_without_new_artists(bits):
    _, controls, artists = bits
    ax = artists["cells"][0].axes
    n = len(ax.get_children())
    for fmt in ("fp32", "bf16", "fp8_e4m3", "fp8_e5m2", "fp16"):
        controls["format"].value = fmt
        assert sum(c.get_visible() for c in artists["cells"]) == F.get(fmt).bits
    assert len(ax.get_children()) == n


@pytest.mark.parametrize("typed,needle", [("0", "0 is stored exactly"), ("-0.0", "0 is stored"),
                                          ("-2", "sign bit"), ("nan", "NaN"), ("inf", "inf")])
def test_bits_special_values_give_a_note_not_an_error(bits, typed, needle):
    _, controls, artists = bits
    controls["value"].value = typed
    assert needle in artists["readout_text"].value
    assert ERR not in artists["status_text"].value


@pytest.mark.parametrize("typed", ["abc", "", "0xZZ", "0x1ffff", "2**-5000", "1,5"])
def test_bits_bad_text_shows_a_message_and_keeps_working(bits, typed):
    _, controls, artists = bits
    before = artists["readout_text"].value
    controls["value"].value = typed
    assert ERR in artists["status_text"].value
    assert artists["readout_text"].value == before
    controls["value"].value = "1.0"
    assert ERR not in artists["status_text"].value
    assert "0x3c00" in artists["readout_text"].value


def test_bits_slider_extremes_and_nan(bits):
    _, controls, artists = bits
    s = controls["magnitude"]
    s.value = 10.0**300  # clamped by the slider to 2**130: overflow in fp16
    assert "overflow" in text(artists["readout_text"].value)
    s.value = 0.0  # clamped to 2**-152: rounds to 0
    assert "underflow" in text(artists["readout_text"].value)
    s.value = float("nan")
    assert ERR in artists["status_text"].value


def test_bits_hex_pattern_decodes_in_the_chosen_format(bits):
    _, controls, artists = bits
    controls["format"].value = "bf16"
    controls["value"].value = "0x3f80"
    assert "1.0" in text(artists["readout_text"].value)


def test_parse_value_forms():
    assert parse_value("2**-20") == 2.0**-20
    assert parse_value("2^-14") == 2.0**-14
    assert parse_value("-2**15") == -32768.0
    assert parse_value("3*2**-20") == 3 * 2.0**-20
    assert parse_value("65_504") == 65504.0
    assert parse_value("0x7bff", "fp16") == 65504.0
    assert math.isnan(parse_value("nan"))
    with pytest.raises(ValueError):
        parse_value("x")


# ----------------------------------------------------------------------------- thresholds
def test_thr_css_classes(thr):
    ui, controls, artists = thr
    for key, c in controls.items():
        assert f"fampnb-thresholds-{key.replace('_', '-')}" in c._dom_classes
    for key in ("verdict_text", "window_text", "status_text"):
        assert f"fampnb-thresholds-{key.replace('_', '-')}" in artists[key]._dom_classes


def test_thr_default_is_the_article_case_a(thr):
    _, controls, artists = thr
    v = text(artists["verdict_text"].value)
    assert "OVERFLOW" in v and "2.09715e+09" in v
    assert artists["scaled_marker"].get_xdata()[0] == pytest.approx(math.log2(3.2e4 * 65536))
    w = F.safe_scale_window(1e-3, 3.2e4, F.FP16)
    assert f"{w.s_max:.4g}" in text(artists["window_text"].value)
    assert "above it" in text(artists["window_text"].value)


def test_thr_article_and_exact_disagree_on_65510_and_2_pow_minus_20(thr):
    _, controls, artists = thr
    controls["scale"].value = 1.0
    controls["g_max"].value = 65510.0
    v = text(artists["verdict_text"].value)
    assert F.judge(65510.0, 1.0)[1] == "OVERFLOW" and "NORMAL" in v and "65504.0" in v
    assert "models disagree" in v
    controls["g_max"].value = 2.0**-20
    v = text(artists["verdict_text"].value)
    assert "UNDERFLOW" in v and "SUBNORMAL" in v and "models disagree" in v
    assert F.Zone(int(F.FP16.classify(np.float64(2.0**-20)))) == F.Zone.SUBNORMAL


def test_thr_scale_moves_marker_and_window_stays(thr):
    _, controls, artists = thr
    p = artists["windows"]["fp16"]
    x0, w0 = p.get_x(), p.get_width()
    controls["scale"].value = 2.0**-32
    assert artists["s_line"].get_xdata()[0] == -32
    assert artists["scaled_marker"].get_xdata()[0] == pytest.approx(math.log2(3.2e4 * 2.0**-32))
    assert (p.get_x(), p.get_width()) == (x0, w0)
    assert "below it" in text(artists["window_text"].value)
    controls["scale"].value = 1.0
    assert "inside" in text(artists["window_text"].value)


def test_thr_g_min_changes_window(thr):
    _, controls, artists = thr
    controls["g_min"].value = 2.0**-40
    w = F.safe_scale_window(2.0**-40, 3.2e4, F.FP16)
    assert w.empty
    assert artists["windows"]["fp16"].get_width() == 0
    assert "no single scale" in text(artists["window_text"].value)


def test_thr_bad_values_show_a_message(thr):
    _, controls, artists = thr
    for key in controls:
        controls[key].value = float("nan")
        assert ERR in artists["status_text"].value
        controls[key].value = 1.0
        assert ERR not in artists["status_text"].value
    controls["scale"].value = 0.0  # clamped by the slider to its minimum: no error
    controls["g_max"].value = 10.0**30  # clamped to the maximum
    assert ERR not in artists["status_text"].value
    controls["g_max"].value = 1.0
    controls["g_min"].value = 2.0**10  # above G: a note, not an error
    assert "g_min is above G" in artists["window_text"].value


def test_open_figures_constant_over_many_changes(thr, bits):
    import matplotlib.pyplot as plt

    n = len(plt.get_fignums())
    for i in range(30):
        thr[1]["scale"].value = 2.0 ** (i - 15)
        bits[1]["magnitude"].value = 2.0 ** (i - 15)
    assert len(plt.get_fignums()) == n


def _echo(control, value):
    """What the browser sends back after snapping ``value`` to the slider's grid."""
    k = round((math.log(value, control.base) - control.min) / control.step)
    return control.base ** (control.min + k * control.step)


def test_bits_browser_snap_echo_keeps_the_typed_value(bits):
    _, controls, artists = bits
    s = controls["magnitude"]
    s.value = _echo(s, 65510.0)  # first render: the browser snaps 65510 to 2**16
    assert controls["value"].value == "65510.0" and "65504.0" in artists["readout_text"].value
    controls["value"].value = "65519"
    s.value = _echo(s, 65519.0)  # the typed value moved the slider; the browser echoes it
    assert controls["value"].value == "65519" and "65504.0" in artists["readout_text"].value
    s.value = 2.0 ** (math.log2(s.value) + s.step)  # a real move of one step is taken
    assert float(controls["value"].value) == float(f"{s.value:.5g}")


def test_thr_browser_snap_echo_keeps_the_exact_values(thr):
    _, controls, artists = thr
    controls["g_max"].value = _echo(controls["g_max"], 3.2e4)  # 3.2e4 -> 2**15 in the browser
    controls["g_min"].value = _echo(controls["g_min"], 1e-3)
    v = text(artists["verdict_text"].value)
    assert "G = 32000" in v and "g_min = 0.001" in v and "2.09715e+09" in v
    controls["g_max"].value = 2.0**20  # a real move
    assert "G = 1.04858e+06" in text(artists["verdict_text"].value)
