"""Scale-decay explorer and the row-5 question, wired without a browser."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")
from fampnb import scaler, scenarios  # noqa: E402
from fampnb.scenarios import POLICY_LABELS, SCENARIOS, run_scale_decay, suggested, summarize  # noqa: E402
from fampnb.seed import EXP2_G_MAX, experiment_2  # noqa: E402
from fampnb.widgets.decay import check_row_answer, make_row_question, make_scale_decay  # noqa: E402


def _classes(w):
    return set(w._dom_classes)


def test_seed_halving_reproduces_experiment_2():
    tr = scaler.simulate(scaler.SeedHalving(), list(EXP2_G_MAX))
    assert [r.scale for r in tr.rows] == [r.scale for r in experiment_2()]
    assert tr.rows[3].scale == 8192 and tr.rows[4].scale == 4096


def test_every_policy_and_scenario_runs():
    assert set(SCENARIOS) == set(scenarios.SCENARIOS)
    for pol in POLICY_LABELS:
        for scen in SCENARIOS:
            tr = run_scale_decay(pol, 65536.0, 0.5, 20, scen)
            assert len(tr.rows) >= 1
            assert summarize(tr).startswith(f"{len(tr.rows)} steps")


def test_scenario_defaults_come_from_the_scenarios_module():
    sc = scenarios.scenario("underflow")
    assert suggested("underflow")[0] == sc.init_scale
    tr = run_scale_decay("torch", scenario="underflow")
    assert tr.rows[0].scale == sc.init_scale and tr.count("backoff") == 0
    assert "round to 0" in summarize(tr)


def test_persistent_story_with_the_articles_rule_is_experiment_2():
    tr = run_scale_decay("seed", scenario="persistent")
    assert [r.scale for r in tr.rows] == [r.scale for r in experiment_2()]
    assert "final scale 256" in summarize(tr)


def test_controls_carry_css_classes():
    ui, controls, artists = make_scale_decay()
    assert "fampnb-decay" in _classes(ui)
    for key, c in controls.items():
        assert f"fampnb-decay-{key.replace('_', '-')}" in _classes(c)
    assert "fampnb-decay-summary-text" in _classes(artists["summary_text"])


def test_change_updates_line_and_summary_to_what_the_package_computes():
    ui, controls, artists = make_scale_decay()
    first = artists["summary_text"].value
    assert summarize(run_scale_decay()) in first
    controls["policy"].value = "deepspeed"
    controls["scenario"].value = "spike"
    expected = run_scale_decay("deepspeed", scenario="spike")
    assert summarize(expected) in artists["summary_text"].value
    assert artists["summary_text"].value != first
    y = artists["scale"]["line"].get_ydata()
    np.testing.assert_array_equal(y[:-1], [r.scale for r in expected.rows])
    n_backoff = sum(r.event == "backoff" for r in expected.rows)
    assert len(artists["scale"]["backoff"].get_offsets()) == n_backoff
    controls["init_scale"].value = 2.0 ** 10
    assert artists["scale"]["line"].get_ydata()[0] == 1024
    controls["scenario"].value = "underflow"  # loads the story's own start scale
    assert controls["init_scale"].value == suggested("underflow")[0]
    assert artists["scale"]["line"].get_ydata()[0] == suggested("underflow")[0]


def test_article_rule_disables_knobs_it_does_not_have():
    ui, controls, artists = make_scale_decay(policy="torch")
    assert not controls["growth_interval"].disabled and not controls["backoff"].disabled
    controls["policy"].value = "seed"
    assert controls["growth_interval"].disabled
    assert "never grows" in artists["note_text"].value


def test_backoff_reaches_pytorch():
    ui, controls, artists = make_scale_decay(policy="torch", scenario="drift")
    controls["backoff"].value = 0.25
    rows = artists["trace"].rows
    first = next(r for r in rows if r.event == "backoff")
    assert first.next_scale == pytest.approx(first.scale * 0.25)


def test_figure_count_constant_and_no_new_figure_per_change():
    import matplotlib.pyplot as plt

    ui, controls, artists = make_scale_decay()
    fig = artists["figure"].fig
    before = plt.get_fignums()
    for i in range(20):
        controls["scenario"].value = list(SCENARIOS)[i % len(SCENARIOS)]
    assert plt.get_fignums() == before
    assert artists["figure"].fig is fig


def test_callback_error_becomes_a_message(monkeypatch):
    import fampnb.widgets.decay as decay

    ui, controls, artists = make_scale_decay()

    def boom(*a, **k):
        raise ValueError("init_scale must be > 0, got 0")

    monkeypatch.setattr(decay, "run_scale_decay", boom)
    controls["scenario"].value = "spike"
    assert "init_scale must be &gt; 0" in artists["status"].value
    monkeypatch.undo()
    controls["scenario"].value = "drift"
    assert artists["status"].value == ""


@pytest.mark.parametrize("typed, ok", [("4096", True), (" 4,096 ", True), ("2**12", True),
                                       ("8192", False), ("2048", False), ("17", False),
                                       ("", None), ("nan", None), ("\x00\x01", None),
                                       ("__import__('os')", None)])
def test_row_answer(typed, ok):
    got, msg = check_row_answer(typed)
    assert got is ok and msg
    if ok is False and typed in ("8192", "2048"):
        assert "row" in msg


def test_row_question_widget():
    ui, controls, artists = make_row_question()
    assert "fampnb-row-question-answer" in _classes(controls["answer"])
    assert "fampnb-row-question-verdict-text" in _classes(artists["verdict_text"])
    controls["answer"].value = "4096"
    assert "Right" in artists["verdict_text"].value and "4096" in artists["verdict_text"].value
    controls["answer"].value = "8192"
    assert "Not quite" in artists["verdict_text"].value and "row 4" in artists["verdict_text"].value
    controls["answer"].value = "oops"
    controls["check"].click()
    assert "not a number" in artists["verdict_text"].value
    assert artists["status"].value == ""


def test_slider_extremes_never_raise():
    ui, controls, artists = make_scale_decay()
    for pol in POLICY_LABELS:
        controls["policy"].value = pol
        for k in (controls["init_scale"].min, controls["init_scale"].max):
            controls["init_scale"].value = 2.0 ** k
            for gi in (controls["growth_interval"].min, controls["growth_interval"].max):
                controls["growth_interval"].value = gi
                controls["backoff"].value = controls["backoff"].min
                controls["backoff"].value = controls["backoff"].max
                assert "&#9888;" not in artists["status"].value, (pol, k, gi, artists["status"].value)
                assert artists["summary_text"].value.startswith("<b>")


def test_megatron_below_one_lowers_its_floor_and_says_so():
    ui, controls, artists = make_scale_decay(policy="megatron", scenario="underflow")
    assert "min_scale lowered" in artists["note_text"].value
    assert artists["status"].value == ""
    controls["init_scale"].value = 2.0 ** 4
    assert "min_scale lowered" not in artists["note_text"].value
