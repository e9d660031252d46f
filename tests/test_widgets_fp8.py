"""The fp8 scaling explorer (notebook 09) and its plot, without a browser."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")

from fampnb.scaling import demo_activations, scheme_view  # noqa: E402
from fampnb.widgets.fp8 import make_fp8_scaling, shares_table_html  # noqa: E402


def test_controls_drive_the_view_and_table():
    ui, c, a = make_fp8_scaling(scheme="delayed", history=16)
    assert all(f"fampnb-fp8-{k}" in w._dom_classes for k, w in c.items())
    assert "spike" in a["status"].value
    v = a["view"][0]
    assert a["table_text"].value == shares_table_html(v)
    assert v.scheme == "delayed" and v.trace is not None
    c["scheme"].value = "mx"
    c["elem"].value = "fp4_e2m1"
    c["tensors"].value = "activations"
    want = scheme_view("mx", "fp4_e2m1", demo_activations())
    assert a["view"][0].shares == want.shares
    assert a["table_text"].value == shares_table_html(want)
    assert "delayed scaling only" in a["status"].value
    assert a["title"].get_text().startswith("fp4_e2m1: MX")
    heights = np.asarray(a["curve"].get_data().values)
    # the histogram is of the values before the cast: all but the input zeros
    assert np.isclose(heights.sum(), 100 * (1 - want.shares.fraction("zero")))
    assert {p.get_gid() for p in a["bands"]} >= {"zero", "subnormal", "normal"}
    assert a["trace_text"].get_text().startswith("no time axis")


def test_table_marks_losses():
    html = shares_table_html(scheme_view("global", "fp4_e2m1"))
    assert "color:#b00020" in html and "<td>all</td>" in html


@pytest.mark.parametrize("kw", [{"scheme": "x"}, {"elem": "fp16"}, {"tensors": "weights"},
                                {"margin": 9}, {"history": 3}, {"spike": 3.0}])
def test_bad_arguments(kw):
    with pytest.raises(ValueError):
        make_fp8_scaling(**kw)
