"""fampnb.plots.formats / common: pure draw/update pairs, numbers from fampnb.formats."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure  # noqa: E402

from fampnb import formats as F  # noqa: E402
from fampnb.plots import common as C  # noqa: E402
from fampnb.plots import formats as P  # noqa: E402


def _ax(n: int = 1):
    fig = Figure(figsize=(6, 3))
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    return fig, axes


def test_lazy_exports():
    import fampnb.plots as plots

    for name in P.__all__:
        assert getattr(plots, name) is getattr(P, name)
    assert plots.format_bands is C.format_bands


def test_pow2_labels_and_log2():
    assert C.pow2_label(-14) == "2⁻¹⁴"
    assert C.pow2_label(16.0) == "2¹⁶"
    assert C.log2(0) == -math.inf and math.isnan(C.log2(math.nan)) and C.log2(-8) == 3


@pytest.mark.parametrize("fmt", F.FORMATS, ids=lambda f: f.name)
def test_format_bands_edges_come_from_the_format(fmt):
    bands = C.format_bands(fmt, -200, 200)
    assert [b[0] for b in bands] == ["zero", "subnormal", "normal", "overflow"]
    assert bands[0][2] == pytest.approx(math.log2(fmt.underflow_threshold))
    assert bands[1][2] == pytest.approx(math.log2(fmt.min_normal))
    assert bands[2][2] == pytest.approx(math.log2(fmt.overflow_threshold))
    # the bands tile the axis without gaps
    for (_, _, b), (_, a, _) in zip(bands[:-1], bands[1:]):
        assert a == b


def test_format_ranges_rows_and_marker():
    fig, (ax,) = _ax()
    art = P.draw_format_ranges(ax)
    assert set(art["bands"]) == {f.name for f in F.FORMATS}
    fp16 = {p.get_gid(): p for p in art["bands"]["fp16"]}
    assert fp16["normal"].get_x() + fp16["normal"].get_width() == pytest.approx(
        math.log2(F.FP16.overflow_threshold))
    assert math.isnan(art["marker"].get_xdata()[0])
    n = len(ax.get_children())
    P.update_format_ranges(art, 65504.0)
    assert art["marker"].get_xdata()[0] == pytest.approx(math.log2(65504))
    P.update_format_ranges(art, 0.0)
    assert math.isnan(art["marker"].get_xdata()[0])
    assert len(ax.get_children()) == n


@pytest.mark.parametrize("fmt,value", [(F.FP16, 65510.0), (F.FP32, -2.0**-130),
                                       (F.BF16, 1.0), (F.FP8_E4M3, 500.0), (F.FP8_E5M2, 0.0)])
def test_bits_cells_show_decompose(fmt, value):
    fig, (ax,) = _ax()
    art = P.draw_bits(ax, F.FP16.decompose(1.0))
    n = len(ax.get_children())
    b = fmt.decompose(value)
    P.update_bits(art, b)
    shown = "".join(t.get_text() for t in art["texts"] if t.get_visible())
    assert shown == f"{b.sign}{b.exponent_bits}{b.mantissa_bits}"
    assert sum(c.get_visible() for c in art["cells"]) == fmt.bits
    assert b.hex in art["formula"].get_text()
    assert len(ax.get_children()) == n  # no new artists on update


def test_bits_colours_follow_the_fields():
    fig, (ax,) = _ax()
    b = F.FP16.decompose(1.0)
    art = P.draw_bits(ax, b)
    from matplotlib.colors import to_hex

    cols = [to_hex(c.get_facecolor(), keep_alpha=False) for c in art["cells"][:16]]
    assert cols[0] == C.BIT_COLORS["sign"]
    assert set(cols[1:6]) == {C.BIT_COLORS["exponent"]}
    assert set(cols[6:16]) == {C.BIT_COLORS["mantissa"]}


def test_number_line_markers_and_rebanding():
    fig, (ax,) = _ax()
    art = P.draw_number_line(ax, F.FP16, 65510.0)
    assert art["typed"].get_xdata()[0] == pytest.approx(math.log2(65510))
    assert art["stored"].get_xdata()[0] == pytest.approx(math.log2(65504))
    P.update_number_line(art, F.BF16, 2.0**-130)
    lo, hi = ax.get_xlim()
    assert lo < math.log2(F.BF16.underflow_threshold) and hi > math.log2(F.BF16.max)
    assert art["typed"].get_xdata()[0] == pytest.approx(-130)
    P.update_number_line(art, F.BF16, 0.0)
    assert math.isnan(art["typed"].get_xdata()[0]) and "0" in art["note"].get_text()


def test_threshold_plot_moves_markers_and_windows():
    fig, axes = _ax(2)
    d = P.ThresholdData(3.2e4, 65536.0, 1e-3)
    art = P.draw_thresholds(axes, d)
    assert art["top"].get_xdata()[0] == pytest.approx(math.log2(3.2e4 * 65536))
    w = F.safe_scale_window(1e-3, 3.2e4, F.FP16)
    p = art["windows"]["fp16"]
    assert p.get_x() == pytest.approx(math.log2(w.s_min))
    assert p.get_x() + p.get_width() == pytest.approx(math.log2(w.s_max))
    n = [len(a.get_children()) for a in axes]
    d2 = P.ThresholdData(3000.0, 2.0**-32, 1e-6)
    P.update_thresholds(art, d2)
    assert art["top"].get_xdata()[0] == pytest.approx(math.log2(3000.0 * 2.0**-32))
    assert art["s_line"].get_xdata()[0] == -32
    assert [len(a.get_children()) for a in axes] == n
    # fp16 cannot hold a 2^31.6 : 1 range -> empty window, drawn with zero width
    assert d2.windows["fp16"].empty and art["windows"]["fp16"].get_width() == 0
    assert not d2.windows["bf16"].empty


def test_no_pyplot_figures_and_no_rcparams_change():
    import matplotlib
    import matplotlib.pyplot as plt

    before = dict(matplotlib.rcParams)
    n = len(plt.get_fignums())
    fig, axes = _ax(2)
    P.draw_thresholds(axes, P.ThresholdData(1.0, 1.0, 1.0))
    fig2, (ax,) = _ax()
    P.draw_format_ranges(ax, value=1.0)
    assert len(plt.get_fignums()) == n
    assert dict(matplotlib.rcParams) == before


def test_threshold_values_off_the_chart_become_edge_arrows():
    fig, axes = _ax(2)
    art = P.draw_thresholds(axes, P.ThresholdData(2.0**40, 2.0**40, 2.0**-60))
    lo, hi = axes[0].get_xlim()
    x = art["top"].get_xdata()[0]
    assert lo < x < hi and art["top"].get_marker() == ">"
    P.update_thresholds(art, P.ThresholdData(1.0, 2.0**-48, 2.0**-60))
    assert art["bottom"].get_marker() == "<" and art["top"].get_marker() == "v"
    assert axes[0].get_xlim() == (lo, hi)  # fixed view: no axis jumps


def test_article_vs_exact_marks_and_staircase():
    fig, axes = _ax(2)
    art = P.draw_article_vs_exact(axes, F.FP16, values=[65510.0, 2.0**-20, 0.0])
    assert len(art["marks"].get_xdata()) == 4  # two values on two rows; 0 is not drawn
    ys = art["stair"].get_ydata()
    assert max(v for v in ys if v == v) == F.FP16.max
    assert [p.get_gid() for p in art["article"]] == ["UNDERFLOW", "IN_RANGE", "OVERFLOW"]


def test_precision_curve_flat_in_normal_band_and_rising_in_subnormal():
    ks, rel = C.precision_curve(F.FP16, -26, 15, n=83)
    normal = rel[(ks >= -14) & (ks <= 15)]
    assert normal.max() <= F.FP16.eps and normal.min() >= F.FP16.eps / 2
    sub = rel[(ks > -24.5) & (ks < -14)]
    assert sub.max() > 0.5 and (sub[:-1] >= sub[1:]).all()


def test_draw_precision_lines():
    fig, (ax,) = _ax()
    art = C.draw_precision(ax, [F.FP16, "bf16"], lo=-30, hi=20)
    assert set(art["lines"]) == {"fp16", "bf16"}
    import numpy as np

    y = art["lines"]["fp16"].get_ydata()
    assert np.nanmax(y) == 0.0  # ulp/x reaches 1 (2^0) at the smallest subnormal
