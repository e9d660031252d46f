"""fampnb.plots.timeline: draw once, update in place, a Diagnosis or nothing (the plot never diagnoses)."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fampnb import logs  # noqa: E402
from fampnb.diagnose import diagnose  # noqa: E402
from fampnb.plots import draw_timeline, update_timeline  # noqa: E402
from fampnb.plots.timeline import timeline_series  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_draw_update_in_place(ax):
    artists = draw_timeline(ax, [])
    assert artists["title"].get_text() == "no log yet"
    n_figs = len(plt.get_fignums())
    n_children = len(ax.get_children())
    for name in logs.sample_logs():
        update_timeline(artists, diagnose(logs.parse(logs.read_sample(name))))
        assert len(ax.get_children()) == n_children
    assert len(plt.get_fignums()) == n_figs
    d = diagnose(logs.parse(logs.read_sample("apex_apex_834.log")))
    update_timeline(artists, d)
    x, y = artists["scale"].get_data()
    assert len(x) == 17 and y[-1] == 0.5
    assert len(artists["backoff"].get_offsets()) == 17
    assert ax.get_yscale() == "log"
    assert artists["warn"].get_ydata()[0] == 256
    assert artists["title"].get_text() == "verdict: overflow"
    update_timeline(artists, None)
    assert len(artists["scale"].get_data()[0]) == 0


def test_nan_and_loss_marked(ax):
    d = diagnose(logs.parse(logs.read_sample("fp32-noscaler_faster-rcnn.pytorch_562.log")))
    artists = draw_timeline(ax, d)
    assert list(artists["nan"].get_offsets()[:, 0]) == [100, 200]
    assert list(artists["loss"].get_data()[0]) == [0]
    s = timeline_series(d)
    assert str(s["verdict"]) == "data"


def test_raw_events_are_refused_not_diagnosed(ax):
    ev = list(logs.parse(logs.read_sample("fp32-noscaler_faster-rcnn.pytorch_562.log")))
    with pytest.raises(TypeError, match="diagnose them first|must be a Diagnosis"):
        timeline_series(ev)
    assert str(timeline_series([])["verdict"]) == ""


def test_all_exported():
    from fampnb.plots import timeline

    assert set(timeline.__all__) >= {"draw_timeline", "update_timeline"}
